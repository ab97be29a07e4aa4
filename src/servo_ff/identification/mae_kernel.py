"""Fused simulation-MAE kernel: Algorithm 1 (the core's :func:`servo_ff.models.scalar.step_1`, compiled in
place — the same formula as :func:`~servo_ff.models.stepper.rollout`) run over (candidates × logs) with the
absolute position error accumulated on the fly, so no (T, pop, logs) trajectory arrays are written.

It is an accelerated path for :mod:`.simulation_fit` (``engine="fused"``); ``engine="rollout"`` evaluates the
same population × logs through one batched ``rollout`` call, and the tests check the two agree.
"""
from __future__ import annotations

import numpy as np

from ..models import scalar
from ..models.kernels import HAVE_NUMBA

if HAVE_NUMBA:
    import numba

    _step1 = scalar.step_1

    @numba.njit(cache=True, nogil=True, parallel=True)
    def _mae_kernel(p, theta0, dtheta0, goal, enable, position, mask, gravity, inertia, dt, out):
        n_pop, n_logs = p.shape[0], p.shape[1]
        n_t = goal.shape[1]
        for idx in numba.prange(n_pop * n_logs):
            b = idx // n_logs
            j = idx - b * n_logs
            pj = p[b, j]
            th, dth = theta0[j], dtheta0[j]
            g, inr = gravity[j], inertia[j]
            acc, cnt = 0.0, 0.0
            for t in range(n_t):
                m = mask[j, t]
                acc += abs(th - position[j, t]) * m
                cnt += m
                th, dth, _, _, _ = _step1(pj, th, dth, goal[j, t], dt, g, 0.0, inr, enable[j, t])
            out[b, j] = acc / cnt if cnt > 0 else np.inf


def mae_fused(packed: np.ndarray, batch) -> np.ndarray:
    """Masked MAE [rad] (pop, logs) of every candidate (packed (pop, logs, N_PACKED)) on every log."""
    if not HAVE_NUMBA:
        raise RuntimeError("engine='fused' needs numba; use engine='rollout'")
    from ..models.stepper import PendulumLoad

    load = PendulumLoad(mass=batch.mass, length=batch.length, arm_mass=batch.arm_mass)
    p = np.ascontiguousarray(packed, dtype=np.float64)
    out = np.empty(p.shape[:2])
    _mae_kernel(p, np.ascontiguousarray(batch.position[0]), np.ascontiguousarray(batch.speed[0]),
                np.ascontiguousarray(batch.goal_position.T), np.ascontiguousarray(batch.torque_enable.T),
                np.ascontiguousarray(batch.position.T), np.ascontiguousarray(batch.mask.T),
                np.ascontiguousarray(np.broadcast_to(load.gravity_torque_amplitude(), batch.mass.shape), float),
                np.ascontiguousarray(np.broadcast_to(load.inertia(), batch.mass.shape), float), float(batch.dt), out)
    return np.where(np.isfinite(out), out, np.inf)


__all__ = ["mae_fused"]
