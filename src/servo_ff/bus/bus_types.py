"""The bus's data (every family): its configuration, what a cycle returns, its errors, the indirect-address map.

:class:`BusConfig` (validated on construction), :class:`JointState` (one sync read, decoded by :func:`joint_state`),
:class:`Health` (voltage, temperature, Hardware Error Status), :class:`BusError` and :class:`GoalRejected`.
"""

from __future__ import annotations

import math
import termios
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import ServoFFError
from ..models.motor import duty_torque, torque_duty
from . import control_table as ct
from .families import DEFAULT_PROTOCOL, family, load
from .packet_common import MAX_ID

STATE_DTYPE = np.dtype([("current", "<i2"), ("velocity", "<i4"), ("position", "<i4")])
HEALTH_DTYPE = np.dtype([("voltage", "<u2"), ("temperature", "u1"), ("hw_error", "u1"), ("torque", "u1"), ("id", "u1")])
ADDR_ID = 7  # the ID item (EEPROM): read through the indirect map as its signature
# Indirect map set up by DynamixelBus.setup(): data 224–229 = voltage(2), temperature, HW error, Torque Enable, ID
# (a reply whose ID byte is not the servo's id: the map is gone, RAM back at defaults after a reboot);
# data 230–235 = P gain(2), goal position(4).
HEALTH_INDIRECT = (
    ct.ADDR_INPUT_VOLTAGE,
    ct.ADDR_INPUT_VOLTAGE + 1,
    ct.ADDR_TEMPERATURE,
    ct.ADDR_HW_ERROR,
    ct.ADDR_TORQUE_ENABLE,
    ADDR_ID,
)
GAIN_GOAL_INDIRECT = (ct.ADDR_P_GAIN, ct.ADDR_P_GAIN + 1, *range(ct.ADDR_GOAL_POSITION, ct.ADDR_GOAL_POSITION + 4))
HEALTH_DATA_ADDR = ct.INDIRECT_DATA_0
GAIN_GOAL_DATA_ADDR = ct.INDIRECT_DATA_0 + len(HEALTH_INDIRECT)


class BusError(ServoFFError, OSError):
    """Port or communication failure (names the port / servo id)."""


class GoalRejected(ServoFFError, ValueError):
    """A goal outside the joint limits or non-finite; nothing was written."""


#: What a bus transaction raises when the port or a servo fails (BusError is an OSError; termios.error, from a
#: serial port or pty that went away, is not).
BUS_FAILURES: tuple[type[Exception], ...] = (BusError, OSError, termios.error)
#: The same, or a value refused on the way (GoalRejected, LimitRefused, a ParameterError: any ServoFFError or
#: ValueError).
BUS_OR_VALUE_FAILURES: tuple[type[Exception], ...] = (*BUS_FAILURES, ServoFFError, ValueError)


@dataclass
class JointState:
    """One sync read: arrays aligned with ``ids``; NaN and ``valid=False`` where a servo gave no valid reply."""

    ids: tuple[int, ...]
    position: np.ndarray  # [rad]
    velocity: np.ndarray  # [rad/s]
    current: np.ndarray  # [A] (NaN for models without current sensing)
    effort: np.ndarray  # [N·m] = kt·I, or from Present Load: load_effort
    valid: np.ndarray  # bool
    stamp: float  # time.monotonic() after the read
    stamps: np.ndarray | None = None  # arrival time of each entry's reply [s, monotonic]; NaN where invalid


@dataclass
class Health:
    ids: tuple[int, ...]
    voltage: np.ndarray  # [V]
    temperature: np.ndarray  # [°C]
    hw_error: np.ndarray  # Hardware Error Status bits (−1 where unread)
    valid: np.ndarray
    torque: np.ndarray | None = None  # Torque Enable as read (−1 where unread); None: the bus does not read it
    setup_lost: np.ndarray | None = None  # bool: the servo's set-up is gone (RAM at defaults: it rebooted)
    # bool: the servo's own alarm shutdown holds its output at 0 while Torque Enable may read 1 (Protocol 1.0:
    # Torque Limit (34) reads 0 where the bus wrote or set up a non-zero one); None: the bus cannot tell
    shutdown: np.ndarray | None = None


