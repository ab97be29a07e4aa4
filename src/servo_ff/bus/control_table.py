"""Control tables as data — one YAML file per model under ``<family>/tables/``, each citing its manual
(``source``) — and raw ↔ SI conversions.

Every table names its items by the X-series (Protocol 2.0) name wherever the meaning is the same ("Torque Enable",
"Goal Position", "Present Position", "Present Velocity", "Present Current"/"Present Load", "Present Input Voltage",
"Present Temperature", "Position P Gain", "Min/Max Position Limit", "Return Delay Time", "Status Return Level"),
so buses and the virtual bus address items by name whatever the protocol; units and encodings are fields of the
table (:class:`ControlTable`), not constants of the code.

The Protocol 2.0 constants below (MX 2.0 firmware uses the X-series layout of the e-manual pages ``dxl/mx/mx-106-2``,
``mx-64-2``, ``mx-28-2``, ``dxl/x/xm430-w350``) are the defaults of a table's units:

* position: 4096 counts per revolution; ``counts_to_rad`` maps ``center`` (2048) to 0 rad, counter-clockwise
  positive (REP-103: the Dynamixel counts grow counter-clockwise seen from the horn);
* velocity: 0.229 rpm per unit; current: 3.36 mA (MX-64/106) or 2.69 mA (XM430) per unit; input voltage 0.1 V;
  temperature 1 °C; PWM ±885 = ±100 % duty; return delay 2 µs per unit.
* effort: τ = kt·I with the model's output-shaft torque constant kt [N·m/A] where known (bam presets for
  MX-64/MX-106); MX-28 (2.0) has no current sensor (address 126 is Present Load, 0.1 % of stall torque).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .families import DEFAULT_PROTOCOL, PROTOCOLS, TABLES_DIRS

COUNTS_PER_REV = 4096
CENTER_COUNTS = 2048
RAD_PER_COUNT = 2.0 * math.pi / COUNTS_PER_REV
VELOCITY_UNIT_RPM = 0.229
RAD_S_PER_VELOCITY_UNIT = VELOCITY_UNIT_RPM * 2.0 * math.pi / 60.0  # 0.0239809 rad/s
VOLTAGE_UNIT = 0.1  # V
PWM_FULL_SCALE = 885  # ±885 = ±100 % duty
RETURN_DELAY_UNIT = 2e-6  # s
POSITION_GAIN_DIVISOR = 128.0  # KPP = register/128 (protocol 2.0)
#: bam's ``kp`` is the protocol-1 MX P gain (Kp = P/8); the 2.0 register is KPP·128 → register = 16·kp.
REGISTER_PER_BAM_KP = 16.0

# Hardware Error Status (address 70) bits
HW_INPUT_VOLTAGE = 1 << 0
HW_OVERHEATING = 1 << 2
HW_ENCODER = 1 << 3
HW_ELECTRICAL_SHOCK = 1 << 4
HW_OVERLOAD = 1 << 5
HW_ERROR_NAMES = {
    HW_INPUT_VOLTAGE: "input voltage",
    HW_OVERHEATING: "overheating",
    HW_ENCODER: "motor encoder",
    HW_ELECTRICAL_SHOCK: "electrical shock",
    HW_OVERLOAD: "overload",
}

OPERATING_MODES = {
    "current": 0,
    "velocity": 1,
    "position": 3,
    "extended_position": 4,
    "current_based_position": 5,
    "pwm": 16,
}


@dataclass(frozen=True)
class Item:
    """One control-table item: ``address``, ``size`` [bytes], ``access`` ("R" or "RW"), ``default`` raw value,
    ``signed`` two's complement, ``eeprom`` (writable only while torque is off). ``sign_bit``: the bit that
    carries the sign of this item's sign-magnitude value when it is not the table's (Feetech Present Load:
    bit 10); None: the table's ``sign_bit``."""

    name: str
    address: int
    size: int
    access: str = "RW"
    default: int = 0
    signed: bool = False
    eeprom: bool = False
    sign_bit: int | None = None

    @property
    def writable(self) -> bool:
        return "W" in self.access


