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
* Resync after a stall: when the ledger forgets earlier transactions by time (no reply of any later one came for
  ``late_horizon_s``: an outage, or a responder that stalled with the instructions queued), their replies may
  still come, ahead of every later one, and nothing tells them apart. Until a marker (a READ of a length no other
  transaction uses, :data:`MARKER_LENGTHS` in turn) is answered, no reply is taken as its transaction's; the
  marker is sent before the next instruction and waited for up to ``late_horizon_s``; what arrives before its
  reply is late. ``resyncs`` / ``resync_failures`` count them.
* ``instructions`` counts the instruction packets written (the bus's transaction count).
* Baud rates: the STS ones (its Baud Rate codes, 38400–1 Mbps, 76800 included, which the stock SDK refuses).
"""

from __future__ import annotations

import os
import time

import scservo_sdk as scs

from .. import transactions as tx
from ..dynamixel import protocol1 as p1
from ..select_port import SelectPort
from .stream import StsScanner

STATUS_OVERHEAD = 6  # FF FF ID LEN ERR … CHECKSUM
STS_BAUDS = (38400, 57600, 76800, 115200, 128000, 250000, 500000, 1000000)
#: data lengths of the resync marker (READ from address 0), in turn: none of the bus's other reads (state 6, health 4,
#: items 1–2, pings and write acknowledgements 0) has them, and 16 markers in a row tell their replies apart
MARKER_LENGTHS = tuple(range(7, 23))


class StsTiming(tx.Timing):
    """:class:`~servo_ff.bus.transactions.Timing` with the 6-byte overhead of a Protocol-1.0 status packet."""

    def slot_s(self, data_len: int) -> float:
        return self.return_delay_s + tx.wire_s(STATUS_OVERHEAD + data_len, self.baud)


class StsWindow(tx.Window):
    """A transaction's replies; an STS status packet carries its data whatever its error (status) bits, so only
    the length decides whether it is kept."""

    def packet(self, i: int, err: int, params: bytes, t: float) -> None:
        if len(params) == self.data_len:
            self.data[i], self.err[i], self.stamp[i] = params, err, t
            self.outcome[i] = "ok"
        elif self.outcome.get(i) != "ok":
            self.outcome[i] = "wrong_length"
        self._advance(self.pos[i], t)


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
        self.instructions = 0
        self.unsynced = False  # earlier replies may still be queued: none is taken as its transaction's
        self.resyncs = 0
        self.resync_failures = 0

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

    def _route_late(self, data: bytes) -> None:
        self._route(self.scanner.scan(data), None, time.monotonic())

    def writePort(self, packet):
        self.instructions += 1
        try:
            return os.write(self._fd, bytes(packet))
        except BlockingIOError:  # the output buffer is full (nobody reads the other end): a short write
            return 0

    # ------------------------------------------------------------------ resync after a stall
    def clearPort(self):
        """Before an instruction: what has arrived is late; after the ledger forgot transactions by time, resync."""
        expired = self.ledger.expired
        super().clearPort()
        if self.ledger.expired > expired:
            self.unsynced = True
        if self.unsynced and self._fd >= 0:
            self.unsynced = not self._resync()

    def _resync(self) -> bool:
        """Send one marker and wait (up to ``late_horizon_s``) for its reply; everything before it is late. True:
        every earlier instruction has been answered (or its reply lost): the next reply is the next instruction's."""
        stats = self.stats or {}
        ids = sorted(i for i, st in stats.items() if not st.skipping) or sorted(stats) or [1]  # answering ones first
        k = self.resyncs
        self.resyncs += 1
        sid, n = ids[k % len(ids)], MARKER_LENGTHS[k % len(MARKER_LENGTHS)]
        self.ledger.clear()
        if self.writePort(p1.encode(sid, p1.INST_READ, bytes([0, n]))) <= 0:
            self.resync_failures += 1
            return False
        deadline = time.monotonic() + self.ledger.horizon_s
        sc = self.scanner
        while True:
            data = self.read_available(wait=True, deadline=deadline)
            if not data:
                self.resync_failures += 1
                return False
            for f in sc.scan(data):
                if f.kind == 0 and f.id == sid and len(f.params) == n:
                    sc.drop_partial()  # nothing was sent after the marker: what follows is noise
                    return True
                if f.kind == 0:
                    self.counters.late += 1
                    st = self.stats.get(f.id) if self.stats is not None else None
                    if st is not None:
                        st.late += 1
                else:
                    self.counters.late_garbled += 1

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
        if self.unsynced:  # earlier replies may come first, indistinguishable: none is this transaction's
            window.finish()
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
