"""dynamixel-sdk adapters used by :mod:`.bus` (subclasses, same call signatures as the SDK's classes).

* :class:`PortHandler` — configurable latency timer / fixed error timeout (the SDK hard-codes
  ``LATENCY_TIMER = 16`` ms: packet timeout = wire time + 2·16 + 2 ms), a receive buffer and a ``select`` wait
  instead of the SDK's busy polling of a non-blocking port.
* :class:`PacketHandler` — Protocol 2.0 with a table-driven / compiled CRC and byte stuffing in place (the SDK's
  ``txPacket`` drops ``addStuffing``'s return value, so dynamixel-sdk 4.1 sends unstuffed packets whenever the
  parameters contain ``FF FF FD``).
* :class:`TolerantSyncRead` — a ``GroupSyncRead`` that keeps every reply that arrived, by ID (the SDK's stops at
  the first missing reply and, reading by ID, swallows the ones after it).
"""
from __future__ import annotations

import os
import select
import time

import dynamixel_sdk as sdk
import numpy as np
from dynamixel_sdk.protocol2_packet_handler import Protocol2PacketHandler

from . import protocol as pr

COMM_SUCCESS = sdk.COMM_SUCCESS


class PortHandler(sdk.PortHandler):
    """SDK PortHandler with a configurable latency timer / fixed error timeout, a ``select`` wait in ``readPort``
    (the SDK polls a non-blocking port in a busy loop) and a receive buffer (one ``read`` system call takes
    every byte that has arrived; the SDK asks for a few bytes at a time)."""

    def __init__(self, port_name: str, latency_timer_ms: float = sdk.port_handler.LATENCY_TIMER,
                 timeout_ms: float | None = None):
        super().__init__(port_name)
        self.latency_timer_ms = float(latency_timer_ms)
        self.timeout_ms = timeout_ms
        self._fd = -1
        self._rx = bytearray()

    def setupPort(self, cflag_baud):
        ok = super().setupPort(cflag_baud)
        self._fd = self.ser.fileno()
        return ok

    def clearPort(self):
        self._rx.clear()
        super().clearPort()

    def getBytesAvailable(self):
        return len(self._rx) + self.ser.in_waiting

    def setPacketTimeout(self, packet_length):
        self.packet_start_time = self.getCurrentTime()
        if self.timeout_ms is not None:
            self.packet_timeout = self.timeout_ms
        else:
            self.packet_timeout = self.tx_time_per_byte * packet_length + 2.0 * self.latency_timer_ms + 2.0

    def getCurrentTime(self):
        return time.monotonic() * 1000.0

    def remaining_s(self) -> float:
        return (self.packet_timeout - (time.monotonic() * 1000.0 - self.packet_start_time)) / 1000.0

    def _read_fd(self, wait: bool) -> bytes:
        try:  # a tty in raw mode with VMIN = 0 returns b"" (not EAGAIN) when nothing has arrived
            data = os.read(self._fd, 65536)
            if data:
                return data
        except BlockingIOError:
            pass
        remaining = self.remaining_s()
        if wait and remaining > 0 and select.select([self._fd], [], [], remaining)[0]:
            try:
                return os.read(self._fd, 65536)
            except BlockingIOError:
                pass
        return b""

    def read_available(self, wait: bool = True) -> bytes:
        """Every byte that has arrived (waiting in ``select`` up to the packet timeout if none has)."""
        if self._rx:
            out = bytes(self._rx)
            self._rx.clear()
            return out
        return self._read_fd(wait)

    def readPort(self, length):
        if len(self._rx) < length:
            self._rx += self._read_fd(wait=not self._rx)
        out = bytes(self._rx[:length])
        del self._rx[:length]
        return out

    def writePort(self, packet):
        return os.write(self._fd, bytes(packet))


class PacketHandler(Protocol2PacketHandler):
    """Protocol 2.0 handler with the table-driven CRC of :mod:`.protocol` and byte stuffing on bytes.

    ``addStuffing`` works in place: the SDK's ``txPacket`` ignores its return value, so with the stock method a
    packet whose parameters contain ``FF FF FD`` (e.g. goal −3 → ``FD FF FF FF`` after P gain ``FF FF``… ) goes
    out unstuffed (dynamixel-sdk 4.1)."""

    def updateCRC(self, crc_accum, data_blk_ptr, data_blk_size):
        return pr.crc16(bytes(data_blk_ptr[:data_blk_size]), crc_accum)

    def addStuffing(self, packet):
        n_in = packet[5] | packet[6] << 8
        body = bytes(packet[7: 7 + n_in - 2])
        if b"\xff\xff\xfd" not in body:
            return packet
        stuffed = pr.stuff(body)
        n_out = n_in + len(stuffed) - len(body)
        packet[7:] = list(stuffed) + [0, 0]
        packet[5], packet[6] = n_out & 0xFF, n_out >> 8
        return packet

    def removeStuffing(self, packet):
        n_in = packet[5] | packet[6] << 8
        body = bytes(packet[7: 7 + n_in - 2])
        if b"\xff\xff\xfd\xfd" not in body:
            return packet
        plain = pr.unstuff(body)
        n_out = n_in - (len(body) - len(plain))
        packet[7: 7 + n_in] = list(plain) + list(packet[7 + n_in - 2: 7 + n_in])
        packet[5], packet[6] = n_out & 0xFF, n_out >> 8
        return packet


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


