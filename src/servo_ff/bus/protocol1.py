"""Packets of Dynamixel Protocol 1.0, which Feetech SCS/STS servos speak too (shared by both families, so in the
generic bus layer): checksum, encode/decode and a streaming decoder.

Packet layout (ROBOTIS e-manual, "Protocol 1.0"; Feetech "SCS/STS communication protocol" manual, same framing):
``FF FF | ID | LEN | INST or ERR | params… | CHECKSUM`` with LEN = number of params + 2 and
CHECKSUM = ~(ID + LEN + INST + Σ params) & 0xFF. Instruction and status packets share the layout: the fifth
byte is the instruction in a packet to the servo and the error byte in its reply, so a decoder is told which one
it reads. No byte stuffing; 0xFF is not a valid ID (0xFE is broadcast).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from ..errors import ServoFFError
from .frame_buffer import FrameBuffer
from .packet_common import check_head

HEADER = b"\xff\xff"
BROADCAST_ID = 0xFE
MAX_ID = 0xFD  # 253
MIN_LENGTH = 2  # LEN of a packet without parameters
MAX_LENGTH = 250  # the SDKs' RXPACKET_MAX_LEN is 250 bytes on the wire

INST_PING = 0x01
INST_READ = 0x02
INST_WRITE = 0x03
INST_REG_WRITE = 0x04
INST_ACTION = 0x05
INST_RESET = 0x06  # factory reset (Dynamixel); Feetech: reset
INST_REBOOT = 0x08  # Dynamixel 1.0 firmware of X/MX(2.0) servos only; MX(1.0) and AX answer an instruction error
INST_SYNC_READ = 0x82  # Feetech SCS/STS (not in Dynamixel 1.0)
INST_SYNC_WRITE = 0x83
INST_BULK_READ = 0x92  # Dynamixel MX (1.0) only

INSTRUCTION_NAMES = {
    INST_PING: "PING",
    INST_READ: "READ",
    INST_WRITE: "WRITE",
    INST_REG_WRITE: "REG_WRITE",
    INST_ACTION: "ACTION",
    INST_RESET: "RESET",
    INST_REBOOT: "REBOOT",
    INST_SYNC_READ: "SYNC_READ",
    INST_SYNC_WRITE: "SYNC_WRITE",
    INST_BULK_READ: "BULK_READ",
}

# Status error byte (bit flags, Protocol 1.0 e-manual; Feetech uses bits 0, 1, 2, 3, 5 the same way)
ERR_INPUT_VOLTAGE = 1 << 0
ERR_ANGLE_LIMIT = 1 << 1
ERR_OVERHEATING = 1 << 2
ERR_RANGE = 1 << 3
ERR_CHECKSUM = 1 << 4
ERR_OVERLOAD = 1 << 5
ERR_INSTRUCTION = 1 << 6
ERROR_NAMES = {
    ERR_INPUT_VOLTAGE: "input voltage",
    ERR_ANGLE_LIMIT: "angle limit",
    ERR_OVERHEATING: "overheating",
    ERR_RANGE: "range",
    ERR_CHECKSUM: "checksum",
    ERR_OVERLOAD: "overload",
    ERR_INSTRUCTION: "instruction",
}


class Protocol1Error(ServoFFError, ValueError):
    """A byte string that is not one valid Protocol 1.0 packet."""


class Packet1(NamedTuple):
    """One packet: ``code`` is the instruction (packet to a servo) or the error byte (its reply)."""

    id: int
    code: int
    params: bytes = b""


def checksum(body: bytes | bytearray | memoryview) -> int:
    """~(ID + LEN + INST/ERR + Σ params) & 0xFF over ``body`` = the packet without header and checksum."""
    return (~sum(body)) & 0xFF


def encode(servo_id: int, code: int, params: bytes = b"") -> bytes:
    """``FF FF ID LEN code params CHECKSUM`` (an instruction, or a status when ``code`` is the error byte)."""
    if not 0 <= servo_id <= BROADCAST_ID:
        raise Protocol1Error(f"id must be 0..{BROADCAST_ID}, got {servo_id}")
    if not 0 <= code <= 0xFF:
        raise Protocol1Error(f"instruction/error must be a byte, got {code}")
    length = len(params) + 2
    if length > MAX_LENGTH:
        raise Protocol1Error(f"packet too long: LEN {length} > {MAX_LENGTH}")
    body = bytes((servo_id, length, code)) + bytes(params)
    return HEADER + body + bytes((checksum(body),))


def decode(packet: bytes) -> Packet1:
    """Exactly one packet; raises :class:`Protocol1Error` saying what is wrong."""
    packet = check_head(packet, 6, HEADER, Protocol1Error)
    if packet[3] + 4 != len(packet):
        raise Protocol1Error(f"wrong length: LEN field {packet[3]} but {len(packet)} bytes (LEN + 4 expected)")
    calc = checksum(packet[2:-1])
    if packet[-1] != calc:
        raise Protocol1Error(f"checksum mismatch: packet says {packet[-1]:#04x}, computed {calc:#04x}")
    return Packet1(packet[2], packet[4], packet[5:-1])


GARBLED_CHECKSUM = 1  # kinds of a garbled frame (intact header) handed to FrameScanner1._garbled
GARBLED_LENGTH = 2


@dataclass
class DecoderStats1:
    packets: int = 0
    checksum_errors: int = 0
    length_errors: int = 0
    discarded_bytes: int = 0
    incomplete: int = 0

    @property
    def crc_errors(self) -> int:
        """The name the 2.0 decoder's statistics use for :attr:`checksum_errors`."""
        return self.checksum_errors

    @crc_errors.setter
    def crc_errors(self, value: int) -> None:
        self.checksum_errors = value


