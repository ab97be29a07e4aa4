"""The desired trajectory the feed-forward node follows: a JointTrajectory (positions, velocities, accelerations
over ``time_from_start``) checked whole and sampled at the node's time."""

from __future__ import annotations

import numpy as np
from trajectory_msgs.msg import JointTrajectory

from servo_ff.interpolation import JointSpline

from .trajectory_plan import trajectory_points


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


def parse_trajectory(
    msg: JointTrajectory | bytes, index: dict[str, int], t_now: float, bounds=None
) -> DesiredTrajectory:
    """Validated :class:`DesiredTrajectory` of a JointTrajectory or its serialized bytes (the points checked as the
    servo nodes check them, :func:`.trajectory_plan.trajectory_points`) or ValueError naming the problem (joint,
    point, field).

    ``bounds`` = (|q̇| bounds, |q̈| bounds, velocity-bound sources), per joint in ``index`` order
    (:func:`servo_ff.dynamics.feedforward.desired_motion_bounds`): values beyond them are refused."""
    names, cols, times, q, dq, ddq, has_dq, has_ddq, stamp = trajectory_points(msg, index)
    if bounds is not None:
        from servo_ff.dynamics.feedforward import check_desired_motion

        vmax, amax, vsource = bounds
        reason = check_desired_motion(dq, ddq, vmax[cols], amax[cols], names, [vsource[c] for c in cols])
        if reason:
            raise ValueError(reason)
    return DesiredTrajectory(stamp if stamp > 0 else t_now, times, q, dq, ddq, cols, has_dq, has_ddq)