RAM_START = 64  # first RAM address: a REBOOT restores the RAM area to its defaults
#: Baud Rate register code per baud rate
BAUD_CODES = {9600: 0, 57600: 1, 115200: 2, 1_000_000: 3, 2_000_000: 4, 3_000_000: 5, 4_000_000: 6, 4_500_000: 7}
INDIRECT_ADDRESS_0 = 168
INDIRECT_DATA_0 = 224
N_INDIRECT = 28
TABLE_SIZE = 256  # bytes emulated per servo (the second indirect bank at 578– is not emulated)


@dataclass(frozen=True)
class ControlTable:
    """A model's control table: ``model_number``, items by name, units and the output torque constant.

    Units and encodings: position ``rad_per_count`` around ``center`` counts (REP-103: counter-clockwise positive),
    ``velocity_unit`` [rad/s per raw], ``voltage_unit`` [V per raw], ``load_unit`` (fraction of ``stall_torque``
    per raw, for Present Load; with ``load_is_duty`` fraction of full duty), ``sign_bit``: None when signed items
    are two's complement, else the bit that carries the sign of a sign-magnitude value (Feetech: bit 15 of position,
    velocity and load)."""

    name: str
    model_number: int
    items: tuple[Item, ...]
    current_unit: float | None  # A per raw unit (None: no current sensing)
    kt: float | None = None  # output-shaft torque constant [N·m/A] where known
    stall_torque: float | None = None  # [N·m] (MX-28 Present Load is 0.1 % of it)
    R: float | None = None  # motor resistance [Ω] with ``kt``: a duty Present Load's torque (bus_types.load_effort)
    load_is_duty: bool = False  # Present Load is the drive duty (Feetech STS), not a fraction of ``stall_torque``
    protocol: str = DEFAULT_PROTOCOL
    source: str = ""  # the manual the addresses and units come from
    rad_per_count: float = RAD_PER_COUNT
    center: float = CENTER_COUNTS
    velocity_unit: float = RAD_S_PER_VELOCITY_UNIT
    voltage_unit: float = VOLTAGE_UNIT
    load_unit: float = 1e-3
    sign_bit: int | None = None
    p_gain_per_kp: float = REGISTER_PER_BAM_KP  # Position P Gain register per kp (MX 2.0: 16; X, protocol 1: 1)
    p_gain_max: int = 16383  # largest Position P Gain register value
    p_gain_min: int = 0  # smallest (AX-12A: 1, its compliance slope = 1024 / P needs P > 0)
    baud_codes: Mapping[int, int] | None = None  # baud rate → Baud Rate register code (None: BAUD_CODES)
    by_name: Mapping[str, Item] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_name", {i.name: i for i in self.items})

    def item(self, name: str) -> Item:
        try:
            return self.by_name[name]
        except KeyError:
            raise KeyError(
                f"{self.name} has no control-table item {name!r}; valid items: {', '.join(i.name for i in self.items)}"
            ) from None

    def at(self, address: int) -> Item | None:
        for i in self.items:
            if i.address <= address < i.address + i.size:
                return i
        return None

    @property
    def has_current(self) -> bool:
        return self.current_unit is not None

    def defaults(self, dxl_id: int) -> bytearray:
        """The table's power-on bytes (``TABLE_SIZE``) for a servo with ID ``dxl_id``."""
        mem = bytearray(TABLE_SIZE)
        for it in self.items:
            v = self.model_number if it.name == "Model Number" else dxl_id if it.name == "ID" else it.default
            mem[it.address : it.address + it.size] = self.encode(it, int(v)).to_bytes(it.size, "little")
        return mem

    def encode(self, item: Item | str, value: int) -> int:
        """Signed ``value`` → the unsigned raw field of ``item`` (two's complement or sign-magnitude); ValueError
        when it does not fit (a signed item's positive value reaching its sign bit too)."""
        it = self.item(item) if isinstance(item, str) else item
        bits = 8 * it.size
        sign = self.sign_bit_of(it)
        if not it.signed or value >= 0:  # (an unsigned item's negative value too)
            top = bits if not it.signed else bits - 1 if sign is None else sign
            if not 0 <= value < 1 << top:
                raise ValueError(f"{self.name} {it.name}: {value} is not in 0..{(1 << top) - 1}")
            return int(value)
        if sign is None:
            if value < -(1 << (bits - 1)):
                raise ValueError(f"{self.name} {it.name}: {value} does not fit {it.size} signed byte(s)")
            return int(value) + (1 << bits)
        if -value >= 1 << sign:
            raise ValueError(f"{self.name} {it.name}: |{value}| does not fit {sign} magnitude bits")
        return (1 << sign) | -int(value)

    def decode(self, item: Item | str, raw) -> np.ndarray:
        """Unsigned raw field(s) of ``item`` → signed values (int64)."""
        it = self.item(item) if isinstance(item, str) else item
        r = np.asarray(raw, dtype=np.int64)
        if not it.signed:
            return r
        sign = self.sign_bit_of(it)
        if sign is None:
            half = 1 << (8 * it.size - 1)
            return np.where(r >= half, r - 2 * half, r)
        mag = r & ((1 << sign) - 1)
        return np.where(r & (1 << sign), -mag, mag)

    def sign_bit_of(self, item: Item | str) -> int | None:
        """The sign bit of a signed sign-magnitude ``item`` (its own, else the table's); None: two's complement."""
        it = self.item(item) if isinstance(item, str) else item
        return it.sign_bit if it.sign_bit is not None else self.sign_bit

    def position_to_rad(self, counts) -> np.ndarray:
        """Present/Goal Position [signed counts] → [rad] (0 at ``center``)."""
        return (np.asarray(counts, dtype=np.float64) - self.center) * self.rad_per_count

    def rad_to_position(self, rad) -> np.ndarray:
        """[rad] → Goal Position counts (nearest count, int64); non-finite input raises."""
        r = np.asarray(rad, dtype=np.float64)
        if not np.isfinite(r).all():
            raise ValueError(f"position contains non-finite values: {r}")
        return np.rint(r / self.rad_per_count + self.center).astype(np.int64)


