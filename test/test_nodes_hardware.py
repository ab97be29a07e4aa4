"""servo_hardware_node against the virtual Dynamixel bus on a pty (dynamixel-sdk on both sides of a real
serial byte stream): joint states, goals, torque, diagnostics, hardware error + reboot, disconnect/reconnect."""

from __future__ import annotations

import math

import numpy as np
import pytest
from nodes_harness import RosHarness, hardware_on_virtual_bus, rosout_matched, wait_for

pytest.importorskip("rclpy")
pytest.importorskip("dynamixel_sdk")
pytest.importorskip("servo_ff.bus.virtual_bus", reason="Dynamixel core servo_ff.bus.dynamixel not merged yet")
from diagnostic_msgs.msg import DiagnosticStatus  # noqa: E402
from rcl_interfaces.msg import Log  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import BatteryState, JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from std_srvs.srv import SetBool, Trigger  # noqa: E402

from servo_ff.bus import control_table as ct  # noqa: E402
from servo_ff.bus.virtual_bus import ServoLoad, VirtualBus  # noqa: E402
from servo_ff.nodes.hardware_node import HardwareNode  # noqa: E402

JOINTS = ["shoulder", "elbow"]
IDS = [3, 7]


def make_bus(link):
    return VirtualBus(ids=IDS, model="mx106", loads=ServoLoad.pendulum(0.3, 0.1), link=str(link))


@pytest.fixture(scope="module")
def ros(tmp_path_factory):
    link = tmp_path_factory.mktemp("dxl") / "ttyDXL"
    vbus = {"bus": make_bus(link)}
    vbus["bus"].start()
    h = RosHarness(salt=4)
    node, client, states, diags, pub = hardware_on_virtual_bus(
        h, link, JOINTS, IDS, "mx106", 32.0, "hw_test_client", reconnect_period=0.2, stale_cycles=5
    )
    supply: list[BatteryState] = []
    client.create_subscription(BatteryState, "servo_supply", supply.append, 10)
    yield h, node, client, states, diags, supply, pub, vbus, link
    h.shutdown()
    vbus["bus"].stop()


def servo_status(diags, joint):
    for d in reversed(diags):
        for s in d.status:
            if s.name.endswith(f": {joint}"):
                return s
    return None


def test_joint_states_and_supply(ros):
    h, node, client, states, diags, supply, pub, vbus, link = ros
    # a joint whose reply timed out is left out of that cycle's message (by name), never sent as NaN
    msg = wait_for(lambda: next((m for m in reversed(states[-10:]) if len(m.name) == 2), None), 20.0, "full state")
    assert list(msg.name) == JOINTS
    assert all(np.isfinite(m.position).all() for m in states)
    np.testing.assert_allclose(msg.position, vbus["bus"].theta, atol=0.02)  # rad, from the encoder counts
    wait_for(lambda: supply and supply[-1].present, 20.0, "supply voltage")
    assert abs(supply[-1].voltage - vbus["bus"].supply_voltage) < 0.2  # V
    # read every health_period (0.5 s), republished every supply_period (0.1 s): each message is stamped with its
    # reading (the feed-forward node judges its age by it), so the messages between two reads carry one stamp
    wait_for(lambda: len(supply) >= 2 and supply[-1].header.stamp == supply[-2].header.stamp, 20.0, "one reading")
    s = supply[-1].header.stamp
    assert 0 < node.now_s() - (s.sec + s.nanosec * 1e-9) < 60.0


def test_goal_moves_servo_and_p_gain_is_written(ros):
    h, node, client, states, diags, supply, pub, vbus, link = ros
    pub.publish(Float64MultiArray(data=[0.6, -0.4]))
    wait_for(lambda: np.allclose(states[-1].position, [0.6, -0.4], atol=0.05), 20.0, "servos to reach the goal")
    np.testing.assert_allclose(vbus["bus"].p[:, 15], [32.0, 32.0])  # P_KP of the emulated firmware
    pub.publish(Float64MultiArray(data=[5.0, 0.0]))  # outside the joint limits: refused, goal held
    wait_for(lambda: node.gate.rejected >= 1, 20.0, "rejection")
    np.testing.assert_allclose(vbus["bus"].goal, [0.6, -0.4], atol=0.01)


