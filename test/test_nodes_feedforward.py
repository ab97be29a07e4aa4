"""servo_feedforward_node + servo_sim_node over DDS: gravity feed-forward reduces the low-gain tracking error,
the feed-forward gain is set on the servo node's `kp` parameter (once, not re-published), α parameters are
validated, bad trajectories are refused."""

from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np
import pytest
from nodes_harness import RosHarness, sim_node, wait_for

pytest.importorskip("rclpy")
pytest.importorskip("servo_ff.dynamics.feedforward", reason="feed-forward core servo_ff.dynamics not merged yet")
from builtin_interfaces.msg import Duration  # noqa: E402
from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from rcl_interfaces.msg import Parameter as ParameterMsg  # noqa: E402
from rcl_interfaces.msg import ParameterType, ParameterValue  # noqa: E402
from rcl_interfaces.srv import SetParameters  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import BatteryState, JointState  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

from servo_ff.nodes.feedforward_node import FeedForwardNode  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
JOINTS = ["pendulum_1", "pendulum_2"]
KP_LOW = 4.0


@pytest.fixture(scope="module")
def ros():
    h = RosHarness(salt=3)
    sim = sim_node(
        h,
        joints=JOINTS,
        rate_hz=250.0,
        servo="mx64",
        model="m4",
        position_min=[-2.5],
        position_max=[2.5],
        **{"load.mass": [0.5], "load.length": [0.15]},
    )
    ff = h.add(
        FeedForwardNode(
            "servo_feedforward",
            context=h.context,
            namespace=h.ns,
            parameter_overrides=[
                Parameter("urdf_path", value=str(ROOT / "urdf" / "pendulums2.urdf")),
                Parameter("joints", value=JOINTS),
                Parameter("kp", value=[KP_LOW]),
                Parameter("servo", value="mx64"),
                Parameter("model", value="m4"),
                Parameter("warn_throttle", value=30.0),
            ],
        )
    )
    client = h.make_node("ff_test_client")
    states: list[JointState] = []
    client.create_subscription(JointState, "joint_states", states.append, 50)
    desired = client.create_publisher(JointTrajectory, "feedforward/trajectory", 10)
    wait_for(lambda: desired.get_subscription_count() and states, 20.0, "discovery")
    yield h, sim, ff, client, states, desired
    h.shutdown()


def hold(q) -> JointTrajectory:
    return JointTrajectory(
        joint_names=JOINTS,
        points=[
            JointTrajectoryPoint(
                positions=list(q), velocities=[0.0, 0.0], accelerations=[0.0, 0.0], time_from_start=Duration()
            )
        ],
    )


def steady_error(states, target, sim, settle=1.5) -> np.ndarray:
    """Mean |error| after ``settle`` seconds of *simulated* time (independent of the machine's load)."""
    t0 = sim.ticks
    wait_for(lambda: sim.ticks - t0 >= settle / sim.period, 60.0, "simulated settling time")
    pos = np.array([s.position for s in states[-25:]])
    return np.abs(pos.mean(axis=0) - target)


def _ff_diagnostics(h: RosHarness, client) -> list[DiagnosticArray]:
    """The feed-forward node's /diagnostics as ``client`` receives them (test subscriptions stay: destroying one
    while the executor thread waits on it could kill that thread)."""
    arrays: list[DiagnosticArray] = []
    fqn = f"{h.ns}/servo_feedforward"
    client.create_subscription(
        DiagnosticArray,
        "/diagnostics",
        lambda m: any(s.name.startswith(fqn) for s in m.status) and arrays.append(m),
        50,
    )
    return arrays


def test_the_servo_node_owns_kp_and_the_feedforward_node_sets_it_once(ros):
    """The feed-forward gain reaches the servo node through its `kp` parameter, and nothing re-publishes it: a gain
    set on the servo node afterwards stays (over two diagnostics periods of the feed-forward node, 2 s), until the
    feed-forward node's own gain changes. Its /diagnostics are stamped and named by its fully-qualified name."""
    h, sim, ff, client, states, desired = ros
    wait_for(lambda: np.allclose(sim.sim.kp, KP_LOW), 30.0, "servo P gains set by the feed-forward node")
    assert list(sim.get_parameter("kp").value) == [KP_LOW]  # the parameter tells the gain applied
    # read back by the setter (a gain set before that is kept too, said otherwise: test_servo_gain.py)
    wait_for(lambda: not ff.gains.pending, 30.0, "the gain read back")
    assert client.count_publishers(f"{h.ns}/servo/p_gains") == 0  # no second writer of the servo's gain
    arrays = _ff_diagnostics(h, client)
    fqn = f"{h.ns}/servo_feedforward"
    try:
        assert sim.set_parameters([Parameter("kp", value=[20.0])])[0].successful
        n = len(arrays)
        wait_for(lambda: len(arrays) >= n + 2, 30.0, "two diagnostics of the feed-forward node")
        np.testing.assert_allclose(sim.sim.kp, 20.0)  # not overwritten by the feed-forward node
        (st,) = arrays[-1].status
        assert st.name == f"{fqn}: feed-forward" and st.hardware_id == f"{fqn}/feedforward"
        values = {kv.key: kv.value for kv in st.values}
        assert "set on" in values["servo_kp"]
        assert values["support"] == "unused (fixed base)"  # an arm: no support coefficient assumed or needed
        assert arrays[-1].header.stamp.sec > 0  # stamped with the node's time, not 0
        assert ff.set_parameters([Parameter("kp", value=[5.0])])[0].successful  # its own gain changes: set again
        wait_for(lambda: list(sim.get_parameter("kp").value) == [5.0], 30.0, "the new gain on the servo node")
    finally:
        assert ff.set_parameters([Parameter("kp", value=[KP_LOW])])[0].successful
        wait_for(lambda: np.allclose(sim.sim.kp, KP_LOW), 30.0, "the fixture's gain back")


