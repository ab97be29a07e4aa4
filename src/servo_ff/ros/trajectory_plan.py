"""JointTrajectory → the spline a servo interface follows, with the semantics of ros2_controllers'
JointTrajectoryController (Jazzy; :mod:`servo_ff.interpolation`): taken on receipt, interpolated from the state
then to its first point at ``header.stamp + time_from_start`` and on through the points; refused whole with one
reason naming the point and joint."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np
from trajectory_msgs.msg import JointTrajectory

from servo_ff.interpolation import JointSpline
from servo_ff.trajectory_receipt import on_receipt

from .common import GoalGate
from .joint_command_cdr import deserialized
from .trajectory_cdr import RawPoints, read_trajectory


class ActiveTrajectory:
    """A JointTrajectory being followed: the spline over every joint, followed from ``received`` [s, node clock]
    (its receipt), its points timed from ``start`` (``header.stamp``, or the receipt when 0)."""

    def __init__(
        self, start: float, spline: JointSpline, joints: Sequence[str], source: str = "trajectory", received=None
    ):
        self.start, self.spline, self.joints = start, spline, list(joints)
        self.received = start if received is None else float(received)
        self.source = source  # the topic or action it came on (for the lines about it)

    @property
    def end(self) -> float:
        return self.spline.end_time


class TrajectoryPoints(NamedTuple):
    """A JointTrajectory's points as arrays over the M joints it names (P points)."""

    names: list[str]
    cols: np.ndarray  # (M,) each named joint's index in the receiver's joint order
    times: np.ndarray  # (P,) time_from_start [s], strictly increasing
    q: np.ndarray  # (P, M) [rad]
    dq: np.ndarray  # (P, M) [rad/s], 0 where a point gives none
    ddq: np.ndarray  # (P, M) [rad/s²], 0 where a point gives none
    has_dq: np.ndarray  # (P,) bool
    has_ddq: np.ndarray  # (P,) bool
    stamp: float  # header.stamp [s] (0: start on reception)


_FIELDS = ("positions", "velocities", "accelerations")


def raw_points(msg: JointTrajectory | bytes) -> RawPoints:
    """The fields of a JointTrajectory message, or of its serialized bytes (a ``raw=True`` subscription:
    :func:`.trajectory_cdr.read_trajectory`, no message objects built), before any check."""
    if isinstance(msg, (bytes, bytearray, memoryview)):
        if bytes(msg[:2]) == b"\x00\x01":  # little-endian CDR (XCDR1): read in place
            return read_trajectory(msg)
        msg = deserialized(msg, JointTrajectory)  # any other encoding an rmw may use: rclpy's message
    fields = [(pt.positions, pt.velocities, pt.accelerations, pt.time_from_start) for pt in msg.points]
    q, dq, ddq, tfs = zip(*fields) if fields else ((), (), (), ())
    counts = np.array([[len(a), len(b), len(c)] for a, b, c, _ in fields], dtype=np.int64).reshape(-1, 3)
    sec = np.array([d.sec for d in tfs], dtype=np.int64)
    nanosec = np.array([d.nanosec for d in tfs], dtype=np.int64)
    stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
    return RawPoints(list(msg.joint_names), stamp, sec + nanosec * 1e-9, counts, (q, dq, ddq))


def _stacked(rows, n: int, given: np.ndarray) -> np.ndarray:
    """(P, n) float array of ``rows`` (a (P, n) array, or P sequences of n values or none: zeros where not
    ``given``)."""
    out = np.zeros((len(given), n))
    k = np.flatnonzero(given)
    if k.size == len(given) and isinstance(rows, np.ndarray):
        out[:] = rows
    elif k.size:
        out[k] = np.array([rows[i] for i in k], dtype=np.float64).reshape(k.size, n)
    return out


