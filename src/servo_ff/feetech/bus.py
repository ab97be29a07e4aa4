"""Feetech STS bus on the stock ``scservo_sdk``: one sync read + one sync write per control cycle
(``BUS_CLASSES["sts"]``, the :class:`~servo_ff.dynamixel.bus_interface.ServoBus` interface).

:class:`FeetechBus` drives the SDK's ``PortHandler``, packet handler and ``GroupSyncRead`` (through the adapters of
:mod:`.port` and :mod:`.packets`) and the packet handler's ``syncWriteTxOnly`` (what ``GroupSyncWrite.txPacket``
calls; the parameter block is built with numpy):

* ``cycle(goals)`` = one SYNC_READ (0x82) of Present Position + Velocity + Load (6 contiguous bytes from 56) and
  one SYNC_WRITE (0x83) of Goal Position (42, 2 bytes). With ``p_gain=True`` the P gains (Position P Gain, the P
  coefficient at 21, one byte, not contiguous with the goal) are sent in one more sync write only in the cycles
  where they change: 2 transactions per cycle, 3 when the gains change.
* ``read_health()`` — the slower read: Present Input Voltage, Present Temperature and the Status register (62–65)
  in one sync read; ``hw_error`` in the Hardware Error Status layout (:mod:`.status`).
* Status bits also arrive in the error byte of every reply: recorded per servo (``status_bits``) and logged when
  they change; an STS reply with status bits set still carries valid data.
* ``ping``/``scan``/``connect``/``setup``/``torque``/``reboot`` (the STS has none: torque off, goal = present),
  ``read_item``/``write_item`` (EPROM lock) with retries: :mod:`.transactions`.
* The same rules as :class:`servo_ff.dynamixel.bus.DynamixelBus`: per-servo
  :class:`~servo_ff.dynamixel.transactions.CommStats`; a late reply of an earlier transaction is never reported as
  this cycle's state (failed servos read NaN with ``valid=False``); a servo missing ``skip_after`` sync reads in a
  row is skipped and re-probed; goals outside the joint limits or non-finite are refused before anything is
  written (:class:`~servo_ff.dynamixel.bus_types.GoalRejected`).
* State values a single-turn STS never produces (position beyond 4095, speed or load beyond their magnitude) are
  taken as a garbled reply that passed the 8-bit checksum: counted ``corrupt``, reported invalid.
"""

from __future__ import annotations

import logging
import termios
import time

import numpy as np

from ..dynamixel import control_table as ct
from ..dynamixel.bus_types import BusConfig, BusError, GoalRejected, Health, JointState, joint_state
from ..dynamixel.goals import GoalLimits
from ..dynamixel.transactions import CommStats
from . import status
from .packets import COMM_SUCCESS, StsPacketHandler, TolerantSyncRead
from .port import StsPortHandler
from .transactions import StsTransactions

log = logging.getLogger(__name__)

STATE_ADDR, STATE_LEN = 56, 6  # Present Position (2), Present Velocity (2), Present Load (2)
HEALTH_ADDR, HEALTH_LEN = 62, 4  # Present Input Voltage, Present Temperature, (64), Status
GOAL_ADDR, P_GAIN_ADDR = 42, 21
STATE_DTYPE = np.dtype([("position", "<i8"), ("velocity", "<i8"), ("load", "<i8")])
#: bits a single-turn STS never sets in Present Position (0..4095), Present Velocity (sign 15, |v| < 4096 counts/s)
#: and Present Load (sign 10, |load| <= 1000)
IMPLAUSIBLE = np.array([0xF000, 0x7000, 0xF800], dtype=np.uint16)


