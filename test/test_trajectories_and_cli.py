"""Reference trajectories, drive/backdrive diagrams and the CLI."""

import csv

import numpy as np
import pytest

from servo_ff.cli import main
from servo_ff.models.drive_backdrive import BACKDRIVE, DRIVE, STATIC, drive_backdrive_regions, drive_backdrive_torques
from servo_ff.models.presets import preset
from servo_ff.trajectories import TRAJECTORIES, trajectory


@pytest.mark.parametrize("name", list(TRAJECTORIES))
def test_derivatives_are_consistent(name):
    tr = trajectory(name, dt=0.001)
    dt = 0.001
    assert tr.q.shape == tr.dq.shape == tr.ddq.shape == tr.t.shape
    # position integrates the velocity (trapezoid), velocity integrates the acceleration
    q_int = tr.q[0] + np.concatenate([[0], np.cumsum(0.5 * (tr.dq[1:] + tr.dq[:-1]) * dt)])
    dq_int = tr.dq[0] + np.concatenate([[0], np.cumsum(0.5 * (tr.ddq[1:] + tr.ddq[:-1]) * dt)])
    assert np.max(np.abs(q_int - tr.q)) < 2e-3
    assert np.max(np.abs(dq_int - tr.dq)) < 2e-2


def test_lift_and_drop_releases_torque_and_unknown_name():
    tr = trajectory("lift_and_drop")
    assert tr.torque_enable[0] == 1 and tr.torque_enable[-1] == 0
    with pytest.raises(ValueError, match="accelerated_oscillations"):
        trajectory("walk")


def test_drive_backdrive_matches_coulomb_viscous_analytics():
    """M1 at rest: static iff |τm + τe| ≤ K_c, so τ_drive = −(τm − K_c), τ_backdrive = −(τm + K_c) (Fig. 2)."""
    p = preset("mx106", "m1")
    kc = p.friction["friction_base"]
    tau_m = np.array([0.5, 1.0, 2.0])
    drive, back = drive_backdrive_torques(p.packed(), tau_m, resolution=20001, tau_e_max=5.0)
    np.testing.assert_allclose(drive, -(tau_m - kc), atol=5e-4)
    np.testing.assert_allclose(back, -(tau_m + kc), atol=5e-4)
    regions = drive_backdrive_regions(p.packed(), np.array([1.0, 1.0, 1.0]), np.array([-0.5, -1.0, -1.5]))
    assert list(regions) == [DRIVE, STATIC, BACKDRIVE]


def test_load_dependent_model_widens_static_area_with_load():
    p = preset("mx106", "m3").packed()
    d1, b1 = drive_backdrive_torques(p, np.array([0.5, 2.0]), tau_e_max=6.0)
    width = d1 - b1
    assert width[1] > width[0] > 0


def test_cli_simulate_writes_csv_and_png(tmp_path, capsys):
    assert main(["simulate", "--servo", "mx106", "--model", "m4", "--out", str(tmp_path)]) == 0
    csv_path = tmp_path / "mx106_m4_accelerated_oscillations.csv"
    png = tmp_path / "mx106_m4_accelerated_oscillations.png"
    assert png.stat().st_size > 10_000
    rows = list(csv.DictReader(csv_path.open()))
    assert len(rows) == 1200
    err = np.array([float(r["theta_rad"]) - float(r["goal_rad"]) for r in rows])
    assert 0.01 < np.mean(np.abs(err)) < 0.5  # it tracks, with the lag of a kp=32 servo


def test_cli_errors_are_one_clear_line(tmp_path, capsys):
    assert main(["simulate", "--servo", "ax12", "--out", str(tmp_path)]) == 2
    assert "valid presets" in capsys.readouterr().err
    assert main(["plot", "drive-backdrive", "--model", "m6", "--out", str(tmp_path / "d.png")]) == 0
    assert (tmp_path / "d.png").exists()
    for flags, words in (  # before: "wrote <dir>" (matplotlib wrote <dir>.png), a float() error naming no flag
        (["--out", str(tmp_path)], f"--out {tmp_path}: give a FILE.png path"),
        (["--out", str(tmp_path / "pl")], "give a FILE.png path"),
        (["--velocities", "a,b"], "--velocities must be comma-separated numbers [rad/s], got 'a,b'"),
    ):
        assert main(["plot", "drive-backdrive", "--model", "m6", *flags]) == 2
        assert words in capsys.readouterr().err
    assert not (tmp_path / "pl.png").exists()
    assert main(["virtual-bus", "--duration", "0.1", "--truth", str(tmp_path)]) == 2  # before: <dir>.npz written
    assert f"--truth {tmp_path}: give a FILE.npz path" in capsys.readouterr().err


