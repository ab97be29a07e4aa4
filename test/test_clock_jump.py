"""A jump back of the ROS clock (a bag played in a loop, a simulation restarted under a running stack), over DDS with
an external /clock: the fit node drops its live samples of the old time (a fit across the jump paired goals and
states of different moments), the feed-forward node its desired trajectory and input ages (a negative age read as
fresh), the walk node its plan (published on, its times were the old clock's) and starts again from the measured
pose, a servo node the trajectory it follows (sampled before its start, the goal snapped back to where it
started); each says so in one warning. The core refuses a live stream whose times go back; an ILC trial whose
/joint_states stamps go back ends with that reason (it waited until the new clock reached the old time)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from nodes_harness import RosHarness, rosout_matched, wait_for, watched

from servo_ff.identification.alpha_data import data_from_streams

ROOT = Path(__file__).resolve().parents[1]


def test_a_live_stream_whose_times_go_back_is_refused_not_fitted_across():
    t = np.arange(0.0, 2.0, 0.01)
    data = data_from_streams(t, np.sin(t), t + 0.002, np.sin(t), 12.0, 8.0, 0.01, "live topics")
    assert data.q.size > 150  # in order: taken
    looped = np.concatenate([t[:100], t[:100] + 0.005])  # 1 s, then the same second again (a bag's loop)
    with pytest.raises(ValueError, match=r"live topics: the joint_states times go back at sample 100 \(0\.005 s"):
        data_from_streams(t, np.sin(t), looped, np.sin(looped), 12.0, 8.0, 0.01, "live topics")
    with pytest.raises(ValueError, match="the goal times go back at sample 100"):
        data_from_streams(looped, np.sin(looped), t, np.sin(t), 12.0, 8.0, 0.01, "live topics")


rclpy = pytest.importorskip("rclpy")
import threading  # noqa: E402
import time  # noqa: E402
import types  # noqa: E402

from geometry_msgs.msg import Twist  # noqa: E402
from rcl_interfaces.msg import Log  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from sensor_msgs.msg import BatteryState, Imu, JointState  # noqa: E402
from std_msgs.msg import Float64, Float64MultiArray  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402


def set_clock(pub, node, t: float) -> None:
    """/clock at ``t`` [s] until ``node``'s ROS clock reads it."""
    msg = Clock()
    msg.clock.sec, msg.clock.nanosec = int(t), int(round((t - int(t)) * 1e9))
    target = msg.clock.sec * 1_000_000_000 + msg.clock.nanosec
    wait_for(lambda: pub.publish(msg) or node.get_clock().now().nanoseconds == target, 30.0, f"the clock at {t} s")


def stamped(msg, t: float):
    msg.header.stamp.sec, msg.header.stamp.nanosec = int(t), int(round((t - int(t)) * 1e9))
    return msg


def jump_client(h: RosHarness) -> tuple:
    """The test's node: (node, what /rosout received, its /clock publisher)."""
    client = h.make_node("jump_client")
    rosout: list = []
    client.create_subscription(Log, "/rosout", rosout.append, 100)
    return client, rosout, client.create_publisher(Clock, "/clock", 10)


def trajectory_client(h: RosHarness, node) -> tuple:
    """:func:`jump_client` for a node publishing ``feedforward/trajectory`` from ``joint_states``: (client, rosout,
    /clock publisher, joint_states publisher, the header stamps [s] of the trajectories received)."""
    client, rosout, clock = jump_client(h)
    stamps: list[float] = []
    client.create_subscription(
        JointTrajectory,
        "feedforward/trajectory",
        lambda m: stamps.append(m.header.stamp.sec + m.header.stamp.nanosec * 1e-9),
        50,
    )
    states = client.create_publisher(JointState, "joint_states", 10)
    wait_for(lambda: states.get_subscription_count(), 30.0, "discovery")
    rosout_matched(node, rosout)
    return client, rosout, clock, states, stamps


def pendulum_ff_on_sim_time(h: RosHarness) -> tuple:
    """A feed-forward node on the two pendulums (goal = desired position) under ``use_sim_time``, and the test's
    node: (ff, /clock publisher, goals on servo/commands, joint_states and feedforward/trajectory publishers)."""
    from std_msgs.msg import Float64MultiArray

    from servo_ff.nodes.feedforward_node import FeedForwardNode

    params = {"urdf_path": str(ROOT / "urdf" / "pendulums2.urdf"), "joints": ["pendulum_1", "pendulum_2"],
              "kp": [8.0], "enabled": False, "use_sim_time": True}  # fmt: skip
    overrides = [Parameter(k, value=v) for k, v in params.items()]
    ff = h.add(FeedForwardNode("servo_feedforward", **h.node_kwargs(), parameter_overrides=overrides))
    client, _, clock = jump_client(h)
    goals: list[list[float]] = []
    client.create_subscription(Float64MultiArray, "servo/commands", lambda m: goals.append(list(m.data)), 10)
    states = client.create_publisher(JointState, "joint_states", 10)
    desired = client.create_publisher(JointTrajectory, "feedforward/trajectory", 10)
    wait_for(lambda: states.get_subscription_count() and desired.get_subscription_count(), 30.0, "discovery")
    return ff, clock, goals, states, desired


def said(rosout: list, node, text: str) -> list[str]:
    return [m.msg for m in rosout if m.name.endswith(node.get_name()) and text in m.msg]


def live_fit(h: RosHarness) -> tuple:
    """A fit node on live topics (pendulum_1, window 6 s, sim time at 100 s) and the test's publishers: (fit node,
    what /rosout received, /clock, joint_states and servo/commands publishers)."""
    from servo_ff.nodes.fit_node import FitNode

    params = {"joint": "pendulum_1", "urdf_path": str(ROOT / "urdf" / "pendulums2.urdf"), "source": "topics",
              "run_on_start": False, "joints": ["pendulum_1"], "kp": 8.0, "window": 6.0, "output": "",
              "feedforward_node": "", "use_sim_time": True}  # fmt: skip
    overrides = [Parameter(k, value=v) for k, v in params.items()]
    fit = h.add(FitNode("servo_fit", **h.node_kwargs(), parameter_overrides=overrides))
    client, rosout, clock = jump_client(h)
    states = client.create_publisher(JointState, "joint_states", 50)
    goals = client.create_publisher(Float64MultiArray, "servo/commands", 50)
    wait_for(lambda: states.get_subscription_count() and goals.get_subscription_count(), 30.0, "discovery")
    rosout_matched(fit, rosout)
    set_clock(clock, fit, 100.0)
    return fit, rosout, clock, states, goals


