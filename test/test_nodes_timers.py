"""The servo nodes' own timers over DDS: ``/diagnostics`` comes on the wall (steady) clock, also while a sim owning
``/clock`` is inactive (its time stopped), ``servo_supply`` on the node clock; ``diagnostics_period``,
``supply_period`` and ``lockstep_timeout`` changed at run time take effect; ``use_sim_time`` set at run time without
a ``/clock`` is said (one warning), and a sim owning the clock refuses a change of it. Rates are compared as ratios
over windows polled on the wall clock (never an exact count of timer firings)."""

from __future__ import annotations

import time

import pytest
from nodes_harness import PENDULUM_SIM, RosHarness, hardware_on_virtual_bus, rosout_matched, sim_node, wait_for

pytest.importorskip("rclpy")
from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from lifecycle_msgs.msg import Transition  # noqa: E402
from lifecycle_msgs.srv import ChangeState  # noqa: E402
from rcl_interfaces.msg import Log  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import BatteryState  # noqa: E402


def outputs_of(h: RosHarness, node, client: str = "probe"):
    """A client node's lists of ``node``'s /diagnostics and of the servo_supply messages."""
    c = h.make_node(client)
    diags: list[DiagnosticArray] = []
    supply: list[BatteryState] = []
    fq = node.get_fully_qualified_name()
    c.create_subscription(DiagnosticArray, "/diagnostics", lambda m: diags.append(m) if _ours(m, fq) else None, 200)
    c.create_subscription(BatteryState, "servo_supply", supply.append, 200)
    return c, diags, supply


def _ours(msg: DiagnosticArray, fq: str) -> bool:
    return any(s.name.startswith(fq) for s in msg.status)


def lifecycle_state(msg: DiagnosticArray) -> str:
    return next(kv.value for s in msg.status for kv in s.values if kv.key == "lifecycle_state")


def counted(lists: list[list], window: float) -> list[int]:
    """Messages added to each of ``lists`` within ``window`` s of wall time (polled, not slept on)."""
    before, t0 = [len(x) for x in lists], time.monotonic()
    wait_for(lambda: time.monotonic() - t0 >= window, window + 10.0, f"{window:g} s")
    return [len(x) - n for x, n in zip(lists, before)]


def test_a_sim_owning_the_clock_keeps_its_diagnostics_on_wall_time_while_its_time_stands():
    """publish_clock: cleaned up (unconfigured: nothing stepped; inactive, the sim steps on as the hardware node
    reads on: test_nodes_sim_inactive.py) the simulated time stands; /diagnostics (period 0.2 s) keep coming on wall
    time (before: its timer ran on that stopped time, the last diagnostics said 'active' for ever), saying
    'unconfigured', stamped with the node clock (the stopped sim time). servo_supply stays on the node clock: none
    while that time stands still (a reader on sim time sees no time pass), one per supply_period of sim time at any
    real-time factor."""
    with RosHarness(salt=36) as h:
        sim = sim_node(h, **PENDULUM_SIM, publish_clock=True, diagnostics_period=0.2)
        c, diags, supply = outputs_of(h, sim)
        wait_for(lambda: sim.active and len(diags) > 2 and supply, 30.0, "the sim active, its outputs")
        cli = c.create_client(ChangeState, "servo_sim/change_state")
        for tid in (Transition.TRANSITION_DEACTIVATE, Transition.TRANSITION_CLEANUP):
            assert h.call(cli, ChangeState.Request(transition=Transition(id=tid)), timeout=15.0).success
        stopped = sim.sim_time_ns
        n_supply = len(supply)

        def unconfigured() -> list[DiagnosticArray]:
            return [m for m in diags if lifecycle_state(m) == "unconfigured"]

        wait_for(lambda: len(unconfigured()) >= 3, 15.0, "diagnostics while unconfigured")
        assert sim.sim_time_ns == stopped  # the simulated time did stop: these came on the wall clock
        assert len(supply) <= n_supply + 1  # (one may have been in flight)
        stamp = unconfigured()[-1].header.stamp
        assert stamp.sec * 1_000_000_000 + stamp.nanosec == stopped  # stamped with the node clock


def test_diagnostics_and_supply_periods_changed_at_run_time_take_effect():
    """diagnostics_period 0.5 → 0.05 s and supply_period 0.05 → 0.5 s at run time: the timers are made again with
    the new periods and the message rates follow (before: accepted, ignored). Ratios of ≥ 3 where 10 is expected."""
    with RosHarness(salt=37) as h:
        sim = sim_node(h, **PENDULUM_SIM, diagnostics_period=0.5, supply_period=0.05)
        _, diags, supply = outputs_of(h, sim)
        wait_for(lambda: sim.active and diags and supply, 30.0, "the sim active, its outputs")
        diag_before, supply_before = counted([diags, supply], 2.0)
        results = sim.set_parameters(
            [Parameter("diagnostics_period", value=0.05), Parameter("supply_period", value=0.5)]
        )
        assert all(r.successful for r in results), [r.reason for r in results]
        diag_after, supply_after = counted([diags, supply], 2.0)
        assert diag_after >= 3 * max(diag_before, 1), (diag_before, diag_after)
        assert supply_before >= 3 * max(supply_after, 1), (supply_before, supply_after)
        assert sim._diag_timer.timer_period_ns == 50_000_000
        assert sim._supply_timer.timer_period_ns == 500_000_000


