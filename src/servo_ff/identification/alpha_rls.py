"""Online refinement of α̂ by recursive least squares: the future work Schwarz & Behnke state at the end of
*Compliant Robot Behavior using Servo Actuator Models identified by Iterative Learning Control* (α fitted once
from an ILC run, then adapted while the robot runs as battery and friction change).

The regression is the one of the batch fit (Eq. 19, 22–27): ``y = k_P·U_bat·(q_d(t) − q(t + t_d)) = φ·α̂`` with
φ = [τ_o, q̇, sgn(q̇)(1 − β), sgn(q̇)β (, q̈)] at t + t_d. Each sample updates α̂ by RLS with exponential
forgetting λ (an effective memory of 1/(1 − λ) samples):

    k = P·φ / (λ + φᵀ·P·φ),   α̂ ← α̂ + k·(y − φᵀ·α̂),   P ← (P − k·φᵀ·P) / λ

and then α̂ is projected into its admissible box (:data:`~servo_ff.models.schema.ALPHA_FIELDS`, intersected with
×/÷ ``box_factor`` around the α̂ it started from). A sample with a non-finite value is skipped (counted); the
covariance trace is capped (no wind-up when the motion does not excite every term under forgetting); an update
that would leave α̂ or P non-finite is refused and the state kept. α̂ is never non-finite.

When to trust it: :attr:`AlphaRLS.trusted` becomes true once ``min_samples`` samples were used and the a-priori
prediction error of the refined α̂ (forgetting-weighted mean square) is below ``trust_ratio`` (0.9) × that of the
reference α̂ (the batch fit it started from) over the same samples, and false again only when it is above
``distrust_ratio`` (1.0) × that (hysteresis: each change moves the feed-forward node's α̂); decided after each
update (one sample, or one batch). Until then a user keeps the reference.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..models.schema import ALPHA_FIELDS

if TYPE_CHECKING:
    from .alpha_gate import FitGate

_ALPHA_KEYS = ("alpha0", "alpha1", "alpha2", "alpha3", "alpha4")
EXCITATION_SPAN = 4.0  # [s] of motion up to a live sample judged by the gate: half a period of an 8 s sine


@dataclass(frozen=True)
class RLSOptions:
    """``forgetting`` λ ∈ (0, 1]; ``initial_covariance`` P0 = this × (α̂0 scale)² per term [α̂ units²];
    ``max_trace`` cap of trace(P) relative to trace(P0); ``box_factor`` admissible ×/÷ box around the start;
    ``min_samples``, ``trust_ratio`` (gained below) and ``distrust_ratio`` (lost above) of the trust switch."""

    forgetting: float = 0.999
    initial_covariance: float = 1.0
    max_trace: float = 10.0
    box_factor: float = 4.0
    min_samples: int = 500
    trust_ratio: float = 0.9
    distrust_ratio: float = 1.0

    def __post_init__(self) -> None:
        if not (0.0 < self.forgetting <= 1.0):
            raise ValueError(f"forgetting factor must be in (0, 1], got {self.forgetting}")
        for k in ("initial_covariance", "max_trace"):
            if not (getattr(self, k) > 0 and math.isfinite(getattr(self, k))):
                raise ValueError(f"{k} must be > 0 and finite, got {getattr(self, k)}")
        if not self.box_factor > 1:
            raise ValueError(f"box_factor must be > 1, got {self.box_factor}")
        if self.min_samples < 1 or not (0 < self.trust_ratio <= 1 and self.trust_ratio <= self.distrust_ratio):
            raise ValueError("min_samples must be >= 1, trust_ratio in (0, 1] and distrust_ratio >= trust_ratio")


class AlphaRLS:
    """Recursive least squares on α̂ (4 or 5 terms), started from a reference α̂ (a batch fit)."""

    def __init__(self, alpha0: np.ndarray, options: RLSOptions = RLSOptions()):
        a = np.asarray(alpha0, float)
        if a.ndim != 1 or a.size not in (4, 5) or not np.isfinite(a).all():
            raise ValueError(f"alpha0 must be 4 or 5 finite coefficients, got {a!r}")
        self.options = options
        self.reference = a.copy()
        self.alpha = a.copy()
        fields = [ALPHA_FIELDS[k] for k in _ALPHA_KEYS[: a.size]]
        f = options.box_factor
        scale = np.maximum(np.abs(a), 0.1 * max(float(np.abs(a).max()), 1e-9))  # a term near 0 may grow
        self.lo = np.maximum([s.lo for s in fields], np.where(a > 0, a / f, 0.0))
        self.hi = np.minimum([s.hi for s in fields], np.maximum(a * f, scale * f))
        self.alpha = np.clip(self.alpha, self.lo, self.hi)
        self.P0 = np.diag((options.initial_covariance * scale) ** 2)
        self.P = self.P0.copy()
        self.samples = 0
        self.skipped = 0
        self.mse_rls = 0.0  # forgetting-weighted mean square a-priori error of α̂ [y units²]
        self.mse_ref = 0.0  # same for the reference α̂
        self._weight = 0.0
        self.trusted = False  # see the module docstring: decided after each update, with hysteresis

    def current(self) -> np.ndarray:
        """α̂ to use now: the refined one when :attr:`trusted`, else the reference (a copy, always finite)."""
        return (self.alpha if self.trusted else self.reference).copy()

    def update(self, phi: np.ndarray, y: float) -> bool:
        """One sample (regressor φ, target y), then the trust switch; False when skipped (non-finite or refused)."""
        used = self._sample(phi, y)
        self._switch()
        return used

    def _sample(self, phi: np.ndarray, y: float) -> bool:
        phi = np.asarray(phi, float)
        if phi.shape != self.alpha.shape or not (np.isfinite(phi).all() and math.isfinite(y)):
            self.skipped += 1
            return False
        lam = self.options.forgetting
        e = float(y - phi @ self.alpha)
        e_ref = float(y - phi @ self.reference)
        Pphi = self.P @ phi
        denom = lam + float(phi @ Pphi)
        k = Pphi / denom
        alpha = np.clip(self.alpha + k * e, self.lo, self.hi)
        P = (self.P - np.outer(k, Pphi)) / lam
        P = 0.5 * (P + P.T)
        cap = self.options.max_trace * float(np.trace(self.P0))
        tr = float(np.trace(P))
        if tr > cap:
            P *= cap / tr
        if not (
            np.isfinite(alpha).all()
            and np.isfinite(P).all()
            and math.isfinite(denom)
            and math.isfinite(e * e)
            and math.isfinite(e_ref * e_ref)
        ):
            self.skipped += 1
            return False
        self.alpha, self.P = alpha, P
        self.samples += 1
        self._weight = lam * self._weight + 1.0
        g = 1.0 / self._weight
        self.mse_rls += g * (e * e - self.mse_rls)
        self.mse_ref += g * (e_ref * e_ref - self.mse_ref)
        return True

    def _switch(self) -> None:
        """Trust after an update: gained below ``trust_ratio``, lost above ``distrust_ratio`` (before: one threshold,
        plant 0.525 kg vs a 0.5 kg fit flipped 99 times in 290 updates, each a set_parameters and a file write)."""
        o = self.options
        if self.trusted:
            self.trusted = not self.mse_rls > o.distrust_ratio * self.mse_ref
        else:
            self.trusted = self.samples >= o.min_samples and self.mse_rls < o.trust_ratio * self.mse_ref

    def update_batch(self, A: np.ndarray, y: np.ndarray) -> int:
        """Rows of A (n, k) with targets y (n,), in order, then the trust switch; returns how many were used."""
        used = sum(self._sample(a, float(v)) for a, v in zip(np.atleast_2d(A), np.atleast_1d(y)))
        self._switch()
        return used

    def state(self) -> dict:
        """What a node reports: α̂, the reference, trust, counts and the two prediction errors (RMS, y units)."""
        return {
            "alpha": self.alpha.tolist(),
            "reference": self.reference.tolist(),
            "trusted": self.trusted,
            "samples": self.samples,
            "skipped": self.skipped,
            "rms_rls": math.sqrt(self.mse_rls),
            "rms_reference": math.sqrt(self.mse_ref),
        }


def regression_rows(
    command: np.ndarray,
    measured: np.ndarray,
    tau: np.ndarray,
    dq: np.ndarray,
    ddq: np.ndarray | None,
    kp: float,
    u_bat: np.ndarray | float,
    delay_steps: int,
    dq_s: float,
    delta: float,
) -> tuple[np.ndarray, np.ndarray]:
    """(A, y) of Eq. 22–27 for RLS: y_n = k_P·U_bat·(q_d(n) − q(n + d)), A_n = φ at n + d (same as the batch fit;
    ``tau``, ``dq``, ``ddq`` along the measured motion)."""
    from ..models.schwarz_behnke import motor_regressors

    d = int(delay_steps)
    n = len(command) - d
    u = np.broadcast_to(np.asarray(u_bat, float), (len(command),))
    y = kp * u[:n] * (np.asarray(command, float)[:n] - np.asarray(measured, float)[d:])
    A = motor_regressors(
        np.asarray(tau)[d:],
        np.asarray(dq)[d:],
        None if ddq is None else np.asarray(ddq)[d:],
        dq_s,
        delta,
        ddq is not None,
    )
    return A, y


class LiveAlphaRefiner:
    """RLS on α̂ fed from overlapping windows of live data (what the fit node holds): each call uses only the samples
    newer than the last one judged, away from the window's end (the Savitzky–Golay derivatives are poor there). A new
    sample is used when the ``span`` seconds of motion up to it (within its stretch of the data) pass the batch fit's
    excitation minima (``gate``: min_range, min_speed, with α̂4 min_accel;
    :func:`~servo_ff.identification.alpha_gate.lack_of_excitation`), else it is skipped as still (counted in
    :attr:`still`): a joint standing still holds α̂ (before any gate: the sgn(q̇) friction columns of noise velocities
    moved α̂ [12.40, 2.35, 9.33, 0.36] → [9.10, 1.93, 10.65, 1.13] in 8 s still, trusted), while real motion is used
    whatever the update period (before: the minima were applied to the new samples of one update alone, a sine of
    0.5 rad / 8 s fed every 0.1 s used 0 of 8000 samples, and the held ones were never fed).

    Starts from a batch fit (:class:`~servo_ff.identification.alpha_fit.AlphaFit`: α̂, q̇_s, δ and t_d are kept)."""

    def __init__(
        self,
        fit,
        torque,
        options: RLSOptions = RLSOptions(),
        gate: FitGate | None = None,
        span: float = EXCITATION_SPAN,
    ):
        from .alpha_gate import FitGate  # lazy, as alpha_data: this module stays light

        if not (span > 0 and math.isfinite(span)):
            raise ValueError(f"excitation span must be > 0 s and finite, got {span}")
        self.fit = fit
        self.torque = torque
        self.rls = AlphaRLS(np.asarray(fit.alpha, float), options)
        self.gate = FitGate() if gate is None else gate
        self.span = span
        self.last_time = -math.inf
        self.still = 0  # new samples skipped because the span up to them was still
        self.held = ""  # why the last call's new samples were all skipped as still ("" when one was used)

    def feed(self, data, t0: float) -> int:
        """``data`` (:class:`~servo_ff.identification.alpha_data.AlphaData`) on a grid from ``t0`` [s] (its own
        sample times ``data.t`` when it has them); returns the number of samples used (0 and :attr:`held` set when
        every new sample was judged still). A goal is paired with the reaction t_d later within a stretch of
        ``data.segments`` only (before: across a pause of the states)."""
        from .alpha_data import SG_WINDOW

        tau = np.asarray(self.torque(data.q, data.dq, data.ddq), float)
        with_inertia = self.rls.alpha.size == 5
        n, d = len(data.command), self.fit.delay_steps
        times = np.asarray(data.t, float) if data.t is not None else t0 + np.arange(n) * data.dt
        u = np.broadcast_to(np.asarray(data.u_bat, float), (n,))
        rows = []
        for a, b in data.segments or ((0, n),):
            if b - a <= d:
                continue
            A, y = regression_rows(
                data.command[a:b],
                data.measured[a:b],
                tau[a:b],
                data.dq[a:b],
                data.ddq[a:b] if with_inertia else None,
                data.kp,
                u[a:b],
                d,
                self.fit.dq_s,
                self.fit.delta,
            )
            # φ of row i is at sample a + d + i; its stretch is [a, b)
            rows.append((A, y, times[a : b - d], np.arange(a + d, b), np.full(b - a - d, a), np.full(b - a - d, b)))
        if not rows:
            return 0
        A, y, times, at, start, stop = (np.concatenate(x) for x in zip(*rows))
        # a sample is new when it lies more than half a period after the last one used: the same sample on another
        # window's grid (t0 + k·dt) can land a few 1e-13 s to either side of its time there
        fresh = times > self.last_time + 0.5 * data.dt
        new = np.flatnonzero(fresh & (times <= times[-1] - (SG_WINDOW // 2 + d) * data.dt))
        moving, judged, why = self._judge(data, at[new], start[new], stop[new], with_inertia)
        if not judged:
            return 0
        new, moving = new[:judged], moving[:judged]
        self.last_time = float(times[new[-1]])  # each sample up to here used or judged still: none judged twice
        self.still += int(judged - moving.sum())
        self.held = "" if moving.any() else f"{why} within {self.span:g} s of each of the {judged} new samples"
        return self.rls.update_batch(A[new[moving]], y[new[moving]]) if moving.any() else 0

    def _judge(
        self, data, at: np.ndarray, start: np.ndarray, stop: np.ndarray, with_inertia: bool
    ) -> tuple[np.ndarray, int, str]:
        """(moving, judged, why) of the samples at indices ``at`` (their stretches [start, stop)), in order: moving
        when the ``span`` s up to it and the ``span`` s from it both pass the gate's minima (near a stretch's ends:
        its first / last ``span`` s), still when one fails; ``judged`` counts those before the first whose span ahead
        is not yet all in ``data`` (it and those after wait for the next call); ``why``: the last refusal."""
        w = max(1, int(round(self.span / data.dt)))
        waits = (stop == len(data.q)) & (at + w > stop)  # the live stretch: more data comes
        judged = int(np.argmax(waits)) if waits.any() else at.size
        at, start, stop = at[:judged], start[:judged], stop[:judged]
        first = np.maximum(start, np.minimum(at - w + 1, stop - w))  # the span up to k, inside its stretch
        why = self._refusals(data, first, np.minimum(first + w, stop), w, with_inertia)
        moved = np.flatnonzero([not r for r in why])
        if moved.size:
            ahead = np.maximum(start[moved], np.minimum(at[moved], stop[moved] - w))  # the span from k
            for i, r in zip(moved, self._refusals(data, ahead, np.minimum(ahead + w, stop[moved]), w, with_inertia)):
                why[i] = r
        return np.array([not r for r in why], bool), judged, next((r for r in reversed(why) if r), "")

    def _refusals(self, data, lo: np.ndarray, hi: np.ndarray, w: int, with_inertia: bool) -> list[str | None]:
        """The gate's refusal (:func:`~servo_ff.identification.alpha_gate.lack_of_excitation`) of each span
        [lo, hi) of ``data``: the spans of ``w`` samples at once, the cut ones one by one."""
        from .alpha_gate import lack_of_excitation, motion_figures

        out: list[str | None] = [None] * len(lo)
        full = np.flatnonzero(hi - lo == w)
        if full.size:
            a, b = int(lo[full].min()), int(lo[full].max()) + 1  # the spans starting in [a, b), as views
            q, dq, ddq = (sliding_window_view(x[a : b + w - 1], w) for x in (data.q, data.dq, data.ddq))
            figs = motion_figures(q, dq, ddq)
            for i, j in zip(full, lo[full] - a):
                out[i] = lack_of_excitation({k: float(v[j]) for k, v in figs.items()}, self.gate, with_inertia)
        for i in np.flatnonzero(hi - lo != w):
            s = slice(lo[i], hi[i])
            out[i] = lack_of_excitation(motion_figures(data.q[s], data.dq[s], data.ddq[s]), self.gate, with_inertia)
        return out
