"""Fused batched kernels: Algorithm 1 (Duclusaud et al.) over (batch, joints) arrays, compiled with numba.

* ``step_batch``: one step; its body is :func:`servo_ff.models.scalar.step_1` compiled in place, so the
  kernel and the scalar reference share one formula;
* ``rollout_simd``: whole goal sequences, per chunk of elements a block of rows at constant offsets of one array
  and one vectorised pass per step, sin/exp/log included (:mod:`.fastmath`) — the throughput path
  (identification, batched simulation).

``prange`` spreads the batch over the cores. If numba is missing, :data:`HAVE_NUMBA` is False and
:mod:`.stepper` falls back to numpy.
"""

from __future__ import annotations

import types

import numpy as np

from .. import numba_cache
from . import scalar, slots
from .chunk_rows import (  # noqa: F401 (SIMD_CHUNK re-exported)
    LANES,
    N_ROWS,
    R_ALPHA,
    R_DTH,
    R_EMF,
    R_EN,
    R_EXT,
    R_GOAL,
    R_GRAV,
    R_IMAX,
    R_INVJ,
    R_INVR,
    R_JDT,
    R_KC,
    R_KCS,
    R_KE,
    R_KEQ,
    R_KES,
    R_KM,
    R_KMQ,
    R_KMS,
    R_KPE,
    R_KT,
    R_KT2R,
    R_KTR,
    R_KV,
    R_MAXPWM,
    R_QOFF,
    R_R,
    R_SPAN,
    R_TF,
    R_TH,
    R_TM,
    R_UMAX,
    R_VIN,
    R_VMAX,
    R_VOLTAGE,
    R_VOLTS,
    R_VS,
    SIMD_CHUNK,
    S,
)
from .fastmath import EXPONENT, finite_tag
from .streaming import store_fence, stream_rows

