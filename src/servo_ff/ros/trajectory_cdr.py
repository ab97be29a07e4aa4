"""A JointTrajectory of a fixed shape (joint names, number of points, positions, velocities and accelerations of
every joint) serialized once: per publish only the stamp, the points' ``time_from_start`` and the three (P, J)
float64 blocks are written into the bytes through strided numpy views (a walk node's message of 52 points × 20
joints: ≈ 2 ms of JointTrajectoryPoint objects and lists → a few µs of array copies). The bytes are exactly what
rclpy would serialize (``test_nodes_cdr_template.py`` deserializes them back)."""

from __future__ import annotations

import struct
from collections.abc import Sequence

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
