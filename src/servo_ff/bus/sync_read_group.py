"""What the two tolerant sync reads share (Dynamixel 2.0 :class:`.dynamixel.sdk_adapters.TolerantSyncRead`, Feetech
:class:`.feetech.packets.TolerantSyncRead`): the send, the reply window handed to the port's ``receive`` and the
result of the transaction.

:class:`WindowedSyncRead` goes before the SDK's ``GroupSyncRead`` in their bases. A reader provides ``rxPacket``
(its :class:`~.transactions.Window` of the ids asked, handed to :meth:`WindowedSyncRead._receive`),
``_whole_block(chunk, t)`` (the common case taken in one go: sets ``block``) and the SDK's result codes
``rx_timeout`` / ``rx_corrupt``; it initialises ``serial`` = 0 and ``_pos`` = None.
"""

from __future__ import annotations

import time

from . import transactions as tx
from .servo_transactions import COMM_SUCCESS


class WindowedSyncRead:
    rx_timeout: int  # the SDK's COMM_RX_TIMEOUT
    rx_corrupt: int  # the SDK's COMM_RX_CORRUPT

    def txRxPacket(self):
        self.block = None
        result = self.txPacket()
        if result != COMM_SUCCESS:  # not (fully) written: nothing can answer it
            self.received, self.errors, self.stamps = {}, {}, {}
            self.failed = {i: "timeouts" for i in self.data_dict}
            self.port.is_using = False
            self.port.counters.tx_failures += 1
            return result
        self.serial += 1
        self.t_sent = time.monotonic()
        return self.rxPacket()

    def _positions(self, ids: tuple[int, ...]) -> dict[int, int]:
        """id → position in the request (cached while the ids stay the same)."""
        if self._pos is None or self._pos[0] != ids:
            self._pos = (ids, {i: k for k, i in enumerate(ids)})
        return self._pos[1]

    def _receive(self, window: tx.Window, **receive) -> int:
        """Collect ``window`` through the port (``receive``: its extra arguments), release the port; the result."""
        self.window = window
        try:
            self.port.receive(window, first=self._whole_block, **receive)
        finally:
            self.port.is_using = False
        if self.block is not None:
            self.last_result = True
            return COMM_SUCCESS
        self.received, self.errors, self.stamps = window.data, window.err, window.stamp
        self.failed = {i: o for i, o in window.outcome.items() if o != "ok"}
        self.last_result = not self.failed
        if not self.failed:
            return COMM_SUCCESS
        return self.rx_corrupt if "corrupt" in self.failed.values() else self.rx_timeout