def test_fit_node_drops_the_live_samples_of_the_old_time():
    with RosHarness(salt=91) as h:
        fit, rosout, clock, states, goals = live_fit(h)

        def stream(t0: float, n: int) -> None:
            for k in range(n):
                states.publish(stamped(JointState(name=["pendulum_1"], position=[0.01 * k]), t0 + 0.01 * k))
                goals.publish(Float64MultiArray(data=[0.01 * k]))

        stream(100.0, 20)
        wait_for(lambda: len(fit.buffer) == 20 and len(fit.goals) == 20, 30.0, "20 samples of the old time")
        set_clock(clock, fit, 100.5)  # forward (a simulation faster than real time): nothing dropped
        assert len(fit.buffer) == 20 and len(fit.goals) == 20  # the callback ran before the clock read 100.5
        set_clock(clock, fit, 1.0)  # 99.5 s back
        wait_for(lambda: not fit.buffer and not fit.goals, 30.0, "the old time's samples dropped")
        lines = wait_for(lambda: said(rosout, fit, "the clock jumped back 99.500 s"), 30.0, "the warning")
        assert "dropped (20 joint_states, 20 goals, 0 voltages)" in lines[0], lines
        states.publish(stamped(JointState(name=["pendulum_1"], position=[0.2]), 100.2))  # queued behind the jump
        wait_for(lambda: said(rosout, fit, "joint_states refused for the live fit"), 30.0, "the old time's state")
        assert not fit.buffer  # stamped 99 s ahead of the new clock: refused, not stored
        stream(1.0, 20)
        wait_for(lambda: len(fit.buffer) == 20, 30.0, "20 samples of the new time")
        assert max(t for t, _ in fit.buffer) < 2.0 and len(said(rosout, fit, "jumped back")) == 1


def test_feedforward_node_drops_its_trajectory_and_input_ages():
    pytest.importorskip("pinocchio")
    from servo_ff.nodes.feedforward_node import FeedForwardNode

    with RosHarness(salt=92) as h:
        params = {"urdf_path": str(ROOT / "urdf" / "op3.urdf"), "mode": "floating", "kp": [280.0],
                  "alpha_file": str(ROOT / "config" / "alpha_op3.yaml"), "use_sim_time": True}  # fmt: skip
        ff = h.add(
            FeedForwardNode(
                "servo_feedforward",
                **h.node_kwargs(),
                parameter_overrides=[Parameter(k, value=v) for k, v in params.items()],
            )
        )
        joints = list(ff.joints)
        client, rosout, clock = jump_client(h)
        states = client.create_publisher(JointState, "joint_states", 10)
        desired = client.create_publisher(JointTrajectory, "feedforward/trajectory", 10)
        imu = client.create_publisher(Imu, "imu/data", 10)
        support = client.create_publisher(Float64, "support_coefficient", 10)
        wait_for(lambda: all(p.get_subscription_count() for p in (states, desired, imu, support)), 30.0, "discovery")
        rosout_matched(ff, rosout)
        set_clock(clock, ff, 100.0)
        wait_for(lambda: states.publish(JointState(name=joints, position=[0.0] * len(joints))) or ff._js_sub is None,
                 30.0, "the pose taken")  # fmt: skip
        level = Imu()
        level.orientation.w = 1.0

        def inputs(t: float) -> None:  # published once, then waited on: a copy in flight could land after the jump
            imu.publish(stamped(level, t))
            support.publish(Float64(data=0.5))
            wait_for(lambda: ff.imu_input.age.at == pytest.approx(t) and ff.support.age.at is not None, 30.0, "taken")

        inputs(99.99)
        point = JointTrajectoryPoint(positions=[0.0] * len(joints), velocities=[0.0] * len(joints))
        desired.publish(JointTrajectory(joint_names=joints, points=[point]))
        wait_for(lambda: ff.traj is not None, 30.0, "the desired trajectory")
        set_clock(clock, ff, 1.0)
        wait_for(lambda: ff.traj is None and ff.imu_input.age.at is None and ff.support.age.at is None, 30.0, "dropped")
        lines = wait_for(lambda: said(rosout, ff, "the clock jumped back 99.000 s"), 30.0, "the warning")
        assert "dropped the desired trajectory (no goal until the next one)" in lines[0], lines
        assert "the age of imu/data (none yet)" in lines[0] and "support_coefficient" in lines[0], lines
        assert ff.imu_input.age.state(1.0, 0.5) is None  # none yet: not a negative age read as fresh
        inputs(1.0)
        assert ff.imu_input.age.state(1.0, 0.5) == "0.000 s old"


def walk_on_clock(h: RosHarness, node_class=None, **extra):
    """An OP3 walk node on an external /clock, its trajectory client and probes, the standing pose, and
    ``walk_from(t0, since)``: the clock set to ``t0``, the pose given, the clock on in 20 ms steps until a trajectory
    past the walk's start comes (among ``stamps[since:]``); it returns the clock's time then."""
    from servo_ff.nodes.walk_node import WalkNode

    params = {"urdf_path": str(ROOT / "urdf" / "op3.urdf"), "start_delay": 0.1, "approach_time": 0.3,
              "use_sim_time": True, **extra}  # fmt: skip
    overrides = [Parameter(k, value=v) for k, v in params.items()]
    walk = h.add((node_class or WalkNode)("servo_walk", **h.node_kwargs(), parameter_overrides=overrides))
    client, rosout, clock, states, stamps = trajectory_client(h, walk)
    pose = JointState(name=walk.joints, position=list(walk.engine.q_stand[walk.perm]))

    def walk_from(t0: float, since: int = 0) -> float:
        set_clock(clock, walk, t0)
        wait_for(lambda: states.publish(pose) or walk.t_walk is not None, 60.0, f"the pose taken at {t0} s")
        t = t0
        while not any(s > walk.t_walk for s in stamps[since:]):
            t += 0.02
            set_clock(clock, walk, t)
            assert t < t0 + 30.0, stamps[-3:]
        return t

    return walk, client, rosout, clock, states, stamps, pose, walk_from