def test_a_servo_node_that_appears_later_gets_the_gain(ros, capfd):
    """The servo node is not there when the feed-forward node starts: one warning line naming it, and the gain is
    set as soon as it appears."""
    h, sim, ff, client, states, desired = ros
    ns = f"{h.ns}/late"
    lines: list[str] = []

    def read() -> list[str]:
        lines.extend(capfd.readouterr().err.splitlines())
        return lines

    ff2 = h.add(
        FeedForwardNode(
            "servo_feedforward",
            context=h.context,
            namespace=ns,
            parameter_overrides=[
                Parameter("urdf_path", value=str(ROOT / "urdf" / "pendulums2.urdf")),
                Parameter("joints", value=JOINTS),
                Parameter("kp", value=[6.0]),
                Parameter("servo_node", value="servo_sim_b"),
            ],
        )
    )
    sim2 = None
    try:
        missing = f"servo node {ns}/servo_sim_b not found"
        wait_for(lambda: any(missing in ln for ln in read()), 30.0, "the warning that the servo node is missing")
        sim2 = sim_node(h, "servo_sim_b", ns, joints=JOINTS, rate_hz=50.0, kp=[32.0])
        wait_for(lambda: list(sim2.get_parameter("kp").value) == [6.0], 30.0, "the gain on the late servo node")
        np.testing.assert_allclose(sim2.sim.kp, 6.0)
        wait_for(lambda: ff2.gains.sets, 30.0, "the servo node's answer")
        assert sum(missing in ln for ln in read()) == 1, [ln for ln in lines if "not found" in ln]
        assert ff2.gains.sets == 1
    finally:
        h.remove(ff2)
        if sim2 is not None:
            h.remove(sim2)


def test_gain_setter_warns_once_warn_after_seconds_on_its_clock(ros):
    """The gain setter's ``warn_after`` runs on its injected clock: no line before 3 s, one after, not again."""
    h, sim, ff, client, states, desired = ros
    setter_class = type(ff.gains)  # ServoGainSetter
    now = [100.0]
    g = setter_class(h.make_node("gain_clock_client"), "absent_servo", JOINTS, poll_period=3600.0, clock=lambda: now[0])
    g.set([5.0])
    now[0] = 102.9
    g.poll()
    assert not g._warned and g.state.startswith("waiting for")
    now[0] = 103.1
    g.poll()
    assert g._warned and g.state.endswith("absent_servo not found")
    now[0] = 200.0
    g.poll()
    assert g.state.endswith("not found") and g.sets == 0


def test_feedforward_reduces_low_gain_gravity_error(ros):
    h, sim, ff, client, states, desired = ros
    target = np.array([0.9, -0.7])
    wait_for(lambda: np.allclose(sim.sim.kp, KP_LOW), 20.0, "servo P gains set by the feed-forward node")
    assert (
        h.call(
            client.create_client(SetParameters, "servo_feedforward/set_parameters"),
            SetParameters.Request(
                parameters=[
                    ParameterMsg(
                        name="enabled", value=ParameterValue(type=ParameterType.PARAMETER_BOOL, bool_value=False)
                    )
                ]
            ),
        )
        .results[0]
        .successful
    )
    # idle (no desired trajectory): it took the measured pose as desired and stopped listening to /joint_states
    wait_for(lambda: ff._js_sub is None, 20.0, "the idle node to stop listening")
    assert ff.ticks == 0 and np.allclose(ff.q_des, states[-1].position, atol=0.05)
    desired.publish(hold(target))
    wait_for(lambda: ff.ticks > 10, 20.0, "feed-forward ticks")  # a trajectory brings the subscription back
    err_p = steady_error(states, target, sim)
    h.call(
        client.create_client(SetParameters, "servo_feedforward/set_parameters"),
        SetParameters.Request(
            parameters=[
                ParameterMsg(name="enabled", value=ParameterValue(type=ParameterType.PARAMETER_BOOL, bool_value=True))
            ]
        ),
    )
    err_ff = steady_error(states, target, sim)
    # plain low-gain P sags under gravity (~0.1 rad); the model-based goal offset removes most of it
    assert (err_p > 0.04).all(), err_p
    assert (err_ff < 0.6 * err_p).all(), (err_ff, err_p)  # the rest is the stiction band of M4 friction
    # the goal sent is above the desired position on the side gravity pulls from
    assert sim.gate.goal[0] > target[0] and sim.gate.goal[1] < target[1]


def _set_alpha(h, client, values):
    cli = client.create_client(SetParameters, "servo_feedforward/set_parameters")
    return h.call(
        cli,
        SetParameters.Request(
            parameters=[
                ParameterMsg(
                    name=f"alpha.{j}",
                    value=ParameterValue(type=ParameterType.PARAMETER_DOUBLE_ARRAY, double_array_value=v),
                )
                for j, v in values.items()
            ]
        ),
    ).results


@pytest.mark.parametrize(
    "value, word",
    [
        ([math.nan, 1.0, 0.1, 0.1], "not finite"),
        ([1.0, 2.0, 3.0], "4"),
        ([1.0, 2.0, math.inf, 0.0], "not finite"),
        ([-1e6, 0.0, 0.0, 0.0], "below its minimum"),
        ([0.0, 1.0, 1.0, 1.0], "alpha[0]=0 is outside its admissible range"),
        ([10.0, 1.0, -0.5, 1.0], "[2]=-0.5 is below its minimum 0"),
        ([1e9, 1.0, 1.0, 1.0], "above its maximum"),
    ],
)
def test_alpha_parameters_refused(ros, value, word):
    h, sim, ff, client, states, desired = ros
    before = ff.ctrl.alpha.alpha.copy()
    (r,) = _set_alpha(h, client, {"pendulum_1": value})
    assert not r.successful and word in r.reason and "alpha" in r.reason
    np.testing.assert_array_equal(ff.ctrl.alpha.alpha, before)


def test_alpha_parameters_applied(ros):
    h, sim, ff, client, states, desired = ros
    new = [10.0, 9.0, 0.5, 0.7]
    (r,) = _set_alpha(h, client, {"pendulum_2": new})
    assert r.successful
    np.testing.assert_allclose(ff.ctrl.alpha.alpha[1], new + [0.0])


