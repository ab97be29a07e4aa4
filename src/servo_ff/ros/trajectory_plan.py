"""JointTrajectory → the spline a servo interface follows, with JointTrajectoryController semantics
(:mod:`servo_ff.interpolation`): interpolation over ``time_from_start`` from the current state, refused whole
with one reason naming the point and joint."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np
from trajectory_msgs.msg import JointTrajectory

from servo_ff.interpolation import JointSpline, follow

from .common import GoalGate


class ActiveTrajectory:
    """A JointTrajectory being followed: the spline over every joint, from ``start`` [s, node clock]."""

    def __init__(self, start: float, spline: JointSpline, joints: Sequence[str]):
        self.start, self.spline, self.joints = start, spline, list(joints)

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


def trajectory_points(msg: JointTrajectory, index: Mapping[str, int]) -> TrajectoryPoints:
    """The points of ``msg`` for a receiver whose joints are ``index`` (name → column), checked whole: known,
    distinct joint names; per point as many positions as names and as many velocities / accelerations or none;
    finite values; strictly increasing times. ValueError naming the point and joint otherwise."""
    names = list(msg.joint_names)
    if not msg.points:
        raise ValueError("trajectory has no points")
    unknown = [n for n in names if n not in index]
    if unknown or not names:
        raise ValueError(
            f"unknown joint name(s) {', '.join(map(repr, unknown)) or '(none given)'}; known: {', '.join(index)}"
        )
    if len(set(names)) != len(names):
        raise ValueError("duplicate joint names")
    m, p = len(names), len(msg.points)
    q, dq, ddq = np.empty((p, m)), np.zeros((p, m)), np.zeros((p, m))
    hv, ha = np.zeros(p, dtype=bool), np.zeros(p, dtype=bool)
    times = np.empty(p)
    for k, pt in enumerate(msg.points):
        if len(pt.positions) != m:
            raise ValueError(f"point {k} has {len(pt.positions)} positions for {m} joints")
        q[k] = pt.positions
        for arr, has, field, vals in (
            (dq, hv, "velocities", pt.velocities),
            (ddq, ha, "accelerations", pt.accelerations),
        ):
            if len(vals) not in (0, m):
                raise ValueError(f"point {k} has {len(vals)} {field} for {m} joints")
            if len(vals):
                arr[k], has[k] = vals, True
        times[k] = pt.time_from_start.sec + pt.time_from_start.nanosec * 1e-9
    for field, arr in (("position", q), ("velocity", dq), ("acceleration", ddq)):
        bad = ~np.isfinite(arr)
        if bad.any():
            k, j = np.argwhere(bad)[0]
            raise ValueError(f"point {k} {field} of {names[j]} is {arr[k, j]} (not finite)")
    if p > 1 and not (np.diff(times) > 0).all():
        k = int(np.argmax(np.diff(times) <= 0)) + 1
        raise ValueError(f"time_from_start is not increasing: point {k} at {times[k]:g} s after {times[k - 1]:g} s")
    cols = np.array([index[n] for n in names], dtype=int)
    stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
    return TrajectoryPoints(names, cols, times, q, dq, ddq, hv, ha, stamp)


def plan_trajectory(
    msg: JointTrajectory,
    now: float,
    gate: GoalGate,
    joints: Sequence[str],
    current: ActiveTrajectory | None,
) -> ActiveTrajectory:
    """Validated JointTrajectory → the spline followed from the current state (JointTrajectoryController
    semantics): ``current`` is the trajectory in progress at its start time (None: the held goal, at rest).
    ValueError naming the point and joint for anything it refuses."""
    names, cols, times, q, dq, ddq, hv, ha, stamp = trajectory_points(msg, gate.index)
    p = len(times)
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
    # the current state: the trajectory in progress at the start time, else the held goal at rest
    if current is not None:
        q0, dq0, ddq0 = current.spline.sample(start)
    else:
        q0, dq0, ddq0 = gate.goal.copy(), np.zeros(len(joints)), np.zeros(len(joints))
    held = np.setdiff1d(np.arange(len(joints)), cols)
    dq0[held] = 0.0
    ddq0[held] = 0.0
    Q, DQ, DDQ = np.tile(q0, (p, 1)), np.zeros((p, len(joints))), np.zeros((p, len(joints)))
    Q[:, cols], DQ[:, cols], DDQ[:, cols] = q, dq, ddq
    spline = follow(start, q0, dq0, ddq0, times, Q, DQ, DDQ, hv, ha)
    where = spline.outside(gate.lower, gate.upper)
    if where is not None:
        j, t, qv = where
        raise ValueError(
            f"the interpolated path of {joints[j]} reaches {qv:.4f} rad at "
            f"{t - start:.3f} s, outside its joint limits [{gate.lower[j]:.4f}, "
            f"{gate.upper[j]:.4f}] rad"
        )
    return ActiveTrajectory(start, spline, names)
