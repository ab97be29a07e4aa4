"""An inactive sim behaves as the inactive hardware node (a drop-in for it): torque off, the physics stepped (a
pendulum held at 1 rad falls), ``/joint_states``, ``servo_supply`` and its own ``/clock`` published, goals refused;
activate holds the joints where they fell to. Before, the sim froze: the joint stayed at 0.996 rad, 3 states in
1.5 s, ``/clock`` and ``servo_supply`` stopped (every ``use_sim_time`` reader froze with it), where the hardware node
on the virtual bus published 100 states and its joint fell to -0.02 rad."""

from __future__ import annotations

import pytest
from nodes_harness import RosHarness, sim_node, wait_for

pytest.importorskip("rclpy")
from lifecycle_msgs.msg import Transition  # noqa: E402
from lifecycle_msgs.srv import ChangeState  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from sensor_msgs.msg import BatteryState, JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

PENDULUM = {"joints": ["a"], "rate_hz": 250.0, "servo": "mx64", "model": "m1", "initial_position": [0.0],
            "position_min": [-2.0], "position_max": [2.0], "load.mass": [0.5], "load.length": [0.15],
            "supply_period": 0.1, "publish_clock": True}  # fmt: skip


def _client(h: RosHarness) -> tuple:
    """(client node, joint_states, /clock, servo_supply received, commands publisher, change_state client)."""
    c = h.make_node("inactive_client")
    states: list = []
    clock: list = []
    supply: list = []
    c.create_subscription(JointState, "joint_states", states.append, 1000)
    c.create_subscription(Clock, "/clock", clock.append, 1000)
    c.create_subscription(BatteryState, "servo_supply", supply.append, 100)
    pub = c.create_publisher(Float64MultiArray, "servo/commands", 10)
    return c, states, clock, supply, pub, c.create_client(ChangeState, "servo_sim/change_state")


def _change(h: RosHarness, cli, transition: int) -> bool:
    return h.call(cli, ChangeState.Request(transition=Transition(id=transition)), timeout=15.0).success


@pytest.mark.parametrize("lockstep", [False, True], ids=["paced", "lockstep"])
def test_an_inactive_sim_steps_its_physics_and_publishes_as_the_hardware_does(lockstep):
    """Paced at real_time_factor 1, and in lockstep (inactive: one period per lockstep_timeout, no goal source)."""
    with RosHarness(salt=61 + lockstep) as h:
        sim = sim_node(h, **PENDULUM, lockstep=lockstep, lockstep_timeout=0.004)
        c, states, clock, supply, pub, cli = _client(h)
        wait_for(lambda: pub.get_subscription_count() and sim.active and states, 30.0, "the sim active")

        def at(goal: float) -> bool:
            pub.publish(Float64MultiArray(data=[goal]))  # (lockstep: each goal steps one period)
            return abs(sim.sim.theta[0] - goal) < 0.1 and abs(sim.sim.dtheta[0]) < 0.05  # (P: a sag under gravity)

        def at_rest_near(goal: float) -> bool:  # (lockstep: goals step it)
            if lockstep:
                pub.publish(Float64MultiArray(data=[goal]))
            return abs(sim.sim.theta[0] - goal) < 0.1 and abs(sim.sim.dtheta[0]) < 0.05

        wait_for(lambda: at(1.0), 60.0, "the pendulum held near 1 rad")
        assert _change(h, cli, Transition.TRANSITION_DEACTIVATE)
        n_states, n_clock, n_supply, t0 = len(states), len(clock), len(supply), sim.sim_time_ns
        rejected = sim.gate.rejected
        # torque off: it falls (θ = 0 hanging down) in sim time, states and /clock going on, goals refused
        wait_for(lambda: sim.sim.theta[0] < 0.3, 60.0, "the pendulum falling while inactive")
        wait_for(lambda: pub.publish(Float64MultiArray(data=[1.0])) or sim.gate.rejected > rejected, 30.0, "refused")
        wait_for(lambda: len(states) > n_states + 50 and len(clock) > n_clock + 50, 60.0, "states and /clock")
        wait_for(lambda: len(supply) > n_supply + 2, 60.0, "servo_supply while inactive")
        assert sim.sim_time_ns > t0 and not sim.sim.enabled
        # published: what the client sees falls too (torque off, little friction: it swings on, back towards 1 rad,
        # so the newest state says nothing; before, the last one was judged: 0.98 rad after a loaded wait; nor do the
        # first 50 after deactivate: 0.80 rad at least, the fall not reached here yet)
        seen = lambda: any(m.position[0] < 0.3 for m in states[n_states:])  # noqa: E731 (the client lags the sim)
        wait_for(seen, 60.0, "the fall in the published states")
        assert _change(h, cli, Transition.TRANSITION_ACTIVATE)
        held = float(sim.gate.goal[0])  # the present position at activate, wherever the swing is (before: < 0.3
        assert held != 1.0 and sim.sim.enabled  # judged, as above), not the goal of before (exactly 1.0)
        n = len(states)
        wait_for(lambda: len(states) > n + 50, 60.0, "states after activate")  # (lockstep: timeout steps)
        assert sim.gate.goal[0] == held  # held where it was: no snap back to 1 rad
        wait_for(lambda: at_rest_near(held), 60.0, "the pendulum held where it was at activate")


def test_an_unconfigured_sim_steps_nothing():
    """Configured then cleaned up: no model running, nothing stepped or published (as before)."""
    with RosHarness(salt=63) as h:
        sim = sim_node(h, **PENDULUM)
        c, states, clock, supply, pub, cli = _client(h)
        wait_for(lambda: sim.active and states, 30.0, "the sim active")
        assert _change(h, cli, Transition.TRANSITION_DEACTIVATE)
        assert _change(h, cli, Transition.TRANSITION_CLEANUP)
        assert sim.timer is None and sim.state_label == "unconfigured"


def test_an_inactive_sim_at_real_time_factor_0_runs_at_real_time():
    """real_time_factor 0 (as fast as possible) applies while active; inactive (nobody drives the robot, a lifecycle
    manager may activate it later) the sim paces at 1x real time. Before: it ran as fast as it could inactive too
    (15.6 s of sim time in 3 s of wall time, 56 % of a core: the robot collapsed, its time far ahead at activate).
    The bound is on the sim's progress per wall second (a loaded machine only slows it)."""
    import time

    with RosHarness(salt=103) as h:
        sim = sim_node(h, **{**PENDULUM, "real_time_factor": 0.0, "rate_hz": 50.0}, autostart=False)
        c, states, clock, supply, pub, cli = _client(h)
        sim.trigger_configure()
        wait_for(lambda: sim.sim_time_ns > 0, 30.0, "the inactive sim stepping")
        s0, w0 = sim.sim_time_ns, time.monotonic()
        wait_for(lambda: sim.sim_time_ns - s0 > 2_000_000_000, 60.0, "2 s of sim time inactive")
        ratio = (sim.sim_time_ns - s0) * 1e-9 / (time.monotonic() - w0 + 0.1)  # (+ max_catch_up, a period)
        assert ratio < 1.5, f"{ratio:.1f} s of sim time per wall second while inactive"
        assert _change(h, cli, Transition.TRANSITION_ACTIVATE)
        assert sim._paced_rtf() == 0.0 and sim.timer.timer_period_ns == 0  # active: as fast as possible
        assert _change(h, cli, Transition.TRANSITION_DEACTIVATE)
        assert sim._paced_rtf() == 1.0 and sim.timer.timer_period_ns > 0  # inactive again: 1x
