"""dynamixel-sdk Protocol 1.0 adapters used by :mod:`.bus_p1` (subclasses with the SDK's own call signatures).

The transaction rules of the 2.0 bus (:mod:`.transactions`: reply slots, windows, late replies in a ledger) apply
unchanged; only the framing differs (:mod:`servo_ff.bus.protocol1`: ``FF FF ID LEN ERR params CHECKSUM``, 6 bytes
of overhead, no instruction byte in a status packet, no stuffing).

* :class:`Decoder1` — byte stream → status frames and garbled frames (with their ID byte), never raises.
* :class:`PortHandler1` — :class:`.sdk_adapters.PortHandler` with that decoder and 1.0 reply timing.
* :class:`PacketHandler1` — ``Protocol1PacketHandler`` whose single-servo transactions (PING, READ, WRITE, …) go
  through :meth:`PortHandler.receive`. It returns the status error byte with its alarm bits (overload,
  overheating, input voltage: the data is valid) moved into ``alarms[id]``, so callers see instruction errors only.
* :class:`BulkRead1` — one BULK_READ of the same block from every servo (MX), each reply kept by ID; a servo that
  breaks the firmware's answer chain moves to the end of the list, the ones it silenced are "unreached".
* :class:`PerServoRead1` — the same interface with one READ per servo (AX-12: no BULK_READ), whose missing replies
  stay owed in the ledger as a BULK_READ's do.

Both readers hand each reply to ``convert`` (e.g. :func:`.p1_units.state_record`) and expose what the 2.0 bus's
cycle reads from its ``TolerantSyncRead``: ``received``, ``errors``, ``stamps``, ``failed``, ``serial``, ``block``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import dynamixel_sdk as sdk
from dynamixel_sdk.protocol1_packet_handler import Protocol1PacketHandler

from .. import protocol1 as p1
from .. import transactions as tx
from ..select_port import single_request
from .p1_units import ALARM_ERRORS
from .sdk_adapters import PortHandler

COMM_SUCCESS = sdk.COMM_SUCCESS
STATUS_OVERHEAD1 = 6  # FF FF ID LEN ERR … CHECKSUM
_STATUS = 0x55  # marks a status frame for tx.route_packet (1.0 status packets carry no instruction byte)

#: data lengths of the resync marker (READ from address 0): none of the bus's other reads (state 6, health 20, and
#: 7 / 21 after a miss, items 1–2, ping and write acknowledgements 0) has them; up to the end of the smallest 1.0
#: table (AX-12A, 50 bytes)
MARKER_LENGTHS1 = (3, 4, 5, *range(8, 20), *range(22, 51))


@dataclass(frozen=True)
class Timing1(tx.Timing):
    """:class:`.transactions.Timing` with the 6-byte status overhead of Protocol 1.0."""

    def slot_s(self, data_len: int) -> float:
        return self.return_delay_s + tx.wire_s(STATUS_OVERHEAD1 + data_len, self.baud)


@dataclass
class Decoder1(p1.FrameScanner1):
    """Status frames out of a byte stream: ``feed(bytes) -> [(id, err, params) | (id_byte, None, None)]`` where
    the second form is a garbled frame (bad checksum or impossible LEN) with an intact header. ``max_length``
    bounds LEN to the longest reply a transaction can get, so a corrupted LEN never holds later replies back."""

    skip_garbled = 2  # past the whole header; not counted as discarded
    count_garbled = False

    def _frame(self, sid: int, err: int, params: bytes) -> tuple:
        return sid, err, params

    def _garbled(self, kind: int, sid: int) -> tuple:
        return sid, None, None

    def feed(self, data: bytes) -> list[tuple]:
        return self._walk(data)

    scan = feed


class PortHandler1(PortHandler):
    """:class:`.sdk_adapters.PortHandler` for Protocol 1.0 frames (same timing rules, ledger and ``select`` waits)."""

    marker_lengths = MARKER_LENGTHS1
    ack_lengths = frozenset({0})  # PING, WRITE…

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.decoder1 = Decoder1()

    def _marker(self, servo_id: int, n: int) -> bytes:
        return p1.encode(servo_id, p1.INST_READ, bytes([0, n]))

    def _replies(self, data: bytes):
        return ((i, params) for i, _, params in self.decoder1.feed(data))

    @property
    def timing(self) -> tx.Timing:
        if self._timing is None:
            self._timing = Timing1(float(self.baudrate), self.return_delay_s, self.margin_ms / 1000.0)
        return self._timing

    def _route(self, frames, window: tx.Window | None, t: float) -> None:
        led, cnt, stats = self.ledger, self.counters, self.stats
        for i, err, params in frames:
            if err is None:
                tx.route_bad(led, window, cnt, i, t)
            else:
                tx.route_packet(led, window, cnt, stats, i, _STATUS, err, params, t)

    @property
    def rx_stream(self) -> Decoder1:
        return self.decoder1

    def receive(self, window: tx.Window, compiled: bool = True, first=None) -> tx.Window:
        if self._skip_unsynced(window):
            return window
        dec = self.decoder1
        dec.max_length = max(self.ledger.data_lens() | {window.data_len}) + 2
        try:
            while not window.done:
                data = self.read_available(wait=True, deadline=window.deadline)
                if not data:
                    break
                self._route(dec.feed(data), window, time.monotonic())
        finally:
            dec.max_length = p1.MAX_LENGTH
        return self._close_window(window)


def _outcome(w: tx.Window, i: int, data_len: int) -> str:
    """A window's outcome for ``i``, with a reply whose data has the wrong length (alarm bits only) as such."""
    out = w.outcome[i]
    if out == "ok" and len(w.data[i]) != data_len and not w.err[i] & ~ALARM_ERRORS & 0x7F:
        return "wrong_length"
    return out


