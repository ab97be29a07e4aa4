"""servo_walk_node's balance feedback at the node (the feedback's law without ROS: test_walk_op3.py): the trunk IMU
reading's offsets on the published points, nothing before the walk, a stale reading, readings without a usable
orientation or rate (REP-145's "not given" included), a non-unit quaternion and the held offsets. The node is
driven by hand on a fake clock (not spun) on a planned window set by hand, as in test_nodes_walk.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("placo")
rclpy = pytest.importorskip("rclpy")

from servo_ff.ros.harness import RosHarness  # noqa: E402

GAINS = {"balance_ankle_pitch": 0.5, "balance_ankle_pitch_rate": 0.1, "balance_ankle_roll": 0.4,
         "balance_hip_pitch": 0.5, "balance_hip_roll": 0.5, "balance_limit": 0.2}  # fmt: skip
PITCH_ERR, ROLL, RATE_Y = 0.04, 0.05, 0.2  # [rad], [rad], [rad/s] of the reading below
D_PITCH = 0.5 * PITCH_ERR + 0.1 * RATE_Y  # δ_pitch = k_ap·(θ − θ_ref) + k_ap_rate·ω_y = 0.04 rad
D_ROLL = 0.4 * ROLL  # δ_roll = k_ar·φ = 0.02 rad
# op3.urdf's axes: l_ank_pitch −y, r_ank_pitch +y, l_hip_pitch +y, r_hip_pitch −y, ank_roll +x, hip_roll −x
EXPECTED = {"l_ank_pitch": -D_PITCH, "r_ank_pitch": D_PITCH, "l_hip_pitch": 0.5 * D_PITCH,
            "r_hip_pitch": -0.5 * D_PITCH, "l_ank_roll": D_ROLL, "r_ank_roll": D_ROLL, "l_hip_roll": -0.5 * D_ROLL,
            "r_hip_roll": -0.5 * D_ROLL}  # fmt: skip


def _imu(pitch: float, roll: float, rate_y: float = RATE_Y, scale: float = 1.0):
    """A sensor_msgs/Imu of the trunk pitched ``pitch`` (about +y) and rolled ``roll`` (about +x), ZYX Euler."""
    from scipy.spatial.transform import Rotation
    from sensor_msgs.msg import Imu

    msg = Imu()
    x, y, z, w = scale * Rotation.from_euler("ZYX", [0.0, pitch, roll]).as_quat()
    msg.orientation.x, msg.orientation.y, msg.orientation.z, msg.orientation.w = x, y, z, w
    msg.angular_velocity.y = rate_y
    return msg


class _Said:
    """The node's logger, its warnings kept."""

    def __init__(self):
        self.warnings: list[str] = []

    def warning(self, m, **_):
        self.warnings.append(m)

    def info(self, m, **_):
        pass


def _walk_on(ros: RosHarness, name: str, clock: list, said: _Said):
    """A walk node with the balance gains that never starts by itself (``start_delay`` 1 h), its time ``clock[0]``
    and its lines taken by ``said``."""
    from rclpy.parameter import Parameter

    from servo_ff.nodes.walk_node import WalkNode

    values = {**GAINS, "start_delay": 3600.0, "imu_timeout": 0.1}
    walk = WalkNode(name, **ros.node_kwargs(), parameter_overrides=[Parameter(k, value=v) for k, v in values.items()])
    walk.now_s = lambda: clock[0]
    walk.get_logger = lambda: said
    return walk


def _published(walk, clock: list, t: float):
    """The trajectory the walk node publishes at ``t`` [s], as the feed-forward node parses it: its points from one
    publish_period on (the balance offsets are ramped over the first one)."""
    from types import SimpleNamespace

    from servo_ff.ros.desired_trajectory import parse_trajectory

    clock[0] = t
    walk._publish_trajectory()
    traj = parse_trajectory(walk._cdr.data(), {j: i for i, j in enumerate(walk.joints)}, t)
    k = traj.times >= traj.times[0] + 0.1 + 2 * walk.dt - 1e-9  # (and the differences across its end)
    return SimpleNamespace(t0=traj.t0, times=traj.times[k], q=traj.q[k], dq=traj.dq[k], ddq=traj.ddq[k])


