"""Dynamixel bus on dynamixel-sdk Protocol 1.0 (MX-64/MX-106 on 1.0 firmware, AX-12A): :class:`DynamixelBus1`.

The :class:`~.bus_interface.ServoBus` of protocol ``dxl1``, on the stock ``PacketHandler(1.0)`` framing
(through the adapters of :mod:`.sdk_adapters_p1`). Protocol 1.0 has no SYNC_READ, so a cycle is:

* MX: one BULK_READ of Present Position + Speed + Load (36–41, 6 bytes) from every servo, then one SYNC_WRITE of
  Goal Position (30, 2 bytes) — 2 transactions; with ``p_gain=True`` one more SYNC_WRITE of P Gain (28) in a cycle
  whose gains differ from the last ones written; a gain the health read finds other than written (a lost write)
  is written again by the next cycle.
* AX-12: no BULK_READ — one READ of 36–41 per servo (n transactions), then the SYNC_WRITE; kp is written as
  CW/CCW Compliance Slope (28–29) = 1024 / P (:func:`.p1_units.slope_of_p`), again only when it changes.

``stats`` count the transactions per cycle (``transactions``/``cycles``). ``read_health()`` reads Torque Enable
… Present Voltage + Temperature (24–43: 1.0 has no indirect addresses; torque off unasked = a servo that rebooted
by itself) the same way (one BULK_READ, or one READ per AX); 1.0 firmware has no Hardware Error Status register:
the alarm bits of each status packet's error byte (input voltage, overheating, overload —
:data:`.p1_units.ALARM_ERRORS`) are reported as the Hardware Error Status bits of the same meaning. An alarm
shutdown on 1.0 firmware leaves Torque Enable at 1 and sets Torque Limit (34) to 0 until it is written (ROBOTIS
e-manual, AX-12A / MX-28 (1.0), Torque Limit and Alarm Shutdown (18)): the health block spans it, and a 0 where
the bus set up or wrote a non-zero limit, with Torque Enable still 1, is reported as ``Health.shutdown`` even once
the alarm bit is gone (a brown-out instead puts it back at Max Torque (14) — 0 when that is 0 — and Torque Enable
at 0; a Max Torque of 0 is one warning at set-up: no output until an effort limit is written). The rest is
the 2.0 bus's: replies of earlier transactions never taken as fresh, per-servo :class:`CommStats`, missing servos
skipped and re-probed, goals outside the limits refused before anything is written.

There is no REBOOT in Protocol 1.0 on MX/AX firmware (the SDK's ``reboot`` returns ``COMM_NOT_AVAILABLE``):
:meth:`DynamixelBus1.reboot` is its equivalent — torque off, Torque Limit := Max Torque (its power-on value: the
alarm shutdown released once its cause is gone) and Goal Position := Present Position; a power cycle is the only
full reset. :meth:`DynamixelBus1.clear_shutdown` (the user's torque on) writes back the Torque Limit the servo
should have: the last one written (an effort limit), else Max Torque read at set-up.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from functools import partial

import numpy as np

from .. import control_table as ct
from .. import protocol1 as p1
from ..bus_types import BusConfig, BusError, Health
from ..goals import id_rows
from ..sent_gains import SentGains
from ..servo_transactions import COMM_SUCCESS
from .bus import DynamixelBus
from .p1_units import (
    BULK_READ_MODELS,
    HEALTH_ADDR,
    HEALTH_LEN,
    HEALTH_VOLTAGE,
    STATE_ADDR,
    STATE_LEN,
    alarm_to_hw,
    baud_code,
    slope_of_p,
    state_record,
)
from .sdk_adapters_p1 import BulkRead1, PacketHandler1, PerServoRead1, PortHandler1

log = logging.getLogger(__name__)

ADDR_P_GAIN1 = 28  # P Gain (MX) / CW Compliance Slope (AX, CCW at 29)
ADDR_GOAL1 = 30
TORQUE_LIMIT = "PWM Limit"  # Torque Limit (34) in the 1.0 tables' X-series naming
AT_TORQUE_LIMIT = 34 - HEALTH_ADDR  # its offset in the health block (2 bytes, little-endian)
SRL_ALL = 2  # Status Return Level: 0 answers PING, 1 PING and READ, 2 every instruction


class DynamixelBus1(DynamixelBus):
    """Protocol 1.0 servos of one table on one port. Use as a context manager: ``open()`` … ``close()``."""

    max_id = p1.MAX_ID
    port_class = PortHandler1

    def __init__(self, config: BusConfig):
        super().__init__(config)
        t = self.table
        if t.protocol != "dxl1":
            raise ValueError(f"DynamixelBus1 drives Protocol 1.0 tables; {config.model} ({t.name}) is {t.protocol}")
        baud_code(config.baud, t)  # BusConfig refused it already; a bus built from a changed config must too
        self.ph = PacketHandler1()
        self.bulk = t.model_number in BULK_READ_MODELS  # MX: BULK_READ; AX: one READ per servo
        self.slopes = "Position P Gain" not in t.by_name  # AX: kp as Compliance Slope
        self._gains = SentGains("CW/CCW Compliance Slope (28-29)" if self.slopes else "P Gain (28)")
        self.max_torque: dict[int, int] = {}  # id → Max Torque (14), read at set-up: Torque Limit at power-on
        self.torque_limit: dict[int, int] = {}  # id → the Torque Limit (34) it should have: Max Torque or written
        self.cut: set[int] = set()  # ids whose Torque Limit read 0 (alarm shutdown): released by the user's request
        self._no_torque_said: set[int] = set()  # ids with Max Torque 0 whose warning was given

    def _build_groups(self) -> None:
        reader = BulkRead1 if self.bulk else PerServoRead1
        self._read = reader(
            self.port, self.ph, STATE_ADDR, STATE_LEN, partial(state_record, sign_bit=self.table.sign_bit)
        )
        self._health = reader(self.port, self.ph, HEALTH_ADDR, HEALTH_LEN, None)
        self._fill_groups()

    # --------------------------------------------------------------- setup
    def _setup_one(self, i: int) -> None:
        """Status Return Level 2 (16: every instruction answered; read, written without a status only when lower),
        torque off, Return Delay Time (5), Max Torque (14) read (the Torque Limit the servo should have until one
        is written), and the servo's CW/CCW Angle Limit (Min/Max Position Limit) checked against the joint limits."""
        self._answer_every_instruction(i, SRL_ALL)
        self.write_item(i, "Torque Enable", 0)
        self._return_delay(i)
        self.max_torque[i] = self.torque_limit[i] = self.read_item(i, "Max Torque")
        self._note_cut(i, self.read_item(i, TORQUE_LIMIT) == 0 and self.max_torque[i] != 0)
        if self.max_torque[i] == 0 and i not in self._no_torque_said:
            self._no_torque_said.add(i)
            log.warning(
                "id %d%s: Max Torque (14) is 0: Torque Limit (34) is 0 at every power-on, the servo has no output "
                "until an effort limit (a command's effort) is written",
                i,
                self._name(i),
            )
        self._gains.forget(i)
        self._check_position_limits(i, "CW/CCW Angle Limit")

    # --------------------------------------------------------------- the cycle
    def read_state(self):
        """One BULK_READ (MX) or one READ per servo (AX) of position, speed and load; see the 2.0 bus."""
        before = self._read.transactions
        state = super().read_state()
        self.transactions += max(self._read.transactions - before - 1, 0)  # the 2.0 cycle counted one
        return state

    def write_goals(self, goals, p_gains=None, _checked=None) -> None:
        """One SYNC_WRITE of Goal Position (30, 2 bytes) [rad]; with ``config.p_gain`` first a SYNC_WRITE of P Gain
        (MX, 28) or both Compliance Slopes (AX, 28–29) when they differ from the values last written."""
        ids, arr = self.check_goals(goals) if _checked is None else _checked
        if not ids:
            return
        if self.config.p_gain:
            self._write_gains(ids, p_gains)
        c = self.limits.goal_counts(ids, arr)
        block = id_rows(ids, c.astype("<u2").view(np.uint8).reshape(-1, 2))
        self._sync_write(ADDR_GOAL1, 2, block)

    def _write_gains(self, ids: tuple[int, ...], p_gains) -> None:
        if p_gains is None:
            raise ValueError("p_gains: required when the bus is configured with p_gain=True")
        pg = np.asarray([p_gains[i] for i in ids] if isinstance(p_gains, Mapping) else p_gains, dtype=np.float64)
        pg = pg.ravel()
        lo, top = self.table.p_gain_min, self.table.p_gain_max
        if pg.size != len(ids) or not np.all((pg >= lo) & (pg <= top) & (pg == np.rint(pg))):
            what = "P gains (P 8..512 = Compliance Slope 128..2)" if self.slopes else "P Gain register values"
            raise ValueError(f"p_gains: need {len(ids)} integer {what} in {lo}..{top}, got {pg}")
        regs = [slope_of_p(p) for p in pg] if self.slopes else [int(p) for p in pg]
        if not self._gains.changed(ids, regs):
            return
        width = 2 if self.slopes else 1
        block = np.array([[i, *([r] * width)] for i, r in zip(ids, regs)], dtype=np.uint8)
        self._sync_write(ADDR_P_GAIN1, width, block)
        self._gains.note_sent(ids, regs)

    def _sync_write(self, addr: int, width: int, block: np.ndarray) -> None:
        result = self.ph.syncWriteTxOnly(self.port, addr, width, block.ravel().tolist(), block.size)
        self.transactions += 1
        if result != COMM_SUCCESS:
            raise BusError(f"sync write failed on {self.config.port}: {self.ph.getTxRxResult(result)}")

    # --------------------------------------------------------------- health, errors, reboot equivalent
    def read_health(self) -> Health:
        """Torque Enable, Present Voltage and Temperature (24–43) of every active servo in one BULK_READ (MX) or one
        READ each (AX); ``hw_error`` = the alarm bits of each reply's status error byte as Hardware Error Status bits;
        ``torque`` (−1 where unread) shows a servo that rebooted by itself (torque off unasked); ``shutdown`` one
        whose alarm shutdown cut its output (Torque Limit (34) 0 where :attr:`torque_limit` is not, Torque Enable
        still 1), with or without its alarm bit still set; Torque Enable 0 with Torque Limit 0 is a brown-out of a
        servo whose Max Torque (14) is 0."""
        g = self._health
        if self._asked:
            before = g.transactions
            g.txRxPacket()
            self.transactions += g.transactions - before
        ids = tuple(self.ids)
        n = len(ids)
        volts, temp, hw = np.full(n, np.nan), np.full(n, np.nan), np.full(n, -1, dtype=np.int64)
        torque = np.full(n, -1, dtype=np.int64)
        valid, cut = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
        for k, i in enumerate(ids):
            if i not in self._asked:
                continue
            data = g.received.get(i)
            if data is not None and not g.errors[i]:
                volts[k] = data[HEALTH_VOLTAGE] * self.table.voltage_unit
                temp[k] = float(data[HEALTH_VOLTAGE + 1])
                torque[k] = data[0]
                limit = int.from_bytes(bytes(data[AT_TORQUE_LIMIT : AT_TORQUE_LIMIT + 2]), "little")
                cut[k] = limit == 0 and self.torque_limit.get(i, 0) != 0 and data[0] != 0  # not a brown-out
                self._note_cut(i, bool(cut[k]))
                hw[k] = alarm_to_hw(self.ph.alarms.get(i, 0))
                valid[k] = True
                self._check_gain(i, data)
            elif data is None:
                st = self.stats[i]
                why = g.failed.get(i, "timeouts")
                setattr(st, why, getattr(st, why) + 1)
        for i, e in zip(ids, hw.tolist()):
            if e >= 0 and e != self._hw_logged.get(i, 0):
                (log.warning if e else log.info)("id %d alarm (status error byte): %s", i, ct.hardware_error_text(e))
                self._hw_logged[i] = e
        return Health(ids, volts, temp, hw, valid, torque, shutdown=cut)

    def _check_gain(self, i: int, health: bytes) -> None:
        """The P Gain (28) or both Compliance Slopes (28–29) of servo ``i``'s health block against the value last
        sent: a lost SYNC_WRITE is sent again by the next cycle (:class:`~servo_ff.bus.sent_gains.SentGains`). A
        servo this bus turned torque on that reads torque off (24) rebooted or shut down by itself: its gain is
        forgotten quietly (a reboot put it at its power-on value, not a lost write) and written again."""
        if health[0] == 0 and i in self.torque_on:
            self.torque_on.discard(i)
            self._gains.forget(i)
            return
        at = ADDR_P_GAIN1 - HEALTH_ADDR
        for reg in health[at : at + (2 if self.slopes else 1)]:
            if not self._gains.check(i, reg):
                return

    def hardware_error(self, dxl_id: int) -> int:
        """Alarm bits of one servo (a READ of Present Voltage: its status error byte) as Hardware Error Status bits."""
        self.read_item(dxl_id, "Present Input Voltage")
        return alarm_to_hw(self.ph.alarms.get(dxl_id, 0))

    def _note_cut(self, i: int, cut: bool) -> None:
        (self.cut.add if cut else self.cut.discard)(i)

    def write_item(self, dxl_id: int, name: str, value: int) -> None:
        """As the 2.0 bus; a Torque Limit (an effort limit) is the one :meth:`clear_shutdown` restores, and is only
        kept (one info line) while the servo's alarm shutdown holds it at 0: writing it would release the shutdown
        without the user's request (a limit written again after a reconnection or a join)."""
        if name == TORQUE_LIMIT:
            self.torque_limit[dxl_id] = int(value)
            if dxl_id in self.cut and value:
                log.info("id %d: Torque Limit %d kept, written when its alarm shutdown is released", dxl_id, value)
                return
        super().write_item(dxl_id, name, value)

    def clear_shutdown(self, ids=None) -> None:
        """Torque Limit (34) of ``ids`` (default: every active servo) := the one it should have (:attr:`torque_limit`:
        the last written, else Max Torque): releases an alarm shutdown whose cause is gone (e-manual: "once error
        conditions are resolved and this value is changed to the value other than 0, the motor can be operated
        again"); one whose cause lasts sets it to 0 again. For the user's torque on, never a restore by itself."""
        for i in self.ids if ids is None else ids:
            self.cut.discard(i)
            if i in self.torque_limit:
                self.write_item(i, TORQUE_LIMIT, self.torque_limit[i])

    def reboot(self, dxl_id: int) -> None:
        """The Protocol 1.0 equivalent of REBOOT: Torque Enable 0, Torque Limit := Max Torque (its power-on value;
        releases an alarm shutdown whose cause is gone) and Goal Position := Present Position, so that torque on
        holds still. A cause that persists (a load beyond the motor, heat, a supply out of range) keeps its alarm
        bit set (and Torque Limit 0); a power cycle resets everything."""
        self.torque_on.discard(dxl_id)
        self.write_item(dxl_id, "Torque Enable", 0)
        self.cut.discard(dxl_id)
        if dxl_id in self.max_torque:
            self.write_item(dxl_id, TORQUE_LIMIT, self.max_torque[dxl_id])
        self.write_item(dxl_id, "Goal Position", self.read_item(dxl_id, "Present Position"))
        self._gains.forget(dxl_id)
        left = self.ph.alarms.get(dxl_id, 0)
        if left:
            log.warning(
                "id %d: alarm still set after torque off: %s", dxl_id, ct.hardware_error_text(alarm_to_hw(left))
            )

    def bulk_read(self, requests: Mapping[int, tuple[int, int]]) -> dict[int, bytes]:
        """{id: (address, length)} → {id: data} in one BULK_READ (MX only; an AX answers an instruction error)."""
        out = {}
        for (addr, n), ids in _by_block(requests).items():
            g = BulkRead1(self.port, self.ph, addr, n, None)
            for i in ids:
                g.addParam(i)
            g.txRxPacket()
            self.transactions += 1
            out.update({i: d for i, d in g.received.items() if not g.errors[i]})
        return out

    def stats_summary(self) -> str:
        how = "one BULK_READ per cycle" if self.bulk else f"{len(self._asked)} READs per cycle (AX: no BULK_READ)"
        return f"protocol 1.0, {how}; " + super().stats_summary()


def _by_block(requests: Mapping[int, tuple[int, int]]) -> dict[tuple[int, int], list[int]]:
    out: dict[tuple[int, int], list[int]] = {}
    for i, block in requests.items():
        out.setdefault(tuple(block), []).append(i)
    return out


__all__ = ["DynamixelBus1", "p1"]
