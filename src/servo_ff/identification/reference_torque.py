"""Reference-to-torque model of a D-P controlled R/C servo (Wada et al. (R/C Servo Motors) §IV-B, Eq. 6, 8–10).

Closed loop with the D-P law v = K_P(u − φ) − K_D φ̇ (Eq. 6):

    φ/u = B_0/(B_3p³ + B_2p² + B_1p + B_0),  B_0 = K_Pk_τ, B_1 = RD_φ + k_ek_τ + K_Dk_τ, B_2 = RJ + D_φL, B_3 = LJ,

and the torque the motor applies (Eq. 9–10)

    τ = −(c_1 p + c_0)/(p + R/L) φ + c_0/(p + R/L) u,   c_0 = K_Pk_τ/L,  c_1 = (k_e + K_D)k_τ/L.

Only J, D_φ, R/L, c_0, c_1 are identifiable; two experiments with inertias J and J + δJ (δJ known, signed)
give them in closed form from the two monic denominators [1, a_2, a_1, a_0]:
a_0 = c_0/J ⇒ J = δJ·a_0'/(a_0 − a_0');  a_2 = R/L + D_φ/J ⇒ D_φ, R/L;  a_1 = ((R/L)D_φ + c_1)/J ⇒ c_1.
The second a_1' is not used and serves as a consistency check.
"""

from __future__ import annotations

from dataclasses import dataclass

import control
import numpy as np
from scipy.signal import lfilter

from ..models.params import ParameterError
from .tf_fit import UnstableModelError, _discretise


@dataclass(frozen=True)
class DPServoPhysical:
    """Physical D-P servo (Wada et al. Fig. 3–4): J [kg·m²], D [N·m·s/rad], R [Ω], L [H], ke [V·s/rad], kt [N·m/A],
    KP [V/rad], KD [V·s/rad]."""

    J: float
    D: float
    R: float
    L: float
    ke: float
    kt: float
    KP: float
    KD: float

    def __post_init__(self) -> None:
        for k in ("J", "R", "L", "ke", "kt", "KP"):
            v = getattr(self, k)
            if not (np.isfinite(v) and v > 0):
                raise ParameterError(f"{k} must be positive and finite, got {v}")
        for k in ("D", "KD"):
            v = getattr(self, k)
            if not (np.isfinite(v) and v >= 0):
                raise ParameterError(f"{k} must be finite and >= 0, got {v}")


@dataclass(frozen=True)
class TorqueModel:
    """Identifiable reference-to-torque parameters: J, D_φ, R/L [1/s], c_0 = K_Pk_τ/L, c_1 = (k_e+K_D)k_τ/L;
    ``consistency`` is the relative misfit of the unused a_1' (0 for exact data)."""

    J: float
    D: float
    R_over_L: float
    c0: float
    c1: float
    consistency: float = 0.0


def dp_servo_tf(p: DPServoPhysical, delta_J: float = 0.0) -> control.TransferFunction:
    """φ/u of the D-P servo with inertia J + δJ (Wada et al. §IV-A)."""
    J = p.J + delta_J
    if J <= 0:
        raise ParameterError(f"J + delta_J must be positive, got {J}")
    B0 = p.KP * p.kt
    return control.tf([B0], [p.L * J, p.R * J + p.D * p.L, p.R * p.D + p.ke * p.kt + p.KD * p.kt, B0])


def torque_model_from_physical(p: DPServoPhysical) -> TorqueModel:
    """The identifiable combination of a physical D-P servo."""
    return TorqueModel(J=p.J, D=p.D, R_over_L=p.R / p.L, c0=p.KP * p.kt / p.L, c1=(p.ke + p.KD) * p.kt / p.L)


def _monic3(den, name: str) -> np.ndarray:
    d = np.asarray(den, dtype=float).reshape(-1)
    if d.size != 4 or not np.all(np.isfinite(d)) or d[0] == 0:
        raise ValueError(f"{name} must be a third-order denominator [1, a2, a1, a0], got {den!r}")
    d = d / d[0]
    if np.any(np.roots(d).real >= 0):
        raise UnstableModelError(f"{name} = {d.tolist()} has unstable poles")
    return d


def two_inertia_parameters(den_J, den_J2, delta_J: float) -> TorqueModel:
    """J, D_φ, R/L, c_0, c_1 from the monic denominators identified with inertias J and J + ``delta_J``."""
    d1, d2 = _monic3(den_J, "den_J"), _monic3(den_J2, "den_J2")
    if not (np.isfinite(delta_J) and delta_J != 0):
        raise ParameterError(f"delta_J must be finite and non-zero, got {delta_J}")
    _, a2, a1, a0 = d1
    _, b2, b1, b0 = d2
    if a0 == b0:
        raise ValueError("the two denominators have the same a0: the inertia change is not visible in the data")
    J = delta_J * b0 / (a0 - b0)
    J2 = J + delta_J
    if J <= 0 or J2 <= 0:
        raise ValueError(
            f"inertias from the data are not positive (J = {J:.3g}, J + delta_J = {J2:.3g}); check the "
            "sign of delta_J (second experiment minus first)"
        )
    D = (a2 - b2) / (1 / J - 1 / J2)
    R_over_L = a2 - D / J
    c0 = a0 * J
    c1 = a1 * J - R_over_L * D
    pred_b1 = (R_over_L * D + c1) / J2
    return TorqueModel(J=J, D=D, R_over_L=R_over_L, c0=c0, c1=c1, consistency=float(abs(pred_b1 - b1) / abs(b1)))


def reference_to_torque_tfs(tm: TorqueModel) -> tuple[control.TransferFunction, control.TransferFunction]:
    """(τ/φ, τ/u) of Wada et al. Eq. 9–10 [N·m/rad]."""
    if not (tm.R_over_L > 0):
        raise UnstableModelError(f"R/L = {tm.R_over_L} must be positive for a stable torque model")
    den = [1.0, tm.R_over_L]
    return control.tf([-tm.c1, -tm.c0], den), control.tf([tm.c0], den)


def estimate_torque(tm: TorqueModel, u, phi, dt: float) -> np.ndarray:
    """Applied torque τ [N·m] from the reference ``u`` [rad] (held between samples) and the measured angle
    ``phi`` [rad] (first-order hold), sampled every ``dt`` [s], starting at rest (Wada et al. Eq. 10)."""
    u = np.asarray(u, dtype=float).reshape(-1)
    phi = np.asarray(phi, dtype=float).reshape(-1)
    if u.shape != phi.shape or u.size < 2:
        raise ValueError(f"u and phi must have the same length >= 2, got {u.size} and {phi.size}")
    if not (np.all(np.isfinite(u)) and np.all(np.isfinite(phi))):
        raise ValueError("u/phi contain NaN/inf")
    if not (np.isfinite(dt) and dt > 0):
        raise ValueError(f"dt must be positive and finite, got {dt}")
    g_phi, g_u = reference_to_torque_tfs(tm)
    bp, ap = _discretise(g_phi.num[0][0], g_phi.den[0][0], dt, "foh")
    bu, au = _discretise(g_u.num[0][0], g_u.den[0][0], dt, "zoh")
    return lfilter(bp, ap, phi) + lfilter(bu, au, u)
