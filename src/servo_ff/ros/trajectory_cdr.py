"""A JointTrajectory of a fixed shape (joint names, number of points, positions, velocities and accelerations of
every joint) serialized once: per publish only the stamp, the points' ``time_from_start`` and the three (P, J)
float64 blocks are written into the bytes through strided numpy views (a walk node's message of 52 points × 20
joints: ≈ 2 ms of JointTrajectoryPoint objects and lists → a few µs of array copies). The bytes are exactly what
rclpy would serialize (``test_nodes_cdr_template.py`` deserializes them back).

The other way, :func:`read_trajectory`: a received JointTrajectory's fields from its bytes (a ``raw=True``
subscription), the points through strided views when laid out alike (52 × 20: ≈ 30 µs, against 0.3–0.7 ms for
rclpy's message objects)."""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from builtin_interfaces.msg import Duration
from rclpy.serialization import serialize_message
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from .cdr_template import _NANOSEC, _SEC


def _strided(buf: bytearray, marks: Sequence[bytes], what: str) -> tuple[int, int]:
    """(offset of the first mark, stride between consecutive marks), each mark found once at its place."""
    at = [buf.find(m) for m in marks]
    stride = at[1] - at[0] if len(at) > 1 else 0
    if any(a < 0 or a != at[0] + k * stride for k, a in enumerate(at)):
        raise ValueError(f"JointTrajectory: the points' {what} are not evenly spaced in its CDR")
    return at[0], stride


