"""Fused batched kernels: Algorithm 1 (seed 004) over (batch, joints) arrays, compiled with numba.

The loop body is :func:`servo_ff.models.scalar.step_1` compiled in place, so the fused kernel and the
scalar reference share one formula. ``prange`` spreads the batch over the cores. If numba is missing,
:data:`HAVE_NUMBA` is False and :mod:`.stepper` falls back to numpy.
"""
from __future__ import annotations

import numpy as np

from . import scalar

try:  # pragma: no cover - exercised through HAVE_NUMBA
    import numba

    HAVE_NUMBA = True
except ImportError:  # pragma: no cover
    numba = None
    HAVE_NUMBA = False


#: Contract-only fast-math flags: allow FMA contraction and reciprocal math, but keep IEEE NaN/inf semantics.
FASTMATH = {"contract", "arcp", "afn"}


def _build():
    step1 = scalar.step_1

    @numba.njit(cache=True, nogil=True, parallel=True, fastmath=FASTMATH)
    def step_batch(theta, dtheta, goal, dt, p, gravity, tau_ext, inertia, enable,
                   o_theta, o_dtheta, o_tau_m, o_tau_f, o_volts):
        nb, nj = theta.shape
        for b in numba.prange(nb):
            for j in range(nj):
                r = step1(p[b, j], theta[b, j], dtheta[b, j], goal[b, j], dt, gravity[b, j], tau_ext[b, j],
                          inertia[b, j], enable[b, j])
                o_theta[b, j], o_dtheta[b, j], o_tau_m[b, j], o_tau_f[b, j], o_volts[b, j] = r

    @numba.njit(cache=True, nogil=True, parallel=True, fastmath=FASTMATH)
    def rollout_batch(theta0, dtheta0, goal, dt, p, gravity, tau_ext, inertia, enable,
                      o_theta, o_dtheta, o_tau_m, o_tau_f, o_volts):
        nt = goal.shape[0]
        nb, nj = theta0.shape
        full = o_tau_m.shape[0] == nt  # outputs of shape (0, 0, 0) are not recorded
        for b in numba.prange(nb):
            # time-major inner loops: each (t, b) row of nj joints is contiguous in every (T, B, J) array
            th = theta0[b].copy()
            dth = dtheta0[b].copy()
            for t in range(nt):
                for j in range(nj):
                    o_theta[t, b, j] = th[j]
                    if full:
                        o_dtheta[t, b, j] = dth[j]
                    r = step1(p[b, j], th[j], dth[j], goal[t, b, j], dt, gravity[b, j], tau_ext[t, b, j],
                              inertia[b, j], enable[t, b, j])
                    th[j], dth[j] = r[0], r[1]
                    if full:
                        o_tau_m[t, b, j], o_tau_f[t, b, j], o_volts[t, b, j] = r[2], r[3], r[4]

    return step_batch, rollout_batch


if HAVE_NUMBA:
    step_batch, rollout_batch = _build()
else:  # pragma: no cover
    step_batch = rollout_batch = None

__all__ = ["HAVE_NUMBA", "step_batch", "rollout_batch", "np"]
