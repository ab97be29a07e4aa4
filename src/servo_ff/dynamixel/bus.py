"""Dynamixel bus on dynamixel-sdk (Protocol 2.0): one sync read + one sync write per control cycle.

:class:`DynamixelBus` drives the SDK's ``PortHandler``/``PacketHandler(2.0)``/``GroupSyncRead``/
``GroupBulkRead`` (through the adapters of :mod:`.sdk_adapters`) and ``PacketHandler.syncWriteTxOnly`` (what
``GroupSyncWrite.txPacket`` calls; the parameter block is built with numpy):

* ``cycle(goals)`` = one sync read of present current + velocity + position (10 bytes from 126) and one sync
  write of goal position (116, 4 bytes) — or, with ``p_gain=True``, of P gain + goal position through indirect
  addresses (6 bytes from 228). Exactly 2 bus transactions.
* ``read_health()`` — the slower read: input voltage, temperature and Hardware Error Status in one sync read of
  indirect data 224–227 (set up by :meth:`setup`). The SDK's ``GroupSyncRead`` discards each reply's error
  byte, so hardware errors are read from the register, not guessed from the error byte.
* ``ping``/``scan``/``connect`` (missing servos → one clear log line listing found and missing ids; the rest
  keep working), ``torque``, ``reboot``, ``hardware_error``, ``read_item``/``write_item`` with retries.
* Per-servo :class:`CommStats`: replies, timeouts, corrupt packets (CRC), wrong lengths, status errors.
  Failed servos get NaN in the returned :class:`JointState` and ``valid=False`` — never a made-up state.
* Goals outside the configured joint limits (or non-finite) are refused before anything is written:
  :class:`GoalRejected` (a ``ValueError``) and an error log line.

SDK details that matter (``dynamixel_sdk/port_handler.py``): the packet timeout is
``tx_time_per_byte·length + 2·LATENCY_TIMER + 2`` ms with ``LATENCY_TIMER = 16``; ``BusConfig`` takes
``latency_timer_ms`` (1 with a USB adapter whose latency timer is 1 ms, or a pty) or a fixed ``timeout_ms``.
"""
from __future__ import annotations

import logging
import math
import termios
import time
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

import dynamixel_sdk as sdk
import numpy as np

from . import control_table as ct
from . import protocol as pr
from .sdk_adapters import PacketHandler, PortHandler, TolerantSyncRead  # noqa: F401 (re-exported)
from .transactions import CommStats  # noqa: F401 (re-exported)

log = logging.getLogger(__name__)

COMM_SUCCESS = sdk.COMM_SUCCESS
_STATE_DTYPE = np.dtype([("current", "<i2"), ("velocity", "<i4"), ("position", "<i4")])
_HEALTH_DTYPE = np.dtype([("voltage", "<u2"), ("temperature", "u1"), ("hw_error", "u1")])
# Indirect map set up by DynamixelBus.setup(): data 224–227 = voltage(2), temperature, HW error;
# data 228–233 = P gain(2), goal position(4).
HEALTH_INDIRECT = (ct.ADDR_INPUT_VOLTAGE, ct.ADDR_INPUT_VOLTAGE + 1, ct.ADDR_TEMPERATURE, ct.ADDR_HW_ERROR)
GAIN_GOAL_INDIRECT = (ct.ADDR_P_GAIN, ct.ADDR_P_GAIN + 1, 116, 117, 118, 119)
HEALTH_DATA_ADDR = ct.INDIRECT_DATA_0
RETRY_BACKOFF_S = 0.005  # first pause before a single-servo retry [s]; doubles per retry
GAIN_GOAL_DATA_ADDR = ct.INDIRECT_DATA_0 + len(HEALTH_INDIRECT)


class BusError(IOError):
    """Port or communication failure (names the port / servo id)."""


class GoalRejected(ValueError):
    """A goal outside the joint limits or non-finite; nothing was written."""


