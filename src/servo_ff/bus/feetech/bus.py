"""Feetech STS bus on the stock ``scservo_sdk``: one sync read + one sync write per control cycle
(``FAMILIES["sts"]``, the :class:`~servo_ff.bus.bus_interface.ServoBus` interface).

:class:`FeetechBus` drives the SDK's ``PortHandler``, packet handler and ``GroupSyncRead`` (through the adapters of
:mod:`.port` and :mod:`.packets`) and the packet handler's ``syncWriteTxOnly`` (what ``GroupSyncWrite.txPacket``
calls; the parameter block is built with numpy):

* ``cycle(goals)`` = one SYNC_READ (0x82) of Present Position + Velocity + Load (6 contiguous bytes from 56) and
  one SYNC_WRITE (0x83) of Goal Position (42, 2 bytes). With ``p_gain=True`` the P gains (Position P Gain, the P
  coefficient at 21, one byte, not contiguous with the goal) are sent in one more sync write only in the cycles
  where they change: 2 transactions per cycle, 3 when the gains change. The next health read reads them back (one
  more sync read, only after a change); one found other than written (a lost write) is written again.
* ``read_health()`` — the slower read: Torque Enable … Present Input Voltage, Present Temperature and the Status
  register (40–65) in one sync read; ``hw_error`` in the Hardware Error Status layout (:mod:`.status`), ``torque``
  (a servo that rebooted by itself, e.g. a brown-out, reads torque off unasked). Its voltages (and set-up's) are
  ``supply``, the V_in of the effort from the drive duty (:func:`~servo_ff.bus.bus_types.load_effort`).
* Status bits also arrive in the error byte of every reply: recorded per servo (``status_bits``) and logged when
  they change; an STS reply with status bits set still carries valid data.
* ``ping``/``scan``/``connect``/``setup``/``torque``/``reboot`` (the STS has none: torque off, goal = present),
  ``read_item``/``write_item`` (EPROM lock) with retries: :mod:`.transactions`.
* The same rules as :class:`servo_ff.bus.dynamixel.bus.DynamixelBus`: per-servo
  :class:`~servo_ff.bus.transactions.CommStats`; a late reply of an earlier transaction is never reported as
  this cycle's state (failed servos read NaN with ``valid=False``); a servo missing ``skip_after`` sync reads in a
  row is skipped and re-probed; goals outside the joint limits or non-finite are refused before anything is
  written (:class:`~servo_ff.bus.bus_types.GoalRejected`).
* State values a single-turn STS never produces (position beyond 4095, speed or load beyond their magnitude) are
  taken as a garbled reply that passed the 8-bit checksum: counted ``corrupt``, reported invalid.
"""

from __future__ import annotations

import logging

import numpy as np

from ..bus_types import BusConfig, BusError, Health, JointState, joint_state
from ..goals import id_rows
from ..sent_gains import SentGains
from ..sync_read_bus import SyncReadBus
from . import status
from .packets import COMM_SUCCESS, StsPacketHandler, TolerantSyncRead
from .port import StsPortHandler
from .transactions import StsTransactions

log = logging.getLogger(__name__)

STATE_ADDR, STATE_LEN = 56, 6  # Present Position (2), Present Velocity (2), Present Load (2)
HEALTH_ADDR, HEALTH_LEN = 40, 26  # Torque Enable (40) … Present Input Voltage (62), Temperature, (64), Status
HEALTH_VOLTAGE = 62 - HEALTH_ADDR  # offset of Present Input Voltage in the health block (Torque Enable at 0)
GOAL_ADDR, P_GAIN_ADDR = 42, 21
STATE_DTYPE = np.dtype([("position", "<i8"), ("velocity", "<i8"), ("load", "<i8")])
#: bits a single-turn STS never sets in Present Position (0..4095), Present Velocity (sign 15, |v| < 4096 counts/s)
#: and Present Load (sign 10, |load| <= 1000)
IMPLAUSIBLE = np.array([0xF000, 0x7000, 0xF800], dtype=np.uint16)