def test_walk_node_adds_the_imu_readings_balance_offsets_to_the_published_points():
    clock, said = [1.0], _Said()
    with RosHarness(salt=49) as ros:
        walk = _walk_on(ros, "servo_walk_b", clock, said)
        try:
            n = len(walk.joints)
            times = walk.dt * np.arange(300)  # a planned window by hand: 0 … 2.99 s, the walk from 1.5 s
            planned = 0.2 * np.sin(2.0 * math.pi * times[:, None] + np.linspace(0.0, 2.0, n))
            walk.times, walk.qs, walk.cs = list(times), list(planned), [0.5] * 300
            walk.q0, walk.t0, walk.t_walk = walk.qs[0], 0.0, 1.5
            ref = walk.engine.params.trunk_pitch
            expected = np.array([EXPECTED.get(j, 0.0) for j in walk.joints])
            assert np.count_nonzero(expected) == 8

            def planned_at(traj):
                k = np.rint((traj.t0 + traj.times) / walk.dt).astype(int)
                return planned[k]

            # before the walk: no feedback (the approach has no trunk-pitch reference)
            walk._on_imu(_imu(ref + PITCH_ERR, ROLL))
            traj = _published(walk, clock, 1.0)
            np.testing.assert_array_equal(traj.q, planned_at(traj))
            # walking: the reading's offsets on every point after the ramp, q̇ and q̈ unchanged there
            without = _published(walk, clock, 1.6)
            walk._on_imu(_imu(ref + PITCH_ERR, ROLL))
            traj = _published(walk, clock, 1.6)
            assert len(traj.times) > 30
            np.testing.assert_allclose(traj.q - without.q, np.broadcast_to(expected, traj.q.shape), rtol=0, atol=1e-12)
            np.testing.assert_allclose(traj.dq, without.dq, rtol=0, atol=1e-10)  # up to the differences' rounding
            np.testing.assert_allclose(traj.ddq, without.ddq, rtol=0, atol=1e-7)
            # a refused reading leaves the last good offsets in use while they are fresh
            walk._on_imu(_imu(ref + 0.3, -0.2, scale=0.0))
            traj = _published(walk, clock, 1.65)
            np.testing.assert_allclose(traj.q - planned_at(traj), np.broadcast_to(expected, traj.q.shape), atol=1e-12)
            # a reading older than imu_timeout: none, said once
            for t in (1.75, 1.8):
                traj = _published(walk, clock, t)
                np.testing.assert_array_equal(traj.q, planned_at(traj))
            stale = [m for m in said.warnings if "imu/data: the last reading is" in m]
            assert len(stale) == 1 and stale[0].endswith("(imu_timeout 0.1 s): no balance offset"), said.warnings
            # readings that cannot be used are refused by name; the reading's age stays the last good one's
            refused = {
                "non-zero norm": _imu(ref + PITCH_ERR, ROLL, scale=0.0),  # what an IMU without orientation sends
                "orientation_covariance[0] = -1": _imu(ref + PITCH_ERR, ROLL),
                "angular_velocity_covariance[0] = -1": _imu(ref + PITCH_ERR, ROLL),
                "angular velocity must be finite": _imu(ref + PITCH_ERR, ROLL, rate_y=math.nan),
            }
            refused["orientation_covariance[0] = -1"].orientation_covariance[0] = -1.0
            refused["angular_velocity_covariance[0] = -1"].angular_velocity_covariance[0] = -1.0
            for why, msg in refused.items():
                said.warnings.clear()
                walk._on_imu(msg)
                assert len(said.warnings) == 1 and why in said.warnings[0], (why, said.warnings)
                assert said.warnings[0].startswith("imu/data: ")
                traj = _published(walk, clock, 1.8)
                np.testing.assert_array_equal(traj.q, planned_at(traj))
            # a quaternion of norm 2 is the same rotation: the same offsets; a fresh reading is taken again
            walk._on_imu(_imu(ref + PITCH_ERR, ROLL, scale=2.0))
            traj = _published(walk, clock, 1.8)
            np.testing.assert_allclose(traj.q - planned_at(traj), np.broadcast_to(expected, traj.q.shape), atol=1e-12)
            # offsets beyond balance_limit are held there, said
            said.warnings.clear()
            walk._on_imu(_imu(ref + 1.0, 0.0, rate_y=0.0))  # δ_pitch 0.5 rad: ankles held at 0.2, hips 0.25 → 0.2
            traj = _published(walk, clock, 1.85)
            held = dict(zip(walk.joints, (traj.q - planned_at(traj))[0], strict=True))
            assert held["l_ank_pitch"] == pytest.approx(-0.2, abs=1e-12)
            assert held["r_hip_pitch"] == pytest.approx(-0.2, abs=1e-12)
            assert held["l_ank_roll"] == 0.0
            assert any("held at ±0.2 rad" in m for m in said.warnings), said.warnings
            # a reading stamped longer than imu_timeout before it arrives (it waited in a queue) is stale on arrival:
            # no offset; one stamped after its arrival (another clock) counts from its arrival
            late = _imu(ref + PITCH_ERR, ROLL)
            late.header.stamp.sec, late.header.stamp.nanosec = 1, 700_000_000  # 1.7 s, arrived at 1.9 s
            clock[0] = 1.9
            walk._on_imu(late)
            traj = _published(walk, clock, 1.9)
            np.testing.assert_array_equal(traj.q, planned_at(traj))
            ahead = _imu(ref + PITCH_ERR, ROLL)
            ahead.header.stamp.sec = 5  # ahead of the node's clock
            walk._on_imu(ahead)
            traj = _published(walk, clock, 1.95)
            np.testing.assert_allclose(traj.q - planned_at(traj), np.broadcast_to(expected, traj.q.shape), atol=1e-12)
            # a stamp further back than max(1 s, 10 imu_timeout) reads as another clock's: said once, the arrival used
            said.warnings.clear()
            clock[0] = 12.0
            for _ in range(2):
                boot = _imu(ref + PITCH_ERR, ROLL)
                boot.header.stamp.sec = 3  # 9 s before its arrival
                walk._on_imu(boot)
            assert sum("taken as another clock's" in m for m in said.warnings) == 1, said.warnings
            assert walk.balance.age.foreign_stamps == 2 and walk.balance.offset_at(12.05, 0.1) is not None
        finally:
            walk.destroy_node()