# ------------------------------------------------------------------ servo_ff.interpolation (JTC semantics)
def test_interpolation_linear_cubic_quintic():
    from servo_ff.interpolation import JointSpline, follow

    lin = JointSpline([0.0, 2.0], [[0.0], [1.0]])
    q, dq, ddq = lin.sample(0.5)
    assert lin.kind(0) == "linear" and q[0] == 0.25 and dq[0] == 0.5 and ddq[0] == 0.0
    cub = JointSpline([0.0, 1.0], [[0.0], [1.0]], dq=[[0.0], [0.0]])
    assert cub.kind(0) == "cubic"
    assert abs(cub.sample(0.5)[0][0] - 0.5) < 1e-12 and abs(cub.sample(0.5)[1][0] - 1.5) < 1e-12  # 3s² − 2s³
    qui = JointSpline([0.0, 1.0], [[0.0], [1.0]], dq=[[0.0], [2.0]], ddq=[[1.0], [-3.0]])
    assert qui.kind(0) == "quintic"
    eps = 1e-6
    for t, (qe, ve, ae) in ((eps, (0.0, 0.0, 1.0)), (1 - eps, (1.0, 2.0, -3.0))):
        q, dq, ddq = qui.sample(t)
        assert abs(q[0] - qe) < 1e-5 and abs(dq[0] - ve) < 1e-4 and abs(ddq[0] - ae) < 1e-3
    # after the end: last point at rest; partial velocities → that segment linear
    assert list(map(float, qui.sample(5.0)[1])) == [0.0]
    mixed = JointSpline([0, 1, 2], [[0.0], [1.0], [0.0]], dq=[[0.0], [0.0], [0.0]], has_dq=[True, True, False])
    assert [mixed.kind(0), mixed.kind(1)] == ["cubic", "linear"]
    with pytest.raises(ValueError, match="increase strictly"):
        JointSpline([0.0, 1.0, 1.0], [[0.0], [1.0], [2.0]])
    # following from the current state: a first segment from (q0, q̇0) at t_start, none if the first point is at 0
    f = follow(10.0, [0.2], [0.0], [0.0], [1.0, 3.0], [[0.3], [0.9]])
    assert f.times.tolist() == [10.0, 11.0, 13.0] and abs(f.sample(12.0)[0][0] - 0.6) < 1e-12
    assert follow(10.0, [0.2], [0.0], [0.0], [0.0, 1.0], [[0.3], [0.9]]).sample(10.0)[0][0] == 0.3
    assert f.outside(np.array([-1.0]), np.array([0.5])) is not None and f.outside([-1.0], [1.0]) is None
    # the goal-only and vectorised evaluations are the same polynomials as sample(), before, inside and after
    for sp in (f, mixed, qui):
        ts = np.linspace(sp.times[0] - 0.5, sp.times[-1] + 0.5, 101)
        grid = np.array([sp.sample(t)[0] for t in ts])
        assert np.allclose([sp.position(t) for t in ts], grid, atol=1e-12)
        assert np.allclose(sp.positions(ts), grid, atol=1e-12)
    where = f.outside(np.array([-1.0]), np.array([0.5]))
    assert where == (0, 13.0, pytest.approx(0.9, abs=1e-12))  # the first segment beyond, at its extremum (its end)