class PacketHandler1(Protocol1PacketHandler):
    """Protocol 1.0 handler whose single-servo transactions accept only the addressed servo's reply of the right
    length within its slot (a late reply of an earlier transaction is discarded, never returned)."""

    def __init__(self):
        super().__init__()
        self.alarms: dict[int, int] = {}  # id → alarm bits of its last status packet
        self.last_stamp = 0.0  # arrival time of the last single-servo reply [s, monotonic]

    def txRxPacket(self, port, txpacket):
        if not isinstance(port, PortHandler1):
            return super().txRxPacket(port, txpacket)
        dxl_id, inst = txpacket[2], txpacket[4]
        n = txpacket[6] if inst == p1.INST_READ else 0
        read = inst == p1.INST_READ and dxl_id != p1.BROADCAST_ID
        req = single_request(port, txpacket, dxl_id, read, n, 5, 1)
        result = self.txPacket(port, txpacket)
        if result != COMM_SUCCESS:
            return None, result, 0
        if inst == p1.INST_BULK_READ:
            port.is_using = False
            return None, sdk.COMM_NOT_AVAILABLE, 0
        if dxl_id == p1.BROADCAST_ID:
            port.is_using = False
            return None, result, 0
        w = tx.Window((dxl_id,), req.m, req.timing, time.monotonic(), txpacket[3] + 4)
        port.receive_one(w, read=read)
        outcome = _outcome(w, dxl_id, req.m)
        if outcome == "ok":
            err, params = w.err[dxl_id], req.item(w.data[dxl_id])
            self.alarms[dxl_id] = err & ALARM_ERRORS
            self.last_stamp = w.stamp[dxl_id]
            err &= ~ALARM_ERRORS
            return [0xFF, 0xFF, dxl_id, len(params) + 2, err, *params, 0], COMM_SUCCESS, err
        return None, (sdk.COMM_RX_TIMEOUT if outcome == "timeouts" else sdk.COMM_RX_CORRUPT), 0

    def reboot(self, port, dxl_id):
        return sdk.COMM_NOT_AVAILABLE, 0  # MX/AX on 1.0 have no REBOOT instruction (the stock method says so too)


class _Reader1:
    """What a cycle reads: ``received``/``errors``/``stamps``/``failed`` by id after :meth:`txRxPacket`."""

    def __init__(self, port: PortHandler1, ph: PacketHandler1, address: int, length: int, convert: Callable | None):
        self.port, self.ph = port, ph
        self.start_address, self.data_length = address, length
        self.convert = convert
        self.ids: list[int] = []
        self.serial = 0  # instructions sent
        self.transactions = 0
        self.block = None  # the 2.0 bus's single-chunk fast path does not apply
        self.received: dict[int, bytes] = {}
        self.errors: dict[int, int] = {}
        self.stamps: dict[int, float] = {}
        self.failed: dict[int, str] = {}

    def addParam(self, dxl_id: int) -> bool:
        if dxl_id in self.ids:
            return False
        self.ids.append(dxl_id)
        return True

    def makeParam(self) -> None:
        pass

    def _keep(self, i: int, data: bytes, err: int, t: float) -> None:
        self.ph.alarms[i] = err & ALARM_ERRORS
        self.errors[i] = err & ~ALARM_ERRORS
        self.received[i] = self.convert(data) if self.convert is not None and not self.errors[i] else data
        self.stamps[i] = t

    def _reset(self) -> None:
        self.received, self.errors, self.stamps, self.failed = {}, {}, {}, {}