def load_table(path) -> ControlTable:
    """A control table from its YAML file (``tables/<key>.yaml``): ``name``, ``model_number``, ``protocol``,
    ``source``, units (see :class:`ControlTable`) and ``items: {name: [address, size, access, default, flags…]}``
    with flags ``signed``, ``eeprom`` and ``signN`` (signed, sign-magnitude with its sign in bit N), ``p_gain_per_kp``
    (required: MX 2.0 16, X-series and protocol 1 1 — no table falls back to the MX scale), ``p_gain_max``,
    ``p_gain_min`` and ``baud_rates: {baud: register code}``. A malformed file raises ValueError naming file and key."""
    import yaml

    path = Path(path)
    doc = yaml.safe_load(path.read_text())
    where = path.name
    try:
        items = []
        for name, row in doc["items"].items():
            addr, size, access, default, *flags = row
            signs = [int(f[4:]) for f in flags if isinstance(f, str) and re.fullmatch(r"sign\d+", f)]
            unknown = set(flags) - {"signed", "eeprom"} - {f"sign{b}" for b in signs}
            if unknown or size not in (1, 2, 4) or access not in ("R", "RW", "W") or any(b >= 8 * size for b in signs):
                raise ValueError(f"{where}: item {name!r}: bad row {row}")
            items.append(
                Item(
                    name,
                    int(addr),
                    int(size),
                    access,
                    int(default),
                    "signed" in flags or bool(signs),
                    "eeprom" in flags,
                    signs[0] if signs else None,
                )
            )
        units = {
            k: doc[k] for k in ("rad_per_count", "center", "velocity_unit", "voltage_unit", "load_unit") if k in doc
        }
        table = ControlTable(
            doc["name"],
            int(doc["model_number"]),
            tuple(sorted(items, key=lambda i: i.address)),
            doc.get("current_unit"),
            doc.get("kt"),
            doc.get("stall_torque"),
            R=doc.get("R"),
            load_is_duty=bool(doc.get("load_is_duty", False)),
            protocol=doc["protocol"],
            source=doc["source"],
            sign_bit=doc.get("sign_bit"),
            p_gain_per_kp=float(doc["p_gain_per_kp"]),
            p_gain_max=int(doc.get("p_gain_max", 16383)),
            p_gain_min=int(doc.get("p_gain_min", 0)),
            baud_codes={int(b): int(c) for b, c in doc["baud_rates"].items()} if "baud_rates" in doc else None,
            **units,
        )
    except KeyError as e:
        raise ValueError(f"{where}: missing key {e.args[0]!r}") from None
    if table.protocol not in PROTOCOLS:
        raise ValueError(f"{where}: protocol {table.protocol!r} is not one of {', '.join(PROTOCOLS)}")
    spans = sorted((i.address, i.address + i.size, i.name) for i in table.items)
    for (a0, a1, n0), (b0, _, n1) in zip(spans, spans[1:]):
        if b0 < a1:
            raise ValueError(f"{where}: items {n0!r} and {n1!r} overlap")
    return table


