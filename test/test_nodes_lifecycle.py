"""Two managed servo_hardware_nodes on two virtual Dynamixel buses (ptys) side by side in one namespace, driven
through the lifecycle services (lifecycle_msgs/ChangeState) as a lifecycle manager does: no torque before
activate, separate `<prefix>/…` topics and services, /joint_states with every joint while a servo is silent
(stale flagged with its age in /diagnostics), deactivate = hold then torque off, cleanup closes the port."""

from __future__ import annotations

import numpy as np
import pytest
from nodes_harness import RosHarness, wait_for

pytest.importorskip("rclpy")
pytest.importorskip("dynamixel_sdk")
pytest.importorskip("servo_ff.bus.virtual_bus", reason="Dynamixel core servo_ff.bus.dynamixel not merged yet")
from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from lifecycle_msgs.msg import Transition  # noqa: E402
from lifecycle_msgs.srv import ChangeState, GetState  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from std_srvs.srv import SetBool  # noqa: E402

from servo_ff.bus import control_table as ct  # noqa: E402
from servo_ff.bus.virtual_bus import ServoLoad, VirtualBus  # noqa: E402
from servo_ff.nodes.hardware_node import HardwareNode  # noqa: E402

SIDES = {"legs": (["hip", "knee"], [1, 2]), "arms": (["shoulder", "elbow"], [1, 2])}


@pytest.fixture(scope="module")
def robot(tmp_path_factory):
    buses, nodes = {}, {}
    h = RosHarness(salt=9)
    try:
        for side, (joints, ids) in SIDES.items():
            link = tmp_path_factory.mktemp(side) / "ttyDXL"
            buses[side] = VirtualBus(ids=ids, model="mx106", loads=ServoLoad.pendulum(0.2, 0.1), link=str(link))
            buses[side].start()
            nodes[side] = h.add(
                HardwareNode(
                    f"servo_{side}",
                    context=h.context,
                    namespace=h.ns,
                    parameter_overrides=[
                        Parameter("joints", value=joints),
                        Parameter("ids", value=ids),
                        Parameter("port", value=str(link)),
                        Parameter("prefix", value=side),
                        Parameter("autostart", value=False),
                        Parameter("servo", value="mx106"),
                        Parameter("rate_hz", value=50.0),
                        Parameter("latency_timer_ms", value=1.0),
                        Parameter("timeout_ms", value=50.0),
                        Parameter("retries", value=5),
                        Parameter("position_min", value=[-2.0]),
                        Parameter("position_max", value=[2.0]),
                        Parameter("stale_cycles", value=1000),
                        Parameter("max_reply_age", value=30.0),
                        Parameter("diagnostics_period", value=0.2),
                        Parameter("warn_throttle", value=30.0),
                    ],
                )
            )
        client = h.make_node("lifecycle_manager")
        states: dict[str, list[JointState]] = {"legs": [], "arms": []}

        def on_state(msg: JointState) -> None:
            states["legs" if "hip" in msg.name else "arms"].append(msg)

        diags: list[DiagnosticArray] = []
        client.create_subscription(JointState, "joint_states", on_state, 100)
        client.create_subscription(DiagnosticArray, "/diagnostics", diags.append, 50)
        yield h, buses, nodes, client, states, diags
    finally:
        h.shutdown()
        for b in buses.values():
            b.stop()


def change(h, client, side: str, transition: int) -> bool:
    cli = client.create_client(ChangeState, f"servo_{side}/change_state")
    return h.call(cli, ChangeState.Request(transition=Transition(id=transition)), timeout=15.0).success


def state_of(h, client, side: str) -> str:
    return h.call(client.create_client(GetState, f"servo_{side}/get_state"), GetState.Request()).current_state.label


def torque(bus) -> np.ndarray:
    return bus.mem[:, ct.ADDR_TORQUE_ENABLE].copy()


def stale_status(diags, joint):
    for d in reversed(diags):
        for s in d.status:
            if s.name.endswith(f": {joint}"):
                return s
    return None