class FeetechBus(StsTransactions):
    """Feetech STS servos on one port. Use as a context manager: ``open()`` … ``close()``."""

    def __init__(self, config: BusConfig):
        self.config = config
        self.table = ct.control_table(config.model)
        if self.table.protocol != "sts":
            raise ValueError(f"FeetechBus drives protocol sts; {self.table.name} speaks {self.table.protocol}")
        self.kt = config.kt if config.kt is not None else self.table.kt
        delay = ct.RETURN_DELAY_UNIT * self.table.item("Return Delay Time").default
        self.port = StsPortHandler(config.port, config.latency_timer_ms, config.timeout_ms, delay)
        self._delays: dict[int, int] = {}
        self.ph = StsPacketHandler()
        self.ids: list[int] = list(config.ids)
        self.missing: list[int] = []
        self.stats: dict[int, CommStats] = {i: CommStats() for i in config.ids}
        self.status_bits: dict[int, int] = {}
        self.port.stats = self.stats
        self.port.ledger.horizon_s = config.late_horizon_s
        self.cycles = 0
        self.state_reads = 0
        self._asked: tuple[int, ...] = tuple(self.ids)
        self._next_probe = 0.0
        self._probe_turn = 0
        self._skipped_at: dict[int, float] = {}
        self.limits = GoalLimits(self.table, config)
        self.lower, self.upper = self.limits.lower, self.limits.upper
        self._p_sent: dict[int, int] = {}
        self._read: TolerantSyncRead | None = None
        self._health: TolerantSyncRead | None = None
        self._is_open = False
        signs = [self.table.sign_bit_of(n) for n in ("Present Position", "Present Velocity", "Present Load")]
        self._sign_mask = np.array([1 << b for b in signs], dtype=np.int64)
        self._mag_mask = self._sign_mask - 1

    @property
    def transactions(self) -> int:
        """Instruction packets written on the port (every transaction, retries and probes included)."""
        return self.port.instructions

    # --------------------------------------------------------------- port
    def open(self) -> FeetechBus:
        try:
            ok = self.port.openPort() and self.port.setBaudRate(self.config.baud)
        except Exception as e:  # serial.SerialException, OSError
            raise BusError(f"cannot open Feetech port {self.config.port!r}: {e}") from None
        if not ok:
            raise BusError(f"cannot set baud {self.config.baud} on {self.config.port!r}")
        self._is_open = True
        self._build_groups()
        return self

    def close(self) -> None:
        if self._is_open:
            self.port.closePort()
            self._is_open = False

    def __enter__(self) -> FeetechBus:
        return self.open() if not self._is_open else self

    def __exit__(self, *exc) -> None:
        self.close()

    def _build_groups(self) -> None:
        self._read = TolerantSyncRead(self.port, self.ph, STATE_ADDR, STATE_LEN)
        self._health = TolerantSyncRead(self.port, self.ph, HEALTH_ADDR, HEALTH_LEN)
        self._asked = tuple(i for i in self.ids if not self.stats[i].skipping)
        self._stat_list = [self.stats[i] for i in self.ids]
        for i in self._asked:
            self._read.addParam(i)
            self._health.addParam(i)
        self._read.makeParam()
        self._health.makeParam()

    # --------------------------------------------------------------- skipped servos
    def _skip(self, i: int, now: float) -> None:
        st = self.stats[i]
        st.skipping = True
        st.last_error = f"skipped after {st.misses} consecutive missed replies"
        self._skipped_at[i] = now
        log.warning(
            "id %d%s: %d consecutive sync reads without a reply; skipped, re-probed every %.3g s",
            i,
            self._name(i),
            st.misses,
            self.config.probe_period_s,
        )
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
        _, result, _ = self.ph.txRxPacket(self.port, [0, 0, i, 2, 1, 0])  # PING
        if result == COMM_SUCCESS:
            st.skipping, st.misses, st.last_error = False, 0, ""
            log.warning(
                "id %d%s answers again after %.3g s; back in the sync reads",
                i,
                self._name(i),
                now - self._skipped_at.pop(i, now),
            )
            self._build_groups()

    def servo_status(self, i: int) -> str:
        """One line for diagnostics: "ok", or why the servo is skipped."""
        st = self.stats[i]
        if st.skipping:
            since = time.monotonic() - self._skipped_at.get(i, time.monotonic())
            return (
                f"not answering: skipped for {since:.3g} s after {self.config.skip_after} consecutive missed "
                f"replies; re-probed every {self.config.probe_period_s:g} s ({st.probes} probes)"
            )
        return "ok"

    @property
    def skipped(self) -> list[int]:
        return [i for i in self.ids if self.stats[i].skipping]

    # --------------------------------------------------------------- the cycle
    def _decode(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(k, 6) uint8 state replies → (:data:`STATE_DTYPE` records, plausible mask): the table's sign-magnitude
        decoding of the three items, vectorised over the (k, 3) words."""
        raw = np.ascontiguousarray(rows).view("<u2").reshape(-1, 3).astype(np.int64)
        mag = raw & self._mag_mask
        vals = np.where(raw & self._sign_mask, -mag, mag)
        return vals.view(STATE_DTYPE).reshape(-1), ~(raw & IMPLAUSIBLE).any(axis=1)

    def _note_block_status(self, ids: tuple[int, ...], errs) -> None:
        for i, e in zip(ids, errs):
            if e != self.status_bits.get(i, 0):
                self._note_status(i, int(e))

    def read_state(self) -> JointState:
        """One sync read (present position, velocity, load) of every active servo not skipped; a skipped one is
        re-probed once per ``probe_period_s``. Each valid entry carries its reply's arrival time."""
        g = self._read
        ids = tuple(self.ids)
        n = len(ids)
        asked = self._asked
        if asked:
            sent = g.serial
            g.txRxPacket()
            self.state_reads += g.serial - sent
        stamp = time.monotonic()
        if asked and g.block is not None:  # every asked servo answered in one block
            if asked == ids:
                rec, ok = self._decode(g.block)
                if ok.all():
                    for st in self._stat_list:
                        st.ok += 1
                        st.misses = 0
                    if g.block_err.any() or self.status_bits:
                        self._note_block_status(ids, g.block_err.tolist())
                    return self._state(ids, rec, np.ones(n, dtype=bool), stamp, np.full(n, g.block_stamp))
            received, errors, failed, stamps = _rows(g)
        elif asked:
            received, errors, failed, stamps = g.received, g.errors, g.failed, g.stamps
        else:
            received, errors, failed, stamps = {}, {}, {}, {}
        bus_alive = len(failed) < len(asked)  # nobody answered: a bus outage, not a silent servo
        good = [i for i in ids if i in received]
        rec = np.zeros(n, dtype=STATE_DTYPE)
        valid = np.zeros(n, dtype=bool)
        if good:
            got, plausible = self._decode(np.frombuffer(b"".join(received[i] for i in good), dtype=np.uint8))
            where = {i: k for k, i in enumerate(ids)}
            for j, i in enumerate(good):
                if plausible[j]:
                    rec[where[i]] = got[j]
                    valid[where[i]] = True
        for k, i in enumerate(ids):
            st = self.stats[i]
            if st.skipping:
                st.skipped += 1
                continue
            if valid[k]:
                st.ok += 1
                st.misses = 0
                if errors[i] != self.status_bits.get(i, 0):
                    self._note_status(i, errors[i])
                continue
            why = "corrupt" if i in received else failed.get(i, "timeouts")
            setattr(st, why, getattr(st, why) + 1)
            st.last_error = why
            if why != "timeouts":
                st.misses = 0
            elif bus_alive:
                st.misses += 1
                if st.misses >= self.config.skip_after and len(self._asked) > 1:
                    self._skip(i, stamp)
        arrival = np.array([stamps[i] if v else np.nan for i, v in zip(ids, valid)], dtype=np.float64)
        self._probe(stamp)
        return self._state(ids, rec, valid, stamp, arrival)

    def _state(self, ids, rec, valid, stamp, stamps) -> JointState:
        return joint_state(self.table, self.kt, self.config.center, ids, rec, valid, stamp, stamps)

    def check_goals(self, goals) -> tuple[tuple[int, ...], np.ndarray]:
        """Validate goals ({id: rad} or an array aligned with ``ids``) against finiteness and joint limits;
        returns (ids, goals [rad]). Raises :class:`GoalRejected` (and logs) without writing anything."""
        return self.limits.check(goals, self.ids, self.missing)

    def _sync_write(self, addr: int, block: np.ndarray) -> None:
        width = block.shape[1] - 1
        result = self.ph.syncWriteTxOnly(self.port, addr, width, block.ravel().tolist(), block.size)
        if result != COMM_SUCCESS:
            raise BusError(f"sync write failed on {self.config.port}: {self.ph.getTxRxResult(result)}")

    def _p_gain_block(self, ids: tuple[int, ...], p_gains) -> np.ndarray | None:
        """(id, P gain) rows of the servos whose P gain differs from the one last sent; None if none does."""
        if p_gains is None:
            raise ValueError("p_gains: required when the bus is configured with p_gain=True")
        pg = np.asarray([p_gains[i] for i in ids] if isinstance(p_gains, dict) else p_gains).ravel()
        top = self.table.p_gain_max
        if pg.size != len(ids) or not np.all((pg >= 0) & (pg <= top) & (pg == np.rint(pg))):
            raise ValueError(f"p_gains: need {len(ids)} integers in 0..{top}, got {pg}")
        changed = [k for k, i in enumerate(ids) if self._p_sent.get(i) != int(pg[k])]
        if not changed:
            return None
        return np.array([(ids[k], int(pg[k])) for k in changed], dtype=np.uint8)

    def write_goals(self, goals, p_gains=None, _checked=None) -> None:
        """One sync write of Goal Position [rad] (and, with ``config.p_gain``, one of the P gains that changed,
        raw register 0..254, first). The goal block (id, lo, hi…) is built with numpy."""
        ids, arr = self.check_goals(goals) if _checked is None else _checked
        if not ids:
            return
        pblock = self._p_gain_block(ids, p_gains) if self.config.p_gain else None
        c = np.rint(arr / self.table.rad_per_count + self.config.center)  # arr is finite (check)
        lo_c, hi_c = self.limits.count_range
        if not (c.min() >= lo_c and c.max() <= hi_c):  # unreachable after check; never let a count wrap
            raise GoalRejected(f"goal counts {c.tolist()} outside {lo_c}..{hi_c} for ids {list(ids)}; nothing written")
        block = np.empty((len(ids), 3), dtype=np.uint8)
        block[:, 0] = ids
        block[:, 1:] = c.astype("<u2").view(np.uint8).reshape(-1, 2)
        if pblock is not None:
            self._sync_write(P_GAIN_ADDR, pblock)
            self._p_sent.update((int(i), int(p)) for i, p in pblock)
        self._sync_write(GOAL_ADDR, block)

    def cycle(self, goals, p_gains=None) -> JointState:
        """Read the state, then write the goals: 2 transactions (3 when P gains change). Goals are checked first."""
        checked = self.check_goals(goals)
        try:
            state = self.read_state()
            self.write_goals(goals, p_gains, _checked=checked)
        except BusError:
            raise
        except (OSError, termios.error) as e:  # the adapter vanished (pyserial raises termios.error on a pty)
            raise BusError(f"Feetech port {self.config.port!r} failed: {e}") from e
        self.cycles += 1
        return state

    def read_health(self) -> Health:
        """Input voltage, temperature and the Status register of every active servo in one sync read (62–65);
        ``hw_error`` = Status | the reply's status byte, in the Hardware Error Status layout."""
        g = self._health
        if self._asked:
            g.txRxPacket()
        ids = tuple(self.ids)
        raw = np.zeros((len(ids), HEALTH_LEN), dtype=np.uint8)
        err = np.zeros(len(ids), dtype=np.int64)
        valid = np.zeros(len(ids), dtype=bool)
        if not self._asked:
            received, errors, failed = {}, {}, {}
        elif g.block is not None:
            received, errors, failed, _ = _rows(g)
        else:
            received, errors, failed = g.received, g.errors, g.failed
        for k, i in enumerate(ids):
            if i not in self._asked:
                continue
            data = received.get(i)
            if data is not None:
                raw[k] = np.frombuffer(data, dtype=np.uint8)
                err[k] = errors[i]
                valid[k] = True
            else:
                st = self.stats[i]
                why = failed.get(i, "timeouts")
                setattr(st, why, getattr(st, why) + 1)
        bits = np.where(valid, raw[:, 3].astype(np.int64) | err, -1)
        for i, b in zip(ids, bits.tolist()):
            if b >= 0 and b != self.status_bits.get(i, 0):
                self._note_status(i, b)
        return Health(
            ids,
            np.where(valid, raw[:, 0] * self.table.voltage_unit, np.nan),
            np.where(valid, raw[:, 1].astype(float), np.nan),
            np.where(valid, status.to_hw_error(np.maximum(bits, 0)), -1),
            valid,
        )

    def stats_summary(self) -> str:
        return "; ".join(
            f"id {i}: ok {s.ok}, timeouts {s.timeouts}, corrupt {s.corrupt}, late {s.late}, wrong "
            f"length {s.wrong_length}, status {status.text(self.status_bits.get(i, 0))}, skipped {s.skipped}"
            + (" (SKIPPED)" if s.skipping else "")
            for i, s in self.stats.items()
        )


def _rows(g: TolerantSyncRead) -> tuple[dict, dict, dict, dict]:
    """The dictionaries of a sync read answered in one block (received, errors, failed, stamps)."""
    ids = g.block_ids
    return (
        {i: g.block[k].tobytes() for k, i in enumerate(ids)},
        dict(zip(ids, g.block_err.tolist())),
        {},
        dict.fromkeys(ids, g.block_stamp),
    )
