"""Dynamixel bus on dynamixel-sdk (Protocol 2.0): one sync read + one sync write per control cycle.

:class:`DynamixelBus` drives the SDK's ``PortHandler``/``PacketHandler(2.0)``/``GroupSyncRead``/
``GroupBulkRead`` (through the adapters of :mod:`.sdk_adapters`) and ``PacketHandler.syncWriteTxOnly`` (what
``GroupSyncWrite.txPacket`` calls; the parameter block is built with numpy):

* ``cycle(goals)`` = one sync read of present current + velocity + position (10 bytes from 126) and one sync
  write of goal position (116, 4 bytes) — or, with ``p_gain=True``, of P gain + goal position through indirect
  addresses (6 bytes from 230). Exactly 2 bus transactions.
* ``read_health()`` — the slower read: input voltage, temperature, Hardware Error Status, Torque Enable and the
  ID (the map's signature: a servo that rebooted reads back its default map) in one sync read of indirect data
  224–229 (set up by :meth:`setup`). The SDK's ``GroupSyncRead`` discards each reply's error
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
from collections.abc import Mapping

import dynamixel_sdk as sdk
import numpy as np

from .. import control_table as ct
from ..bus_types import (  # noqa: F401 (re-exported)
    GAIN_GOAL_INDIRECT,
    HEALTH_DATA_ADDR,
    HEALTH_DTYPE,
    HEALTH_INDIRECT,
    STATE_DTYPE,
    BusConfig,
    BusError,
    GoalRejected,
    Health,
    JointState,
    joint_state,
)
from ..servo_transactions import COMM_SUCCESS
from ..sync_read_bus import SyncReadBus
from ..transactions import CommStats  # noqa: F401 (re-exported)
from .plausible_state import plausible_states, state_bounds
from .sdk_adapters import PacketHandler, PortHandler, TolerantSyncRead  # noqa: F401 (re-exported)
from .servo_transactions import DynamixelTransactions
from .stream import warm_up as stream_warm_up

log = logging.getLogger(__name__)


class DynamixelBus(SyncReadBus, DynamixelTransactions):
    """Protocol 2.0 servos on one port. Use as a context manager: ``open()`` … ``close()``."""

    _port_kind = "Dynamixel"
    _log = log
    port_class = PortHandler

    def __init__(self, config: BusConfig):
        self.ph = PacketHandler()
        self.transactions = 0
        self._init_bus(config)
        self._hw_logged: dict[int, int] = {}
        self._bounds = state_bounds(self.table)

    # --------------------------------------------------------------- port
    def _before_open(self) -> None:
        stream_warm_up()

    def _build_groups(self) -> None:
        fast = self.config.fast_rx
        self._read = TolerantSyncRead(self.port, self.ph, *ct.STATE_BLOCK, fast=fast)
        health_addr = self.table.item("Indirect Data 1").address  # 224 (XL330/XC330: 208)
        self._health = TolerantSyncRead(self.port, self.ph, health_addr, len(HEALTH_INDIRECT), fast=fast)
        self._fill_groups()

    def _answers_ping(self, i: int) -> bool:
        _, result, _ = self.ph.ping(self.port, i)
        self.transactions += 1
        return result == COMM_SUCCESS

    # --------------------------------------------------------------- the cycle
    def read_state(self) -> JointState:
        """One sync read (present current, velocity, position) of every active servo not skipped; a skipped one
        is re-probed once per ``probe_period_s``. Each valid entry carries its reply's arrival time; a reply
        outside :func:`.plausible_state.state_bounds` (garbled, yet through the frame check) is counted corrupt."""
        g, ids, asked = self._read, tuple(self.ids), self._asked
        n = len(ids)
        stamp = self._send_state_read()
        self.transactions += bool(asked)
        if asked == ids and g.block is not None and g.block_ids == ids and not np.any(g.block_err & 0x7F):
            raw = g.block.reshape(-1).view(STATE_DTYPE)
            if plausible_states(self._bounds, raw).all():
                self._all_answered()
                return self._state(ids, raw, np.ones(n, dtype=bool), stamp, np.full(n, g.block_stamp))
        received, errors, failed, stamps = (g.received, g.errors, g.failed, g.stamps) if asked else ({}, {}, {}, {})
        bus_alive = len(failed) < len(asked)  # nobody answered: a bus outage, not a silent servo
        taken = []  # replies without a status error: range-checked below
        for i in ids:
            st = self.stats[i]
            if st.skipping:
                st.skipped += 1
                continue
            if i in received:
                st.misses = 0
                err = errors[i]
                if err & 0x7F:  # (Protocol 1.0 keeps such a reply's raw bytes, not a state record)
                    st.status_errors += 1
                    st.last_error = self.ph.getRxPacketError(err)
                    continue
                taken.append(i)
                continue
            self._missed(st, i, failed.get(i, "timeouts"), bus_alive, stamp)
        records = np.frombuffer(b"".join([received[i] for i in taken]), dtype=STATE_DTYPE)
        sane = plausible_states(self._bounds, records)
        good = set()
        for i, ok in zip(taken, sane.tolist()):
            if ok:
                self.stats[i].ok += 1
                good.add(i)
            else:
                self.implausible += 1
                self._missed(self.stats[i], i, "corrupt", bus_alive, stamp)
        raw = np.zeros(n, dtype=STATE_DTYPE)
        valid = np.array([i in good for i in ids], dtype=bool)
        if good:
            raw[valid] = records[sane]
        arrival = np.array([stamps[i] if v else np.nan for i, v in zip(ids, valid)], dtype=np.float64)
        self._probe(stamp)
        return self._state(ids, raw, valid, stamp, arrival)

    def write_goals(self, goals, p_gains=None, _checked=None) -> None:
        """One sync write of goal positions [rad] (and P gains, raw register, when ``config.p_gain``).

        The parameter block (id, data…) is built with numpy and handed to ``PacketHandler.syncWriteTxOnly``,
        the call ``GroupSyncWrite.txPacket`` makes; its per-servo ``addParam`` would cost ~2 µs per servo.
        """
        ids, arr = self.check_goals(goals) if _checked is None else _checked
        if not ids:
            return
        addr, width, block = self.limits.sync_write_block(ids, arr, p_gains)
        result = self.ph.syncWriteTxOnly(self.port, addr, width, block.ravel().tolist(), block.size)
        self.transactions += 1
        if result != COMM_SUCCESS:
            raise BusError(f"sync write failed on {self.config.port}: {self.ph.getTxRxResult(result)}")

    def read_health(self) -> Health:
        """Input voltage, temperature and Hardware Error Status of every active servo in one sync read
        (indirect data 224–229; run :meth:`setup` first); ``setup_lost`` where the ID byte is not the servo's
        id (its RAM is back at defaults: it rebooted), those entries not valid."""
        g = self._health
        if self._asked:
            g.txRxPacket()
            self.transactions += 1
        ids = tuple(self.ids)
        raw = np.zeros(len(ids), dtype=HEALTH_DTYPE)
        valid = np.zeros(len(ids), dtype=bool)
        for k, i in enumerate(ids):
            if i not in self._asked:
                continue
            data = g.received.get(i)
            if data is not None and not g.errors[i] & 0x7F:
                raw[k] = np.frombuffer(data, dtype=HEALTH_DTYPE)[0]
                valid[k] = True
            elif data is None:
                st = self.stats[i]
                why = g.failed.get(i, "timeouts")
                setattr(st, why, getattr(st, why) + 1)
        lost = valid & (raw["id"] != np.array(ids, dtype=np.int64))  # indirect map back at its default
        valid &= ~lost  # its voltage/temperature/error bytes are not what they claim to be
        hw = np.where(valid, raw["hw_error"].astype(np.int64), -1)
        for i, e in zip(ids, hw.tolist()):
            if e >= 0 and e != self._hw_logged.get(i, 0):  # log changes, not every read
                (log.warning if e else log.info)("id %d Hardware Error Status: %s", i, ct.hardware_error_text(e))
                self._hw_logged[i] = e
        return Health(
            ids,
            np.where(valid, ct.voltage_to_volts(raw["voltage"]), np.nan),
            np.where(valid, raw["temperature"].astype(float), np.nan),
            hw,
            valid,
            np.where(valid, raw["torque"].astype(np.int64), -1),
            lost,
        )

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
