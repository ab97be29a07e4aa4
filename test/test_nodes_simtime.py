"""Sim time and trajectory following over real DDS: the sim node owning /clock (as fast as possible), following
an external coarse /clock at its own rate, and JointTrajectory following with JointTrajectoryController
semantics (interpolation over time_from_start from the current state, replacement, refusal of bad
trajectories as a whole). Rates are asserted as message counts over a sim-time window, never on wall time."""

from __future__ import annotations

import math

import numpy as np
import pytest
from nodes_harness import RosHarness, sim_node, wait_for

pytest.importorskip("rclpy")
from builtin_interfaces.msg import Duration  # noqa: E402
from builtin_interfaces.msg import Time as TimeMsg  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

RATE = 200.0


def stamp_s(msg) -> float:
    return msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9


def point(positions, t, velocities=(), accelerations=()):
    sec = int(t)
    return JointTrajectoryPoint(
        positions=list(positions),
        velocities=list(velocities),
        accelerations=list(accelerations),
        time_from_start=Duration(sec=sec, nanosec=int(round((t - sec) * 1e9))),
    )


@pytest.fixture(scope="module")
def owned():
    """A sim owning /clock, as fast as possible (real_time_factor 0), and a client on sim time."""
    h = RosHarness(salt=11)
    sim = sim_node(
        h,
        joints=["a", "b"],
        rate_hz=RATE,
        model="m1",
        publish_clock=True,
        real_time_factor=0.0,
        position_min=[-1.0],
        position_max=[1.0],
        warn_throttle=60.0,
        physics_dt=0.005,
    )
    client = h.make_node("simtime_client")
    states: list[JointState] = []
    clocks: list[Clock] = []
    client.create_subscription(JointState, "joint_states", states.append, 1000)
    client.create_subscription(Clock, "/clock", clocks.append, 1000)
    pub = client.create_publisher(JointTrajectory, "servo/joint_trajectory", 10)
    wait_for(lambda: pub.get_subscription_count() and len(states) > 10, 20.0, "servo_sim on its own clock")
    goals: list[tuple[float, np.ndarray]] = []
    write = sim.hw_write_goal

    def record(goal):  # what the node commands the simulated servos, on the simulated time
        goals.append((sim.now_s(), np.array(goal)))
        write(goal)

    sim.hw_write_goal = record
    yield h, sim, client, states, clocks, pub, goals
    h.shutdown()


def test_owned_clock_publishes_clock_and_states_at_the_rate(owned):
    h, sim, client, states, clocks, pub, goals = owned
    assert sim.get_parameter("use_sim_time").value  # the node runs on the time it publishes
    n0 = len(states)
    wait_for(lambda: len(states) > n0 + 400, 30.0, "400 more states")
    window = states[n0 + 10 : n0 + 390]
    t = np.array([stamp_s(m) for m in window])
    assert (np.diff(t) > 0).all()
    span = t[-1] - t[0]
    assert abs(len(window) - 1 - span * RATE) <= 2  # one state per period of simulated time (none lost on DDS)
    assert clocks and abs(clocks[-1].clock.sec + clocks[-1].clock.nanosec * 1e-9 - sim.now_s()) < 1.0
    diag = {kv.key: kv.value for s in sim.hw_diagnostics()[:1] for kv in s.values}
    assert diag["clock"] == "own /clock"


def test_trajectory_is_interpolated_over_time_from_start(owned):
    h, sim, client, states, clocks, pub, goals = owned
    start_goal = sim.gate.goal.copy()
    goals.clear()
    pub.publish(JointTrajectory(joint_names=["a"], points=[point([0.3], 1.0), point([0.9], 3.0)]))
    wait_for(
        lambda: sim.trajectories >= 1 and sim.traj is None and goals and goals[-1][0] - goals[0][0] > 2.9,
        60.0,
        "the trajectory to run (3 s of sim time)",
    )
    t = np.array([g[0] for g in goals])
    q = np.array([g[1] for g in goals])
    t0 = t[0]  # the first control step after the trajectory arrived (its start, within one period)
    # linear segments (positions only): from the held goal to 0.3 rad at 1 s, then to 0.9 rad at 3 s
    for s, expect in ((0.5, start_goal[0] + 0.5 * (0.3 - start_goal[0])), (2.0, 0.6), (3.1, 0.9)):
        k = int(np.argmin(np.abs(t - (t0 + s))))
        assert abs(q[k, 0] - expect) < 0.02, (s, q[k, 0], expect)
    np.testing.assert_allclose(q[:, 1], start_goal[1])  # joint b not named: holds its goal
    np.testing.assert_allclose(sim.gate.goal[0], 0.9)
    wait_for(lambda: abs(states[-1].position[0] - 0.9) < 0.05, 60.0, "the servo to reach 0.9 rad")


