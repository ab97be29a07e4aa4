"""``<prefix>/follow_joint_trajectory`` (control_msgs/action/FollowJointTrajectory) and ``/dynamic_joint_states`` of
servo_sim_node (pendulum load, node clock), driven over DDS by a separate rclpy ActionClient as MoveIt drives
a JointTrajectoryController: success within the goal tolerance with feedback, path and goal tolerance
violations, cancel, rejected goals, preemption, deactivation; and the interfaces' type hashes."""

from __future__ import annotations

import numpy as np
import pytest
from nodes_harness import PENDULUM_SIM, RosHarness, sim_node, wait_for

pytest.importorskip("rclpy")
try:
    from control_msgs.action import FollowJointTrajectory
    from control_msgs.msg import DynamicJointState, JointTolerance
except ImportError as e:  # generated at set-up by tools/build_interfaces.py (a ROS install has its own)
    pytest.skip(f"control_msgs not importable ({e}): run tools/build_interfaces.py", allow_module_level=True)
from action_msgs.msg import GoalStatus  # noqa: E402
from builtin_interfaces.msg import Duration  # noqa: E402
from lifecycle_msgs.msg import Transition  # noqa: E402
from lifecycle_msgs.srv import ChangeState  # noqa: E402
from rcl_interfaces.msg import Parameter as ParameterMsg  # noqa: E402
from rcl_interfaces.msg import ParameterType, ParameterValue  # noqa: E402
from rcl_interfaces.srv import SetParameters  # noqa: E402
from rclpy.action import ActionClient  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from trajectory_msgs.msg import JointTrajectoryPoint  # noqa: E402

JOINTS = PENDULUM_SIM["joints"]
Result = FollowJointTrajectory.Result
# control_msgs 5.8.0 (jazzy): RIHS01 type hashes of the upstream definitions (rosidl_generator_type_description)
HASH_DYNAMIC_JOINT_STATE = "RIHS01_18024c98a62697680f581108eeed40b28fb4542fa0ac5a8e36f56c62b6813d26"
HASH_FJT_FEEDBACK_MESSAGE = "RIHS01_80398fcb9674a79081a9906e2ccf0c804dd7cb15e22e362e606ee87186beab71"


@pytest.fixture(scope="module")
def ros():
    h = RosHarness(salt=11)
    sim = sim_node(h, **PENDULUM_SIM)
    client = h.make_node("fjt_test_client")
    action = ActionClient(client, FollowJointTrajectory, "servo/follow_joint_trajectory")
    states: list[JointState] = []
    client.create_subscription(JointState, "joint_states", states.append, 50)
    assert action.wait_for_server(timeout_sec=15.0), "servo/follow_joint_trajectory not available"
    wait_for(lambda: states, 20.0, "joint_states")
    yield h, sim, client, action, states
    h.shutdown()


def position(states) -> np.ndarray:
    n = len(states)
    wait_for(lambda: len(states) > n, 20.0, "a new joint_states message")
    return np.array(states[-1].position)


def goal_msg(targets, duration: float, path_tol=None, goal_tol=None, goal_time: float = 5.0, joints=JOINTS):
    """A goal from the present position to ``targets`` (one point per row) over ``duration`` [s] each."""
    goal = FollowJointTrajectory.Goal()
    goal.trajectory.joint_names = list(joints)
    for k, q in enumerate(np.atleast_2d(targets)):
        t = duration * (k + 1)
        goal.trajectory.points.append(
            JointTrajectoryPoint(
                positions=[float(x) for x in q],
                velocities=[0.0] * len(q),
                time_from_start=Duration(sec=int(t), nanosec=int(round((t % 1) * 1e9))),
            )
        )
    goal.path_tolerance = [JointTolerance(name=n, position=p) for n, p in (path_tol or {}).items()]
    goal.goal_tolerance = [JointTolerance(name=n, position=p) for n, p in (goal_tol or {}).items()]
    goal.goal_time_tolerance = Duration(sec=int(goal_time), nanosec=int(round((goal_time % 1) * 1e9)))
    return goal


def send(action, goal, feedback: list | None = None):
    """The goal handle once the server answered (accepted or not)."""
    future = action.send_goal_async(goal, feedback_callback=None if feedback is None else feedback.append)
    wait_for(future.done, 20.0, "the goal response")
    return future.result()


def result_of(handle, timeout: float = 30.0):
    future = handle.get_result_async()
    wait_for(future.done, timeout, "the action result")
    return future.result()


