"""Safe to switch on: servo_hardware_node on a virtual Dynamixel bus (pty) with pendulum loads, driven through the
lifecycle services over DDS. Activate holds a fresh reading (a joint that fell with torque off is not snapped
back; the goal written is read from the bus's truth record), inactive reads and publishes at OK, ``on_exit``
hold / torque_off, and a servo missing at configure (``missing_ids`` fail / continue)."""

from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np
import pytest
from nodes_harness import RosHarness, wait_for

pytest.importorskip("rclpy")
pytest.importorskip("dynamixel_sdk")
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus  # noqa: E402
from lifecycle_msgs.msg import Transition  # noqa: E402
from lifecycle_msgs.srv import ChangeState, GetState  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

from servo_ff.dynamixel import control_table as ct  # noqa: E402
from servo_ff.dynamixel.bus_types import GAIN_GOAL_DATA_ADDR  # noqa: E402
from servo_ff.dynamixel.faults import INTACT  # noqa: E402
from servo_ff.dynamixel.virtual_bus import ServoLoad, VirtualBus  # noqa: E402
from servo_ff.nodes.hardware_node import HardwareNode  # noqa: E402

JOINTS, IDS = ["hip", "knee"], [1, 2]
UP = [1.2, -1.0]  # rad: held there with torque on, each falls ≈ 0.8–1.2 rad with torque off (0.25 kg at 0.1 m)
COUNT = ct.RAD_PER_COUNT  # rad per position count


def node_params(link, **extra) -> list[Parameter]:
    values = {
        "joints": JOINTS,
        "ids": IDS,
        "port": str(link),
        "servo": "mx106",
        "rate_hz": 100.0,
        "latency_timer_ms": 1.0,
        "timeout_ms": 20.0,
        "retries": 3,
        "position_min": [-2.0],
        "position_max": [2.0],
        "kp": [32.0],
        "diagnostics_period": 0.2,
        "health_period": 0.1,
        "reconnect_period": 0.2,
        "stale_cycles": 1000,
        "max_reply_age": 30.0,
        **extra,
    }
    return [Parameter(k, value=v) for k, v in values.items()]


class Rig:
    """A virtual bus (truth record on), a harness and a client listening to joint_states and diagnostics."""

    def __init__(self, tmp_path, salt: int, loads):
        self.link = tmp_path / "ttyDXL"
        self.bus = VirtualBus(ids=IDS, model="mx106", loads=loads, link=str(self.link), truth=True)
        self.bus.start()
        self.h = RosHarness(salt=salt)
        self.client = self.h.make_node("safety_client")
        self.states: list[JointState] = []
        self.diags: list[DiagnosticArray] = []
        self.client.create_subscription(JointState, "joint_states", self.states.append, 100)
        self.client.create_subscription(DiagnosticArray, "/diagnostics", self.diags.append, 100)
        self.pub = self.client.create_publisher(Float64MultiArray, "servo/commands", 10)
        self.pub_names = self.client.create_publisher(JointState, "servo/joint_command", 10)

    def node(self, name: str, **extra) -> HardwareNode:
        kw = self.h.node_kwargs()
        return self.h.add(HardwareNode(name, **kw, parameter_overrides=node_params(self.link, **extra)))

    def change(self, name: str, transition: int) -> bool:
        cli = self.client.create_client(ChangeState, f"{name}/change_state")
        return self.h.call(cli, ChangeState.Request(transition=Transition(id=transition)), timeout=15.0).success

    def state_of(self, name: str) -> str:
        cli = self.client.create_client(GetState, f"{name}/get_state")
        return self.h.call(cli, GetState.Request()).current_state.label

    def torque(self) -> np.ndarray:
        return self.bus.mem[:, ct.ADDR_TORQUE_ENABLE].copy()

    def physics(self) -> dict[str, np.ndarray]:
        return self.bus.snapshot()

    def truth(self) -> dict[str, np.ndarray]:
        with self.bus._lock:
            return self.bus.truth.arrays()

    def status(self, joint: str):
        for d in reversed(self.diags):
            for s in d.status:
                if s.name.endswith(f": {joint}"):
                    return s
        return None

    def node_by_name(self, name: str) -> HardwareNode:
        return next(n for n in self.h.nodes if n.get_name() == name)

    def close(self) -> None:
        self.h.shutdown()
        self.bus.stop()


