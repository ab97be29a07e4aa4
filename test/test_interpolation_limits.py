"""The planner's limit check of an interpolated path is exact (``JointSpline.outside``): the quintic between two
admissible points that overshoots a limit between any samples is refused at its peak; the segment extrema equal
the path's own highest and lowest points (dense sampling cannot go beyond them); the Bernstein enclosure that
spares most segments the root search holds the path."""

from __future__ import annotations

import numpy as np
import pytest

from servo_ff.interpolation import JointSpline, bernstein_enclosure, extreme_points, unit_coefficients


def overshoot(q0: float) -> JointSpline:
    """Two points at q0 with a velocity out and back: the path rises ≈ 0.065 rad above them between the knots."""
    return JointSpline([0.0, 1.0], [[q0], [q0]], dq=[[0.31], [-0.05]], ddq=[[0.0], [0.0]])


def test_an_overshoot_between_any_samples_is_found_at_its_peak():
    t = np.linspace(0.0, 1.0, 200_001)
    dense = overshoot(0.0).positions(t)[:, 0]
    peak, t_peak = dense.max(), t[dense.argmax()]
    # the limit just below the peak: the earlier check, 16 samples per segment, passed it
    spline = overshoot(1.0 - peak + 2e-6)  # the peak is 2 µrad beyond the limit 1.0
    assert spline.positions(np.linspace(0.0, 1.0, 17))[:, 0].max() <= 1.0
    j, t_out, q_out = spline.outside(np.array([-1.0]), np.array([1.0]))
    assert j == 0 and abs(t_out - t_peak) < 1e-5 and abs(q_out - (1.0 + 2e-6)) < 1e-9
    assert overshoot(1.0 - peak - 2e-6).outside(np.array([-1.0]), np.array([1.0])) is None  # 2 µrad inside


def random_spline(rng: np.random.Generator) -> JointSpline:
    p, j = int(rng.integers(2, 8)), int(rng.integers(1, 6))
    times = np.cumsum(rng.uniform(0.05, 1.0, p))
    has_dq, has_ddq = rng.random(p) < 0.8, rng.random(p) < 0.7  # linear, cubic and quintic segments mixed
    return JointSpline(times, *(rng.normal(0.0, s, (p, j)) for s in (1.0, 2.0, 5.0)), has_dq, has_ddq)


@pytest.mark.parametrize("seed", range(4))
def test_segment_extrema_are_the_paths_own_and_a_point_beyond_is_named(seed: int):
    rng = np.random.default_rng(seed)
    for _ in range(100):
        sp = random_spline(rng)
        t = np.linspace(sp.times[0], sp.times[-1], 20_001)
        dense = sp.positions(t)
        b = unit_coefficients(sp._position_coefficients, np.diff(sp.times))
        u, q = extreme_points(b.reshape(-1, 6))
        q = q.reshape(b.shape[0], b.shape[1], 6)
        top, bottom = np.nanmax(q, axis=(0, 2)), np.nanmin(q, axis=(0, 2))
        # no sample of the path beyond them, and they are reached (to the sampling's resolution)
        assert (dense.max(axis=0) <= top + 1e-12).all() and (dense.min(axis=0) >= bottom - 1e-12).all()
        assert (top - dense.max(axis=0) < 1e-3).all() and (dense.min(axis=0) - bottom < 1e-3).all()
        lo, hi = bernstein_enclosure(b)
        assert (lo.min(axis=0) <= bottom + 1e-12).all() and (hi.max(axis=0) >= top - 1e-12).all()
        assert sp.outside(bottom - 1e-8, top + 1e-8) is None
        # one joint's upper limit just below its peak: that joint, a point beyond it, where the path is
        k = int(rng.integers(sp.n_joints))
        upper = top + 1.0
        upper[k] = top[k] - 1e-4
        j, t_out, q_out = sp.outside(bottom - 1.0, upper)
        assert j == k and q_out > upper[k] and abs(sp.position(t_out)[k] - q_out) < 1e-9
        assert t_out >= t[np.argmax(dense[:, k] > upper[k])] - (t[1] - t[0])  # not before the path crosses it