def test_goal_succeeds_within_goal_tolerance_with_feedback(ros):
    h, sim, client, action, states = ros
    raw: list = []  # every feedback message (the client drops those that arrive after the result)
    client.create_subscription(
        FollowJointTrajectory.Impl.FeedbackMessage, "servo/follow_joint_trajectory/_action/feedback", raw.append, 500
    )
    target = position(states) + [0.4, 0.3]
    feedback: list = []
    handle = send(action, goal_msg(target, 1.0, goal_tol={"shoulder": 0.1, "elbow": 0.1}), feedback)
    assert handle.accepted
    res = result_of(handle)
    assert res.status == GoalStatus.STATUS_SUCCEEDED, res.result.error_string
    assert res.result.error_code == Result.SUCCESSFUL
    assert np.abs(position(states) - target).max() < 0.1
    assert len(feedback) > 5  # the latest state at action_monitor_rate (20 Hz) while the goal runs (1 s)
    mine = bytes(handle.goal_id.uuid)

    def past_end():
        return [
            m.feedback for m in list(raw) if bytes(m.goal_id.uuid) == mine and m.feedback.desired.time_from_start.sec
        ]

    def within(f) -> bool:  # the goal tolerance: position 0.1 rad, velocity constraints.stopped_velocity_tolerance
        return np.abs(f.error.positions).max() < 0.1 and np.abs(f.actual.velocities).max() <= 0.01

    wait_for(lambda: any(within(f) for f in past_end()), 20.0, "the feedback of the state judged")
    n = len(states)
    wait_for(lambda: len(states) > n + 20, 20.0, "joint_states after it")
    samples = past_end()
    # success on the first sample past the end within the goal tolerance, and no feedback after it
    assert within(samples[-1]) and not any(within(f) for f in samples[:-1])
    fb = samples[-1]
    assert list(fb.joint_names) == JOINTS
    np.testing.assert_allclose(fb.desired.positions, target, atol=1e-9)  # past the end: the end point
    np.testing.assert_allclose(fb.error.positions, np.subtract(fb.desired.positions, fb.actual.positions))
    assert sim.traj is None and np.allclose(sim.gate.goal, target)  # the last point is held


def test_path_tolerance_violation_aborts_and_holds(ros):
    h, sim, client, action, states = ros
    setter = client.create_client(SetParameters, "servo_sim/set_parameters")

    def set_kp(kp: list[float]) -> None:
        value = ParameterValue(type=ParameterType.PARAMETER_DOUBLE_ARRAY, double_array_value=kp)
        assert (
            h.call(setter, SetParameters.Request(parameters=[ParameterMsg(name="kp", value=value)]))
            .results[0]
            .successful
        )

    kp = list(sim.kp)
    set_kp([2.0, 2.0])  # a soft servo cannot follow a fast trajectory
    try:
        start = position(states)
        target = start + [0.8, 0.0]
        handle = send(action, goal_msg(target, 0.4, path_tol={"shoulder": 0.02}))
        assert handle.accepted
        res = result_of(handle)
        assert res.status == GoalStatus.STATUS_ABORTED
        assert res.result.error_code == Result.PATH_TOLERANCE_VIOLATED
        assert "shoulder position error" in res.result.error_string, res.result.error_string
        # held where it was when the tolerance was exceeded: far from the trajectory's end point
        assert sim.traj is None and abs(sim.gate.goal[0] - target[0]) > 0.3
    finally:
        set_kp(kp)


def test_goal_tolerance_violation_after_goal_time(ros):
    h, sim, client, action, states = ros
    target = position(states) + [0.2, 0.0]
    handle = send(action, goal_msg(target, 0.3, goal_tol={"shoulder": 1e-6}, goal_time=0.3))
    assert handle.accepted
    res = result_of(handle)
    assert res.status == GoalStatus.STATUS_ABORTED
    assert res.result.error_code == Result.GOAL_TOLERANCE_VIOLATED
    assert "goal_time_tolerance" in res.result.error_string and "shoulder" in res.result.error_string


