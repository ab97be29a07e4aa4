"""Streaming Protocol 2.0 decoder that resynchronises: bytes in, packets (and bad frames) out, never raises.

The scan (a compiled numba kernel, with :func:`scan_py` as its pure-Python reference) walks the buffer:

* find ``FF FF FD``; a header whose reserved byte is not 0 or whose LEN is outside ``3..max_length`` is a length
  error: skip one byte and search again;
* a header whose packet is not complete yet waits for more bytes — unless a complete, CRC-valid packet starts
  inside the span it claims: a real packet cannot contain one (stuffing turns ``FF FF FD`` in the body into
  ``FF FF FD FD``), so the header is counted as a length error and dropped. A corrupted LEN therefore never holds
  back the valid packets after it; ``max_length`` (set per transaction to the longest reply it can get) makes the
  check immediate;
* a complete packet with a bad CRC: skip one byte.

Bad frames with an intact header are reported as ``(offset, kind, id byte)`` so that the bus can tell *which*
servo's reply was garbled (see :mod:`.transactions`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from ..frame_buffer import FrameBuffer
from . import protocol as pr

BAD_CRC = 1
BAD_LENGTH = 2


class Scan(NamedTuple):
    """One :meth:`StreamDecoder.scan`: ``whole`` = leftover + new bytes; frames as offsets into it."""

    whole: bytes
    starts: list[int]  # CRC-valid frames (still stuffed)
    totals: list[int]
    bad_starts: list[int]  # frames with an intact header but a bad CRC or an impossible LEN
    bad_kinds: list[int]  # BAD_CRC | BAD_LENGTH


def _complete_frame_after(buf, pos: int, n: int, max_length: int) -> int:
    """Offset of the first complete CRC-valid frame starting in (pos, n), or −1 (pure Python)."""
    j = buf.find(b"\xff\xff\xfd\x00", pos + 1)
    while 0 <= j <= n - 10:
        length = buf[j + 5] | (buf[j + 6] << 8)
        if 3 <= length <= max_length and j + length + 7 <= n:
            total = length + 7
            if pr.crc16_py(buf[j : j + total - 2]) == (buf[j + total - 2] | (buf[j + total - 1] << 8)):
                return j
        j = buf.find(b"\xff\xff\xfd\x00", j + 1)
    return -1


def scan_py(buf: bytes, max_length: int):
    """Pure-Python reference of the compiled scan: ``(starts, totals, bad_starts, bad_kinds, consumed, discarded,
    crc_errors, length_errors)``."""
    n = len(buf)
    pos = disc = crce = lene = 0
    starts, totals, bad_starts, bad_kinds = [], [], [], []
    while True:
        found = buf.find(b"\xff\xff\xfd", pos)
        if found < 0:
            keep = (
                2
                if n - pos >= 2 and buf.endswith(b"\xff\xff")
                else (1 if n - pos >= 1 and buf.endswith(b"\xff") else 0)
            )
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
                bad_starts.append(pos)
                bad_kinds.append(BAD_LENGTH)
            disc += 1
            pos += 1
            continue
        total = length + 7
        if n - pos < total:
            j = _complete_frame_after(buf, pos, n, max_length)
            if j < 0:
                break
            lene += 1
            bad_starts.append(pos)
            bad_kinds.append(BAD_LENGTH)
            disc += j - pos
            pos = j
            continue
        if pr.crc16_py(buf[pos : pos + total - 2]) != (buf[pos + total - 2] | (buf[pos + total - 1] << 8)):
            crce += 1
            bad_starts.append(pos)
            bad_kinds.append(BAD_CRC)
            disc += 1
            pos += 1
            continue
        starts.append(pos)
        totals.append(total)
        pos += total
    return starts, totals, bad_starts, bad_kinds, pos, disc, crce, lene


if pr.HAVE_NUMBA:
    import numba as _numba

    @_numba.njit(cache=True, nogil=True)
    def _crc_ok(buf, a, total, table):  # pragma: no cover - compiled
        crc = 0
        for j in range(a, a + total - 2):
            crc = ((crc << 8) & 0xFFFF) ^ table[((crc >> 8) ^ buf[j]) & 0xFF]
        return crc == (buf[a + total - 2] | (buf[a + total - 1] << 8))

    @_numba.njit(cache=True, nogil=True)
    def _scan_nb(buf, max_length, table, starts, totals, bad_starts, bad_kinds):  # pragma: no cover - compiled
        """:func:`scan_py` compiled; returns (count, bad count, consumed, discarded, crc_errors, length_errors)."""
        n = buf.shape[0]
        pos = cnt = nbad = disc = crce = lene = 0
        while cnt < starts.shape[0] and nbad < bad_starts.shape[0]:
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
                    bad_starts[nbad] = pos
                    bad_kinds[nbad] = 2
                    nbad += 1
                disc += 1
                pos += 1
                continue
            total = length + 7
            if n - pos < total:
                j = pos + 1
                inner = -1
                while j <= n - 10:
                    if buf[j] == 0xFF and buf[j + 1] == 0xFF and buf[j + 2] == 0xFD and buf[j + 3] == 0:
                        ln = buf[j + 5] | (buf[j + 6] << 8)
                        if 3 <= ln <= max_length and j + ln + 7 <= n and _crc_ok(buf, j, ln + 7, table):
                            inner = j
                            break
                    j += 1
                if inner < 0:
                    break
                lene += 1
                bad_starts[nbad] = pos
                bad_kinds[nbad] = 2
                nbad += 1
                disc += inner - pos
                pos = inner
                continue
            if not _crc_ok(buf, pos, total, table):
                crce += 1
                bad_starts[nbad] = pos
                bad_kinds[nbad] = 1
                nbad += 1
                disc += 1
                pos += 1
                continue
            starts[cnt] = pos
            totals[cnt] = total
            cnt += 1
            pos += total
        return cnt, nbad, pos, disc, crce, lene


_warm = False


def warm_up() -> None:
    """Load (or compile) the numba kernels now: the first call otherwise stalls for 0.1–1 s, long enough
    to miss a packet timeout. Called by ``VirtualBus.open`` and ``DynamixelBus.open``."""
    global _warm
    if _warm or not pr.HAVE_NUMBA:
        return
    probe = pr.encode_status(1, 0, bytes(80))
    pr.crc16(probe)
    dec = StreamDecoder()
    dec.feed(probe + probe + probe[:20])
    dec.feed(probe[20:] + b"\xff\xff\xfd\x00\x01\xff\x00" + probe)  # the resync branch too
    _warm = True


@dataclass
class DecoderStats:
    packets: int = 0
    crc_errors: int = 0
    length_errors: int = 0  # impossible LEN fields (incl. headers dropped because a valid packet followed inside)
    discarded_bytes: int = 0  # bytes skipped while hunting for a header
    incomplete: int = 0  # partial packets dropped by :meth:`StreamDecoder.drop_partial`


@dataclass
class StreamDecoder(FrameBuffer):
    """Incremental packet finder: ``feed(bytes) -> list[Packet]``. Never raises on input bytes.

    ``max_length`` bounds LEN (larger is counted as a length error and skipped at once); a transaction that knows
    its replies sets it to their longest stuffed LEN (see :func:`.transactions.max_reply_len`).
    """

    max_length: int = pr.MAX_LENGTH
    stats: DecoderStats = field(default_factory=DecoderStats)
    _buf: bytearray = field(default_factory=bytearray, repr=False)

    def scan(self, data: bytes, compiled: bool = True) -> Scan:
        """Frames completed by ``data`` as offsets into ``Scan.whole`` (no :class:`Packet` objects built)."""
        whole = bytes(self._buf) + bytes(data)
        if compiled and pr.HAVE_NUMBA and len(whole) >= 64:
            arr = np.frombuffer(whole, dtype=np.uint8)
            cap = len(whole) // 10 + 1
            bcap = len(whole) // 3 + 1
            st, tt = np.empty(cap, dtype=np.int64), np.empty(cap, dtype=np.int64)
            bs, bk = np.empty(bcap, dtype=np.int64), np.empty(bcap, dtype=np.int64)
            cnt, nbad, pos, disc, crce, lene = _scan_nb(arr, self.max_length, pr._TABLE_NP, st, tt, bs, bk)
            starts, totals = st[:cnt].tolist(), tt[:cnt].tolist()
            bad_starts, bad_kinds = (bs[:nbad].tolist(), bk[:nbad].tolist()) if nbad else ([], [])
        else:
            starts, totals, bad_starts, bad_kinds, pos, disc, crce, lene = scan_py(whole, self.max_length)
        s = self.stats
        s.discarded_bytes += disc
        s.crc_errors += crce
        s.length_errors += lene
        s.packets += len(starts)
        self._buf = bytearray(whole[pos:])
        return Scan(whole, starts, totals, bad_starts, bad_kinds)

    def feed_spans(self, data: bytes) -> tuple[bytes, list[int], list[int]]:
        """``(buffer, starts, totals)`` of the CRC-valid frames completed by ``data`` (still stuffed)."""
        s = self.scan(data)
        return s.whole, s.starts, s.totals

    def feed(self, data: bytes, compiled: bool = True) -> list[pr.Packet]:
        """Packets completed by ``data`` (status packets without an error byte count as length errors)."""
        sc = self.scan(data, compiled)
        out: list[pr.Packet] = []
        whole = sc.whole
        for s0, tot in zip(sc.starts, sc.totals):
            p = packet_at(whole, s0, tot)
            if p is None:
                self.stats.length_errors += 1
                self.stats.packets -= 1
            else:
                out.append(p)
        return out

    def feed_py(self, data: bytes) -> list[pr.Packet]:
        """Pure-Python reference of :meth:`feed`."""
        return self.feed(data, compiled=False)


def packet_at(whole: bytes, s0: int, total: int) -> pr.Packet | None:
    """The :class:`Packet` of the CRC-valid frame ``whole[s0: s0 + total]`` (None: a status without error byte)."""
    body = whole[s0 + 7 : s0 + total - 2]
    if b"\xff\xff\xfd\xfd" in body:
        body = pr.unstuff(body)
    inst = body[0]
    if inst == pr.INST_STATUS:
        if len(body) < 2:
            return None
        return pr.Packet(whole[s0 + 4], inst, body[2:], body[1])
    return pr.Packet(whole[s0 + 4], inst, body[1:], None)
