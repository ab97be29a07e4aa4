"""Future-stamped JointTrajectory messages on a servo_sim_node, as ros2_controllers' JointTrajectoryController
(Jazzy) takes them: each replaces the one followed on receipt and is interpolated from the state then to its first
point at ``header.stamp + time_from_start``. The sim follows an external /clock the test advances itself, so every
message is received at a known time and every commanded goal is compared with its expected value exactly (no wall
time, no sleep)."""

from __future__ import annotations

import numpy as np
import pytest
from nodes_harness import RosHarness, sim_node, wait_for

pytest.importorskip("rclpy")
from builtin_interfaces.msg import Duration  # noqa: E402
from builtin_interfaces.msg import Time as TimeMsg  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

RATE = 200.0  # Hz: two sim periods per 10 ms clock step
STEP_NS = 10_000_000  # the clock's step and the stream's period [ns]
LEAD_NS = 50_000_000  # each streamed message starts 50 ms after it is sent


def _msg(joints, stamp_ns: int, points) -> JointTrajectory:
    """A JointTrajectory stamped ``stamp_ns`` with (positions, time_from_start [ns]) ``points``."""
    msg = JointTrajectory(joint_names=list(joints))
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp_ns, 1_000_000_000)
    msg.points = [
        JointTrajectoryPoint(positions=list(map(float, q)), time_from_start=Duration(sec=t // 10**9, nanosec=t % 10**9))
        for q, t in points
    ]
    return msg


@pytest.fixture(scope="module")
def clocked():
    """A sim on an external /clock (stepped here, 10 ms at a time), the goals it commands at each period, and the
    client node."""
    h = RosHarness(salt=115)
    sim = sim_node(
        h,
        joints=["a", "b"],
        rate_hz=RATE,
        model="m1",
        use_sim_time=True,
        physics_dt=0.005,
        max_catch_up=1.0,
        position_min=[-1.0],
        position_max=[1.0],
        warn_throttle=60.0,
    )
    client = h.make_node("lead_client")
    clock = client.create_publisher(Clock, "/clock", 10)
    pub = client.create_publisher(JointTrajectory, "servo/joint_trajectory", 10)
    goals: list[tuple[float, np.ndarray]] = []  # (time the goal is for [s], goal [rad]) of every period
    follow = sim.follow_trajectory

    def record(t: float) -> None:
        follow(t)
        goals.append((t, sim.gate.goal.copy()))

    sim.follow_trajectory = record
    wait_for(lambda: clock.get_subscription_count() and pub.get_subscription_count(), 20.0, "the sim's subscriptions")
    t_ns = [1_000_000_000]

    def advance(n: int = 1) -> int:
        """Advance the clock ``n`` steps, each once the sim has stepped up to the last; the new time [ns]."""
        for _ in range(n):
            t_ns[0] += STEP_NS
            t = t_ns[0]
            clock.publish(Clock(clock=TimeMsg(sec=t // 10**9, nanosec=t % 10**9)))
            wait_for(lambda t=t: sim.get_clock().now().nanoseconds >= t, 20.0, "the sim's clock at the step")
            wait_for(lambda t=t: goals and goals[-1][0] >= (t - 1e9 / RATE) * 1e-9 - 1e-9, 20.0, "the sim's periods")
        return t_ns[0]

    def send(msg: JointTrajectory) -> None:
        """Publish ``msg`` and wait until the sim took it (at the present clock: it waits for the next step)."""
        n = sim.trajectories
        pub.publish(msg)
        wait_for(lambda: sim.trajectories > n, 20.0, "the sim to take the trajectory")

    advance(1)
    wait_for(lambda: sim.active, 20.0, "servo_sim active")
    advance(5)
    yield sim, goals, advance, send, client
    h.shutdown()


def test_a_stream_stamped_50_ms_ahead_is_followed(clocked):
    """Every 10 ms a 40 ms window of a 0.5 Hz sine, stamped 50 ms ahead (a planner's lead): each message replaces the
    last on receipt, so the goal follows the sine within the interpolation's lag (JTC: from the state at receipt
    to the first point, ≈ 1 ms × q̈ = 3 mrad here). Before, each message waited for its stamp and the next one
    replaced it first: the goal never moved (0.30 rad off)."""
    sim, goals, advance, send, _ = clocked
    t0 = advance(1)
    q0 = float(sim.gate.goal[0])
    b0 = float(sim.gate.goal[1])

    def desired(t_ns):
        return q0 + 0.3 * np.sin(np.pi * (np.asarray(t_ns, dtype=np.float64) - t0) * 1e-9)

    n_goals = len(goals)
    t = t0
    for _ in range(150):  # 1.5 s of stream
        stamp = t + LEAD_NS
        window = [([desired(stamp + k * STEP_NS)], k * STEP_NS) for k in range(5)]
        send(_msg(["a"], stamp, window))
        t = advance(1)
    times = np.array([g[0] for g in goals[n_goals:]])
    q = np.array([g[1] for g in goals[n_goals:]])
    judged = times >= t0 * 1e-9 + 0.3  # after the first 0.3 s: the goal caught up with the stream
    error = np.abs(q[judged, 0] - desired(times[judged] * 1e9))
    print(f"stream with a 50 ms lead: max |goal - desired| {error.max() * 1e3:.3f} mrad over {judged.sum()} periods")
    assert judged.sum() > 200
    assert error.max() < 0.008, error.max()
    assert np.ptp(q[judged, 0]) > 0.5  # it moved through the sine's swing
    np.testing.assert_array_equal(q[:, 1], b0)  # joint b, not named: held


def test_a_future_stamped_trajectory_replaces_the_one_followed_on_receipt(clocked):
    """A trajectory stamped 0.5 s ahead, its one point 0.5 s after that, sent while another moves the joint the
    other way: JTC replaces it on receipt and interpolates from the state then (position and velocity: here
    linear, the new point gives none) to the point at stamp + 0.5 s. Before, the old one ran on until the stamp."""
    sim, goals, advance, send, _ = clocked
    t = advance(1)
    send(_msg(["a"], 0, [([0.8], 2_000_000_000)]))  # stamp 0: from now, up to 0.8 rad in 2 s
    t = advance(50)
    n_goals = len(goals)
    rising = sim.traj
    q_receipt = float(rising.spline.position(t * 1e-9)[0])
    send(_msg(["a"], t + 500_000_000, [([-0.4], 500_000_000)]))
    replaced = sim.traj is not rising  # on receipt
    end = advance(110)
    times = np.array([g[0] for g in goals[n_goals:]])
    q = np.array([g[1][0] for g in goals[n_goals:]])
    span = times - t * 1e-9
    expect = np.where(span < 1.0, q_receipt + (-0.4 - q_receipt) * np.clip(span, 0.0, 1.0), -0.4)
    print(f"future-stamped replacement: max |goal - JTC's| {np.abs(q - expect).max():.3e} rad, replaced {replaced}")
    assert replaced and times[-1] >= end * 1e-9 - 0.01
    np.testing.assert_allclose(q, expect, atol=1e-6)  # before: 0.6 rad off at the stamp (still rising)
    assert sim.traj is None and sim.gate.goal[0] == -0.4


def test_the_way_to_a_future_first_point_stays_within_the_joint_limits():
    """The segment from the state on receipt to a future first point is part of the path checked against the
    limits: from 0.45 rad rising at 1.35 rad/s to 0.9 rad falling at 4 rad/s, 0.3 s later, the cubic reaches
    1.02 rad (limit 1): refused whole, naming when. Before, the state waited for the stamp and the first point
    (time_from_start 0) replaced it there: no such segment was checked, nor followed."""
    from servo_ff.ros.common import GoalGate, Throttle
    from servo_ff.ros.trajectory_plan import plan_trajectory

    gate = GoalGate(["a"], np.array([-1.0]), np.array([1.0]), goal=np.zeros(1), warn=print, throttle=Throttle(0.0))

    def msg(stamp_ns: int, points) -> JointTrajectory:
        m = _msg(["a"], stamp_ns, [([q], t) for q, _, t in points])
        for p, (_, v, _) in zip(m.points, points, strict=True):
            p.velocities = [v]
        return m

    rising = plan_trajectory(msg(0, [(0.9, 0.0, 10**9)]), 10.0, gate, ["a"], None)  # cubic over 1 s
    np.testing.assert_allclose([x[0] for x in rising.spline.sample(10.5)[:2]], [0.45, 1.35])
    back = msg(10_800_000_000, [(0.9, -4.0, 0), (0.0, 0.0, 10**9)])
    with pytest.raises(ValueError, match=r"reaches 1\.0202 rad at 0\.064 s before its start, outside its joint limits"):
        plan_trajectory(back, 10.5, gate, ["a"], rising)
    back.points[0].velocities = [-3.0]  # 0.98 rad at most: taken, from the state on receipt
    taken = plan_trajectory(back, 10.5, gate, ["a"], rising)
    assert taken.received == 10.5 and taken.start == pytest.approx(10.8)
    np.testing.assert_allclose(taken.spline.position(10.5), 0.45)
    assert 0.9 < taken.spline.positions(np.linspace(10.5, 10.8, 301)).max() < 1.0


def test_a_future_stamped_follow_joint_trajectory_goal_runs_from_its_acceptance(clocked):
    """follow_joint_trajectory takes a goal stamped ahead as JTC's goal_accepted_callback does (the same
    add_new_trajectory_msg as the topic): on acceptance the joint moves toward the first point, reached at its
    stamp + time_from_start, and the goal succeeds. Before, the goal waited for its stamp, holding."""
    fjt = pytest.importorskip("control_msgs.action")
    from action_msgs.msg import GoalStatus
    from control_msgs.msg import JointTolerance
    from rclpy.action import ActionClient

    sim, goals, advance, send, client = clocked
    action = ActionClient(client, fjt.FollowJointTrajectory, "servo/follow_joint_trajectory")
    assert action.wait_for_server(timeout_sec=15.0)
    t = advance(1)
    q0 = float(sim.gate.goal[0])
    goal = fjt.FollowJointTrajectory.Goal(trajectory=_msg(["a"], t + 300_000_000, [([q0 + 0.3], 200_000_000)]))
    goal.goal_tolerance = [JointTolerance(name="a", position=0.05)]
    goal.goal_time_tolerance = Duration(sec=5)
    future = action.send_goal_async(goal)
    wait_for(future.done, 20.0, "the goal response")
    assert future.result().accepted
    n_goals = len(goals)
    result = future.result().get_result_async()
    for _ in range(300):  # up to 3 s of the clock, until the servo is in the goal tolerance
        advance(1)
        if result.done():
            break
    times = np.array([g[0] for g in goals[n_goals:]])
    q = np.array([g[1][0] for g in goals[n_goals:]])
    expect = q0 + 0.3 * np.clip((times - t * 1e-9) / 0.5, 0.0, 1.0)
    print(f"future-stamped action goal: max |goal - JTC's| {np.abs(q - expect).max():.3e} rad")
    np.testing.assert_allclose(q, expect, atol=1e-6)  # before: held at q0 until the stamp, 0.18 rad off there
    assert result.done() and result.result().status == GoalStatus.STATUS_SUCCEEDED
    action.destroy()
