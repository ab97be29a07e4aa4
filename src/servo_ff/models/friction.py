"""Friction as a torque budget (Duclusaud et al. (Extended Friction Models) §II-B, §III), vectorised over any array
shape.

``p`` is a packed coefficient array (..., N_PACKED) from :meth:`ActuatorParams.packed`; torques in N·m,
velocities in rad/s. All M1–M6 are evaluated by one formula (M6, Eq. 10) with unused terms zero.
"""

from __future__ import annotations

import numpy as np

from . import slots


def stribeck_weight(dtheta: np.ndarray, v_s: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """exp(−|θ̇ / v_s|^α): 1 at rest, → 0 when moving (Duclusaud et al. Eq. 6; Schwarz & Behnke (Compliant Robot
    Behavior) Eq. 9 with δ = α)."""
    return np.exp(-(np.abs(np.asarray(dtheta) / v_s) ** alpha))


def quadratic_load_term(p: np.ndarray, tau_m: np.ndarray, tau_e: np.ndarray) -> np.ndarray:
    """Q of Eq. 10: K_e^q·τ_e² if |τ_m| > |τ_e|, K_m^q·τ_m² if |τ_m| < |τ_e|; active only when τ_m and τ_e
    oppose (as in bam, whose M6 parameter files assume it)."""
    opposed = np.sign(tau_m) != np.sign(tau_e)
    am, ae = np.abs(tau_m), np.abs(tau_e)
    q = np.where(am > ae, p[..., slots.KEQ] * tau_e**2, np.where(am < ae, p[..., slots.KMQ] * tau_m**2, 0.0))
    return np.where(opposed, q, 0.0)


def friction_budget(p: np.ndarray, tau_m: np.ndarray, tau_e: np.ndarray, dtheta: np.ndarray) -> np.ndarray:
    """τ_f^m = K_v|θ̇| + K_c + |K_m τ_m − K_e τ_e| + w(θ̇)·[K_c^s + |K_m^s τ_m − K_e^s τ_e| + Q]  (Eq. 10).

    M1 (Eq. 3): only K_c, K_v. M2 (Eq. 6): + K_c^s. M3 (Eq. 7): K_m = K_e = K_l.
    M4 (Eq. 8): + K_m^s = K_e^s = K_l^s. M5 (Eq. 9): directional. M6: + Q.
    """
    budget = (
        p[..., slots.KC]
        + p[..., slots.KV] * np.abs(dtheta)
        + np.abs(p[..., slots.KM] * tau_m - p[..., slots.KE] * tau_e)
    )
    static = (
        p[..., slots.KCS]
        + np.abs(p[..., slots.KMS] * tau_m - p[..., slots.KES] * tau_e)
        + quadratic_load_term(p, tau_m, tau_e)
    )
    return budget + stribeck_weight(dtheta, p[..., slots.VS], p[..., slots.ALPHA]) * static


def stopping_torque(
    inertia: np.ndarray, dt: float, dtheta: np.ndarray, tau_m: np.ndarray, tau_e: np.ndarray
) -> np.ndarray:
    """τ_f^stop = −(J/Δt·θ̇ + τ_m + τ_e): the torque that brings θ̇ to 0 in one step (Eq. 4)."""
    return -(inertia / dt * dtheta + tau_m + tau_e)


def applied_friction(tau_stop: np.ndarray, budget: np.ndarray) -> np.ndarray:
    """τ_f = clip(τ_f^stop, −τ_f^m, τ_f^m) (Eq. 5): never more than the budget, never past stopping."""
    return np.clip(tau_stop, -budget, budget)