#: every table, by the stem of its YAML file
CONTROL_TABLES: dict[str, ControlTable] = {
    p.stem: load_table(p) for p in sorted(f for d in TABLES_DIRS for f in d.glob("*.yaml"))
}
MODEL_BY_NUMBER: dict[int, str] = {t.model_number: k for k, t in CONTROL_TABLES.items() if t.protocol == "dxl2"}

# Addresses used on every cycle (identical in all tables above).
ADDR_TORQUE_ENABLE = 64
ADDR_HW_ERROR = 70
ADDR_RETURN_DELAY = 9
ADDR_P_GAIN = 84
ADDR_I_GAIN = 82
ADDR_D_GAIN = 80
ADDR_PWM_LIMIT = 36
ADDR_GOAL_POSITION = 116
ADDR_PRESENT_CURRENT = 126
ADDR_PRESENT_VELOCITY = 128
ADDR_PRESENT_POSITION = 132
ADDR_INPUT_VOLTAGE = 144
ADDR_TEMPERATURE = 146
STATE_BLOCK = (126, 10)  # present current(2) + velocity(4) + position(4)


def control_table(model: str | int, protocol: str = DEFAULT_PROTOCOL) -> ControlTable:
    """Table by name (``mx28``, ``mx64``, ``mx106``, ``xm430``, … a ``tables/*.yaml`` stem) or by the model number
    a servo reports over ``protocol``."""
    if isinstance(model, (int, np.integer)):
        known = {t.model_number: k for k, t in CONTROL_TABLES.items() if t.protocol == protocol}
        if int(model) not in known:
            raise KeyError(
                f"unknown model number {model} over protocol {protocol}; known: "
                f"{', '.join(f'{n} ({k})' for n, k in sorted(known.items()))}"
            )
        return CONTROL_TABLES[known[int(model)]]
    key = str(model).lower().replace("_", "-")
    key = {"mx-28": "mx28", "mx-64": "mx64", "mx-106": "mx106", "xm430-w350": "xm430"}.get(key, key)
    if key not in CONTROL_TABLES:
        raise KeyError(f"unknown Dynamixel model {model!r}; valid models: {', '.join(CONTROL_TABLES)}")
    return CONTROL_TABLES[key]


# ----------------------------------------------------------------------------------------- conversions
def counts_to_rad(counts, center: float = CENTER_COUNTS) -> np.ndarray:
    """Position [rad] (REP-103, 0 at ``center`` counts) from raw counts."""
    return (np.asarray(counts, dtype=np.float64) - center) * RAD_PER_COUNT


INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1