def test_bad_trajectories_rejected_previous_kept(ros):
    h, sim, ff, client, states, desired = ros
    desired.publish(hold([0.3, 0.2]))
    wait_for(lambda: np.allclose(ff.traj.q[-1], [0.3, 0.2]), 20.0, "valid trajectory")
    before = ff.rejected
    bad1 = hold([0.1, 0.1])
    bad1.joint_names = ["pendulum_1", "knee"]
    bad2 = hold([math.nan, 0.1])
    bad3 = JointTrajectory(
        joint_names=JOINTS,
        points=[
            JointTrajectoryPoint(positions=[0.0, 0.0], time_from_start=Duration(sec=1)),
            JointTrajectoryPoint(positions=[0.1, 0.1], time_from_start=Duration(sec=1)),
        ],
    )
    for m in (bad1, bad2, bad3):
        desired.publish(m)
    wait_for(lambda: ff.rejected - before >= 3, 20.0, "rejections")
    np.testing.assert_allclose(ff.traj.q[-1], [0.3, 0.2])


# ------------------------------------------------------------------ issue 15: supply hold, desired-motion bounds
def test_supply_below_the_fraction_of_nominal_is_refused_and_held(ros):
    h, sim, ff, client, states, desired = ros
    desired.publish(hold([0.3, 0.2]))
    wait_for(lambda: ff.traj is not None and np.allclose(ff.traj.q[-1], [0.3, 0.2]), 20.0, "a trajectory")
    pub = client.create_publisher(BatteryState, "servo_supply", 10)
    wait_for(lambda: pub.get_subscription_count(), 20.0, "servo_supply subscriber")
    before = ff.rejected

    def supply_suppressed() -> int:
        return sum(n for k, n in ff.throttle._suppressed.items() if k.startswith("supply|"))

    suppressed = supply_suppressed()
    low = []
    for v in (0.01, 1e-6, 150.0):
        pub.publish(BatteryState(voltage=v))
    wait_for(lambda: ff.rejected - before >= 3, 20.0, "three supply readings refused")
    for _ in range(20):  # across ticks: the controller never runs on a refused reading
        ticks = ff.ticks
        wait_for(lambda t=ticks: ff.ticks > t, 20.0, "a controller tick")
        low.append(ff.ctrl.u_bat)
    assert min(low) >= 0.5 * 15.0, low
    # throttled per reason (warn_throttle 30 s): the second reading below the floor is counted, not logged
    assert supply_suppressed() >= suppressed + 1


def test_desired_velocity_and_acceleration_beyond_the_joint_bounds_are_refused(ros):
    h, sim, ff, client, states, desired = ros
    desired.publish(hold([0.3, 0.2]))
    wait_for(lambda: ff.traj is not None and np.allclose(ff.traj.q[-1], [0.3, 0.2]), 20.0, "valid trajectory")
    before = ff.rejected
    fast = hold([0.4, 0.2])
    fast.points[0].velocities = [1e300, 0.0]
    jerk = hold([0.4, 0.2])
    jerk.points[0].accelerations = [0.0, -5000.0]
    for m in (fast, jerk):
        desired.publish(m)
    wait_for(lambda: ff.rejected - before >= 2, 20.0, "both refused")
    np.testing.assert_allclose(ff.traj.q[-1], [0.3, 0.2])
    ok = hold([0.35, 0.2])
    ok.points[0].velocities = [8.0, 0.0]  # below pendulums2's URDF velocity limit (8.7 rad/s)
    desired.publish(ok)
    wait_for(lambda: np.allclose(ff.traj.q[-1], [0.35, 0.2]), 20.0, "a trajectory inside the bounds")
    assert ff.bounds[2] == ["URDF velocity limit"] * 2


def set_warn_throttle(h, client, seconds: float) -> bool:
    value = ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=seconds)
    return (
        h.call(
            client.create_client(SetParameters, "servo_feedforward/set_parameters"),
            SetParameters.Request(parameters=[ParameterMsg(name="warn_throttle", value=value)]),
        )
        .results[0]
        .successful
    )


def test_refused_desired_motion_is_one_throttled_warning_naming_the_joint(ros, capfd):
    """A burst of N trajectories with a velocity (pendulum_1), then N with an acceleration (pendulum_2), beyond
    the joint's bound: each burst is refused and logs one warning naming the joint and its bound, not N lines
    (throttled per reason: the second burst, another reason, has its own line; the first burst's suppressed
    repeats stay counted under the first reason)."""
    h, sim, ff, client, states, desired = ros
    period, n_bad = 1.0, 20
    assert set_warn_throttle(h, client, period)
    now = [time.monotonic()]  # the throttle's clock [s]: a burst is within one period, the next a period later
    ff.throttle.clock = lambda: now[0]
    try:
        desired.publish(hold([0.3, 0.2]))
        wait_for(lambda: ff.traj is not None and np.allclose(ff.traj.q[-1], [0.3, 0.2]), 20.0, "valid trajectory")
        refused, warnings = [], []
        for label, field, joint, k, bound in (
            ("velocity", "velocities", "pendulum_1", 0, ff.bounds[0]),
            ("acceleration", "accelerations", "pendulum_2", 1, ff.bounds[1]),
        ):
            now[0] += period  # the last warning of this kind is older than the throttle period
            capfd.readouterr()
            before = ff.rejected
            for n in range(n_bad):
                m = hold([0.4, 0.2])
                values = [0.0, 0.0]
                values[k] = (2.0 + n) * bound[k]
                setattr(m.points[0], field, values)
                seen = ff.rejected
                desired.publish(m)
                wait_for(lambda s=seen: ff.rejected > s, 20.0, f"{label} trajectory {n} refused")
            refused.append(ff.rejected - before)
            lines = [ln for ln in capfd.readouterr().err.splitlines() if "desired trajectory" in ln]
            assert 1 <= len(lines) <= 2 and 5 * len(lines) <= refused[-1], (refused, lines)
            for ln in lines:
                assert "WARN" in ln and f"{label} of {joint} is " in ln and "beyond its bound" in ln, ln
            warnings.append(lines)
            np.testing.assert_allclose(ff.traj.q[-1], [0.3, 0.2])  # the previous trajectory is kept
        counted = sum(n for k, n in ff.throttle._suppressed.items() if "velocity of pendulum_" in k)
        assert counted >= refused[0] - len(warnings[0]), (counted, warnings)
    finally:
        ff.throttle.clock = time.monotonic
        assert set_warn_throttle(h, client, 30.0)  # the fixture's value


