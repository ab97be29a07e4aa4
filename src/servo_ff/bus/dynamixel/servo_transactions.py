"""Single-servo transactions of the Dynamixel bus: what Protocol 2.0 decides on top of the shared
:class:`~servo_ff.bus.servo_transactions.ServoTransactions` (retries, ping, scan, connect, setup loop): the status
byte's error bits, the broadcast PING, control-table items by name, REBOOT and the per-servo setup (Return Delay
Time, Operating Mode, indirect addresses, position limits).

:class:`DynamixelTransactions` is a part of :class:`~.bus.DynamixelBus` (and so of :class:`~.bus_p1.DynamixelBus1`).
"""

from __future__ import annotations

from collections.abc import Iterable

import dynamixel_sdk as sdk

from ..bus_types import GAIN_GOAL_INDIRECT, HEALTH_INDIRECT, BusError
from ..servo_transactions import COMM_SUCCESS, ServoTransactions
from . import protocol as pr


class DynamixelTransactions(ServoTransactions):
    """One servo at a time, each call with up to ``config.retries`` retries."""

    transactions: int
    rx_timeout, rx_corrupt = sdk.COMM_RX_TIMEOUT, sdk.COMM_RX_CORRUPT
    max_id = pr.MAX_ID

    def _status_failed(self, i: int, error: int) -> bool:
        """An instruction error (bits 0–6) fails the transaction; bit 7 (alert) only says Hardware Error Status ≠ 0."""
        if error & 0x7F:
            st = self.stats[i]
            st.status_errors += 1
            st.last_error = self.ph.getRxPacketError(error)
            return True
        return False

    def _broadcast_scan(self, ids: Iterable[int]) -> dict[int, int]:
        """One broadcast PING (the SDK then listens for ~0.8 s, the time 252 replies take)."""
        data, _ = self.ph.broadcastPing(self.port)
        self._count_transaction()
        wanted = set(ids)
        return {i: v[0] for i, v in sorted(data.items()) if i in wanted}

    def read_item(self, dxl_id: int, name: str) -> int:
        """Value of control-table item ``name``, signed where the item is, in the table's encoding (2.0: two's
        complement; 1.0: sign-magnitude, bit 10 = CW); raises BusError on failure."""
        it = self.table.item(name)
        fn = {1: self.ph.read1ByteTxRx, 2: self.ph.read2ByteTxRx, 4: self.ph.read4ByteTxRx}[it.size]
        value, result, error = self._retry(dxl_id, fn, it.address)
        if result != COMM_SUCCESS or error & 0x7F:
            raise BusError(f"read {name!r} from id {dxl_id}: {self.stats[dxl_id].last_error}")
        return int(self.table.decode(it, value))

    def write_item(self, dxl_id: int, name: str, value: int) -> None:
        """Write item ``name`` in the table's encoding (:meth:`read_item`); a value that does not fit raises
        ValueError, nothing written."""
        it = self.table.item(name)
        if not it.writable:
            raise ValueError(f"{name!r} is read-only")
        value = int(value)
        try:
            raw = self.table.encode(it, value)
        except ValueError as e:
            raise ValueError(f"{name!r} value {value}: {e}") from None
        fn = {1: self.ph.write1ByteTxRx, 2: self.ph.write2ByteTxRx, 4: self.ph.write4ByteTxRx}[it.size]
        result, error = self._retry(dxl_id, fn, it.address, raw)
        if result != COMM_SUCCESS or error & 0x7F:
            raise BusError(f"write {name!r}={value} to id {dxl_id}: {self.stats[dxl_id].last_error}")

    def reboot(self, dxl_id: int) -> None:
        """REBOOT instruction (clears a latched hardware error; torque comes back off)."""
        self.torque_on.discard(dxl_id)
        result, error = self._retry(dxl_id, self.ph.reboot)
        if result != COMM_SUCCESS:
            raise BusError(f"reboot id {dxl_id}: {self.stats[dxl_id].last_error}")

    def hardware_error(self, dxl_id: int) -> int:
        """Hardware Error Status (address 70) of one servo; decode with ``control_table.hardware_error_text``."""
        return self.read_item(dxl_id, "Hardware Error Status")

    def _setup_one(self, i: int) -> None:
        """Torque off, Return Delay Time, Operating Mode checked (3, 4 or 5: it goes to Goal Position), indirect
        addresses for :meth:`read_health` (and the P-gain write), and a check of its Min/Max Position Limit against
        the joint limits."""
        mapping = list(HEALTH_INDIRECT) + (list(GAIN_GOAL_INDIRECT) if self.config.p_gain else [])
        self.write_item(i, "Torque Enable", 0)
        self._return_delay(i)
        self._check_operating_mode(i)
        for k, addr in enumerate(mapping, start=1):
            self.write_item(i, f"Indirect Address {k}", addr)
        self._check_position_limits(i)
