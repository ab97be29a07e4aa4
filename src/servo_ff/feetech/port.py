"""``scservo_sdk.PortHandler`` that knows which transaction a reply belongs to (the STS counterpart of
:class:`servo_ff.dynamixel.sdk_adapters.PortHandler`).

* Timing (:class:`StsTiming`): a reply waits for its slot (Return Delay Time + wire time of its 6 + n bytes at the
  baud rate) plus a margin = ``timeout_ms`` if given, else ``latency_timer_ms`` + 2 ms; the stock SDK waits
  ``2·LATENCY_TIMER + 2`` ms (34 ms) whatever the reply.
* Receiving: ``select`` waits instead of the SDK's busy polling; one ``read`` takes every byte that has arrived.
* ``clearPort`` (the SDK calls it before every instruction; the stock one only flushes the output) drains what has
  arrived and routes it through the :class:`~servo_ff.dynamixel.transactions.Ledger`: bytes that arrive before an
  instruction is sent are never its replies (late replies are counted, per servo, and discarded).
* :meth:`StsPortHandler.receive` collects one transaction's replies into a :class:`StsWindow`.
* ``instructions`` counts the instruction packets written (the bus's transaction count).
* Baud rates: the STS ones (its Baud Rate codes, 38400–1 Mbps, 76800 included, which the stock SDK refuses).
"""

from __future__ import annotations

import os
import select
import time

import scservo_sdk as scs

from ..dynamixel import transactions as tx
from .stream import StsScanner

STATUS_OVERHEAD = 6  # FF FF ID LEN ERR … CHECKSUM
STS_BAUDS = (38400, 57600, 76800, 115200, 128000, 250000, 500000, 1000000)


class StsTiming(tx.Timing):
    """:class:`~servo_ff.dynamixel.transactions.Timing` with the 6-byte overhead of a Protocol-1.0 status packet."""

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


class StsPortHandler(scs.PortHandler):
    """Stock ``scservo_sdk.PortHandler`` plus reply timing, a receive buffer, ``select`` waits and the ledger."""

    def __init__(
        self,
        port_name: str,
        latency_timer_ms: float = scs.port_handler.LATENCY_TIMER,
        timeout_ms: float | None = None,
        return_delay_s: float = 0.0,
    ):
        super().__init__(port_name)
        self.latency_timer_ms = float(latency_timer_ms)
        self.timeout_ms = timeout_ms
        self.return_delay_s = float(return_delay_s)
        self._fd = -1
        self._rx = bytearray()
        self._timing: StsTiming | None = None
        self.scanner = StsScanner()
        self.ledger = tx.Ledger()
        self.counters = tx.RxCounters()
        self.stats: dict | None = None  # {id: CommStats} for the late replies per servo (set by the bus)
        self.instructions = 0

    @property
    def margin_ms(self) -> float:
        return float(self.timeout_ms) if self.timeout_ms is not None else self.latency_timer_ms + 2.0

    @property
    def timing(self) -> StsTiming:
        if self._timing is None:
            self._timing = StsTiming(float(self.baudrate), self.return_delay_s, self.margin_ms / 1000.0)
        return self._timing

    def set_return_delay(self, seconds: float) -> None:
        """The servos' Return Delay Time [s] (enters every reply slot)."""
        self.return_delay_s = float(seconds)
        self._timing = None

    def getCFlagBaud(self, baudrate):
        return baudrate if baudrate in STS_BAUDS else -1

    def setupPort(self, cflag_baud):
        ok = super().setupPort(cflag_baud)
        self._fd = self.ser.fileno()
        self._timing = None
        return ok

    def closePort(self):
        super().closePort()
        self._fd = -1

    # ------------------------------------------------------------------ bytes
    def _read_fd(self, wait: bool, deadline: float | None = None) -> bytes:
        try:  # a tty in raw mode with VMIN = 0 returns b"" (not EAGAIN) when nothing has arrived
            data = os.read(self._fd, 65536)
            if data:
                return data
        except BlockingIOError:
            pass
        remaining = self.remaining_s() if deadline is None else deadline - time.monotonic()
        if wait and remaining > 0 and select.select([self._fd], [], [], remaining)[0]:
            try:
                return os.read(self._fd, 65536)
            except BlockingIOError:
                pass
        return b""

    def drain(self) -> bytes:
        """Every byte that has arrived, without waiting."""
        out = bytes(self._rx)
        self._rx.clear()
        while True:
            chunk = self._read_fd(wait=False)
            if not chunk:
                return out
            out += chunk

    def read_available(self, wait: bool = True, deadline: float | None = None) -> bytes:
        """Every byte that has arrived, waiting in ``select`` until ``deadline`` [s, monotonic] if none has."""
        if self._rx:
            out = bytes(self._rx)
            self._rx.clear()
            return out
        return self._read_fd(wait, deadline)

    def clearPort(self):
        """Before an instruction: what has arrived belongs to earlier transactions (late, counted)."""
        data = self.drain() if self._fd >= 0 else b""
        if self.ledger:
            self.ledger.expire(time.monotonic())
        if data:
            self._route(self.scanner.scan(data), None, time.monotonic())
        self.scanner.drop_partial()

    def getBytesAvailable(self):
        return len(self._rx) + self.ser.in_waiting

    def readPort(self, length):
        if len(self._rx) < length:
            self._rx += self._read_fd(wait=not self._rx)
        out = bytes(self._rx[:length])
        del self._rx[:length]
        return out

    def writePort(self, packet):
        self.instructions += 1
        try:
            return os.write(self._fd, bytes(packet))
        except BlockingIOError:  # the output buffer is full (nobody reads the other end): a short write
            return 0

    def setPacketTimeout(self, packet_length):
        self.packet_start_time = self.getCurrentTime()
        self.packet_timeout = self.tx_time_per_byte * packet_length + self.margin_ms

    def getCurrentTime(self):
        return time.monotonic() * 1000.0

    def remaining_s(self) -> float:
        return (self.packet_timeout - (time.monotonic() * 1000.0 - self.packet_start_time)) / 1000.0

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
        window.finish()
        self.counters.unattributed += window.unattributed
        window.pending = self.ledger.add(window, time.monotonic())
        return window

    def settle(self, window: tx.Window) -> None:
        """After a failed single-servo transaction: route what arrives within one more margin as late, then forget
        the transaction (a dropped reply would otherwise make every retry's reply look late)."""
        deadline = time.monotonic() + self.timing.margin_s
        while True:
            data = self.read_available(wait=True, deadline=deadline)
            if not data:
                break
            self._route(self.scanner.scan(data), None, time.monotonic())
        self.ledger.remove(getattr(window, "pending", None))