def test_desired_motion_refusal_names_joint_and_bound():
    from builtin_interfaces.msg import Duration as D

    from servo_ff.ros.desired_trajectory import parse_trajectory

    msg = JointTrajectory(
        joint_names=["b"], points=[JointTrajectoryPoint(positions=[0.0], velocities=[1e300], time_from_start=D())]
    )
    bounds = (np.array([6.0, 9.0]), np.array([100.0, 100.0]), ["URDF velocity limit", "max_velocity"])
    with pytest.raises(
        ValueError,
        match=r"point 0 velocity of b is 1e\+300 rad/s, beyond its bound 9 rad/s "
        r"\(max_velocity\)",
    ):
        parse_trajectory(msg, {"a": 0, "b": 1}, 0.0, bounds)
    msg.points[0].velocities = [8.0]
    assert parse_trajectory(msg, {"a": 0, "b": 1}, 0.0, bounds).dq[0, 0] == 8.0


def test_bad_imu_messages_are_one_throttled_line(ros, capfd):
    """A stream of bad IMU orientations is refused (the last good gravity held) with one throttled warning,
    not one line per message."""
    from sensor_msgs.msg import Imu

    h, sim, ff, client, states, desired = ros
    pub = client.create_publisher(Imu, "imu/data", 10)
    wait_for(lambda: pub.get_subscription_count(), 20.0, "imu subscriber")
    before = ff.rejected
    bad = Imu()
    bad.orientation.x = bad.orientation.y = bad.orientation.z = bad.orientation.w = math.nan
    for n in range(40):
        seen = ff.rejected
        pub.publish(bad)
        wait_for(lambda s=seen: ff.rejected > s, 20.0, f"bad IMU message {n} refused")
    wait_for(lambda: ff.rejected >= before + 30, 20.0, "bad IMU messages refused")
    assert ff.imu_input.pending is None or np.isfinite(ff.imu_input.pending).all()
    err = capfd.readouterr().err
    assert 1 <= sum("IMU orientation" in ln for ln in err.splitlines()) <= 1, err[-2000:]
    # a good orientation (taken serialized, read in place) is the gravity the controller uses
    from servo_ff.dynamics.inverse_dynamics import gravity_from_imu

    good = Imu()
    good.header.frame_id = "trunk"
    quat = [0.0, math.sin(0.15), 0.0, math.cos(0.15)]  # 0.3 rad pitch
    good.orientation.x, good.orientation.y, good.orientation.z, good.orientation.w = quat
    g = gravity_from_imu(quat)

    def taken() -> bool:
        pub.publish(good)
        held = ff.imu_input.pending
        return (held is not None and np.array_equal(held, quat)) or np.allclose(ff.ctrl.gravity, g, atol=1e-12)

    wait_for(taken, 20.0, "the good IMU orientation taken")
    # bytes in another encoding (big-endian CDR, packed here) are read by rclpy instead
    import struct

    quat = [0.0, math.sin(-0.1), 0.0, math.cos(-0.1)]
    good = b"\x00\x00\x00\x00" + struct.pack(">iII", 3, 4, 2) + b"a\x00\x00\x00" + struct.pack(">4d", *quat)
    good += struct.pack(">9d3d9d3d9d", *[0.0] * 33)  # covariances, angular velocity, linear acceleration
    g = gravity_from_imu(quat)
    wait_for(taken, 20.0, "a big-endian IMU message taken")
    # an IMU that gives no orientation (REP-145: orientation_covariance[0] = -1) sends a quaternion that reads as
    # upright: refused, the last good orientation held
    absent = Imu()
    absent.orientation.w, absent.orientation_covariance[0] = 1.0, -1.0
    seen = ff.rejected
    wait_for(lambda: pub.publish(absent) or ff.rejected > seen, 20.0, "an IMU message without orientation refused")
    held = ff.imu_input.pending  # the last good one, pending, or consumed by a tick (its gravity is the controller's)
    assert np.array_equal(held, quat) if held is not None else np.allclose(ff.ctrl.gravity, g, atol=1e-12)


def test_an_imu_that_stops_is_reported_stale_and_its_orientation_held(ros, capfd):
    """The orientation in use grows older than ``imu_timeout`` (0.2 s) when imu/data stops: one warning line, WARN
    in the node's diagnostics with its age; it stays in use (the gravity direction is not reset); back to its age
    when orientations come again."""
    from diagnostic_msgs.msg import DiagnosticStatus
    from sensor_msgs.msg import Imu

    from servo_ff.dynamics.inverse_dynamics import gravity_from_imu

    h, sim, ff, client, states, desired = ros
    pub = client.create_publisher(Imu, "imu/data", 10)
    arrays = _ff_diagnostics(h, client)
    wait_for(lambda: pub.get_subscription_count(), 20.0, "imu subscriber")
    imu = Imu()
    quat = [math.sin(0.1), 0.0, 0.0, math.cos(0.1)]  # 0.2 rad roll
    imu.orientation.x, imu.orientation.y, imu.orientation.z, imu.orientation.w = quat

    def imu_value() -> str:
        return {kv.key: kv.value for kv in arrays[-1].status[0].values}["imu"] if arrays else ""

    n = len(arrays)
    wait_for(lambda: pub.publish(imu) or (len(arrays) > n and imu_value().endswith(" s old")), 30.0, "fresh")
    capfd.readouterr()  # the lines from here on: an earlier test's orientation, or a pause here, may have gone stale
    assert not imu_value().startswith("stale")
    wait_for(lambda: imu_value().startswith("stale"), 30.0, "the orientation reported stale")  # none published now
    st = arrays[-1].status[0]
    assert st.level == DiagnosticStatus.WARN and st.message.startswith("imu/data stale: "), st.message
    age = float(imu_value().split()[1])
    assert age > 0.2
    held = ff.imu_input.pending  # pending for a tick, or consumed: the controller's gravity is this orientation's
    assert np.array_equal(held, quat) if held is not None else np.allclose(ff.ctrl.gravity, gravity_from_imu(quat))
    n = len(arrays)
    wait_for(lambda: pub.publish(imu) or (len(arrays) > n and imu_value().endswith(" s old")), 30.0, "fresh again")
    err = capfd.readouterr().err
    assert sum("the last orientation is" in ln for ln in err.splitlines()) == 1, err[-2000:]
    assert "imu/data: orientations again" in err


