"""Joint trajectory interpolation with ros2_control JointTrajectoryController semantics (ROS-free).

A :class:`JointSpline` goes through knots (time, q, and optionally q̇, q̈ per knot); each segment between two
knots is

* **quintic** when both knots give velocities and accelerations (position, velocity and acceleration continuous),
* **cubic** when both give velocities (Hermite: position and velocity continuous),
* **linear** otherwise (velocity = the slope, acceleration 0).

Before the first knot the first knot is held (with its velocity and acceleration when given), after the last
knot its position is held at rest. :func:`follow` builds the spline a servo follows: from the current state at
the trajectory's start time to the points at their ``time_from_start``. The servo nodes
(:mod:`servo_ff.nodes.servo_base`) and the feed-forward node's desired trajectory use the same spline.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

LINEAR, CUBIC, QUINTIC = "linear", "cubic", "quintic"


class JointSpline:
    """Piecewise polynomial through ``times`` (P,) strictly increasing [s] and ``q`` (P, J) [rad].

    ``dq``/``ddq`` (P, J) with ``has_dq``/``has_ddq`` (P,) telling which knots give them (missing rows are
    ignored). Raises ValueError for non-increasing times, mismatched shapes or non-finite values."""

    def __init__(self, times: Sequence[float], q, dq=None, ddq=None, has_dq=None, has_ddq=None):
        self.times = np.asarray(times, dtype=np.float64).reshape(-1)
        self.q = np.atleast_2d(np.asarray(q, dtype=np.float64))
        p, j = self.q.shape
        if self.times.size != p or p == 0:
            raise ValueError(f"{self.times.size} times for {p} knots")
        self.dq = np.zeros((p, j)) if dq is None else np.asarray(dq, dtype=np.float64).reshape(p, j)
        self.ddq = np.zeros((p, j)) if ddq is None else np.asarray(ddq, dtype=np.float64).reshape(p, j)
        self.has_dq = np.full(p, dq is not None) if has_dq is None else np.asarray(has_dq, dtype=bool).reshape(p)
        self.has_ddq = np.full(p, ddq is not None) if has_ddq is None else np.asarray(has_ddq, dtype=bool).reshape(p)
        self.has_ddq &= self.has_dq  # accelerations without velocities: JTC interpolates linearly
        self.dq[~self.has_dq] = 0.0
        self.ddq[~self.has_ddq] = 0.0
        for name, a in (
            ("times", self.times),
            ("positions", self.q),
            ("velocities", self.dq),
            ("accelerations", self.ddq),
        ):
            if not np.isfinite(a).all():
                raise ValueError(f"{name} are not all finite")
        if p > 1 and not (np.diff(self.times) > 0).all():
            k = int(np.argmax(np.diff(self.times) <= 0))
            raise ValueError(
                f"time_from_start must increase strictly: point {k + 1} at {self.times[k + 1]:g} s "
                f"follows {self.times[k]:g} s"
            )

    @property
    def n_joints(self) -> int:
        return self.q.shape[1]

    @property
    def end_time(self) -> float:
        return float(self.times[-1])

    def kind(self, k: int) -> str:
        """Interpolation of segment k (knot k → k + 1)."""
        if self.has_ddq[k] and self.has_ddq[k + 1]:
            return QUINTIC
        if self.has_dq[k] and self.has_dq[k + 1]:
            return CUBIC
        return LINEAR

    def sample(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q, q̇, q̈) at time ``t`` (same time base as ``times``)."""
        times = self.times
        if t <= times[0]:
            return self.q[0].copy(), self.dq[0].copy(), self.ddq[0].copy()
        if t >= times[-1]:
            return self.q[-1].copy(), np.zeros(self.n_joints), np.zeros(self.n_joints)
        k = int(np.searchsorted(times, t, side="right")) - 1
        return _segment(
            self.kind(k),
            t - times[k],
            times[k + 1] - times[k],
            self.q[k],
            self.dq[k],
            self.ddq[k],
            self.q[k + 1],
            self.dq[k + 1],
            self.ddq[k + 1],
        )

    def grid(self, per_segment: int = 16) -> np.ndarray:
        """Sample times covering every segment (knots included), for limit checks of the interpolated path."""
        if self.times.size == 1:
            return self.times.copy()
        s = np.linspace(0.0, 1.0, per_segment + 1)[:-1]
        inner = (self.times[:-1, None] + s[None, :] * np.diff(self.times)[:, None]).reshape(-1)
        return np.append(inner, self.times[-1])

    def outside(
        self, lower: np.ndarray, upper: np.ndarray, columns: np.ndarray | None = None, per_segment: int = 16
    ) -> tuple[int, float, float] | None:
        """First (joint column, time, position) where the interpolated path leaves [lower, upper], or None.
        ``columns`` maps spline joints to entries of ``lower``/``upper``."""
        cols = np.arange(self.n_joints) if columns is None else np.asarray(columns)
        lo, hi = np.asarray(lower)[cols], np.asarray(upper)[cols]
        tol = 1e-9
        for t in self.grid(per_segment):
            q = self.sample(float(t))[0]
            bad = (q < lo - tol) | (q > hi + tol)
            if bad.any():
                j = int(np.argmax(bad))
                return j, float(t), float(q[j])
        return None


