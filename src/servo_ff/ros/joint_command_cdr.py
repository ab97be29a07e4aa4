"""sensor_msgs/JointState goals read from their CDR bytes, without rclpy's deserialization.

A lockstep sim takes one goal per control period on ``<prefix>/joint_command``; rclpy builds a JointState of 20
names (≈ 25 µs) where a Float64MultiArray costs half that. A goal in the layout the sim's own joints give (names
= ``joints`` in order, positions only, empty frame_id: what the feed-forward node sends) is recognised by comparing
its bytes around the stamp and the positions with a template, and read in place; any other goal is left to rclpy
(the caller deserializes it).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

import numpy as np
from rclpy.serialization import serialize_message
from sensor_msgs.msg import JointState

_STAMP = struct.Struct("<iI")


def _meaningful(joints: Sequence[str]) -> tuple[np.ndarray, int]:
    """Offsets of the bytes of such a goal's CDR before its positions that are not alignment padding (rmw
    leaves padding uninitialised), the stamp left out; and the offset of the positions."""
    idx: list[int] = list(range(4))  # encapsulation: little-endian CDR
    off = 12  # 4 bytes of encapsulation, 8 of stamp; CDR aligns relative to offset 4

    def align(k: int) -> None:
        nonlocal off
        off += (-(off - 4)) % k

    def string(text: str) -> None:
        nonlocal off
        align(4)
        n = 4 + len(text.encode()) + 1
        idx.extend(range(off, off + n))
        off += n

    string("")  # frame_id
    align(4)
    idx.extend(range(off, off + 4))  # name count
    off += 4
    for j in joints:
        string(j)
    align(4)
    idx.extend(range(off, off + 4))  # position count
    off += 4
    align(8)
    return np.array(idx, dtype=np.intp), off


class JointCommandCdr:
    """The layout of a JointState with ``joints`` as names and one position each, nothing else."""

    def __init__(self, joints: Sequence[str]):
        n = len(joints)
        sentinel = np.linspace(1234.5, 2345.5, n)
        data = serialize_message(JointState(name=list(joints), position=sentinel.tolist()))
        self._idx, self._at = _meaningful(joints)
        if data.find(sentinel.astype("<f8").tobytes()) != self._at:
            raise ValueError("JointState: its CDR layout is not the one expected")
        self.n = n
        self._ref = np.frombuffer(data, dtype=np.uint8)[self._idx]
        self._end = self._at + 8 * n  # velocity and effort counts (0) follow: 8 bytes

    def read(self, data: bytes) -> tuple[int, np.ndarray] | None:
        """(header.stamp [ns], positions [rad] as a read-only view) of a goal in this layout, else None."""
        end = self._end
        if len(data) < end + 8 or data[end : end + 8] != bytes(8):
            return None
        if not np.array_equal(np.frombuffer(data, dtype=np.uint8, count=self._at)[self._idx], self._ref):
            return None
        sec, nanosec = _STAMP.unpack_from(data, 4)
        return sec * 1_000_000_000 + nanosec, np.frombuffer(data, dtype="<f8", count=self.n, offset=self._at)