def _pendulum_ff(h: RosHarness, **params) -> FeedForwardNode:
    """A feed-forward node on the two pendulums (low gain), ``params`` added by name, without a servo node."""
    base = {"urdf_path": str(ROOT / "urdf" / "pendulums2.urdf"), "joints": JOINTS, "kp": [KP_LOW], "servo": "mx64"}
    overrides = [Parameter(k, value=v) for k, v in {**base, "model": "m4", **params}.items()]
    return h.add(FeedForwardNode("servo_feedforward", **h.node_kwargs(), parameter_overrides=overrides))


def _commands_client(h: RosHarness, name: str) -> tuple:
    """A client node with the goals on servo/commands (a list of lists), and its /joint_states and
    feedforward/trajectory publishers once matched: (goals, joint_states publisher, trajectory publisher)."""
    from std_msgs.msg import Float64MultiArray

    client = h.make_node(name)
    goals: list[list[float]] = []
    client.create_subscription(Float64MultiArray, "servo/commands", lambda m: goals.append(list(m.data)), 10)
    js = client.create_publisher(JointState, "joint_states", 50)
    desired = client.create_publisher(JointTrajectory, "feedforward/trajectory", 10)
    wait_for(lambda: js.get_subscription_count() and desired.get_subscription_count(), 20.0, "discovery")
    return goals, js, desired


def _idle(ff: FeedForwardNode, client):
    """``client``'s /joint_states and feedforward/trajectory publishers once matched, and the state whose pose
    ``ff`` took (idle: no trajectory yet, /joint_states let go)."""
    js = client.create_publisher(JointState, "joint_states", 50)
    desired = client.create_publisher(JointTrajectory, "feedforward/trajectory", 10)
    wait_for(lambda: js.get_subscription_count() and desired.get_subscription_count(), 20.0, "discovery")
    state = JointState(name=JOINTS, position=[0.1, 0.2], velocity=[0.0, 0.0], effort=[0.0, 0.0])
    wait_for(lambda: js.publish(state) or ff._js_sub is None, 20.0, "the pose taken, /joint_states let go")
    return js, desired, state


def test_the_trajectory_ending_the_idle_ticks_at_once():
    """Idle (the pose taken from one /joint_states, no trajectory), the node sends a goal as soon as a trajectory
    arrives, without waiting for another /joint_states: a lockstep sim waits for that goal before it publishes one
    (issue 21: the OP3 mission stepped on its 1 s lockstep timeout there) — the pose being younger than
    ``pose_max_age`` (here an hour: the wall time between the pose and the trajectory is not the point)."""
    from std_msgs.msg import Float64MultiArray

    with RosHarness(salt=9) as h:
        ff = _pendulum_ff(h, pose_max_age=3600.0)
        client = h.make_node("ff_idle_client")
        goals: list[list[float]] = []
        client.create_subscription(Float64MultiArray, "servo/commands", lambda m: goals.append(list(m.data)), 10)
        js, desired, state = _idle(ff, client)
        assert ff.ticks == 0 and not goals
        desired.publish(hold([0.3, 0.2]))
        wait_for(lambda: goals, 20.0, "a goal without another /joint_states")
        assert ff.ticks == 1 and len(goals[0]) == 2 and np.isfinite(goals[0]).all()


def test_a_pose_older_than_pose_max_age_is_read_again_before_the_first_goal():
    """The pose taken, the node idles without listening; the joints then move (torque off, pushed) to [0.6, -0.4].
    A trajectory whose only point is 2 s ahead arrives after ``pose_max_age``: its first goal starts from the pose
    read again from the next /joint_states, not from the old one (before: [0.1, 0.2] at once, a snap back)."""
    from std_msgs.msg import Float64MultiArray

    with RosHarness(salt=77) as h:
        ff = _pendulum_ff(h, enabled=False, pose_max_age=0.0)  # goal = desired position; any pose is old
        client = h.make_node("ff_old_pose_client")
        goals: list[list[float]] = []
        client.create_subscription(Float64MultiArray, "servo/commands", lambda m: goals.append(list(m.data)), 10)
        js, desired, state = _idle(ff, client)
        moved = JointState(name=JOINTS, position=[0.6, -0.4])
        js.publish(moved)  # not listened to while idle
        far = JointTrajectory(joint_names=JOINTS, points=[
            JointTrajectoryPoint(positions=[1.0, -1.0], time_from_start=Duration(sec=2))])  # fmt: skip
        desired.publish(far)
        wait_for(lambda: ff._js_sub is not None, 20.0, "/joint_states listened to again")
        assert not goals and ff.traj is None  # no goal from the old pose
        # another servo node's message with pendulum_1 only, then one naming no goal joint: pendulum_2 is not read
        # again yet, no goal (before this was checked: [0.6, 0.2], the old 0.2 for a joint standing at -0.4)
        one = JointState(name=["pendulum_1"], position=[0.6])
        wait_for(lambda: js.publish(one) or ff.q_des[ff.index["pendulum_1"]] == 0.6, 20.0, "pendulum_1 read again")
        js.publish(JointState(name=["gripper"], position=[0.0]))  # taken before the next (one publisher, in order)
        two = JointState(name=["pendulum_2"], position=[-0.4])
        wait_for(lambda: js.publish(two) or goals, 20.0, "the first goal, from the pose read again")
        assert abs(goals[0][0] - 0.6) < 0.05 and abs(goals[0][1] + 0.4) < 0.05, goals[0]
        assert ff.traj is not None and ff.ticks >= 1