@dataclass
class JointState:
    """One sync read: arrays aligned with ``ids``; NaN and ``valid=False`` where a servo gave no valid reply."""

    ids: tuple[int, ...]
    position: np.ndarray  # [rad]
    velocity: np.ndarray  # [rad/s]
    current: np.ndarray  # [A] (NaN for models without current sensing)
    effort: np.ndarray  # [N·m] = kt·I, or Present Load × stall torque for MX-28
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
    joint_limits: Mapping[int, tuple[float, float]] | None = None
    center: float = ct.CENTER_COUNTS
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
        if len(set(self.ids)) != len(self.ids) or any(not 0 <= i <= pr.MAX_ID for i in self.ids):
            raise ValueError(f"ids must be unique and in 0..{pr.MAX_ID}, got {self.ids}")
        if self.retries < 0:
            raise ValueError(f"retries must be >= 0, got {self.retries}")
        if self.timeout_ms is not None and not (self.timeout_ms > 0 and math.isfinite(self.timeout_ms)):
            raise ValueError(f"timeout_ms must be a positive number of milliseconds, got {self.timeout_ms}")
        if not (math.isfinite(self.late_horizon_s) and self.late_horizon_s > 0):
            raise ValueError(f"late_horizon_s must be a positive number of seconds, got {self.late_horizon_s}")
        if self.skip_after < 1 or not (math.isfinite(self.probe_period_s) and self.probe_period_s > 0):
            raise ValueError(f"skip_after must be >= 1 and probe_period_s > 0, got {self.skip_after}, "
                             f"{self.probe_period_s}")
        if not math.isfinite(self.center):
            raise ValueError(f"center must be a finite count, got {self.center}")
        table = ct.control_table(self.model)
        rlo, rhi = ct.position_range_rad(table, self.center)
        clo, chi = ct.position_range_counts(table)
        for i, (lo, hi) in (self.joint_limits or {}).items():
            what = f"joint_limits[{i}]" + (f" (joint {self.names[i]!r})" if self.names and i in self.names else "")
            if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
                raise ValueError(f"{what} must be finite with lower < upper, got ({lo}, {hi})")
            if lo < rlo or hi > rhi:
                raise ValueError(f"{what} = ({lo:.6g}, {hi:.6g}) rad exceeds the {table.name} position range "
                                 f"({rlo:.6g}, {rhi:.6g}) rad (counts {clo}..{chi} around center {self.center:g})")


