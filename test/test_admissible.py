"""Admissible parameters only (issue 15, deliverable 5), the ROS-free parts: the schema rows of α̂ and the
feed-forward bounds, the stepper's stability criterion (and that it is the real one), the supply-voltage hold,
desired-motion bounds, held goals re-checked on a limit change, the sim backend's reset."""

from __future__ import annotations

import math

import numpy as np
import pytest

from servo_ff.models.errors import ParameterError
from servo_ff.models.params import ActuatorParams
from servo_ff.models.presets import preset
from servo_ff.models.schema import ALPHA_FIELDS, FEEDFORWARD_FIELDS, check_field
from servo_ff.models.stepper import ExternalLoad, max_stable_dt, step, step_stability_refusal


# ------------------------------------------------------------------------------------------- schema rows
@pytest.mark.parametrize(
    "key, value, ok",
    [
        ("alpha0", -1e6, False),
        ("alpha0", 0.0, False),
        ("alpha0", 12.0, True),
        ("alpha0", 2e5, False),
        ("alpha1", -0.1, False),
        ("alpha2", 0.0, True),
        ("alpha4", math.nan, False),
        ("dq_s", 0.0, False),
        ("delta", 20.0, False),
        ("delta", 1.0, True),
    ],
)
def test_alpha_rows_of_the_schema(key, value, ok):
    if ok:
        assert check_field(ALPHA_FIELDS, key, value) == value
    else:
        with pytest.raises(ParameterError, match=key):
            check_field(ALPHA_FIELDS, key, value)


def test_every_preset_alpha_is_admissible():
    """The bounds are physical, not tight: every preset's implied α̂ lies inside them."""
    pytest.importorskip("pinocchio")
    from servo_ff.dynamics.alpha import alpha_table_from_actuator
    from servo_ff.models.presets import SERVO_NAMES

    for servo in SERVO_NAMES:
        if preset(servo, "m1").firmware.control != "voltage":
            continue  # no α̂ for a current law (xm430): alpha_hat_from_actuator refuses it
        with _quiet():
            t = alpha_table_from_actuator(preset(servo, "m1"), ["j"])
        for k, v in enumerate(t.alpha[0]):
            assert check_field(ALPHA_FIELDS, f"alpha{k}", v) == v
        assert check_field(ALPHA_FIELDS, "dq_s", t.dq_s[0]) and check_field(ALPHA_FIELDS, "delta", t.delta[0])


class _quiet:
    def __enter__(self):
        import warnings

        self.w = warnings.catch_warnings()
        self.w.__enter__()
        warnings.simplefilter("ignore")

    def __exit__(self, *exc):
        return self.w.__exit__(*exc)


def test_feedforward_rows_and_overflow_are_refused_with_the_key():
    with pytest.raises(ParameterError, match=r"min_supply_fraction=1\.5 is outside"):
        check_field(FEEDFORWARD_FIELDS, "min_supply_fraction", 1.5)
    with pytest.raises(ParameterError, match=r"max_velocity=0 is outside its admissible range \(0"):
        check_field(FEEDFORWARD_FIELDS, "max_velocity", 0.0)
    with pytest.raises(ParameterError, match="kt=.*too large for a float"):
        check_field(ALPHA_FIELDS | {"kt": FEEDFORWARD_FIELDS["u_nominal"]}, "kt", 10**400)


# ------------------------------------------------------------------------------------------- stepper stability
def test_max_stable_dt_is_two_j_r_over_kt_squared():
    assert max_stable_dt(2.0, 3.0, 0.5) == pytest.approx(2 * 0.5 * 3.0 / 4.0)
    p = preset("mx64", "m1")
    assert step_stability_refusal(p, [0.01, 0.0], 0.001, ["a", "b"]) is None
    reason = step_stability_refusal(p.with_(R=0.02), [0.0, 0.5], 0.001, ["a", "b"])
    assert reason and "of a " in reason and "2·J·R/kt²" in reason  # the worst joint (least inertia) is named


@pytest.mark.parametrize("factor, diverges", [(0.8, False), (1.25, True)])
def test_the_criterion_is_the_real_stability_boundary(factor, diverges):
    """Free spin-down (torque off would remove the back-EMF: keep it on, goal = position, no friction): with a
    step below 2·J·R/kt² the velocity decays, above it the explicit update oscillates with growing amplitude."""
    p = preset("mx64", "m1").with_(
        friction_base=0.0, friction_viscous=0.0, firmware=preset("mx64", "m1").firmware.with_(kp=0.0)
    )
    J = 0.02
    dt = factor * float(max_stable_dt(p.kt, p.R, J + p.armature))
    assert (step_stability_refusal(p, J, dt) is not None) == diverges
    theta, dtheta = np.zeros(1), np.ones(1)
    for _ in range(60):
        r = step(p, theta, dtheta, theta, dt, load=ExternalLoad(inertia=J), backend="numpy")
        theta, dtheta = r.theta, r.dtheta
    if diverges:
        assert abs(dtheta[0]) > 50.0  # grew toward the ±dtheta_max clamp
    else:
        assert abs(dtheta[0]) < 1.0


