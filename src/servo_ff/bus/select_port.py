"""The receive side the three SDK port adapters share (Dynamixel 2.0, Dynamixel 1.0, Feetech STS).

:class:`SelectPort` goes before the SDK's ``PortHandler`` in the bases of :class:`.sdk_adapters.PortHandler` and
:class:`servo_ff.bus.feetech.port.StsPortHandler`: reply timing from a margin (``timeout_ms``, else the adapter's
latency timer + 2 ms), a receive buffer filled by ``select`` waits instead of the SDK's busy polling, the ledger
of earlier transactions (:mod:`.transactions`), ``clearPort`` (what arrived before an instruction is late) and
``settle``, ``receive_one`` (a single-servo transaction; a failed READ stays owed, and ``read_span`` /
``request_timing`` give every READ a length its servo owes no reply of and a longer window), ``writePort`` (counts
``instructions``). A port provides
``rx_stream`` (its stream decoder: ``pending``, ``drop_partial``, ``scan(data)``), ``_route(frames, window, t)``
(a scan's frames to the ledger / the window), ``receive`` and, for the resync (:class:`.resync.MarkerResync`),
``_marker(id, n)`` and ``_replies(data)`` with its ``marker_lengths``.

An adapter that echoes what it sends (half duplex without direction control): :meth:`SelectPort.echoes` finds it
(the bus asks at ``connect`` and ``scan``, before anything is written) and refuses it: it sets ``refusal``, after
which :meth:`SelectPort.writePort` raises instead of sending.

Resync after a stall: :mod:`.resync`.
"""

from __future__ import annotations

import os
import select
import time
from dataclasses import replace
from typing import NamedTuple

from . import transactions as tx
from .bus_types import BusError
from .resync import MarkerResync

#: windows in a row that took nothing while their replies went to the one earlier transaction owed, before a resync
#: (a stall that passes makes one or two; a lost instruction makes every one)
BEHIND_RESYNC = 3


