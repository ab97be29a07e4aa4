"""servo_hardware_node with ``protocol: sts`` on the virtual Feetech bus (6 × STS3215 on a pty, as an SO-100 arm's
bus): it comes up through ``make_bus`` (FeetechBus), publishes joint_states, moves the servos, writes the P
coefficient from kp, reports an overload and clears it with the reboot service."""

from __future__ import annotations

import numpy as np
import pytest
from nodes_harness import RosHarness, hardware_on_virtual_bus, wait_for

pytest.importorskip("rclpy")
pytest.importorskip("scservo_sdk")
from diagnostic_msgs.msg import DiagnosticStatus  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from std_srvs.srv import SetBool, Trigger  # noqa: E402

from servo_ff.bus.feetech.bus import FeetechBus  # noqa: E402
from servo_ff.bus.feetech.virtual_bus import StsVirtualBus  # noqa: E402
from servo_ff.bus.virtual_bus import ServoLoad  # noqa: E402
from servo_ff.models.params import P_KP  # noqa: E402
from servo_ff.nodes.hardware_node import HardwareNode  # noqa: E402

JOINTS = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"]
IDS = [1, 2, 3, 4, 5, 6]


@pytest.fixture(scope="module")
def ros(tmp_path_factory):
    link = tmp_path_factory.mktemp("sts") / "ttySTS"
    vbus = StsVirtualBus(ids=IDS, loads=ServoLoad.pendulum(0.1, 0.1), link=str(link), dt_max=0.002)
    vbus.start()
    h = RosHarness(salt=23)
    node, client, states, diags, pub = hardware_on_virtual_bus(
        h, link, JOINTS, IDS, "sts3215", 20.0, "sts_test_client", protocol="sts", reconnect_period=0.2, stale_cycles=5
    )
    yield h, node, client, states, diags, pub, vbus
    h.shutdown()
    vbus.stop()


def servo_status(diags, joint):
    for d in reversed(diags):
        for s in d.status:
            if s.name.endswith(f": {joint}"):
                return s
    return None


def test_comes_up_on_the_feetech_bus_and_publishes_joint_states(ros):
    h, node, client, states, diags, pub, vbus = ros
    assert isinstance(node.bus, FeetechBus) and node.connected
    msg = wait_for(lambda: next((m for m in reversed(states[-10:]) if len(m.name) == 6), None), 20.0, "full state")
    assert list(msg.name) == JOINTS
    assert all(np.isfinite(m.position).all() for m in states)
    np.testing.assert_allclose(msg.position, vbus.theta, atol=0.02)  # rad, from the sign-magnitude counts


def test_goal_moves_servos_and_kp_sets_the_p_coefficient(ros):
    h, node, client, states, diags, pub, vbus = ros
    goal = [0.5, -0.4, 0.3, -0.2, 0.1, 0.0]
    pub.publish(Float64MultiArray(data=goal))
    wait_for(lambda: np.allclose(states[-1].position, goal, atol=0.05), 20.0, "servos to reach the goal")
    assert vbus.regs.get("Position P Gain").tolist() == [20] * 6  # kp 20 = P coefficient 20 (bam: firmware_kp = kp)
    np.testing.assert_allclose(vbus.p[:, P_KP], 20.0)
    pub.publish(Float64MultiArray(data=[5.0, 0, 0, 0, 0, 0]))  # outside the joint limits: refused, goal held
    wait_for(lambda: node.gate.rejected >= 1, 20.0, "rejection")
    np.testing.assert_allclose(vbus.goal, goal, atol=0.01)