@pytest.mark.parametrize("engine_process", [False, True])
def test_walk_node_starts_again_from_the_measured_pose(engine_process):
    pytest.importorskip("placo")

    from servo_ff.nodes.walk_node import WalkNode

    def drop(n, v):  # the plan dropped (q0 back to None): its times still there (a reader that still sees q0 reads
        return (n.t_walk,) if v is None and getattr(n, "q0", None) is not None else None  # t_walk; before: None)

    Watched, dropped = watched(WalkNode, "q0", drop)
    with RosHarness(salt=93) as h:
        walk, client, rosout, clock, states, stamps, pose, walk_from = walk_on_clock(
            h, Watched, engine_process=engine_process
        )
        walk_from(100.0)
        assert min(stamps) >= 100.0
        engine = walk.engine
        set_clock(clock, walk, 5.0)
        wait_for(lambda: walk.q0 is None and walk.new_engine, 30.0, "the plan dropped")
        assert len(dropped) == 1 and dropped[0][0] is not None, dropped
        lines = wait_for(lambda: said(rosout, walk, "the clock jumped back"), 30.0, "the warning")
        assert "dropped the walk plan and cmd_vel" in lines[0], lines
        old_pose = JointState(name=walk.joints, position=[0.3] * len(walk.joints))
        states.publish(stamped(old_pose, 100.9))  # a state of the old time, queued behind the jump: not a pose
        cmd = client.create_publisher(Twist, "cmd_vel", 10)
        forward = Twist()
        forward.linear.x = 0.05
        wait_for(lambda: cmd.publish(forward) or walk.cmd_time is not None, 30.0, "a cmd_vel after the jump")
        assert walk.q0 is None
        n = len(stamps)
        walk_from(5.0, n)
        after = stamps[n:]
        assert after and all(5.0 <= s < 40.0 for s in after), after  # the new clock's trajectories, from the pose
        assert walk.engine is not engine and not walk.new_engine
        np.testing.assert_allclose(walk.q0, pose.position)  # the pose of the new time, not the old one's 0.3 rad
        assert walk.engine.cmd == (0.05, 0.0, 0.0)  # the cmd_vel that came after the jump, on the new engine


def test_walk_node_starts_again_from_the_measured_pose_after_a_jump_forward():
    """/clock jumps forward 20 s (a bag skipped ahead, a simulation fast-forwarded). Before: the walk node planned
    every dt sample of the skipped time in one timer callback (placo in process: 7 s of wall time, the executor held;
    audit 20a e4) and said nothing; now a jump beyond clock_jump.FORWARD_JUMP (1 s) drops the plan as a jump back
    does, in one warning, and the walk starts again from the measured pose. A step of 0.5 s is time passing."""
    pytest.importorskip("placo")

    with RosHarness(salt=97) as h:
        walk, client, rosout, clock, states, stamps, pose, walk_from = walk_on_clock(h)
        t = walk_from(100.0) + 0.5
        set_clock(clock, walk, t)  # a coarse clock's step: time passing
        wait_for(lambda: any(s >= t - 0.05 for s in stamps), 30.0, "a trajectory after the 0.5 s step")
        assert walk.q0 is not None and not said(rosout, walk, "the clock jumped")
        set_clock(clock, walk, t + 20.0)
        wait_for(lambda: walk.q0 is None and walk.new_engine, 30.0, "the plan dropped")
        lines = wait_for(lambda: said(rosout, walk, "the clock jumped forward 20.0"), 30.0, "the warning")
        assert len(lines) == 1 and "dropped the walk plan and cmd_vel" in lines[0], lines
        n = len(stamps)
        walk_from(t + 20.0, n)
        after = stamps[n:]
        assert after and all(s >= t + 20.0 for s in after), after  # planned from the new time, not the skipped one
        np.testing.assert_allclose(walk.q0, pose.position)


def test_an_ilc_trial_ends_when_the_joint_states_stamps_go_back():
    from servo_ff.nodes.ilc_trials import NO_WAITER, ILCTrials, recorded

    with pytest.raises(RuntimeError, match=r"went back in time \(1\.000 s after 100\.010 s\): the clock jumped back"):
        recorded([(100.0, 0.1), (100.01, 0.1), (1.0, 0.1)], "j")
    assert recorded([(1.0, 0.0), (1.0, 0.1), (1.01, 0.2)], "j").shape == (3, 2)  # an equal stamp is no jump

    trial = ILCTrials()  # the trial's wait for its last stamp, on its own: the node's state it reads
    trial.js_ns, trial._wake_ns, trial._js_seen = 100_000_000_000, NO_WAITER, threading.Condition()
    trial.context, trial.table = types.SimpleNamespace(ok=lambda: True), {"joint": "j"}

    def restarted_sim() -> None:  # once the trial waits: states of a clock started again at 1 s
        wait_for(lambda: trial._wake_ns != NO_WAITER, 10.0, "the trial waiting")
        with trial._js_seen:
            trial.js_ns = 1_000_000_000
            trial._js_seen.notify_all()

    threading.Thread(target=restarted_sim, daemon=True).start()
    with pytest.raises(RuntimeError, match=r"went back in time \(1\.000 s after 100\.000 s\)"):
        trial._wait_stamp(102_000_000_000)  # before: waited until the stall timeout (10 s), then another reason


def test_an_ilc_trial_is_learned_only_from_states_covering_it():
    """Stream trials (and trajectory ones) need /joint_states stamped over the trial: before, a stream trial
    interpolated stamps of another clock (100 s back) onto its grid — one held value — and learned from it."""
    from servo_ff.nodes.ilc_trials import covering

    grid = 200.0 + np.arange(100) * 0.01
    covering(np.array([[199.99, 0.1], [201.0, 0.2]]), grid, "j")
    covering(np.array([[200.03, 0.1], [200.96, 0.2]]), grid, "j", tol=0.05)  # a state period late at each end
    for rows in ([[100.0, 0.1], [100.99, 0.2]], [[200.0, 0.1], [200.5, 0.2]], [[200.1, 0.1], [201.0, 0.2]]):
        with pytest.raises(RuntimeError, match=r"/joint_states of j \(stamped .*\) do not cover the trial"):
            covering(np.array(rows), grid, "j", tol=0.05)