def test_hardware_diagnostics_period_changed_at_run_time_takes_effect(tmp_path):
    """The hardware node shares the interface's timers: diagnostics_period 1 → 0.05 s at run time raises the
    /diagnostics rate (≥ 3 × in the same window where 20 × is expected)."""
    pytest.importorskip("dynamixel_sdk")
    virtual_bus = pytest.importorskip("servo_ff.bus.virtual_bus")
    link = tmp_path / "ttyDXL"
    bus = virtual_bus.VirtualBus(ids=[1], model="mx106", loads=virtual_bus.ServoLoad.pendulum(0.3, 0.1), link=str(link))
    bus.start()
    try:
        with RosHarness(salt=38) as h:
            node, *_ = hardware_on_virtual_bus(h, link, ["j"], [1], "mx106", 32.0, "hw_client", diagnostics_period=1.0)
            _, diags, _ = outputs_of(h, node)
            wait_for(lambda: diags, 20.0, "the node's diagnostics")
            (before,) = counted([diags], 2.0)
            assert node.set_parameters([Parameter("diagnostics_period", value=0.05)])[0].successful
            (after,) = counted([diags], 2.0)
            assert after >= 3 * max(before, 1), (before, after)
            assert node._diag_timer.timer_period_ns == 50_000_000
    finally:
        bus.stop()


def test_lockstep_timeout_lowered_at_run_time_steps_at_the_new_timeout():
    """A lockstep sim without goals steps on lockstep_timeout only: 1 s, then 0.02 s at run time. The timeout steps
    per window go up accordingly (before: the poll kept half the start-up timeout as its period, 2 steps/s at most);
    ≥ 15 steps in 2 s where ≈ 70 are expected."""
    with RosHarness(salt=39) as h:
        sim = sim_node(h, **PENDULUM_SIM, publish_clock=True, lockstep=True, lockstep_timeout=1.0)
        wait_for(lambda: sim.active and sim.lockstep_stats()["timeout_steps"] >= 1, 30.0, "a first timeout step")

        def steps(window: float) -> int:
            n0, t0 = sim.lockstep_stats()["timeout_steps"], time.monotonic()
            wait_for(lambda: time.monotonic() - t0 >= window, window + 10.0, f"{window:g} s")
            return sim.lockstep_stats()["timeout_steps"] - n0

        before = steps(2.0)
        assert sim.set_parameters([Parameter("lockstep_timeout", value=0.02)])[0].successful
        after = steps(2.0)
        assert after >= 5 * max(before, 3), (before, after)  # ≥ 15: the old poll every 0.5 s gave at most 5


def test_use_sim_time_set_at_run_time_without_a_clock_is_said_once():
    """A sim following the node clock, no /clock in its domain: use_sim_time set true at run time stops its
    joint_states (it waits for /clock) — one warning naming /clock says so (before: silence while 'active'), and
    the diagnostics keep coming (wall time)."""
    with RosHarness(salt=46) as h:
        sim = sim_node(h, **PENDULUM_SIM)
        c, diags, _ = outputs_of(h, sim)
        lines: list[Log] = []
        c.create_subscription(Log, "/rosout", lambda m: lines.append(m) if m.name.endswith("servo_sim") else None, 100)
        wait_for(lambda: sim.active and diags, 30.0, "the sim active, its diagnostics")
        rosout_matched(sim, lines)
        assert sim.set_parameters([Parameter("use_sim_time", value=True)])[0].successful
        n_diags = len(diags)

        def warned() -> list[str]:
            return [m.msg for m in lines if m.level >= Log.WARN and "/clock" in m.msg]

        wait_for(warned, 15.0, "a warning naming /clock")
        assert len(warned()) == 1 and "use_sim_time" in warned()[0], warned()
        wait_for(lambda: len(diags) > n_diags, 10.0, "diagnostics after use_sim_time")


def test_a_sim_owning_the_clock_refuses_a_change_of_use_sim_time():
    """publish_clock: the node set use_sim_time itself; setting it false is refused with the reason (before:
    accepted, and the node's clock went to the wall while it kept publishing /clock)."""
    with RosHarness(salt=56) as h:
        sim = sim_node(h, **PENDULUM_SIM, publish_clock=True, autostart=False)
        r = sim.set_parameters([Parameter("use_sim_time", value=False)])[0]
        assert not r.successful and "publish_clock" in r.reason, r.reason
        assert sim.get_parameter("use_sim_time").value is True
        assert sim.set_parameters([Parameter("use_sim_time", value=True)])[0].successful  # no change: accepted
        assert sim.get_clock().now().nanoseconds == sim.sim_time_ns  # still the simulated time