def test_all_quintic_coefficients_equal_the_mixed_formulas_bit_for_bit():
    """The all-quintic shortcut (a walk node's message) computes what the general per-segment selection does: the
    quintic segments of a spline whose last segment is cubic, evaluated by the general path, are the same bits."""
    from servo_ff.interpolation import JointSpline

    rng = np.random.default_rng(5)
    for _ in range(50):
        p, j = int(rng.integers(2, 12)), int(rng.integers(1, 21))
        times = np.cumsum(rng.uniform(1e-3, 0.5, p + 1))
        q, dq, ddq = rng.normal(size=(3, p + 1, j))
        has_ddq = np.ones(p + 1, dtype=bool)
        has_ddq[-1] = False  # the last segment cubic: the general path
        mixed = JointSpline(times, q, dq, ddq, np.ones(p + 1, dtype=bool), has_ddq)
        quintic = JointSpline(times[:-1], q[:-1], dq[:-1], ddq[:-1])
        assert mixed.kind(p - 1) == "cubic" and quintic.kind(p - 2) == "quintic"
        assert np.array_equal(quintic.coefficients, mixed.coefficients[:-1])
        t = float(rng.uniform(times[0], times[-2]))
        assert all(np.array_equal(a, b) for a, b in zip(quintic.sample(t), mixed.sample(t)))


def test_position_per_period_is_the_numpy_segment_lookup_bit_for_bit():
    """``position`` (each control period's goal: bisect on the knots as floats) picks the segment and offset that
    ``np.searchsorted`` over ``times`` does, to the bit, at the knots themselves, between them and outside."""
    from servo_ff.interpolation import JointSpline, _powers

    rng = np.random.default_rng(7)
    times = np.cumsum(rng.uniform(1e-3, 0.3, 40))
    sp = JointSpline(times, *rng.normal(size=(3, 40, 20)))
    ts = np.concatenate([times, rng.uniform(times[0] - 0.1, times[-1] + 0.1, 500)])
    for t in ts.tolist():
        if t <= times[0] or t >= times[-1]:
            ref = sp.q[0] if t <= times[0] else sp.q[-1]
        else:
            k = int(np.searchsorted(times, t, side="right")) - 1
            ref = _powers(t - times[k]) @ sp._position_coefficients[k]
        assert np.array_equal(sp.position(t), ref)
    assert sp.end_time == float(times[-1]) and type(sp.end_time) is float


def test_feedforward_desired_trajectory_uses_the_servo_interpolation():
    pytest.importorskip("rclpy")
    from builtin_interfaces.msg import Duration
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from servo_ff.interpolation import JointSpline
    from servo_ff.ros.desired_trajectory import parse_trajectory

    msg = JointTrajectory(
        joint_names=["a"],
        points=[
            JointTrajectoryPoint(positions=[0.0], velocities=[0.0], time_from_start=Duration(sec=0)),
            JointTrajectoryPoint(positions=[1.0], velocities=[0.0], time_from_start=Duration(sec=1)),
        ],
    )
    d = parse_trajectory(msg, {"a": 0}, 5.0)
    ref = JointSpline([0.0, 1.0], [[0.0], [1.0]], dq=[[0.0], [0.0]])
    for t in (0.25, 0.5, 0.9):
        np.testing.assert_allclose(d.sample(5.0 + t)[0], ref.sample(t)[0])
    assert abs(d.sample(5.25)[0][0] - 0.15625) < 1e-12  # cubic (3s² − 2s³), not the linear 0.25