def test_a_servo_node_drops_the_trajectory_it_follows_and_keeps_its_goal():
    """A sim following an external /clock, half-way through a trajectory from 0 to 0.5 rad: the clock jumps back.
    Before, the goal went back to the trajectory's first point (0 rad: a snap); now it stays at its last sample."""

    with RosHarness(salt=94) as h:
        sim, rosout, clock, traj, _ = sim_on_a_clock(h)
        for k in range(1, 51):  # to 101.0 s in 20 ms steps: half-way
            set_clock(clock, sim, 100.0 + 0.02 * k)
        wait_for(lambda: sim.gate.goal[0] > 0.2, 30.0, "the goal half-way")
        set_clock(clock, sim, 5.0)
        wait_for(lambda: sim.traj is None, 30.0, "the trajectory dropped")
        half = float(sim.gate.goal[0])
        for k in range(1, 11):  # the sim steps on in the new time
            set_clock(clock, sim, 5.0 + 0.02 * k)
        assert 0.2 < half < 0.3 and sim.gate.goal[0] == half  # no snap back to 0
        lines = wait_for(lambda: said(rosout, sim, "the clock jumped back 96."), 30.0, "the warning")
        assert "dropped the trajectory being followed (the goal stays at its last sample)" in lines[0], lines


def test_a_follow_joint_trajectory_goal_is_aborted_when_the_clock_jumps_back():
    from builtin_interfaces.msg import Duration
    from nodes_harness import sim_node
    from rclpy.action import ActionClient

    action_types = pytest.importorskip("control_msgs.action")
    fjt = action_types.FollowJointTrajectory
    with RosHarness(salt=95) as h:
        sim = sim_node(h, joints=["a"], rate_hz=100.0, model="m1", use_sim_time=True, physics_dt=0.005,
                       position_min=[-1.0], position_max=[1.0])  # fmt: skip
        client, _, clock = jump_client(h)
        action = ActionClient(client, fjt, "servo/follow_joint_trajectory")
        wait_for(lambda: clock.get_subscription_count(), 30.0, "discovery")
        assert action.wait_for_server(timeout_sec=15.0)
        set_clock(clock, sim, 100.0)
        goal = fjt.Goal()
        goal.trajectory.joint_names = ["a"]
        goal.trajectory.points = [JointTrajectoryPoint(positions=[0.5], time_from_start=Duration(sec=2))]
        sent = action.send_goal_async(goal)
        wait_for(sent.done, 30.0, "the goal accepted")
        handle = sent.result()
        assert handle.accepted
        result = handle.get_result_async()
        for k in range(1, 26):  # a quarter of the way
            set_clock(clock, sim, 100.0 + 0.02 * k)
        assert not result.done()
        set_clock(clock, sim, 5.0)
        wait_for(result.done, 30.0, "the goal's result")
        r = result.result()
        assert r.status == 6 and r.result.error_code == fjt.Result.INVALID_GOAL  # GoalStatus.STATUS_ABORTED
        assert "the clock jumped back" in r.result.error_string, r.result.error_string
        # a goal past its trajectory's end, waiting on a goal tolerance it does not meet (goal_time 100 s)
        msgs = pytest.importorskip("control_msgs.msg")
        goal.trajectory.points = [JointTrajectoryPoint(positions=[0.1], time_from_start=Duration(nanosec=100_000_000))]
        goal.goal_tolerance = [msgs.JointTolerance(name="a", position=1e-9)]
        goal.goal_time_tolerance = Duration(sec=100)
        sent = action.send_goal_async(goal)
        wait_for(sent.done, 30.0, "the second goal accepted")
        result = sent.result().get_result_async()
        for k in range(1, 26):  # 0.5 s: past the end (0.1 s)
            set_clock(clock, sim, 5.0 + 0.02 * k)
        wait_for(lambda: sim.traj is None, 30.0, "the trajectory ended")
        assert not result.done()  # still judged on its goal tolerance
        set_clock(clock, sim, 2.0)
        wait_for(result.done, 30.0, "the second goal's result")
        assert result.result().status == 6 and "clock jumped back" in result.result().result.error_string


def walker_with_client(h: RosHarness, **params) -> tuple:
    """servo_walker_node on waypoints of joints a, b on sim time (``params`` added or replaced) and
    :func:`trajectory_client`: (walker, client, rosout, /clock, joint_states publisher, trajectory stamps)."""
    from servo_ff.nodes.walker_node import WalkerNode

    base = {"pattern": "waypoints", "joints": ["a", "b"], "loops": 1, "start_delay": 0.1, "approach_time": 0.3,
            "use_sim_time": True}  # fmt: skip
    overrides = [Parameter(k, value=v) for k, v in {**base, **params}.items()]
    walker = h.add(WalkerNode("servo_walker", **h.node_kwargs(), parameter_overrides=overrides))
    return (walker, *trajectory_client(h, walker))


def test_the_walker_plays_its_pattern_again_from_the_measured_pose():
    """servo_walker_node (waypoints, an arm's): before, its messages after the jump were stamped in the old time's
    future, and a follower held their first point (the pose the pattern started from in the old time)."""
    with RosHarness(salt=96) as h:
        walker, client, rosout, clock, states, stamps = walker_with_client(h, waypoints=[0.2, -0.2, 0.4, 0.0])

        def play_from(t0: float, pose: list[float]) -> None:
            set_clock(clock, walker, t0)
            msg = JointState(name=["a", "b"], position=pose)
            wait_for(
                lambda: states.publish(stamped(msg, t0)) or walker.pattern is not None, 30.0, f"the pose at {t0} s"
            )
            for k in range(1, 11):
                set_clock(clock, walker, t0 + 0.1 * k)

        play_from(100.0, [0.0, 0.0])
        assert stamps and min(stamps) >= 100.0
        set_clock(clock, walker, 5.0)
        wait_for(lambda: walker.pattern is None, 30.0, "the pattern dropped")
        lines = wait_for(lambda: said(rosout, walker, "the clock jumped back 96."), 30.0, "the warning")
        assert "dropped the pattern in play" in lines[0], lines
        states.publish(stamped(JointState(name=["a", "b"], position=[0.9, 0.9]), 100.5))  # the old time's: not a pose
        n = len(stamps)
        play_from(5.0, [0.1, -0.1])
        np.testing.assert_allclose(walker.pattern.q[0], [0.1, -0.1])  # from the new time's pose
        assert stamps[n:] and all(5.0 <= s < 10.0 for s in stamps[n:]), stamps[n:]


