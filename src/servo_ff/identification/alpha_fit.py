"""Least-squares fit of the linear motor + Stribeck model α (Schwarz & Behnke (Compliant Robot Behavior) §4.2, Eq.
13–15, 19, 22–27).

Given the command curve q_d learned by ILC (or any recorded goal), the joint trajectory q, q̇, q̈ and the
output torque τ_o (inverse dynamics), the position-servo form of the model (Eq. 19 with the reaction
time t_d of Eq. 15) is

    k_P·U_bat·(q_d(nΔt) − q(nΔt + t_d)) = α̂0·τ̂_o(n) + α̂1·q̇̂(n) + α̂2·sgn(q̇̂)(1 − β̂) + α̂3·sgn(q̇̂)β̂ [+ α̂4·q̈̂]

with hats = sampled at nΔt + t_d (Eq. 22–25). α̂ is linear (SVD least squares, Eq. 26–27); the Stribeck
shape q̇_s, δ of β (Eq. 9) and t_d are found by an outer search around the linear solve (the paper fixes
them by hand). t_d is first estimated from the lag between command and reaction, then searched from 0 to that
estimate + ``search_delay`` samples; a residual still falling past either end is followed (:mod:`.delay_bounds`):
past the lower end the motion leads its goals — goals timed late, impossible for a servo — and the fit is refused
(:class:`ReactionTimeError`), past the upper end the search goes on, said. Data in several contiguous
stretches (``segments``: a log with recorder gaps) pair a command with its reaction within a stretch only. Data that
cannot determine α — the joint never moved, never reversed, or the load never varied — are refused with a
message naming the missing motion.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import ServoFFError
from ..models.schwarz_behnke import goal_position_from_torque, motor_regressors
from .delay_bounds import MAX_REACTION, ReactionTimeError, past_bounds

COLUMN_NAMES = (
    "α0·τ_o (R/kt)",
    "α1·q̇ (back-EMF + viscous)",
    "α2·sgn(q̇)(1−β) (Coulomb)",
    "α3·sgn(q̇)β (static)",
    "α4·q̈ (gear inertia)",
)


class RankDeficientError(ServoFFError, ValueError):
    """The data do not excite every term of the model; the message says which motion is missing."""


@dataclass(frozen=True)
class AlphaFit:
    alpha: np.ndarray  # α̂0..α̂3 (, α̂4) of Eq. 19 (register-scaled: volts per k_P unit)
    dq_s: float  # Stribeck velocity q̇_s [rad/s]
    delta: float  # Stribeck exponent δ
    delay: float  # reaction time t_d [s]
    delay_steps: int
    residuals: np.ndarray  # k_P·U_bat·(q_d − q) − A·α, per sample [V-equivalent]
    rms: float  # RMS residual divided by k_P·U_bat: equivalent goal-position error [rad]
    condition_number: float  # 2-norm condition number of A with unit-norm columns
    n_samples: int
    delay_note: str = ""  # the t_d search went past its upper end (said), else ""

    def as_dict(self) -> dict:
        return {
            "alpha": [float(a) for a in self.alpha],
            "dq_s": self.dq_s,
            "delta": self.delta,
            "delay": self.delay,
            "rms_rad": self.rms,
            "condition_number": self.condition_number,
            "n_samples": self.n_samples,
            **({"delay_note": self.delay_note} if self.delay_note else {}),
        }


def command_reaction_lag(command: np.ndarray, measured: np.ndarray, dt: float, max_lag: float = 0.25) -> float:
    """Closed-loop lag [s]: the shift maximising the correlation of the command's and the reaction's velocity
    (what ILC's learning shift t_d of Eq. 21 should compensate)."""
    c = np.gradient(np.asarray(command, float), dt)
    m = np.gradient(np.asarray(measured, float), dt)
    return _best_lag(c, m, dt, max_lag, "command or measured trajectory never moved: no lag to estimate")


Segments = Sequence[tuple[int, int]]  # [start, stop) contiguous stretches of the samples


def paired_samples(segments: Segments, d: int) -> np.ndarray:
    """Indices i of the samples whose reaction i + ``d`` lies in the same stretch (``segments``; ``d`` < 0: the
    position before the goal, for :func:`_past_bounds`)."""
    parts = [np.arange(a + max(-d, 0), b - max(d, 0)) for a, b in segments if b - abs(d) > a]
    return np.concatenate(parts) if parts else np.zeros(0, int)


def _gradient(x: np.ndarray, dt: float, segments: Segments) -> np.ndarray:
    """dx/dt [1/s] by central differences within each stretch."""
    out = np.zeros(len(x))
    for a, b in segments:
        if b - a > 1:
            out[a:b] = np.gradient(x[a:b], dt)
    return out


def estimate_reaction_time(
    command: np.ndarray, measured: np.ndarray, dt: float, max_delay: float = 0.1, segments: Segments | None = None
) -> float:
    """Reaction (dead) time t_d [s] of Eq. 15 from the lag between command and reaction: the shift at which
    the P law's drive q_d − q (∝ motor voltage, Eq. 16) best explains the joint's acceleration, i.e. the lag
    minimising the least-squares residual of q̈(t + lag) ≈ a·(q_d − q)(t) + b·q̇ + c·sgn q̇ + d·sin q + e·cos q + f
    (back-EMF/viscous, Coulomb and gravity-like loads at t + lag). The position itself lags by the whole
    closed-loop response, which is not t_d. ``segments``: contiguous stretches (None: one), never paired across."""
    qd = np.asarray(command, float)
    q = np.asarray(measured, float)
    segments = [(0, len(q))] if segments is None else segments
    drive = qd - q
    dq = _gradient(q, dt, segments)
    ddq = _gradient(dq, dt, segments)
    if not (np.ptp(drive) > 0 and np.ptp(ddq) > 0):
        raise RankDeficientError(
            "command and measured trajectory never differed or never accelerated: no reaction time to estimate"
        )
    longest = max(b - a for a, b in segments)
    best, best_lag = math.inf, 0
    for k in range(0, min(int(round(max_delay / dt)), longest - 10) + 1):
        i = paired_samples(segments, k)
        qk = q[i + k]
        A = np.column_stack([drive[i], dq[i + k], np.sign(dq[i + k]), np.sin(qk), np.cos(qk), np.ones(len(i))])
        y = ddq[i + k]
        coef, *_ = np.linalg.lstsq(A, y, rcond=None)
        r = float(np.mean((y - A @ coef) ** 2) / np.var(y))
        if r < best:
            best, best_lag = r, k
    return best_lag * dt


def _best_lag(a: np.ndarray, b: np.ndarray, dt: float, max_lag: float, empty_msg: str) -> float:
    a, b = a - a.mean(), b - b.mean()
    if not (np.any(a) and np.any(b)):
        raise RankDeficientError(empty_msg)
    n = len(a)
    corr = [float(np.dot(a[: n - k], b[k:]) / (n - k)) for k in range(0, min(int(round(max_lag / dt)), n - 2) + 1)]
    return float(np.argmax(corr)) * dt


def _check_excitation(tau: np.ndarray, dq: np.ndarray, ddq: np.ndarray | None, v_tol: float) -> None:
    moving = np.abs(dq) > v_tol
    if moving.sum() < max(5, 0.02 * len(dq)):
        raise RankDeficientError(
            f"the joint never moved (|q̇| > {v_tol} rad/s in {int(moving.sum())} of {len(dq)} "
            f"samples): α1–α3 (velocity and friction terms) are not identifiable"
        )
    for sign, word in ((1, "positive"), (-1, "negative")):
        if (sign * dq > v_tol).sum() < 5:
            raise RankDeficientError(
                f"the joint never moved in the {word} direction (q̇ {'>' if sign > 0 else '<'} "
                f"0): the joint never reversed, so the direction-dependent friction terms "
                f"α2, α3 are not separable from the load"
            )
    scale = max(float(np.abs(tau).max()), 1e-12)
    if float(np.std(tau)) < 1e-3 * scale or float(np.ptp(tau)) < 1e-9:
        raise RankDeficientError(
            "the load torque τ_o never varied: α0 (R/kt) is not identifiable; move the joint "
            "against gravity or with acceleration"
        )
    if ddq is not None and float(np.std(ddq)) < 1e-9:
        raise RankDeficientError("the joint never accelerated (q̈ = 0): α4 (gear inertia) is not identifiable")


def _solve(y: np.ndarray, A: np.ndarray, nonnegative: bool = False) -> tuple[np.ndarray, np.ndarray, float]:
    norms = np.linalg.norm(A, axis=0)
    norms[norms == 0] = 1.0
    As = A / norms
    if nonnegative:  # physical signs: R/kt, back-EMF + viscous, Coulomb, static, inertia all ≥ 0
        from scipy.optimize import nnls

        coef, _ = nnls(As, y)
    else:
        coef, *_ = np.linalg.lstsq(As, y, rcond=None)
    s = np.linalg.svd(As, compute_uv=False)
    cond = float(s[0] / s[-1]) if s[-1] > 0 else math.inf
    return coef / norms, y - A @ (coef / norms), cond


#: Fewest goal/reaction pairs per α̂ term a fit accepts (fewer: a few rows solved exactly, a meaningless α̂).
MIN_PAIRS_PER_TERM = 10


def _design(q_d, q, dq, ddq, tau, i, d, dq_s, delta, with_inertia, gain):
    """Eq. 26's y and A on the samples ``i`` paired with their reaction ``d`` steps later; ``gain`` k_P·U_bat of
    the samples ``i``."""
    r = i + d
    y = gain * (q_d[i] - q[r])
    A = motor_regressors(tau[r], dq[r], ddq[r] if ddq is not None else None, dq_s, delta, with_inertia)
    return y, A


def _check_segments(segments: Segments | None, n: int) -> list[tuple[int, int]]:
    """The stretches as a list, ordered, within [0, n), not overlapping (None: one, the whole data)."""
    if segments is None:
        return [(0, n)]
    out = [(int(a), int(b)) for a, b in segments]
    if not out or any(not 0 <= a < b <= n for a, b in out) or any(b > a2 for (_, b), (a2, _) in zip(out, out[1:])):
        raise ValueError(f"fit_alpha: segments must be ordered, disjoint [start, stop) ranges within {n} samples")
    return out


def fit_alpha(
    command: np.ndarray,
    q: np.ndarray,
    dq: np.ndarray,
    ddq: np.ndarray | None,
    tau: np.ndarray,
    kp: float,
    u_bat: float | np.ndarray,
    dt: float,
    delay: float | None = None,
    with_inertia: bool = False,
    dq_s: float | None = None,
    delta: float | None = None,
    search_delay: int = 8,
    v_tol: float = 0.02,
    max_condition: float = 1e6,
    measured: np.ndarray | None = None,
    nonnegative: bool = True,
    segments: Segments | None = None,
) -> AlphaFit:
    """Fit α̂ (Eq. 26) with reaction-time compensation (Eq. 22–25) and an outer search over q̇_s, δ, t_d.

    ``command`` q_d [rad] (e.g. ILC's final curve), ``q``/``dq``/``ddq`` [rad, rad/s, rad/s²] the trajectory it
    produced (or the reference it tracks), ``tau`` τ_o [N·m], ``kp`` register gain, ``u_bat`` supply [V].
    ``delay`` t_d [s]: None estimates it from the lag between ``command`` and ``measured`` (default ``q``,
    :func:`estimate_reaction_time`), then searches 0 … estimate + ``search_delay`` steps by residual.
    ``dq_s``/``delta`` fixed if given, else searched (q̇_s ∈ [0.01, 5] rad/s log-spaced, δ ∈ [0.5, 2]).
    Raises :class:`RankDeficientError` on data that do not excite every term, or when the regressor matrix's condition
    number exceeds ``max_condition``.
    ``nonnegative`` (default) constrains every α̂ ≥ 0 (their physical signs, NNLS); False gives the paper's
    unconstrained SVD least squares. ``segments``: the [start, stop) contiguous stretches of the samples (a log's
    stretches between recorder gaps, end to end; None: one); a command is paired with its reaction within one.
    """
    from scipy.optimize import minimize

    arrays = {"command": command, "q": q, "dq": dq, "tau": tau}
    if ddq is not None:
        arrays["ddq"] = ddq
    n = len(command)
    for name, v in arrays.items():
        a = np.asarray(v, float)
        if a.shape != (n,):
            raise ValueError(f"fit_alpha: {name} must be shaped ({n},) like command, got {a.shape}")
        if not np.isfinite(a).all():
            raise ValueError(f"fit_alpha: {name} contains non-finite values (sample {int(np.argmax(~np.isfinite(a)))})")
    if with_inertia and ddq is None:
        raise ValueError("fit_alpha: with_inertia=True needs ddq")
    if not (math.isfinite(kp) and kp > 0):
        raise ValueError(f"fit_alpha: kp must be > 0, got {kp}")
    ub = np.asarray(u_bat, float)
    if not np.isfinite(ub).all() or (ub <= 0).any():
        raise ValueError("fit_alpha: u_bat must be finite and > 0")
    q_d, q, dq, tau = (np.asarray(arrays[k], float) for k in ("command", "q", "dq", "tau"))
    ddq = np.asarray(ddq, float) if ddq is not None else None
    segs = _check_segments(segments, n)
    _check_excitation(tau, dq, ddq if with_inertia else None, v_tol)
    if delay is None:
        d0 = int(round(estimate_reaction_time(q_d, q if measured is None else measured, dt, segments=segs) / dt))
        delays = list(range(0, d0 + search_delay + 1))
    else:
        if not (math.isfinite(delay) and delay >= 0):
            raise ValueError(f"fit_alpha: delay must be >= 0 s, got {delay}")
        delays = [int(round(delay / dt))]
    gain_full = kp * np.broadcast_to(ub, (n,))
    pairs = {d: paired_samples(segs, d) for d in delays}
    need = MIN_PAIRS_PER_TERM * (5 if with_inertia else 4)
    delays = [d for d in delays if len(pairs[d]) >= need]
    if not delays:  # before: --delay 20 on 10 s of data, an IndexError traceback
        d = int(round(delay / dt)) if delay is not None else 0
        what = f"the reaction time t_d (delay, --delay) {delay:g} s" if delay is not None else "every t_d searched"
        within = f" ({len(segs)} stretches between recorder gaps)" if len(segs) > 1 else ""
        raise ValueError(
            f"fit_alpha: {what} leaves {len(paired_samples(segs, d))} goal/reaction pairs in the "
            f"{sum(b - a - 1 for a, b in segs) * dt:.4g} s of data{within}; the fit needs {need}"
        )

    def cost(d: int, s: float, e: float) -> float:
        i = pairs[d]
        y, A = _design(q_d, q, dq, ddq, tau, i, d, s, e, with_inertia, gain_full[i])
        _, r, _ = _solve(y, A, nonnegative)
        return float(np.mean((r / gain_full[i]) ** 2))

    grid_s = [dq_s] if dq_s is not None else list(np.geomspace(0.01, 5.0, 15))
    grid_e = [delta] if delta is not None else [0.5, 0.75, 1.0, 1.5, 2.0]
    note = ""
    if len(delays) > 1:  # stage 1: t_d on a coarse shape grid; stage 2: the shape at that t_d
        coarse_s, coarse_e = grid_s[::3] + grid_s[-1:], grid_e[::2]

        def coarse(d: int) -> float | None:  # None: too few pairs at d
            if d not in pairs:
                pairs[d] = paired_samples(segs, d)
            if len(pairs[d]) < need:
                return None
            return min(cost(d, s, e) for s in coarse_s for e in coarse_e)

        d_pick = min((coarse(d), d) for d in delays)[1]
        d_pick, note = past_bounds(coarse, d_pick, delays[0], delays[-1], dt)
        delays = [d_pick]
    best = min(((cost(d, s, e), d, s, e) for d in delays for s in grid_s for e in grid_e), key=lambda c: c[0])
    _, d_best, s_best, e_best = best
    if dq_s is None or delta is None:  # refine (log q̇_s, δ) by Nelder–Mead around the best grid point

        def f(x):
            s = dq_s if dq_s is not None else float(np.exp(np.clip(x[0], np.log(0.01), np.log(5.0))))
            e = delta if delta is not None else float(np.clip(x[1], 0.5, 2.0))
            return cost(d_best, s, e)

        res = minimize(
            f, [np.log(s_best), e_best], method="Nelder-Mead", options={"xatol": 1e-3, "fatol": 1e-12, "maxiter": 200}
        )
        if res.fun < best[0]:
            s_best = dq_s if dq_s is not None else float(np.exp(np.clip(res.x[0], np.log(0.01), np.log(5.0))))
            e_best = delta if delta is not None else float(np.clip(res.x[1], 0.5, 2.0))
    i_best = pairs[d_best]
    y, A = _design(q_d, q, dq, ddq, tau, i_best, d_best, s_best, e_best, with_inertia, gain_full[i_best])
    alpha, resid, cond = _solve(y, A, nonnegative)
    if not math.isfinite(cond) or cond > max_condition:
        _, _, vt = np.linalg.svd(A / np.maximum(np.linalg.norm(A, axis=0), 1e-300))
        worst = int(np.argmax(np.abs(vt[-1])))
        raise RankDeficientError(
            f"regressor matrix is ill-conditioned (condition number {cond:.3g}); the column "
            f"{COLUMN_NAMES[worst]} is nearly a combination of the others — the trajectory "
            f"does not excite it independently"
        )
    if not np.isfinite(alpha).all():
        raise RankDeficientError("least-squares solution is not finite")
    rms = float(np.sqrt(np.mean((resid / gain_full[i_best]) ** 2)))
    return AlphaFit(alpha, float(s_best), float(e_best), d_best * dt, d_best, resid, rms, cond, len(y), note)


def feedforward_command(
    fit: AlphaFit,
    q: np.ndarray,
    dq: np.ndarray,
    ddq: np.ndarray | None,
    tau: np.ndarray,
    kp: float,
    u_bat: float | np.ndarray,
) -> np.ndarray:
    """Goal positions q_d(t) = Eq. 19 evaluated on the desired trajectory at t + t_d (last sample held)."""
    d = fit.delay_steps

    def ahead(x):
        x = np.asarray(x, float)
        return np.concatenate([x[d:], np.repeat(x[-1:], d)]) if d else x

    return goal_position_from_torque(
        ahead(q), ahead(tau), ahead(dq), None if ddq is None else ahead(ddq), fit.alpha, kp, u_bat, fit.dq_s, fit.delta
    )


__all__ = [
    "AlphaFit",
    "RankDeficientError",
    "ReactionTimeError",
    "MAX_REACTION",
    "fit_alpha",
    "estimate_reaction_time",
    "command_reaction_lag",
    "paired_samples",
    "feedforward_command",
    "COLUMN_NAMES",
]
