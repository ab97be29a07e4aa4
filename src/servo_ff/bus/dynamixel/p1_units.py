"""Dynamixel Protocol 1.0 (MX and AX on 1.0 firmware): baud grid, status error bits, P gain ↔ compliance slope and
the state decoding — pure functions, no I/O, shared by :mod:`.bus_p1` and :mod:`.virtual_p1`.

Sources: ROBOTIS e-manual, MX-64/MX-106 (1.0) and AX-12A control tables, their "Baud Rate", "Shutdown",
"PID Gains" and "Compliance Slope" sections.
"""

from __future__ import annotations

import math
import struct

from .. import control_table as ct
from .. import protocol1 as p1
from ..default_gain import SLOPE_TIMES_P

#: Baud Rate register: 2,000,000 / (value + 1) bps for value 0..249; MX firmware adds 250/251/252.
BAUD_BASE = 2_000_000
MX_SPECIAL_BAUDS = {250: 2_250_000, 251: 2_500_000, 252: 3_000_000}
#: "Less than 3 % of the baud rate error margin will not affect UART communication" (e-manual, Baud Rate)
BAUD_TOLERANCE = 0.03
#: Highest rate per model (e-manual specifications: AX-12A 7843 bps – 1 Mbps; MX 1.0 up to 3 Mbps)
MAX_BAUD = {12: 1_000_000}
#: Highest rate a ROBOTIS USB adapter (U2D2, FT232H) and pyserial/termios set on a port here
ADAPTER_MAX_BAUD = 4_500_000

#: Status error bits that say the instruction was not executed (its data, if any, is not to be used)
INSTRUCTION_ERRORS = p1.ERR_ANGLE_LIMIT | p1.ERR_RANGE | p1.ERR_CHECKSUM | p1.ERR_INSTRUCTION
#: Status error bits that report an alarm condition of the servo (the data of the reply is valid)
ALARM_ERRORS = p1.ERR_INPUT_VOLTAGE | p1.ERR_OVERHEATING | p1.ERR_OVERLOAD
#: 1.0 alarm bit → the Hardware Error Status bit of the same meaning (the same bit positions: 0, 2, 5)
ALARM_TO_HW = {
    p1.ERR_INPUT_VOLTAGE: ct.HW_INPUT_VOLTAGE,
    p1.ERR_OVERHEATING: ct.HW_OVERHEATING,
    p1.ERR_OVERLOAD: ct.HW_OVERLOAD,
}

#: Models that answer BULK_READ (MX on 1.0 firmware); the AX has no such instruction
BULK_READ_MODELS = frozenset({310, 320})

#: AX Compliance Slope: 7 steps whose representative values are 2, 4, …, 128 (e-manual "Compliance Slope");
#: slope · P = SLOPE_TIMES_P (1024, servo_ff.bus.default_gain).
SLOPE_STEPS = (2, 4, 8, 16, 32, 64, 128)

STATE_ADDR, STATE_LEN = 36, 6  # Present Position, Present Speed, Present Load (2 bytes each)
HEALTH_ADDR, HEALTH_LEN = 24, 20  # Torque Enable (24) … Present Voltage (42), Present Temperature (43)
HEALTH_VOLTAGE = 42 - HEALTH_ADDR  # offset of Present Voltage in the health block (Torque Enable at 0)
_STATE = struct.Struct("<hii")  # the 2.0 bus's STATE_DTYPE record: current/load (i2), velocity (i4), position (i4)


def baud_code(baud: int, table: ct.ControlTable) -> int:
    """Baud Rate register value for ``baud`` [bps] on ``table``'s servo; ValueError if the servo's grid
    (2 Mbps / (value + 1), MX also 2.25/2.5/3 Mbps) misses it by more than 3 %, or the servo or the adapter
    cannot run that fast."""
    baud = int(baud)
    top = min(MAX_BAUD.get(table.model_number, 3_000_000), ADAPTER_MAX_BAUD)
    if not 0 < baud <= top:
        raise ValueError(
            f"baud {baud}: the {table.name} (protocol dxl1) runs at 7843..{top} bps"
            + (" (adapter limit)" if top == ADAPTER_MAX_BAUD else "")
        )
    grid = {v: BAUD_BASE / (v + 1) for v in range(250)}
    if table.model_number in BULK_READ_MODELS:
        grid.update(MX_SPECIAL_BAUDS)
    value = min(grid, key=lambda v: abs(grid[v] - baud))
    err = (grid[value] - baud) / baud
    if abs(err) > BAUD_TOLERANCE:
        raise ValueError(
            f"baud {baud}: not on the {table.name} Baud Rate grid (2000000/(value+1) bps); nearest "
            f"{grid[value]:.0f} bps (value {value}) is {100 * err:+.1f} % off, more than the manual's 3 %"
        )
    return value


def baud_of_code(value: int, table: ct.ControlTable) -> float:
    """Baud rate [bps] of Baud Rate register ``value``."""
    if table.model_number in BULK_READ_MODELS and value in MX_SPECIAL_BAUDS:
        return float(MX_SPECIAL_BAUDS[value])
    return BAUD_BASE / (int(value) + 1)


def alarm_to_hw(err: int) -> int:
    """Alarm bits of a 1.0 status error byte → Hardware Error Status bits (``control_table.hardware_error_text``)."""
    return sum(hw for bit, hw in ALARM_TO_HW.items() if err & bit)


def error_text(err: int) -> str:
    """The set bits of a 1.0 status error byte, named (``"ok"`` for 0)."""
    names = [n for bit, n in p1.ERROR_NAMES.items() if err & bit]
    return ", ".join(names) if names else "ok"


def slope_of_p(p: float) -> int:
    """AX Compliance Slope for the MX protocol-1 P gain ``p`` (slope = 1024 / P, nearest step in log scale)."""
    if not p > 0:
        raise ValueError(f"P gain {p}: a compliance slope needs P > 0 (P 8..512 = slope 128..2)")
    want = math.log2(SLOPE_TIMES_P / p)
    return min(SLOPE_STEPS, key=lambda s: abs(math.log2(s) - want))


def p_of_slope(slope: int) -> float:
    """The P gain equivalent of an AX Compliance Slope register value (its representative step, 0–3 → 2)."""
    rep = max(s for s in SLOPE_STEPS if s <= max(int(slope), 2))
    return SLOPE_TIMES_P / rep


def sign_magnitude(raw: int, sign_bit: int) -> int:
    """Signed value of a sign-magnitude field (bit ``sign_bit`` set = negative). Bits above the sign bit, which a
    servo never sets, stay in the magnitude, so that a garbled reply reads out of range
    (:mod:`.plausible_state`) instead of passing as a smaller value."""
    mag = raw & ~(1 << sign_bit)
    return -mag if raw & (1 << sign_bit) else mag


def state_record(data: bytes, sign_bit: int = 10) -> bytes:
    """6 bytes read from 36 (position u16, speed and load sign-magnitude) → one 10-byte record of the 2.0 bus's
    ``STATE_DTYPE`` (load in the current field), so that its cycle logic applies unchanged."""
    pos = data[0] | data[1] << 8
    vel = sign_magnitude(data[2] | data[3] << 8, sign_bit)
    load = sign_magnitude(data[4] | data[5] << 8, sign_bit)  # up to ±0xFBFF garbled: held in the int16 field,
    return _STATE.pack(max(-0x8000, min(0x7FFF, load)), vel, pos)  # out of range either way