class DynamixelBus:
    """Protocol 2.0 servos on one port. Use as a context manager: ``open()`` … ``close()``."""

    def __init__(self, config: BusConfig):
        self.config = config
        self.table = ct.control_table(config.model)
        self.kt = config.kt if config.kt is not None else self.table.kt
        # until setup() has written (or read) Return Delay Time, assume the table's default (250 → 500 µs)
        delay = ct.RETURN_DELAY_UNIT * self.table.item("Return Delay Time").default
        self.port = PortHandler(config.port, config.latency_timer_ms, config.timeout_ms, delay)
        self._delays: dict[int, int] = {}  # Return Delay Time [2 µs] per servo, known after setup()
        self.ph = PacketHandler()
        self.ids: list[int] = list(config.ids)  # active (answering) servos
        self.missing: list[int] = []
        self.stats: dict[int, CommStats] = {i: CommStats() for i in config.ids}
        self.port.stats = self.stats
        self.port.ledger.horizon_s = config.late_horizon_s
        self.transactions = 0
        self.cycles = 0
        self.state_reads = 0  # state sync reads sent
        self._asked: tuple[int, ...] = tuple(self.ids)  # ids in the sync reads (not skipped)
        self._next_probe = 0.0
        self._probe_turn = 0
        self._skipped_at: dict[int, float] = {}
        lo_default, hi_default = ct.position_range_rad(self.table, config.center)
        self._count_range = ct.position_range_counts(self.table)
        lim = dict(config.joint_limits or {})
        unknown = sorted(set(lim) - set(config.ids))
        if unknown:
            raise ValueError(f"joint_limits for ids {unknown} not in ids {config.ids}")
        self.lower = {i: lim.get(i, (lo_default, hi_default))[0] for i in config.ids}
        self.upper = {i: lim.get(i, (lo_default, hi_default))[1] for i in config.ids}
        self._limits_ids: tuple[int, ...] = ()
        self._hw_logged: dict[int, int] = {}
        self._read: TolerantSyncRead | None = None
        self._health: TolerantSyncRead | None = None
        self._is_open = False

    # --------------------------------------------------------------- port
    def open(self) -> "DynamixelBus":
        pr.warm_up()
        try:
            ok = self.port.openPort() and self.port.setBaudRate(self.config.baud)
        except Exception as e:  # serial.SerialException, OSError
            raise BusError(f"cannot open Dynamixel port {self.config.port!r}: {e}") from None
        if not ok:
            raise BusError(f"cannot set baud {self.config.baud} on {self.config.port!r}")
        self._is_open = True
        self._build_groups()
        return self

    def close(self) -> None:
        if self._is_open:
            self.port.closePort()
            self._is_open = False

    def __enter__(self) -> "DynamixelBus":
        return self.open() if not self._is_open else self

    def __exit__(self, *exc) -> None:
        self.close()

    def _build_groups(self) -> None:
        fast = self.config.fast_rx
        self._read = TolerantSyncRead(self.port, self.ph, *ct.STATE_BLOCK, fast=fast)
        self._health = TolerantSyncRead(self.port, self.ph, HEALTH_DATA_ADDR, len(HEALTH_INDIRECT), fast=fast)
        self._asked = tuple(i for i in self.ids if not self.stats[i].skipping)
        self._stat_list = [self.stats[i] for i in self.ids]
        for i in self._asked:
            self._read.addParam(i)
            self._health.addParam(i)
        self._read.makeParam()
        self._health.makeParam()

    # --------------------------------------------------------------- single-servo transactions
    def _count(self, i: int, result: int, error: int = 0) -> bool:
        st = self.stats.setdefault(i, CommStats())
        if result == COMM_SUCCESS:
            if error & 0x7F:
                st.status_errors += 1
                st.last_error = self.ph.getRxPacketError(error)
                return False
            st.ok += 1
            return True
        if result == sdk.COMM_RX_TIMEOUT:
            st.timeouts += 1
        elif result == sdk.COMM_RX_CORRUPT:
            st.corrupt += 1
        st.last_error = self.ph.getTxRxResult(result)
        return False

    def _retry(self, i: int, fn, *args):
        """Run one SDK call with up to ``retries`` retries, 5 ms · 2^k apart (a device that stalls for a moment
        would fail quick retries too); returns its full result tuple (last attempt)."""
        for attempt in range(self.config.retries + 1):
            if attempt:
                time.sleep(RETRY_BACKOFF_S * 2 ** (attempt - 1))
            out = fn(self.port, i, *args)
            self.transactions += 1
            res = out if isinstance(out, tuple) else (out,)
            result, error = (res[-2], res[-1]) if len(res) >= 2 else (res[0], 0)
            if self._count(i, result, error):
                return out
            if attempt < self.config.retries:
                self.stats[i].retries += 1
        return out

    def ping(self, dxl_id: int) -> int | None:
        """Model number of ``dxl_id``, or None if it does not answer (after retries)."""
        model, result, error = self._retry(dxl_id, self.ph.ping)
        return model if result == COMM_SUCCESS else None

    def scan(self, ids: Iterable[int] = range(0, pr.MAX_ID + 1), broadcast: bool = False) -> dict[int, int]:
        """{id: model number} of the servos that answer: one PING per id (no retries), or with
        ``broadcast=True`` one broadcast PING (the SDK then listens for ~0.8 s, the time 252 replies take)."""
        if broadcast:
            data, result = self.ph.broadcastPing(self.port)
            self.transactions += 1
            wanted = set(ids)
            return {i: v[0] for i, v in sorted(data.items()) if i in wanted}
        found = {}
        for i in ids:
            model, result, _ = self.ph.ping(self.port, i)
            self.transactions += 1
            if result == COMM_SUCCESS:
                found[i] = model
        return found

    def connect(self) -> tuple[list[int], list[int]]:
        """Ping the configured ids; missing ones are logged (found and missing listed) and left out of every
        later transaction. Raises :class:`BusError` if none answers or a model number is unexpected."""
        found, missing, wrong = [], [], []
        for i in self.config.ids:
            model = self.ping(i)
            if model is None:
                missing.append(i)
            elif model != self.table.model_number:
                wrong.append(f"{i} (model {model})")
                found.append(i)
            else:
                found.append(i)
        if wrong:
            log.warning("ids %s report another model than %s (%d)", ", ".join(wrong), self.table.name,
                        self.table.model_number)
        if not found:
            raise BusError(f"no Dynamixel servo answered on {self.config.port} at {self.config.baud} baud; "
                           f"expected ids {self.config.ids}")
        if missing:
            log.error("Dynamixel bus %s: found ids %s, MISSING ids %s (continuing without them)",
                      self.config.port, found, missing)
        self.ids, self.missing = found, missing
        if self._is_open:
            self._build_groups()
        return found, missing

    def read_item(self, dxl_id: int, name: str) -> int:
        """Raw value of control-table item ``name`` (signed where the item is); raises BusError on failure."""
        it = self.table.item(name)
        fn = {1: self.ph.read1ByteTxRx, 2: self.ph.read2ByteTxRx, 4: self.ph.read4ByteTxRx}[it.size]
        value, result, error = self._retry(dxl_id, fn, it.address)
        if result != COMM_SUCCESS or error & 0x7F:
            raise BusError(f"read {name!r} from id {dxl_id}: {self.stats[dxl_id].last_error}")
        if it.signed and value >= 1 << (8 * it.size - 1):
            value -= 1 << (8 * it.size)
        return int(value)

    def write_item(self, dxl_id: int, name: str, value: int) -> None:
        it = self.table.item(name)
        if not it.writable:
            raise ValueError(f"{name!r} is read-only")
        value = int(value)
        lo, hi = (-(1 << (8 * it.size - 1)), (1 << (8 * it.size - 1)) - 1) if it.signed else (0, (1 << 8 * it.size) - 1)
        if not lo <= value <= hi:
            raise ValueError(f"{name!r} value {value} outside {lo}..{hi}")
        fn = {1: self.ph.write1ByteTxRx, 2: self.ph.write2ByteTxRx, 4: self.ph.write4ByteTxRx}[it.size]
        result, error = self._retry(dxl_id, fn, it.address, value & ((1 << 8 * it.size) - 1))
        if result != COMM_SUCCESS or error & 0x7F:
            raise BusError(f"write {name!r}={value} to id {dxl_id}: {self.stats[dxl_id].last_error}")

    def torque(self, enable: bool, ids: Iterable[int] | None = None) -> None:
        for i in (self.ids if ids is None else ids):
            self.write_item(i, "Torque Enable", 1 if enable else 0)

    def reboot(self, dxl_id: int) -> None:
        """REBOOT instruction (clears a latched hardware error; torque comes back off)."""
        result, error = self._retry(dxl_id, self.ph.reboot)
        if result != COMM_SUCCESS:
            raise BusError(f"reboot id {dxl_id}: {self.stats[dxl_id].last_error}")

    def hardware_error(self, dxl_id: int) -> int:
        """Hardware Error Status (address 70) of one servo; decode with ``control_table.hardware_error_text``."""
        return self.read_item(dxl_id, "Hardware Error Status")

    def setup(self, ids: Iterable[int] | None = None) -> None:
        """Per servo (default: every active, not skipped one): torque off, Return Delay Time, indirect addresses for
        :meth:`read_health` (and the P-gain write), and a check of its Min/Max Position Limit against the joint
        limits. Each servo gets ``retries`` more attempts; raises :class:`BusError` naming the one that failed."""
        todo = [i for i in self.ids if not self.stats[i].skipping] if ids is None else list(ids)
        for i in todo:
            for attempt in range(self.config.retries + 1):
                try:
                    self._setup_one(i)
                    break
                except BusError as e:
                    if attempt == self.config.retries:
                        raise BusError(f"setup of id {i}{self._name(i)} failed after {attempt + 1} attempt(s): "
                                       f"{e}") from None
                    log.warning("setup of id %d: %s; retrying", i, e)
                    time.sleep(4 * RETRY_BACKOFF_S * 2 ** attempt)
        if self._delays:
            self.port.set_return_delay(max(self._delays.values()) * ct.RETURN_DELAY_UNIT)

    def _setup_one(self, i: int) -> None:
        mapping = list(HEALTH_INDIRECT) + (list(GAIN_GOAL_INDIRECT) if self.config.p_gain else [])
        self.write_item(i, "Torque Enable", 0)
        if self.config.return_delay is not None:
            self.write_item(i, "Return Delay Time", self.config.return_delay)
            self._delays[i] = self.config.return_delay
        else:
            self._delays[i] = self.read_item(i, "Return Delay Time")
        for k, addr in enumerate(mapping, start=1):
            self.write_item(i, f"Indirect Address {k}", addr)
        lo_c, hi_c = self.read_item(i, "Min Position Limit"), self.read_item(i, "Max Position Limit")
        lo, hi = ct.counts_to_rad([lo_c, hi_c], self.config.center)
        if self.lower[i] < lo or self.upper[i] > hi:
            raise GoalRejected(f"id {i}{self._name(i)}: joint limits ({self.lower[i]:.6g}, {self.upper[i]:.6g}) rad "
                               f"exceed the servo's Min/Max Position Limit ({lo:.6g}, {hi:.6g}) rad "
                               f"(counts {lo_c}..{hi_c})")

    def _name(self, i: int) -> str:
        names = self.config.names or {}
        return f" (joint {names[i]!r})" if i in names else ""

    # --------------------------------------------------------------- skipped servos
    def _skip(self, i: int, now: float) -> None:
        st = self.stats[i]
        st.skipping = True
        st.last_error = f"skipped after {st.misses} consecutive missed replies"
        self._skipped_at[i] = now
        log.warning("id %d%s: %d consecutive sync reads without a reply; skipped, re-probed every %.3g s",
                    i, self._name(i), st.misses, self.config.probe_period_s)
        if self._next_probe <= now:
            self._next_probe = now + self.config.probe_period_s
        self._build_groups()

    def _probe(self, now: float) -> None:
        """PING one skipped servo (round robin) once per ``probe_period_s``; an answer puts it back."""
        skipped = [i for i in self.ids if self.stats[i].skipping]
        if not skipped or now < self._next_probe:
            return
        self._next_probe = now + self.config.probe_period_s
        i = skipped[self._probe_turn % len(skipped)]
        self._probe_turn += 1
        st = self.stats[i]
        st.probes += 1
        _, result, _ = self.ph.ping(self.port, i)
        self.transactions += 1
        if result == COMM_SUCCESS:
            st.skipping, st.misses = False, 0
            st.last_error = ""
            log.warning("id %d%s answers again after %.3g s; back in the sync reads", i, self._name(i),
                        now - self._skipped_at.pop(i, now))
            self._build_groups()

    def servo_status(self, i: int) -> str:
        """One line for diagnostics: "ok", or why the servo is skipped."""
        st = self.stats[i]
        if st.skipping:
            since = time.monotonic() - self._skipped_at.get(i, time.monotonic())
            return (f"not answering: skipped for {since:.3g} s after {self.config.skip_after} consecutive missed "
                    f"replies; re-probed every {self.config.probe_period_s:g} s ({st.probes} probes)")
        return "ok"

    @property
    def skipped(self) -> list[int]:
        return [i for i in self.ids if self.stats[i].skipping]

    # --------------------------------------------------------------- the cycle
    def read_state(self) -> JointState:
        """One sync read (present current, velocity, position) of every active servo not skipped; a skipped one
        is re-probed once per ``probe_period_s``. Each valid entry carries its reply's arrival time."""
        g = self._read
        ids = tuple(self.ids)
        n = len(ids)
        asked = self._asked
        if asked:
            sent = g.serial
            g.txRxPacket()
            self.transactions += 1
            self.state_reads += g.serial - sent  # instructions actually written
        stamp = time.monotonic()
        if asked == ids and g.block is not None and g.block_ids == ids and not np.any(g.block_err & 0x7F):
            for st in self._stat_list:
                st.ok += 1
                st.misses = 0
            raw = g.block.reshape(-1).view(_STATE_DTYPE)
            return self._state(ids, raw, np.ones(n, dtype=bool), stamp, np.full(n, g.block_stamp))
        received, errors, failed, stamps = (g.received, g.errors, g.failed, g.stamps) if asked else ({}, {}, {}, {})
        bus_alive = len(failed) < len(asked)  # nobody answered: a bus outage, not a silent servo
        good = []
        for i in ids:
            st = self.stats[i]
            if st.skipping:
                st.skipped += 1
                continue
            if i in received:
                st.misses = 0
                err = errors[i]
                if err & 0x7F:
                    st.status_errors += 1
                    st.last_error = self.ph.getRxPacketError(err)
                    continue
                st.ok += 1
                good.append(i)
                continue
            why = failed.get(i, "timeouts")
            setattr(st, why, getattr(st, why) + 1)
            st.last_error = why
            if why != "timeouts":
                st.misses = 0
            elif bus_alive:
                st.misses += 1
                if st.misses >= self.config.skip_after and len(self._asked) > 1:
                    self._skip(i, stamp)
        raw = np.zeros(n, dtype=_STATE_DTYPE)
        valid = np.array([i in good for i in ids], dtype=bool)
        if good:
            raw[valid] = np.frombuffer(b"".join([received[i] for i in good]), dtype=_STATE_DTYPE)
        arrival = np.array([stamps[i] if v else np.nan for i, v in zip(ids, valid)], dtype=np.float64)
        self._probe(stamp)
        return self._state(ids, raw, valid, stamp, arrival)

    def _state(self, ids, raw, valid, stamp, stamps) -> JointState:
        n = len(ids)
        pos = np.where(valid, ct.counts_to_rad(raw["position"], self.config.center), np.nan)
        vel = np.where(valid, ct.velocity_to_rad_s(raw["velocity"]), np.nan)
        if self.table.has_current:
            cur = np.where(valid, ct.current_to_amps(raw["current"], self.table), np.nan)
            eff = cur * (np.nan if self.kt is None else self.kt)
        else:
            cur = np.full(n, np.nan)
            eff = np.where(valid, ct.load_to_torque(raw["current"], self.table), np.nan)
        return JointState(ids, pos, vel, cur, eff, valid, stamp, stamps)

    def check_goals(self, goals) -> tuple[tuple[int, ...], np.ndarray]:
        """Validate goals ({id: rad} or an array aligned with ``ids``) against finiteness and joint limits;
        returns (ids, goals [rad]). Raises :class:`GoalRejected` (and logs) without writing anything."""
        if isinstance(goals, Mapping):
            g = {int(i): float(v) for i, v in goals.items()}
            unknown = [i for i in g if i not in self.lower]
            if unknown:
                raise GoalRejected(f"goals for unknown ids {unknown}; configured ids {self.config.ids}")
            skipped = [i for i in g if i in self.missing]
            if skipped:
                log.warning("goals for missing ids %s not sent (servos not answering)", skipped)
            ids = tuple(i for i in g if i not in self.missing)
            arr = np.array([g[i] for i in ids], dtype=np.float64)
            lo = np.array([self.lower[i] for i in ids])
            hi = np.array([self.upper[i] for i in ids])
        else:
            arr = np.asarray(goals, dtype=np.float64).ravel()
            if arr.size != len(self.ids):
                raise GoalRejected(f"goals: {arr.size} values for {len(self.ids)} active servos {self.ids}")
            ids = tuple(self.ids)
            if self._limits_ids != ids:
                self._limits_ids = ids
                self._lo = np.array([self.lower[i] for i in ids])
                self._hi = np.array([self.upper[i] for i in ids])
            lo, hi = self._lo, self._hi
        ok = (arr >= lo) & (arr <= hi)  # False for NaN; ±inf fail the bounds
        if not ok.all():
            msg = "; ".join(f"id {ids[k]} goal {arr[k]:.4g} rad outside [{lo[k]:.4g}, {hi[k]:.4g}]"
                            if np.isfinite(arr[k]) else f"id {ids[k]} goal {arr[k]} is not finite"
                            for k in np.flatnonzero(~ok))
            log.error("refusing goal write: %s", msg)
            raise GoalRejected(f"goal refused, nothing written: {msg}")
        return ids, arr

    def write_goals(self, goals, p_gains=None, _checked=None) -> None:
        """One sync write of goal positions [rad] (and P gains, raw register, when ``config.p_gain``).

        The parameter block (id, data…) is built with numpy and handed to ``PacketHandler.syncWriteTxOnly``,
        the call ``GroupSyncWrite.txPacket`` makes; its per-servo ``addParam`` would cost ~2 µs per servo.
        """
        ids, arr = self.check_goals(goals) if _checked is None else _checked
        if not ids:
            return
        c = np.rint(arr / ct.RAD_PER_COUNT + self.config.center)  # arr is finite (check_goals)
        lo_c, hi_c = self._count_range
        if not (c.min() >= lo_c and c.max() <= hi_c):  # unreachable after check_goals; never let a count wrap
            raise GoalRejected(f"goal counts {c.tolist()} outside {lo_c}..{hi_c} for ids {list(ids)}; nothing written")
        counts = c.astype("<i4").view(np.uint8).reshape(-1, 4)
        if self.config.p_gain:
            if p_gains is None:
                raise ValueError("p_gains: required when the bus is configured with p_gain=True")
            pg = np.asarray([p_gains[i] for i in ids] if isinstance(p_gains, Mapping) else p_gains).ravel()
            if pg.size != len(ids) or not np.all((pg >= 0) & (pg <= 16383) & (pg == np.rint(pg))):
                raise ValueError(f"p_gains: need {len(ids)} integers in 0..16383, got {pg}")
            data = np.concatenate([pg.astype("<u2").view(np.uint8).reshape(-1, 2), counts], axis=1)
            addr = GAIN_GOAL_DATA_ADDR
        else:
            data, addr = counts, ct.ADDR_GOAL_POSITION
        block = np.empty((len(ids), 1 + data.shape[1]), dtype=np.uint8)
        block[:, 0] = ids
        block[:, 1:] = data
        result = self.ph.syncWriteTxOnly(self.port, addr, data.shape[1], block.ravel().tolist(), block.size)
        self.transactions += 1
        if result != COMM_SUCCESS:
            raise BusError(f"sync write failed on {self.config.port}: {self.ph.getTxRxResult(result)}")

    def cycle(self, goals, p_gains=None) -> JointState:
        """Read the state, then write the goals: 2 transactions. Goals are checked before the read."""
        checked = self.check_goals(goals)
        try:
            state = self.read_state()
            self.write_goals(goals, p_gains, _checked=checked)
        except BusError:
            raise
        except (OSError, termios.error) as e:  # the adapter vanished (pyserial raises termios.error on a pty)
            raise BusError(f"Dynamixel port {self.config.port!r} failed: {e}") from e
        self.cycles += 1
        return state

    def read_health(self) -> Health:
        """Input voltage, temperature and Hardware Error Status of every active servo in one sync read
        (indirect data 224–227; run :meth:`setup` first)."""
        g = self._health
        if self._asked:
            g.txRxPacket()
            self.transactions += 1
        ids = tuple(self.ids)
        raw = np.zeros(len(ids), dtype=_HEALTH_DTYPE)
        valid = np.zeros(len(ids), dtype=bool)
        for k, i in enumerate(ids):
            if i not in self._asked:
                continue
            data = g.received.get(i)
            if data is not None and not g.errors[i] & 0x7F:
                raw[k] = np.frombuffer(data, dtype=_HEALTH_DTYPE)[0]
                valid[k] = True
            elif data is None:
                st = self.stats[i]
                why = g.failed.get(i, "timeouts")
                setattr(st, why, getattr(st, why) + 1)
        hw = np.where(valid, raw["hw_error"].astype(np.int64), -1)
        for i, e in zip(ids, hw.tolist()):
            if e >= 0 and e != self._hw_logged.get(i, 0):  # log changes, not every read
                (log.warning if e else log.info)("id %d Hardware Error Status: %s", i, ct.hardware_error_text(e))
                self._hw_logged[i] = e
        return Health(ids, np.where(valid, ct.voltage_to_volts(raw["voltage"]), np.nan),
                      np.where(valid, raw["temperature"].astype(float), np.nan), hw, valid)

    def bulk_read(self, requests: Mapping[int, tuple[int, int]]) -> dict[int, bytes]:
        """GroupBulkRead of {id: (address, length)} → {id: data}; the SDK group is all-or-nothing (one missing
        reply → {}), so use it for occasional reads, not in the cycle."""
        g = sdk.GroupBulkRead(self.port, self.ph)
        for i, (addr, n) in requests.items():
            g.addParam(i, addr, n)
        result = g.txRxPacket()
        self.transactions += 1
        out = {}
        if result == COMM_SUCCESS:
            for i, (addr, n) in requests.items():
                if g.isAvailable(i, addr, n):
                    out[i] = bytes(g.data_dict[i][0][:n])  # data_dict[id] = [data, address, length]
        return out

    def stats_summary(self) -> str:
        return "; ".join(f"id {i}: ok {s.ok}, timeouts {s.timeouts}, corrupt {s.corrupt}, late {s.late}, wrong "
                         f"length {s.wrong_length}, status errors {s.status_errors}, skipped {s.skipped}"
                         + (" (SKIPPED)" if s.skipping else "") for i, s in self.stats.items())
