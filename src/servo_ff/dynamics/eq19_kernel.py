"""Seed 002's Eq. 19 and the clamp to the joint limits in one compiled loop over the joints: the fast path of
:meth:`servo_ff.dynamics.feedforward.FeedForwardController.tick` (about twenty numpy calls on 20-element arrays
cost more than the formula). The formula is :func:`servo_ff.models.schwarz_behnke.goal_position_from_torque`'s;
any non-finite result or k_P·U_bat ≤ 0 sends the caller back to that function, which names the bad input.
Without numba, :data:`eq19_clamped` is None and the caller keeps the numpy path.
"""

from __future__ import annotations

import math

import numpy as np

from .. import numba_cache

try:  # pragma: no cover - exercised through eq19_clamped
    import numba

    numba_cache.install()
except ImportError:  # pragma: no cover
    numba = None


def _eq19_clamped(q, tau, dq, ddq, alpha, with_a4, kp, u_bat, dq_s, delta, lo, hi, goal, out, counts) -> int:
    """goal = q + (α0 τ + α1 q̇ + sgn(q̇)(α2(1 − β) + α3 β) [+ α4 q̈]) / (k_P U_bat), β = exp(−|q̇/q̇_s|^δ) [rad];
    out = goal clamped to [lo, hi]; ``counts`` (int64) +1 for each joint clamped. Returns the number of joints
    whose count became a power of two (1, 2, 4, …: to log), or −1 if a goal is non-finite or a gain k_P·U_bat is
    not > 0 (``out`` is then not to be used, ``counts`` untouched)."""
    for i in range(q.shape[0]):
        gain = kp[i] * u_bat
        d = dq[i]
        s = 1.0 if d > 0.0 else (-1.0 if d < 0.0 else 0.0)
        beta = math.exp(-(abs(d / dq_s[i]) ** delta[i]))
        u = alpha[i, 0] * tau[i] + alpha[i, 1] * d + s * (alpha[i, 2] * (1.0 - beta) + alpha[i, 3] * beta)
        if with_a4:
            u = u + alpha[i, 4] * ddq[i]
        g = q[i] + u / gain
        if not (math.isfinite(g) and gain > 0.0):
            return -1
        goal[i] = g
        out[i] = min(max(g, lo[i]), hi[i])
    to_log = 0
    for i in range(q.shape[0]):
        if out[i] != goal[i]:
            c = counts[i] + 1
            counts[i] = c
            to_log += (c & (c - 1)) == 0
    return to_log


eq19_clamped = numba.njit(cache=True, nogil=True, error_model="numpy")(_eq19_clamped) if numba is not None else None


def warm_up() -> None:
    """Compile / load the kernel (a first call inside a control loop would stall it)."""
    if eq19_clamped is not None:
        z = np.zeros(1)
        args = (z, z, z, z, np.zeros((1, 5)), True, np.ones(1), 1.0, np.ones(1), np.ones(1), z, z, z.copy(), z.copy())
        eq19_clamped(*args, np.zeros(1, dtype=np.int64))
