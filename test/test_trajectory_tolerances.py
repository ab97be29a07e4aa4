"""servo_ff.trajectory_tolerances: JointTrajectoryController's tolerance rules (ROS-free)."""

from __future__ import annotations

import numpy as np
import pytest

from servo_ff.trajectory_tolerances import Tolerances, goal_tolerances, resolve, violations

JOINTS = ["a", "b"]


def test_resolve_follows_joint_tolerance_msg():
    assert resolve(0.2, 0.05) == 0.05  # > 0 replaces the default
    assert resolve(0.2, 0.0) == 0.2  # 0 keeps it
    assert resolve(0.2, -1.0) == 0.0  # -1 erases it
    with pytest.raises(ValueError, match="-0.5"):
        resolve(0.2, -0.5)


def test_defaults_as_jtc_parameters():
    tol = Tolerances.defaults([0.1, 0.2], [0.01, 0.02], stopped_velocity=0.03, goal_time=1.5)
    np.testing.assert_array_equal(tol.path, [[0.1, 0, 0], [0.2, 0, 0]])
    np.testing.assert_array_equal(tol.goal, [[0.01, 0.03, 0], [0.02, 0.03, 0]])
    assert tol.goal_time == 1.5


def test_goal_overrides_per_joint_and_erases():
    base = Tolerances.defaults([0.1, 0.2], [0.01, 0.02], 0.03, 1.0)
    tol = goal_tolerances(base, JOINTS, [("b", 0.5, 0.0, 2.0)], [("a", -1.0, 0.07, 0.0)], 0.0)
    np.testing.assert_array_equal(tol.path, [[0.1, 0, 0], [0.5, 0, 2.0]])
    np.testing.assert_array_equal(tol.goal, [[0.0, 0.07, 0], [0.02, 0.03, 0]])
    assert tol.goal_time == 1.0 and not tol.notes
    assert goal_tolerances(base, JOINTS, [], [], 2.5).goal_time == 2.5


@pytest.mark.parametrize(
    "path, goal, time, words",
    [
        ([("c", 0.1, 0, 0)], [], 0.0, "'c'"),
        ([], [("a", 0.1, -3.0, 0)], 0.0, "velocity of a"),
        ([], [], -2.0, "-2"),
    ],
)
def test_invalid_goal_tolerances_fall_back_to_defaults(path, goal, time, words):
    base = Tolerances.defaults([0.1, 0.2], [0.01, 0.02], 0.03, 1.0)
    tol = goal_tolerances(base, JOINTS, path, goal, time)
    np.testing.assert_array_equal(tol.path, base.path)
    np.testing.assert_array_equal(tol.goal, base.goal)
    assert tol.goal_time == 1.0
    assert len(tol.notes) == 1 and words in tol.notes[0] and "defaults" in tol.notes[0]


def test_violations_name_joint_component_and_values():
    tol = np.array([[0.1, 0.0, 0.0], [0.1, 0.5, 0.0]])  # b's velocity enforced, a's not
    error = np.array([[0.05, -0.2], [3.0, 0.6], [9.0, 9.0]])  # rows: position, velocity, acceleration
    out = violations(error, tol, JOINTS)
    assert out == ["b position error 0.2 rad > tolerance 0.1", "b velocity error 0.6 rad/s > tolerance 0.5"]
    assert violations(error * 0.1, tol, JOINTS) == []