def test_an_imu_that_goes_stale_and_comes_back_is_said_on_the_real_rclpy_logger():
    """Stale, then readings again, through the node's own rclpy logger (the test above swaps in a fake one): rclpy
    keys a logging call site to one severity, and the two lambdas on one line were one site — the 'again' line
    raised ValueError and the walk node process ended (exit 2) when an IMU paused 0.5 s and came back."""
    from types import SimpleNamespace

    from servo_ff.ros.imu_balance import ImuBalance

    with RosHarness(salt=51) as ros:
        node = ros.make_node("imu_balance_logger")
        imu = ImuBalance(SimpleNamespace(n=1), "imu/data", node.get_logger)  # (the ages need no gains)
        for _ in range(2):  # stale, again, stale, again: each a line, none raising
            imu.age.taken(1.0)
            assert imu.age.state(2.0, 0.1).startswith("stale")
            imu.age.taken(2.0)
            assert imu.age.state(2.0, 0.1) == "0.000 s old"


def test_balance_gains_with_no_imu_reading_at_all_are_one_warning_and_a_warn_status():
    """Balance gains set, no reading ever on imu_topic (a wrong topic, an IMU driver not up). Before: the walk went
    on open-loop, nothing said, /diagnostics OK ("walking", imu "none yet"; audit 20a e14); now one warning naming the
    topic once imu_timeout has passed since the walk's start, WARN while none comes, its first reading said."""
    from diagnostic_msgs.msg import DiagnosticStatus

    clock, said = [1.0], _Said()
    with RosHarness(salt=52) as ros:
        walk = _walk_on(ros, "servo_walk_n", clock, said)
        try:
            n = len(walk.joints)
            times = walk.dt * np.arange(300)  # a planned window by hand (as above): the walk from 1.5 s
            walk.times, walk.qs, walk.cs = list(times), [np.zeros(n)] * 300, [0.5] * 300
            walk.q0, walk.t0, walk.t_walk = walk.qs[0], 0.0, 1.5
            for t in (1.0, 1.55):  # the approach; walking for less than imu_timeout
                _published(walk, clock, t)
            walk.diagnostics.status()  # (the counters' rises since the start)
            assert not said.warnings and walk.diagnostics.status().level == DiagnosticStatus.OK
            for t in (1.65, 1.7, 2.0):
                _published(walk, clock, t)
            assert len(said.warnings) == 1 and said.warnings[0].startswith("imu/data: no reading in 0.15 s"), said
            st = walk.diagnostics.status()
            assert st.level == DiagnosticStatus.WARN and "no reading on imu/data since the walk started" in st.message
            walk._on_imu(_imu(walk.engine.params.trunk_pitch, 0.0))
            _published(walk, clock, 2.0)
            assert walk.diagnostics.status().level == DiagnosticStatus.OK and len(said.warnings) == 1
        finally:
            walk.destroy_node()