def hold_goal_written_after(tr: dict[str, np.ndarray], t_request: float, dxl_id: int) -> tuple[int, int, float]:
    """From the bus's truth record: (goal counts of the first goal write to ``dxl_id`` after ``t_request``, the
    position counts of the last intact state reply of ``dxl_id`` sent before that write, when that reply was sent)."""
    w = np.flatnonzero((tr["wr_t"] > t_request) & (tr["wr_id"] == dxl_id) & (tr["wr_addr"] == GAIN_GOAL_DATA_ADDR))
    assert w.size, f"no goal written to id {dxl_id} after the request"
    w = w[0]
    goal = int.from_bytes(bytes(tr["wr_data"][w][2:6]), "little", signed=True)  # P gain (2 bytes), goal (4)
    state_reads = tr["rd_addr"][tr["rp_read"]] == ct.STATE_BLOCK[0]
    r = np.flatnonzero(state_reads & (tr["rp_id"] == dxl_id) & (tr["rp_fate"] == INTACT) & (tr["rp_t"] < tr["wr_t"][w]))
    assert r.size, f"no state reply of id {dxl_id} before the goal write"
    r = r[-1]
    pos = int.from_bytes(bytes(tr["rp_data"][r][6:10]), "little", signed=True)  # current (2), velocity (4), pos
    return goal, pos, float(tr["rp_t"][r])


def fallen_at_rest(rig: Rig, start: np.ndarray, by: float = 0.3):
    """Wait until every joint fell more than ``by`` rad from ``start`` and stopped; its resting position."""

    def rest():
        s = rig.physics()
        return [s["theta"]] if (np.abs(s["theta"] - start) > by).all() and (np.abs(s["dtheta"]) < 1e-3).all() else None

    return wait_for(rest, 20.0, "the joints to fall with torque off and come to rest")[0]


def assert_holds_fresh_reading(rig: Rig, t_request: float, before: np.ndarray) -> None:
    """The goal written on activate is the reading taken after the request (within one count), not ``before``."""
    tr = rig.truth()
    for k, i in enumerate(IDS):
        goal, pos, t_reply = hold_goal_written_after(tr, t_request, i)
        assert t_reply > t_request, f"id {i}: the goal written on activate comes from a reading older than activate"
        assert abs(goal - pos) <= 1, f"id {i}: goal {goal} counts != fresh reading {pos} counts"
        fell = abs(float(ct.counts_to_rad(goal)) - before[k])  # rad between the old reading and the goal
        assert fell > 0.3, f"id {i}: goal {goal} is where the joint was before it fell"


@pytest.fixture(scope="module")
def rig(tmp_path_factory):
    r = Rig(tmp_path_factory.mktemp("safety"), 12, ServoLoad.pendulum(0.25, 0.1))
    yield r
    r.close()


@pytest.fixture
def managed(rig):
    """A node under a lifecycle manager (no autostart), ``on_exit=torque_off``; destroyed after the test."""
    node = rig.node("servo_safe", autostart=False, on_exit="torque_off")
    yield node
    if node in rig.h.nodes:
        rig.h.remove(node)


def lift(rig: Rig, node: HardwareNode | None = None) -> None:
    """The joints held UP with torque on (by ``node``, active, or by a node that exits with on_exit=hold)."""
    helper = node or rig.node("servo_lift", on_exit="hold")
    servos = sum(isinstance(n, HardwareNode) for n in rig.h.nodes)
    wait_for(lambda: helper.active and rig.pub.get_subscription_count() >= servos, 15.0, "a node active")
    rig.pub.publish(Float64MultiArray(data=UP))
    wait_for(lambda: np.allclose(rig.physics()["theta"], UP, atol=0.03), 15.0, "the joints up")
    if node is None:
        rig.h.remove(helper)


