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
``sts``    Goal Velocity (46), ``velocity_unit``             Torque Limit (48), τ/``stall_torque`` in
                                                             ``load_unit`` (0.1 % of full duty)
=========  ===============================================  ==============================================

A limit is a magnitude (the sign of the value is ignored); 0 means "no limit" (the register's own no-limit value:
0 for the velocity registers, the full scale for the torque ones). A value that does not fit the register, is not
finite, or has no register on the servo is refused: :class:`LimitRefused` (a ValueError) naming the item.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import ServoFFError
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
) -> LimitWrite:
    """|``nm``| [N·m] → the torque-limit register of ``table`` (0: no limit). Protocol 2.0: Goal Current, which
    bounds the torque only in current-based position mode (``operating_mode`` 5, read from the servo), through
    ``kt`` [N·m/A] (default: the table's) and up to ``current_limit`` (raw; default: the table's Current Limit)."""
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
    if not table.stall_torque:
        raise LimitRefused(f"{table.name}: stall torque unknown, effort cannot become a {item}")
    raw = top if tau == 0 else max(1, round(tau / table.stall_torque * top))
    if raw > top:
        raise LimitRefused(f"effort {tau:g} N·m is beyond the {table.name} stall torque {table.stall_torque:g} N·m")
    return LimitWrite(item, raw, f"{item} {raw}/{top}" + (" (no limit)" if tau == 0 else f" ({tau:g} N·m)"))


__all__ = ["LimitRefused", "LimitWrite", "effort_limit", "velocity_limit"]
