"""The per-servo diagnostics of ``servo_hardware_node`` (``/diagnostics``): the lifecycle and connection state, the
hardware error bits, staleness and the bus's communication statistics of every servo."""

from __future__ import annotations

import math
import time

from diagnostic_msgs.msg import DiagnosticStatus, KeyValue

from servo_ff.models.thermal import thermal_warning

from .common import diag_name, hardware_id

_LEVELS = (DiagnosticStatus.OK, DiagnosticStatus.WARN, DiagnosticStatus.ERROR)


def thermal_values(thermal, i: int, time_to_limit: float) -> list[KeyValue]:
    """temperature_C and time_to_limit_s of servo ``i`` of a thermal model (none without one)."""
    if thermal is None:
        return []
    t = "inf" if not math.isfinite(time_to_limit) else f"{time_to_limit:.1f}"
    return [KeyValue(key="temperature_C", value=f"{thermal.temp[i]:.2f}"), KeyValue(key="time_to_limit_s", value=t)]


def servo_state(node, torque_on: bool, why: str) -> tuple[int, str]:
    """Level and message of a servo with nothing else to say, one rule for sim and hardware: unconfigured or
    finalized WARN (nothing read or held; ``why``: the hardware's port state, a sim's), inactive OK (a state:
    torque off, read-only), active OK "torque on" or, torque off by request (``torque_enable`` false, a reboot),
    OK "torque off"."""
    if not node.configured:
        return DiagnosticStatus.WARN, f"{node.state_label}: {why}"
    if not node.active:
        return DiagnosticStatus.OK, "inactive: torque off, read-only (goals refused until activate)"
    if not torque_on:
        return DiagnosticStatus.OK, f"torque off: goals refused until {node.names['torque_enable']} true"
    return DiagnosticStatus.OK, "torque on"


def sim_state(node, torque_on: bool) -> tuple[int, str]:
    """:func:`servo_state` of a simulated servo: unconfigured or finalized, nothing is stepped."""
    return servo_state(node, torque_on, "not stepped" + ("" if node.state_label == "finalized" else " until configure"))


def servo_diagnostics(node) -> list[DiagnosticStatus]:
    """One DiagnosticStatus per servo of a hardware node: WARN (a missed reply this cycle, new communication errors)
    or ERROR (disconnected, refused at set-up, missing since configure, hardware error, skipped, silent for
    max_reply_age), else the lifecycle and torque state as a sim says it (:func:`servo_state`), with its bus
    statistics."""
    now = time.monotonic()
    bus_name = "sts" if node.table["protocol"] == "sts" else "dxl"  # hardware_id: dxl/<id> or sts/<id>
    out = []
    limit = node.table["temperature_limit"]
    t_lim = node.temperature_trend.time_to(limit)
    for k, (name, i) in enumerate(zip(node.joints, node.ids)):
        st = node.bus.stats.get(i) if node.bus is not None else None
        age = now - node.last_reply[k]
        err = int(node.hw_error[k])
        stale = not node.valid[k]
        if not node.configured:
            level, msg = servo_state(node, False, node.disconnect_reason)
        elif not node.connected:
            level, msg = DiagnosticStatus.ERROR, f"bus disconnected: {node.disconnect_reason}; reconnecting"
        elif i in node.refused:
            level = DiagnosticStatus.ERROR
            msg = (
                f"refused at set-up, left out (missing_ids=continue): {node.refused[i]}; torque off, never driven, "
                "NaN in joint_states, goals naming it refused; configure again once it is set"
            )
        elif not node.seen[k]:
            level = DiagnosticStatus.ERROR
            msg = (
                f"missing: {node.joint_text([k])} has not answered since configure; NaN in joint_states, goals "
                f"naming it refused, probed every {node.table['reconnect_period']:g} s"
            )
        elif node.bus is not None and i in node.bus.missing:
            level = DiagnosticStatus.ERROR
            msg = (
                f"silent since the reconnection ({age:.2f} s): holding its last value, no goal written, probed "
                f"every {node.table['reconnect_period']:g} s"
            )
        elif err > 0:
            level = DiagnosticStatus.ERROR
            msg = f"hardware error: {node.ct.hardware_error_text(err)} (reboot clears)"
        elif (shut := node.shutdown_text(k, now)) is not None:  # its error bit gone (1.0, STS): still kept off
            level, msg = DiagnosticStatus.ERROR, shut
        elif st is not None and st.skipping:
            level = DiagnosticStatus.ERROR
            msg = f"stale ({age:.2f} s, holding its last value): {node.bus.servo_status(i)}"
        elif age > node.table["max_reply_age"]:
            level, msg = DiagnosticStatus.ERROR, f"stale: no valid reply for {age:.2f} s, holding its last value"
        elif (note := node.reboot_text(k, now)) is not None:
            level, msg = DiagnosticStatus.WARN, note
        elif stale:  # inactive too: joint_states carry its last value then as well (before: OK until max_reply_age)
            level = DiagnosticStatus.WARN
            msg = f"stale: no reply this cycle, holding its last value ({age:.3f} s old)"
            msg += "" if node.active else "; inactive: torque off, read-only"
        elif st is not None and st.failures > node._prev_failures.get(i, 0):
            level, msg = (
                DiagnosticStatus.WARN,
                (f"{st.failures - node._prev_failures.get(i, 0)} new communication error(s), last: {st.last_error}"),
            )
        else:  # before: "ok" with torque off by request too, where a sim said "torque off"
            level, msg = servo_state(node, node.torque_wanted, node.disconnect_reason)
        heat = thermal_warning(node.temperature[k], t_lim[k], limit, node.table["temperature_warn_s"])
        if heat[0] and _LEVELS[heat[0]] > level:
            level, msg = _LEVELS[heat[0]], heat[1]
        values = [
            KeyValue(key="id", value=str(i)),
            KeyValue(key="stale", value=str(bool(stale)).lower()),  # not configured: no reading is fresh
            KeyValue(key="temperature_C", value=f"{node.temperature[k]:.1f}"),
            KeyValue(key="time_to_limit_s", value=f"{t_lim[k]:.1f}" if math.isfinite(t_lim[k]) else "inf"),
            KeyValue(key="hardware_error", value=str(err)),
            KeyValue(key="hardware_error_text", value=node.ct.hardware_error_text(err) if err >= 0 else "unread"),
            KeyValue(key="last_reply_age_s", value=f"{age:.3f}" if math.isfinite(age) else "never"),
            KeyValue(key="voltage_V", value=f"{node.voltage[k]:.1f}"),
            KeyValue(key="reconnects", value=str(node.reconnects)),
            KeyValue(key="unrequested_reboots", value=str(int(node.unrequested_reboots[k]))),
        ]
        if st is not None:
            values += [
                KeyValue(key="comm_ok", value=str(st.ok)),
                KeyValue(key="comm_timeouts", value=str(st.timeouts)),
                KeyValue(key="comm_corrupt", value=str(st.corrupt)),
                KeyValue(key="comm_wrong_length", value=str(st.wrong_length)),
                KeyValue(key="comm_status_errors", value=str(st.status_errors)),
                KeyValue(key="comm_late", value=str(st.late)),
                KeyValue(key="comm_skipped_reads", value=str(st.skipped)),
                KeyValue(key="skipped", value=str(st.skipping).lower()),
            ]
        if st is not None:
            node._prev_failures[i] = st.failures
        out.append(
            DiagnosticStatus(
                level=level,
                name=diag_name(node, name),
                hardware_id=hardware_id(node, f"{bus_name}/{i}"),
                message=msg,
                values=values,
            )
        )
    return out