def test_on_exit_hold_leaves_torque_on_at_the_goal(rig):
    lift(rig)  # its node was destroyed as SIGINT / process exit does (spin_node destroys the node)
    assert (rig.torque() == 1).all()
    np.testing.assert_allclose(rig.bus.goal, UP, atol=2 * COUNT)
    n = rig.bus.stats.physics_steps
    wait_for(lambda: rig.bus.stats.physics_steps > n + 200, 10.0, "physics to run on")
    np.testing.assert_allclose(rig.physics()["theta"], UP, atol=0.03)  # still held up


def test_first_activate_after_configure_holds_the_fresh_reading(rig, managed):
    """Configure turns torque off (the joints fall from UP); the first activate holds where they are now."""
    lift(rig)
    assert rig.change("servo_safe", Transition.TRANSITION_CONFIGURE)
    assert (rig.torque() == 0).all()
    at_configure = managed.gate.goal.copy()  # held at configure (≈ UP: torque had just gone off)
    rest = fallen_at_rest(rig, np.array(UP))
    t_request = time.monotonic()
    assert rig.change("servo_safe", Transition.TRANSITION_ACTIVATE)
    assert (rig.torque() == 1).all()
    assert_holds_fresh_reading(rig, t_request, at_configure)
    n = rig.bus.stats.physics_steps
    wait_for(lambda: rig.bus.stats.physics_steps > n + 200, 10.0, "physics to run on")
    np.testing.assert_allclose(rig.physics()["theta"], rest, atol=0.02)  # held where it lay: no snap back


def test_reactivate_after_deactivate_holds_where_the_joint_fell(rig, managed):
    assert rig.change("servo_safe", Transition.TRANSITION_CONFIGURE)
    assert rig.change("servo_safe", Transition.TRANSITION_ACTIVATE)
    lift(rig, managed)
    assert rig.change("servo_safe", Transition.TRANSITION_DEACTIVATE)
    assert (rig.torque() == 0).all()
    at_deactivate = managed.gate.goal.copy()
    rest = fallen_at_rest(rig, np.array(UP))
    t_request = time.monotonic()
    assert rig.change("servo_safe", Transition.TRANSITION_ACTIVATE)
    assert_holds_fresh_reading(rig, t_request, at_deactivate)
    n = rig.bus.stats.physics_steps
    wait_for(lambda: rig.bus.stats.physics_steps > n + 200, 10.0, "physics to run on")
    np.testing.assert_allclose(rig.physics()["theta"], rest, atol=0.02)


def test_inactive_reads_and_publishes_at_ok_and_refuses_goals(rig, managed):
    assert rig.change("servo_safe", Transition.TRANSITION_CONFIGURE)
    assert (rig.torque() == 0).all() and rig.state_of("servo_safe") == "inactive"
    n = len(rig.states)
    wait_for(lambda: len(rig.states) > n + 10, 10.0, "joint_states while inactive")
    np.testing.assert_allclose(rig.states[-1].position, rig.physics()["theta"], atol=0.01)
    m = len(rig.diags)

    def inactive_ok():  # a WARN for a reply timed out under load is allowed, never ERROR
        s = [rig.status(j) for j in JOINTS]
        return all(x is not None and x.level == DiagnosticStatus.OK and "inactive" in x.message for x in s)

    wait_for(inactive_ok, 10.0, "diagnostics OK 'inactive' for every servo")
    errors = [x.message for d in rig.diags[m:] for x in d.status if x.level > DiagnosticStatus.WARN]
    assert not errors, errors
    goal_register = rig.bus.goal.copy()
    rejected = managed.gate.rejected
    rig.pub.publish(Float64MultiArray(data=[0.5, 0.5]))
    wait_for(lambda: managed.gate.rejected > rejected, 5.0, "goal refused while inactive")
    assert "not active" in managed.gate.last_reason
    np.testing.assert_array_equal(rig.bus.goal, goal_register)
    assert (rig.torque() == 0).all()