def _segment(kind: str, s: float, T: float, q0, v0, a0, q1, v1, a1):
    if kind == LINEAR:
        slope = (q1 - q0) / T
        return q0 + slope * s, slope.copy(), np.zeros_like(q0)
    if kind == CUBIC:  # Hermite: q(s) = c0 + c1 s + c2 s² + c3 s³
        c0, c1 = q0, v0
        c2 = (3 * (q1 - q0) - (2 * v0 + v1) * T) / T**2
        c3 = (-2 * (q1 - q0) + (v0 + v1) * T) / T**3
        return (c0 + c1 * s + c2 * s**2 + c3 * s**3, c1 + 2 * c2 * s + 3 * c3 * s**2, 2 * c2 + 6 * c3 * s)
    # quintic: position, velocity and acceleration matched at both ends
    c0, c1, c2 = q0, v0, 0.5 * a0
    d = q1 - q0 - v0 * T - 0.5 * a0 * T**2
    e = v1 - v0 - a0 * T
    f = a1 - a0
    c3 = (20 * d - 8 * e * T + f * T**2) / (2 * T**3)
    c4 = (-30 * d + 14 * e * T - 2 * f * T**2) / (2 * T**4)
    c5 = (12 * d - 6 * e * T + f * T**2) / (2 * T**5)
    q = c0 + c1 * s + c2 * s**2 + c3 * s**3 + c4 * s**4 + c5 * s**5
    dq = c1 + 2 * c2 * s + 3 * c3 * s**2 + 4 * c4 * s**3 + 5 * c5 * s**4
    ddq = 2 * c2 + 6 * c3 * s + 12 * c4 * s**2 + 20 * c5 * s**3
    return q, dq, ddq


def follow(
    t_start: float, q0, dq0, ddq0, times: Sequence[float], q, dq=None, ddq=None, has_dq=None, has_ddq=None
) -> JointSpline:
    """The spline a controller follows: the current state (q0, q̇0, q̈0) at ``t_start``, then the points at
    ``t_start + time_from_start`` (``times`` relative, strictly increasing). A first point at time 0 replaces
    the current state (no segment toward it), as in JointTrajectoryController."""
    times = np.asarray(times, dtype=np.float64).reshape(-1)
    q = np.atleast_2d(np.asarray(q, dtype=np.float64))
    p, j = q.shape
    dq_ = np.zeros((p, j)) if dq is None else np.asarray(dq, dtype=np.float64).reshape(p, j)
    ddq_ = np.zeros((p, j)) if ddq is None else np.asarray(ddq, dtype=np.float64).reshape(p, j)
    hv = np.full(p, dq is not None) if has_dq is None else np.asarray(has_dq, dtype=bool)
    ha = np.full(p, ddq is not None) if has_ddq is None else np.asarray(has_ddq, dtype=bool)
    if times.size and times[0] < 0:
        raise ValueError(f"time_from_start of point 0 is negative ({times[0]:g} s)")
    if times.size and times[0] == 0.0:
        return JointSpline(t_start + times, q, dq_, ddq_, hv, ha)
    start = np.asarray(q0, dtype=np.float64).reshape(1, j)
    return JointSpline(
        np.concatenate([[t_start], t_start + times]),
        np.vstack([start, q]),
        np.vstack([np.asarray(dq0, dtype=np.float64).reshape(1, j), dq_]),
        np.vstack([np.asarray(ddq0, dtype=np.float64).reshape(1, j), ddq_]),
        np.concatenate([[True], hv]),
        np.concatenate([[True], ha]),
    )


__all__ = ["CUBIC", "LINEAR", "QUINTIC", "JointSpline", "follow"]