def test_cancel_holds_present_position(ros):
    h, sim, client, action, states = ros
    start = position(states)
    target = start + [-0.6, 0.4]
    feedback: list = []
    # 30 s: still on its way whenever the cancel comes (4 s: it had to come within ~2.5 s, a loaded box's DDS)
    handle = send(action, goal_msg(target, 30.0), feedback)
    assert handle.accepted
    wait_for(lambda: len(feedback) > 5, 20.0, "feedback")
    cancel = handle.cancel_goal_async()
    wait_for(cancel.done, 20.0, "the cancel response")
    assert len(cancel.result().goals_canceling) == 1
    res = result_of(handle)
    assert res.status == GoalStatus.STATUS_CANCELED
    assert sim.traj is None and np.abs(sim.gate.goal - target).max() > 0.2  # stopped on the way
    assert np.abs(sim.gate.goal - position(states)).max() < 0.05  # where it is


def test_invalid_goals_are_rejected(ros):
    h, sim, client, action, states = ros
    here = position(states)
    rejected = sim.gate.rejected
    assert not send(action, goal_msg(here, 1.0, joints=["shoulder", "wrist"])).accepted  # unknown joint
    assert not send(action, goal_msg(here + [3.0, 0.0], 1.0)).accepted  # beyond position_max
    empty = goal_msg(here, 1.0)
    empty.trajectory.points = []
    assert not send(action, empty).accepted
    moving = goal_msg(here, 1.0)
    moving.trajectory.points[-1].velocities = [0.5, 0.0]  # JTC: must end at rest
    assert not send(action, moving).accepted
    assert sim.gate.rejected == rejected + 4 and "wrist" in "".join(sim.gate.recent)


def test_new_goal_preempts_the_running_one(ros):
    h, sim, client, action, states = ros
    start = position(states)
    first = send(action, goal_msg(start + [0.5, 0.0], 30.0))  # running whenever the second one comes
    assert first.accepted
    second_target = start + [0.0, 0.2]
    second = send(action, goal_msg(second_target, 1.0, goal_tol={"shoulder": 0.1, "elbow": 0.1}))
    assert second.accepted
    res = result_of(first)
    assert res.status == GoalStatus.STATUS_ABORTED
    assert res.result.error_code == Result.INVALID_GOAL and "preempted" in res.result.error_string
    res2 = result_of(second)
    assert res2.status == GoalStatus.STATUS_SUCCEEDED, res2.result.error_string
    assert np.abs(position(states) - second_target).max() < 0.1


def test_deactivate_aborts_and_inactive_rejects(ros):
    h, sim, client, action, states = ros
    change = client.create_client(ChangeState, "servo_sim/change_state")

    def transition(tid: int) -> bool:
        return h.call(change, ChangeState.Request(transition=Transition(id=tid)), timeout=15.0).success

    start = position(states)
    handle = send(action, goal_msg(start + [0.5, 0.0], 30.0))  # running whenever the deactivation comes
    assert handle.accepted
    try:
        assert transition(Transition.TRANSITION_DEACTIVATE)
        res = result_of(handle)
        assert res.status == GoalStatus.STATUS_ABORTED and "deactivate" in res.result.error_string
        assert not send(action, goal_msg(start, 1.0)).accepted
    finally:
        assert transition(Transition.TRANSITION_ACTIVATE)
    assert send(action, goal_msg(position(states), 0.2)).accepted


def test_torque_off_aborts_the_goal_and_drops_its_trajectory(ros):
    """torque_enable false mid-goal: the goal is aborted (INVALID_GOAL, saying torque went off) and its trajectory
    dropped, the goal written stays where it was (before: the trajectory kept writing goals to the limp servos and
    the goal was reported SUCCEEDED with the joints at a third of the way); torque on holds where they stand."""
    from std_srvs.srv import SetBool

    h, sim, client, action, states = ros
    torque = client.create_client(SetBool, "servo/torque_enable")
    start = position(states)
    feedback: list = []
    handle = send(action, goal_msg(start + [0.5, 0.3], 2.0), feedback)
    assert handle.accepted
    wait_for(lambda: len(feedback) > 3, 20.0, "the goal running")
    try:
        r = h.call(torque, SetBool.Request(data=False))
        res = result_of(handle)
        assert res.status == GoalStatus.STATUS_ABORTED and res.result.error_code == Result.INVALID_GOAL, res.status
        assert "torque was switched off" in res.result.error_string, res.result.error_string
        assert r.success and "dropped the trajectory being followed and the follow_joint_trajectory goal" in r.message
        assert sim.traj is None
        written, ticks = sim.sim.goal.copy(), sim.ticks
        wait_for(lambda: sim.ticks > ticks + 100, 20.0, "100 periods after")
        np.testing.assert_array_equal(sim.sim.goal, written)  # nothing more written to the limp servos
        late = send(action, goal_msg(start + [0.5, 0.3], 2.0), [])  # before: accepted, followed by limp servos
        assert not late.accepted and "torque is off" in sim.gate.last_reason, sim.gate.last_reason
    finally:
        r = h.call(torque, SetBool.Request(data=True))
        assert r.success and "holding the present position" in r.message, r.message


