"""The desired trajectory the feed-forward node follows: a JointTrajectory (positions, velocities, accelerations
over ``time_from_start``) checked whole and sampled at the node's time."""

from __future__ import annotations

import numpy as np
from trajectory_msgs.msg import JointTrajectory

from servo_ff.interpolation import JointSpline


class DesiredTrajectory:
    """A JointTrajectory in robot joint order: times (P,), q, q̇, q̈ (P, J), mask of the joints it names.

    Sampled with the servo nodes' interpolation (:class:`servo_ff.interpolation.JointSpline`,
    JointTrajectoryController semantics): quintic between points giving velocities and accelerations, cubic
    with velocities, linear otherwise; the first point before it starts, the last point at rest after it."""

    def __init__(
        self,
        t0: float,
        times: np.ndarray,
        q: np.ndarray,
        dq: np.ndarray,
        ddq: np.ndarray,
        columns: np.ndarray,
        has_dq: np.ndarray | None = None,
        has_ddq: np.ndarray | None = None,
    ):
        self.t0, self.times, self.q, self.dq, self.ddq, self.columns = t0, times, q, dq, ddq, columns
        self.spline = JointSpline(times, q, dq, ddq, has_dq, has_ddq)

    def sample(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q, q̇, q̈) at ``t`` [s, same clock as t0]."""
        return self.spline.sample(t - self.t0)


def parse_trajectory(msg: JointTrajectory, index: dict[str, int], t_now: float, bounds=None) -> DesiredTrajectory:
    """Validated :class:`DesiredTrajectory` or ValueError naming the problem (joint, point, field).

    ``bounds`` = (|q̇| bounds, |q̈| bounds, velocity-bound sources), per joint in ``index`` order
    (:func:`servo_ff.dynamics.feedforward.desired_motion_bounds`): values beyond them are refused."""
    names = list(msg.joint_names)
    if not msg.points:
        raise ValueError("trajectory has no points")
    unknown = [n for n in names if n not in index]
    if unknown:
        raise ValueError(f"unknown joint name(s) {unknown}; the robot's joints: {', '.join(index)}")
    if len(set(names)) != len(names):
        raise ValueError("duplicate joint names")
    n, p = len(names), len(msg.points)
    q = np.empty((p, n))
    dq = np.zeros((p, n))
    ddq = np.zeros((p, n))
    times = np.empty(p)
    has = {"velocities": np.zeros(p, dtype=bool), "accelerations": np.zeros(p, dtype=bool)}
    for k, pt in enumerate(msg.points):
        if len(pt.positions) != n:
            raise ValueError(f"point {k} has {len(pt.positions)} positions for {n} joints")
        q[k] = pt.positions
        for arr, field, vals in ((dq, "velocities", pt.velocities), (ddq, "accelerations", pt.accelerations)):
            if len(vals) not in (0, n):
                raise ValueError(f"point {k} has {len(vals)} {field} for {n} joints")
            if len(vals):
                arr[k] = vals
                has[field][k] = True
        times[k] = pt.time_from_start.sec + pt.time_from_start.nanosec * 1e-9
    for name, arr in (("positions", q), ("velocities", dq), ("accelerations", ddq)):
        bad = ~np.isfinite(arr)
        if bad.any():
            k, j = np.argwhere(bad)[0]
            raise ValueError(f"point {k} {name} of {names[j]} is {arr[k, j]} (not finite)")
    cols = np.array([index[nm] for nm in names], dtype=int)
    if bounds is not None:
        from servo_ff.dynamics.feedforward import check_desired_motion

        vmax, amax, vsource = bounds
        reason = check_desired_motion(dq, ddq, vmax[cols], amax[cols], names, [vsource[c] for c in cols])
        if reason:
            raise ValueError(reason)
    if p > 1 and not (np.diff(times) > 0).all():
        raise ValueError("time_from_start must increase strictly from point to point")
    stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
    return DesiredTrajectory(
        stamp if stamp > 0 else t_now, times, q, dq, ddq, cols, has["velocities"], has["accelerations"]
    )