class BulkRead1(_Reader1):
    """One BULK_READ (``[length, id, address]`` per servo, the stock ``Protocol1PacketHandler.bulkReadTx``) whose
    replies go through :meth:`PortHandler1.receive`, kept by ID. (dynamixel-sdk 4.1's own ``GroupBulkRead.txPacket``
    passes a fourth argument that the Protocol 1.0 ``bulkReadTx`` does not take.)"""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self._n = self.data_length  # bytes each servo is asked: the other length after a BULK_READ with a miss

    def txRxPacket(self) -> int:
        """One BULK_READ. After one with a reply missing (owed in the ledger), the next asks the other length
        (``data_length`` + 1, then back): its replies cannot be taken for the missing ones, whose servos may now
        stand elsewhere in the list (:meth:`_chain_broken`), and end that transaction as they arrive."""
        self._reset()
        ids, n = tuple(self.ids), self._n
        param = [b for i in ids for b in (n, i, self.start_address)]
        result = self.ph.bulkReadTx(self.port, param, len(param))
        self.transactions += 1
        if result != COMM_SUCCESS:
            self.failed = dict.fromkeys(ids, "timeouts")
            self.port.is_using = False
            self.port.counters.tx_failures += 1
            return result
        self.serial += 1
        w = tx.Window(ids, n, self.port.timing, time.monotonic(), 7 + len(param))
        try:
            self.port.receive(w)
        finally:
            self.port.is_using = False
        for i in ids:
            out = _outcome(w, i, n)
            if out == "ok":
                self._keep(i, w.data[i][: self.data_length], w.err[i], w.stamp[i])
            else:
                self.failed[i] = out
        self._chain_broken(ids)
        if self.failed and w.shadowed:  # replies it would take went to an older BULK_READ of its length: one of
            self.port.unsynced = True  # each length owed, each fresh reply taken for the older one: resync (review)
        self._n = 2 * self.data_length + 1 - n if self.failed else self.data_length  # L <-> L + 1 after a miss
        return COMM_SUCCESS if not self.failed else sdk.COMM_RX_TIMEOUT

    def _chain_broken(self, ids: tuple[int, ...]) -> None:
        """A run of timeouts to the end of the list ``ids`` is the firmware's chain broken at its first servo (each
        answers once the one listed before it has: :func:`.virtual_p1._bulk_read`); the ones after it were never
        reached ("unreached": not their miss). That first one moves to the end of the list: from the next
        BULK_READ on, the servos after it are read (and a silent first servo is not taken for a bus outage)."""
        k = len(ids)
        while k and self.failed.get(ids[k - 1]) == "timeouts":
            k -= 1
        if k == len(ids):
            return
        for i in ids[k + 1 :]:
            self.failed[i] = "unreached"
        self.ids.remove(ids[k])
        self.ids.append(ids[k])


class PerServoRead1(_Reader1):
    """One READ per servo (the AX-12 has no BULK_READ), each in its own transaction and window. A READ left
    without its reply stays in the port's ledger after its settle margin, as a BULK_READ does: its late reply is
    discarded, never taken by a later READ of the servo; a later transaction's reply ends it. The next READ of that
    servo asks the other length (``data_length`` + 1, then back), so its own reply cannot be taken for the missing
    one's while that is owed; after a reply, ``data_length`` again (no byte more on a sound bus)."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self._length: dict[int, int] = {}  # id → length of its next READ (the other one after a miss)

    def txRxPacket(self) -> int:
        """One READ per servo; when the port is left unsynced (a resync marker unanswered: an outage) the rest of
        the cycle is not sent (no reply could be taken, and each READ would wait for a marker of its own)."""
        self._reset()
        for k, i in enumerate(self.ids):
            if k and self.port.unsynced:
                self.failed[i] = "timeouts"
                continue
            n = self._length.get(i, self.data_length)
            self.serial += 1
            self.transactions += 1
            w = self._read(i, n)
            out = "timeouts" if w is None else _outcome(w, i, n)
            if out == "ok":
                self._keep(i, w.data[i][: self.data_length], w.err[i], w.stamp[i])
                self._length.pop(i, None)
            else:
                self.failed[i] = out
                self._length[i] = 2 * self.data_length + 1 - n  # L ↔ L + 1
                if w is not None and w.shadowed:  # its reply went to an older READ of its length (one of each
                    self.port.unsynced = True  # owed): so would every later one: resync (review: a lone AX read 0 of
                    # 100 valid after two misses in a row; 3 AX silent 0.1 s: 0 of 903 after it)
        return COMM_SUCCESS if not self.failed else sdk.COMM_RX_TIMEOUT

    def _read(self, i: int, n: int) -> tx.Window | None:
        """One READ of ``n`` bytes from servo ``i``: its window (settled when it failed; its missing reply stays
        owed in the ledger), or None when the instruction could not be written."""
        pkt = [0xFF, 0xFF, i, 4, p1.INST_READ, self.start_address, n, 0]
        if self.ph.txPacket(self.port, pkt) != COMM_SUCCESS:
            self.port.is_using = False
            self.port.counters.tx_failures += 1
            return None
        w = tx.Window((i,), n, self.port.timing, time.monotonic(), len(pkt))
        try:
            self.port.receive(w)
            if w.outcome[i] != "ok":
                self.port.settle(w, forget=False)
        finally:
            self.port.is_using = False
        return w
