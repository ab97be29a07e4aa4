"""Explicit-integration stability of Algorithm 1 (Duclusaud et al.): the back-EMF damping kt²/R integrated with
step dt diverges unless dt < 2·J·R/kt². Pure functions: nodes check a change before taking it."""

from __future__ import annotations

import numpy as np

from . import slots
from .params import pack


def max_stable_dt(kt, R, inertia) -> np.ndarray:
    """Largest step [s] for which the explicit update of Algorithm 1 (line 8: θ̇ += θ̈·dt) keeps the back-EMF
    damping stable: the motor law gives J·θ̈ = … − (kt²/R)·θ̇, so θ̇ is multiplied by 1 − dt·kt²/(R·J) each step,
    which stays in (−1, 1) only for dt < 2·J·R/kt². ``inertia`` = load inertia + armature [kg·m²]."""
    kt, R, J = (np.asarray(x, dtype=np.float64) for x in (kt, R, inertia))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(kt > 0, 2.0 * J * R / np.square(kt), np.inf)


def step_stability_refusal(params, load_inertia, dt: float, names=None) -> str | None:
    """Why stepping ``params`` over ``load_inertia`` [kg·m²] (per joint) with step ``dt`` [s] is not stable
    (:func:`max_stable_dt`, first offending joint), or None. Pure: nodes call it before taking a change."""
    p = pack(params)
    j_load = np.atleast_1d(np.asarray(load_inertia, dtype=np.float64))
    j = j_load + p[..., slots.ARM]
    limit = np.atleast_1d(max_stable_dt(p[..., slots.KT], p[..., slots.R], j))
    j = np.broadcast_to(j, limit.shape)
    bad = ~(float(dt) < limit)
    if not bad.any():
        return None
    i = int(np.argmin(np.where(bad, limit, np.inf)))  # the worst joint
    name = names[i] if names is not None and i < len(names) else f"joint {i}"
    return (
        f"physics step {dt:.3g} s is not below the explicit-integration stability limit 2·J·R/kt² = "
        f"{limit[i]:.3g} s of {name} (J = load {j_load[min(i, j_load.size - 1)]:.3g} + armature "
        f"{float(np.broadcast_to(p[..., slots.ARM], limit.shape)[i]):.3g} kg·m², R = "
        f"{float(np.broadcast_to(p[..., slots.R], limit.shape)[i]):.3g} Ω, kt = "
        f"{float(np.broadcast_to(p[..., slots.KT], limit.shape)[i]):.3g} N·m/A): the back-EMF damping would diverge"
    )