def test_the_feed_forward_desired_trajectory_follows_jtc_from_where_it_is():
    """The feed-forward node's desired trajectory (helper-found, before: each jumped): one that ended is refused;
    one whose only point is 3 s ahead moves there over 3 s from the desired pose at rest; one stamped 10 s ahead
    lets the trajectory followed now go on until then, and starts from where that one is."""
    pytest.importorskip("rclpy")
    from builtin_interfaces.msg import Duration
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from servo_ff.ros.desired_trajectory import parse_trajectory

    index, rest = {"a": 0, "b": 1}, np.array([0.1, 0.2])

    def traj(stamp: float, *points: tuple[list[float], float]) -> JointTrajectory:
        m = JointTrajectory(joint_names=["a", "b"])
        m.points = [JointTrajectoryPoint(positions=q, time_from_start=Duration(sec=int(t), nanosec=int(t % 1 * 1e9)))
                    for q, t in points]  # fmt: skip
        m.header.stamp.sec, m.header.stamp.nanosec = int(stamp), int(round(stamp % 1 * 1e9))
        return m

    with pytest.raises(ValueError, match=r"it ended 99\.000 s ago \(header\.stamp 100\.000 s\)"):
        parse_trajectory(traj(100.0, ([0.3, 0.8], 1.0)), index, 200.0, None, None, rest)
    ahead = parse_trajectory(traj(0.0, ([1.5, -1.5], 3.0)), index, 10.0, None, None, rest)  # stamp 0: on reception
    np.testing.assert_allclose(ahead.sample(10.0)[0], rest)  # not [1.5, -1.5] at once
    np.testing.assert_allclose(ahead.sample(13.0)[0], [1.5, -1.5])
    assert 0.1 < ahead.sample(11.5)[0][0] < 1.5
    later = parse_trajectory(traj(20.0, ([-1.0, 1.0], 1.0)), index, 11.0, None, ahead, rest)  # 9 s ahead
    for t in (11.0, 12.0, 19.9):  # the one followed now goes on until 20 s
        np.testing.assert_allclose(later.sample(t)[0], ahead.sample(t)[0])
    np.testing.assert_allclose(later.sample(20.0)[0], [1.5, -1.5])  # then from where it is
    np.testing.assert_allclose(later.sample(21.0)[0], [-1.0, 1.0])
    walk = parse_trajectory(traj(11.0, ([0.4, 0.5], 0.0), ([0.5, 0.6], 0.1)), index, 11.0, None, ahead, rest)
    np.testing.assert_allclose(walk.sample(11.0)[0], [0.4, 0.5])  # a first point at 0 replaces the state (JTC)
    # two pending ones (review): working out the second's start must not cut the first's link (sample changes
    # nothing); a link is cut only where it is never reached again (its holder started)
    b = parse_trajectory(traj(13.0, ([0.0, 0.0], 1.0)), index, 11.0, None, ahead, rest)
    c = parse_trajectory(traj(14.0, ([0.2, 0.2], 1.0)), index, 11.5, None, b, rest)
    np.testing.assert_allclose(c.sample(12.0)[0], ahead.sample(12.0)[0])  # before: b's link cut, a jump ahead
    d = parse_trajectory(traj(15.0, ([0.3, 0.3], 1.0)), index, 13.5, None, c, rest)  # b started at 13 s
    assert d.previous is c and c.previous is b and b.previous is None  # what b replaced: never reached again
    with pytest.raises(ValueError, match=r"joining it from the state followed now: velocity of a is"):
        bounds = (np.array([6.0, 6.0]), np.array([50.0, 50.0]), ["URDF", "URDF"])  # before: 15 rad/s accepted
        parse_trajectory(traj(0.0, ([0.6, 0.2], 0.05)), index, 30.0, bounds, None, rest)
    with pytest.raises(ValueError, match=r"\['a'\] not read on /joint_states yet"):
        parse_trajectory(traj(0.0, ([0.6, 0.2], 1.0)), index, 30.0, None, None, np.array([np.nan, 0.2]))
    parse_trajectory(traj(0.0, ([0.6, 0.2], 0.0)), index, 30.0, None, None, np.array([np.nan, 0.2]))  # replaced


def test_joint_waypoints_rest_at_each_pose_and_move_by_minimum_jerk():
    from servo_ff.trajectories import joint_waypoints

    poses = np.array([[0.0, 1.0], [0.5, -1.0], [0.5, 0.0]])
    t, q, dq, ddq = joint_waypoints(poses, 0.01, 1.0, 0.5, loops=2)
    assert t[-1] == pytest.approx(5 * 1.5 + 0.5) and q.shape == dq.shape == ddq.shape == (len(t), 2)
    for k, pose in enumerate(np.concatenate([poses, poses])):  # each pose held (at rest) during its dwell
        rest = (t >= k * 1.5 - 1e-9) & (t <= k * 1.5 + 0.5 + 1e-9)
        np.testing.assert_allclose(q[rest], np.broadcast_to(pose, q[rest].shape), atol=1e-12)
        np.testing.assert_allclose(dq[rest], 0.0, atol=1e-12)
    # minimum jerk: peak speed 1.875·Δq/T mid-move, and q̇, q̈ are the derivatives of q
    assert np.abs(dq[:, 1]).max() == pytest.approx(1.875 * 2.0 / 1.0, rel=1e-3)

    def integral(x):  # trapezoidal, from t = 0
        return np.concatenate([np.zeros((1, 2)), np.cumsum((x[1:] + x[:-1]) * 0.005, axis=0)])

    np.testing.assert_allclose(q[0] + integral(dq), q, atol=1e-4)
    np.testing.assert_allclose(integral(ddq), dq, atol=5e-3)
    for bad in (np.zeros((0, 2)), np.array([[np.nan, 0.0]])):
        with pytest.raises(ValueError, match="poses"):
            joint_waypoints(bad, 0.01, 1.0, 0.5)


