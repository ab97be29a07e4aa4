"""A JointTrajectory taken on receipt, as ros2_controllers' JointTrajectoryController (Jazzy) takes it (ROS-free):
the message replaces the trajectory in progress when it is received (``topic_callback`` → ``add_new_trajectory_msg``)
and is interpolated from the state followed then (``state_before_traj_msg_``) to its first point at
``header.stamp + time_from_start[0]`` (``Trajectory::sample``), whatever the stamp. One function,
:func:`on_receipt`, for the servo nodes (:func:`servo_ff.ros.trajectory_plan.plan_trajectory`) and the rosbag replay
(:class:`ReplacedTrajectories`, :func:`servo_ff.io.rosbag_goals.trajectory_goals`): both command the same goals for
the same messages received at the same times."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .interpolation import JointSpline, follow

#: [s] a first point due within this after receipt is due now: its time, stamp + time_from_start − receipt in float
#: seconds, rounds to ±1e-8 s at wall-clock stamps (1.8e9 s) and can come out just positive for a point due at the
#: receipt itself (a trajectory that arrived exactly one point late on a sim clock's 10 ms grid), a segment from
#: the state toward it then no longer than the float spacing of the receipt time: refused as times that do not
#: increase ("point 1 at 0.13 s follows 0.13 s", the ILC node's resent trial)
DUE = 1e-6


def on_receipt(
    now: float,
    state: tuple[np.ndarray, np.ndarray, np.ndarray],
    cols: np.ndarray,
    ahead: np.ndarray,
    q: np.ndarray,
    dq: np.ndarray,
    ddq: np.ndarray,
    has_dq: np.ndarray,
    has_ddq: np.ndarray,
) -> JointSpline:
    """The spline over J joints followed from ``now`` [s] when a trajectory is received while ``state`` (q, q̇, q̈)
    (J,) is followed. Its P points come ``ahead`` (P,) [s] after receipt (stamp + time_from_start − now; ≤ 0: due
    or past) with q, q̇, q̈ (P, M) for the joints ``cols`` (M,); the others hold their q at rest (JTC's
    ``fill_partial_goal``). From the state at ``now`` to the first point when ``ahead[0] >`` :data:`DUE`, else
    the points alone (a due first point replaces the state; the ones before ``now`` are past)."""
    q0, dq0, ddq0 = (np.array(a, dtype=np.float64).reshape(-1) for a in state)
    cols = np.asarray(cols, dtype=int).reshape(-1)
    ahead = np.asarray(ahead, dtype=np.float64).reshape(-1)
    p, j = ahead.size, q0.size
    held = np.setdiff1d(np.arange(j), cols)
    dq0[held] = 0.0
    ddq0[held] = 0.0
    Q, DQ, DDQ = np.tile(q0, (p, 1)), np.zeros((p, j)), np.zeros((p, j))
    Q[:, cols], DQ[:, cols], DDQ[:, cols] = (np.asarray(a, dtype=np.float64).reshape(p, -1) for a in (q, dq, ddq))
    if ahead[0] > DUE:
        return follow(now, q0, dq0, ddq0, ahead, Q, DQ, DDQ, has_dq, has_ddq)
    return JointSpline(now + ahead, Q, DQ, DDQ, has_dq, has_ddq)


class ReplacedTrajectories:
    """Trajectories received one after another, each replacing the one in progress on receipt (:func:`on_receipt`,
    from the state the old one has then). The first starts from ``q0`` at rest. Add them in order of receipt [s]."""

    def __init__(self, q0: Sequence[float] | np.ndarray):
        self.q0 = np.asarray(q0, dtype=np.float64).reshape(-1)
        self.starts: list[float] = []  # receipts [s]
        self.splines: list[JointSpline] = []

    def state(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q, q̇, q̈) followed at ``t`` (before the first receipt: ``q0`` at rest)."""
        k = int(np.searchsorted(self.starts, t, side="right")) - 1
        if k < 0:
            return self.q0.copy(), np.zeros_like(self.q0), np.zeros_like(self.q0)
        return self.splines[k].sample(t)

    def add(
        self, received: float, ahead, q, dq, ddq, has_dq, has_ddq, cols: Sequence[int] | np.ndarray | None = None
    ) -> None:
        """A trajectory received at ``received`` [s], its points ``ahead`` (P,) [s] after it, q, q̇, q̈ (P, M) of the
        joints ``cols`` (None: all), replacing the current one then (:func:`on_receipt`); no points: the joints hold
        the state they have then."""
        if self.starts and received < self.starts[-1]:
            raise ValueError(f"trajectory received at {received:g} s added after one at {self.starts[-1]:g} s")
        state = self.state(received)
        if len(ahead) == 0:
            spline = JointSpline([received], state[0][None, :])
        else:
            cols = np.arange(self.q0.size) if cols is None else np.asarray(cols, dtype=int)
            spline = on_receipt(received, state, cols, np.asarray(ahead), q, dq, ddq, has_dq, has_ddq)
        self.starts.append(float(received))
        self.splines.append(spline)

    def positions(self, ts: np.ndarray) -> np.ndarray:
        """q (N, J) followed at the times ``ts`` (N,)."""
        ts = np.asarray(ts, dtype=np.float64).reshape(-1)
        out = np.tile(self.q0, (ts.size, 1))
        k = np.searchsorted(self.starts, ts, side="right") - 1
        order = np.argsort(k, kind="stable")  # one pass per trajectory over its own samples
        for sel in np.split(order, np.flatnonzero(np.diff(k[order])) + 1):
            if sel.size and k[sel[0]] >= 0:
                out[sel] = self.splines[k[sel[0]]].positions(ts[sel])
        return out


__all__ = ["DUE", "ReplacedTrajectories", "on_receipt"]
