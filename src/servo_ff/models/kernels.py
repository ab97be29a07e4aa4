"""Fused batched kernels: Algorithm 1 (Duclusaud et al.) over (batch, joints) arrays, compiled with numba.

* ``step_batch``: one step; its body is :func:`servo_ff.models.scalar.step_1` compiled in place, so the
  kernel and the scalar reference share one formula;
* ``rollout_simd``: whole goal sequences, structure-of-arrays, with a vectorised pass for sin/exp/log
  (:mod:`.fastmath`) — the throughput path (identification, batched simulation).

``prange`` spreads the batch over the cores. If numba is missing, :data:`HAVE_NUMBA` is False and
:mod:`.stepper` falls back to numpy.
"""

from __future__ import annotations

import numpy as np

from . import scalar
from .params import (
    P_ALPHA,
    P_ARM,
    P_EGAIN,
    P_IMAX,
    P_KC,
    P_KCS,
    P_KE,
    P_KEQ,
    P_KES,
    P_KM,
    P_KMQ,
    P_KMS,
    P_KP,
    P_KT,
    P_KV,
    P_LAW,
    P_MAXPWM,
    P_QOFF,
    P_R,
    P_VIN,
    P_VMAX,
    P_VS,
)

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

    @numba.njit(cache=True, nogil=True, parallel=True, fastmath=FASTMATH, error_model="numpy")
    def step_batch(
        theta, dtheta, goal, dt, p, gravity, tau_ext, inertia, enable, o_theta, o_dtheta, o_tau_m, o_tau_f, o_volts
    ):
        nb, nj = theta.shape
        for b in numba.prange(nb):
            for j in range(nj):
                r = step1(
                    p[b, j],
                    theta[b, j],
                    dtheta[b, j],
                    goal[b, j],
                    dt,
                    gravity[b, j],
                    tau_ext[b, j],
                    inertia[b, j],
                    enable[b, j],
                )
                o_theta[b, j], o_dtheta[b, j], o_tau_m[b, j], o_tau_f[b, j], o_volts[b, j] = r

    @numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
    def steps_joints(
        n_steps,
        theta,
        dtheta,
        goal,
        target,
        rate,
        dt,
        p,
        gravity,
        tau_ext,
        inertia,
        enable,
        o_theta,
        o_dtheta,
        o_tau_m,
        o_tau_f,
        o_volts,
    ):
        """``n_steps`` steps of one row of joints (1, J) in one call: the firmware target slews toward ``goal`` by
        at most ``rate``·dt per step (``motor.goal_slew``; ``target`` (J,) updated in place), then Algorithm 1."""
        for j in range(theta.shape[1]):
            th, dth, tg, lim = theta[0, j], dtheta[0, j], target[j], rate[j] * dt
            for _ in range(n_steps):
                tg = min(max(goal[j], tg - lim), tg + lim)
                r = step1(p[0, j], th, dth, tg, dt, gravity[0, j], tau_ext[0, j], inertia[0, j], enable[0, j])
                th, dth = r[0], r[1]
                o_theta[0, j], o_dtheta[0, j], o_tau_m[0, j], o_tau_f[0, j], o_volts[0, j] = r
            target[j] = tg

    from .fastmath import exp_, log_, sin_

    @numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
    def _transcendentals(th, q_off, dth, v_s, alpha, sin_th, weight):
        """sin(θ + q_offset) and the Stribeck weight exp(−|θ̇/v_s|^α) of a chunk: few arrays and no branches,
        so LLVM vectorises this loop (it is most of the arithmetic of a step)."""
        for i in range(th.shape[0]):
            sin_th[i] = sin_(th[i] + q_off[i])
            x = abs(dth[i] / v_s[i])
            w = exp_(-exp_(alpha[i] * log_(max(x, 1e-300))))
            weight[i] = 1.0 if x == 0.0 else w

    @numba.njit(cache=True, nogil=True, parallel=True, fastmath=FASTMATH, error_model="numpy")
    def rollout_simd(
        th_io,
        dth_io,
        goal,
        dt,
        P,
        gravity,
        tau_ext,
        ext_step,
        inertia,
        enable,
        en_step,
        o_theta,
        o_dtheta,
        o_tau_m,
        o_tau_f,
        o_volts,
        chunk,
    ):
        """Algorithm 1 over (T, N) with structure-of-arrays parameters P (N_PACKED, N): per chunk and step, a
        vectorised pass for the transcendental functions, then the rest; same formulas and operation order
        as scalar.step_1. ``th_io``/``dth_io`` hold the initial state and receive the final one."""
        nt, n = goal.shape
        full = o_tau_m.shape[0] == nt
        for c in numba.prange((n + chunk - 1) // chunk):
            lo = c * chunk
            hi = min(n, lo + chunk)
            th = th_io[lo:hi]
            dth = dth_io[lo:hi]
            sin_th = np.empty(hi - lo)
            weight = np.empty(hi - lo)
            v_s = P[P_VS, lo:hi]
            alpha = P[P_ALPHA, lo:hi]
            q_off = P[P_QOFF, lo:hi]
            # quotients that do not change over time, computed once per chunk (no division in the step loop)
            kt_r = np.empty(hi - lo)
            kt2_r = np.empty(hi - lo)
            inv_r = np.empty(hi - lo)
            j_dt = np.empty(hi - lo)
            inv_j = np.empty(hi - lo)
            kpe = np.empty(hi - lo)
            u_max = np.empty(hi - lo)
            emf_duty = np.empty(hi - lo)  # kt/vin: duty that balances the back-EMF per rad/s
            span_duty = np.empty(hi - lo)  # R·I_max/vin: half-width of the current-limit duty window
            any_current = False
            any_window = False
            for e in range(hi - lo):
                kpe[e] = P[P_KP, lo + e] * P[P_EGAIN, lo + e]
                u_max[e] = P[P_VIN, lo + e] * P[P_MAXPWM, lo + e]
                any_current = any_current or P[P_LAW, lo + e] != 0.0
                windowed = P[P_LAW, lo + e] == 0.0 and P[P_IMAX, lo + e] < np.inf
                any_window = any_window or windowed
                emf_duty[e] = P[P_KT, lo + e] / P[P_VIN, lo + e]
                span_duty[e] = P[P_R, lo + e] * P[P_IMAX, lo + e] / P[P_VIN, lo + e] if windowed else np.inf
                kt, r = P[P_KT, lo + e], P[P_R, lo + e]
                j = inertia[lo + e] + P[P_ARM, lo + e]
                kt_r[e] = kt / r
                kt2_r[e] = kt * kt / r
                inv_r[e] = 1.0 / r
                j_dt[e] = j / dt
                inv_j[e] = 1.0 / j
            for t in range(nt):
                _transcendentals(th, q_off, dth, v_s, alpha, sin_th, weight)
                te_row = t * ext_step
                en_row = t * en_step
                for e in range(hi - lo):
                    i = lo + e
                    kt = P[P_KT, i]
                    r = P[P_R, i]
                    command = kpe[e] * (goal[t, i] - th[e])
                    maxpwm = P[P_MAXPWM, i]
                    duty = command
                    if any_window:  # loop-invariant: bam's current-limit duty window (voltage law only)
                        center = emf_duty[e] * dth[e]
                        duty = min(max(duty, center - span_duty[e]), center + span_duty[e])
                    volts = P[P_VIN, i] * min(max(duty, -maxpwm), maxpwm)
                    tm = kt_r[e] * volts - kt2_r[e] * dth[e]
                    if any_current:  # loop-invariant: the voltage-only case skips the current law entirely
                        i_hi = min((u_max[e] - kt * dth[e]) * inv_r[e], P[P_IMAX, i])
                        i_lo = max((-u_max[e] - kt * dth[e]) * inv_r[e], -P[P_IMAX, i])
                        current = min(max(command, i_lo), i_hi)
                        is_voltage = P[P_LAW, i] == 0.0
                        tm = tm if is_voltage else kt * current
                        volts = volts if is_voltage else r * current + kt * dth[e]
                    en = enable[en_row, i]
                    tm = tm * en
                    volts = volts * en
                    te = tau_ext[te_row, i] - gravity[i] * sin_th[e]
                    am = abs(tm)
                    ae = abs(te)
                    q = P[P_KEQ, i] * te * te if am > ae else (P[P_KMQ, i] * tm * tm if am < ae else 0.0)
                    s_m = 1.0 if tm > 0.0 else (-1.0 if tm < 0.0 else 0.0)
                    s_e = 1.0 if te > 0.0 else (-1.0 if te < 0.0 else 0.0)
                    q = q if s_m != s_e else 0.0
                    budget = P[P_KC, i] + P[P_KV, i] * abs(dth[e]) + abs(P[P_KM, i] * tm - P[P_KE, i] * te)
                    budget += weight[e] * (P[P_KCS, i] + abs(P[P_KMS, i] * tm - P[P_KES, i] * te) + q)
                    stop = -(j_dt[e] * dth[e] + tm + te)
                    tf = min(max(stop, -budget), budget)
                    acc = (tm + te + tf) * inv_j[e]
                    o_theta[t, i] = th[e]
                    if full:
                        o_dtheta[t, i] = dth[e]
                        o_tau_m[t, i] = tm
                        o_tau_f[t, i] = tf
                        o_volts[t, i] = volts
                    vmax = P[P_VMAX, i]
                    dth_next = min(max(dth[e] + acc * dt, -vmax), vmax)  # bam's order: θ̇ first, clamped
                    th[e] = th[e] + dth_next * dt + 0.5 * acc * dt * dt
                    dth[e] = dth_next

    return step_batch, steps_joints, rollout_simd


if HAVE_NUMBA:
    step_batch, steps_joints, rollout_simd = _build()
else:  # pragma: no cover
    step_batch = steps_joints = rollout_simd = None

__all__ = ["HAVE_NUMBA", "step_batch", "steps_joints", "rollout_simd"]
