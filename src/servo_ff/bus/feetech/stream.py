"""Scanner of a Protocol-1.0 (FT-SCS) status stream: bytes in, status frames and garbled frames out, never raises.

It is the walk of every 1.0 reader, :class:`servo_ff.bus.protocol1.FrameScanner1` (header ``FF FF``,
``LEN`` = params + 2, ``CHECKSUM = ~(ID + LEN + ERR + params)``) and, as the 2.0 scanner of
:mod:`servo_ff.bus.dynamixel.stream` does, reports the frames with an intact header but an impossible ``LEN`` or a
bad checksum with their ID byte, so that the bus can charge a garbled reply to the servo that sent it
(:mod:`servo_ff.bus.transactions`):

* an ID byte above 0xFE or a ``LEN`` outside ``2..max_length`` (set per transaction to the longest reply it can
  get) is a length error: skip one byte and search again;
* a header whose frame is not complete waits for more bytes, unless a complete, checksum-valid frame starts inside
  the span it claims: then its ``LEN`` was garbled, and it is counted as a length error and dropped, so that it
  never holds back the valid frames behind it;
* a complete frame with a bad checksum: skip one byte.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from .. import protocol1 as p1

OK = 0
BAD_CRC = p1.GARBLED_CHECKSUM
BAD_LENGTH = p1.GARBLED_LENGTH


class Frame(NamedTuple):
    """One frame: ``kind`` OK / BAD_CRC / BAD_LENGTH; ``err`` and ``params`` only for OK frames."""

    kind: int
    id: int
    err: int = 0
    params: bytes = b""


ScanStats = p1.DecoderStats1  # ``crc_errors`` is its ``checksum_errors``


@dataclass
class StsScanner(p1.FrameScanner1):
    """Incremental scanner: :meth:`scan` keeps an unfinished frame for the next call (``pending`` bytes)."""

    resync_inside = True

    def _frame(self, sid: int, err: int, params: bytes) -> Frame:
        return Frame(OK, sid, err, params)

    def _garbled(self, kind: int, sid: int) -> Frame:
        return Frame(kind, sid)

    def scan(self, data: bytes) -> list[Frame]:
        return self._walk(data)