def test_a_single_point_path_is_checked_at_its_point():
    sp = JointSpline([0.5], [[0.2, -0.3]])
    assert sp.outside(np.array([-1.0, -1.0]), np.array([1.0, 1.0])) is None
    assert sp.outside(np.array([-1.0, -0.25]), np.array([1.0, 1.0])) == (1, 0.5, -0.3)


def test_no_joint_and_one_point_is_inside():
    assert JointSpline([0.0], np.zeros((1, 0))).outside(np.zeros(0), np.zeros(0)) is None


@pytest.mark.parametrize("field", ["dq", "ddq"])
@pytest.mark.parametrize("duration", [1e-3, 2.0, 100.0])
def test_a_path_that_is_not_finite_is_outside_any_limit(field: str, duration: float):
    """A finite point whose velocity or acceleration overflows the segment's polynomial (1e308): NaN compares False
    with any limit, so the path used to pass the check and its NaN samples became the goal."""
    rates = {"dq": [[0.0], [0.0]], "ddq": [[0.0], [0.0]]}
    rates[field] = [[0.0], [1e308]]
    with np.errstate(over="ignore", invalid="ignore"):
        spline = JointSpline([0.0, duration], [[0.0], [0.5]], **rates)
        assert not np.isfinite(spline.positions(np.linspace(0.0, duration, 11))[1:-1]).all()
        j, t, q = spline.outside(np.array([-1.0]), np.array([1.0]))
    assert j == 0 and t == 0.0 and np.isnan(q)
    assert JointSpline([0.0, duration], [[0.0], [0.5]], dq=[[0.0], [0.0]]).outside([-1.0], [1.0]) is None


def test_a_sample_that_is_not_finite_keeps_the_last_goal_counted_and_said():
    pytest.importorskip("rclpy")
    from servo_ff.ros.common import GoalGate, Throttle

    said: list[str] = []
    g = GoalGate(["a", "b"], np.array([-1.0, -1.0]), np.array([1.0, 1.0]), goal=np.array([0.2, -0.3]),
                 warn=said.append, throttle=Throttle(0.0))  # fmt: skip
    out = g.hold_sample(np.array([np.nan, 0.5]), "servo/joint_trajectory")
    np.testing.assert_array_equal(out, [0.2, 0.5])  # a's last goal; b's sample
    assert g.held_samples == 1 and said == [
        "servo/joint_trajectory: the followed trajectory's sample of a is nan; holding the last goal 0.2000 rad "
        "(1 samples so far)"
    ]
    assert g.hold_sample(np.array([0.1, -np.inf]), "t").tolist() == [0.1, -0.3] and g.held_samples == 2


def test_the_planner_refuses_a_path_that_is_not_finite_and_names_the_joint():
    """servo/joint_trajectory with one velocity of 1e308: before, accepted, and the held goal became NaN."""
    pytest.importorskip("rclpy")
    import warnings

    from builtin_interfaces.msg import Duration
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from servo_ff.ros.common import GoalGate, Throttle
    from servo_ff.ros.trajectory_plan import plan_trajectory

    gate = GoalGate(["hip", "knee"], np.array([-2.0, -2.0]), np.array([2.0, 2.0]), goal=np.zeros(2),
                    warn=lambda m: None, throttle=Throttle(0.0))  # fmt: skip
    point = JointTrajectoryPoint(positions=[0.5], velocities=[1e308], time_from_start=Duration(sec=2))
    msg = JointTrajectory(joint_names=["hip"], points=[point])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # refused in one line: no numpy overflow warning on the way
        with pytest.raises(ValueError, match=r"the interpolated path of hip is not finite from 0\.000 s on"):
            plan_trajectory(msg, 10.0, gate, gate.joints, None)
    point.velocities = [0.0]
    assert plan_trajectory(msg, 10.0, gate, gate.joints, None).spline.position(12.0)[0] == pytest.approx(0.5)
