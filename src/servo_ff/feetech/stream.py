"""Scanner of a Protocol-1.0 (FT-SCS) status stream: bytes in, status frames and garbled frames out, never raises.

It walks the buffer like :class:`servo_ff.dynamixel.protocol1.StreamDecoder1` (header ``FF FF``, ``LEN`` = params
+ 2, ``CHECKSUM = ~(ID + LEN + ERR + params)``) and, as the 2.0 scanner of :mod:`servo_ff.dynamixel.stream`
does, reports the frames with an intact header but an impossible ``LEN`` or a bad checksum with their ID byte, so
that the bus can charge a garbled reply to the servo that sent it (:mod:`servo_ff.dynamixel.transactions`):

* an ID byte above 0xFE or a ``LEN`` outside ``2..max_length`` (set per transaction to the longest reply it can
  get) is a length error: skip one byte and search again;
* a header whose frame is not complete waits for more bytes, unless a complete, checksum-valid frame starts inside
  the span it claims: then its ``LEN`` was garbled, and it is counted as a length error and dropped, so that it
  never holds back the valid frames behind it;
* a complete frame with a bad checksum: skip one byte.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from ..dynamixel import protocol1 as p1

OK = 0
BAD_CRC = 1
BAD_LENGTH = 2
MAX_FRAME_ID = p1.BROADCAST_ID  # 0xFE frames are instruction echoes (broadcast), not replies


class Frame(NamedTuple):
    """One frame: ``kind`` OK / BAD_CRC / BAD_LENGTH; ``err`` and ``params`` only for OK frames."""

    kind: int
    id: int
    err: int = 0
    params: bytes = b""


@dataclass
class ScanStats:
    packets: int = 0
    crc_errors: int = 0
    length_errors: int = 0
    discarded_bytes: int = 0
    incomplete: int = 0


def _valid_at(buf: bytearray, j: int, n: int, max_length: int) -> bool:
    """A complete, checksum-valid frame starts at ``j``."""
    if j + 6 > n or buf[j + 2] > MAX_FRAME_ID:
        return False
    length = buf[j + 3]
    end = j + 4 + length
    return p1.MIN_LENGTH <= length <= max_length and end <= n and buf[end - 1] == (~sum(buf[j + 2 : end - 1])) & 0xFF


@dataclass
class StsScanner:
    """Incremental scanner: :meth:`scan` keeps an unfinished frame for the next call (``pending`` bytes)."""

    max_length: int = p1.MAX_LENGTH
    stats: ScanStats = field(default_factory=ScanStats)
    _buf: bytearray = field(default_factory=bytearray, repr=False)

    @property
    def pending(self) -> int:
        return len(self._buf)

    def drop_partial(self) -> int:
        """Forget the bytes of an unfinished frame; returns how many."""
        n = len(self._buf)
        if n:
            self.stats.incomplete += 1
            self.stats.discarded_bytes += n
            self._buf.clear()
        return n

    def scan(self, data: bytes) -> list[Frame]:
        buf = self._buf
        buf += data
        out: list[Frame] = []
        pos, n, s, top = 0, len(buf), self.stats, self.max_length
        while True:
            h = buf.find(b"\xff\xff", pos)
            if h < 0:
                keep = n - 1 if n and buf[-1] == 0xFF else n  # a trailing FF may start a header
                s.discarded_bytes += max(keep - pos, 0)
                pos = max(pos, keep)
                break
            while h + 2 < n and buf[h + 2] == 0xFF:  # FF FF FF …: the header is the last two
                h += 1
            s.discarded_bytes += h - pos
            pos = h
            if h + 4 > n:
                break
            sid, length = buf[h + 2], buf[h + 3]
            if sid > MAX_FRAME_ID or length < p1.MIN_LENGTH or length > top:
                s.length_errors += 1
                out.append(Frame(BAD_LENGTH, sid))
                s.discarded_bytes += 1
                pos = h + 1
                continue
            end = h + 4 + length
            if end > n:
                j = buf.find(b"\xff\xff", h + 2)
                while 0 <= j and not _valid_at(buf, j, n, top):
                    j = buf.find(b"\xff\xff", j + 1)
                if j < 0:
                    break  # wait for the rest
                s.length_errors += 1
                out.append(Frame(BAD_LENGTH, sid))
                s.discarded_bytes += 1
                pos = h + 1
                continue
            if buf[end - 1] != (~sum(buf[h + 2 : end - 1])) & 0xFF:
                s.crc_errors += 1
                out.append(Frame(BAD_CRC, sid))
                s.discarded_bytes += 1
                pos = h + 1
                continue
            out.append(Frame(OK, sid, buf[h + 4], bytes(buf[h + 5 : end - 1])))
            s.packets += 1
            pos = end
        del buf[:pos]
        return out