def test_new_trajectory_replaces_the_rest_from_the_current_state(owned):
    h, sim, client, states, clocks, pub, goals = owned
    pub.publish(JointTrajectory(joint_names=["a", "b"], points=[point([-0.6, 0.2], 4.0, [0.0, 0.0])]))
    wait_for(lambda: goals and sim.traj is not None and sim.now_s() - sim.traj.start > 1.5, 60.0, "first one")
    first = sim.traj
    n = len(goals)
    # 5 s: at real_time_factor 0 a 1 s replacement could run to its end between two polls on a loaded machine
    pub.publish(JointTrajectory(joint_names=["a"], points=[point([0.5], 5.0, [0.0], [0.0])]))
    wait_for(lambda: sim.traj is not first and sim.traj is not None, 30.0, "the replacement")
    second = sim.traj
    q_switch = first.spline.sample(second.start)[0]
    np.testing.assert_allclose(second.spline.sample(second.start)[0], q_switch, atol=1e-9)  # no jump
    assert second.spline.kind(0) == "quintic"
    steps = np.abs(np.diff(np.array([g[1][0] for g in goals[n - 5 :]])))
    assert steps.max() < 0.02  # the commanded goal moves smoothly across the switch
    wait_for(lambda: sim.traj is None and abs(sim.gate.goal[0] - 0.5) < 1e-9, 60.0, "the second to finish")


@pytest.mark.parametrize(
    "points, names, words",
    [
        ([point([0.2], 1.0), point([0.3], 0.5)], ["a"], ["not increasing"]),
        ([point([math.nan], 1.0)], ["a"], ["not finite"]),
        ([point([0.2], 1.0)], ["knee"], ["'knee'"]),
        ([point([0.2], 0.5), point([1.5], 1.0)], ["a"], ["point 1", "a=1.5000 rad", "outside"]),
        ([point([0.9], 0.5, [-30.0])], ["a"], ["interpolated path", "outside"]),  # the cubic overshoots 1 rad
        ([point([0.2, 0.1], 1.0)], ["a"], ["2 positions for 1 joints"]),
    ],
)
def test_bad_trajectories_are_refused_whole_and_the_goal_held(owned, points, names, words):
    h, sim, client, states, clocks, pub, goals = owned
    wait_for(lambda: sim.traj is None, 60.0, "no trajectory running")
    held = sim.gate.goal.copy()
    before = sim.gate.rejected
    pub.publish(JointTrajectory(joint_names=names, points=points))
    wait_for(lambda: sim.gate.rejected > before, 20.0, "the refusal")
    assert all(w in sim.gate.last_reason for w in words), sim.gate.last_reason
    assert "refused whole" in sim.gate.last_reason and sim.traj is None
    np.testing.assert_array_equal(sim.gate.goal, held)


def test_sim_follows_a_coarse_external_clock_at_its_own_rate():
    """use_sim_time with /clock from elsewhere in 20 ms steps: one state per 1/rate_hz of that clock."""
    h = RosHarness(salt=12)
    try:
        sim = sim_node(h, joints=["a"], rate_hz=RATE, model="m1", use_sim_time=True, physics_dt=0.005, max_catch_up=1.0)
        client = h.make_node("clock_source")
        states: list[JointState] = []
        client.create_subscription(JointState, "joint_states", states.append, 1000)
        clock = client.create_publisher(Clock, "/clock", 10)
        wait_for(lambda: clock.get_subscription_count(), 20.0, "the sim's /clock subscription")
        t_ns = 1_000_000_000
        for _ in range(150):  # 3 s of sim time in 20 ms steps
            t_ns += 20_000_000
            clock.publish(Clock(clock=TimeMsg(sec=t_ns // 10**9, nanosec=t_ns % 10**9)))
            # the external simulator's next step once the node's clock has this one (its /clock queue is 10 deep)
            wait_for(lambda t=t_ns: sim.get_clock().now().nanoseconds >= t, 20.0, "the sim's clock at the step")
        wait_for(lambda: states and stamp_s(states[-1]) >= t_ns * 1e-9 - 0.05, 20.0, "the last states")
        wait_for(lambda: sim.ticks == len(states), 20.0, "every published state")
        t = np.array([stamp_s(m) for m in states])
        inside = t[(t > 1.5) & (t <= 3.5)]
        assert (np.diff(t) > 0).all()
        gaps = np.diff(t)[np.diff(t) > 1.5 / RATE]
        assert sim.ticks == len(states), (sim.ticks, len(states), gaps)
        assert abs(inside.size - 2.0 * RATE) <= 5, (inside.size, gaps)  # 200 Hz of sim time, not per clock message
    finally:
        h.shutdown()


def test_a_sim_owning_the_clock_does_not_wait_for_one():
    """The 3 s check "no /clock has arrived" is armed by a sim following an external /clock only: a sim owning
    the clock (not in lockstep) armed it too and, inactive 3 s at time 0, warned it waits for a /clock and to set
    publish_clock:=true, which it had (review r3s4: an ``elif`` re-attached to the lockstep branch)."""
    with RosHarness(salt=13) as h:
        kw = {"joints": ["a"], "model": "m1", "position_min": [-1.0], "position_max": [1.0], "autostart": False}
        own = sim_node(h, "sim_own", publish_clock=True, **kw)
        follower = sim_node(h, "sim_follower", use_sim_time=True, **kw)

        def armed(sim) -> bool:
            return any(t.callback == sim._check_clock for t in sim.timers)

        assert armed(follower)  # (checked at once: the timer destroys itself after its 3 s)
        assert not armed(own)
