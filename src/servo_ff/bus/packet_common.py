"""What the packets of every servo family have in common (ROS-free; imports no family): the servo-id range the bus
layer takes and the first checks of a packet decoder.

Dynamixel Protocol 2.0 takes ids 0..252 (0xFD–0xFF are reserved, 0xFE broadcast); Protocol 1.0 and the Feetech
STS take 0..253. A :class:`~.bus_types.BusConfig` and a virtual bus take the range every family accepts.
"""

from __future__ import annotations

MAX_ID = 0xFC  # 252: the largest servo id of every family (a bus's ids are 0..MAX_ID)


def check_head(packet: bytes | bytearray | memoryview, minimum: int, header: bytes, error: type[Exception]) -> bytes:
    """``packet`` as bytes once it has at least ``minimum`` bytes and starts with ``header``; else ``error`` saying
    which check failed."""
    packet = bytes(packet)
    if len(packet) < minimum:
        raise error(f"packet too short: {len(packet)} bytes (minimum {minimum})")
    if packet[: len(header)] != header:
        raise error(f"bad header {packet[: len(header)].hex(' ')} (expected {header.hex(' ')})")
    return packet
