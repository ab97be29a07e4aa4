"""Embedded-controller structure of an R/C servo from its reference-to-angle model order (Wada et al. (R/C Servo Motors)
§II-B, §IV-A).

With the DC motor P(p) = k_τ / (((R+Lp)(Jp+D_φ) + k_e k_τ) p) (Wada et al. Eq. 4–5), each candidate controller K(p)
gives a closed-loop model of known orders (Wada et al. Table I):

    PID  (K_D p² + K_P p + K_I)/p   numerator 2, denominator 4
    PI   (K_P p + K_I)/p            numerator 1, denominator 4
    PD   K_D p + K_P                numerator 1, denominator 3
    D-P  v = K_P(u − φ) − K_D φ̇      numerator 0, denominator 3   (Wada et al. Eq. 6: derivative on the output only)
    P    K_P                        numerator 0, denominator 3

SRIVC is run for every candidate order; the structure is chosen by YIC among the models whose R²_T is
within ``r2_tolerance`` of the best one (Wada et al. STEP 3 / Table II: the smallest YIC wins, R²_T barely differs).
D-P and P have the same orders, so the data cannot separate them: the (3, 0) class is reported as "D-P"
(P is D-P with K_D = 0).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .srivc import srivc
from .tf_fit import CTModel

#: (denominator order n, numerator order m) of the reference-to-angle model, Wada et al. Table I.
CONTROLLER_ORDERS: dict[str, tuple[int, int]] = {"PID": (4, 2), "PI": (4, 1), "PD": (3, 1), "D-P": (3, 0), "P": (3, 0)}
#: Candidates distinguishable by order (P shares D-P's orders).
DEFAULT_CANDIDATES = ("PID", "PI", "PD", "D-P")


@dataclass(frozen=True)
class StructureSelection:
    """Result of :func:`select_controller_structure`: the chosen structure, its model and every candidate's
    model (or the reason it was rejected)."""

    structure: str
    model: CTModel
    models: dict[str, CTModel] = field(default_factory=dict)
    rejected: dict[str, str] = field(default_factory=dict)

    def table(self) -> list[tuple[str, int, int, float, float, str]]:
        """Rows (structure, n, m, YIC, R²_T, note) like Wada et al. Table II."""
        rows = []
        for name in list(self.models) + list(self.rejected):
            n, m = CONTROLLER_ORDERS[name]
            if name in self.models:
                mod = self.models[name]
                rows.append((name, n, m, mod.yic, mod.r2t, "selected" if name == self.structure else ""))
            else:
                rows.append((name, n, m, float("nan"), float("nan"), self.rejected[name]))
        return rows


def orders_for(structure: str) -> tuple[int, int]:
    """(n, m) of a controller structure name (PID, PI, PD, D-P, P)."""
    try:
        return CONTROLLER_ORDERS[structure]
    except KeyError:
        raise ValueError(f"unknown controller structure {structure!r}; known: {', '.join(CONTROLLER_ORDERS)}") from None


def select_controller_structure(
    u, y, dt: float, candidates=DEFAULT_CANDIDATES, *, lam: float | None = None, r2_tolerance: float = 0.01
) -> StructureSelection:
    """Fit each candidate structure's orders with SRIVC and pick the smallest YIC among the models whose R²_T
    is within ``r2_tolerance`` of the best. Unstable or failed candidates are listed in ``rejected``."""
    names = list(dict.fromkeys(candidates))
    if not names:
        raise ValueError("candidates must name at least one controller structure")
    seen: dict[tuple[int, int], str] = {}
    models: dict[str, CTModel] = {}
    rejected: dict[str, str] = {}
    for name in names:
        nm = orders_for(name)
        if nm in seen:  # same orders (D-P and P): one fit serves both
            if seen[nm] in models:
                models[name] = models[seen[nm]]
            continue
        seen[nm] = name
        try:
            models[name] = srivc(u, y, dt, *nm, lam=lam)
        except ValueError as e:  # unstable or singular for this order: not a valid candidate
            rejected[name] = str(e)
    if not models:
        raise ValueError(
            "no candidate controller structure gave a stable model: "
            + "; ".join(f"{k}: {v}" for k, v in rejected.items())
        )
    best_r2 = max(mod.r2t for mod in models.values())
    eligible = {k: mod for k, mod in models.items() if mod.r2t >= best_r2 - r2_tolerance}
    best = min(eligible, key=lambda k: eligible[k].yic)
    return StructureSelection(structure=best, model=models[best], models=models, rejected=rejected)


def dp_control_law(u, phi, dphi, KP: float, KD: float):
    """D-P controller voltage v = K_P(u − φ) − K_D φ̇ [V] (Wada et al. Eq. 6): derivative acts on the measured angle
    only. ``u`` reference [rad], ``phi`` angle [rad], ``dphi`` velocity [rad/s]; arrays broadcast."""
    return KP * (np.asarray(u, dtype=float) - np.asarray(phi, dtype=float)) - KD * np.asarray(dphi, dtype=float)
