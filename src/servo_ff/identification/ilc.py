"""Iterative Learning Control of a position servo's command curve (Schwarz & Behnke (Compliant Robot Behavior) §4.1, Eq.
20–21, 28).

The servo is P-controlled (Eq. 16), so the voltage ILC of Eq. 21 is run on the goal-position command
q_d (Eq. 17–19 make U and q_d affine in each other at fixed q):

    q_d^(k+1)(t) = q_d^(k)(t) + λ·e^(k)(t + t_d),   e^(k) = q_ref − q_m^(k)            (Eq. 21)

starting from zero (Eq. 20), the reference itself (the paper's Fig. 3), or a model guess (Eq. 19). The
learning stops when the windowed error q_max (Eq. 28, window D) is ≤ a threshold or after an iteration
cap; every iteration's command and measurement are kept. ``execute`` is anything that runs a command curve
and returns the measured trajectory — the simulated servo, or the ROS node on the real one. Arrays are
(T, ...): the trailing axes are independent ILC problems (joints, batch) learned together.

Learning also stops early, keeping the trials done (:attr:`ILCResult.stopped` says why): a learned command that
would leave the joint ``limits`` is never run (a reference outside them is refused before the first trial); a
windowed error above ``diverge_factor`` × the first, or growing ``diverge_growth`` iterations in a row, is
divergence; ``execute`` raising :class:`ILCStop` (an interrupt, a trial the caller refuses to learn from).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import ServoFFError


def window_steps(window: float, dt: float) -> int:
    """Largest integer shift a with |a|·dt < D (Eq. 28's open window)."""
    if not (window >= 0 and dt > 0):
        raise ValueError(f"window must be >= 0 and dt > 0, got window={window}, dt={dt}")
    return max(int(math.ceil(window / dt - 1e-9)) - 1, 0)


def windowed_deviation(reference: np.ndarray, measured: np.ndarray, steps: int) -> np.ndarray:
    """min over |a| ≤ steps of |q_ref(t) − q_m(t + a)| for every t (shifts past the ends are ignored)."""
    ref = np.asarray(reference, float)
    meas = np.asarray(measured, float)
    if ref.shape != meas.shape:
        raise ValueError(f"reference {ref.shape} and measured {meas.shape} shapes differ")
    n = ref.shape[0]
    best = np.abs(ref - meas)
    for a in range(1, steps + 1):
        if a >= n:
            break
        best[: n - a] = np.minimum(best[: n - a], np.abs(ref[: n - a] - meas[a:]))
        best[a:] = np.minimum(best[a:], np.abs(ref[a:] - meas[: n - a]))
    return best


def windowed_error(reference: np.ndarray, measured: np.ndarray, window: float, dt: float) -> np.ndarray:
    """q_max = max_t min_{−D<a<D} |q_ref(t) − q_m(t + a)| (Eq. 28) [rad], one value per problem (axes 1…)."""
    return windowed_deviation(reference, measured, window_steps(window, dt)).max(axis=0)


class ILCStop(ServoFFError):
    """Raised by ``execute`` to end learning with the trials done so far (its message: why; ``kind``: one of
    STOP_KINDS)."""

    def __init__(self, reason: str, kind: str = "interrupted"):
        super().__init__(reason)
        self.kind = kind


DIVERGE_FACTOR = 3.0  # default stop: q_max above this × the first trial's (servo_ilc_node, servo-ff ilc)
DIVERGE_GROWTH = 3  # default stop: q_max growing this many iterations in a row, to over twice its lowest
STOP_KINDS = ("limit", "diverged", "interrupted", "no_response")  # ILCResult.stop_kind when learning stopped early


def outside_limits(curve: np.ndarray, lower: float, upper: float, dt: float) -> str:
    """Where ``curve`` (T, ...) [rad] first leaves [lower, upper] [rad] as 'X rad at t = Y s, below/above the
    lower/upper limit Z rad' (the farthest sample), or '' when it stays within."""
    below, above = lower - curve, curve - upper
    worst = np.maximum(below, above)
    if not (worst > 0).any():
        return ""
    k = np.unravel_index(int(np.argmax(worst)), worst.shape)
    side = ("below the lower", lower) if below[k] > above[k] else ("above the upper", upper)
    return f"{float(curve[k]):.4f} rad at t = {k[0] * dt:.3f} s, {side[0]} limit {side[1]:.4f} rad"


def divergence(errors: list[np.ndarray], factor: float, growth: int) -> str:
    """Why the windowed errors q_max [rad] of the iterations so far diverge ('' when they do not): the latest above
    ``factor`` × the first (0: not checked), or grown ``growth`` iterations in a row to over twice the lowest so
    far (0: not checked; the doubling: jitter around the error's floor is no divergence)."""
    e = np.array([float(np.max(x)) for x in errors])
    k = len(e) - 1
    if factor > 0 and k > 0 and e[k] > factor * e[0]:
        return f"q_max {e[k]:.4f} rad at iteration {k} is above {factor:g} × the first ({e[0]:.4f} rad)"
    if growth > 0 and k >= growth and (np.diff(e[-growth - 1 :]) > 0).all() and e[k] > 2 * e.min():
        path = " → ".join(f"{x:.4f}" for x in e[-growth - 1 :])
        return f"q_max grew {growth} iteration(s) in a row ({path} rad, iteration {k}), over twice its lowest"
    return ""


def unresponsive(command: np.ndarray, measured: np.ndarray, ratio: float) -> str:
    """Why ``measured`` [rad] does not follow ``command`` [rad] at all ('' when it does): its range (peak to peak)
    below ``ratio`` × the command's (a servo with torque off, or not taking the goals; a still command: '')."""
    span_u, span_q = float(np.ptp(command)), float(np.ptp(measured))
    if span_u > 0 and span_q < ratio * span_u:
        return f"it moved {span_q:.4f} rad for a command spanning {span_u:.4f} rad (under {ratio:g} × that)"
    return ""


@dataclass
class ILCResult:
    commands: np.ndarray  # (K+1, T, ...) command curve of every iteration [rad]
    measured: np.ndarray  # (K+1, T, ...) measured trajectory of every iteration [rad]
    errors: np.ndarray  # (K+1, ...) windowed error q_max per iteration [rad]
    iterations: np.ndarray  # (...) first iteration whose q_max ≤ threshold (−1: never)
    reference: np.ndarray  # (T, ...)
    gain: float
    delay_steps: int
    threshold: float
    window: float
    dt: float
    stopped: str = ""  # why learning stopped before converging or the cap ('': it did not)
    stop_kind: str = ""  # one of STOP_KINDS, '' when not stopped

    @property
    def converged(self) -> np.ndarray:
        return self.iterations >= 0

    @property
    def final_command(self) -> np.ndarray:
        return self.commands[-1]


def _shift_forward(e: np.ndarray, d: int) -> np.ndarray:
    """e(t + d) with the last sample held past the end."""
    if d <= 0:
        return e
    return np.concatenate([e[d:], np.repeat(e[-1:], d, axis=0)], axis=0)


def _lowpass(x: np.ndarray, cutoff_hz: float, dt: float) -> np.ndarray:
    from scipy.signal import butter, filtfilt

    b, a = butter(2, cutoff_hz * 2 * dt)
    return filtfilt(b, a, x, axis=0)


def run_ilc(
    execute: Callable[[np.ndarray], np.ndarray],
    reference: np.ndarray,
    dt: float,
    gain: float = 1.0,
    delay: float = 0.0,
    initial: str | np.ndarray = "reference",
    threshold: float = 0.02,
    window: float = 0.025,
    max_iterations: int = 30,
    filter_hz: float | None = None,
    progress: bool = False,
    limits: tuple[float, float] | None = None,
    diverge_factor: float = 0.0,
    diverge_growth: int = 0,
) -> ILCResult:
    """Learn a goal-position command curve with Arimoto ILC (Eq. 20–21).

    ``execute(command (T, ...)) -> measured (T, ...)`` runs one trial. ``gain`` is λ (dimensionless here,
    rad of command per rad of error), ``delay`` the reaction time t_d [s] (rounded to steps), ``initial``
    "zero" (Eq. 20), "reference", or an array (e.g. Eq. 19's model curve). ``filter_hz``: optional zero-phase
    low-pass on the update (a Q-filter; None = plain Arimoto). Problems that reach ``threshold`` stop learning
    (their command is frozen) while the others continue.

    ``limits`` (lower, upper) [rad]: a reference or initial command outside is a ValueError naming the value and
    the limit; a learned command outside is not run, learning stops (``stop_kind`` "limit"). ``diverge_factor``,
    ``diverge_growth``: see :func:`divergence` (0: off); learning stops with ``stop_kind`` "diverged". An
    :class:`ILCStop` from ``execute`` stops it with ``stop_kind`` its ``kind`` (no trial done: re-raised).
    """
    ref = np.asarray(reference, float)
    if ref.ndim < 1 or ref.shape[0] < 2:
        raise ValueError("reference must be shaped (T, ...) with T >= 2")
    if not np.isfinite(ref).all():
        raise ValueError("reference contains non-finite values")
    for name, v in (("gain", gain), ("delay", delay), ("threshold", threshold), ("dt", dt)):
        if not math.isfinite(v) or v < 0 or (name in ("dt", "gain") and v == 0):
            raise ValueError(f"{name} must be finite and {'> 0' if name in ('dt', 'gain') else '>= 0'}, got {v}")
    if max_iterations < 0:
        raise ValueError(f"max_iterations must be >= 0, got {max_iterations}")
    if isinstance(initial, str):
        if initial == "zero":
            u = np.zeros_like(ref)
        elif initial == "reference":
            u = ref.copy()
        else:
            raise ValueError(f"initial must be 'zero', 'reference' or an array, got {initial!r}")
    else:
        u = np.array(initial, float)
        if u.shape != ref.shape:
            raise ValueError(f"initial command shape {u.shape} differs from reference {ref.shape}")
        if not np.isfinite(u).all():
            raise ValueError("initial command contains non-finite values")
    d = int(round(delay / dt))
    if d >= ref.shape[0]:  # the shift would leave no sample to learn from (before: a numpy broadcast error)
        raise ValueError(
            f"delay {delay:g} s is not shorter than the reference ({ref.shape[0]} samples at dt {dt:g} s = "
            f"{ref.shape[0] * dt:g} s)"
        )
    if limits is not None:
        for what, curve in (("reference", ref), ("initial command", u)):
            where = outside_limits(curve, limits[0], limits[1], dt)
            if where:
                raise ValueError(f"the {what} leaves the joint limits: {where}")
    steps = window_steps(window, dt)
    commands, measured, errors = [], [], []
    stopped, kind = "", ""
    done = np.full(ref.shape[1:], -1, dtype=int)
    from tqdm.auto import tqdm

    bar = tqdm(total=max_iterations + 1, desc="ILC", unit="iter", disable=not progress, leave=False)
    for k in range(max_iterations + 1):
        try:
            q = np.asarray(execute(u), float)
        except ILCStop as e:
            if not commands:
                raise
            stopped, kind = f"iteration {k}: {e}", e.kind
            break
        if q.shape != ref.shape:
            raise ValueError(f"execute returned shape {q.shape}, expected {ref.shape}")
        if not np.isfinite(q).all():
            raise ValueError(f"execute returned non-finite positions at iteration {k}")
        err = windowed_deviation(ref, q, steps).max(axis=0)
        commands.append(u.copy())
        measured.append(q)
        errors.append(err)
        newly = (done < 0) & (err <= threshold)
        done = np.where(newly, k, done)
        bar.update(1)
        bar.set_postfix(max_error=f"{float(np.max(err)):.4f}")
        if (done >= 0).all():
            break
        why = divergence(errors, diverge_factor, diverge_growth)
        if why:  # before: learned on (the audit's gain 6: q_max 0.224 → 2.679 rad, goals to 13.3 rad), ended "done"
            stopped, kind = f"diverged: {why}", "diverged"
            break
        if k == max_iterations:
            break
        update = gain * _shift_forward(ref - q, d)
        if filter_hz:
            update = _lowpass(update, filter_hz, dt)
        u = u + np.where(done >= 0, 0.0, update)  # converged problems keep their command
        where = "" if limits is None else outside_limits(u, limits[0], limits[1], dt)
        if where:
            stopped, kind = f"the command learned for iteration {k + 1} leaves the joint limits: {where}", "limit"
            break
    bar.close()
    return ILCResult(
        np.stack(commands),
        np.stack(measured),
        np.stack(errors),
        done,
        ref,
        gain,
        d,
        threshold,
        window,
        dt,
        stopped,
        kind,
    )


__all__ = [
    "window_steps",
    "windowed_deviation",
    "windowed_error",
    "ILCStop",
    "STOP_KINDS",
    "outside_limits",
    "divergence",
    "unresponsive",
    "ILCResult",
    "run_ilc",
]
