"""Velocity and effort limits of a position goal — the ``velocity`` / ``effort`` fields of a JointState command
(REP-103: rad/s, N·m) — as the control-table register that bounds them, in the table's own unit.

=========  ===============================================  ==============================================
protocol   velocity [rad/s] →                               effort [N·m] →
=========  ===============================================  ==============================================
``dxl2``   Profile Velocity (112), ``velocity_unit``         Goal Current (102) = τ/kt/``current_unit``; acts
                                                             only in current-based position mode (Operating
                                                             Mode 5), refused otherwise and without kt
``dxl1``   Moving Speed (32), ``velocity_unit``              Torque Limit (34, "PWM Limit" here),
                                                             τ/``stall_torque`` of 1023
``sts``    Goal Velocity (46), ``velocity_unit``             Torque Limit (48), a duty in ``load_unit`` (0.1 %
                                                             of full duty): τ·R/(kt·V_in), the stall inverse of
                                                             the reported effort (``load_is_duty``)
=========  ===============================================  ==============================================

Each limit is the inverse of the effort the node reports for the same servo (:func:`~.bus_types.joint_state`): kt·I
(Goal Current), a fraction of ``stall_torque`` (Protocol 1.0 Present Load and Torque Limit), or the motor law
kt·(duty·V_in − kt·θ̇)/R at θ̇ = 0 (:func:`~.bus_types.effort_duty`): a limit of X N·m holds X N·m as reported. A
duty effort beyond what the supply V_in gives at full duty is clamped to full duty (``LimitWrite.clamped`` says so).

A limit is a magnitude (the sign of the value is ignored); 0 means "no limit" (the register's own no-limit value:
0 for the velocity registers, the full scale for the torque ones). A value that does not fit the register, is not
finite, or has no register on the servo is refused: :class:`LimitRefused` (a ValueError) naming the item.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import ServoFFError
from .bus_types import effort_duty
from .control_table import OPERATING_MODES, ControlTable
from .families import family

CURRENT_BASED_POSITION = OPERATING_MODES["current_based_position"]


class LimitRefused(ServoFFError, ValueError):
    """The servo has no register for this limit, or the value does not fit it."""


@dataclass(frozen=True)
class LimitWrite:
    """One register write: control-table ``item`` and its ``raw`` value; ``text`` says what it means."""

    item: str
    raw: int
    text: str
    clamped: str = ""  # non-empty: the value asked for was beyond the register and was clamped (why)


def _magnitude(value: float, what: str, unit: str) -> float:
    if not math.isfinite(value):
        raise LimitRefused(f"{what} {value} {unit} is not finite")
    return abs(float(value))


def velocity_limit(table: ControlTable, rad_s: float) -> LimitWrite:
    """|``rad_s``| [rad/s] → the velocity-limit register of ``table`` (0: no limit)."""
    v = _magnitude(rad_s, "velocity", "rad/s")
    item, top = family(table.protocol).velocity_limit  # (velocity item, largest raw value)
    if item not in table.by_name:
        raise LimitRefused(f"{table.name} has no velocity-limit register")
    raw = 0 if v == 0 else max(1, round(v / table.velocity_unit))  # a nonzero limit never becomes "none"
    if raw > top:
        raise LimitRefused(
            f"velocity {v:g} rad/s is beyond the {table.name} {item} register "
            f"({top} = {top * table.velocity_unit:g} rad/s)"
        )
    return LimitWrite(item, raw, f"{item} {raw}" + (" (no limit)" if raw == 0 else f" ({v:g} rad/s)"))


def effort_limit(
    table: ControlTable,
    nm: float,
    operating_mode: int | None = None,
    kt: float | None = None,
    current_limit: int | None = None,
    vin: float | None = None,
) -> LimitWrite:
    """|``nm``| [N·m] → the torque-limit register of ``table`` (0: no limit). Protocol 2.0: Goal Current, which
    bounds the torque only in current-based position mode (``operating_mode`` 5, read from the servo), through
    ``kt`` [N·m/A] (default: the table's) and up to ``current_limit`` (raw; default: the table's Current Limit).
    A duty register (``load_is_duty``, STS): the stall duty at the supply ``vin`` [V] as read from the servo."""
    tau = _magnitude(nm, "effort", "N·m")
    torque_item = family(table.protocol).torque_limit  # (item, full scale raw = stall torque) or Goal Current
    if torque_item is None:
        if "Goal Current" not in table.by_name or table.current_unit is None:
            raise LimitRefused(f"{table.name} has no Goal Current register (no current-based position mode)")
        if operating_mode != CURRENT_BASED_POSITION:
            raise LimitRefused(
                f"{table.name} is in Operating Mode {operating_mode}, not current-based position mode "
                f"({CURRENT_BASED_POSITION}): Goal Current would not bound the torque"
            )
        k = table.kt if kt is None else kt
        if k is None or not k > 0:
            raise LimitRefused(f"{table.name}: torque constant kt unknown, effort cannot become a current")
        top = int(table.item("Current Limit").default if current_limit is None else current_limit)
        raw = top if tau == 0 else max(1, round(tau / k / table.current_unit))
        if raw > top:
            raise LimitRefused(
                f"effort {tau:g} N·m is beyond the {table.name} Current Limit "
                f"({top} = {top * table.current_unit * k:g} N·m)"
            )
        return LimitWrite("Goal Current", raw, f"Goal Current {raw} ({raw * table.current_unit:g} A, {tau:g} N·m)")
    item, top = torque_item
    if item not in table.by_name:
        raise LimitRefused(f"{table.name} has no torque-limit register")
    if table.load_is_duty:
        return _duty_limit(table, item, top, tau, kt, vin)
    if not table.stall_torque:
        raise LimitRefused(f"{table.name}: stall torque unknown, effort cannot become a {item}")
    raw = top if tau == 0 else max(1, round(tau / table.stall_torque * top))
    if raw > top:
        raise LimitRefused(f"effort {tau:g} N·m is beyond the {table.name} stall torque {table.stall_torque:g} N·m")
    return LimitWrite(item, raw, f"{item} {raw}/{top}" + (" (no limit)" if tau == 0 else f" ({tau:g} N·m)"))


def _duty_limit(
    table: ControlTable, item: str, top: int, tau: float, kt: float | None, vin: float | None
) -> LimitWrite:
    """|τ| [N·m] → a duty torque limit (``top`` = full duty, raw in ``table.load_unit``): the stall duty
    τ·R/(kt·V_in) of :func:`~.bus_types.effort_duty`, clamped (said) to full duty beyond what ``vin`` gives."""
    if tau == 0:
        return LimitWrite(item, top, f"{item} {top}/{top} (no limit)")
    if vin is None or not (math.isfinite(vin) and vin > 0):
        raise LimitRefused(f"{table.name}: supply voltage unknown (not read yet), effort cannot become a {item} duty")
    duty = effort_duty(table, kt, tau, vin)
    if not math.isfinite(duty):
        raise LimitRefused(f"{table.name}: kt or R unknown, effort cannot become a {item} duty")
    raw = max(1, round(duty / table.load_unit))  # a nonzero limit never becomes "none"
    if raw <= top:
        return LimitWrite(item, raw, f"{item} {raw}/{top} ({tau:g} N·m at {vin:g} V)")
    full = tau * top * table.load_unit / duty  # the stall torque of full duty at this supply
    why = f"effort {tau:g} N·m is beyond the {table.name} stall torque at {vin:g} V ({full:.3g} N·m): clamped to it"
    return LimitWrite(item, top, f"{item} {top}/{top} ({full:.3g} N·m at {vin:g} V, clamped)", why)


__all__ = ["LimitRefused", "LimitWrite", "effort_limit", "velocity_limit"]