def test_a_supply_that_stops_is_reported_stale_and_its_voltage_held(capfd):
    """servo_supply's last good voltage grows older than ``supply_timeout`` when the topic stops: one warning line,
    WARN in the diagnostics with its age, the voltage still in use; its age again when voltages come again. Before
    the first, ``u_nominal`` is assumed and nothing is stale."""
    from diagnostic_msgs.msg import DiagnosticStatus

    with RosHarness(salt=75) as h:
        ff = _pendulum_ff(h, supply_timeout=0.3)
        client = h.make_node("ff_supply_client")
        arrays = _ff_diagnostics(h, client)
        pub = client.create_publisher(BatteryState, "servo_supply", 10)
        wait_for(lambda: pub.get_subscription_count(), 20.0, "servo_supply subscriber")

        def values() -> dict[str, str]:
            return {kv.key: kv.value for kv in arrays[-1].status[0].values} if arrays else {}

        wait_for(lambda: values().get("supply_age"), 30.0, "diagnostics")
        assert values()["supply_age"] == "none yet (u_nominal assumed)"
        assert arrays[-1].status[0].level == DiagnosticStatus.OK
        n = len(arrays)
        fresh = BatteryState(voltage=12.5)
        wait_for(
            lambda: pub.publish(fresh) or (len(arrays) > n and values()["supply_age"].endswith(" s old")),
            30.0,
            "a fresh voltage",
        )
        capfd.readouterr()  # the lines from here on (a pause in the wait above may have let it go stale once)
        assert not values()["supply_age"].startswith("stale")
        wait_for(lambda: values()["supply_age"].startswith("stale"), 30.0, "the voltage reported stale")
        st = arrays[-1].status[0]
        assert st.level == DiagnosticStatus.WARN and st.message.startswith("servo_supply stale: "), st.message
        assert float(values()["supply_age"].split()[1]) > 0.3
        assert ff.u_bat == 12.5  # held: the voltage the next tick takes
        n = len(arrays)
        wait_for(
            lambda: pub.publish(fresh) or (len(arrays) > n and values()["supply_age"].endswith(" s old")),
            30.0,
            "fresh again",
        )
        assert arrays[-1].status[0].level == DiagnosticStatus.OK, arrays[-1].status[0].message
    err = capfd.readouterr().err
    assert sum("servo_supply: the last voltage is" in ln for ln in err.splitlines()) == 1, err[-2000:]
    assert "servo_supply: voltages again" in err


def stamp(msg) -> tuple[int, int]:
    return msg.header.stamp.sec, msg.header.stamp.nanosec


def test_stamped_goals_name_the_state_they_answer():
    """``stamped_goals``: each goal is a JointState on ``servo/joint_command`` (the joints by name) whose
    header.stamp is the ``/joint_states`` it answers, so a lockstep sim matches goals to states; the goal that
    ends the idle answers no state (stamp 0); nothing on ``servo/commands``."""
    from std_msgs.msg import Float64MultiArray

    with RosHarness(salt=10) as h:
        ff = _pendulum_ff(h, stamped_goals=True, pose_max_age=3600.0)  # the idle ends at once (test above)
        client = h.make_node("ff_stamped_client")
        goals: list[JointState] = []
        arrays: list[Float64MultiArray] = []
        client.create_subscription(JointState, "servo/joint_command", goals.append, 50)
        client.create_subscription(Float64MultiArray, "servo/commands", arrays.append, 50)
        js, desired, state = _idle(ff, client)
        desired.publish(hold([0.3, 0.2]))
        wait_for(lambda: goals, 20.0, "the goal ending the idle")
        wait_for(lambda: js.get_subscription_count(), 20.0, "/joint_states listened to again")
        sent = [(3, 4_000_000 * k) for k in range(1, 30)]
        for sec, nanosec in sent:  # answered one by one: each goal names the state before the next is sent
            state.header.stamp.sec, state.header.stamp.nanosec = sec, nanosec
            # sent again until the goal naming it comes (any new goal would not do: a state sent twice is answered
            # twice, and the late second answer let the next state go unanswered, 40 ms missing once)
            wait_for(
                lambda s=(sec, nanosec): js.publish(state) or any(stamp(g) == s for g in goals),
                20.0,
                f"the answer to the state at {nanosec}",
            )
        stamps = [stamp(g) for g in goals]
        assert stamps[0] == (0, 0), stamps[:3]
        answered = stamps[1:]
        assert all(s in sent for s in answered) and sorted(set(answered)) == sent, answered
        assert all(list(g.name) == JOINTS and np.isfinite(g.position).all() and len(g.position) == 2 for g in goals)
        assert not arrays


def test_joint_states_read_in_place_by_layout_and_bytes_no_state_are_one_line(capfd):
    """/joint_states are taken serialized: a state in the previous one's layout is read in place (its stamp
    answered, a NaN position held on with the joint named), one in another layout is read by rclpy, and bytes
    that are no JointState are one throttled line naming the topic; the node answers on."""
    with RosHarness(salt=12) as h:
        ff = _pendulum_ff(h, stamped_goals=True, warn_throttle=30.0, pose_max_age=3600.0)
        client = h.make_node("ff_js_cdr_client")
        goals: list[JointState] = []
        client.create_subscription(JointState, "servo/joint_command", goals.append, 50)
        js, desired, state = _idle(ff, client)
        assert ff.q_des.tolist() == [0.1, 0.2]  # the pose, read by rclpy (the first layout)
        desired.publish(hold([0.3, 0.2]))
        wait_for(lambda: goals, 20.0, "the goal ending the idle")
        wait_for(lambda: js.get_subscription_count(), 20.0, "/joint_states listened to again")

        def answered(msg, nanosec: int) -> None:
            msg.header.stamp.sec, msg.header.stamp.nanosec = 7, nanosec
            wait_for(
                lambda: js.publish(msg) or any(g.header.stamp.nanosec == nanosec for g in goals),
                20.0,
                f"the answer to the state at {nanosec}",
            )

        answered(state, 1000)
        assert ff._js_reader.layout is not None and ff._js_reader.layout.joints == tuple(JOINTS)
        before = ff.rejected
        for n in range(5):
            seen = ff.rejected
            js.publish(b"\x00\x01\x00\x00garbage")
            wait_for(lambda s=seen: ff.rejected > s, 20.0, f"bytes {n} refused")
        nan = JointState(name=JOINTS, position=[math.nan, 0.2], velocity=[0.0, 0.0], effort=[0.0, 0.0])
        seen = ff.rejected
        js.publish(nan)  # once: a publish per poll could count two refusals (the race CI met: 7 for 6)
        wait_for(lambda: ff.rejected > seen, 20.0, "the NaN state held on")
        assert ff.rejected == before + 6 and ff._js_reader.layout.joints == tuple(JOINTS)
        reordered = JointState(name=JOINTS[::-1], position=[0.2, 0.1])  # another layout: rclpy, then in place
        answered(reordered, 2000)
        answered(reordered, 3000)
        assert ff._js_reader.layout.joints == tuple(JOINTS[::-1])
        answered(state, 4000)
        err = capfd.readouterr().err
        assert sum("bytes are not a serialized JointState" in ln for ln in err.splitlines()) == 1, err[-2000:]
        assert sum("pendulum_1 not read yet (NaN)" in ln for ln in err.splitlines()) == 1, err[-2000:]
        assert "Traceback" not in err


