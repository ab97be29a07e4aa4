"""dynamixel-sdk adapters used by :mod:`.bus` (subclasses, same call signatures as the SDK's classes).

* :class:`PortHandler` — reply timeouts from the expected reply time at the baud rate plus a margin (the SDK
  hard-codes ``LATENCY_TIMER = 16`` ms: packet timeout = wire time + 2·16 + 2 ms), a receive buffer, a ``select``
  wait instead of the SDK's busy polling, and the ledger of earlier transactions (:mod:`.transactions`).
* :class:`PacketHandler` — Protocol 2.0 with a table-driven / compiled CRC and byte stuffing in place (the SDK's
  ``txPacket`` drops ``addStuffing``'s return value, so dynamixel-sdk 4.1 sends unstuffed packets whenever the
  parameters contain ``FF FF FD``); single-servo transactions only accept the addressed servo's reply of the
  right length.
* :class:`TolerantSyncRead` — a ``GroupSyncRead`` that keeps every reply that arrived, by ID (the SDK's stops at
  the first missing reply and, reading by ID, swallows the ones after it), each in its own transaction.
"""

from __future__ import annotations

import time

import dynamixel_sdk as sdk
import numpy as np
from dynamixel_sdk.protocol2_packet_handler import Protocol2PacketHandler

from .. import transactions as tx
from ..select_port import SelectPort, single_request
from ..sync_read_group import WindowedSyncRead
from . import protocol as pr
from .stream import StreamDecoder, packet_at

COMM_SUCCESS = sdk.COMM_SUCCESS
#: data lengths of the resync marker (READ from address 0), in turn: none of the bus's other reads (state 10,
#: health 6, items 1–4, ping 3, write acknowledgements 0) has them; within every 2.0 table (the smallest ends at 228)
MARKER_LENGTHS = tuple(range(11, 139))


class PortHandler(SelectPort, sdk.PortHandler):
    """SDK PortHandler that knows which transaction a reply belongs to.

    * Timing: a reply waits for its slot (Return Delay Time + wire time at the baud rate) plus a margin =
      ``timeout_ms`` if given, else ``latency_timer_ms`` + 2 ms (the USB adapter holds bytes up to its latency
      timer); :meth:`setPacketTimeout` (the SDK's own paths) uses the same margin.
    * Receiving: ``select`` waits instead of the SDK's busy polling; one ``read`` takes every byte that has arrived.
    * ``clearPort`` (called by the SDK before every instruction) drains what has arrived and routes it through the
      :class:`.transactions.Ledger`: bytes that arrive before an instruction is sent are never its replies.
    * :meth:`receive` collects one transaction's replies into a :class:`.transactions.Window`.
    * Resync after a stall (:class:`~servo_ff.bus.select_port.SelectPort`): the marker is a READ of one of
      :data:`MARKER_LENGTHS` bytes.
    """

    marker_lengths = MARKER_LENGTHS
    ack_lengths = frozenset({0, 3})  # WRITE…, PING (model number, firmware)

    def __init__(
        self,
        port_name: str,
        latency_timer_ms: float = sdk.port_handler.LATENCY_TIMER,
        timeout_ms: float | None = None,
        return_delay_s: float = 500e-6,
    ):
        super().__init__(port_name)
        self._init_receive(latency_timer_ms, timeout_ms, return_delay_s)
        self.decoder = StreamDecoder()

    @property
    def timing(self) -> tx.Timing:
        if self._timing is None:
            self._timing = tx.Timing(float(self.baudrate), self.return_delay_s, self.margin_ms / 1000.0)
        return self._timing

    @property
    def rx_stream(self) -> StreamDecoder:
        return self.decoder

    def _marker(self, servo_id: int, n: int) -> bytes:
        return pr.encode_instruction(servo_id, pr.INST_READ, bytes([0, 0, n, 0]))

    def _replies(self, data: bytes):
        sc = self.decoder.scan(data)
        for s0, tot in _frames(sc):
            if tot < 0:  # a bad frame with an intact header: its ID byte
                yield sc.whole[s0 + 4], None
                continue
            p = packet_at(sc.whole, s0, tot)
            yield (None, None) if p is None or p.instruction != pr.INST_STATUS else (p.id, p.params)

    # ------------------------------------------------------------------ transactions
    def _route(self, sc, window: tx.Window | None, t: float) -> None:
        """Frames of one scan, in stream order, to the ledger / the window."""
        whole, led, cnt, stats = sc.whole, self.ledger, self.counters, self.stats
        frames = _frames(sc)
        for s0, tot in frames:
            if tot < 0:
                tx.route_bad(led, window, cnt, whole[s0 + 4], t)
                continue
            p = packet_at(whole, s0, tot)
            if p is None:
                cnt.stray += 1
            else:
                tx.route_packet(led, window, cnt, stats, p.id, p.instruction, p.error or 0, p.params, t)

    def receive(self, window: tx.Window, compiled: bool = True, first=None) -> tx.Window:
        """Collect ``window``'s replies until it is done or its (per-slot) deadline passes, then close it.
        ``first(scan, t)`` may take the first chunk whole (returns True) when no earlier reply is pending."""
        if self._skip_unsynced(window):
            return window
        dec = self.decoder
        n = window.data_len
        dec.max_length = tx.max_reply_len(max(self.ledger.data_lens() | {n}) if self.ledger else n)
        try:
            while not window.done:
                data = self.read_available(wait=True, deadline=window.deadline)
                if not data:
                    break
                t = time.monotonic()
                sc = dec.scan(data, compiled)
                if first is not None and not self.ledger and not dec.pending and first(sc, t):
                    return window
                first = None
                self._route(sc, window, t)
        finally:
            dec.max_length = pr.MAX_LENGTH
        return self._close_window(window)