class SelectPort(MarkerResync):
    refusal: str | None = None  # set: the port sends nothing more, every instruction raises BusError with it

    def _init_receive(self, latency_timer_ms: float, timeout_ms: float | None, return_delay_s: float) -> None:
        self.latency_timer_ms = float(latency_timer_ms)
        self.timeout_ms = timeout_ms
        self.return_delay_s = float(return_delay_s)
        self._fd = -1
        self._rx = bytearray()
        self._timing = None
        self.ledger = tx.Ledger()
        self._forgotten = 0  # the ledger's forgotten transactions at the previous instruction
        self._behind = 0  # windows in a row that took nothing while their replies went to an earlier one
        self.counters = tx.RxCounters()
        self.stats: dict | None = None  # {id: CommStats} to count late replies per servo (set by the bus)
        self.unsynced = False  # earlier replies may still be queued: none is taken as its transaction's
        self.resyncs = 0
        self._open_markers: set[tuple[int, int]] = set()  # resync markers sent since the last one answered
        self._read_fails: dict[int, int] = {}  # id → single-servo READs failed in a row (:meth:`request_timing`)
        self.resync_failures = 0
        #: data lengths of the bus's own transactions (its sync reads, reserved at set-up, and every window received):
        #: never a marker's, whose reply a late one of them would otherwise pass for (:meth:`_resync`)
        self.reply_lengths: set[int] = set()
        self.instructions = 0  # instruction packets written (the Feetech bus's transaction count)

    @property
    def margin_ms(self) -> float:
        return float(self.timeout_ms) if self.timeout_ms is not None else self.latency_timer_ms + 2.0

    def set_return_delay(self, seconds: float) -> None:
        """The servos' Return Delay Time [s] (enters every reply slot)."""
        self.return_delay_s = float(seconds)
        self._timing = None

    def setupPort(self, cflag_baud):
        ok = super().setupPort(cflag_baud)
        self._fd = self.ser.fileno()
        self._timing = None
        return ok

    # ------------------------------------------------------------------ bytes
    def writePort(self, packet):
        if self.refusal:
            self.is_using = False
            raise BusError(self.refusal)
        self.instructions += 1
        try:
            return os.write(self._fd, bytes(packet))
        except BlockingIOError:  # the output buffer is full (nobody reads the other end): a short write
            return 0

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
        """Every byte that has arrived (waiting in ``select`` until ``deadline`` [s, monotonic], default the
        packet timeout, if none has)."""
        if self._rx:
            out = bytes(self._rx)
            self._rx.clear()
            return out
        return self._read_fd(wait, deadline)

    def getBytesAvailable(self):
        return len(self._rx) + self.ser.in_waiting

    def readPort(self, length):
        if len(self._rx) < length:
            self._rx += self._read_fd(wait=not self._rx)
        out = bytes(self._rx[:length])
        del self._rx[:length]
        return out

    def setPacketTimeout(self, packet_length):
        self.packet_start_time = self.getCurrentTime()
        self.packet_timeout = self.tx_time_per_byte * packet_length + self.margin_ms

    def getCurrentTime(self):
        return time.monotonic() * 1000.0

    def remaining_s(self) -> float:
        return (self.packet_timeout - (time.monotonic() * 1000.0 - self.packet_start_time)) / 1000.0

    def echoes(self, servo_id: int) -> bytes | None:
        """The packet the adapter echoed, or None: one READ of 1 byte (from address 0) of ``servo_id`` (it writes
        nothing), read until its own bytes come back, its reply comes or its slot has passed (then owed in the
        ledger, as any transaction's). Those bytes can only be an echo: a reply to it carries 1 data byte where the
        READ has 2 parameters."""
        self.clearPort()
        pkt = bytes(self._marker(servo_id, 1))
        t = time.monotonic()
        if self.writePort(pkt) <= 0:
            return None
        window, seen = tx.Window((servo_id,), 1, self.timing, t, len(pkt)), b""
        while not window.done:
            data = self.read_available(wait=True, deadline=window.deadline)
            if not data:
                break
            seen += data
            if pkt in seen:
                return pkt
            self._route(self.rx_stream.scan(data), window, time.monotonic())
        self._close_window(window)
        return None

    # ------------------------------------------------------------------ transactions
    def _route_late(self, data: bytes) -> None:
        """Decode ``data`` and route its frames to the ledger, as late replies."""
        self._route(self.rx_stream.scan(data), None, time.monotonic())

    def clearPort(self):
        """Before an instruction: what has arrived belongs to earlier transactions (late, counted); after the
        ledger forgot transactions (by time, or beyond its length) or a window was left one behind, resync."""
        data = self.drain() if self._fd >= 0 else b""
        if self.ledger:
            self.ledger.expire(time.monotonic())
        if data:
            self._route_late(data)
        self.rx_stream.drop_partial()
        if self.ledger.forgotten > self._forgotten:  # since the previous instruction (expired, or beyond maxlen)
            self.unsynced = True
        self._forgotten = self.ledger.forgotten
        if not self.ledger:
            self._behind = 0  # nothing owed: no window can be one behind
        if self.unsynced and self._fd >= 0:
            self.unsynced = not self._resync()

    def _skip_unsynced(self, window: tx.Window) -> bool:
        """While unsynced, earlier replies may come first, indistinguishable: none is ``window``'s (closed now).
        Every receive starts here: ``window``'s length joins :attr:`reply_lengths`."""
        self.reply_lengths.add(window.data_len)
        if self.unsynced:
            window.finish()
        return self.unsynced

    def _close_window(self, window: tx.Window) -> tx.Window:
        """The end of :meth:`receive`: close ``window``; its missing replies stay pending in the ledger. Windows
        that take nothing while replies they would take go to the one earlier transaction still owed, and are then
        the only one owed, ``BEHIND_RESYNC`` in a row, are one behind for good (each one's replies taken as the late
        ones of the one before, as after a lost instruction: an entry renewed every cycle never expires): resync
        before the next instruction."""
        window.finish()
        self.counters.unattributed += window.unattributed
        window.pending = self.ledger.add(window, time.monotonic())
        if window.data or not window.shadowed or len(self.ledger) != 1:
            self._behind = 0  # (more than this window owed: a backlog, which the late horizon ends)
        else:
            self._behind += 1
            if self._behind >= BEHIND_RESYNC:
                self._behind = 0
                self.unsynced = True
        return window

    def receive_one(self, window: tx.Window, read: bool = False) -> str:
        """A single-servo transaction's reply: :meth:`receive` it, :meth:`settle` when it failed; the port is released
        (``is_using``). ``read``: a READ (its reply carries data). A failed READ of a servo that answers on this bus
        is not settled: it stays owed in the ledger (its reply may merely be late: a busy servo, the virtual bus on a
        loaded machine 0.02–0.8 s; forgotten, it answered the servo's next READ of that length: Operating Mode read
        as the Return Delay Time's 0); every READ asks a length its servo owes no reply of (:meth:`read_span`), with
        a longer window (:meth:`request_timing`), and a later reply taken closes it (replies come in order). Returns
        its outcome ("ok", "timeouts", "corrupt", "wrong_length")."""
        i = window.ids[0]
        try:
            self.receive(window)
            ok = window.outcome[i] == "ok"
            if read:
                self._read_fails[i] = 0 if ok else self._read_fails.get(i, 0) + 1
            if not ok and not (read and self._answers(i)):
                self.settle(window)
        finally:
            self.is_using = False
        return window.outcome[i]

    def _answers(self, servo_id: int) -> bool:
        """True if ``servo_id`` has answered on this bus and is not skipped: its missing reply may be late rather
        than never coming (an id never heard from, a skipped servo: not)."""
        st = (self.stats or {}).get(servo_id)
        return st is not None and st.ok > 0 and not st.skipping

    def settle(self, window: tx.Window, forget: bool = True) -> None:
        """After a failed single-servo transaction (an acknowledgement: PING, WRITE…; a READ of a servo never heard
        from): route what arrives within one more margin as late, then forget the transaction (a dropped reply
        would otherwise make every retry's reply look late) — unless earlier transactions still owe replies: its own
        may be queued behind theirs, and forgotten it would pass for a retry's, whose reply closes every transaction
        before it (:meth:`.Ledger.late`); their replies would then be taken as later reads' fresh state. It stays in
        the ledger then, and with ``forget`` False (:class:`.sdk_adapters_p1.PerServoRead1`)."""
        deadline = time.monotonic() + self.timing.margin_s
        while True:
            data = self.read_available(wait=True, deadline=deadline)
            if not data:
                break
            self._route_late(data)
        pending = getattr(window, "pending", None)
        if forget and not self.ledger.owed_before(pending):
            self.ledger.remove(pending)

    def request_timing(self, servo_id: int, read: bool) -> tx.Timing:
        """A single-servo transaction's timing: twice the margin for a servo that has answered on this bus (a failed
        transaction used to wait one more margin in :meth:`settle` and discard what came: now the window takes it;
        with a 4 ms margin the first WRITE of torque after connect failed 1 in 7 on the virtual bus), and a READ
        four times after a READ of ``servo_id`` failed, so that a servo answering later than the margin (busy; the
        emulator on a loaded machine) is waited for longer at the retry, rather than each retry's reply coming after
        its window, discarded as late. A servo never heard from, or skipped: the margin (a PING probe stays short)."""
        t = self.timing
        if not self._answers(servo_id):
            return t  # (its transaction is settled and forgotten when it fails)
        return replace(t, margin_s=t.margin_s * (4 if read and self._read_fails.get(servo_id, 0) else 2))

    #: data lengths of the replies to the port's instructions other than READ (PING, WRITE, …): forgotten when
    #: missing (:meth:`settle`), so a longer READ never asks them (:meth:`read_span`)
    ack_lengths: frozenset[int] = frozenset({0})

    def read_span(self, servo_id: int, address: int, n: int) -> tuple[int, int]:
        """(start address, data length) of a single-servo READ of ``n`` bytes at ``address``: ``(address, n)``
        unless an earlier transaction still owes ``servo_id`` a reply of ``n`` bytes (a failed READ:
        :meth:`receive_one`; a sync read's), for which its own reply would be taken (and a retry's for the one
        before, each failing while one is owed); then the shortest longer length nothing owes it (nor an
        acknowledgement has), the extra bytes read before ``address`` (after it when ``address`` is too low): the
        item is ``data[address - start :][:n]``."""
        owed = self.ledger.owed_lengths(servo_id) if self.ledger else set()
        m = n
        while m in owed or (m != n and m in self.ack_lengths):
            m += 1
        return (address - (m - n) if address >= m - n else address), m


