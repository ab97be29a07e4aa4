"""The feed-forward node's status in ``/diagnostics``: WARN with the last refusal (said once), an input older than
its timeout (``imu/data``, ``servo_supply``, ``support_coefficient``), a desired trajectory that ended while moving
(until the next) or goals clamped to the URDF limits; the counters, the supply voltage in use, the servo gain's state,
the inputs' ages and the clamps per joint."""

from __future__ import annotations

from typing import Any

from diagnostic_msgs.msg import DiagnosticStatus, KeyValue

from servo_ff.ros.common import diag_name, hardware_id


def feedforward_status(node: Any) -> DiagnosticStatus:
    """``node``'s status now; its ``last_error`` is cleared (each refusal is in one status)."""
    clamps = node.ctrl.clamp_report()
    now, t = node._now(), node.table
    held = {  # diagnostics key: (the input's age, its timeout, the text before its first message)
        "imu": (node.imu_input.age, t["imu_timeout"], "none yet (upright assumed)"),
        "supply_age": (node.supply_age, t["supply_timeout"], "none yet (u_nominal assumed)"),
        "support_age": (node.support.age, t["support_timeout"], node.support.state()),
    }
    ages = {k: age.state(now, float(timeout)) or first for k, (age, timeout, first) in held.items()}
    stale = "; ".join(f"{age.topic} {ages[k]}" for k, (age, _, _) in held.items() if age.stale)
    ros_ns = node.get_clock().now().nanoseconds
    stood = node.clock_stall.standing(ros_ns)
    if stood is not None and stood >= 1.0:  # on sim time: /clock stopped or never came; the ages are frozen
        what = "no /clock yet" if ros_ns == 0 else f"the clock stands ({stood:.0f} s)"
        stale = "; ".join(filter(None, [f"{what}: ages as of its last reading", stale]))
    stale = "; ".join(filter(None, [stale, node.stream_stopped]))  # a trajectory that ended moving: until the next
    level = DiagnosticStatus.WARN if (clamps or node.last_error or stale) else DiagnosticStatus.OK
    st = DiagnosticStatus(
        level=level,
        name=diag_name(node, "feed-forward"),
        hardware_id=hardware_id(node, "feedforward"),
        message=node.last_error or stale or ("goals clamped to URDF limits" if clamps else "ok"),
        values=[
            KeyValue(key="ticks", value=str(node.ticks)),
            KeyValue(key="enabled", value=str(node.enabled)),
            KeyValue(key="rejected_inputs", value=str(node.rejected)),
            KeyValue(key="supply_V", value=f"{node.ctrl.u_bat:.3f}"),
            KeyValue(key="servo_kp", value=node.gains.state),
            KeyValue(key="torque", value=node.torque_state()),
            KeyValue(key="support", value=node.support.state()),
            *(KeyValue(key=k, value=v) for k, v in ages.items()),
            *(KeyValue(key=f"clamps.{k}", value=str(c)) for k, c in clamps.items()),
        ],
    )
    node.last_error = ""
    return st
