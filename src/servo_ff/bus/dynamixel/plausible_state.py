"""The values a Dynamixel's state reply can hold: a reply outside them was garbled on the wire and passed the
frame check by chance (CRC-16 on Protocol 2.0: 1 in 65 536 garbled frames; the 8-bit checksum on 1.0: 1 in 256),
so it is reported invalid and counted as corrupt, never as a state.

Bounds per protocol, on the raw :data:`~servo_ff.bus.bus_types.STATE_DTYPE` record (Protocol 1.0 keeps Present
Load in the ``current`` field):

* **2.0 (X, MX 2.0).** Present Position within the Extended Position Control range, ±1 048 575 counts (±256 rev;
  the e-manual's Goal Position range in that mode); |Present Velocity| ≤ 4 096 × 0.229 rpm = 98 rad/s, over
  twice the fastest no-load speed of the tables here (XL330-M077: 383 rpm = 1 672 units); |Present Current| ≤
  2 × Current Limit (the table's initial value, the top of that register's range); |Present Load| ≤ 1 000 where
  address 126 is Present Load (MX-28, XL430: 0.1 % of the stall torque).
* **1.0 (MX 1.0, AX).** Present Position within 0 … Max Position Limit's initial value (4 095 / 1 023, the joint
  mode's range); Present Speed and Present Load are sign-magnitude with the direction in bit ``sign_bit`` (10), so
  the magnitude is at most 2^10 − 1 and the bits above the sign bit are never set (:func:`.p1_units.state_record`
  keeps them, so that this check sees them).

A garbled low byte of a position stays within the bounds: these bounds catch the garbled high bytes, the ones that
report a joint hundreds of radians away.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import control_table as ct

EXTENDED_POSITION_COUNTS = 1_048_575  # Extended Position Control Mode's Goal Position range, ±256 rev [counts]
VELOCITY_UNITS_MAX = 4096  # [0.229 rpm]: 98 rad/s, over 2 × the fastest no-load speed (XL330-M077, 1 672 units)
CURRENT_LIMIT_MARGIN = 2.0  # |Present Current| ≤ this × Current Limit
INT16_MAX = 32767
LOAD_MAX = 1000  # Present Load (2.0 without current sensing) [0.1 %]


@dataclass(frozen=True)
class StateBounds:
    """Raw bounds of a state record: position [counts] in ``position``; |velocity|, |current or load| ≤."""

    position: tuple[int, int]
    velocity: int
    effort: int


def state_bounds(table: ct.ControlTable) -> StateBounds:
    """The :class:`StateBounds` of ``table``'s protocol (see the module's text)."""
    if table.protocol == "dxl1":
        top = (1 << (table.sign_bit or 10)) - 1
        return StateBounds((0, int(table.item("Max Position Limit").default)), top, top)
    limit = table.by_name.get("Current Limit")
    if not table.has_current:  # MX-28, XL430: Present Load, −1 000 … 1 000 (0.1 % of the stall torque)
        effort = LOAD_MAX
    else:
        effort = INT16_MAX if limit is None else min(INT16_MAX, int(CURRENT_LIMIT_MARGIN * limit.default))
    return StateBounds((-EXTENDED_POSITION_COUNTS, EXTENDED_POSITION_COUNTS), VELOCITY_UNITS_MAX, effort)


def plausible_states(bounds: StateBounds, records: np.ndarray) -> np.ndarray:
    """(k,) bool: the state ``records`` (:data:`~servo_ff.bus.bus_types.STATE_DTYPE`) within ``bounds``."""
    pos = records["position"].astype(np.int64)
    lo, hi = bounds.position
    return (
        (pos >= lo)
        & (pos <= hi)
        & (np.abs(records["velocity"].astype(np.int64)) <= bounds.velocity)
        & (np.abs(records["current"].astype(np.int64)) <= bounds.effort)
    )