class PacketHandler(Protocol2PacketHandler):
    """Protocol 2.0 handler with the table-driven CRC of :mod:`.protocol` and byte stuffing on bytes.

    ``addStuffing`` works in place: the SDK's ``txPacket`` ignores its return value, so with the stock method a
    packet whose parameters contain ``FF FF FD`` (e.g. goal −3 → ``FD FF FF FF`` after P gain ``FF FF``… ) goes
    out unstuffed (dynamixel-sdk 4.1)."""

    def updateCRC(self, crc_accum, data_blk_ptr, data_blk_size):
        return pr.crc16(bytes(data_blk_ptr[:data_blk_size]), crc_accum)

    def addStuffing(self, packet):
        n_in = packet[5] | packet[6] << 8
        body = bytes(packet[7 : 7 + n_in - 2])
        if b"\xff\xff\xfd" not in body:
            return packet
        stuffed = pr.stuff(body)
        n_out = n_in + len(stuffed) - len(body)
        packet[7:] = list(stuffed) + [0, 0]
        packet[5], packet[6] = n_out & 0xFF, n_out >> 8
        return packet

    def removeStuffing(self, packet):
        n_in = packet[5] | packet[6] << 8
        body = bytes(packet[7 : 7 + n_in - 2])
        if b"\xff\xff\xfd\xfd" not in body:
            return packet
        plain = pr.unstuff(body)
        n_out = n_in - (len(body) - len(plain))
        packet[7 : 7 + n_in] = list(plain) + list(packet[7 + n_in - 2 : 7 + n_in])
        packet[5], packet[6] = n_out & 0xFF, n_out >> 8
        return packet

    def txRxPacket(self, port, txpacket):
        """One single-servo transaction (PING, READ, WRITE, REBOOT, …) through :meth:`PortHandler.receive`: the
        reply must come from the addressed servo with the length the instruction implies (a late reply of an
        earlier transaction is discarded, never returned). Other ports: the SDK's own method."""
        if not isinstance(port, PortHandler):
            return super().txRxPacket(port, txpacket)
        dxl_id, inst = txpacket[4], txpacket[7]
        n = _reply_params(inst, txpacket)
        read = inst == pr.INST_READ and dxl_id != pr.BROADCAST_ID
        req = single_request(port, txpacket, dxl_id, read, n, 8, 2)
        result = self.txPacket(port, txpacket)
        if result != COMM_SUCCESS:
            return None, result, 0
        if inst in (pr.INST_SYNC_READ, pr.INST_BULK_READ):
            port.is_using = False
            return None, sdk.COMM_NOT_AVAILABLE, 0
        if dxl_id == pr.BROADCAST_ID or inst == pr.INST_ACTION:
            port.is_using = False
            return None, result, 0
        length = (txpacket[5] | txpacket[6] << 8) + 7
        w = tx.Window((dxl_id,), req.m, req.timing, time.monotonic(), length)
        outcome = port.receive_one(w, read=read)
        if outcome == "ok":
            err, params = w.err[dxl_id], req.item(w.data[dxl_id])
            head = [0xFF, 0xFF, 0xFD, 0x00, dxl_id, (len(params) + 4) & 0xFF, (len(params) + 4) >> 8, pr.INST_STATUS]
            return head + [err] + list(params) + [0, 0], COMM_SUCCESS, err
        return None, (sdk.COMM_RX_TIMEOUT if outcome == "timeouts" else sdk.COMM_RX_CORRUPT), 0


