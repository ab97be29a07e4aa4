"""Dynamixel Protocol 2.0 packets: CRC-16, byte stuffing, encode/decode and a streaming decoder.

Packet layout (ROBOTIS e-manual, "Protocol 2.0"):
``FF FF FD 00 | ID | LEN_L LEN_H | INST | [ERR] params… | CRC_L CRC_H`` with LEN = bytes after LEN up to and
including the CRC. Stuffing: from INST to the end of the parameters every ``FF FF FD`` gets an extra ``FD``;
LEN counts the stuffed bytes and the CRC covers the stuffed packet. CRC-16: polynomial 0x8005, initial value 0,
no reflection, no final XOR (CRC-16/BUYPASS).

:class:`~.stream.StreamDecoder` (module :mod:`.stream`) turns an arbitrary byte stream into
packets; garbage, bad CRCs and impossible lengths are counted and skipped, never raised.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ...errors import ServoFFError
from ..packet_common import (
    MAX_ID,  # noqa: F401 (re-exported: Protocol 2.0 takes the common ids 0..252)
    check_head,
)

HEADER = b"\xff\xff\xfd\x00"
BROADCAST_ID = 0xFE

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
    INST_PING: "PING",
    INST_READ: "READ",
    INST_WRITE: "WRITE",
    INST_REG_WRITE: "REG_WRITE",
    INST_ACTION: "ACTION",
    INST_FACTORY_RESET: "FACTORY_RESET",
    INST_REBOOT: "REBOOT",
    INST_CLEAR: "CLEAR",
    INST_STATUS: "STATUS",
    INST_SYNC_READ: "SYNC_READ",
    INST_SYNC_WRITE: "SYNC_WRITE",
    INST_FAST_SYNC_READ: "FAST_SYNC_READ",
    INST_BULK_READ: "BULK_READ",
    INST_BULK_WRITE: "BULK_WRITE",
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

    from ...numba_cache import install

    install()  # cached kernels stamped by the sources they inline

    _TABLE_NP = np.array(CRC_TABLE, dtype=np.uint16)

    @_numba.njit(cache=True, nogil=True)
    def _crc16_nb(data, crc, table):  # pragma: no cover - compiled
        for i in range(data.shape[0]):
            crc = ((crc << 8) & 0xFFFF) ^ table[((crc >> 8) ^ data[i]) & 0xFF]
        return crc

    HAVE_NUMBA = True

    def crc16(data: bytes | bytearray | memoryview, crc: int = 0) -> int:
        """CRC-16/BUYPASS (poly 0x8005, init 0, no reflection) of ``data``; ``crc`` continues a running value."""
        if len(data) < 64:  # numba's call overhead (~3 µs) beats the Python loop only for longer data
            return crc16_py(data, crc)
        return int(_crc16_nb(np.frombuffer(data, dtype=np.uint8), crc, _TABLE_NP))
except ImportError:  # pragma: no cover
    crc16 = crc16_py
    HAVE_NUMBA = False
    _TABLE_NP = np.array(CRC_TABLE, dtype=np.uint16)


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


class ProtocolError(ServoFFError, ValueError):
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
    packet = check_head(packet, 10, HEADER, ProtocolError)
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