def test_p_gains_beyond_the_register_are_one_line_and_kp_is_kept(ros):
    """servo/p_gains above the MX-106 P gain register: refused, kp kept, one line naming the topic (before: the
    parameter's refusal line too, for one message)."""
    h, node, client, states, diags, supply, pub, vbus, link = ros
    logs: list = []
    client.create_subscription(
        Log, "/rosout", lambda m: logs.append(m) if m.name.endswith("servo_hardware") else None, 100
    )
    rosout_matched(node, logs)
    gains = client.create_publisher(Float64MultiArray, "servo/p_gains", 10)
    wait_for(lambda: gains.get_subscription_count(), 20.0, "servo/p_gains subscriber")
    kp, k = list(node.get_parameter("kp").value), len(logs)
    gains.publish(Float64MultiArray(data=[5000.0, 5000.0]))
    (line, *_) = wait_for(lambda: [m.msg for m in logs[k:] if "P gains on" in m.msg], 20.0, "the topic's line")
    assert "servo/p_gains rejected" in line and "register" in line, line
    # the parameter's own line would come first (logged earlier in the same callback, one /rosout publisher)
    assert not [m.msg for m in logs[k:] if "parameter change refused" in m.msg]
    assert list(node.get_parameter("kp").value) == kp


def test_joint_command_velocity_and_effort_write_the_limit_registers(ros):
    """JointState velocity → Profile Velocity (0.229 rpm), effort → Goal Current through kt where the servo is in
    current-based position mode; the one in position mode refuses its effort with a line; the goal still applies."""
    h, node, client, states, diags, supply, pub, vbus, link = ros
    bus = vbus["bus"]
    bus.regs.set("Operating Mode", [5, 3])  # shoulder current-based position, elbow position
    node.bus.modes.clear()  # changed behind the set-up's back: read again
    cmd = client.create_publisher(JointState, "servo/joint_command", 10)
    wait_for(lambda: cmd.get_subscription_count(), 20.0, "joint_command subscription")
    rejected = node.gate.rejected
    cmd.publish(JointState(name=JOINTS, position=[0.2, -0.1], velocity=[1.5, -0.75], effort=[2.0, 1.0]))
    wait_for(lambda: node.gate.rejected > rejected, 20.0, "the command handled")  # its last step: the refusal
    unit = ct.RAD_S_PER_VELOCITY_UNIT
    assert bus.regs.get("Profile Velocity").tolist() == [round(1.5 / unit), round(0.75 / unit)]  # [63, 31]
    table = ct.control_table("mx106")
    assert bus.regs.get("Goal Current")[0] == round(2.0 / table.kt / table.current_unit)  # 267 = 0.897 A
    assert bus.regs.get("Goal Current")[1] == 0  # position mode: refused, not written
    assert node.gate.rejected == rejected + 1 and "elbow" in node.gate.last_reason
    assert "Operating Mode 3" in node.gate.last_reason
    wait_for(lambda: np.allclose(bus.goal, [0.2, -0.1], atol=1e-3), 20.0, "the goal of the same message")
    cmd.publish(JointState(name=["shoulder"], velocity=[0.0]))  # 0: no limit; no position: the goal stays
    wait_for(lambda: bus.regs.get("Profile Velocity")[0] == 0, 20.0, "limit cleared")
    np.testing.assert_allclose(bus.goal, [0.2, -0.1], atol=1e-3)


def test_diagnostics_per_servo(ros):
    h, node, client, states, diags, supply, pub, vbus, link = ros
    wait_for(lambda: servo_status(diags, "elbow") is not None, 20.0, "diagnostics")
    s = servo_status(diags, "elbow")
    keys = {kv.key: kv.value for kv in s.values}
    assert s.level in (DiagnosticStatus.OK, DiagnosticStatus.WARN), s.message  # WARN: a timeout this period
    assert keys["id"] == "7" and float(keys["temperature_C"]) > 0 and keys["hardware_error"] == "0"
    assert float(keys["last_reply_age_s"]) < 0.5 and int(keys["comm_ok"]) > 0 and "comm_timeouts" in keys


