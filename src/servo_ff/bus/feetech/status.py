"""STS status bits (the Status register, address 65, and the error byte of every status packet) and their mapping
onto the Dynamixel 2.0 Hardware Error Status layout that :class:`~servo_ff.bus.bus_types.Health` reports.

Feetech STS memory table, "Servo status" / "Unloading condition": bit 0 voltage, bit 1 magnetic encoder (sensor),
bit 2 temperature, bit 3 current, bit 5 load (overload); scservo_sdk names the same bits ERRBIT_VOLTAGE, _ANGLE,
_OVERHEAT, _OVERELE, _OVERLOAD. Unlike Dynamixel 2.0, a status packet with these bits set still carries valid data.
"""

from __future__ import annotations

import numpy as np

from .. import control_table as ct

VOLTAGE = 1 << 0
SENSOR = 1 << 1
TEMPERATURE = 1 << 2
CURRENT = 1 << 3
OVERLOAD = 1 << 5
NAMES = {VOLTAGE: "voltage", SENSOR: "encoder", TEMPERATURE: "temperature", CURRENT: "current", OVERLOAD: "overload"}
#: latched until the torque is released (written 0): the protections that cut the output
LATCHED = CURRENT | OVERLOAD

#: STS bit → Hardware Error Status bit (X-series): over-current has no X bit of its own; its nearest is bit 4
#: ("electrical shock": too much current / not enough power to drive the motor)
TO_HW = {
    VOLTAGE: ct.HW_INPUT_VOLTAGE,
    SENSOR: ct.HW_ENCODER,
    TEMPERATURE: ct.HW_OVERHEATING,
    CURRENT: ct.HW_ELECTRICAL_SHOCK,
    OVERLOAD: ct.HW_OVERLOAD,
}


def to_hw_error(bits):
    """STS status bits (scalar or array) → Hardware Error Status bits (``control_table.hardware_error_text``)."""
    b = np.asarray(bits, dtype=np.int64)
    out = np.zeros_like(b)
    for sts, hw in TO_HW.items():
        out |= np.where(b & sts, hw, 0)
    return out if out.ndim else int(out)


def text(bits: int) -> str:
    """Human-readable STS status bits (``"ok"`` for 0)."""
    names = [n for bit, n in NAMES.items() if bits & bit]
    return ", ".join(names) if names else "ok"