try:  # pragma: no cover - exercised through HAVE_NUMBA
    import numba

    HAVE_NUMBA = numba_cache.install() or True  # cached kernels stamped by the sources they inline
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
    def _step_pass(w, m, dt):
        """One step of the ``m`` elements of a chunk block ``w`` (rows of :data:`CHUNK_STRIDE` at the ``R_*``
        offsets): Algorithm 1 with the formulas and operation order of scalar.step_1. The rows sit at constant
        offsets of one array and every load is unconditional, so LLVM vectorises the loop without alias checks;
        both control laws and the duty window are computed and selected (span = inf: no window)."""
        for e in range(m):
            th = w[R_TH * S + e]
            dth = w[R_DTH * S + e]
            kt = w[R_KT * S + e]
            r = w[R_R * S + e]
            imax = w[R_IMAX * S + e]
            keq = w[R_KEQ * S + e]
            kmq = w[R_KMQ * S + e]
            vin = w[R_VIN * S + e]
            maxpwm = w[R_MAXPWM * S + e]
            u_max = w[R_UMAX * S + e]
            is_voltage = w[R_VOLTAGE * S + e] != 0.0
            x = abs(dth / w[R_VS * S + e])
            weight = exp_(-exp_(w[R_ALPHA * S + e] * log_(max(x, 1e-300))))
            weight = 1.0 if x == 0.0 else weight
            command = w[R_KPE * S + e] * (w[R_GOAL * S + e] - th)
            center = w[R_EMF * S + e] * dth
            span = w[R_SPAN * S + e]
            duty = min(max(command, center - span), center + span)  # bam's current-limit duty window
            volts = vin * min(max(duty, -maxpwm), maxpwm)
            tm = w[R_KTR * S + e] * volts - w[R_KT2R * S + e] * dth
            i_hi = min((u_max - kt * dth) * w[R_INVR * S + e], imax)
            i_lo = max((-u_max - kt * dth) * w[R_INVR * S + e], -imax)
            current = min(max(command, i_lo), i_hi)
            tm = tm if is_voltage else kt * current
            volts = volts if is_voltage else r * current + kt * dth
            en = w[R_EN * S + e]
            tm = tm * en
            volts = volts * en
            te = w[R_EXT * S + e] - w[R_GRAV * S + e] * sin_(th + w[R_QOFF * S + e])
            am = abs(tm)
            ae = abs(te)
            q = keq * te * te if am > ae else (kmq * tm * tm if am < ae else 0.0)
            s_m = 1.0 if tm > 0.0 else (-1.0 if tm < 0.0 else 0.0)
            s_e = 1.0 if te > 0.0 else (-1.0 if te < 0.0 else 0.0)
            q = q if s_m != s_e else 0.0
            budget = w[R_KC * S + e] + w[R_KV * S + e] * abs(dth) + abs(w[R_KM * S + e] * tm - w[R_KE * S + e] * te)
            budget += weight * (w[R_KCS * S + e] + abs(w[R_KMS * S + e] * tm - w[R_KES * S + e] * te) + q)
            stop = -(w[R_JDT * S + e] * dth + tm + te)
            tf = min(max(stop, -budget), budget)
            acc = (tm + te + tf) * w[R_INVJ * S + e]
            w[R_TM * S + e] = tm
            w[R_TF * S + e] = tf
            w[R_VOLTS * S + e] = volts
            vmax = w[R_VMAX * S + e]
            dth_next = min(max(dth + acc * dt, -vmax), vmax)  # bam's order: θ̇ first, clamped
            w[R_TH * S + e] = th + dth_next * dt + 0.5 * acc * dt * dt
            w[R_DTH * S + e] = dth_next

    @numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
    def _fill_chunk(w, lo, m, mp, th_io, dth_io, P, gravity, inertia, dt):
        """The coefficient and state rows of the chunk [lo, lo + m), padded to ``mp`` lanes with copies of its
        first element at rest (finite, never read back), from ``P`` (N_PACKED, N) or one column (N_PACKED, 1) shared
        by all; quotients computed once (no division per step but the Stribeck ratio, as the reference)."""
        shared = P.shape[1] == 1  # one parameter column for every element (no (N_PACKED, N) copy per call)
        for e in range(mp):
            i = lo + (e if e < m else 0)
            c = 0 if shared else i
            kt, r, vin, imax = P[slots.KT, c], P[slots.R, c], P[slots.VIN, c], P[slots.IMAX, c]
            voltage = P[slots.LAW, c] == 0.0
            j = inertia[i] + P[slots.ARM, c]
            w[R_KPE * S + e] = P[slots.KP, c] * P[slots.EGAIN, c]
            w[R_MAXPWM * S + e] = P[slots.MAXPWM, c]
            w[R_VIN * S + e] = vin
            w[R_UMAX * S + e] = vin * P[slots.MAXPWM, c]
            w[R_KT * S + e] = kt
            w[R_R * S + e] = r
            w[R_INVR * S + e] = 1.0 / r
            w[R_KTR * S + e] = kt / r
            w[R_KT2R * S + e] = kt * kt / r
            w[R_IMAX * S + e] = imax
            w[R_VOLTAGE * S + e] = 1.0 if voltage else 0.0
            w[R_EMF * S + e] = kt / vin
            w[R_SPAN * S + e] = r * imax / vin if voltage and imax < np.inf else np.inf
            w[R_JDT * S + e] = j / dt
            w[R_INVJ * S + e] = 1.0 / j
            w[R_GRAV * S + e] = gravity[i]
            w[R_QOFF * S + e] = P[slots.QOFF, c]
            w[R_VS * S + e] = P[slots.VS, c]
            w[R_ALPHA * S + e] = P[slots.ALPHA, c]
            w[R_VMAX * S + e] = P[slots.VMAX, c]
            w[R_KC * S + e] = P[slots.KC, c]
            w[R_KV * S + e] = P[slots.KV, c]
            w[R_KM * S + e] = P[slots.KM, c]
            w[R_KE * S + e] = P[slots.KE, c]
            w[R_KCS * S + e] = P[slots.KCS, c]
            w[R_KMS * S + e] = P[slots.KMS, c]
            w[R_KES * S + e] = P[slots.KES, c]
            w[R_KMQ * S + e] = P[slots.KMQ, c]
            w[R_KEQ * S + e] = P[slots.KEQ, c]
            w[R_TH * S + e] = th_io[i] if e < m else 0.0
            w[R_DTH * S + e] = dth_io[i] if e < m else 0.0
            w[R_GOAL * S + e] = 0.0
            w[R_EXT * S + e] = 0.0
            w[R_EN * S + e] = 0.0

    @numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
    def _rollout_chunk(
        lo,
        m,
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
        stream,
    ):
        """The elements [lo, lo + m) over every step: a block of rows (:func:`_fill_chunk`), then per step the
        inputs copied in and the outputs so far copied out (``stream``: by streaming stores), one vectorised pass
        (:func:`_step_pass`); the final state written back to ``th_io``/``dth_io``. Returns True if a goal was
        non-finite (checked on the way in: the caller raises, without a pass of its own over the goals)."""
        nt = goal.shape[0]
        full = o_tau_m.shape[0] == nt
        mp = (m + LANES - 1) // LANES * LANES  # whole vectors: every lane through the same code
        w = np.empty(N_ROWS * S)
        _fill_chunk(w, lo, m, mp, th_io, dth_io, P, gravity, inertia, dt)
        # the copies go through row views [lo, lo + m) indexed from 0: with ``lo + e`` numba's negative-index
        # wraparound (lo could be < 0) turned every copy into AVX-512 gathers / scatters (half the rollout's time)
        hi = lo + m
        finite = EXPONENT  # min of finite_tag over the goals: 0 once one is non-finite
        for t in range(nt):
            if t == 0 or ext_step:  # a row constant in time (step 0) is copied in once
                ext = tau_ext[t * ext_step, lo:hi]
                for e in range(m):
                    w[R_EXT * S + e] = ext[e]
            if t == 0 or en_step:
                ena = enable[t * en_step, lo:hi]
                for e in range(m):
                    w[R_EN * S + e] = ena[e]
            gt, ot = goal[t, lo:hi], o_theta[t, lo:hi]
            if full and t > 0:  # one pass over the six rows: this step's goal in, θ, θ̇ and the last step's τ_m,
                # τ_f, U out (the outputs (T, N) are most of a full rollout's memory traffic; one loop, not three)
                od, om = o_dtheta[t, lo:hi], o_tau_m[t - 1, lo:hi]
                of, ov = o_tau_f[t - 1, lo:hi], o_volts[t - 1, lo:hi]
                if stream and stream_rows(w, m, ot, od, om, of, ov):
                    for e in range(m):
                        w[R_GOAL * S + e] = gt[e]
                        finite = min(finite, finite_tag(gt[e]))
                else:
                    for e in range(m):
                        w[R_GOAL * S + e] = gt[e]
                        finite = min(finite, finite_tag(gt[e]))
                        ot[e] = w[R_TH * S + e]
                        od[e] = w[R_DTH * S + e]
                        om[e] = w[R_TM * S + e]
                        of[e] = w[R_TF * S + e]
                        ov[e] = w[R_VOLTS * S + e]
            else:
                for e in range(m):
                    w[R_GOAL * S + e] = gt[e]
                    finite = min(finite, finite_tag(gt[e]))
                    ot[e] = w[R_TH * S + e]
                if full:
                    od = o_dtheta[t, lo:hi]
                    for e in range(m):
                        od[e] = w[R_DTH * S + e]
            _step_pass(w, mp, dt)
        if full and nt > 0:  # the last step's torques and voltage
            om, of, ov = o_tau_m[nt - 1, lo:hi], o_tau_f[nt - 1, lo:hi], o_volts[nt - 1, lo:hi]
            for e in range(m):
                om[e] = w[R_TM * S + e]
                of[e] = w[R_TF * S + e]
                ov[e] = w[R_VOLTS * S + e]
        if stream:
            store_fence()  # the streamed rows are visible before the chunk counts as done
        th_out, dth_out = th_io[lo:hi], dth_io[lo:hi]
        for e in range(m):
            th_out[e] = w[R_TH * S + e]
            dth_out[e] = w[R_DTH * S + e]
        return finite == 0

    # a module global, not a closure cell of _rollout: numba's disk cache keys a function by its closure's pickle,
    # and a dispatcher pickles differently in every process (the rollout kernels were compiled again in each, 18 s)
    global _ROLLOUT_CHUNK
    _ROLLOUT_CHUNK = _rollout_chunk

    def _rollout(  # compiled twice below
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
        stream,
        nonfinite,
    ):
        """Algorithm 1 over (T, N) with structure-of-arrays parameters P (N_PACKED, N) (or (N_PACKED, 1): shared),
        chunks of at most ``chunk`` (≤ :data:`SIMD_CHUNK`) elements spread over the cores (:func:`_rollout_chunk`).
        ``th_io``/``dth_io`` hold the initial state and receive the final one; ``nonfinite`` (one per chunk) is set
        where a goal was not finite."""
        n = goal.shape[1]
        chunk = min(chunk, SIMD_CHUNK)
        for c in numba.prange((n + chunk - 1) // chunk):
            lo = c * chunk
            nonfinite[c] = _ROLLOUT_CHUNK(
                lo,
                min(n, lo + chunk) - lo,
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
                stream,
            )

    def compiled(name: str, parallel: bool):
        """``_rollout`` compiled over the cores, or on the calling thread (prange is range there; no thread-pool
        hand-off: small problems). Its own qualname: numba's disk cache keys a function by qualname and line."""
        fn = types.FunctionType(_rollout.__code__, _rollout.__globals__, name, None, _rollout.__closure__)
        fn.__qualname__, fn.__doc__ = f"{_rollout.__qualname__}.{name}", _rollout.__doc__
        return numba.njit(cache=True, nogil=True, parallel=parallel, fastmath=FASTMATH, error_model="numpy")(fn)

    rollout_simd, rollout_serial = compiled("rollout_simd", True), compiled("rollout_serial", False)

    return step_batch, steps_joints, rollout_simd, rollout_serial


if HAVE_NUMBA:
    step_batch, steps_joints, rollout_simd, rollout_serial = _build()
else:  # pragma: no cover
    step_batch = steps_joints = rollout_simd = rollout_serial = None

__all__ = ["HAVE_NUMBA", "step_batch", "steps_joints", "rollout_simd", "rollout_serial"]