def test_schema_refuses_the_extremes_on_the_core_params():
    p = preset("mx64", "m1")
    for change, key in (
        ({"R": 1e-6}, "R"),
        ({"kt": 1e300}, "kt"),
        ({"friction_viscous": 1e300}, "friction_viscous"),
        ({"armature": 0.0}, "armature"),
    ):
        with pytest.raises(ParameterError, match=key):
            p.with_(**change)
    assert isinstance(p.with_(R=0.5), ActuatorParams)


# ------------------------------------------------------------------------------------------- sim backend reset
def test_sim_backend_reset_recovers_from_a_refused_state():
    from servo_ff.models.stepper import PendulumLoad
    from servo_ff.nodes.sim_backend import SimServos

    s = SimServos(preset("mx64", "m1"), 2, PendulumLoad(0.5, 0.15), theta=[0.3, -0.2], backend="numpy")
    s.goal = np.array([1.0, 1.0])
    s.advance(0.02, 10)
    s.theta = np.array([math.nan, 0.0])  # a diverged state: the stepper refuses it
    s.hardware_error = 32
    s.enabled = False
    with pytest.raises(ValueError, match="theta"):
        s.advance(0.002)
    s.reset(np.array([0.3, -0.2]))
    np.testing.assert_array_equal(s.theta, [0.3, -0.2])
    np.testing.assert_array_equal(s.dtheta, [0.0, 0.0])
    np.testing.assert_array_equal(s.goal, [0.3, -0.2])
    assert s.hardware_error == 0 and s.enabled
    s.advance(0.02, 10)
    assert np.isfinite(s.theta).all() and np.abs(s.theta - [0.3, -0.2]).max() < 0.1


# ------------------------------------------------------------------------------------------- goal gate
def test_held_goal_is_rechecked_when_limits_change():
    pytest.importorskip("rclpy")
    from servo_ff.ros.common import GoalGate, Throttle

    g = GoalGate(
        ["a", "b"],
        np.array([-2.0, -2.0]),
        np.array([2.0, 2.0]),
        goal=np.zeros(2),
        warn=lambda m: None,
        throttle=Throttle(0.0),
    )
    assert g.from_array([1.5, -1.5], "t") is not None
    moved = g.set_limits(np.array([-2.0, -1.0]), np.array([1.0, 2.0]))
    np.testing.assert_array_equal(g.goal, [1.0, -1.0])  # the nearest limit, each
    assert len(moved) == 2 and g.limit_moves == 2
    assert "a: held goal 1.5000 rad is outside the new limits [-2.0000, 1.0000]" in moved[0]
    assert "holding 1.0000 rad" in moved[0] and "b:" in moved[1]
    assert g.set_limits(np.array([-3.0, -3.0]), np.array([3.0, 3.0])) == []  # widening moves nothing
    np.testing.assert_array_equal(g.goal, [1.0, -1.0])
    assert g.from_array([2.5, 0.0], "t") is not None  # the new limits are the gate's limits


def test_a_trajectory_sample_beyond_narrowed_limits_is_held_there_counted_and_said():
    """The limits narrow under a followed path (checked whole on arrival against the old ones): each sample beyond
    the new limit is held at it, counted and said, never written beyond it; samples inside pass untouched."""
    pytest.importorskip("rclpy")
    from servo_ff.interpolation import JointSpline
    from servo_ff.ros.common import GoalGate, Throttle

    said: list[str] = []
    g = GoalGate(["a"], np.array([-1.0]), np.array([1.0]), goal=np.zeros(1), warn=said.append, throttle=Throttle(0.0))
    spline = JointSpline([0.0, 1.0], [[0.0], [0.9]], dq=[[0.0], [0.0]], ddq=[[0.0], [0.0]])
    assert spline.outside(g.lower, g.upper) is None  # admissible when it arrived
    g.set_limits(np.array([-1.0]), np.array([0.5]))
    t = np.linspace(0.0, 1.0, 201)
    q = spline.positions(t)[:, 0]
    inside = g.hold_sample(spline.position(0.25), "servo/joint_trajectory")
    assert inside[0] == spline.position(0.25)[0] < 0.5 and g.held_samples == 0 and not said
    held = [g.hold_sample(spline.position(x), "servo/joint_trajectory")[0] for x in t[q > 0.5]]
    assert held == [0.5] * int((q > 0.5).sum()) and g.held_samples == int((q > 0.5).sum()) > 0
    assert said[0].startswith("servo/joint_trajectory: the followed trajectory reaches a=0.5")
    assert "held at the limit (1 samples so far)" in said[0]
    n = g.held_samples  # within the planner's tolerance (LIMIT_TOL, a path's rounding at the limit): clipped, unsaid
    assert g.hold_sample(np.array([0.5 + 5e-10]), "t")[0] == 0.5 and g.held_samples == n
    assert g.hold_sample(np.array([0.5 + 2e-9]), "t")[0] == 0.5 and g.held_samples == n + 1