def test_joint_command_velocity_and_effort_write_goal_velocity_and_torque_limit(ros):
    """STS: velocity → Goal Velocity (counts/s), effort → Torque Limit, the stall duty τ·R/(kt·V_in) at the
    supply the servo reports (the inverse of its reported effort); an effort beyond what V_in gives at full duty
    is clamped to it, said once for the joint, and not refused."""
    h, node, client, states, diags, pub, vbus = ros
    cmd = client.create_publisher(JointState, "servo/joint_command", 10)
    wait_for(lambda: cmd.get_subscription_count(), 20.0, "joint_command subscription")
    rejected = node.gate.rejected
    vin = node.bus.supply[3]
    duty = 0.5 * node.bus.table.R / (node.bus.table.kt * vin)  # the stall duty of 0.5 N·m
    cmd.publish(JointState(name=["elbow_flex", "gripper"], velocity=[3.0, 0.5], effort=[0.5, 5.0]))
    wait_for(lambda: "gripper" in node.limits_clamped, 20.0, "the command handled")  # its last step: the clamp
    assert vbus.regs.get("Goal Velocity")[[2, 5]].tolist() == [1956, 326]  # counts/s: 3.0 and 0.5 rad/s
    assert vbus.regs.get("Torque Limit")[2] == round(duty * 1000), (vin, duty)
    assert vbus.regs.get("Torque Limit")[5] == 1000  # 5 N·m > the stall torque at V_in: full duty
    assert node.gate.rejected == rejected and node.limits_clamped == {"gripper"}  # said, not refused
    cmd.publish(JointState(name=["elbow_flex", "gripper"], velocity=[0.0, 0.0], effort=[0.0, 0.0]))
    wait_for(
        lambda: vbus.regs.get("Torque Limit")[2] == 1000 and vbus.regs.get("Goal Velocity")[[2, 5]].tolist() == [0, 0],
        20.0,
        "limits cleared",
    )


def test_overload_reported_and_cleared_by_reboot(ros):
    h, node, client, states, diags, pub, vbus = ros
    vbus.inject_overload(3)
    wait_for(
        lambda: (
            (s := servo_status(diags, "elbow_flex")) is not None
            and s.level == DiagnosticStatus.ERROR
            and "overload" in s.message
        ),
        20.0,
        "overload at ERROR",
    )
    r = h.call(client.create_client(Trigger, "servo/reboot"), Trigger.Request())
    assert r.success and "overload" in r.message, r.message
    assert vbus.hw_error[2] == 0
    wait_for(lambda: servo_status(diags, "elbow_flex").level != DiagnosticStatus.ERROR, 20.0, "elbow_flex not ERROR")
    assert h.call(client.create_client(SetBool, "servo/torque_enable"), SetBool.Request(data=True)).success
    assert vbus.enable.tolist() == [1.0] * 6


def test_node_on_the_virtual_bus_command(tmp_path):
    """``servo-ff virtual-bus --protocol sts --ids 1-6 --link PATH`` in its own process + the node on PATH (the
    SO-100 hardware bring-up's wiring)."""
    from servo_ff.bus.virtual_bus import spawn_virtual_bus

    link = tmp_path / "ttySO100"
    with spawn_virtual_bus(["--protocol", "sts", "--ids", "1-6", "--link", str(link)]):
        h = RosHarness(salt=24)
        try:
            node = h.add(
                HardwareNode(
                    "servo_hardware",
                    context=h.context,
                    namespace=h.ns,
                    parameter_overrides=[
                        Parameter("joints", value=JOINTS),
                        Parameter("ids", value=IDS),
                        Parameter("port", value=str(link)),
                        Parameter("protocol", value="sts"),
                        Parameter("servo", value="sts3215"),
                        Parameter("latency_timer_ms", value=1.0),
                        Parameter("timeout_ms", value=100.0),  # a spawned Python process: late under load
                        Parameter("kp", value=[32.0]),
                        # the defaults ±π exceed the 0..4095 counts range (+3.14006 rad): configure would refuse
                        Parameter("position_min", value=[-3.0]),
                        Parameter("position_max", value=[3.0]),
                    ],
                )
            )
            client = h.make_node("sts_cmd_client")
            states: list[JointState] = []
            client.create_subscription(JointState, "joint_states", states.append, 50)
            wait_for(lambda: any(len(m.name) == 6 for m in states), 20.0, "joint_states from the spawned bus")
            m = next(m for m in states if len(m.name) == 6)
            assert list(m.name) == JOINTS and np.allclose(m.position, 0.0, atol=0.01)  # at 2048 counts
            assert isinstance(node.bus, FeetechBus)
        finally:
            h.shutdown()