def test_the_pose_of_every_goal_joint_is_read_before_a_goal_and_a_far_point_is_reached_in_time():
    """Two servo nodes publish /joint_states, each its own joint: the node listens until both are read (before: it
    kept the first message's pose, pendulum_2's desired 0 rad, and commanded it there). A trajectory whose only
    point is 3 s ahead starts from that pose (before: its point was the first goal)."""

    with RosHarness(salt=76) as h:
        ff = _pendulum_ff(h, enabled=False)  # goal = desired position: read directly
        goals, js, desired = _commands_client(h, "ff_pose_client")
        one = JointState(name=["pendulum_1"], position=[0.3])
        wait_for(lambda: js.publish(one) or math.isfinite(ff.q_des[ff.index["pendulum_1"]]), 20.0, "pendulum_1 read")
        assert ff._js_sub is not None  # still listening: pendulum_2 not read
        desired.publish(JointTrajectory(joint_names=["pendulum_1"], points=[
            JointTrajectoryPoint(positions=[0.35], time_from_start=Duration())]))  # fmt: skip
        said = "a tick: no goal, said"  # the error kept as seen: the 1 s diagnostics timer clears last_error
        why = wait_for(lambda: js.publish(one) or ("not read yet" in ff.last_error and ff.last_error), 20.0, said)
        assert not goals and "pendulum_2" in why
        two = JointState(name=["pendulum_2"], position=[0.8])  # the other servo node's state
        wait_for(lambda: js.publish(two) or goals, 20.0, "a goal once both are read")
        np.testing.assert_allclose(goals[0], [0.35, 0.8])  # pendulum_2 where it stands, not 0 rad
        far = JointTrajectory(joint_names=JOINTS, points=[
            JointTrajectoryPoint(positions=[1.5, -1.5], time_from_start=Duration(sec=3))])  # fmt: skip
        n = len(goals)
        desired.publish(far)
        wait_for(lambda: js.publish(JointState(name=JOINTS, position=[0.35, 0.8])) or len(goals) > n, 20.0, "a goal")
        assert abs(goals[n][0] - 0.35) < 0.1 and abs(goals[n][1] - 0.8) < 0.1, goals[n]  # not [1.5, -1.5] at once


def test_kp_is_one_per_goal_joint_when_the_goals_are_a_subset_of_the_urdf():
    """so101: goals for 2 of its 6 joints. Before, kp was checked against the URDF's joint count at start and the
    goal joints' count at run time: [4, 6] could not start the node, and no per-joint kp was ever accepted."""
    with RosHarness(salt=43) as h:
        urdf, goals = str(ROOT / "urdf" / "so101.urdf"), ["shoulder_pan", "shoulder_lift"]
        ov = [Parameter("urdf_path", value=urdf), Parameter("joints", value=goals), Parameter("kp", value=[4.0, 6.0])]
        ff = h.add(FeedForwardNode("servo_feedforward", **h.node_kwargs(), parameter_overrides=ov))
        assert ff.kp.tolist() == [4.0, 6.0]
        assert ff.set_parameters([Parameter("kp", value=[5.0, 7.0])])[0].successful
        assert ff.kp.tolist() == [5.0, 7.0]
        r = ff.set_parameters([Parameter("kp", value=[4.0] * 6)])[0]
        assert not r.successful and "kp" in r.reason and "6" in r.reason, r.reason


def test_servo_gains_land_on_their_named_joints_whatever_the_order_of_the_two_nodes():
    """The servo node lists the pendulums the other way round from the feed-forward node: each feed-forward gain is
    set on the servo joint of its name. Before, the feed-forward list was set as it was: [10, 20], pendulum_1's
    gain on pendulum_2 and the other way round."""
    with RosHarness(salt=26) as h:
        sim = sim_node(h, joints=["pendulum_2", "pendulum_1"], rate_hz=50.0)
        ff = _pendulum_ff(h, kp=[10.0, 20.0])  # joints [pendulum_1, pendulum_2]
        wait_for(lambda: ff.gains.sets, 30.0, "the servo node's answer")
        assert list(sim.get_parameter("kp").value) == [20.0, 10.0]
        np.testing.assert_allclose(sim.sim.kp, [20.0, 10.0])  # the gain in force, servo order
        assert ff.set_parameters([Parameter("kp", value=[11.0, 21.0])])[0].successful  # a change: by name too
        wait_for(lambda: list(sim.get_parameter("kp").value) == [21.0, 11.0], 30.0, "the new gain, by name")


def test_a_feedforward_node_driving_a_subset_sets_only_its_joints_gains():
    """The feed-forward node drives pendulum_1 of the servo node's two: its one value is set on pendulum_1 only,
    pendulum_2 keeps its 30. Before, the one value was set as the servo node's kp: both joints 10."""
    with RosHarness(salt=27) as h:
        sim = sim_node(h, joints=JOINTS, rate_hz=50.0, kp=[30.0, 30.0])
        ff = _pendulum_ff(h, joints=["pendulum_1"], kp=[10.0])
        wait_for(lambda: ff.gains.sets, 30.0, "the servo node's answer")
        assert list(sim.get_parameter("kp").value) == [10.0, 30.0]
        np.testing.assert_allclose(sim.sim.kp, [10.0, 30.0])
        assert sim.set_parameters([Parameter("kp", value=[30.0, 40.0])])[0].successful  # set on the servo node
        assert ff.set_parameters([Parameter("kp", value=[12.0])])[0].successful
        kept = [12.0, 40.0]  # pendulum_2's present gain kept
        wait_for(lambda: list(sim.get_parameter("kp").value) == kept, 30.0, "the new gain on pendulum_1 only")


