"""A servo missing at start-up (``missing_ids``): ``fail`` refuses configure with one line naming joint and id;
``continue`` publishes the joint as NaN until its first reading, flags it in /diagnostics, refuses goals naming
it, and joins it at its fresh position once it answers (goal read from the bus's truth record). A servo whose set-up
refuses its Operating Mode or Min/Max Position Limit: ``fail`` refuses configure, ``continue`` leaves it out as a
missing one. The feed-forward node holds while a joint is NaN."""

from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np
import pytest
from nodes_harness import RosHarness, wait_for

pytest.importorskip("rclpy")
pytest.importorskip("dynamixel_sdk")
from diagnostic_msgs.msg import DiagnosticStatus  # noqa: E402
from hardware_rig import JOINTS, Rig, hold_goal_written_after  # noqa: E402
from lifecycle_msgs.msg import Transition  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

from servo_ff.bus import control_table as ct  # noqa: E402
from servo_ff.bus.bus_types import GAIN_GOAL_DATA_ADDR  # noqa: E402
from servo_ff.bus.virtual_bus import ServoLoad  # noqa: E402


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
        wait_for(lambda: node.active and rig2.pub.get_subscription_count() and rig2.states, 20.0, "active with states")
        # the knee: NaN until its first reading, the hip read; torque on the hip only
        m = rig2.states[-1]
        assert list(m.name) == JOINTS and math.isfinite(m.position[0]) and math.isnan(m.position[1])
        assert list(rig2.torque()) == [1, 0]
        # flagged in the diagnostics, naming joint and id
        wait_for(lambda: rig2.status("knee") is not None and rig2.status("hip") is not None, 20.0, "diagnostics")
        s = rig2.status("knee")
        assert s.level == DiagnosticStatus.ERROR and "joint 'knee' (id 2)" in s.message and "missing" in s.message
        wait_for(lambda: rig2.status("hip").level == DiagnosticStatus.OK, 20.0, "the hip OK")
        # goals naming the knee are refused; goals for the hip alone are followed
        rejected = node.gate.rejected
        rig2.pub.publish(Float64MultiArray(data=[0.3, 0.3]))
        wait_for(lambda: node.gate.rejected > rejected, 20.0, "goal naming the knee refused")
        assert "knee" in node.gate.last_reason and "not read yet" in node.gate.last_reason
        wait_for(lambda: rig2.pub_names.get_subscription_count(), 20.0, "joint_command subscriber")
        rig2.pub_names.publish(JointState(name=["hip"], position=[0.4]))
        wait_for(lambda: abs(rig2.physics()["theta"][0] - 0.4) < 0.03, 20.0, "the hip at its goal")
        # so is a follow_joint_trajectory goal naming it (before: accepted, then "Goal successfully reached!")
        fjt = pytest.importorskip("control_msgs.action").FollowJointTrajectory
        from builtin_interfaces.msg import Duration
        from rclpy.action import ActionClient
        from trajectory_msgs.msg import JointTrajectoryPoint

        action = ActionClient(rig2.client, fjt, "servo/follow_joint_trajectory")
        assert action.wait_for_server(timeout_sec=20.0)
        goal = fjt.Goal()
        goal.trajectory.joint_names = ["hip", "knee"]
        goal.trajectory.points = [JointTrajectoryPoint(positions=[0.4, 0.0], time_from_start=Duration(sec=1))]
        sent = action.send_goal_async(goal)
        wait_for(sent.done, 20.0, "the goal response")
        assert not sent.result().accepted
        goal.trajectory.joint_names = ["hip"]  # one naming the hip alone: followed and ended (the knee's NaN error,
        goal.trajectory.points = [JointTrajectoryPoint(positions=[0.3], time_from_start=Duration(sec=1))]  # not its)
        sent = action.send_goal_async(goal)
        wait_for(sent.done, 20.0, "the hip goal's response")
        result = sent.result().get_result_async()
        wait_for(result.done, 30.0, "the hip goal's result")
        assert result.result().status == 4, result.result().result.error_string  # SUCCEEDED
        # moved by hand while silent, then it answers: it joins where it is, torque on there
        with rig2.bus._lock:
            theta = rig2.bus.servos.bank.theta.copy()
            theta[1] = 0.7
            rig2.bus.servos.bank.theta = theta
        t_back = time.monotonic()
        rig2.bus.set_silent(2, False)
        wait_for(lambda: math.isfinite(rig2.states[-1].position[1]), 20.0, "the knee in joint_states")
        wait_for(lambda: rig2.torque()[1] == 1, 20.0, "torque on the knee")
        goal, pos, t_reply = hold_goal_written_after(rig2.truth(), t_back, 2)
        assert t_reply > t_back and abs(goal - pos) <= 1, (goal, pos)
        assert abs(float(ct.counts_to_rad(goal)) - 0.7) < 0.01
        np.testing.assert_allclose(rig2.states[-1].position[1], 0.7, atol=0.01)
        wait_for(lambda: rig2.status("knee").level == DiagnosticStatus.OK, 20.0, "the knee OK once joined")
        rig2.pub.publish(Float64MultiArray(data=[0.4, 0.5]))  # now a goal naming it is followed
        wait_for(lambda: abs(rig2.physics()["theta"][1] - 0.5) < 0.03, 20.0, "the knee at its goal")
    finally:
        rig2.h.remove(node)