def test_on_exit_torque_off_holds_then_releases(rig, managed):
    assert rig.change("servo_safe", Transition.TRANSITION_CONFIGURE)
    assert rig.change("servo_safe", Transition.TRANSITION_ACTIVATE)
    lift(rig, managed)
    rig.h.remove(managed)  # as SIGINT / process exit (spin_node destroys the node)
    assert (rig.torque() == 0).all()
    np.testing.assert_allclose(rig.bus.goal, UP, atol=0.03)  # the present position was held first
    fallen_at_rest(rig, np.array(UP))  # released: it falls


# ---------------------------------------------------------------------------------------------- missing at configure
@pytest.fixture(scope="module")
def rig2(tmp_path_factory):
    """The knee (id 2) without load (it stays where it is put) and silent at start-up."""
    r = Rig(tmp_path_factory.mktemp("missing"), 13, {1: ServoLoad.pendulum(0.25, 0.1), 2: ServoLoad()})
    r.bus.set_silent(2, True)
    yield r
    r.close()


def test_missing_ids_fail_refuses_configure_with_one_clear_reason(rig2):
    node = rig2.node("servo_strict", autostart=False)
    try:
        assert not rig2.change("servo_strict", Transition.TRANSITION_CONFIGURE)
        assert rig2.state_of("servo_strict") == "unconfigured" and node.bus is None
        reason = node.disconnect_reason
        assert "joint 'knee' (id 2) not answering" in reason and "missing_ids=fail" in reason, reason
        assert (rig2.torque() == 0).all() and not rig2.states
    finally:
        rig2.h.remove(node)


def test_missing_ids_continue_publishes_nan_refuses_goals_and_joins_at_its_fresh_position(rig2):
    node = rig2.node("servo_lenient", missing_ids="continue", on_exit="torque_off")
    try:
        wait_for(lambda: node.active and rig2.pub.get_subscription_count() and rig2.states, 15.0, "active with states")
        # the knee: NaN until its first reading, the hip read; torque on the hip only
        m = rig2.states[-1]
        assert list(m.name) == JOINTS and math.isfinite(m.position[0]) and math.isnan(m.position[1])
        assert list(rig2.torque()) == [1, 0]
        # flagged in the diagnostics, naming joint and id
        wait_for(lambda: rig2.status("knee") is not None and rig2.status("hip") is not None, 10.0, "diagnostics")
        s = rig2.status("knee")
        assert s.level == DiagnosticStatus.ERROR and "joint 'knee' (id 2)" in s.message and "missing" in s.message
        wait_for(lambda: rig2.status("hip").level == DiagnosticStatus.OK, 10.0, "the hip OK")
        # goals naming the knee are refused; goals for the hip alone are followed
        rejected = node.gate.rejected
        rig2.pub.publish(Float64MultiArray(data=[0.3, 0.3]))
        wait_for(lambda: node.gate.rejected > rejected, 5.0, "goal naming the knee refused")
        assert "knee" in node.gate.last_reason and "not read yet" in node.gate.last_reason
        wait_for(lambda: rig2.pub_names.get_subscription_count(), 10.0, "joint_command subscriber")
        rig2.pub_names.publish(JointState(name=["hip"], position=[0.4]))
        wait_for(lambda: abs(rig2.physics()["theta"][0] - 0.4) < 0.03, 10.0, "the hip at its goal")
        # moved by hand while silent, then it answers: it joins where it is, torque on there
        with rig2.bus._lock:
            theta = rig2.bus.servos.bank.theta.copy()
            theta[1] = 0.7
            rig2.bus.servos.bank.theta = theta
        t_back = time.monotonic()
        rig2.bus.set_silent(2, False)
        wait_for(lambda: math.isfinite(rig2.states[-1].position[1]), 10.0, "the knee in joint_states")
        wait_for(lambda: rig2.torque()[1] == 1, 5.0, "torque on the knee")
        goal, pos, t_reply = hold_goal_written_after(rig2.truth(), t_back, 2)
        assert t_reply > t_back and abs(goal - pos) <= 1, (goal, pos)
        assert abs(float(ct.counts_to_rad(goal)) - 0.7) < 0.01
        np.testing.assert_allclose(rig2.states[-1].position[1], 0.7, atol=0.01)
        wait_for(lambda: rig2.status("knee").level == DiagnosticStatus.OK, 10.0, "the knee OK once joined")
        rig2.pub.publish(Float64MultiArray(data=[0.4, 0.5]))  # now a goal naming it is followed
        wait_for(lambda: abs(rig2.physics()["theta"][1] - 0.5) < 0.03, 10.0, "the knee at its goal")
    finally:
        rig2.h.remove(node)


