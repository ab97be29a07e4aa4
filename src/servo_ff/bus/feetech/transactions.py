"""Single-servo transactions of the Feetech bus, with retries: ping, scan, connect, items by name (sign-magnitude,
the EPROM lock), torque, the reboot equivalent, per-servo setup.

:class:`StsTransactions` is :class:`servo_ff.bus.dynamixel.servo_transactions.ServoTransactions` (``torque``,
``setup``, ``_name`` as they are) with the STS differences:

* the status byte of a reply carries the servo's status bits (voltage, sensor, temperature, current, overload),
  not an instruction error: the data is valid whatever it says, so it is recorded (``status_bits``, logged when
  it changes), never counted as a failure;
* items are sign-magnitude (:meth:`~servo_ff.bus.control_table.ControlTable.encode`);
* EPROM items (addresses 0–39) act at once; they are kept over a power-off only when written with the Lock
  (address 55) at 0: ``write_item(..., persist=True)`` (the default for EPROM items) unlocks, writes and locks;
  ``setup`` and the cycle's P gains write with the lock on (no flash wear);
* the STS has no REBOOT instruction: :meth:`StsTransactions.reboot` releases the torque (which clears the
  overload and over-current protections the firmware latched) and sets Goal Position to Present Position.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable

import scservo_sdk as scs

from .. import control_table as ct
from ..bus_types import BusError, GoalRejected
from ..dynamixel.servo_transactions import RETRY_BACKOFF_S, ServoTransactions
from ..transactions import CommStats
from . import status

log = logging.getLogger(__name__)

COMM_SUCCESS = scs.COMM_SUCCESS
MAX_ID = 0xFD  # 253 (0xFE is broadcast)


class StsTransactions(ServoTransactions):
    """One servo at a time, each call with up to ``config.retries`` retries (transactions are counted at the port)."""

    status_bits: dict[int, int]

    def _count(self, i: int, result: int, error: int = 0) -> bool:
        st = self.stats.setdefault(i, CommStats())
        if result == COMM_SUCCESS:
            st.ok += 1
            self._note_status(i, error)
            return True
        if result == scs.COMM_RX_TIMEOUT:
            st.timeouts += 1
        elif result == scs.COMM_RX_CORRUPT:
            st.corrupt += 1
        st.last_error = self.ph.getTxRxResult(result)
        return False

    def _note_status(self, i: int, bits: int) -> None:
        """Record the status bits a reply carried; log when they change."""
        if bits != self.status_bits.get(i, 0):
            (log.warning if bits else log.info)("id %d%s status: %s", i, self._name(i), status.text(bits))
        self.status_bits[i] = bits

    def _retry(self, i: int, fn, *args):
        for attempt in range(self.config.retries + 1):
            if attempt:
                time.sleep(RETRY_BACKOFF_S * 2 ** (attempt - 1))
            out = fn(self.port, i, *args)
            res = out if isinstance(out, tuple) else (out,)
            result, error = (res[-2], res[-1]) if len(res) >= 2 else (res[0], 0)
            if self._count(i, result, error):
                return out
            if attempt < self.config.retries:
                self.stats[i].retries += 1
        return out

    def ping(self, servo_id: int) -> int | None:
        """Model number of ``servo_id`` (the SDK's ping: PING, then READ of address 3, 2 bytes), or None."""
        model, result, _ = self._retry(servo_id, self.ph.ping)
        return model if result == COMM_SUCCESS else None

    def scan(self, ids: Iterable[int] = range(0, MAX_ID + 1), broadcast: bool = False) -> dict[int, int]:
        """{id: model number} of the servos that answer, one ping per id (no retries). The FT-SCS protocol forbids a
        broadcast PING on a bus of several servos (their replies would collide)."""
        if broadcast:
            raise ValueError("Feetech STS: no broadcast PING on a multi-servo bus; scan id by id")
        found = {}
        for i in ids:
            model, result, _ = self.ph.ping(self.port, i)
            if result == COMM_SUCCESS:
                found[i] = model
        return found

    def connect(self) -> tuple[list[int], list[int]]:
        """Ping the configured ids; missing ones are logged and left out. A model number without a control table
        raises :class:`BusError` naming the id, the number and the known tables; another known model is logged."""
        found, missing, other = [], [], []
        known = {t.model_number: k for k, t in ct.CONTROL_TABLES.items() if t.protocol == "sts"}
        for i in self.config.ids:
            model = self.ping(i)
            if model is None:
                missing.append(i)
                continue
            if model not in known:
                raise BusError(
                    f"id {i}{self._name(i)} on {self.config.port} reports model number {model}: no control table "
                    f"for it over protocol sts; known: {', '.join(f'{n} ({k})' for n, k in sorted(known.items()))}"
                )
            if model != self.table.model_number:
                other.append(f"{i} ({known[model]})")
            found.append(i)
        return self._adopt_scan(found, missing, other)

    def read_item(self, servo_id: int, name: str) -> int:
        """Value of control-table item ``name`` (sign-magnitude decoded); raises BusError on failure."""
        it = self.table.item(name)
        fn = {1: self.ph.read1ByteTxRx, 2: self.ph.read2ByteTxRx}[it.size]
        value, result, _ = self._retry(servo_id, fn, it.address)
        if result != COMM_SUCCESS:
            raise BusError(f"read {name!r} from id {servo_id}: {self.stats[servo_id].last_error}")
        return int(self.table.decode(it, value))

    def write_item(self, servo_id: int, name: str, value: int, persist: bool | None = None) -> None:
        """Write item ``name``; an EPROM item with ``persist`` (default True for EPROM items) is written between
        Lock = 0 and Lock = 1, so that it is kept over a power-off."""
        it = self.table.item(name)
        if not it.writable:
            raise ValueError(f"{name!r} is read-only")
        try:
            raw = self.table.encode(it, int(value))
        except ValueError as e:
            raise ValueError(f"{name!r} value {value}: {e}") from None
        if persist is None:
            persist = it.eeprom
        if persist and it.eeprom:
            self._write_raw(servo_id, self.table.item("Lock"), 0)
            try:
                self._write_raw(servo_id, it, raw)
            finally:
                self._write_raw(servo_id, self.table.item("Lock"), 1)
        else:
            self._write_raw(servo_id, it, raw)

    def _write_raw(self, servo_id: int, it: ct.Item, raw: int) -> None:
        fn = {1: self.ph.write1ByteTxRx, 2: self.ph.write2ByteTxRx}[it.size]
        result, _ = self._retry(servo_id, fn, it.address, raw)
        if result != COMM_SUCCESS:
            raise BusError(f"write {it.name!r}={raw} to id {servo_id}: {self.stats[servo_id].last_error}")

    def reboot(self, servo_id: int) -> None:
        """The STS has no REBOOT: release the torque (clears the latched overload / over-current protection; the
        voltage and temperature bits stay while their cause does) and set Goal Position to Present Position, so
        that torque comes back without a jump. Torque stays off, as after a Dynamixel REBOOT."""
        self.write_item(servo_id, "Torque Enable", 0)
        self.write_item(servo_id, "Goal Position", self.read_item(servo_id, "Present Position"))

    def hardware_error(self, servo_id: int) -> int:
        """Status register (address 65) of one servo, in the Hardware Error Status layout (:mod:`.status`)."""
        return status.to_hw_error(self.read_item(servo_id, "Hardware Error Status"))

    def _setup_one(self, i: int) -> None:
        """Torque off, Return Delay Time (not saved), and the servo's Min/Max Position Limit against the joint
        limits."""
        self.write_item(i, "Torque Enable", 0)
        if self.config.return_delay is not None:
            self.write_item(i, "Return Delay Time", self.config.return_delay, persist=False)
            self._delays[i] = self.config.return_delay
        else:
            self._delays[i] = self.read_item(i, "Return Delay Time")
        lo_c, hi_c = self.read_item(i, "Min Position Limit"), self.read_item(i, "Max Position Limit")
        rpc, c = self.table.rad_per_count, self.config.center
        lo, hi = (lo_c - c) * rpc, (hi_c - c) * rpc
        if self.lower[i] < lo or self.upper[i] > hi:
            raise GoalRejected(
                f"id {i}{self._name(i)}: joint limits ({self.lower[i]:.6g}, {self.upper[i]:.6g}) rad "
                f"exceed the servo's Min/Max Position Limit ({lo:.6g}, {hi:.6g}) rad (counts {lo_c}..{hi_c})"
            )
        self._p_sent.pop(i, None)  # the P gain is written again by the next cycle