def _valid_frame_at(buf: bytearray, j: int, n: int, max_length: int) -> bool:
    """A complete, checksum-valid frame (not an FF ID byte) starts at ``j``."""
    if j + 6 > n or buf[j + 2] > BROADCAST_ID:
        return False
    length = buf[j + 3]
    end = j + 4 + length
    return MIN_LENGTH <= length <= max_length and end <= n and buf[end - 1] == checksum(buf[j + 2 : end - 1])


def _valid_frame_inside(buf: bytearray, h: int, n: int, max_length: int) -> bool:
    """A complete, checksum-valid frame starts inside the span the header at ``h`` claims (its LEN is garbled)."""
    j = buf.find(HEADER, h + 2)
    while 0 <= j and not _valid_frame_at(buf, j, n, max_length):
        j = buf.find(HEADER, j + 1)
    return j >= 0


@dataclass
class FrameScanner1(FrameBuffer):
    """The walk over a Protocol-1.0 byte stream shared by every 1.0 / FT-SCS reader; never raises on input bytes.

    Finds ``FF FF`` (the last two of a run of FF), checks LEN against ``2..max_length`` (set per transaction to
    the longest reply it can get) and the checksum, and hands each frame to :meth:`_frame` and each garbled one
    (intact header, impossible LEN or bad checksum) to :meth:`_garbled`, then steps ``skip_garbled`` bytes past
    its header (counted as discarded when ``count_garbled``). With ``resync_inside``, a header whose frame is not
    complete yet but has a complete, checksum-valid frame inside its span is a garbled LEN, dropped at once so
    that it never holds back the frames behind it; otherwise it waits for more bytes (kept for the next call).
    """

    max_length: int = MAX_LENGTH
    stats: DecoderStats1 = field(default_factory=DecoderStats1)
    _buf: bytearray = field(default_factory=bytearray, repr=False)

    skip_garbled = 1
    count_garbled = True
    resync_inside = False

    def _frame(self, sid: int, err: int, params: bytes):
        return Packet1(sid, err, params)

    def _garbled(self, kind: int, sid: int):
        """What a garbled frame becomes in the output (None: nothing)."""
        return None

    def _walk(self, data: bytes) -> list:
        buf = self._buf
        buf += data
        out: list = []
        pos, n, s, top = 0, len(buf), self.stats, self.max_length
        step, resync = self.skip_garbled, self.resync_inside
        while True:
            h = buf.find(HEADER, pos)
            if h < 0:
                keep = n - 1 if n and buf[-1] == 0xFF else n  # a lone trailing FF may start a header
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
            end = h + 4 + length
            if length < MIN_LENGTH or length > top or (end > n and resync and _valid_frame_inside(buf, h, n, top)):
                s.length_errors += 1
                kind = GARBLED_LENGTH
            elif end > n:
                break  # wait for the rest
            elif buf[end - 1] != checksum(buf[h + 2 : end - 1]):
                s.checksum_errors += 1
                kind = GARBLED_CHECKSUM
            else:
                out.append(self._frame(sid, buf[h + 4], bytes(buf[h + 5 : end - 1])))
                s.packets += 1
                pos = end
                continue
            garbled = self._garbled(kind, sid)
            if garbled is not None:
                out.append(garbled)
            if self.count_garbled:
                s.discarded_bytes += step
            pos = h + step
        del buf[:pos]
        return out


@dataclass
class StreamDecoder1(FrameScanner1):
    """Incremental packet finder: ``feed(bytes) -> list[Packet1]``; garbage, bad checksums and impossible
    lengths are counted and skipped (one byte, then the hunt for ``FF FF`` resumes), never raised."""

    def feed(self, data: bytes) -> list[Packet1]:
        return self._walk(data)
