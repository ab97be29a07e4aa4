"""``scservo_sdk.PortHandler`` that knows which transaction a reply belongs to (the STS counterpart of
:class:`servo_ff.bus.dynamixel.sdk_adapters.PortHandler`).

* Timing (:class:`StsTiming`): a reply waits for its slot (Return Delay Time + wire time of its 6 + n bytes at the
  baud rate) plus a margin = ``timeout_ms`` if given, else ``latency_timer_ms`` + 2 ms; the stock SDK waits
  ``2·LATENCY_TIMER + 2`` ms (34 ms) whatever the reply.
* Receiving: ``select`` waits instead of the SDK's busy polling; one ``read`` takes every byte that has arrived.
* ``clearPort`` (the SDK calls it before every instruction; the stock one only flushes the output) drains what has
  arrived and routes it through the :class:`~servo_ff.bus.transactions.Ledger`: bytes that arrive before an
  instruction is sent are never its replies (late replies are counted, per servo, and discarded).
* :meth:`StsPortHandler.receive` collects one transaction's replies into a :class:`StsWindow`.
* Resync after a stall (:class:`~servo_ff.bus.select_port.SelectPort`): the marker is a READ of one of
  :data:`MARKER_LENGTHS` that none of the bus's transactions uses (``marker_choices``).
* ``instructions`` counts the instruction packets written (the bus's transaction count).
* Baud rates: the STS ones (its Baud Rate codes, 38400–1 Mbps, 76800 included, which the stock SDK refuses).
"""

from __future__ import annotations

import time

import scservo_sdk as scs

from .. import protocol1 as p1
from .. import transactions as tx
from ..select_port import SelectPort
from .stream import StsScanner

STATUS_OVERHEAD = 6  # FF FF ID LEN ERR … CHECKSUM
STS_BAUDS = (38400, 57600, 76800, 115200, 128000, 250000, 500000, 1000000)
#: candidate data lengths of the resync marker (READ from address 0), up to the end of the table (87); the port takes
#: them in turn less every length the bus's own transactions use (``SelectPort.reply_lengths``: the state 6 and
#: health 26 sync reads reserved by the bus, items 1–2, anything received), which the marker must never share
MARKER_LENGTHS = tuple(range(7, 88))


class StsTiming(tx.Timing):
    """:class:`~servo_ff.bus.transactions.Timing` with the 6-byte overhead of a Protocol-1.0 status packet."""

    def slot_s(self, data_len: int) -> float:
        return self.return_delay_s + tx.wire_s(STATUS_OVERHEAD + data_len, self.baud)


class StsWindow(tx.Window):
    """A transaction's replies; an STS status packet carries its data whatever its error (status) bits, so only
    the length decides whether it is kept (:meth:`~servo_ff.bus.transactions.Window.packet` otherwise)."""

    def accepts(self, err: int, params: bytes) -> bool:
        return len(params) == self.data_len


class StsPortHandler(SelectPort, scs.PortHandler):
    """Stock ``scservo_sdk.PortHandler`` plus reply timing, a receive buffer, ``select`` waits and the ledger."""

    def __init__(
        self,
        port_name: str,
        latency_timer_ms: float = scs.port_handler.LATENCY_TIMER,
        timeout_ms: float | None = None,
        return_delay_s: float = 0.0,
    ):
        super().__init__(port_name)
        self._init_receive(latency_timer_ms, timeout_ms, return_delay_s)
        self._timing: StsTiming | None = None
        self.scanner = StsScanner()

    @property
    def timing(self) -> StsTiming:
        if self._timing is None:
            self._timing = StsTiming(float(self.baudrate), self.return_delay_s, self.margin_ms / 1000.0)
        return self._timing

    def getCFlagBaud(self, baudrate):
        return baudrate if baudrate in STS_BAUDS else -1

    def closePort(self):
        super().closePort()
        self._fd = -1

    @property
    def rx_stream(self) -> StsScanner:
        return self.scanner

    # ------------------------------------------------------------------ resync after a stall
    marker_lengths = MARKER_LENGTHS

    def _marker(self, servo_id: int, n: int) -> bytes:
        return p1.encode(servo_id, p1.INST_READ, bytes([0, n]))

    def _replies(self, data: bytes):
        return ((f.id, None if f.kind else f.params) for f in self.scanner.scan(data))

    # ------------------------------------------------------------------ transactions
    def _route(self, frames, window: tx.Window | None, t: float) -> None:
        """Frames of one scan, in stream order, to the ledger / the window."""
        led, cnt, stats = self.ledger, self.counters, self.stats
        for f in frames:
            if f.kind:
                tx.route_bad(led, window, cnt, f.id, t)
            else:  # 0x55: a status packet (Protocol 1.0 has no instruction byte in its replies)
                tx.route_packet(led, window, cnt, stats, f.id, 0x55, f.err, f.params, t)

    def receive(self, window: tx.Window, first=None) -> tx.Window:
        """Collect ``window``'s replies until it is done or its (per-slot) deadline passes, then close it.
        ``first(data, t)`` may take the first chunk whole (returns True) when no earlier reply is pending."""
        if self._skip_unsynced(window):
            return window
        sc = self.scanner
        n = window.data_len
        sc.max_length = 2 + (max(self.ledger.data_lens() | {n}) if self.ledger else n)
        try:
            while not window.done:
                data = self.read_available(wait=True, deadline=window.deadline)
                if not data:
                    break
                t = time.monotonic()
                if first is not None and not self.ledger and not sc.pending and first(data, t):
                    return window
                first = None
                self._route(sc.scan(data), window, t)
        finally:
            sc.max_length = 250
        return self._close_window(window)
