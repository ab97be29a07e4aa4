"""Same-run anchors for the benches (issue 25): time our code and the engine it sits on alternately, A B A B …,
so that the load of a shared machine hits both alike, and report the ratio of the medians.

Not a bench itself (``run_all.py`` skips files starting with ``_``).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np


def interleaved(arms: dict[str, Callable[[], float]], rounds: int) -> dict[str, np.ndarray]:
    """Call each arm once per round, in a fixed order, ``rounds`` times; each call returns its own figure (a time
    or a rate). Returns the figures per arm (arrays of ``rounds``)."""
    out: dict[str, list[float]] = {k: [] for k in arms}
    for _ in range(rounds):
        for k, fn in arms.items():
            out[k].append(float(fn()))
    return {k: np.asarray(v) for k, v in out.items()}


def paired_ratio(num: np.ndarray, den: np.ndarray) -> float:
    """Median of the per-round ratios num/den (each round's two arms saw the same load)."""
    return float(np.median(np.asarray(num) / np.asarray(den)))


def per_call(fn: Callable[[], object], calls: int, clock: Callable[[], float] = time.perf_counter) -> float:
    """Median time [s] of ``calls`` calls of ``fn`` (each call timed on its own)."""
    ts = np.empty(calls)
    for k in range(calls):
        t0 = clock()
        fn()
        ts[k] = clock() - t0
    return float(np.median(ts))


def batch_time(fn: Callable[[], object]) -> float:
    """Wall time [s] of one call of ``fn``."""
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def describe(name: str, values: np.ndarray, unit: str, scale: float = 1.0) -> str:
    """'name: median (min–max over N rounds) unit'."""
    v = np.asarray(values) * scale
    return f"{name}: {np.median(v):.4g} {unit} (min {v.min():.4g}, max {v.max():.4g}, {len(v)} rounds)"
