"""servo_hardware_node on Dynamixel Protocol 1.0: protocol dxl1, servo mx106-p1, against the 1.0 virtual bus on a pty
(DynamixelBus1 on dynamixel-sdk Protocol 1.0 on one side, VirtualBus1 on the other)."""

from __future__ import annotations

import numpy as np
import pytest
from nodes_harness import RosHarness, hardware_on_virtual_bus, rosout_matched, wait_for

pytest.importorskip("rclpy")
pytest.importorskip("dynamixel_sdk")
from diagnostic_msgs.msg import DiagnosticStatus  # noqa: E402
from rcl_interfaces.msg import Log  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402

from servo_ff.bus.dynamixel.virtual_p1 import VirtualBus1  # noqa: E402
from servo_ff.bus.virtual_bus import ServoLoad  # noqa: E402
from servo_ff.models.presets import preset  # noqa: E402
from servo_ff.nodes.hardware_params import hardware_refusal, parameter_specs  # noqa: E402

JOINTS = ["hip", "knee"]
IDS = [4, 9]


@pytest.fixture(scope="module")
def ros(tmp_path_factory):
    link = tmp_path_factory.mktemp("dxl1") / "ttyDXL1"
    vbus = VirtualBus1(ids=IDS, model="mx106-p1", loads=ServoLoad.pendulum(0.3, 0.1), link=str(link))
    vbus.start()
    h = RosHarness(salt=16)
    node, client, states, diags, pub = hardware_on_virtual_bus(
        h, link, JOINTS, IDS, "mx106-p1", 24.0, "hw1_test_client", protocol="dxl1"
    )
    yield h, node, client, states, diags, pub, vbus
    h.shutdown()
    vbus.stop()


def test_protocol1_node_publishes_joint_states_and_moves_the_servos(ros):
    h, node, client, states, diags, pub, vbus = ros
    msg = wait_for(lambda: next((m for m in reversed(states[-10:]) if len(m.name) == 2), None), 20.0, "full state")
    assert list(msg.name) == JOINTS and node.bus.config.protocol == "dxl1"
    np.testing.assert_allclose(msg.position, vbus.theta, atol=0.02)  # rad, 4096 counts/rev around 2048
    pub.publish(Float64MultiArray(data=[0.5, -0.4]))
    wait_for(lambda: np.allclose(states[-1].position, [0.5, -0.4], atol=0.05), 20.0, "servos to reach the goal")
    np.testing.assert_allclose(vbus.p[:, 15], [24.0, 24.0])  # P Gain (28) = bam kp on 1.0 firmware
    assert vbus.regs.get("Position P Gain").tolist() == [24, 24]


def test_protocol1_alarm_reported_and_cleared_by_the_reboot_equivalent(ros):
    h, node, client, states, diags, pub, vbus = ros

    def status(joint):
        for d in reversed(diags):
            for s in d.status:
                if s.name.endswith(f": {joint}"):
                    return s
        return None

    vbus.inject_overload(9)
    wait_for(
        lambda: (s := status("knee")) is not None and s.level == DiagnosticStatus.ERROR and "overload" in s.message,
        20.0,
        "overload at ERROR",
    )
    r = h.call(client.create_client(Trigger, "servo/reboot"), Trigger.Request())
    assert r.success and "overload" in r.message, r.message
    assert vbus.hw_error.tolist() == [0, 0]
    wait_for(lambda: status("knee").level != DiagnosticStatus.ERROR, 20.0, "knee not ERROR")


@pytest.mark.parametrize(
    "servo,protocol,kp,text",
    [
        ("ax12a", "dxl1", 0.0, "kp of knee = 0 (P gain register 0) is outside the AX-12A range: kp 1..512"),
        ("ax12a", "dxl1", 0.4, "kp of knee = 0.4 (P gain register 0) is outside the AX-12A range: kp 1..512"),
        ("mx106-p1", "dxl1", 255.0, "kp of knee = 255 (P gain register 255) is outside the MX-106(1.0) range"),
        ("sts3215", "sts", 255.0, "kp of knee = 255 (P gain register 255) is outside the STS3215 range: kp 0..254"),
        (
            "mx106",
            "dxl2",
            1024.0,
            "kp of knee = 1024 (P gain register 16384) is outside the MX-106(2.0) range: kp 0..1023.94",
        ),
    ],
)
def test_kp_outside_the_servo_p_gain_range_is_refused_naming_joint_value_and_range(servo, protocol, kp, text):
    """The kp check of the hardware node, per servo family: its table's P gain register range (AX-12A 1..512, its
    compliance slope 1024 / P has no P 0; before: only the maximum was checked, kp 0 passed to the bus)."""
    from servo_ff.bus import control_table as ct

    values = {p.name: p.default for p in parameter_specs()}
    values.update(joints=JOINTS, ids=IDS, servo=servo, protocol=protocol, kp=[32.0, kp])
    reason = hardware_refusal(values, limits=False)
    assert reason is not None and reason.startswith(text), reason
    values["kp"] = [32.0, ct.control_table(servo).p_gain_min / ct.control_table(servo).p_gain_per_kp]
    assert hardware_refusal(values, limits=False) is None  # the bottom of the range is taken