class ReadRequest(NamedTuple):
    """A single-servo transaction as sent: its ``timing``, and for a READ where the item sits in the reply
    (``skip`` bytes in, ``n`` long, of ``m`` asked: :meth:`SelectPort.read_span`)."""

    timing: tx.Timing
    skip: int
    n: int
    m: int

    def item(self, params):
        """The item's bytes of a reply's data ``params`` (``params`` as is when it is not ``m`` long)."""
        return params[self.skip : self.skip + self.n] if len(params) == self.m else params


def single_request(port: SelectPort, txpacket, servo_id: int, read: bool, n: int, at: int, width: int) -> ReadRequest:
    """Before ``txpacket`` (its data reply ``n`` bytes: a READ's length) is sent to ``servo_id``: a READ (``read``;
    its address and length little-endian, ``width`` bytes each from ``txpacket[at]``: Protocol 2.0 at 8 and 2,
    Protocol 1.0 / STS at 5 and 1) is set to :meth:`SelectPort.read_span` in place; each timed by
    :meth:`SelectPort.request_timing`."""
    if not read:
        return ReadRequest(port.request_timing(servo_id, False), 0, n, n)
    address = int.from_bytes(bytes(txpacket[at : at + width]), "little")
    start, m = port.read_span(servo_id, address, n)
    txpacket[at : at + 2 * width] = [*start.to_bytes(width, "little"), *m.to_bytes(width, "little")]
    return ReadRequest(port.request_timing(servo_id, True), address - start, n, m)