def trajectory_points(msg: JointTrajectory | bytes, index: Mapping[str, int]) -> TrajectoryPoints:
    """The points of ``msg`` (a JointTrajectory or its serialized bytes) for a receiver whose joints are ``index``
    (name → column), checked whole: known, distinct joint names; per point as many positions as names and as many
    velocities / accelerations or none; finite values; strictly increasing times. ValueError naming the point and
    joint otherwise. Vectorised over the points (no per-point Python loop on serialized bytes)."""
    raw = raw_points(msg)
    names, counts, times = raw.names, raw.counts, raw.times
    if not len(times):
        raise ValueError("trajectory has no points")
    unknown = [n for n in names if n not in index]
    if unknown or not names:
        raise ValueError(
            f"unknown joint name(s) {', '.join(map(repr, unknown)) or '(none given)'}; known: {', '.join(index)}"
        )
    if len(set(names)) != len(names):
        raise ValueError("duplicate joint names")
    m = len(names)
    bad = counts != m
    bad[:, 1:] &= counts[:, 1:] != 0  # velocities, accelerations: as many as names, or none
    if bad.any():
        k, f = np.argwhere(bad)[0]  # the first point, then its first field (positions, velocities, accelerations)
        field = _FIELDS[f]
        raise ValueError(f"point {k} has {counts[k, f]} {field} for {m} joints")
    hv, ha = counts[:, 1] > 0, counts[:, 2] > 0
    q = _stacked(raw.rows[0], m, np.ones(len(times), dtype=bool))
    dq, ddq = _stacked(raw.rows[1], m, hv), _stacked(raw.rows[2], m, ha)
    for field, arr in (("position", q), ("velocity", dq), ("acceleration", ddq)):
        bad = ~np.isfinite(arr)
        if bad.any():
            k, j = np.argwhere(bad)[0]
            raise ValueError(f"point {k} {field} of {names[j]} is {arr[k, j]} (not finite)")
    if len(times) > 1 and not (np.diff(times) > 0).all():
        k = int(np.argmax(np.diff(times) <= 0)) + 1
        raise ValueError(f"time_from_start is not increasing: point {k} at {times[k]:g} s after {times[k - 1]:g} s")
    cols = np.array([index[n] for n in names], dtype=int)
    return TrajectoryPoints(names, cols, times, q, dq, ddq, hv, ha, raw.stamp)


def _when(t: float, start: float) -> str:
    """Time ``t`` [s] on a trajectory starting at ``start``, said from its start (before it: on the way there from
    the state on receipt)."""
    return f"{t - start:.3f} s" if t >= start else f"{start - t:.3f} s before its start"


def plan_trajectory(
    msg: JointTrajectory,
    now: float,
    gate: GoalGate,
    joints: Sequence[str],
    current: ActiveTrajectory | None,
) -> ActiveTrajectory:
    """Validated JointTrajectory received at ``now`` [s] → the spline followed from then on, replacing ``current``
    (the trajectory followed now; None: the held goal, at rest) on receipt, as JointTrajectoryController does
    (``topic_callback`` → ``add_new_trajectory_msg``; the next update sets ``state_before_traj_msg_`` and
    ``Trajectory::sample`` interpolates from it to the first point until ``stamp + time_from_start[0]``): from
    the state followed at ``now`` (q, q̇, q̈; joints it does not name held at rest) to the first point at
    ``start + time_from_start[0]`` when that is later than ``now`` (a future stamp included: nothing waits for it),
    else through the points alone (the ones due before ``now`` are past). ValueError naming the point and joint
    for anything it refuses, the interpolated path leaving the joint limits included. The spline:
    :func:`servo_ff.trajectory_receipt.on_receipt`, which the rosbag replay follows too."""
    names, cols, times, q, dq, ddq, hv, ha, stamp = trajectory_points(msg, gate.index)
    lo, hi = gate.lower[cols], gate.upper[cols]
    out = (q < lo) | (q > hi)
    if out.any():
        k, j = np.argwhere(out)[0]
        raise ValueError(
            f"point {k}: {names[j]}={q[k, j]:.4f} rad is outside its joint limits [{lo[j]:.4f}, {hi[j]:.4f}] rad"
        )
    start = stamp if stamp > 0 else now
    if start + times[-1] < now:
        raise ValueError(f"it ended {now - start - times[-1]:.3f} s ago (header.stamp {stamp:.3f} s)")
    # the state on receipt: the trajectory followed now, else the held goal at rest
    if current is not None:
        state = current.spline.sample(now)
    else:
        state = gate.goal.copy(), np.zeros(len(joints)), np.zeros(len(joints))
    ahead = (start - now) + times  # the points' times after receipt [s]
    with np.errstate(over="ignore", invalid="ignore"):  # a path that overflows is refused below, not warned about
        spline = on_receipt(now, state, cols, ahead, q, dq, ddq, hv, ha)
        where = spline.outside(gate.lower, gate.upper)
    if where is not None:
        j, t, qv = where
        if not np.isfinite(qv):
            raise ValueError(
                f"the interpolated path of {joints[j]} is not finite from {_when(t, start)} on (velocities or "
                "accelerations too large for the points' times)"
            )
        raise ValueError(
            f"the interpolated path of {joints[j]} reaches {qv:.4f} rad at "
            f"{_when(t, start)}, outside its joint limits [{gate.lower[j]:.4f}, "
            f"{gate.upper[j]:.4f}] rad"
        )
    return ActiveTrajectory(start, spline, names, received=now)
