"""Dynamixel Protocol 2.0 packets: CRC-16, byte stuffing, encode/decode and a streaming decoder.

Packet layout (ROBOTIS e-manual, "Protocol 2.0"):
``FF FF FD 00 | ID | LEN_L LEN_H | INST | [ERR] params… | CRC_L CRC_H`` with LEN = bytes after LEN up to and
including the CRC. Stuffing: from INST to the end of the parameters every ``FF FF FD`` gets an extra ``FD``;
LEN counts the stuffed bytes and the CRC covers the stuffed packet. CRC-16: polynomial 0x8005, initial value 0,
no reflection, no final XOR (CRC-16/BUYPASS).

:class:`StreamDecoder` turns an arbitrary byte stream into packets; garbage, bad CRCs and impossible lengths
are counted and skipped, never raised, so random bytes cannot crash it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

HEADER = b"\xff\xff\xfd\x00"
BROADCAST_ID = 0xFE
MAX_ID = 0xFC  # 252

INST_PING = 0x01
INST_READ = 0x02
INST_WRITE = 0x03
INST_REG_WRITE = 0x04
INST_ACTION = 0x05
INST_FACTORY_RESET = 0x06
INST_REBOOT = 0x08
INST_CLEAR = 0x10
INST_STATUS = 0x55
INST_SYNC_READ = 0x82
INST_SYNC_WRITE = 0x83
INST_FAST_SYNC_READ = 0x8A
INST_BULK_READ = 0x92
INST_BULK_WRITE = 0x93

INSTRUCTION_NAMES = {
    INST_PING: "PING", INST_READ: "READ", INST_WRITE: "WRITE", INST_REG_WRITE: "REG_WRITE",
    INST_ACTION: "ACTION", INST_FACTORY_RESET: "FACTORY_RESET", INST_REBOOT: "REBOOT", INST_CLEAR: "CLEAR",
    INST_STATUS: "STATUS", INST_SYNC_READ: "SYNC_READ", INST_SYNC_WRITE: "SYNC_WRITE",
    INST_FAST_SYNC_READ: "FAST_SYNC_READ", INST_BULK_READ: "BULK_READ", INST_BULK_WRITE: "BULK_WRITE",
}

# Status error byte: bit 7 = hardware alert, low 7 bits = error number.
ERR_NONE = 0x00
ERR_RESULT_FAIL = 0x01
ERR_INSTRUCTION = 0x02
ERR_CRC = 0x03
ERR_DATA_RANGE = 0x04
ERR_DATA_LENGTH = 0x05
ERR_DATA_LIMIT = 0x06
ERR_ACCESS = 0x07
ERR_ALERT = 0x80

#: Largest LEN the decoder accepts (the SDK's RXPACKET_MAX_LEN); larger values are treated as corruption.
MAX_LENGTH = 1024


def _make_table() -> tuple[int, ...]:
    table = []
    for i in range(256):
        crc = i << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x8005) if crc & 0x8000 else (crc << 1)
        table.append(crc & 0xFFFF)
    return tuple(table)


CRC_TABLE = _make_table()


def crc16_py(data: bytes | bytearray | memoryview, crc: int = 0) -> int:
    """CRC-16/BUYPASS (poly 0x8005, init 0) of ``data``, table-driven pure Python (the reference)."""
    t = CRC_TABLE
    for b in data:
        crc = ((crc << 8) & 0xFFFF) ^ t[((crc >> 8) ^ b) & 0xFF]
    return crc


try:  # the same loop compiled: ~0.1 µs/byte in Python → a few ns/byte (a 20-servo cycle CRCs ~570 bytes)
    import numba as _numba

    _TABLE_NP = np.array(CRC_TABLE, dtype=np.uint16)

    @_numba.njit(cache=True, nogil=True)
    def _crc16_nb(data, crc, table):  # pragma: no cover - compiled
        for i in range(data.shape[0]):
            crc = ((crc << 8) & 0xFFFF) ^ table[((crc >> 8) ^ data[i]) & 0xFF]
        return crc

    @_numba.njit(cache=True, nogil=True)
    def _scan_nb(buf, max_length, table, starts, totals):  # pragma: no cover - compiled
        """The :meth:`StreamDecoder.feed_py` state machine over a whole buffer: valid packets' (start, total)
        into ``starts``/``totals``; returns (count, consumed, discarded, crc_errors, length_errors)."""
        n = buf.shape[0]
        pos = 0
        cnt = 0
        disc = 0
        crce = 0
        lene = 0
        while cnt < starts.shape[0]:
            found = -1
            i = pos
            while i + 2 < n:
                if buf[i] == 0xFF and buf[i + 1] == 0xFF and buf[i + 2] == 0xFD:
                    found = i
                    break
                i += 1
            if found < 0:
                keep = 0
                if n - pos >= 2 and buf[n - 2] == 0xFF and buf[n - 1] == 0xFF:
                    keep = 2
                elif n - pos >= 1 and buf[n - 1] == 0xFF:
                    keep = 1
                disc += n - pos - keep
                pos = n - keep
                break
            disc += found - pos
            pos = found
            if n - pos < 7:
                break
            length = buf[pos + 5] | (buf[pos + 6] << 8)
            if buf[pos + 3] != 0 or length < 3 or length > max_length:
                if buf[pos + 3] == 0:
                    lene += 1
                disc += 1
                pos += 1
                continue
            total = length + 7
            if n - pos < total:
                break
            crc = 0
            for j in range(pos, pos + total - 2):
                crc = ((crc << 8) & 0xFFFF) ^ table[((crc >> 8) ^ buf[j]) & 0xFF]
            if crc != (buf[pos + total - 2] | (buf[pos + total - 1] << 8)):
                crce += 1
                disc += 1
                pos += 1
                continue
            starts[cnt] = pos
            totals[cnt] = total
            cnt += 1
            pos += total
        return cnt, pos, disc, crce, lene

    HAVE_NUMBA = True

    def crc16(data: bytes | bytearray | memoryview, crc: int = 0) -> int:
        """CRC-16/BUYPASS (poly 0x8005, init 0, no reflection) of ``data``; ``crc`` continues a running value."""
        if len(data) < 64:  # numba's call overhead (~3 µs) beats the Python loop only for longer data
            return crc16_py(data, crc)
        return int(_crc16_nb(np.frombuffer(data, dtype=np.uint8), crc, _TABLE_NP))
except ImportError:  # pragma: no cover
    crc16 = crc16_py
    HAVE_NUMBA = False


_warm = False


def warm_up() -> None:
    """Load (or compile) the numba kernels now: the first call otherwise stalls for 0.1–1 s, long enough
    to miss a packet timeout. Called by ``VirtualBus.open`` and ``DynamixelBus.open``."""
    global _warm
    if _warm or not HAVE_NUMBA:
        return
    probe = encode_status(1, 0, bytes(80))
    crc16(probe)
    StreamDecoder().feed(probe + probe)
    _warm = True


def stuff(body: bytes) -> bytes:
    """Insert an ``FD`` after every ``FF FF FD`` in ``body`` (INST..params, no CRC)."""
    if b"\xff\xff\xfd" not in body:
        return bytes(body)
    return bytes(body).replace(b"\xff\xff\xfd", b"\xff\xff\xfd\xfd")


def unstuff(body: bytes) -> bytes:
    """Undo :func:`stuff`: ``FF FF FD FD`` → ``FF FF FD``."""
    if b"\xff\xff\xfd\xfd" not in body:
        return bytes(body)
    return bytes(body).replace(b"\xff\xff\xfd\xfd", b"\xff\xff\xfd")


class ProtocolError(ValueError):
    """A byte string that is not one valid Protocol 2.0 packet."""


class Packet(NamedTuple):
    """One decoded packet. ``error`` is the status error byte (``None`` for instruction packets);
    ``params`` are the unstuffed parameter bytes."""

    id: int
    instruction: int
    params: bytes = b""
    error: int | None = None

    @property
    def is_status(self) -> bool:
        return self.instruction == INST_STATUS

    def encode(self) -> bytes:
        if self.is_status:
            return encode_status(self.id, self.error or 0, self.params)
        return encode_instruction(self.id, self.instruction, self.params)


def _frame(dxl_id: int, body: bytes) -> bytes:
    if not 0 <= dxl_id <= 0xFF:
        raise ProtocolError(f"id must be 0..255, got {dxl_id}")
    body = stuff(body)
    length = len(body) + 2
    if length > 0xFFFF:
        raise ProtocolError(f"packet too long: LEN {length} > 65535")
    head = HEADER + bytes((dxl_id, length & 0xFF, length >> 8))
    crc = crc16(body, crc16(head))
    return head + body + bytes((crc & 0xFF, crc >> 8))


def encode_instruction(dxl_id: int, instruction: int, params: bytes = b"") -> bytes:
    """Instruction packet ``FF FF FD 00 ID LEN INST params CRC`` (stuffed)."""
    if not 0 <= instruction <= 0xFF or instruction == INST_STATUS:
        raise ProtocolError(f"instruction must be a byte other than 0x55 (status), got {instruction}")
    return _frame(dxl_id, bytes((instruction,)) + bytes(params))


def encode_status(dxl_id: int, error: int, params: bytes = b"") -> bytes:
    """Status packet ``FF FF FD 00 ID LEN 55 ERR params CRC`` (stuffed)."""
    if not 0 <= error <= 0xFF:
        raise ProtocolError(f"error byte must be 0..255, got {error}")
    return _frame(dxl_id, bytes((INST_STATUS, error)) + bytes(params))


def packet_length(packet: bytes) -> int:
    """Total on-wire length of the packet starting at ``packet[0]`` (needs 7 bytes)."""
    return (packet[5] | (packet[6] << 8)) + 7


def decode(packet: bytes) -> Packet:
    """Decode exactly one packet; raises :class:`ProtocolError` saying what is wrong."""
    packet = bytes(packet)
    if len(packet) < 10:
        raise ProtocolError(f"packet too short: {len(packet)} bytes (minimum 10)")
    if packet[:4] != HEADER:
        raise ProtocolError(f"bad header {packet[:4].hex(' ')} (expected ff ff fd 00)")
    length = packet[5] | (packet[6] << 8)
    if length < 3 or len(packet) != length + 7:
        raise ProtocolError(f"wrong length: LEN field {length} but {len(packet)} bytes (LEN + 7 expected)")
    crc = packet[-2] | (packet[-1] << 8)
    calc = crc16(packet[:-2])
    if crc != calc:
        raise ProtocolError(f"CRC mismatch: packet says {crc:#06x}, computed {calc:#06x}")
    body = unstuff(packet[7:-2])
    inst = body[0]
    if inst == INST_STATUS:
        if len(body) < 2:
            raise ProtocolError("status packet without an error byte")
        return Packet(packet[4], inst, body[2:], body[1])
    return Packet(packet[4], inst, body[1:], None)


@dataclass
class DecoderStats:
    packets: int = 0
    crc_errors: int = 0
    length_errors: int = 0  # impossible LEN fields
    discarded_bytes: int = 0  # bytes skipped while hunting for a header
    incomplete: int = 0  # partial packets dropped by :meth:`StreamDecoder.drop_partial`


@dataclass
class StreamDecoder:
    """Incremental packet finder: ``feed(bytes) -> list[Packet]``. Never raises on input bytes.

    Resynchronises by skipping one byte after a bad header/length/CRC, so a valid packet hidden behind
    garbage is still found. ``max_length`` bounds LEN (larger is counted as a length error).
    """

    max_length: int = MAX_LENGTH
    stats: DecoderStats = field(default_factory=DecoderStats)
    _buf: bytearray = field(default_factory=bytearray, repr=False)

    @property
    def pending(self) -> int:
        return len(self._buf)

    def drop_partial(self) -> int:
        """Forget buffered bytes of an unfinished packet (e.g. after an idle gap); returns how many."""
        n = len(self._buf)
        if n:
            self.stats.incomplete += 1
            self.stats.discarded_bytes += n
            self._buf.clear()
        return n

    def feed_spans(self, data: bytes) -> tuple[bytes, list[int], list[int]]:
        """Low-level :meth:`feed` (needs numba): ``(buffer, starts, totals)`` of the CRC-valid frames completed
        by ``data``, still stuffed, without building :class:`Packet` objects (the sync-read fast path)."""
        whole = bytes(self._buf) + bytes(data)
        arr = np.frombuffer(whole, dtype=np.uint8)
        cap = len(whole) // 10 + 1
        starts = np.empty(cap, dtype=np.int64)
        totals = np.empty(cap, dtype=np.int64)
        cnt, pos, disc, crce, lene = _scan_nb(arr, self.max_length, _TABLE_NP, starts, totals)
        st = self.stats
        st.discarded_bytes += disc
        st.crc_errors += crce
        st.length_errors += lene
        st.packets += cnt
        self._buf = bytearray(whole[pos:])
        return whole, starts[:cnt].tolist(), totals[:cnt].tolist()

    def feed(self, data: bytes) -> list[Packet]:
        """Packets completed by ``data`` (numba scanner when available, else :meth:`feed_py`)."""
        if not HAVE_NUMBA or len(self._buf) + len(data) < 64:
            return self.feed_py(data)
        whole, starts, totals = self.feed_spans(data)
        st = self.stats
        st.packets -= len(starts)
        out: list[Packet] = []
        for s0, tot in zip(starts, totals):
            body = whole[s0 + 7: s0 + tot - 2]
            if b"\xff\xff\xfd\xfd" in body:
                body = unstuff(body)
            inst = body[0]
            if inst == INST_STATUS:
                if len(body) < 2:
                    st.length_errors += 1
                    continue
                out.append(Packet(whole[s0 + 4], inst, body[2:], body[1]))
            else:
                out.append(Packet(whole[s0 + 4], inst, body[1:], None))
            st.packets += 1
        return out

    def feed_py(self, data: bytes) -> list[Packet]:
        """Pure-Python reference of :meth:`feed`."""
        buf = self._buf
        buf += data
        out: list[Packet] = []
        st = self.stats
        while True:
            i = buf.find(b"\xff\xff\xfd")
            if i < 0:
                keep = 2 if buf.endswith(b"\xff\xff") else (1 if buf.endswith(b"\xff") else 0)
                st.discarded_bytes += len(buf) - keep
                del buf[: len(buf) - keep]
                return out
            if i:
                st.discarded_bytes += i
                del buf[:i]
            if len(buf) < 7:
                return out
            length = buf[5] | (buf[6] << 8)
            if buf[3] != 0x00 or length < 3 or length > self.max_length:
                if buf[3] != 0xFD:  # FF FF FD FD is stuffing inside a packet, not corruption
                    if buf[3] == 0x00:
                        st.length_errors += 1
                st.discarded_bytes += 1
                del buf[0]
                continue
            total = length + 7
            if len(buf) < total:
                return out
            crc = buf[total - 2] | (buf[total - 1] << 8)
            if crc16(bytes(buf[: total - 2])) != crc:
                st.crc_errors += 1
                st.discarded_bytes += 1
                del buf[0]
                continue
            body = unstuff(bytes(buf[7: total - 2]))
            pid = buf[4]
            del buf[:total]
            inst = body[0]
            if inst == INST_STATUS:
                if len(body) < 2:
                    st.length_errors += 1
                    continue
                out.append(Packet(pid, inst, body[2:], body[1]))
            else:
                out.append(Packet(pid, inst, body[1:], None))
            st.packets += 1


def u16(value: int) -> bytes:
    return (value & 0xFFFF).to_bytes(2, "little")


def u32(value: int) -> bytes:
    return (value & 0xFFFFFFFF).to_bytes(4, "little")