class TrajectoryCdr:
    """JointTrajectory over ``joint_names`` with ``n_points`` points (positions, velocities, accelerations; no
    effort), serialized once. :meth:`data` gives the bytes for ``Publisher.publish`` after :meth:`fill`."""

    def __init__(self, joint_names: Sequence[str], n_points: int):
        if n_points < 1 or not joint_names:
            raise ValueError("a trajectory template needs joints and at least one point")
        j, rng = len(joint_names), np.random.default_rng(0x7EA1)
        sent = rng.uniform(1e3, 1e4, (3, n_points, j))  # sentinels: positions, velocities, accelerations
        msg = JointTrajectory(joint_names=list(joint_names))
        msg.header.stamp.sec, msg.header.stamp.nanosec = _SEC, _NANOSEC
        for k in range(n_points):
            msg.points.append(
                JointTrajectoryPoint(
                    positions=sent[0, k].tolist(),
                    velocities=sent[1, k].tolist(),
                    accelerations=sent[2, k].tolist(),
                    time_from_start=Duration(sec=0x3A000000 + k, nanosec=0x2B000000 + k),
                )
            )
        self._buf = bytearray(serialize_message(msg))
        self._stamp_at = self._buf.find(struct.pack("<iI", _SEC, _NANOSEC))
        self.blocks: list[np.ndarray] = []  # (P, J) writable views: q [rad], q̇ [rad/s], q̈ [rad/s²]
        for f, name in enumerate(("positions", "velocities", "accelerations")):
            at, stride = _strided(self._buf, [sent[f, k].astype("<f8").tobytes() for k in range(n_points)], name)
            self.blocks.append(
                np.ndarray((n_points, j), dtype="<f8", buffer=self._buf, offset=at, strides=(stride or 8 * j, 8))
            )
        marks = [struct.pack("<iI", 0x3A000000 + k, 0x2B000000 + k) for k in range(n_points)]
        at, stride = _strided(self._buf, marks, "time_from_start")
        self._tfs = np.ndarray((n_points, 2), dtype="<u4", buffer=self._buf, offset=at, strides=(stride or 8, 4))
        self.n_points = n_points

    def fill(self, stamp_ns: int, from_start_ns: np.ndarray, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray) -> None:
        """Write header.stamp [ns], every point's time_from_start [ns, ≥ 0] and the (P, J) blocks."""
        struct.pack_into("<iI", self._buf, self._stamp_at, stamp_ns // 1_000_000_000, stamp_ns % 1_000_000_000)
        self._tfs[:, 0] = from_start_ns // 1_000_000_000
        self._tfs[:, 1] = from_start_ns % 1_000_000_000
        for block, values in zip(self.blocks, (q, dq, ddq)):
            block[...] = values

    def data(self) -> bytes:
        """The serialized message, for ``Publisher.publish``."""
        return bytes(self._buf)


# ---------------------------------------------------------------------------------------------- reading
_U32 = struct.Struct("<I")
_TIME = struct.Struct("<iI")
_N_SEQ = 4  # a point's float64 sequences: positions, velocities, accelerations, effort


class RawPoints(NamedTuple):
    """A JointTrajectory's fields as read, before any check (P points, M joint names)."""

    names: list[str]
    stamp: float  # header.stamp [s]
    times: np.ndarray  # (P,) time_from_start [s]
    counts: np.ndarray  # (P, 3) int: positions, velocities, accelerations given per point
    rows: tuple  # per field (positions, velocities, accelerations): a (P, n) array, or a list of P 1-D arrays


def _align(off: int, n: int) -> int:
    """``off`` rounded up to a multiple of ``n`` counted from the CDR body (byte 4, after the encapsulation)."""
    return off + (-(off - 4) % n)


def _point(data: bytes, off: int) -> tuple[list[int], list[int], int, float, int]:
    """The JointTrajectoryPoint at ``off``: its sequences' lengths and the offsets of their length fields, the
    offset of time_from_start, that time [s] and the offset after the point."""
    counts, at = [], []
    for _ in range(_N_SEQ):
        off = _align(off, 4)
        (n,) = _U32.unpack_from(data, off)
        counts.append(n)
        at.append(off)
        off += 4
        if n:
            off = _align(off, 8) + 8 * n
    off = _align(off, 4)
    sec, nanosec = _TIME.unpack_from(data, off)
    return counts, at, off, sec + nanosec * 1e-9, off + 8


def _values(data: bytes, len_at: int, n: int) -> np.ndarray:
    """The ``n`` float64 after the sequence length field at ``len_at``."""
    return np.frombuffer(data, "<f8", n, _align(len_at + 4, 8)) if n else np.empty(0)


def read_trajectory(data: bytes) -> RawPoints:
    """The fields of a serialized (little-endian CDR) JointTrajectory, without building its message objects.
    Points laid out as point 1 (same lengths: a walk node's message) are read through strided numpy views, their
    length fields checked at every point; any other layout point by point. ValueError for bytes that are not
    such a message."""
    try:
        return _read(bytes(data))
    except (struct.error, UnicodeDecodeError, ValueError) as e:
        raise ValueError(f"not a serialized JointTrajectory ({len(data)} bytes: {e})") from None


_last_names: list = [b"", []]  # the last joint-name block read (its bytes, the names): a walk node sends the same


def _names(data: bytes, off: int) -> tuple[list[str], int]:
    """joint_names (string[]) at ``off`` and the offset after them."""
    block, names = _last_names
    if block and data.startswith(block, off):
        return list(names), off + len(block)
    start = off
    (m,) = _U32.unpack_from(data, off)
    off += 4
    names = []
    for _ in range(m):
        off = _align(off, 4)
        (n,) = _U32.unpack_from(data, off)
        if not 0 < n <= len(data) - off - 4 or data[off + 3 + n]:  # the length counts the NUL ending the text
            raise ValueError(f"joint name {len(names)}: {n} bytes without their NUL at byte {off + 3 + n}")
        names.append(data[off + 4 : off + 3 + n].decode())
        off += 4 + n
    _last_names[:] = data[start:off], names
    return list(names), off


def _read(data: bytes) -> RawPoints:
    if data[:2] != b"\x00\x01":
        raise ValueError("not little-endian CDR")
    sec, nanosec = _TIME.unpack_from(data, 4)
    stamp = sec + nanosec * 1e-9
    (n,) = _U32.unpack_from(data, 12)
    off = _align(16 + n, 4)  # after header.frame_id
    names, off = _names(data, off)
    off = _align(off, 4)
    (p,) = _U32.unpack_from(data, off)
    off += 4
    if 24 * p > len(data) - off:  # a point is at least 4 lengths and a time_from_start
        raise ValueError(f"{p} points announced")
    times, counts = np.empty(p), np.empty((p, _N_SEQ), dtype=np.int64)
    heads: list[tuple[int, list[int], list[int], int]] = []  # per point read one by one: start, counts, at, t_at
    strided = 0  # points read through the views (from point 1)

    def one(k: int, off: int) -> int:
        c, at, t_at, times[k], end = _point(data, off)
        counts[k] = c
        heads.append((off, c, at, t_at))
        return end

    for k in range(min(p, 2)):
        off = one(k, off)
    if p > 2:
        start1, c1, at1, t_at1 = heads[1]
        stride = off - start1
        if stride % 8 == 0 and start1 + p * stride - stride <= len(data):  # (else point 1 and 2 align differently)
            words = np.ndarray((p - 2, stride // 4), "<u4", data, off, (stride, 4))  # points 2.. as rows
            if (words[:, [(a - start1) // 4 for a in at1]] == c1).all():  # every length field where point 1 has it
                strided = p - 1
                counts[2:] = c1
                w = (t_at1 - start1) // 4
                times[2:] = words[:, w].view("<i4") + words[:, w + 1] * 1e-9
        if not strided:
            for k in range(2, p):
                off = one(k, off)
    rows: list = []
    for f in range(3):
        listed = [_values(data, h[2][f], h[1][f]) for h in heads[: p - strided]]
        if strided:
            c = int(counts[1, f])
            block = np.ndarray((strided, c), "<f8", data, _align(at1[f] + 4, 8), (stride, 8))
            if counts[0, f] == c:
                rows.append(np.concatenate([listed[0][None, :], block]))
                continue
            listed.extend(block)
        rows.append(listed)
    return RawPoints(names, stamp, times, counts[:, :3], tuple(rows))