def rad_to_counts(rad, center: float = CENTER_COUNTS) -> np.ndarray:
    """Raw goal counts (rounded to the nearest count, int64) from [rad]; non-finite input or a value beyond the
    4-byte register (it would wrap) raises."""
    r = np.asarray(rad, dtype=np.float64)
    if not np.isfinite(r).all():
        raise ValueError(f"position contains non-finite values: {r}")
    c = np.rint(r / RAD_PER_COUNT + center)
    if c.size and not (c.min() >= INT32_MIN and c.max() <= INT32_MAX):
        raise ValueError(
            f"position {r[np.argmax(np.abs(c))] if r.ndim else r} rad is beyond the 4-byte "
            f"position register ({INT32_MIN}..{INT32_MAX} counts)"
        )
    return c.astype(np.int64)


def position_range_counts(table: ControlTable) -> tuple[int, int]:
    """Goal Position range [counts] in position mode: the table's Min/Max Position Limit (0..4095)."""
    return int(table.item("Min Position Limit").default), int(table.item("Max Position Limit").default)


def position_range_rad(table: ControlTable, center: float = CENTER_COUNTS) -> tuple[float, float]:
    """:func:`position_range_counts` in [rad] (0 at ``center``, ``table.rad_per_count`` per count)."""
    lo, hi = position_range_counts(table)
    return float((lo - center) * table.rad_per_count), float((hi - center) * table.rad_per_count)


def velocity_to_rad_s(raw) -> np.ndarray:
    """Present Velocity [0.229 rpm units] → [rad/s]."""
    return np.asarray(raw, dtype=np.float64) * RAD_S_PER_VELOCITY_UNIT


def rad_s_to_velocity(rad_s) -> np.ndarray:
    return np.rint(np.asarray(rad_s, dtype=np.float64) / RAD_S_PER_VELOCITY_UNIT).astype(np.int64)


def current_to_amps(raw, table: ControlTable) -> np.ndarray:
    """Present Current [raw] → [A]; raises for a model without current sensing."""
    if table.current_unit is None:
        raise ValueError(f"{table.name} has no current sensor (address 126 is Present Load)")
    return np.asarray(raw, dtype=np.float64) * table.current_unit


def amps_to_current(amps, table: ControlTable) -> np.ndarray:
    if table.current_unit is None:
        raise ValueError(f"{table.name} has no current sensor")
    return np.rint(np.asarray(amps, dtype=np.float64) / table.current_unit).astype(np.int64)


def current_to_torque(raw, table: ControlTable, kt: float | None = None) -> np.ndarray:
    """Output torque τ = kt·I [N·m] from Present Current; ``kt`` overrides the table's (NaN if unknown)."""
    k = table.kt if kt is None else kt
    amps = current_to_amps(raw, table)
    return amps * (np.nan if k is None else k)


def voltage_to_volts(raw) -> np.ndarray:
    return np.asarray(raw, dtype=np.float64) * VOLTAGE_UNIT


def pwm_to_duty(raw) -> np.ndarray:
    return np.asarray(raw, dtype=np.float64) / PWM_FULL_SCALE


def p_gain_to_kp(register, table: ControlTable | None = None) -> np.ndarray:
    """Position P Gain register → firmware-law ``kp`` of ``table`` (default: MX 2.0, protocol-1 P = register/16)."""
    per = REGISTER_PER_BAM_KP if table is None else table.p_gain_per_kp
    return np.asarray(register, dtype=np.float64) / per


def kp_to_p_gain(kp, table: ControlTable | None = None) -> np.ndarray:
    """Firmware-law ``kp`` → Position P Gain register of ``table`` (default: MX 2.0, ×16; X-series: the register)."""
    per = REGISTER_PER_BAM_KP if table is None else table.p_gain_per_kp
    return np.rint(np.asarray(kp, dtype=np.float64) * per).astype(np.int64)


def hardware_error_text(status: int) -> str:
    """Human-readable Hardware Error Status bits (``"ok"`` for 0)."""
    names = [n for bit, n in HW_ERROR_NAMES.items() if status & bit]
    return ", ".join(names) if names else "ok"
