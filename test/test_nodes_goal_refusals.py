"""Goals on the topics (``servo/commands``, ``servo/joint_command``, ``servo/joint_trajectory``) are taken as
follow_joint_trajectory takes them, on servo_sim_node and servo_hardware_node alike: refused while torque is off
(nothing could follow them, and torque on holds where the joints stand) and while the hardware's bus is lost; a
velocity / effort limit alone is still taken with torque off."""

from __future__ import annotations

import numpy as np
import pytest
from nodes_harness import PENDULUM_SIM, RosHarness, sim_node, wait_for

pytest.importorskip("rclpy")
pytest.importorskip("dynamixel_sdk")
from builtin_interfaces.msg import Duration  # noqa: E402
from hardware_rig import Rig  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from std_srvs.srv import SetBool  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

from servo_ff.bus.virtual_bus import ServoLoad  # noqa: E402

JOINTS = ["hip", "knee"]


def publishers(client) -> dict:
    return {
        "commands": client.create_publisher(Float64MultiArray, "servo/commands", 10),
        "joint_command": client.create_publisher(JointState, "servo/joint_command", 10),
        "joint_trajectory": client.create_publisher(JointTrajectory, "servo/joint_trajectory", 10),
    }


def send_each_goal(pubs: dict) -> None:
    """One goal [0.5, 0.5] rad on each topic."""
    pubs["commands"].publish(Float64MultiArray(data=[0.5, 0.5]))
    pubs["joint_command"].publish(JointState(name=JOINTS, position=[0.5, 0.5]))
    point = JointTrajectoryPoint(positions=[0.5, 0.5], time_from_start=Duration(sec=1))
    pubs["joint_trajectory"].publish(JointTrajectory(joint_names=JOINTS, points=[point]))


def assert_each_refused(node, pubs: dict, why: str) -> None:
    """The three goals are counted rejected with ``why`` named, none accepted; the held goal is unchanged."""
    accepted, rejected, goal = node.gate.accepted, node.gate.rejected, node.gate.goal.copy()
    send_each_goal(pubs)
    wait_for(lambda: node.gate.rejected >= rejected + 3, 20.0, "the three goals refused")
    assert node.gate.accepted == accepted and why in node.gate.last_reason, node.gate.last_reason
    assert node.traj is None
    np.testing.assert_array_equal(node.gate.goal, goal)


@pytest.mark.parametrize("kind", ["sim", "hw"])
def test_goals_with_torque_off_are_refused_as_follow_joint_trajectory_refuses_them(tmp_path, kind):
    """torque_enable false on an active node: a goal on each topic is rejected naming torque off (before: each
    counted accepted, written to the limp servos, and dropped by the torque on that held where they fell); a
    joint_command velocity limit alone is taken; torque on again holds the present position, not 0.5 rad."""
    rig = Rig(tmp_path, 108, ServoLoad.pendulum(0.25, 0.1)) if kind == "hw" else None
    h = rig.h if rig else RosHarness(salt=109)
    try:
        if rig:
            node = rig.node("servo_torque_goals")
        else:
            node = sim_node(h, **{**PENDULUM_SIM, "joints": JOINTS, "initial_position": [0.0, 0.0]})
        client = rig.client if rig else h.make_node("probe")
        pubs = publishers(client)
        wait_for(lambda: node.active and all(p.get_subscription_count() for p in pubs.values()), 30.0, "active")
        torque = client.create_client(SetBool, "servo/torque_enable")
        assert h.call(torque, SetBool.Request(data=False), timeout=15.0).success
        assert_each_refused(node, pubs, "torque is off")
        rejected = node.gate.rejected
        pubs["joint_command"].publish(JointState(name=["knee"], velocity=[0.4]))  # a limit alone: taken
        limits = node.limits_written if rig else node.limits_commanded
        wait_for(lambda: limits, 20.0, "the velocity limit taken with torque off")
        assert node.gate.rejected == rejected
        r = h.call(torque, SetBool.Request(data=True), timeout=15.0)
        assert r.success and "holding the present position" in r.message, r.message
        assert np.abs(node.gate.goal - 0.5).min() > 0.2, node.gate.goal  # where the joints stand, not 0.5 rad
    finally:
        if rig:
            rig.close()
        else:
            h.shutdown()


def test_goals_while_the_bus_is_lost_are_refused(tmp_path):
    """The adapter unplugged (the pty gone): a goal on each topic is rejected naming the lost bus (before: counted
    accepted, then replaced by the fresh reading held at the reconnection)."""
    rig = Rig(tmp_path, 110, ServoLoad.pendulum(0.25, 0.1))
    try:
        node = rig.node("servo_lost_goals", reconnect_period=0.3, stale_cycles=5)
        pubs = publishers(rig.client)
        wait_for(lambda: node.active and all(p.get_subscription_count() for p in pubs.values()), 30.0, "active")
        rig.bus.stop()
        wait_for(lambda: not node.connected, 20.0, "the bus lost")
        assert_each_refused(node, pubs, "is lost")
    finally:
        rig.close()
