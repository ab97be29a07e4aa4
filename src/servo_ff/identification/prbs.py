"""Pseudo-random binary sequence (PRBS) excitation (Santana et al. (MG995 Servomotor) §3.1: ±10° PRBS with a 0.07 s
clock).

A maximum-length sequence of ``nbits`` (period 2^nbits − 1 clock periods) from ``scipy.signal.max_len_seq``,
mapped to ±amplitude around ``offset`` and held for ``clock`` seconds, sampled every ``dt``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.signal import max_len_seq


def prbs(
    n_samples: int,
    dt: float,
    *,
    amplitude: float,
    clock: float,
    nbits: int = 9,
    offset: float = 0.0,
    seed: int | None = None,
) -> np.ndarray:
    """PRBS of ``n_samples`` samples at ``dt`` [s]; each bit lasts ``clock`` [s] (a multiple of dt is rounded
    to the nearest sample count ≥ 1). ``seed`` rotates the start state (different sequences, same spectrum)."""
    if not isinstance(n_samples, (int, np.integer)) or n_samples < 2:
        raise ValueError(f"n_samples must be an integer >= 2, got {n_samples!r}")
    for name, v in (("dt", dt), ("clock", clock), ("amplitude", amplitude)):
        if not math.isfinite(v) or v <= 0:
            raise ValueError(f"{name} must be positive and finite, got {v!r}")
    if not math.isfinite(offset):
        raise ValueError("offset must be finite")
    if not 2 <= nbits <= 32:
        raise ValueError(f"nbits must be in 2..32, got {nbits}")
    hold = max(1, int(round(clock / dt)))
    n_bits_needed = -(-n_samples // hold)
    state = None
    if seed is not None:
        rng = np.random.default_rng(seed)
        state = rng.integers(0, 2, nbits)
        if not state.any():
            state[0] = 1
    bits, _ = max_len_seq(nbits, state=state, length=n_bits_needed)
    levels = offset + amplitude * (2.0 * bits - 1.0)
    return np.repeat(levels, hold)[:n_samples]
