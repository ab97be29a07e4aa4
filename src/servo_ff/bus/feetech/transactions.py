"""Single-servo transactions of the Feetech bus, with retries: ping, scan, connect, items by name (sign-magnitude,
the EPROM lock), torque, the reboot equivalent, per-servo setup.

:class:`StsTransactions` is the shared :class:`servo_ff.bus.servo_transactions.ServoTransactions` (retries, ping,
scan, connect, ``torque``, ``setup``) with the STS differences:

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

import scservo_sdk as scs

from .. import control_table as ct
from ..bus_types import BusError
from ..servo_transactions import COMM_SUCCESS, ServoTransactions
from . import status

log = logging.getLogger(__name__)

MAX_ID = 0xFD  # 253 (0xFE is broadcast)
SRL_ALL = 1  # Status Return Level: 0 answers PING and READ only, 1 every instruction


class StsTransactions(ServoTransactions):
    """One servo at a time, each call with up to ``config.retries`` retries (transactions are counted at the port)."""

    status_bits: dict[int, int]
    rx_timeout, rx_corrupt = scs.COMM_RX_TIMEOUT, scs.COMM_RX_CORRUPT
    max_id = MAX_ID

    def _count_transaction(self) -> None:
        """The port counts every instruction it writes (``FeetechBus.transactions``)."""

    def _status_failed(self, i: int, error: int) -> bool:
        """Never: the status byte carries the servo's status bits (recorded by :meth:`_note_status`)."""
        self._note_status(i, error)
        return False

    def _note_status(self, i: int, bits: int) -> None:
        """Record the status bits a reply carried; log when they change."""
        if bits != self.status_bits.get(i, 0):
            (log.warning if bits else log.info)("id %d%s status: %s", i, self._name(i), status.text(bits))
        self.status_bits[i] = bits

    def _broadcast_scan(self, ids) -> dict[int, int]:
        """The FT-SCS protocol forbids a broadcast PING on a bus of several servos (their replies would collide)."""
        raise ValueError("Feetech STS: no broadcast PING on a multi-servo bus; scan id by id")

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
        self.torque_on.discard(servo_id)
        self.write_item(servo_id, "Torque Enable", 0)
        self.write_item(servo_id, "Goal Position", self.read_item(servo_id, "Present Position"))

    def hardware_error(self, servo_id: int) -> int:
        """Status register (address 65) of one servo, in the Hardware Error Status layout (:mod:`.status`)."""
        return status.to_hw_error(self.read_item(servo_id, "Hardware Error Status"))

    def _setup_one(self, i: int) -> None:
        """Status Return Level 1 (every instruction answered; read, and written without a status, not saved, only
        when 0), torque off, Return Delay Time (not saved), Operating Mode checked, and the servo's Min/Max
        Position Limit against the joint limits; its supply read (the effort's V_in until the next health read)."""
        self._answer_every_instruction(i, SRL_ALL)
        self.write_item(i, "Torque Enable", 0)
        self._return_delay(i, persist=False)
        self._check_operating_mode(i)
        self._check_position_limits(i)
        self._p_sent.forget(i)  # the P gain is written again by the next cycle
        self.supply[i] = self.read_item(i, "Present Input Voltage") * self.table.voltage_unit
