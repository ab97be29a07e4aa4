"""Recorder gaps: stretches of a recording without a measured sample, which resampling must not fill in.

A recorder that stalls (a full queue, a paused logger, a busy bus) leaves a hole in the measured positions; linear
interpolation across it invents a straight-line motion the joint never made (before: 0.3 s of every topic of a bag
dropped at 5.6 s gave α̂2 = 32 instead of ≈ 0, exit 0). A step between two measured samples longer than
:func:`gap_bound` is a gap: the grid samples inside it are not used, and the log is fitted as the contiguous
stretches around it (:attr:`servo_ff.io.servo_log.ServoLog.segments`); a stretch shorter than
:data:`MIN_STRETCH` is not used either. Both are said in one log line per log.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import numpy as np

#: A step between measured samples longer than GAP_PERIODS median sample periods and GAP_STEPS grid steps is a gap.
#: 5 periods: a late tick or a few lost messages (the usual jitter of a recorder; the ILC node itself interpolates
#: over 2.5 periods) stay interpolated — over 4 periods of 5 ms at 30 rad/s² the straight line is off by
#: a·h²/8 ≈ 1.5 mrad, one 12-bit encoder count. 2 grid steps: on a grid coarser than the recording, a gap that
#: short removes the support of at most one grid sample, which resampling averages away anyway.
GAP_PERIODS = 5.0
GAP_STEPS = 2.0
MIN_STRETCH = 0.5  # [s] shortest stretch between gaps that is used (identification's shortest log)
SAME_TIME = 1e-6  # [grid steps] a grid sample nearer than this to a measured sample is at it, not inside the gap

Spans = tuple[tuple[int, int], ...]  # [start, stop) sample ranges
_log = logging.getLogger(__name__)


def gap_bound(t: np.ndarray, dt: float) -> float:
    """Longest step [s] between the measured samples at ``t`` [s] interpolated over: max(GAP_PERIODS × the median
    step, GAP_STEPS × the grid step ``dt`` [s])."""
    return max(GAP_PERIODS * float(np.median(np.diff(t))), GAP_STEPS * dt)


def runs(mask: np.ndarray) -> Spans:
    """[start, stop) index ranges of the runs of True in ``mask``."""
    edges = np.flatnonzero(np.diff(np.concatenate(([0], np.asarray(mask, bool).astype(int), [0]))))
    return tuple((int(a), int(b)) for a, b in zip(edges[::2], edges[1::2]))


def measured_spans(
    source: str,
    what: str,
    t_meas: np.ndarray,
    t_grid: np.ndarray,
    dt: float,
    t0: float,
    say: Callable[[str], object] | None = None,
) -> Spans | None:
    """Sample ranges of the grid ``t_grid`` [s] (on the clock of ``t_meas``) between the gaps of the measured samples
    at ``t_meas`` [s], each at least :data:`MIN_STRETCH` long; None when there is no gap. One warning line naming
    ``source``, ``what`` (the topic or column), the longest gap (its time on the log's clock, which starts at
    ``t0`` of ``t_grid``'s clock) and what is left out, to ``say`` (None: this module's logger; a caller that
    repeats itself, the online RLS, throttles it)."""
    bound = gap_bound(t_meas, dt)
    step = np.diff(t_meas)
    gaps = np.flatnonzero(step > bound)
    if not gaps.size:
        return None
    in_gap = np.zeros(len(t_grid), bool)
    eps = SAME_TIME * dt  # a grid sample this close to a measured one is at it (t0 + k·dt lands ±1e-13 s off)
    for i in gaps:  # grid samples strictly between the two measured samples around the gap
        lo = np.searchsorted(t_grid, t_meas[i] + eps, "right")
        in_gap[lo : np.searchsorted(t_grid, t_meas[i + 1] - eps, "left")] = True
    min_len = max(2, int(np.ceil(MIN_STRETCH / dt - 1e-9)))
    found = runs(~in_gap)
    kept = tuple(r for r in found if r[1] - r[0] >= min_len)
    worst = int(gaps[np.argmax(step[gaps])])
    n_used = sum(b - a for a, b in kept)
    short = sum(b - a for a, b in found) - n_used
    text = (
        f"{source}: {what}: {gaps.size} recorder gap(s) longer than {bound:.3g} s (the longest {step[worst]:.3f} s "
        f"at {t_meas[worst] - t0:.3f} s): not interpolated across; {n_used} of {len(t_grid)} samples used, in "
        f"{len(kept)} contiguous stretch(es)"
        + (f", {short} in stretches shorter than {MIN_STRETCH:g} s not used" if short else "")
    )
    if say is None:
        _log.warning("%s", text)
    else:
        say(text)
    return kept


def gradient_within(x: np.ndarray, t: np.ndarray, bound: float) -> np.ndarray:
    """dx/dt by central differences (np.gradient) within each piece of ``t`` [s] between steps longer than
    ``bound`` [s], never across one (a piece of one sample: 0)."""
    out = np.zeros(len(x))
    cuts = np.concatenate(([0], np.flatnonzero(np.diff(t) > bound) + 1, [len(t)]))
    for a, b in zip(cuts[:-1], cuts[1:]):
        if b - a > 1:
            out[a:b] = np.gradient(x[a:b], t[a:b])
    return out


__all__ = [
    "GAP_PERIODS",
    "GAP_STEPS",
    "MIN_STRETCH",
    "SAME_TIME",
    "Spans",
    "gap_bound",
    "runs",
    "measured_spans",
    "gradient_within",
]