# ---------------------------------------------------------------------------------------------- feed-forward on NaN
def test_feedforward_holds_while_a_joint_is_not_read_yet():
    """/joint_states with a joint at NaN (not read yet): the feed-forward node sends no goal, counts and names it;
    once every joint is read it runs."""
    pytest.importorskip("servo_ff.dynamics.feedforward")
    from builtin_interfaces.msg import Duration
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from servo_ff.nodes.feedforward_node import FeedForwardNode

    joints = ["pendulum_1", "pendulum_2"]
    urdf = Path(__file__).resolve().parents[1] / "urdf" / "pendulums2.urdf"
    with RosHarness(salt=14) as h:
        ff = h.add(
            FeedForwardNode(
                "servo_feedforward",
                **h.node_kwargs(),
                parameter_overrides=[
                    Parameter("urdf_path", value=str(urdf)),
                    Parameter("joints", value=joints),
                    Parameter("servo", value="mx64"),
                    Parameter("model", value="m4"),
                    Parameter("warn_throttle", value=30.0),
                ],
            )
        )
        c = h.make_node("ff_nan_client")
        goals: list[Float64MultiArray] = []
        c.create_subscription(Float64MultiArray, "servo/commands", goals.append, 50)
        states = c.create_publisher(JointState, "joint_states", 50)
        desired = c.create_publisher(JointTrajectory, "feedforward/trajectory", 10)
        wait_for(lambda: desired.get_subscription_count() and states.get_subscription_count(), 10.0, "discovery")
        point = JointTrajectoryPoint(
            positions=[0.3, 0.2], velocities=[0.0, 0.0], accelerations=[0.0, 0.0], time_from_start=Duration()
        )
        desired.publish(JointTrajectory(joint_names=joints, points=[point]))
        wait_for(lambda: ff.traj is not None, 10.0, "the desired trajectory")
        before = ff.rejected

        def unread():
            states.publish(JointState(name=joints, position=[0.1, math.nan], velocity=[0.0, 0.0], effort=[0.0, 0.0]))
            return ff.rejected - before >= 10

        wait_for(unread, 10.0, "the NaN states seen")
        assert ff.ticks == 0 and not goals
        assert "pendulum_2" in ff.last_error and "pendulum_1" not in ff.last_error, ff.last_error

        def run():
            states.publish(JointState(name=joints, position=[0.1, 0.2], velocity=[0.0, 0.0], effort=[0.0, 0.0]))
            return goals

        wait_for(run, 10.0, "goals once every joint is read")