class TolerantSyncRead(sdk.GroupSyncRead):
    """``GroupSyncRead`` whose ``rxPacket`` keeps the replies of the servos that answered.

    After ``txRxPacket()``: ``received[id]`` = data bytes, ``errors[id]`` = status error byte,
    ``failed[id]`` = "timeouts" | "corrupt" | "wrong_length" for the servos without valid data.
    ``fast=True`` parses the reply stream with :class:`.protocol.StreamDecoder` (one pass over all bytes);
    ``fast=False`` calls the SDK's ``PacketHandler.rxPacket`` once per reply.
    """

    def __init__(self, port, ph, start_address, data_length, fast: bool = True):
        super().__init__(port, ph, start_address, data_length)
        self.fast = fast and isinstance(port, PortHandler)
        self.decoder = pr.StreamDecoder()

    def rxPacket(self):
        self.last_result = False
        self.received: dict[int, bytes] = {}
        self.errors: dict[int, int] = {}
        self.failed: dict[int, str] = {}
        self.block = None
        expected = set(self.data_dict)
        n = self.data_length
        crc0, len0 = self.decoder.stats.crc_errors, self.decoder.stats.length_errors
        corrupt_seen = 0
        if self.fast:
            dec = self.decoder
            dec.drop_partial()
            received, errors, failed = self.received, self.errors, self.failed
            first = True
            while expected:
                data = self.port.read_available()
                if not data:
                    break
                if pr.HAVE_NUMBA:  # frames located by the compiled scanner; slice the data, no Packet objects
                    whole, starts, totals = dec.feed_spans(data)
                    if first and self._whole_block(whole, starts, totals):
                        expected.clear()
                        break
                    first = False
                    stuffed = b"\xff\xff\xfd\xfd" in whole
                    for s0, tot in zip(starts, totals):
                        i = whole[s0 + 4]
                        if whole[s0 + 7] != pr.INST_STATUS or i not in expected:
                            continue
                        expected.discard(i)
                        body = whole[s0 + 9: s0 + tot - 2]
                        if stuffed:
                            body = pr.unstuff(body)
                        if len(body) != n:
                            failed[i] = "wrong_length"
                            continue
                        errors[i] = whole[s0 + 8]
                        received[i] = body
                    continue
                for p in dec.feed(data):
                    i = p.id
                    if not p.is_status or i not in expected:
                        continue
                    expected.discard(i)
                    if len(p.params) != n:
                        failed[i] = "wrong_length"
                        continue
                    errors[i] = p.error
                    received[i] = p.params
            corrupt_seen = dec.stats.crc_errors - crc0 + dec.stats.length_errors - len0
        else:
            while expected:
                rx, result = self.ph.rxPacket(self.port, False)
                if result == sdk.COMM_RX_CORRUPT:
                    corrupt_seen += 1
                    if self.port.packet_timeout == 0:  # the timeout fired inside rxPacket
                        break
                    continue
                if result != COMM_SUCCESS:
                    break
                i = rx[4]
                if i not in expected:
                    continue
                expected.discard(i)
                # LEN after the SDK's removeStuffing (the list itself may keep its stuffed length)
                if (rx[5] | rx[6] << 8) != n + 4:
                    self.failed[i] = "wrong_length"
                    continue
                self.errors[i] = rx[8]
                self.received[i] = bytes(rx[9: 9 + n])
        for i in expected:
            self.failed[i] = "corrupt" if corrupt_seen else "timeouts"
        self.port.is_using = False
        self.last_result = not self.failed
        return COMM_SUCCESS if not self.failed else (sdk.COMM_RX_CORRUPT if corrupt_seen else sdk.COMM_RX_TIMEOUT)

    def _whole_block(self, whole: bytes, starts: list[int], totals: list[int]) -> bool:
        """Common case in one go: every reply present, in request order, same length, nothing stuffed.
        Sets ``block`` (k, data_length) uint8 and ``block_err`` (k,) and fills ``received``/``errors``."""
        ids = self.param
        k, n = len(ids), self.data_length
        if len(starts) != k or b"\xff\xff\xfd\xfd" in whole:
            return False
        arr = np.frombuffer(whole, dtype=np.uint8)
        st = np.asarray(starts)
        if (not np.all(np.asarray(totals) == 11 + n) or not np.all(arr[st + 7] == pr.INST_STATUS)
                or arr[st + 4].tolist() != ids):
            return False
        self.block = arr[st[:, None] + 9 + np.arange(n)]
        self.block_err = arr[st + 8]
        self.block_ids = tuple(ids)
        self.errors = dict(zip(ids, self.block_err.tolist()))
        self.received = _LazyRows(ids, self.block)
        return True

    def getData(self, dxl_id, address, data_length):
        if not self.isAvailable(dxl_id, address, data_length):
            return 0
        k = address - self.start_address
        return int.from_bytes(self.received[dxl_id][k: k + data_length], "little")

    def isAvailable(self, dxl_id, address, data_length):
        if dxl_id not in getattr(self, "received", {}):
            return False
        return self.start_address <= address and address + data_length <= self.start_address + self.data_length