# ---------------------------------------------------------------------------------------------- refused at set-up
REFUSALS = {  # the knee's EEPROM item the set-up refuses, and what the one line says of it
    "mode": ("Operating Mode", 1, "joint 'knee') is in Operating Mode 1 (velocity)"),
    "limits": ("Max Position Limit", 3000, "joint 'knee'): joint limits (-2, 2) rad exceed the servo's Min/Max"),
}


@pytest.mark.parametrize("case", list(REFUSALS))
def test_a_servo_refused_at_set_up_fails_configure_or_is_left_out_under_continue(tmp_path, capfd, case):
    """The knee in velocity mode (Operating Mode 1), or allowing 3000 counts (1.46 rad) only against position_max
    2 rad. ``fail``: configure refused with the one line naming it and the way out. ``continue``: the hip runs, the
    knee is left out as a missing servo is — NaN in joint_states, torque off, no goal ever written to it, goals
    naming it refused, ERROR in /diagnostics, one warning naming it and its mode. Before: configure failed under
    ``continue`` too (the node never active: one servo stopped the whole bus)."""
    item, value, said = REFUSALS[case]
    rig = Rig(tmp_path, 15, ServoLoad.pendulum(0.25, 0.1))
    rig.bus.regs.set(item, value, [1])
    try:
        t0 = time.monotonic()
        node = rig.node("servo_lenient", missing_ids="continue")
        wait_for(lambda: node.active and rig.pub_names.get_subscription_count() and rig.states, 20.0, "active")
        m = rig.states[-1]
        assert math.isfinite(m.position[0]) and math.isnan(m.position[1])

        def status(joint: str):  # the node's own (a node before it in the rig named the same joints)
            name = f"{node.get_fully_qualified_name()}: {joint}"
            return next((s for d in reversed(list(rig.diags)) for s in d.status if s.name == name), None)

        wait_for(lambda: status("knee") is not None and status("hip") is not None, 20.0, "diagnostics")
        s = status("knee")
        assert s.level == DiagnosticStatus.ERROR and "refused at set-up, left out" in s.message and said in s.message
        wait_for(lambda: status("hip").level == DiagnosticStatus.OK, 20.0, "the hip OK")
        rejected = node.gate.rejected
        rig.pub.publish(Float64MultiArray(data=[0.3, 0.3]))
        wait_for(lambda: node.gate.rejected > rejected, 20.0, "a goal naming the knee refused")
        assert "joint 'knee' (id 2) (refused at set-up: left out)" in node.gate.last_reason, node.gate.last_reason
        rig.pub_names.publish(JointState(name=["hip"], position=[0.4]))
        wait_for(lambda: abs(rig.physics()["theta"][0] - 0.4) < 0.03, 20.0, "the hip at its goal")
        assert list(rig.torque()) == [1, 0] and abs(rig.physics()["theta"][1]) < 1e-6  # the knee never driven
        tr = rig.truth()
        assert not ((tr["wr_t"] > t0) & (tr["wr_id"] == 2) & (tr["wr_addr"] == GAIN_GOAL_DATA_ADDR)).any()
        assert rig.bus.regs.get(item)[1] == value, "never written (the user's EEPROM item)"
        rig.h.remove(node)
        strict = rig.node("servo_strict", autostart=False)
        assert not rig.change("servo_strict", Transition.TRANSITION_CONFIGURE)
        reason = strict.disconnect_reason
        assert said in reason and "missing_ids=fail (missing_ids:=continue starts without it)" in reason, reason
    finally:
        rig.close()
    err = capfd.readouterr().err
    lines = [ln for ln in err.splitlines() if "left out (missing_ids=continue)" in ln]
    assert len(lines) == 1 and said in lines[0] and "[WARN]" in lines[0], err[-3000:]


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
        wait_for(lambda: desired.get_subscription_count() and states.get_subscription_count(), 20.0, "discovery")
        point = JointTrajectoryPoint(
            positions=[0.3, 0.2], velocities=[0.0, 0.0], accelerations=[0.0, 0.0], time_from_start=Duration()
        )
        desired.publish(JointTrajectory(joint_names=joints, points=[point]))
        wait_for(lambda: ff.pose.waiting is not None, 20.0, "the desired trajectory, waiting for the pose")
        before = ff.rejected

        def unread():  # the error kept as seen: the 1 s diagnostics timer clears last_error
            states.publish(JointState(name=joints, position=[0.1, math.nan], velocity=[0.0, 0.0], effort=[0.0, 0.0]))
            return ff.rejected - before >= 10 and ff.last_error

        why = wait_for(unread, 20.0, "the NaN states seen")
        assert ff.ticks == 0 and not goals
        assert "pendulum_2" in why and "pendulum_1" not in why, why

        def run():
            states.publish(JointState(name=joints, position=[0.1, 0.2], velocity=[0.0, 0.0], effort=[0.0, 0.0]))
            return goals

        wait_for(run, 20.0, "goals once every joint is read")