# ---------------------------------------------------------------------------------------------- other protocols
@pytest.mark.parametrize("protocol", ["dxl1", "sts"])
def test_reactivate_holds_where_the_joint_fell_on_protocol(tmp_path, protocol):
    """Dynamixel 1.0 and Feetech STS go through the same node (make_bus): inactive publishes, and activate after
    a fall writes where the joints lie (the Goal Position registers), torque off at exit with on_exit=torque_off."""
    load = ServoLoad.pendulum(0.25, 0.1)
    link = tmp_path / "tty"
    if protocol == "sts":
        pytest.importorskip("scservo_sdk")
        from servo_ff.feetech.virtual_bus import StsVirtualBus

        bus, servo, kp = StsVirtualBus(ids=IDS, loads=load, link=str(link), dt_max=0.002), "sts3215", 20.0
    else:
        from servo_ff.dynamixel.virtual_p1 import VirtualBus1

        bus, servo, kp = VirtualBus1(ids=IDS, model="mx106-p1", loads=load, link=str(link)), "mx106-p1", 24.0
    bus.start()
    h = RosHarness(salt=17 if protocol == "sts" else 18)
    try:
        extra = {"protocol": protocol, "servo": servo, "kp": [kp], "on_exit": "torque_off"}
        node = h.add(HardwareNode("servo_hw", **h.node_kwargs(), parameter_overrides=node_params(link, **extra)))
        c = h.make_node("proto_client")
        states: list[JointState] = []
        c.create_subscription(JointState, "joint_states", states.append, 100)
        pub = c.create_publisher(Float64MultiArray, "servo/commands", 10)
        wait_for(lambda: node.active and pub.get_subscription_count(), 15.0, "the node active")
        pub.publish(Float64MultiArray(data=UP))
        wait_for(lambda: np.allclose(bus.snapshot()["theta"], UP, atol=0.05), 15.0, "the joints up")
        change = c.create_client(ChangeState, "servo_hw/change_state")
        deactivate = ChangeState.Request(transition=Transition(id=Transition.TRANSITION_DEACTIVATE))
        assert h.call(change, deactivate, timeout=15.0).success
        t_deactivated = time.time()
        assert (bus.enable == 0).all()
        rest = wait_for(
            lambda: (
                [s["theta"]]
                if (np.abs((s := bus.snapshot())["theta"] - UP) > 0.3).all() and (np.abs(s["dtheta"]) < 1e-3).all()
                else None
            ),
            20.0,
            "the joints to fall and rest",
        )[0]
        t_inactive = time.time()  # joint_states stamps: the node's (system) clock
        activate = ChangeState.Request(transition=Transition(id=Transition.TRANSITION_ACTIVATE))
        assert h.call(change, activate, timeout=15.0).success
        assert (bus.enable == 1).all()
        np.testing.assert_allclose(bus.goal, rest, atol=2 * COUNT)  # held where they lie, not pulled back up

        def published_while_inactive():  # the fall took ≥ 0.5 s at 100 Hz
            return sum(t_deactivated < m.header.stamp.sec + m.header.stamp.nanosec * 1e-9 < t_inactive for m in states)

        wait_for(lambda: published_while_inactive() > 10, 10.0, "joint_states published while inactive")
        h.remove(node)
        assert (bus.enable == 0).all()
    finally:
        h.shutdown()
        bus.stop()


# ---------------------------------------------------------------------------------------------- SIGINT
@pytest.mark.parametrize("policy,torque_after", [("torque_off", 0), ("hold", 1)])
def test_sigint_applies_on_exit(tmp_path, policy, torque_after):
    """``python -m servo_ff.nodes.hardware_node`` (as ros2 run / launch start it), active on the virtual bus, then
    SIGINT: torque as ``on_exit`` says once the process has exited."""
    import os
    import signal
    import subprocess
    import sys

    from servo_ff.nodes.harness import domain_id

    link = tmp_path / "ttyDXL"
    bus = VirtualBus(ids=IDS, model="mx106", loads=ServoLoad.pendulum(0.25, 0.1), link=str(link))
    bus.start()
    params = {
        "joints": "[hip,knee]",
        "ids": "[1,2]",
        "port": str(link),
        "latency_timer_ms": "1.0",
        "rate_hz": "50.0",
        "on_exit": policy,
    }
    args = [a for k, v in params.items() for a in ("-p", f"{k}:={v}")]
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain_id(15)), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1] / "src") + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.Popen(
        [sys.executable, "-m", "servo_ff.nodes.hardware_node", "--ros-args", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(lambda: (bus.mem[:, ct.ADDR_TORQUE_ENABLE] == 1).all() or proc.poll() is not None, 60.0, "torque on")
        assert proc.poll() is None, proc.stderr.read()
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
        err = proc.stderr.read()
        assert f"on_exit={policy}" in err, err
        assert (bus.mem[:, ct.ADDR_TORQUE_ENABLE] == torque_after).all(), err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        bus.stop()