def test_dynamic_joint_states_and_type_hashes(ros):
    h, sim, client, action, states = ros
    dyn: list = []
    client.create_subscription(DynamicJointState, "dynamic_joint_states", dyn.append, 50)

    def matched():  # a dynamic_joint_states message and the joint_states of the same period
        by_stamp = {(m.header.stamp.sec, m.header.stamp.nanosec): m for m in list(states)[-500:]}
        pairs = [(d, by_stamp.get((d.header.stamp.sec, d.header.stamp.nanosec))) for d in list(dyn)[-20:]]
        return [(d, js) for d, js in pairs if js is not None]

    d, js = wait_for(matched, 20.0, "dynamic_joint_states matching joint_states")[-1]
    assert list(d.joint_names) == JOINTS
    for j, iv in enumerate(d.interface_values):
        assert list(iv.interface_names) == ["position", "velocity", "effort"]
        assert list(iv.values) == [js.position[j], js.velocity[j], js.effort[j]]
    # the same types as control_msgs' own: MoveIt's and ros2_control's tools match them by these hashes
    info = client.get_publishers_info_by_topic(f"{h.ns}/dynamic_joint_states")
    assert [str(i.topic_type_hash) for i in info] == [HASH_DYNAMIC_JOINT_STATE]
    info = client.get_publishers_info_by_topic(f"{h.ns}/servo/follow_joint_trajectory/_action/feedback")
    assert [str(i.topic_type_hash) for i in info] == [HASH_FJT_FEEDBACK_MESSAGE]


def test_a_goal_is_aborted_when_the_physics_diverges_and_none_is_taken_then():
    """MuJoCo arm, NaN written into the state mid-goal: the goal is aborted with the reason (before: no feedback
    and no result until a reset, a cancel never answered); a goal sent meanwhile is rejected (before: accepted, then
    hung as well)."""
    from pathlib import Path

    from rclpy.parameter import Parameter

    from servo_ff.nodes.sim_node import MujocoSimNode

    root = Path(__file__).resolve().parents[1]
    urdf, servos = str(root / "urdf" / "arm2r.urdf"), str(root / "config" / "servos_arm2r.yaml")
    params = {"urdf_path": urdf, "servo_config": servos, "publish_clock": True, "real_time_factor": 1.0,
              "rate_hz": 250.0}  # fmt: skip
    with RosHarness(salt=71) as h:
        sim = h.add(
            MujocoSimNode(
                "servo_sim", **h.node_kwargs(), parameter_overrides=[Parameter(k, value=v) for k, v in params.items()]
            )
        )
        client = h.make_node("fjt_client")
        action = ActionClient(client, FollowJointTrajectory, "servo/follow_joint_trajectory")
        assert action.wait_for_server(timeout_sec=20.0)
        wait_for(lambda: sim.active, 30.0, "the sim active")
        feedback: list = []
        handle = send(action, goal_msg(sim.gate.goal + 0.2, 10.0, joints=sim.joints), feedback)
        assert handle.accepted
        wait_for(lambda: len(feedback) > 3, 20.0, "feedback")
        blown: list = []

        def blow() -> None:
            if not blown:
                sim.servos.data.qvel[0] = float("nan")
                blown.append(1)

        sim.period_taps.append(blow)
        r = result_of(handle)
        assert r.status == GoalStatus.STATUS_ABORTED and r.result.error_code == Result.INVALID_GOAL
        assert "the simulation refused the state: physics diverged" in r.result.error_string, r.result.error_string
        import re

        t = float(re.search(r"diverged at t = ([0-9.]+) s", r.result.error_string).group(1))  # the sim's time, not
        assert abs(t - sim.sim_time_ns * 1e-9) < 0.01, (t, sim.sim_time_ns)  # MuJoCo's reset one (0.001 s before)
        assert not send(action, goal_msg(sim.gate.goal + 0.1, 1.0, joints=sim.joints)).accepted