# ------------------------------------------------------------------------------------------- feed-forward core
@pytest.fixture(scope="module")
def ff():
    pytest.importorskip("pinocchio")
    from pathlib import Path

    from servo_ff.dynamics.alpha import alpha_table_from_actuator
    from servo_ff.dynamics.feedforward import FeedForwardController
    from servo_ff.dynamics.robot import load_robot

    robot = load_robot(Path(__file__).resolve().parents[1] / "urdf" / "pendulums2.urdf")
    with _quiet():
        alpha = alpha_table_from_actuator(preset("mx64", "m1"), robot.joint_names)
    return FeedForwardController(robot, alpha, 8.0, mode="fixed", u_nominal=15.0, min_supply_fraction=0.5)


@pytest.mark.parametrize(
    "reading, word",
    [
        (0.01, "below 0.5 × u_nominal = 7.5 V"),
        (1e-6, "below"),
        (0.0, "below"),
        (-12.0, "below"),
        (150.0, "above the 100 V"),
        (math.nan, "not finite"),
        (math.inf, "not finite"),
    ],
)
def test_supply_reading_below_the_fraction_is_refused_and_the_last_good_held(ff, reading, word):
    ff.update_voltage(13.0)
    q = np.array([0.5, -0.3])
    z = np.zeros(2)
    good = ff.tick(q, z, z, u_bat=13.0)
    assert word in ff.supply_refusal(reading)
    held = ff.tick(q, z, z, u_bat=reading)
    assert ff.u_bat == 13.0
    np.testing.assert_array_equal(held, good)
    assert ff.supply_refusal(8.0) is None and ff.supply_refusal(15.0) is None


def test_desired_motion_bounds_from_urdf_else_parameters(tmp_path):
    pytest.importorskip("pinocchio")
    from servo_ff.dynamics.feedforward import check_desired_motion, desired_motion_bounds
    from servo_ff.dynamics.robot import load_robot

    link = (
        '<link name="l{i}"><inertial><mass value="0.5"/><inertia ixx="1e-4" ixy="0" ixz="0" iyy="1e-4" '
        'iyz="0" izz="1e-4"/></inertial></link>'
    )
    joint = (
        '<joint name="j{i}" type="revolute"><parent link="base"/><child link="l{i}"/><axis xyz="1 0 0"/>'
        '<limit lower="-1" upper="1" effort="5" velocity="{v}"/></joint>'
    )
    (tmp_path / "r.urdf").write_text(
        '<robot name="r"><link name="base"/>'
        + joint.format(i=1, v=6)
        + link.format(i=1)
        + joint.format(i=2, v=0)
        + link.format(i=2)
        + "</robot>"
    )
    robot = load_robot(tmp_path / "r.urdf")
    vmax, amax, src = desired_motion_bounds(robot, 20.0, [500.0, 800.0])
    np.testing.assert_array_equal(vmax, [6.0, 20.0])  # j2 has no URDF velocity limit (0): the parameter
    np.testing.assert_array_equal(amax, [500.0, 800.0])
    assert src == ["URDF velocity limit", "max_velocity"]
    names = list(robot.joint_names)
    assert check_desired_motion([[5.9, -19.0]], [[0.0, 0.0]], vmax, amax, names, src) is None
    r = check_desired_motion([[0.0, 0.0], [1e300, 0.0]], [[0.0, 0.0]] * 2, vmax, amax, names, src)
    assert "point 1 velocity of j1 is 1e+300 rad/s, beyond its bound 6 rad/s (URDF velocity limit)" == r
    r = check_desired_motion([[0.0, 0.0]], [[0.0, -900.0]], vmax, amax, names, src)
    assert "acceleration of j2 is -900" in r and "800" in r
    assert "velocity of j2" in check_desired_motion([[0.0, math.nan]], [[0.0, 0.0]], vmax, amax, names, src)