def test_two_managed_hardware_nodes_side_by_side(robot):
    h, buses, nodes, client, states, diags = robot
    # constructed, not configured: no port opened, torque never enabled, no states
    for side in SIDES:
        assert state_of(h, client, side) == "unconfigured"
        assert nodes[side].bus is None and (torque(buses[side]) == 0).all()
    # configure: port opened, ids scanned, set up; torque still off
    for side in SIDES:  # as a lifecycle manager: a configure that finds no answer yet is tried again
        assert any(change(h, client, side, Transition.TRANSITION_CONFIGURE) for _ in range(3))
        assert state_of(h, client, side) == "inactive" and nodes[side].connected
        assert (torque(buses[side]) == 0).all()
    pub = {side: client.create_publisher(Float64MultiArray, f"{side}/commands", 10) for side in SIDES}
    wait_for(lambda: all(p.get_subscription_count() == 1 for p in pub.values()), 20.0, "one subscriber per prefix")
    rejected = nodes["legs"].gate.rejected
    pub["legs"].publish(Float64MultiArray(data=[0.5, 0.5]))  # inactive: refused, nothing moves
    wait_for(lambda: nodes["legs"].gate.rejected > rejected, 20.0, "goal refused while inactive")
    assert "not active" in nodes["legs"].gate.last_reason
    # activate: torque on at the present position, loop started
    for side in SIDES:
        assert change(h, client, side, Transition.TRANSITION_ACTIVATE)
        assert (torque(buses[side]) == 1).all()
    # activate again (a manager retrying): refused, the node runs on (before: rclpy raised out of the service
    # callback, rclpy#1209 — the executor died, in a process the node exited)
    assert not change(h, client, "legs", Transition.TRANSITION_ACTIVATE)
    assert state_of(h, client, "legs") == "active" and (torque(buses["legs"]) == 1).all()
    wait_for(lambda: len(states["legs"]) > 5 and len(states["arms"]) > 5, 20.0, "joint_states of both nodes")
    # separate topics: each goal reaches its own bus only
    pub["legs"].publish(Float64MultiArray(data=[0.4, -0.3]))
    pub["arms"].publish(Float64MultiArray(data=[-0.6, 0.2]))
    wait_for(
        lambda: (
            np.allclose(buses["legs"].goal, [0.4, -0.3], atol=0.01)
            and np.allclose(buses["arms"].goal, [-0.6, 0.2], atol=0.01)
        ),
        20.0,
        "goals on both buses",
    )
    # separate services: legs/torque_enable leaves the arms alone
    r = h.call(client.create_client(SetBool, "legs/torque_enable"), SetBool.Request(data=False))
    assert r.success and (torque(buses["legs"]) == 0).all() and (torque(buses["arms"]) == 1).all()
    assert h.call(client.create_client(SetBool, "legs/torque_enable"), SetBool.Request(data=True)).success
    # torque on holds where the legs sagged meanwhile: send the goal again and let them get there
    pub["legs"].publish(Float64MultiArray(data=[0.4, -0.3]))
    wait_for(lambda: np.allclose(buses["legs"].theta, [0.4, -0.3], atol=0.03), 20.0, "legs back at their goal")

    # a silent servo: its joint stays in every message (last value, finite), flagged stale with its age
    buses["legs"].set_silent(2, True)
    try:
        n0 = len(states["legs"])
        wait_for(
            lambda: (
                (s := stale_status(diags, "knee")) is not None
                and any(kv.key == "stale" and kv.value == "true" for kv in s.values)
            ),
            20.0,
            "knee flagged stale",
        )
        wait_for(lambda: len(states["legs"]) >= n0 + 25, 20.0, "joint_states while the knee is silent")
        window = states["legs"][n0:]
        assert all(list(m.name) == ["hip", "knee"] and np.isfinite(m.position).all() for m in window)
        s = stale_status(diags, "knee")
        values = {kv.key: kv.value for kv in s.values}
        assert "stale" in s.message and float(values["last_reply_age_s"]) > 0.0
        # a hold while the knee is silent (what deactivate does): the hip holds its fresh reading, the knee keeps
        # the goal it was heading for, not its last (old) reading
        legs = nodes["legs"]

        def held():  # between two cycles (the executor's lock), one whose hip reply came in time
            with h._busy:
                if not (legs.valid[0] and not legs.valid[1]):
                    return None
                before = legs.gate.goal.copy()
                legs._hold_present(running=True)
                return before, legs.gate.goal.copy(), legs.pos.copy()

        goal_before, goal, pos = wait_for(held, 20.0, "a cycle with the hip read and the knee silent")
        assert goal[1] == goal_before[1] != pos[1]
        assert goal[0] == pos[0]  # the hip: its reading
    finally:
        buses["legs"].set_silent(2, False)

    # deactivate the legs: hold, then torque off; the arms keep running
    assert change(h, client, "legs", Transition.TRANSITION_DEACTIVATE)
    assert (torque(buses["legs"]) == 0).all() and (torque(buses["arms"]) == 1).all()
    np.testing.assert_allclose(buses["legs"].goal, nodes["legs"].gate.goal, atol=2e-3)  # the present position
    np.testing.assert_allclose(nodes["legs"].gate.goal, [0.4, -0.3], atol=0.05)
    n_arms = len(states["arms"])
    wait_for(lambda: len(states["arms"]) > n_arms + 5, 20.0, "arms still publishing")
    # cleanup closes the port; shutdown of the active arms: hold, torque off, closed
    assert change(h, client, "legs", Transition.TRANSITION_CLEANUP)
    assert nodes["legs"].bus is None and state_of(h, client, "legs") == "unconfigured"
    assert change(h, client, "arms", Transition.TRANSITION_ACTIVE_SHUTDOWN)
    assert (torque(buses["arms"]) == 0).all() and nodes["arms"].bus is None
    assert state_of(h, client, "arms") == "finalized"