def _frames(sc) -> list[tuple[int, int]]:
    """(start, total length) of the packets of one scan, with (start, −kind) for its bad frames, in stream order."""
    frames = [(s0, tot) for s0, tot in zip(sc.starts, sc.totals)]
    if sc.bad_starts:
        frames += [(s0, -k) for s0, k in zip(sc.bad_starts, sc.bad_kinds)]
        frames.sort()
    return frames


def _reply_params(inst: int, txpacket) -> int:
    """Data bytes of the status packet that answers instruction ``inst``."""
    if inst == pr.INST_PING:
        return 3
    if inst == pr.INST_READ:
        return txpacket[10] | txpacket[11] << 8
    return 0


class _LazyRows(dict):
    """{id: data bytes} view of a reply block, materialised only when someone asks for it."""

    def __init__(self, ids, block):
        super().__init__()
        self._ids, self._block = {i: r for r, i in enumerate(ids)}, block

    def __contains__(self, i):
        return i in self._ids

    def __getitem__(self, i):
        return self._block[self._ids[i]].tobytes()

    def get(self, i, default=None):
        return self[i] if i in self._ids else default

    def __len__(self):
        return len(self._ids)

    def __iter__(self):
        return iter(self._ids)

    def keys(self):
        return self._ids.keys()


class TolerantSyncRead(WindowedSyncRead, sdk.GroupSyncRead):
    """``GroupSyncRead`` whose replies go through :meth:`PortHandler.receive`: per-slot deadline, late replies of
    earlier transactions discarded, garbled frames charged to their own servo, the newest valid reply kept.

    After ``txRxPacket()``: ``received[id]`` = data bytes, ``errors[id]`` = status error byte, ``stamps[id]`` =
    arrival time [s, monotonic], ``failed[id]`` = "timeouts" | "corrupt" | "wrong_length" for the servos without
    valid data. ``serial`` counts the instructions sent. ``fast=False`` uses the pure-Python scanner.
    """

    rx_timeout, rx_corrupt = sdk.COMM_RX_TIMEOUT, sdk.COMM_RX_CORRUPT

    def __init__(self, port, ph, start_address, data_length, fast: bool = True):
        super().__init__(port, ph, start_address, data_length)
        self.fast = fast
        self.serial = 0
        self.received: dict[int, bytes] = {}
        self.errors: dict[int, int] = {}
        self.stamps: dict[int, float] = {}
        self.failed: dict[int, str] = {}
        self.block = None
        self._ids_arr: np.ndarray | None = None
        self._pos: tuple | None = None

    def rxPacket(self):
        ids = tuple(self.param)
        w = tx.Window(ids, self.data_length, self.port.timing, self.t_sent, 14 + len(ids), self._positions(ids))
        return self._receive(w, compiled=self.fast)

    def _whole_block(self, sc, t: float) -> bool:
        """Common case in one go: every reply present in the first chunk, in request order, same length, nothing
        stuffed or garbled. Sets ``block`` (k, data_length) uint8, ``block_err`` (k,), ``received``/``errors``."""
        ids = self.param
        k, n = len(ids), self.data_length
        if len(sc.starts) != k or sc.bad_starts or len(sc.whole) != k * (11 + n) or b"\xff\xff\xfd\xfd" in sc.whole:
            return False
        rows = np.frombuffer(sc.whole, dtype=np.uint8).reshape(k, 11 + n)  # back to back: frame j at j·(11 + n)
        if self._ids_arr is None or self._ids_arr.size != k:
            self._ids_arr = np.array(ids, dtype=np.uint8)
        if not (np.array_equal(rows[:, 4], self._ids_arr) and (rows[:, 7] == pr.INST_STATUS).all()):
            return False
        self.block = rows[:, 9 : 9 + n]
        self.block_err = rows[:, 8]
        self.block_ids = tuple(ids)
        self.block_stamp = t
        self.errors = dict(zip(ids, self.block_err.tolist()))
        self.received = _LazyRows(ids, self.block)
        self.stamps = dict.fromkeys(ids, t)
        self.failed = {}
        self.window.last = k - 1
        return True

    def getData(self, dxl_id, address, data_length):
        if not self.isAvailable(dxl_id, address, data_length):
            return 0
        k = address - self.start_address
        return int.from_bytes(self.received[dxl_id][k : k + data_length], "little")

    def isAvailable(self, dxl_id, address, data_length):
        if dxl_id not in getattr(self, "received", {}):
            return False
        return self.start_address <= address and address + data_length <= self.start_address + self.data_length
