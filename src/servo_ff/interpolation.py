"""Joint trajectory interpolation with ros2_control JointTrajectoryController semantics (ROS-free).

A :class:`JointSpline` goes through knots (time, q, and optionally q̇, q̈ per knot); each segment between two
knots is

* **quintic** when both knots give velocities and accelerations (position, velocity and acceleration continuous),
* **cubic** when both give velocities (Hermite: position and velocity continuous),
* **linear** otherwise (velocity = the slope, acceleration 0).

Before the first knot the first knot is held (with its velocity and acceleration when given), after the last
knot its position is held at rest. :func:`follow` builds the spline a servo follows: from the current state at
the trajectory's start time to the points at their ``time_from_start``; :mod:`servo_ff.trajectory_receipt` takes a
JointTrajectory on receipt with it (the servo nodes and the rosbag replay). The feed-forward node's desired
trajectory uses the same spline.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from math import comb

import numpy as np

LINEAR, CUBIC, QUINTIC = "linear", "cubic", "quintic"
LIMIT_TOL = 1e-9  # [rad] a path this close beyond a limit is at it (the polynomials' rounding), not beyond


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

        self.coefficients = _coefficients(self.times, self.q, self.dq, self.ddq, self.has_dq, self.has_ddq)
        self._position_coefficients = np.ascontiguousarray(self.coefficients[:, :, : self.q.shape[1]])
        self._knots = self.times.tolist()

    @property
    def n_joints(self) -> int:
        return self.q.shape[1]

    @property
    def end_time(self) -> float:
        return self._knots[-1]

    def kind(self, k: int) -> str:
        """Interpolation of segment k (knot k → k + 1)."""
        return _kind(bool(self.has_dq[k] and self.has_dq[k + 1]), bool(self.has_ddq[k] and self.has_ddq[k + 1]))

    def sample(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q, q̇, q̈) at time ``t`` (same time base as ``times``)."""
        times = self.times
        if t <= times[0]:
            return self.q[0].copy(), self.dq[0].copy(), self.ddq[0].copy()
        if t >= times[-1]:
            return self.q[-1].copy(), np.zeros(self.n_joints), np.zeros(self.n_joints)
        k = bisect_right(self._knots, t) - 1  # (on a list: a tenth of np.searchsorted's call)
        s = t - times[k]
        out = _powers(s) @ self.coefficients[k]  # (3 J,): q, q̇, q̈ side by side
        j = self.q.shape[1]
        return out[:j], out[j : 2 * j], out[2 * j :]

    def end_state(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q, q̇, q̈) where the last segment ends (its left limit; the knot's, with one knot): what :meth:`sample`
        gives just before the end, where it then holds the last position at rest."""
        if self.times.size == 1:
            return self.q[0].copy(), self.dq[0].copy(), self.ddq[0].copy()
        out = _powers(float(self.times[-1] - self.times[-2])) @ self.coefficients[-1]
        j = self.q.shape[1]
        return out[:j], out[j : 2 * j], out[2 * j :]

    def position(self, t: float) -> np.ndarray:
        """q at time ``t`` [rad] (what a servo is sent each control period; one product, no derivatives)."""
        knots = self._knots  # floats: bisect and the bounds without numpy scalars (≈ 1.5 µs of a sim period)
        if t <= knots[0]:
            return self.q[0].copy()
        if t >= knots[-1]:
            return self.q[-1].copy()
        k = bisect_right(knots, t) - 1
        return _powers(t - knots[k]) @ self._position_coefficients[k]

    def positions(self, ts: np.ndarray) -> np.ndarray:
        """q (N, J) at the times ``ts`` (N,), in one pass over the arrays."""
        ts = np.asarray(ts, dtype=np.float64).reshape(-1)
        out = np.empty((ts.size, self.n_joints))
        before, after = ts <= self.times[0], ts >= self.times[-1]
        out[before], out[after] = self.q[0], self.q[-1]
        inside = ~(before | after)
        if inside.any():
            t = ts[inside]
            k = np.searchsorted(self.times, t, side="right") - 1
            s = (t - self.times[k])[:, None]
            c = self._position_coefficients  # c0..c5 of each segment
            q = c[k, 5]
            for i in range(4, -1, -1):  # Horner
                q = q * s + c[k, i]
            out[inside] = q
        return out

    def outside(
        self, lower: np.ndarray, upper: np.ndarray, columns: np.ndarray | None = None
    ) -> tuple[int, float, float] | None:
        """(joint column, time, position) of the earliest point where the interpolated path is beyond [lower,
        upper] by more than :data:`LIMIT_TOL` among each segment's extreme points (:func:`extreme_points`), or
        None: exact, not sampled — the path leaves the limits iff one of them lies beyond, and the one named is a
        peak (or a knot) beyond the limit, at or after where the path crosses it; position NaN: the path is not
        finite from that segment's start on (velocities or accelerations too large for its duration). ``columns``
        maps spline joints to entries of ``lower``/``upper``."""
        cols = np.arange(self.n_joints) if columns is None else np.asarray(columns)
        lo, hi = np.asarray(lower, dtype=np.float64)[cols], np.asarray(upper, dtype=np.float64)[cols]
        tol = LIMIT_TOL
        if self.times.size == 1:
            bad = (self.q[0] < lo - tol) | (self.q[0] > hi + tol)
            if not bad.any():
                return None
            j = int(np.argmax(bad))
            return j, float(self.times[0]), float(self.q[0, j])
        T = np.diff(self.times)
        b = unit_coefficients(self._position_coefficients, T)  # (S, J, 6)
        enclosure_lo, enclosure_hi = bernstein_enclosure(b)  # most segments end here: inside, no roots sought
        k, j = np.nonzero(~np.isfinite(enclosure_lo) | ~np.isfinite(enclosure_hi))  # velocities or accelerations
        if k.size:  # too large for the segment's duration: a path beyond any limit (NaN compares False: never)
            return int(j[0]), float(self.times[k[0]]), np.nan
        k, j = np.nonzero((enclosure_lo < lo - tol) | (enclosure_hi > hi + tol))
        if k.size == 0:
            return None
        u, q = extreme_points(b[k, j])
        bad = (q < lo[j, None] - tol) | (q > hi[j, None] + tol)
        if not bad.any():
            return None
        t = self.times[k, None] + u * T[k, None]
        row, c = np.unravel_index(int(np.argmin(np.where(bad, t, np.inf))), bad.shape)
        return int(j[row]), float(t[row, c]), float(q[row, c])


def unit_coefficients(c: np.ndarray, T: np.ndarray) -> np.ndarray:
    """(S, J, 6) b with q_k(u T_k) = Σ_i b[k, j, i] uⁱ, u ∈ [0, 1], from the (S, 6, J) c of q_k(s) = Σ_i c_i sⁱ."""
    return (c * (T[:, None, None] ** np.arange(6.0)[None, :, None])).transpose(0, 2, 1)


# Bernstein coefficients of a degree-5 polynomial from its monomial ones: β_k = Σ_{i ≤ k} C(k, i) / C(5, i) b_i
_TO_BERNSTEIN = np.array([[comb(k, i) / comb(5, i) if i <= k else 0.0 for k in range(6)] for i in range(6)])


def bernstein_enclosure(b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(lowest, highest) Bernstein coefficient of each q(u) = Σ b_i uⁱ: q over u ∈ [0, 1] lies between them (the
    convex-hull property), so a polynomial whose enclosure is within the limits stays within them."""
    beta = b @ _TO_BERNSTEIN
    return beta.min(axis=-1), beta.max(axis=-1)


def extreme_points(b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every u ∈ [0, 1] where q(u) = Σ_i b[r, i] uⁱ (R, 6) can be extreme, with q there: (u, q) of shape (R, 6) —
    both ends and the real parts of the roots of q'(u) (degree ≤ 4) inside (0, 1), NaN where there are fewer.
    The highest and lowest q are the polynomial's own, up to the eigenvalues' rounding, not a sampled
    approximation. Roots: eigenvalues of the companion matrices, batched per degree."""
    d = b[:, 1:] * np.arange(1.0, 6.0)  # q'(u) = Σ_m d_m u^m
    significant = np.abs(d) > 1e-12 * np.abs(d).max(axis=1, keepdims=True)
    degree = np.where(significant.any(axis=1), 4 - np.argmax(significant[:, ::-1], axis=1), 0)
    u = np.full((b.shape[0], 6), np.nan)
    u[:, 0], u[:, 1] = 0.0, 1.0
    for m in range(1, 5):
        rows = np.flatnonzero(degree == m)
        if rows.size == 0:
            continue
        companion = np.zeros((rows.size, m, m))
        companion[:, 0, :] = -(d[rows, :m] / d[rows, m : m + 1])[:, ::-1]  # monic: a_{m−1} … a_0
        companion[:, np.arange(1, m), np.arange(m - 1)] = 1.0
        r = np.linalg.eigvals(companion).real
        u[rows, 2 : 2 + m] = np.where((r > 0.0) & (r < 1.0), r, np.nan)
    q = np.zeros_like(u)
    for i in range(5, -1, -1):  # Horner in u, every candidate at once
        q = q * u + b[:, i, None]
    return u, q


def _kind(cubic: bool, quintic: bool) -> str:
    return QUINTIC if quintic else CUBIC if cubic else LINEAR


def _powers(s: float) -> np.ndarray:
    return np.array([1.0, s, s * s, s**3, s**4, s**5])


def _coefficients(times, q, dq, ddq, has_dq, has_ddq) -> np.ndarray:
    """Per segment k (S = P − 1), the (6, 3 J) matrix M_k with [1, s, …, s⁵] @ M_k = (q, q̇, q̈)(s) side by side,
    s = t − t_k: linear (slope), cubic Hermite (q, q̇ matched at both knots) or quintic (q, q̇, q̈ matched)."""
    p, j = q.shape
    m = np.zeros((max(p - 1, 0), 6, 3 * j))
    if p < 2:
        return m
    T = np.diff(times)[:, None]
    q0, q1, v0, v1, a0, a1 = q[:-1], q[1:], dq[:-1], dq[1:], ddq[:-1], ddq[1:]
    cubic = (has_dq[:-1] & has_dq[1:])[:, None]
    quintic = (has_ddq[:-1] & has_ddq[1:])[:, None]
    c = m[:, :, :j]  # c0..c5 written in place; every segment quintic (a walk node's message): its formulas only
    c[:, 0] = q0
    T2 = T**2
    if quintic.all():
        c[:, 1] = v0
        d = q1 - q0 - v0 * T - 0.5 * a0 * T2
        e = v1 - v0 - a0 * T
        f = a1 - a0
        c[:, 2] = 0.5 * a0
        c[:, 3] = (20 * d - 8 * e * T + f * T2) / (2 * T**3)
        c[:, 4] = (-30 * d + 14 * e * T - 2 * f * T2) / (2 * T**4)
        c[:, 5] = (12 * d - 6 * e * T + f * T2) / (2 * T**5)
    else:
        c[:, 1] = np.where(cubic, v0, (q1 - q0) / T)
        # cubic Hermite: c2, c3 from q and q̇ at both ends
        c2 = (3 * (q1 - q0) - (2 * v0 + v1) * T) / T2
        c3 = (-2 * (q1 - q0) + (v0 + v1) * T) / T**3
        # quintic: position, velocity and acceleration matched at both ends
        d = q1 - q0 - v0 * T - 0.5 * a0 * T2
        e = v1 - v0 - a0 * T
        f = a1 - a0
        c[:, 2] = np.where(quintic, 0.5 * a0, np.where(cubic, c2, 0.0))
        c[:, 3] = np.where(quintic, (20 * d - 8 * e * T + f * T2) / (2 * T**3), np.where(cubic, c3, 0.0))
        c[:, 4] = np.where(quintic, (-30 * d + 14 * e * T - 2 * f * T2) / (2 * T**4), 0.0)
        c[:, 5] = np.where(quintic, (12 * d - 6 * e * T + f * T2) / (2 * T**5), 0.0)
    # q̇ = Σ i c_i s^(i−1), q̈ = Σ i (i − 1) c_i s^(i−2)
    m[:, :5, j : 2 * j] = _D1 * c[:, 1:]
    m[:, :4, 2 * j :] = _D2 * c[:, 2:]
    return m


_D1 = np.arange(1.0, 6.0)[:, None]  # i for c1..c5
_D2 = (np.arange(2.0, 6.0) * np.arange(1.0, 5.0))[:, None]  # i (i − 1) for c2..c5


def knot_derivatives(q: np.ndarray, dt: float) -> tuple[np.ndarray, np.ndarray]:
    """(q̇ [rad/s], q̈ [rad/s²]) at the samples 2 … P + 1 of ``q`` (P + 4, J) [rad] on a uniform grid ``dt`` [s]:
    five-point central differences, exact for polynomials up to degree 4 (q̇) and 5 (q̈), so that the quintic
    through them gives a cubic's q̈ between the knots too. (Three-point ones err by dt²·q⃛/6 in q̇, which the
    quintic turns into a ripple of ± dt·q⃛ · 0.96 in q̈: ± 12.5 rad/s² at a knee's 1300 rad/s³ on a 10 ms grid.)"""
    q = np.asarray(q, dtype=np.float64)
    if q.ndim != 2 or q.shape[0] < 5:
        raise ValueError(f"knot_derivatives needs (P + 4, J) samples with P ≥ 1, got shape {q.shape}")
    a, b, c, d, e = q[:-4], q[1:-3], q[2:-2], q[3:-1], q[4:]
    return (a - 8.0 * b + 8.0 * d - e) / (12.0 * dt), (-a + 16.0 * b - 30.0 * c + 16.0 * d - e) / (12.0 * dt * dt)


def hold_within(x: np.ndarray, limit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``x`` (P, J) with each row (a knot) that has a value beyond its joint's ``limit`` (J,) [x's unit; inf: none]
    scaled as a whole so that the farthest one is at ±limit, and the number of values beyond per joint (J,); ``x``
    itself when none is. The whole row, not each value alone: clipping one joint breaks the linear relations between
    the joints' derivatives that the plan kept (the NimbRo-OP's stance leg: hip, knee and ankle pitch q̇ summing to
    zero, the trunk's pitch rate), which the floating-base inverse dynamics turns into a trunk acceleration (issue 21:
    the knee's q̇ clipped from 4.75 to 4.7 rad/s alone gave a Σq̈ of 94 rad/s² and an ankle τ of 91 N·m)."""
    over = np.abs(x) > limit
    if not over.any():
        return x, over.sum(axis=0)
    with np.errstate(divide="ignore"):
        ratio = np.where(over, limit / np.abs(x), 1.0)
    # x·(limit/|x|) can round one ulp beyond limit (1636.9616873214543 → 1000.0000000000001 at 1000), which the
    # feed-forward node's check (|q̈| ≤ bound) refuses: the scaled row clipped to ±limit moves it by that ulp at most
    return np.clip(x * ratio.min(axis=1, keepdims=True), -limit, limit), over.sum(axis=0)


def held_knot_derivatives(
    q: np.ndarray, dt: float, vmax: np.ndarray, amax: np.ndarray | float = np.inf
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`knot_derivatives` of ``q`` (P + 4, J) [rad] on the grid ``dt`` [s] with q̇ held at ±``vmax`` (J,)
    [rad/s] and q̈ at ±``amax`` [rad/s²] (:func:`hold_within`: a knot's q̇, or q̈, scaled as a whole): (q̇, q̈, q̇
    values beyond per joint, q̈ values beyond per joint). What the walk
    node publishes and ``walk_sim.desired_motion(…, "walk_node")`` samples, so that the feed-forward node refuses
    none of it: a plan that runs a joint at its velocity limit has five-point differences a little beyond it, and
    one whose joint alternates between two values from one sample to the next (placo's NimbRo-OP knee passing
    through straight) has a q̈ of 4·Δq/dt² there."""
    dq, ddq = knot_derivatives(q, dt)
    dq, v_held = hold_within(dq, vmax)
    ddq, a_held = hold_within(ddq, amax)
    return dq, ddq, v_held, a_held


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


__all__ = [
    "CUBIC",
    "LINEAR",
    "QUINTIC",
    "JointSpline",
    "follow",
    "held_knot_derivatives",
    "hold_within",
    "knot_derivatives",
]