def test_hold_within_scales_a_point_as_a_whole_and_counts_the_values_beyond():
    """interpolation.hold_within (the walk node's q̇/q̈ hold): a row with a value beyond its joint's limit is scaled by
    one factor (the farthest value at ±limit, signs kept), a joint without a limit (inf) with it; a row within (or
    all zero) untouched; the count is of the values beyond, per joint; a NaN is neither a value beyond nor scaled
    away (the feed-forward node refuses it, naming point and joint)."""
    from servo_ff.interpolation import hold_within

    limit = np.array([1.0, 2.0, np.inf])
    x = np.array([[2.0, -1.0, 5.0], [0.0, 0.0, 0.0], [0.5, -3.0, 1.0], [0.5, 1.0, 1e9], [np.nan, 4.0, 1.0]])
    got, beyond = hold_within(x, limit)
    np.testing.assert_allclose(got[0], [1.0, -0.5, 2.5])  # the first joint at its limit, the row's ratios kept
    assert (got[1] == 0).all() and (got[3] == x[3]).all()  # all zero / within (an unlimited joint never beyond)
    np.testing.assert_allclose(got[2], [0.5 * 2 / 3, -2.0, 2 / 3])  # the second joint the farthest beyond
    assert np.isnan(got[4, 0]) and got[4, 1:].tolist() == [2.0, 0.5]
    assert beyond.tolist() == [1, 2, 0]
    within = np.array([[0.5, 1.5, 1e9]])
    assert hold_within(within, limit)[0] is within and hold_within(within, limit)[1].tolist() == [0, 0, 0]


def test_hold_within_never_rounds_beyond_the_limit():
    """x·(limit/|x|) rounds one ulp beyond the limit for some x (1636.9616873214543 at 1000 → 1000.0000000000001):
    the feed-forward node's check (|q̈| ≤ bound) then refused a knot the walk node had held (a CI run of the NimbRo-OP
    plan). The held value is at the limit, not beyond, and the row's other values keep their ratio."""
    from servo_ff.interpolation import hold_within

    x = np.array([[1636.9616873214543, -818.48084366072715], [-1636.9616873214543, 10.0]])
    limit = np.array([1000.0, 1000.0])
    assert x[0, 0] * (limit[0] / x[0, 0]) > limit[0]  # the rounding this guards against
    got, beyond = hold_within(x, limit)
    assert np.abs(got).max() <= 1000.0 and got[0, 0] == 1000.0 and got[1, 0] == -1000.0
    assert got[0, 1] / got[0, 0] == pytest.approx(x[0, 1] / x[0, 0], rel=1e-15) and beyond.tolist() == [2, 0]


def test_cli_simulate_interrupted_leaves_no_cut_off_csv(tmp_path, monkeypatch):
    """Before: Ctrl-C during the CSV write left a cut-off file under the final name (opened directly); now the CSV
    is written under a temporary name and renamed once whole."""
    import servo_ff.cli.simulate as sim

    real = csv.writer

    class Interrupted:
        def __init__(self, f):
            self.w, self.rows = real(f), 0

        def writerow(self, row):
            self.rows += 1
            if self.rows > 100:
                raise KeyboardInterrupt
            self.w.writerow(row)

    monkeypatch.setattr(sim.csv, "writer", Interrupted)
    try:
        rc = main(["simulate", "--servo", "mx106", "--model", "m4", "--out", str(tmp_path)])
    except KeyboardInterrupt:
        rc = 130
    assert rc != 0
    assert list(tmp_path.iterdir()) == [], list(tmp_path.iterdir())