@dataclass
class BusConfig:
    """Bus settings. ``joint_limits``: id → (lower, upper) [rad] inside the servo's position range (the table's
    Min/Max Position Limit, 0–4095 counts around ``center``; wider limits are refused); default: that range.

    Reply timeouts: each reply's slot (Return Delay Time + wire time at ``baud``) plus a margin of
    ``latency_timer_ms`` + 2 ms (the USB adapter holds bytes up to its latency timer), or ``timeout_ms`` as the
    margin. ``retries`` apply to single-servo transactions (ping, item read/write, reboot) and to each servo's
    ``setup()``, not to the cycle's sync read (a real-time loop reports a stale servo rather than waiting).
    A servo that misses ``skip_after`` sync reads in a row while others answer is left out of them and re-probed
    (PING) every ``probe_period_s`` (a read nobody answers is a bus outage and counts for no one).
    ``names``: id → joint name for messages.
    """

    port: str
    ids: Sequence[int]
    baud: int = 1_000_000
    model: str = "mx106"
    protocol: str = DEFAULT_PROTOCOL  # a row of servo_ff.bus.families.FAMILIES
    joint_limits: Mapping[int, tuple[float, float]] | None = None
    center: float | None = None  # counts at 0 rad; None: the table's center (2048; AX-12: 512)
    latency_timer_ms: float = 16.0
    timeout_ms: float | None = None
    retries: int = 2
    p_gain: bool = False
    return_delay: int | None = 0  # written by setup(); None leaves the servo's value
    kt: float | None = None  # overrides the table's torque constant [N·m/A]
    fast_rx: bool = True  # sync-read replies scanned by the compiled scanner (False: its pure-Python reference)
    skip_after: int = 5  # consecutive missed sync-read replies before a servo is skipped
    probe_period_s: float = 0.5  # re-probe period of skipped servos [s]
    late_horizon_s: float = 0.5  # a reply later than this after its transaction ended is taken as never coming [s]
    names: Mapping[int, str] | None = None  # id → joint name (messages)

    def __post_init__(self) -> None:
        self.ids = [int(i) for i in self.ids]
        if not self.ids:
            raise ValueError("ids: at least one servo id is needed")
        if len(set(self.ids)) != len(self.ids) or any(not 0 <= i <= MAX_ID for i in self.ids):
            raise ValueError(f"ids must be unique and in 0..{MAX_ID}, got {self.ids}")
        if self.retries < 0:
            raise ValueError(f"retries must be >= 0, got {self.retries}")
        if self.timeout_ms is not None and not (self.timeout_ms > 0 and math.isfinite(self.timeout_ms)):
            raise ValueError(f"timeout_ms must be a positive number of milliseconds, got {self.timeout_ms}")
        if not (math.isfinite(self.late_horizon_s) and self.late_horizon_s > 0):
            raise ValueError(f"late_horizon_s must be a positive number of seconds, got {self.late_horizon_s}")
        if self.skip_after < 1 or not (math.isfinite(self.probe_period_s) and self.probe_period_s > 0):
            raise ValueError(
                f"skip_after must be >= 1 and probe_period_s > 0, got {self.skip_after}, {self.probe_period_s}"
            )
        table = ct.control_table(self.model)
        if self.center is None:
            self.center = float(table.center)
        if not math.isfinite(self.center):
            raise ValueError(f"center must be a finite count, got {self.center}")
        if table.baud_codes is not None and self.baud not in table.baud_codes:
            raise ValueError(
                f"baud {self.baud} is not a {table.name} rate (its Baud Rate codes); valid: "
                + ", ".join(map(str, sorted(table.baud_codes, reverse=True)))
            )
        if table.protocol != self.protocol:
            raise ValueError(
                f"model {self.model} ({table.name}) speaks protocol {table.protocol}, not {self.protocol}; tables of "
                f"{self.protocol}: " + ", ".join(k for k, t in ct.CONTROL_TABLES.items() if t.protocol == self.protocol)
            )
        if family(self.protocol).baud_grid:  # a Baud Rate grid by formula (Protocol 1.0): refused here, not at open
            load(self.protocol, "baud_grid")(self.baud, table)
        rlo, rhi = ct.position_range_rad(table, self.center)
        clo, chi = ct.position_range_counts(table)
        for i, (lo, hi) in (self.joint_limits or {}).items():
            what = f"joint_limits[{i}]" + (f" (joint {self.names[i]!r})" if self.names and i in self.names else "")
            if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
                raise ValueError(f"{what} must be finite with lower < upper, got ({lo}, {hi})")
            if lo < rlo or hi > rhi:
                raise ValueError(
                    f"{what} = ({lo:.6g}, {hi:.6g}) rad exceeds the {table.name} position range "
                    f"({rlo:.6g}, {rhi:.6g}) rad (counts {clo}..{chi} around center {self.center:g})"
                )


