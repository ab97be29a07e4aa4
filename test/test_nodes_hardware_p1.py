"""servo_hardware_node on Dynamixel Protocol 1.0: protocol dxl1, servo mx106-p1, against the 1.0 virtual bus on a pty
(DynamixelBus1 on dynamixel-sdk Protocol 1.0 on one side, VirtualBus1 on the other)."""

from __future__ import annotations

import numpy as np
import pytest
from nodes_harness import RosHarness, hardware_on_virtual_bus, wait_for

pytest.importorskip("rclpy")
pytest.importorskip("dynamixel_sdk")
from diagnostic_msgs.msg import DiagnosticStatus  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402

from servo_ff.bus.dynamixel.virtual_p1 import VirtualBus1  # noqa: E402
from servo_ff.bus.virtual_bus import ServoLoad  # noqa: E402

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