def test_two_different_configure_failures_are_two_lines(tmp_path):
    """A lifecycle manager's configure fails twice for two reasons (no port, then a file that is no tty): each
    failure gets its line (before: one line per warn_throttle per transition, whatever the reason)."""
    from hardware_rig import node_params
    from nodes_harness import rosout_matched
    from rcl_interfaces.msg import Log

    with RosHarness(salt=82) as h:
        port = tmp_path / "no_such_tty"
        params = node_params(port, autostart=False, warn_throttle=600.0)  # (one kind of failure: one line)
        node = h.add(HardwareNode("servo_hw", **h.node_kwargs(), parameter_overrides=params))
        client = h.make_node("lifecycle_manager")
        logs: list = []
        client.create_subscription(
            Log, "/rosout", lambda m: logs.append(m) if m.name.endswith("servo_hw") else None, 50
        )
        rosout_matched(node, logs)
        cli = client.create_client(ChangeState, "servo_hw/change_state")
        configure = ChangeState.Request(transition=Transition(id=Transition.TRANSITION_CONFIGURE))
        assert not h.call(cli, configure, timeout=15.0).success
        port.write_text("not a tty")  # another failure
        assert not h.call(cli, configure, timeout=15.0).success
        lines = wait_for(
            lambda: (ls := [m.msg for m in logs if m.msg.startswith("configure failed")]) and len(ls) >= 2 and ls,
            20.0,
            "a line per failure",
        )
        assert lines[0] != lines[1], lines  # each names its own reason


def test_services_of_a_node_shut_down_or_not_configured_do_nothing_and_say_why(tmp_path):
    """A finalized sim's reset, reboot and torque_enable answer failure (before: success, and reset moved the
    joints back to initial_position); an unconfigured hardware node's torque_enable says no servo is connected
    (before: 'will be applied after reconnection', which never comes while unconfigured). An unconfigured sim's
    torque_enable and reboot are refused with the hardware's words (before: both succeeded, and reboot rewrote
    the goal; the hardware's reboot said 'bus not connected')."""
    from hardware_rig import node_params
    from nodes_harness import sim_node
    from std_srvs.srv import Trigger

    with RosHarness(salt=83) as h:
        sim = sim_node(h, initial_position=[0.0])
        idle = sim_node(h, "servo_idle", initial_position=[0.3], autostart=False, prefix="idle")
        params = node_params(tmp_path / "tty", autostart=False, prefix="hw")
        h.add(HardwareNode("servo_hw", **h.node_kwargs(), parameter_overrides=params))
        client = h.make_node("lifecycle_manager")
        wait_for(lambda: sim.active, 20.0, "the sim active")
        shutdown = ChangeState.Request(transition=Transition(id=Transition.TRANSITION_ACTIVE_SHUTDOWN))
        assert h.call(client.create_client(ChangeState, "servo_sim/change_state"), shutdown, timeout=15.0).success
        with h._busy:
            sim.sim.theta = sim.sim.theta + 0.3  # it lies elsewhere now
            before = sim.sim.theta.copy()
        for name, typ, req in (
            ("servo/reset", Trigger, Trigger.Request()),
            ("servo/reboot", Trigger, Trigger.Request()),
            ("servo/torque_enable", SetBool, SetBool.Request(data=False)),
        ):
            r = h.call(client.create_client(typ, name), req)
            assert not r.success and "finalized" in r.message, (name, r.message)
        np.testing.assert_array_equal(sim.sim.theta, before)
        answers = {}
        for prefix in ("hw", "idle"):
            for name, typ, req in (
                ("torque_enable", SetBool, SetBool.Request(data=False)),
                ("reboot", Trigger, Trigger.Request()),
            ):
                r = h.call(client.create_client(typ, f"{prefix}/{name}"), req)
                assert not r.success, (prefix, name, r.message)
                answers[prefix, name] = r.message
        text = "the node is unconfigured (lifecycle): no servo is connected until configure, nothing written"
        assert set(answers.values()) == {text}, answers
        with h._busy:
            assert idle.state_label == "unconfigured" and not idle.sim.enabled
            np.testing.assert_array_equal(idle.sim.theta, [0.3])
            np.testing.assert_array_equal(idle.gate.goal, [0.3])