def load_effort(table: ct.ControlTable, kt: float | None, load, velocity, vin=None) -> np.ndarray:
    """Effort [N·m] from Present Load (raw, ``table.load_unit`` per unit), by what the table says the register is:

    * a fraction of the stall torque (Dynamixel MX-28/XL430 and Protocol 1.0: "0.1 % of max torque", inferred by
      the firmware from its output): τ = load·load_unit·stall_torque;
    * ``load_is_duty`` (Feetech STS: the drive duty, the H-bridge's PWM, not a torque): the model's motor torque
      τ = kt·(duty·V_in − kt·θ̇)/R (:func:`servo_ff.models.motor.duty_torque`, the sim's: duty = load·load_unit,
      V_in [V] = ``vin``, θ̇ = ``velocity`` [rad/s], kt [N·m/A] and R [Ω] of the table, ``kt`` overriding). A duty
      × the datasheet stall torque (before) was 0.57× it at a hold on the STS3215 (1.912 N·m against bam's
      7.4 V·kt/R = 3.35 N·m) and took the duty the back-EMF uses for torque while moving.

    NaN where the table lacks what the conversion needs."""
    raw = np.asarray(load, dtype=np.float64) * table.load_unit
    if not table.load_is_duty:
        return raw * (table.stall_torque or np.nan)
    k, r = _duty_motor(table, kt)
    if vin is None:
        return np.full(raw.shape, np.nan)
    return duty_torque(raw, np.asarray(vin, dtype=np.float64), np.asarray(velocity, dtype=np.float64), k, r)


def effort_duty(table: ct.ControlTable, kt: float | None, effort: float, vin: float) -> float:
    """The drive duty [fraction of full duty] that holds ``effort`` [N·m] at stall on a ``load_is_duty`` servo at
    supply ``vin`` [V]: the inverse of :func:`load_effort`'s law at θ̇ = 0, duty = τ·R/(kt·V_in)
    (:func:`servo_ff.models.motor.torque_duty`, the same kt and R): a duty limit of it reads back as ``effort``.
    Beyond 1 where ``vin`` cannot give it; NaN where the table lacks kt or R."""
    k, r = _duty_motor(table, kt)
    return float(torque_duty(float(effort), float(vin), 0.0, k, r))


def _duty_motor(table: ct.ControlTable, kt: float | None) -> tuple[float, float]:
    """(kt [N·m/A], R [Ω]) of a duty servo's motor law: the table's (``kt`` overriding); NaN where unknown."""
    k = table.kt if kt is None else kt
    return (np.nan if k is None else k), (np.nan if table.R is None else table.R)


def joint_state(
    table: ct.ControlTable, kt: float | None, center: float, ids, raw, valid, stamp, stamps, vin=None
) -> JointState:
    """A :class:`JointState` from ``raw`` records with signed fields ``position`` [counts], ``velocity`` [table's
    ``velocity_unit``] and ``current`` (:data:`STATE_DTYPE`) or ``load`` (Present Load: effort by
    :func:`load_effort`, no current; a drive duty's with the supply ``vin`` [V] per servo), converted with the
    table's units; NaN where not ``valid``."""
    n = len(ids)
    pos = np.where(valid, (np.asarray(raw["position"], dtype=np.float64) - center) * table.rad_per_count, np.nan)
    vel = np.where(valid, np.asarray(raw["velocity"], dtype=np.float64) * table.velocity_unit, np.nan)
    if "load" in raw.dtype.names:
        cur = np.full(n, np.nan)
        eff = np.where(valid, load_effort(table, kt, raw["load"], vel, vin), np.nan)
    elif table.has_current:
        cur = np.where(valid, ct.current_to_amps(raw["current"], table), np.nan)
        eff = cur * (np.nan if kt is None else kt)
    else:  # Present Load read where the current is (MX-28, XL430)
        cur = np.full(n, np.nan)
        eff = np.where(valid, load_effort(table, kt, raw["current"], vel), np.nan)
    return JointState(ids, pos, vel, cur, eff, valid, stamp, stamps)