def test_torque_service(ros):
    h, node, client, states, diags, supply, pub, vbus, link = ros
    cli = client.create_client(SetBool, "servo/torque_enable")
    r = h.call(cli, SetBool.Request(data=False))
    assert r.success, r.message
    assert (vbus["bus"].mem[:, ct.ADDR_TORQUE_ENABLE] == 0).all()
    r = h.call(cli, SetBool.Request(data=True))
    assert r.success and (vbus["bus"].mem[:, ct.ADDR_TORQUE_ENABLE] == 1).all()


def test_hardware_error_reported_and_cleared_by_reboot(ros):
    h, node, client, states, diags, supply, pub, vbus, link = ros
    vbus["bus"].inject_overload(3)
    wait_for(
        lambda: (
            (s := servo_status(diags, "shoulder")) is not None
            and s.level == DiagnosticStatus.ERROR
            and "overload" in s.message
        ),
        20.0,
        "overload at ERROR",
    )
    r = h.call(client.create_client(Trigger, "servo/reboot"), Trigger.Request())
    assert r.success and "overload" in r.message, r.message
    assert vbus["bus"].hw_error[0] == 0
    wait_for(lambda: servo_status(diags, "shoulder").level != DiagnosticStatus.ERROR, 20.0, "shoulder not ERROR")
    assert h.call(client.create_client(SetBool, "servo/torque_enable"), SetBool.Request(data=True)).success


def test_servo_the_bus_skips_is_reported_in_diagnostics_and_joint_states_keep_every_joint(ros):
    """Elbow (id 7) stops answering: after skip_after (5) missed sync reads the bus skips it; /diagnostics reports
    it at ERROR as skipped (status named by joint, hardware_id by id, the skip counters in its values), the
    shoulder in the same array is not skipped, and /joint_states keeps both joints, the elbow at its last value.
    The bus's own (Python logging) line reaches /rosout through the node. Back when it answers again."""
    h, node, client, states, diags, supply, pub, vbus, link = ros
    rosout: list = []
    client.create_subscription(Log, "/rosout", rosout.append, 100)
    rosout_matched(node, rosout)

    def values(status):
        return {kv.key: kv.value for kv in status.values}

    def skipped(status):
        return status is not None and "skipped" in status.message and int(values(status)["comm_skipped_reads"]) > 0

    wait_for(lambda: servo_status(diags, "elbow") is not None, 20.0, "diagnostics")
    vbus["bus"].set_silent(7)
    try:
        s = wait_for(lambda: next(filter(skipped, [servo_status(diags, "elbow")]), None), 20.0, "elbow skipped")
        assert s.level == DiagnosticStatus.ERROR
        fqn = f"{h.ns}/servo_hardware"  # names and ids carry the namespace: namespaced copies report apart
        assert s.name == f"{fqn}: elbow" and s.hardware_id == f"{fqn}/dxl/7"
        assert "5 consecutive missed replies" in s.message and "re-probed every 0.5 s" in s.message, s.message
        keys = values(s)
        assert keys["id"] == "7" and keys["skipped"] == "true" and keys["stale"] == "true"
        assert int(keys["comm_timeouts"]) >= 5
        (array,) = [d for d in diags if any(x is s for x in d.status)]
        (other,) = [x for x in array.status if x.name == f"{fqn}: shoulder"]
        assert other.hardware_id == f"{fqn}/dxl/3" and values(other)["skipped"] == "false"
        assert "skipped" not in other.message, other.message
        n = len(states)
        wait_for(lambda: len(states) >= n + 20, 20.0, "joint_states while the elbow is skipped")
        held = states[n].position[1]
        for m in states[n:]:  # every joint in every message, the silent elbow at its last value
            assert list(m.name) == JOINTS and np.isfinite(m.position).all()
            assert m.position[1] == held
        assert skipped(servo_status(diags, "elbow"))  # still skipped throughout
        line = "servo_ff.bus.dynamixel.bus: id 7"
        (m, *_) = wait_for(lambda: [m for m in rosout if m.msg.startswith(line)], 30.0, "the bus's line on /rosout")
        assert "skipped" in m.msg and m.level == Log.WARN and m.name.endswith("servo_hardware"), m
    finally:
        vbus["bus"].set_silent(7, False)
    wait_for(lambda: "skipped" not in servo_status(diags, "elbow").message, 20.0, "elbow back in the sync reads")
    wait_for(lambda: node.bus is not None and not node.bus.stats[7].skipping, 20.0, "elbow not skipped")