@pytest.fixture(scope="module")
def ax(tmp_path_factory):
    link = tmp_path_factory.mktemp("ax") / "ttyAX"
    vbus = VirtualBus1(ids=[1, 2], model="ax12a", params=preset("mx28", "m1"), link=str(link))
    vbus.start()
    h = RosHarness(salt=58)
    node, client, states, diags, pub = hardware_on_virtual_bus(
        h, link, JOINTS, [1, 2], "ax12a", 32.0, "ax_test_client", protocol="dxl1"
    )
    yield h, node, client, states, pub, vbus
    h.shutdown()
    vbus.stop()


def test_ax12_kp_zero_is_refused_on_the_parameter_and_the_topic(ax):
    """kp 0 on an AX-12A (no compliance slope 1024 / P): refused naming the joint, the value and the range, on the
    parameter and on servo/p_gains; the node goes on with its kp (before: kp [0, 32] accepted, and the bus's
    refusal in the next cycle ended the node's executor: 0 joint_states, torque left on)."""
    h, node, client, states, pub, vbus = ax
    r = node.set_parameters([Parameter("kp", Parameter.Type.DOUBLE_ARRAY, [0.0, 32.0])])[0]
    assert not r.successful and "kp of hip = 0" in r.reason and "kp 1..512" in r.reason, r.reason
    gains = client.create_publisher(Float64MultiArray, "servo/p_gains", 10)
    wait_for(lambda: gains.get_subscription_count(), 20.0, "servo/p_gains subscriber")
    rejected = node.gate.rejected
    gains.publish(Float64MultiArray(data=[32.0, 0.0]))
    wait_for(lambda: node.gate.rejected > rejected, 20.0, "the topic's refusal")
    assert node.kp.tolist() == [32.0, 32.0]
    n = len(states)
    pub.publish(Float64MultiArray(data=[0.5, -0.5]))
    wait_for(lambda: np.allclose(vbus.goal, [0.5, -0.5], atol=0.01), 20.0, "the goal written")
    wait_for(lambda: len(states) > n + 10, 20.0, "joint_states flowing")
    assert vbus.regs.get("CW Compliance Slope").tolist() == [32, 32]


def test_a_p_gain_the_bus_refuses_in_the_cycle_is_one_line_and_the_loop_goes_on(ax):
    """Should the bus still refuse a P gain (a ValueError from the cycle's write: kp 0 set past the parameter check
    here), the cycle logs it (throttled), writes nothing and publishes the state; the executor lives on (before: the
    ValueError ended it, no joint_states, goals never written)."""
    h, node, client, states, pub, vbus = ax
    logs: list = []
    client.create_subscription(
        Log, "/rosout", lambda m: logs.append(m) if m.name.endswith("servo_hardware") else None, 100
    )
    rosout_matched(node, logs)
    k, n = len(logs), len(states)
    node.kp = np.array([0.0, 32.0])  # what the parameter check refuses: only a bug could bring it to the bus
    try:
        (line, *_) = wait_for(lambda: [m.msg for m in logs[k:] if "bus refused" in m.msg], 20.0, "the refusal line")
        assert "P gain" in line and "p_gains" in line, line
        wait_for(lambda: len(states) > n + 20, 20.0, "joint_states flowing on")
        assert vbus.regs.get("CW Compliance Slope").tolist() == [32, 32]  # nothing written
    finally:
        node.kp = np.array([32.0, 32.0])
    pub.publish(Float64MultiArray(data=[-0.3, 0.3]))
    wait_for(lambda: np.allclose(vbus.goal, [-0.3, 0.3], atol=0.01), 20.0, "the goal written again")