def test_a_hardware_node_drops_the_trajectory_it_follows_and_keeps_the_goal_on_the_bus(tmp_path):
    """The hardware node on a virtual Dynamixel bus (a pty; pendulum loads), its loop on the ROS clock
    (``use_sim_time``): half-way through a trajectory the clock jumps back. The goal written to the servo stays at
    its last sample; before, the node sampled the trajectory before its start and wrote its first point."""
    from builtin_interfaces.msg import Duration
    from hardware_rig import COUNT, Rig

    from servo_ff.bus.bus_types import GAIN_GOAL_DATA_ADDR
    from servo_ff.bus.virtual_bus import ServoLoad

    rig = Rig(tmp_path, 97, ServoLoad.pendulum(0.25, 0.1))
    try:
        hw = rig.node("servo_hw", use_sim_time=True, health_period=1000.0)  # no health read after the jump
        client, rosout, clock = jump_client(rig.h)
        supply: list = []
        client.create_subscription(BatteryState, "servo_supply", supply.append, 50)
        traj = client.create_publisher(JointTrajectory, "servo/joint_trajectory", 10)
        wait_for(lambda: clock.get_subscription_count() and traj.get_subscription_count(), 30.0, "discovery")
        rosout_matched(hw, rosout)
        set_clock(clock, hw, 100.0)
        wait_for(lambda: hw.active, 30.0, "the node active")
        start = rig.bus.goal.copy()  # the reading held at activate
        end = JointTrajectoryPoint(positions=[float(start[0]) + 0.5, float(start[1])], time_from_start=Duration(sec=2))
        traj.publish(stamped(JointTrajectory(joint_names=["hip", "knee"], points=[end]), 100.0))
        wait_for(lambda: hw.traj is not None, 30.0, "the trajectory followed")
        for k in range(1, 51):  # to 101.0 s in 20 ms steps: half-way
            set_clock(clock, hw, 100.0 + 0.02 * k)
        wait_for(lambda: rig.bus.goal[0] - start[0] > 0.2, 30.0, "the goal on the bus half-way")
        set_clock(clock, hw, 5.0)
        wait_for(lambda: hw.traj is None, 30.0, "the trajectory dropped")
        half, n_supply = hw.gate.goal.copy(), len(supply)  # the held goal (the bus may be a cycle behind)
        t_drop = 0.0
        for k in range(1, 11):  # the node cycles on in the new time
            set_clock(clock, hw, 5.0 + 0.02 * k)
            t_drop = time.monotonic() if k == 2 else t_drop  # its writes from the third cycle on (none in flight)
        assert 0.2 < half[0] - start[0] < 0.3  # where the trajectory was at the jump
        np.testing.assert_allclose(rig.bus.goal, half, atol=COUNT)  # no snap back to the start
        tr = rig.truth()  # every goal written to the hip after the drop: the held one (the node writes on)
        w = (tr["wr_t"] > t_drop) & (tr["wr_id"] == 1) & (tr["wr_addr"] == GAIN_GOAL_DATA_ADDR)
        goals = {int.from_bytes(bytes(d[2:6]), "little", signed=True) for d in tr["wr_data"][w]}
        assert w.sum() >= 5 and len(goals) == 1, (w.sum(), goals)
        lines = wait_for(lambda: said(rosout, hw, "the clock jumped back 96."), 30.0, "the warning")
        assert "dropped the trajectory being followed (the goal stays at its last sample), the supply readings" \
            in lines[0], lines  # fmt: skip
        # the voltages read in the old time are not republished stamped there (100 s, the new clock's future)
        # (one published before the jump may still be in flight: the messages after the first without a reading)
        (first, *_) = wait_for(
            lambda: [k for k in range(n_supply, len(supply)) if not supply[k].present],
            30.0,
            "servo_supply after the jump, without a reading",
        )
        late = [m for m in supply[first:] if m.present]
        assert not late, [(m.header.stamp.sec, m.voltage) for m in late]
    finally:
        rig.close()


def test_the_fit_node_fits_only_the_last_window_and_refuses_bad_live_input_in_a_line():
    """Live samples older than ``window`` at the fit are left out (before: a stream that had stopped was fitted as
    live, the buffers trimmed only when messages came); a state stamped 0 or far ahead, a NaN position or goals of
    the wrong length are refused and said (before: a stamp 0 cleared the window, a NaN was stored, others dropped
    unsaid)."""
    with RosHarness(salt=98) as h:
        fit, rosout, clock, states, goals = live_fit(h)
        for k in range(20):
            states.publish(stamped(JointState(name=["pendulum_1"], position=[0.01 * k]), 100.0 + 0.01 * k))
            goals.publish(Float64MultiArray(data=[0.01 * k]))
        wait_for(lambda: len(fit.buffer) == 20 and len(fit.goals) == 20, 30.0, "20 samples")
        for bad in (stamped(JointState(name=["pendulum_1"], position=[0.5]), 0.0),  # unstamped: not 'now'
                    stamped(JointState(name=["pendulum_1"], position=[0.5]), 100_100.0),  # far ahead
                    stamped(JointState(name=["pendulum_1"], position=[math.nan]), 100.5)):  # fmt: skip
            states.publish(bad)
        goals.publish(Float64MultiArray(data=[0.1, 0.2]))  # two values for one joint
        wait_for(lambda: said(rosout, fit, "servo/commands refused for the live fit"), 30.0, "the goal refusal")
        lines = wait_for(lambda: said(rosout, fit, "joint_states refused for the live fit"), 30.0, "the refusal")
        assert "no finite pendulum_1 position stamped within the window (0.000 s)" in lines[0], lines
        assert len(fit.buffer) == 20 and len(fit.goals) == 20  # none stored, none cleared
        assert all(math.isfinite(p) for _, p in fit.buffer)
        js, gl, _ = fit._samples()
        assert len(js) == 20 and len(gl) == 20
        set_clock(clock, fit, 110.0)  # the stream stopped 10 s ago: nothing within the 6 s window at the fit
        js, gl, _ = fit._samples()
        assert len(js) == 0 and len(gl) == 0
        with pytest.raises(ValueError, match=r"not enough live data for pendulum_1 \(joint_states 0, goals 0"):
            fit.fit()
        states.publish(stamped(JointState(name=["gripper"], position=[math.nan]), 110.0))  # another publisher's
        r = fit.set_parameters([Parameter("joint", value="nowhere")])[0]  # a joint the URDF lacks: refused, named
        assert not r.successful and "nowhere" in r.reason, r.reason
        torque = fit.torque
        assert fit.set_parameters([Parameter("joint", value="pendulum_2")])[0].successful  # another joint: its τ_o,
        assert fit.torque is not torque and not fit.buffer and not fit.goals  # the old joint's samples gone
        wait_for(lambda: said(rosout, fit, "fitting pendulum_2 now: the live samples of the old joint dropped"),
                 30.0, "the line")  # fmt: skip
        assert len(said(rosout, fit, "joint_states refused")) == 1  # the gripper's message: not this fit's, unsaid


