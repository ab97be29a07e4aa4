"""Potentiometer calibration of a hobby servo by least squares (Santana et al. (MG995 Servomotor) §2.3, Eq. 1–4).

Steady-state pairs (commanded angle θ_k, potentiometer voltage v_k) fit v = αθ + β (Eq. 1) by
[α̂ β̂]ᵀ = (ΛᵀΛ)⁻¹Λᵀv with Λ = [θ 1] (Eq. 2–3). The paper's MG995 gives v = 0.014973·θ[deg] + 0.297403 (Eq. 4);
here θ is in radians (SI), so α is in V/rad.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: Santana et al. Eq. 4 (θ in degrees) converted to SI: α [V/rad], β [V].
MG995_POT_ALPHA = 0.014973 * 180 / math.pi
MG995_POT_BETA = 0.297403


@dataclass(frozen=True)
class PotCalibration:
    """v = α·θ + β: ``alpha`` [V/rad], ``beta`` [V], ``rms_residual`` [V] of the fit."""

    alpha: float
    beta: float
    rms_residual: float = 0.0

    def angle(self, volts):
        """θ = (v − β)/α [rad] (inverse of Eq. 1)."""
        v = np.asarray(volts, dtype=float)
        if not np.all(np.isfinite(v)):
            raise ValueError("volts contains NaN/inf")
        return (v - self.beta) / self.alpha

    def volts(self, theta):
        """v = αθ + β [V] (Eq. 1)."""
        return self.alpha * np.asarray(theta, dtype=float) + self.beta


def calibrate_potentiometer(theta, volts) -> PotCalibration:
    """Least-squares α, β from angles ``theta`` [rad] and voltages ``volts`` [V] (Santana et al. Eq. 2–3)."""
    th = np.asarray(theta, dtype=float).reshape(-1)
    v = np.asarray(volts, dtype=float).reshape(-1)
    if th.shape != v.shape:
        raise ValueError(f"theta and volts must have the same length, got {th.size} and {v.size}")
    if th.size < 3:
        raise ValueError(f"potentiometer calibration needs at least 3 (angle, voltage) pairs, got {th.size}")
    if not (np.all(np.isfinite(th)) and np.all(np.isfinite(v))):
        raise ValueError("theta/volts contain NaN/inf")
    if np.ptp(th) == 0:
        raise ValueError("theta takes a single value: the slope alpha is not identifiable")
    Lam = np.column_stack([th, np.ones_like(th)])
    (alpha, beta), *_ = np.linalg.lstsq(Lam, v, rcond=None)
    if alpha == 0:
        raise ValueError("volts do not change with theta: potentiometer signal not connected?")
    rms = float(np.sqrt(np.mean((Lam @ [alpha, beta] - v) ** 2)))
    return PotCalibration(float(alpha), float(beta), rms)