def test_disconnect_reports_error_and_reconnects(ros):
    """The adapter unplugged: ERROR diagnostics, no /joint_states until the bus is back (before: every joint's last
    value at 100/s under fresh stamps), a follow_joint_trajectory goal running then is aborted and one sent
    meanwhile rejected; reconnection restores the limits."""
    fjt = pytest.importorskip("control_msgs.action").FollowJointTrajectory
    from builtin_interfaces.msg import Duration
    from rclpy.action import ActionClient
    from trajectory_msgs.msg import JointTrajectoryPoint

    h, node, client, states, diags, supply, pub, vbus, link = ros
    cmd = client.create_publisher(JointState, "servo/joint_command", 10)
    wait_for(lambda: cmd.get_subscription_count(), 20.0, "joint_command subscription")
    cmd.publish(JointState(name=["elbow"], velocity=[0.5]))  # a velocity limit, restored after reconnection
    raw = round(0.5 / ct.RAD_S_PER_VELOCITY_UNIT)
    wait_for(lambda: vbus["bus"].regs.get("Profile Velocity")[1] == raw, 20.0, "Profile Velocity written")
    action = ActionClient(client, fjt, "servo/follow_joint_trajectory")
    assert action.wait_for_server(timeout_sec=20.0)
    goal = fjt.Goal()
    goal.trajectory.joint_names = JOINTS
    goal.trajectory.points = [JointTrajectoryPoint(positions=[0.2, 0.2], time_from_start=Duration(sec=30))]
    sent = action.send_goal_async(goal)
    wait_for(sent.done, 20.0, "the goal response")
    assert sent.result().accepted
    result = sent.result().get_result_async()
    vbus["bus"].stop()  # adapter unplugged: the pty disappears
    wait_for(lambda: not node.connected, 20.0, "disconnect detection")
    wait_for(result.done, 20.0, "the running goal's result")
    assert "was lost" in result.result().result.error_string, result.result().result.error_string
    n = len(diags)
    wait_for(lambda: len(diags) > n + 1, 20.0, "diagnostics while disconnected")
    k = len(states)  # the messages in flight at the loss have arrived by now
    n = len(diags)
    wait_for(lambda: len(diags) > n + 1, 20.0, "more diagnostics while disconnected")
    assert len(states) == k, [round(m.header.stamp.sec + m.header.stamp.nanosec * 1e-9, 3) for m in states[k:]]
    s = servo_status(diags, "shoulder")
    assert s.level == DiagnosticStatus.ERROR and "disconnected" in s.message
    late = action.send_goal_async(goal)
    wait_for(late.done, 20.0, "the response to a goal while disconnected")
    assert not late.result().accepted
    vbus["bus"] = make_bus(link)
    vbus["bus"].start()
    wait_for(lambda: node.connected, 20.0, "reconnection")
    wait_for(lambda: states[-1].header.stamp.sec > 0 and len(states[-1].name) == 2 and node.ticks > 0, 20.0, "states")
    wait_for(lambda: servo_status(diags, "shoulder").level != DiagnosticStatus.ERROR, 20.0, "not ERROR after reconnect")
    assert node.reconnects >= 1  # (no wall time asserted: the waits above bound it, 20 s each)
    wait_for(lambda: vbus["bus"].regs.get("Profile Velocity")[1] == raw, 20.0, "the limit back on a fresh servo (0)")


