"""One rule for the per-servo /diagnostics of servo_sim_node and servo_hardware_node (nothing else to say):
unconfigured and finalized WARN naming the state, inactive OK "inactive", active OK "torque on", or after
torque_enable false OK "torque off" — on the sim and on the hardware (virtual bus) alike, over DDS."""

from __future__ import annotations

import pytest
from nodes_harness import PENDULUM_SIM, wait_for

pytest.importorskip("rclpy")
pytest.importorskip("dynamixel_sdk")
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus  # noqa: E402
from hardware_rig import Rig  # noqa: E402
from lifecycle_msgs.msg import Transition  # noqa: E402
from std_srvs.srv import SetBool  # noqa: E402

from servo_ff.bus.virtual_bus import ServoLoad  # noqa: E402
from servo_ff.nodes.sim_node import SimNode  # noqa: E402

OK, WARN = DiagnosticStatus.OK, DiagnosticStatus.WARN
JOINTS = ["hip", "knee"]


def test_sim_and_hardware_say_the_lifecycle_and_torque_state_alike(tmp_path):
    """Before (/tmp/audit_20b/diag_levels.py): the sim said OK "torque off" unconfigured and finalized where the
    hardware said WARN, and after torque_enable false the hardware said "ok" where the sim said "torque off"."""
    from rclpy.parameter import Parameter

    rig = Rig(tmp_path, 111, ServoLoad.pendulum(0.25, 0.1))
    h = rig.h
    try:
        hw = rig.node("servo_hardware", autostart=False)
        params = {**PENDULUM_SIM, "joints": JOINTS, "autostart": False, "diagnostics_period": 0.2}
        overrides = [Parameter(k, value=v) for k, v in params.items()]
        sim = h.add(SimNode("servo_sim", context=h.context, namespace=f"{h.ns}/sim", parameter_overrides=overrides))
        statuses: list[DiagnosticArray] = []
        rig.client.create_subscription(DiagnosticArray, "/diagnostics", statuses.append, 200)

        def says(node, level: int, start: str) -> list[str]:
            """Both joints of ``node`` report ``level`` with a message starting ``start`` in a /diagnostics after
            now (one with a communication error of a loaded machine's virtual bus in between is passed over)."""
            names, n, last = {f"{node.get_fully_qualified_name()}: {j}" for j in JOINTS}, len(statuses), [None]

            def seen():
                for d in list(statuses)[n:]:
                    mine = [(s.level, s.message) for s in d.status if s.name in names]
                    last[0] = mine or last[0]
                    if len(mine) == 2 and all(lv == level and m.startswith(start) for lv, m in mine):
                        return [m for _, m in mine]
                return None

            try:
                return wait_for(seen, 20.0, f"{node.get_name()} diagnostics")
            except TimeoutError:
                raise AssertionError(f"{node.get_name()}: expected {level} {start!r}, last {last[0]}") from None

        def change(node, transition: int) -> None:
            """The transition, asked again while it fails (a loaded machine's virtual bus may miss a configure)."""
            to = {Transition.TRANSITION_CONFIGURE: "inactive", Transition.TRANSITION_ACTIVATE: "active"}
            name, goal = node.get_fully_qualified_name(), to.get(transition, "finalized")
            wait_for(lambda: rig.change(name, transition) or node.state_label == goal, 60.0, f"{name}: {goal}")

        for node in (sim, hw):
            says(node, WARN, "unconfigured: ")
            change(node, Transition.TRANSITION_CONFIGURE)
            says(node, OK, "inactive: torque off")
            change(node, Transition.TRANSITION_ACTIVATE)
            says(node, OK, "torque on")
        torque = {n: rig.client.create_client(SetBool, f"{n.get_namespace()}/servo/torque_enable") for n in (sim, hw)}
        for node in (sim, hw):
            assert h.call(torque[node], SetBool.Request(data=False), timeout=15.0).success
            says(node, OK, "torque off: goals refused until servo/torque_enable true")
            change(node, Transition.TRANSITION_ACTIVE_SHUTDOWN)
            said = says(node, WARN, "finalized: ")
            assert not any("until configure" in m for m in said), said  # a finalized node is never configured again
    finally:
        rig.close()