def test_a_pose_that_is_not_finite_or_from_another_clock_is_not_a_start_pose():
    """The walk and walker nodes' start pose (ros/measured_pose.py): before, a NaN position became q0 and the whole
    approach was published as NaN, unsaid; a pose stamped ahead of the clock was ignored without a word."""
    from servo_ff.ros.measured_pose import measured_pose

    assert measured_pose(["a", "b"], [0.1, 0.2], 5.0, ["b", "a"], 5.0)[0].tolist() == [0.2, 0.1]
    assert measured_pose(["a", "b"], [0.1, 0.2], 5.0, ["a"], 0.0) == (None, None)  # no clock yet: nothing to say
    cases = ((["a", "b"], [math.nan, 0.2], 5.0, "a is nan (not read yet?)"),
             (["a", "b"], [0.1], 5.0, "2 names but 1 positions"), (["a"], [0.1], 5.0, "lacks ['b']"),
             (["a", "b"], [0.1, 0.2], 50.0, "stamped 50.000 s, ahead of the clock"))  # fmt: skip
    for names, pos, stamp, words in cases:
        q, why = measured_pose(names, pos, stamp, ["a", "b"], 5.0)
        assert q is None and words in why, why
    with RosHarness(salt=99) as h:
        walker, client, rosout, clock, states, stamps = walker_with_client(h, waypoints=[0.2, -0.2])
        set_clock(clock, walker, 10.0)
        states.publish(stamped(JointState(name=["a", "b"], position=[math.nan, 0.0]), 10.0))
        wait_for(lambda: said(rosout, walker, "a is nan (not read yet?)"), 30.0, "the refusal")
        assert walker.pattern is None and not stamps
        pose = stamped(JointState(name=["a", "b"], position=[0.1, 0.0]), 10.0)
        wait_for(lambda: states.publish(pose) or walker.pattern is not None, 30.0, "a finite pose taken")
        assert np.isfinite(walker.pattern.q).all()