def test_a_feedforward_joint_the_servo_node_lacks_is_one_warning_and_the_others_are_set(capfd):
    """The servo node has pendulum_2 only: the feed-forward node's pendulum_2 gain is set, and pendulum_1 is one
    warning naming it and the servo node (not again for a new gain). Before, [10, 20] went to a servo node of one
    joint: refused, no gain set."""
    with RosHarness(salt=28) as h:
        sim = sim_node(h, joints=["pendulum_2"], rate_hz=50.0, kp=[30.0])
        ff = _pendulum_ff(h, kp=[10.0, 20.0])
        wait_for(lambda: ff.gains.sets, 30.0, "the servo node's answer")
        assert list(sim.get_parameter("kp").value) == [20.0]
        assert ff.set_parameters([Parameter("kp", value=[11.0, 21.0])])[0].successful
        wait_for(lambda: ff.gains.sets >= 2 and not ff.gains.pending, 30.0, "the new gain set and read back")
        assert list(sim.get_parameter("kp").value) == [21.0]
        err = capfd.readouterr().err
        lacking = [ln for ln in err.splitlines() if "has no joint" in ln]
        assert len(lacking) == 1, lacking
        assert "pendulum_1" in lacking[0] and f"{h.ns}/servo_sim" in lacking[0], lacking
        assert "it has no pendulum_1" in ff.gains.state


def test_merged_kp_matches_by_name_and_takes_one_value_for_a_servo_node_naming_no_joints():
    """The list set on the servo node: its gains with the client's replaced by name; a servo node naming no joints
    (a MuJoCo sim's ``joints: ['']``, the OP3 mission's) takes one client value for all (as before the names were
    matched: the mission's gain), and refuses per-joint values it cannot match."""
    from servo_ff.ros.servo_gain import merged_kp

    assert merged_kp(["b", "a", "c"], [5.0, 6.0, 7.0], {"a": 1.0, "x": 2.0}) == ([5.0, 1.0, 7.0], ["x"])
    assert merged_kp(["a", "b"], [5.0], {"a": 5.0}) == ([5.0], [])  # single stays single while all equal
    assert merged_kp([], [32.0], {"a": 8.0, "b": 8.0}) == ([8.0], [])
    with pytest.raises(ValueError, match="names no joints"):
        merged_kp([], [32.0], {"a": 8.0, "b": 9.0})


def test_a_trajectory_before_any_pose_waits_and_a_refused_one_does_not_replace_it():
    """A trajectory (its only point 2 s ahead) that arrives before any /joint_states waits for the pose (before:
    refused, 'not read on /joint_states yet', and lost); a NaN trajectory arriving meanwhile is refused and leaves
    it waiting (before this was checked it replaced it: no goal ever)."""

    with RosHarness(salt=78) as h:
        ff = _pendulum_ff(h, enabled=False)  # goal = desired position
        goals, js, desired = _commands_client(h, "ff_early_client")
        far = JointTrajectory(joint_names=JOINTS, points=[
            JointTrajectoryPoint(positions=[1.0, -1.0], time_from_start=Duration(sec=2))])  # fmt: skip
        desired.publish(far)
        wait_for(lambda: ff.pose.waiting is not None, 20.0, "the trajectory waiting for the pose")
        rejected = ff.rejected
        bad = JointTrajectory(joint_names=JOINTS, points=[
            JointTrajectoryPoint(positions=[math.nan, 0.0], time_from_start=Duration(sec=1))])  # fmt: skip
        desired.publish(bad)
        wait_for(lambda: ff.rejected > rejected, 20.0, "the NaN trajectory refused")
        state = JointState(name=JOINTS, position=[0.3, -0.2])
        wait_for(lambda: js.publish(state) or goals, 20.0, "the first goal")
        assert abs(goals[0][0] - 0.3) < 0.05 and abs(goals[0][1] + 0.2) < 0.05, goals[0]  # from the pose read
        wait_for(lambda: js.publish(state) or goals[-1][0] > 0.5, 20.0, "on its way to the waiting trajectory's point")


def test_a_feedforward_node_on_sim_time_reports_while_its_clock_stands():
    """Its status goes out on the steady clock: on sim time with no /clock (a simulation stopped or not started) it
    still reports, and WARNs that its clock stands (before: on the node clock, no status at all — a stopped
    simulation left the last one, perhaps "ok", standing; the review of the first version: "ok" every second with
    ages frozen at the last clock)."""
    from diagnostic_msgs.msg import DiagnosticStatus

    with RosHarness(salt=71) as h:
        ff = _pendulum_ff(h, use_sim_time=True)
        arrays = _ff_diagnostics(h, h.make_node("ff_sim_time_probe"))

        def warned():
            return [s for a in arrays for s in a.status if s.level == DiagnosticStatus.WARN]

        st = wait_for(warned, 20.0, "a WARN status with no /clock")[0]
        assert ff.get_clock().now().nanoseconds == 0  # no /clock: the node's time stands at 0
        values = {kv.key: kv.value for kv in st.values}
        assert st.message.startswith("no /clock yet: ages as of its last reading") and values["ticks"] == "0", st
        assert values["imu"].startswith("none yet") and values["supply_age"].startswith("none yet"), values


def test_a_clock_stall_is_seen_between_two_readings_and_no_clock_from_the_start():
    from servo_ff.ros.clock_stall import ClockStall

    watch = ClockStall()
    assert watch.standing(0) >= 0.0  # no clock yet: standing since the watch began
    assert watch.standing(5_000) is None  # it moved
    assert watch.standing(6_000) is None
    assert watch.standing(6_000) is not None  # it stands at 6 µs
    assert watch.standing(7_000) is None