def test_joint_states_are_stamped_with_their_read_not_the_health_read_after_it(ros):
    """A tick reads the state, writes the goals and, every ``health_period``, reads voltage, temperature and error
    bits: /joint_states carries the state read's time (before: the time after all that, median 3.8 ms later on
    ticks with a health read on the virtual bus, more on a real bus)."""
    import time

    h, node, client, states, diags, supply, pub, vbus, link = ros
    reads: list[list] = []  # [the read's time on the system clock [ns], a health read this tick]
    lags: list[tuple[float, bool]] = []  # (stamp - the read's time [ms], a health read this tick)
    store, health, publish = node._store, node._read_health, node.publish_state

    def _store(state):
        reads.append([time.time_ns() - time.monotonic_ns() + int(state.stamp * 1e9), False])
        return store(state)

    def _health():
        if reads:
            reads[-1][1] = True
        return health()

    def _publish(stamp):
        if reads:
            lags.append(((stamp.sec * 10**9 + stamp.nanosec - reads[-1][0]) * 1e-6, reads[-1][1]))
        return publish(stamp)

    node._store, node._read_health, node.publish_state = _store, _health, _publish
    try:
        wait_for(lambda: sum(hh for _, hh in lags) >= 15, 30.0, "15 ticks with a health read")
    finally:
        del node._store, node._read_health, node.publish_state  # the node's own methods again
    with_health, plain = [d for d, hh in lags if hh], [d for d, hh in lags if not hh]
    assert abs(np.median(with_health)) < 0.5 and abs(np.median(plain)) < 0.5, (with_health, plain[:20])


@pytest.mark.parametrize("servo,protocol", [("mx106", "dxl2"), ("sts3215", "sts"), ("ax12a", "dxl1")])
def test_limits_not_given_are_the_servo_position_range(ros, servo, protocol):
    """position_min/max left out: the table's position range, not the interface's ±π (wider than 0–4095 counts,
    which the bus would refuse); a limit given is kept."""
    from servo_ff.bus import control_table as ct

    h = ros[0]
    table = ct.control_table(servo)
    lo, hi = ct.position_range_rad(table, table.center)
    kw = dict(context=h.context, namespace=h.ns)
    base = [Parameter(k, value=v) for k, v in (("joints", ["a"]), ("ids", [1]), ("autostart", False))]
    base += [Parameter("servo", value=servo), Parameter("protocol", value=protocol)]
    node = HardwareNode(f"limits_{protocol}", **kw, parameter_overrides=base)
    kept = HardwareNode(f"kept_{protocol}", **kw, parameter_overrides=[*base, Parameter("position_max", value=[1.0])])
    try:
        assert list(node.get_parameter("position_min").value) == pytest.approx([lo])
        assert list(node.get_parameter("position_max").value) == pytest.approx([hi]) and hi < math.pi
        assert list(kept.get_parameter("position_max").value) == [1.0]
        assert list(kept.get_parameter("position_min").value) == pytest.approx([lo])
    finally:
        node.destroy_node()
        kept.destroy_node()


def test_a_joint_read_beyond_its_limits_is_held_at_the_nearest_limit_and_said(tmp_path, capfd):
    """Limits [0.5, 2] rad on servos resting near 0 rad: each first reading is outside them; the held goal is the
    nearest limit (torque on moves the joint there), and a warning names each joint, its reading and its limits
    (the goal was clipped without a word)."""
    link = tmp_path / "ttyDXL"
    vbus = make_bus(link)
    vbus.start()
    h = RosHarness(salt=76)
    try:
        node, client, states, diags, pub = hardware_on_virtual_bus(
            h, link, JOINTS, IDS, "mx106", 32.0, "hw_limits_client", position_min=[0.5], position_max=[2.0]
        )
        np.testing.assert_array_equal(node.gate.goal, [0.5, 0.5])
        wait_for(lambda: np.allclose(vbus.theta, [0.5, 0.5], atol=0.05), 30.0, "the joints at the lower limit")
    finally:
        h.shutdown()
        vbus.stop()
    err = capfd.readouterr().err
    for joint in JOINTS:
        said = [ln for ln in err.splitlines() if f"{joint}: read at " in ln]
        assert len(said) == 1 and "outside its joint limits [0.5000, 2.0000] rad" in said[0], err[-3000:]
        assert "its goal is held at 0.5000 rad (the nearest limit: torque on moves it there)" in said[0]