def test_the_walker_repeats_from_where_its_last_play_ended():
    """repeat: each play's approach starts from the pose the last one ended at. Before, every replay began with a
    point at time 0 holding the pose measured before the first play: the follower's goal stepped back to it."""
    with RosHarness(salt=100) as h:
        walker, client, rosout, clock, states, _ = walker_with_client(
            h, waypoints=[1.0, 0.5], repeat=True, segment_time=0.3, dwell_time=0.2, publish_period=0.05, horizon=0.2
        )
        firsts: list[list[float]] = []
        client.create_subscription(JointTrajectory, "feedforward/trajectory",
                                   lambda m: firsts.append(list(m.points[0].positions)), 100)  # fmt: skip
        set_clock(clock, walker, 10.0)
        pose = stamped(JointState(name=["a", "b"], position=[0.0, 0.0]), 10.0)
        wait_for(lambda: states.publish(pose) or walker.pattern is not None, 30.0, "the pose taken")
        end = walker.pattern.end
        t = 10.0
        while t < 10.0 + 2 * (end + 1.0) + 0.5:  # two plays and a half, in 20 ms steps
            t += 0.02
            set_clock(clock, walker, t)
        wait_for(lambda: len(firsts) > 10, 30.0, "the plays' messages")
        later = firsts[len(firsts) // 2 :]  # from the second play on: never back at the first play's start pose
        assert not any(np.allclose(q, [0.0, 0.0], atol=1e-6) for q in later), later
        np.testing.assert_allclose(walker.pattern.q[0], [1.0, 0.5])  # the replay's approach starts at the last pose


def test_a_pose_read_before_a_jump_back_is_read_again_before_the_first_goal():
    """The feed-forward node took its pose at 1000 s, then the clock jumped back to 3 s (a restarted simulation):
    the pose's age in the new time is negative, which read as fresh — the first goal went out at once from the old
    pose. It is read again first."""
    pytest.importorskip("pinocchio")
    from builtin_interfaces.msg import Duration

    with RosHarness(salt=99) as h:
        ff, clock, goals, states, desired = pendulum_ff_on_sim_time(h)
        set_clock(clock, ff, 1000.0)
        old = JointState(name=["pendulum_1", "pendulum_2"], position=[0.1, 0.2])
        wait_for(lambda: states.publish(old) or ff._js_sub is None, 30.0, "the pose taken")
        set_clock(clock, ff, 3.0)
        # (the node's jump callback ran with the /clock message that set its clock)
        point = JointTrajectoryPoint(positions=[1.0, -1.0], time_from_start=Duration(sec=2))
        desired.publish(JointTrajectory(joint_names=["pendulum_1", "pendulum_2"], points=[point]))
        wait_for(lambda: ff.pose.waiting is not None, 30.0, "the trajectory waiting for a fresh pose")
        assert not goals
        moved = JointState(name=["pendulum_1", "pendulum_2"], position=[0.6, -0.4])
        wait_for(lambda: states.publish(moved) or goals, 30.0, "the first goal")
        assert abs(goals[0][0] - 0.6) < 0.05 and abs(goals[0][1] + 0.4) < 0.05, goals[0]


def test_a_hardware_node_on_sim_time_near_zero_stamps_its_states(tmp_path):
    """A hardware node under ``use_sim_time`` at 500 Hz whose /clock starts near 0 (a simulator's first
    milliseconds): the state's stamp, the read's time on that clock, never goes negative (before: the wall-time
    lag of the read — with the first tick's health read, longer than the 2 ms period — was subtracted from the
    sim time, rclpy's Time refused the negative value and the tick failed)."""
    from hardware_rig import Rig

    from servo_ff.bus.virtual_bus import ServoLoad

    rig = Rig(tmp_path, 96, ServoLoad.pendulum(0.25, 0.1))
    try:
        hw = rig.node("servo_hw", use_sim_time=True, rate_hz=500.0)
        client, rosout, clock = jump_client(rig.h)
        wait_for(lambda: clock.get_subscription_count() and hw.active, 30.0, "discovery, the node active")
        n = len(rig.states)
        for k in range(1, 21):  # 1 ms steps from 0
            set_clock(clock, hw, 1e-3 * k)
        wait_for(lambda: len(rig.states) > n, 30.0, "states on the young clock")
        stamps = [m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for m in rig.states[n:]]
        assert all(0 <= s <= 20_000_000 for s in stamps), stamps  # within the clock's 20 ms, none negative
    finally:
        rig.close()


def test_after_goals_a_jump_back_reads_the_pose_again_before_the_next_first_goal():
    """Goals went out (the joints held at [0.8, 0.9]); the clock jumps back (a restarted simulation, its joints at
    rest at [0, 0]): the next trajectory starts from the pose read in the new time (before: from the last desired
    [0.8, 0.9], a snap back to where the old run was)."""
    pytest.importorskip("pinocchio")
    from builtin_interfaces.msg import Duration

    joints = ["pendulum_1", "pendulum_2"]
    with RosHarness(salt=100) as h:
        ff, clock, goals, states, desired = pendulum_ff_on_sim_time(h)
        set_clock(clock, ff, 1000.0)
        held = stamped(JointState(name=joints, position=[0.8, 0.9]), 1000.0)  # the old run's states
        wait_for(lambda: states.publish(held) or ff._js_sub is None, 30.0, "the pose taken")
        hold = JointTrajectoryPoint(positions=[0.8, 0.9], velocities=[0.0, 0.0], time_from_start=Duration())
        desired.publish(JointTrajectory(joint_names=joints, points=[hold]))
        wait_for(lambda: states.publish(held) or len(goals) > 2, 30.0, "goals holding [0.8, 0.9]")
        set_clock(clock, ff, 3.0)  # (the node's jump callback ran with the /clock message that set its clock)
        # the new run's states; an old one still in flight after the jump (stamped 1000 s) is no pose of this time
        rest = stamped(JointState(name=joints, position=[0.0, 0.0]), 3.0)
        wait_for(lambda: states.publish(rest) or (ff.q_des[ff.out_cols] == 0.0).all(), 30.0, "the pose read again")
        n = len(goals)
        point = JointTrajectoryPoint(positions=[1.0, -1.0], time_from_start=Duration(sec=2))
        desired.publish(JointTrajectory(joint_names=joints, points=[point]))
        wait_for(lambda: states.publish(rest) or len(goals) > n, 30.0, "the first goal in the new time")
        assert abs(goals[n][0]) < 0.05 and abs(goals[n][1]) < 0.05, goals[n]


def sim_on_a_clock(h: RosHarness, seconds: int = 2, action: bool = False) -> tuple:
    """A sim following an external /clock (100 Hz, max_catch_up 0.05 s) at 100 s, given a trajectory from 0 to
    0.5 rad over ``seconds`` (``action``: sent as a follow_joint_trajectory goal) and following it: (sim, rosout,
    /clock, the joint_trajectory publisher, the goal's result future or None)."""
    from builtin_interfaces.msg import Duration
    from nodes_harness import sim_node
    from rclpy.action import ActionClient

    sim = sim_node(h, joints=["a"], rate_hz=100.0, model="m1", use_sim_time=True, physics_dt=0.005,
                   position_min=[-1.0], position_max=[1.0])  # fmt: skip
    client, rosout, clock = jump_client(h)
    traj = client.create_publisher(JointTrajectory, "servo/joint_trajectory", 10)
    wait_for(lambda: clock.get_subscription_count() and traj.get_subscription_count(), 30.0, "discovery")
    rosout_matched(sim, rosout)
    set_clock(clock, sim, 100.0)
    end = JointTrajectoryPoint(positions=[0.5], time_from_start=Duration(sec=seconds))
    result = None
    if action:
        fjt = pytest.importorskip("control_msgs.action").FollowJointTrajectory
        goal = fjt.Goal()
        goal.trajectory = JointTrajectory(joint_names=["a"], points=[end])
        client_action = ActionClient(client, fjt, "servo/follow_joint_trajectory")
        assert client_action.wait_for_server(timeout_sec=15.0)
        sent = client_action.send_goal_async(goal)
        wait_for(sent.done, 30.0, "the goal accepted")
        assert sent.result().accepted
        result = sent.result().get_result_async()
    else:
        traj.publish(stamped(JointTrajectory(joint_names=["a"], points=[end]), 100.0))
    wait_for(lambda: sim.traj is not None, 30.0, "the trajectory followed")
    return sim, rosout, clock, traj, result


def sim_following_a_trajectory(h: RosHarness, action: bool = False) -> tuple:
    """:func:`sim_on_a_clock` half-way through its 2 s trajectory: (sim, rosout, /clock, result future or None)."""
    sim, rosout, clock, _, result = sim_on_a_clock(h, action=action)
    for k in range(1, 51):  # to 101.0 s in 20 ms steps (less than max_catch_up: time passing, caught up)
        set_clock(clock, sim, 100.0 + 0.02 * k)
    wait_for(lambda: sim.gate.goal[0] > 0.2, 30.0, "the goal half-way")
    assert sim.traj is not None and not said(rosout, sim, "jumped forward")  # the first /clock (from 0) is no jump
    return sim, rosout, clock, result


def test_a_sim_drops_the_trajectory_when_its_clock_jumps_forward():
    """The external /clock jumps 30 s forward half-way: before, the trajectory was sampled after the jump, the goal
    went to its end point (0.5 rad) in one tick and the joint followed; no line said it. Now the trajectory is
    dropped as on a jump back (the goal stays at its last sample), the simulation goes on from the new time, and
    one warning names the jump."""
    with RosHarness(salt=98) as h:
        sim, rosout, clock, _ = sim_following_a_trajectory(h)
        set_clock(clock, sim, 131.0)
        wait_for(lambda: sim.traj is None, 30.0, "the trajectory dropped")
        half = float(sim.gate.goal[0])
        for k in range(1, 11):  # the sim steps on in the new time
            set_clock(clock, sim, 131.0 + 0.02 * k)
        assert 0.2 < half < 0.3 and sim.gate.goal[0] == half  # no snap to the end point
        lines = wait_for(lambda: said(rosout, sim, "the clock jumped forward 30.000 s"), 30.0, "the warning")
        assert len(lines) == 1 and "dropped the trajectory being followed" in lines[0], lines
        assert "the time jumped over not simulated beyond max_catch_up (0.05 s of 30.000 s)" in lines[0], lines


def test_a_follow_joint_trajectory_goal_is_aborted_when_the_clock_jumps_forward():
    with RosHarness(salt=99) as h:
        sim, _, clock, result = sim_following_a_trajectory(h, action=True)
        assert not result.done()
        set_clock(clock, sim, 131.0)
        wait_for(result.done, 30.0, "the goal's result")
        r = result.result()
        assert r.status == 6 and r.result.error_code == -1  # GoalStatus.STATUS_ABORTED, INVALID_GOAL
        assert "the clock jumped forward 30.000 s" in r.result.error_string, r.result.error_string
        assert sim.gate.goal[0] < 0.3  # held at its last sample, not the end point


def test_the_feedforward_node_drops_its_trajectory_when_the_clock_jumps_forward():
    """Before, the desired trajectory was sampled after a 30 s jump forward: the next goal was its end point."""
    from builtin_interfaces.msg import Duration

    with RosHarness(salt=100) as h:
        ff, clock, goals, states, desired = pendulum_ff_on_sim_time(h)
        joints = ["pendulum_1", "pendulum_2"]
        set_clock(clock, ff, 100.0)
        rest = JointState(name=joints, position=[0.0, 0.0])
        wait_for(lambda: states.publish(rest) or ff._js_sub is None, 30.0, "the pose taken")
        point = JointTrajectoryPoint(positions=[1.0, -1.0], time_from_start=Duration(sec=2))
        desired.publish(stamped(JointTrajectory(joint_names=joints, points=[point]), 100.0))
        wait_for(lambda: ff.traj is not None, 30.0, "the desired trajectory")
        set_clock(clock, ff, 100.5)  # 0.5 s: time passing (less than FORWARD_JUMP)
        wait_for(lambda: states.publish(rest) or (goals and 0.05 < goals[-1][0] < 0.95), 30.0, "goals on the way")
        assert ff.traj is not None
        set_clock(clock, ff, 130.5)
        wait_for(lambda: ff.traj is None, 30.0, "the desired trajectory dropped")
        n = len(goals)
        wait_for(lambda: states.publish(rest) or ff._js_sub is None, 30.0, "the pose read again, idle")
        assert ff.traj is None and all(g[0] < 0.95 for g in goals[n:]), goals[n:]  # never the end point


def test_a_sim_follows_a_coarse_clock_and_drops_its_trajectory_only_on_a_jump():
    """An external /clock stepping 0.1 s (twice max_catch_up: a bag played ``--clock 20``, a /clock at 10 Hz) is
    time passing: the 2 s trajectory is followed to its end point, no jump is said. Before, every step counted as a
    jump forward: the trajectory was dropped at the first one, one warning per /clock. A 30 s jump still drops the
    next trajectory, and the sim catches up max_catch_up of it (5 periods) at the next tick, as after any late tick
    (before: one period)."""
    from builtin_interfaces.msg import Duration

    with RosHarness(salt=101) as h:
        sim, rosout, clock, traj, _ = sim_on_a_clock(h)
        for k in range(1, 11):  # to 101.0 s in 0.1 s steps: half-way
            set_clock(clock, sim, 100.0 + 0.1 * k)
        wait_for(lambda: sim.gate.goal[0] > 0.2, 30.0, "the goal half-way")
        assert sim.traj is not None, "the trajectory was dropped on a step of 0.1 s"
        for k in range(11, 26):  # to 102.5 s: past its end
            set_clock(clock, sim, 100.0 + 0.1 * k)
        wait_for(lambda: sim.gate.goal[0] == 0.5, 30.0, "the trajectory's end point")
        assert not said(rosout, sim, "jumped forward")
        start = JointTrajectoryPoint(positions=[0.0], time_from_start=Duration(sec=2))
        traj.publish(stamped(JointTrajectory(joint_names=["a"], points=[start]), 102.5))
        for k in range(26, 36):  # to 103.5 s
            set_clock(clock, sim, 100.0 + 0.1 * k)
        wait_for(lambda: sim.traj is not None and sim.gate.goal[0] < 0.4, 30.0, "the next trajectory half-way")
        ticks = sim.ticks
        set_clock(clock, sim, 133.5)
        wait_for(lambda: sim.traj is None, 30.0, "the trajectory dropped")
        wait_for(lambda: sim.ticks >= ticks + 5, 30.0, "max_catch_up (5 periods) caught up after the jump")
        lines = wait_for(lambda: said(rosout, sim, "the clock jumped forward 30.000 s"), 30.0, "the warning")
        assert len(said(rosout, sim, "jumped forward")) == 1 and "dropped the trajectory being followed" in lines[0]


def test_a_clock_stepping_exactly_the_jump_bound_is_time_passing():
    """A replayed /clock stepping exactly 1 s (``ros2 bag play --rate 10 --clock 10``): the bound itself is no jump,
    the trajectory is followed to its end (before: rcl's threshold fires at ≥ min_forward: the trajectory was
    dropped at the first step, the goal left at its start, review /tmp/review_19d/a_clock_1s.py)."""

    with RosHarness(salt=103) as h:
        sim, rosout, clock, _, _ = sim_on_a_clock(h, seconds=3)
        for k in range(1, 5):  # to 104 s in 1 s steps: past its end
            set_clock(clock, sim, 100.0 + k)
        wait_for(lambda: sim.gate.goal[0] == 0.5, 30.0, "the trajectory's end point")
        assert not said(rosout, sim, "jumped forward")