class FeetechBus(SyncReadBus, StsTransactions):
    """Feetech STS servos on one port. Use as a context manager: ``open()`` … ``close()``."""

    _port_kind = "Feetech"
    _log = log
    port_class = StsPortHandler

    def __init__(self, config: BusConfig):
        self._init_bus(config)
        if self.table.protocol != "sts":
            raise ValueError(f"FeetechBus drives protocol sts; {self.table.name} speaks {self.table.protocol}")
        self.ph = StsPacketHandler()
        self.status_bits: dict[int, int] = {}
        self.supply: dict[int, float] = {}  # id → Present Input Voltage [V] last read (set-up, health reads)
        self._p_sent = SentGains("Position P Gain (21)")
        signs = [self.table.sign_bit_of(n) for n in ("Present Position", "Present Velocity", "Present Load")]
        self._sign_mask = np.array([1 << b for b in signs], dtype=np.int64)
        self._mag_mask = self._sign_mask - 1

    @property
    def transactions(self) -> int:
        """Instruction packets written on the port (every transaction, retries and probes included)."""
        return self.port.instructions

    def _build_groups(self) -> None:
        self._read = TolerantSyncRead(self.port, self.ph, STATE_ADDR, STATE_LEN)
        self._health = TolerantSyncRead(self.port, self.ph, HEALTH_ADDR, HEALTH_LEN)
        self.port.reserve_lengths(STATE_LEN, HEALTH_LEN)  # never a resync marker's: a late reply would pass for it
        self._fill_groups()

    def _answers_ping(self, i: int) -> bool:
        _, result, _ = self.ph.txRxPacket(self.port, [0, 0, i, 2, 1, 0])  # PING
        return result == COMM_SUCCESS

    # --------------------------------------------------------------- the cycle
    def _decode(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(k, 6) uint8 state replies → (:data:`STATE_DTYPE` records, plausible mask): the table's sign-magnitude
        decoding of the three items, vectorised over the (k, 3) words."""
        raw = np.ascontiguousarray(rows).view("<u2").reshape(-1, 3).astype(np.int64)
        mag = raw & self._mag_mask
        vals = np.where(raw & self._sign_mask, -mag, mag)
        return vals.view(STATE_DTYPE).reshape(-1), ~(raw & IMPLAUSIBLE).any(axis=1)

    def _state(self, ids, raw, valid, stamp, stamps) -> JointState:
        vin = np.array([self.supply.get(i, np.nan) for i in ids])  # NaN: never read, effort NaN
        return joint_state(self.table, self.kt, self.config.center, ids, raw, valid, stamp, stamps, vin)

    def _note_block_status(self, ids: tuple[int, ...], errs) -> None:
        for i, e in zip(ids, errs):
            if e != self.status_bits.get(i, 0):
                self._note_status(i, int(e))

    def read_state(self) -> JointState:
        """One sync read (present position, velocity, load) of every active servo not skipped; a skipped one is
        re-probed once per ``probe_period_s``. Each valid entry carries its reply's arrival time."""
        g, ids, asked = self._read, tuple(self.ids), self._asked
        n = len(ids)
        stamp = self._send_state_read()
        if asked and g.block is not None:  # every asked servo answered in one block
            if asked == ids:
                rec, ok = self._decode(g.block)
                if ok.all():
                    self._all_answered()
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
            self.implausible += len(good) - int(plausible.sum())
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
            self._missed(st, i, "corrupt" if i in received else failed.get(i, "timeouts"), bus_alive, stamp)
        arrival = np.array([stamps[i] if v else np.nan for i, v in zip(ids, valid)], dtype=np.float64)
        self._probe(stamp)
        return self._state(ids, rec, valid, stamp, arrival)

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
        lo, top = self.table.p_gain_min, self.table.p_gain_max
        if pg.size != len(ids) or not np.all((pg >= lo) & (pg <= top) & (pg == np.rint(pg))):
            raise ValueError(f"p_gains: need {len(ids)} integers in {lo}..{top}, got {pg}")
        changed = self._p_sent.changed(ids, pg.tolist())
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
        c = self.limits.goal_counts(ids, arr)
        block = id_rows(ids, c.astype("<u2").view(np.uint8).reshape(-1, 2))
        if pblock is not None:
            self._sync_write(P_GAIN_ADDR, pblock)
            self._p_sent.note_sent(pblock[:, 0].tolist(), pblock[:, 1].tolist())
        self._sync_write(GOAL_ADDR, block)

    def read_health(self) -> Health:
        """Torque Enable, input voltage, temperature and the Status register of every active servo in one sync read
        (40–65); ``hw_error`` = Status | the reply's status byte, in the Hardware Error Status layout."""
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
        self._check_gains()
        v = HEALTH_VOLTAGE
        volts = np.where(valid, raw[:, v] * self.table.voltage_unit, np.nan)
        self.supply.update((i, float(x)) for i, x, ok in zip(ids, volts, valid) if ok)
        bits = np.where(valid, raw[:, v + 3].astype(np.int64) | err, -1)
        for i, b in zip(ids, bits.tolist()):
            if b >= 0 and b != self.status_bits.get(i, 0):
                self._note_status(i, b)
        return Health(
            ids,
            volts,
            np.where(valid, raw[:, v + 1].astype(float), np.nan),
            np.where(valid, status.to_hw_error(np.maximum(bits, 0)), -1),
            valid,
            np.where(valid, raw[:, 0].astype(np.int64), -1),
        )

    def _check_gains(self) -> None:
        """The P coefficient (21, outside the health block) of the servos whose gain was written since the last
        check, read back in one 1-byte sync read: a lost SYNC_WRITE is sent again by the next cycle
        (:class:`~servo_ff.bus.sent_gains.SentGains`). Nothing is read while no gain was written."""
        ids = [i for i in self._asked if i in self._p_sent.unchecked]
        if not ids:
            return
        g = TolerantSyncRead(self.port, self.ph, P_GAIN_ADDR, 1)
        for i in ids:
            g.addParam(i)
        g.txRxPacket()
        for i, data in (_rows(g)[0] if g.block is not None else g.received).items():
            self._p_sent.check(i, data[0])

    def _status_summary(self, i: int, st) -> str:
        return f"status {status.text(self.status_bits.get(i, 0))}"


def _rows(g: TolerantSyncRead) -> tuple[dict, dict, dict, dict]:
    """The dictionaries of a sync read answered in one block (received, errors, failed, stamps)."""
    ids = g.block_ids
    return (
        {i: g.block[k].tobytes() for k, i in enumerate(ids)},
        dict(zip(ids, g.block_err.tolist())),
        {},
        dict.fromkeys(ids, g.block_stamp),
    )
