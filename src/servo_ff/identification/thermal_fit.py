"""Identification of the winding thermal model (:mod:`servo_ff.models.thermal`) from logged temperatures.

The servo's Present Temperature is simulated from the current each sample carries (measured, or estimated from
the duty and speed through the DC-motor law I = (U − kt·θ̇)/R) by the exact per-step solution of
C·dT/dt = I²·R(T) − (T − T_amb)/R_th, and R_th, C are fitted by least squares on log R_th, log C (both > 0).
Segments recorded apart (several logs of one session) are chained in time; between them the servo only cools.
Present Temperature is an integer in °C on Dynamixel servos: a fit on a few minutes of data pins the heating
rate (1/C) far better than R_th, which needs a run long enough to approach steady state.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..models.thermal import COPPER_TEMPCO, ThermalParams, advance, joule_heat


@dataclass(frozen=True)
class ThermalSegment:
    """One log: ``start`` [s] on the session clock, its uniform ``dt`` [s], ``temp`` [°C] and ``amps`` [A]."""

    start: float
    dt: float
    temp: np.ndarray
    amps: np.ndarray


@dataclass(frozen=True)
class ThermalFit:
    params: ThermalParams
    ambient: float  # [°C]
    rms: float  # [K] RMS of simulated − logged temperature
    rms_constant: float  # [K] RMS of a constant temperature (the first reading): what the model must beat
    n_samples: int


def simulate_segments(
    segments: Sequence[ThermalSegment], R: float, th: ThermalParams, ambient: float, temp0: float
) -> list[np.ndarray]:
    """Simulated temperature of every segment (the gaps between them: cooling only)."""
    out, temp, t_end = [], float(temp0), segments[0].start
    for seg in segments:
        temp = float(advance(np.array(temp), max(seg.start - t_end, 0.0), np.array(0.0), th, ambient))
        sim = np.empty(len(seg.temp))
        for k, amps in enumerate(seg.amps):
            sim[k] = temp
            temp = float(advance(np.array(temp), seg.dt, joule_heat(amps, R, np.array(temp), th), th, ambient))
        out.append(sim)
        t_end = seg.start + len(seg.temp) * seg.dt
    return out


def fit_thermal(
    segments: Sequence[ThermalSegment],
    R: float,
    ambient: float | None = None,
    tempco: float = COPPER_TEMPCO,
    reference: float = 25.0,
    start: ThermalParams = ThermalParams(),
) -> ThermalFit:
    """R_th and C from logged temperatures; ``ambient`` [°C] defaults to the first reading (a servo at rest)."""
    from scipy.optimize import least_squares

    if not segments:
        raise ValueError("no temperature segments to fit")
    for seg in segments:
        if len(seg.temp) != len(seg.amps) or not (np.isfinite(seg.temp).all() and np.isfinite(seg.amps).all()):
            raise ValueError("each segment needs finite temperatures and currents of the same length")
    temp0 = float(segments[0].temp[0])
    amb = temp0 if ambient is None else float(ambient)
    logged = np.concatenate([s.temp for s in segments])

    def params(x: np.ndarray) -> ThermalParams:
        return ThermalParams(float(np.exp(x[0])), float(np.exp(x[1])), tempco, reference)

    def resid(x: np.ndarray) -> np.ndarray:
        return np.concatenate(simulate_segments(segments, R, params(x), amb, temp0)) - logged

    x0 = np.log([start.resistance, start.capacity])
    bounds = (np.log([1e-2, 1e-2]), np.log([1e4, 1e6]))
    sol = least_squares(resid, x0, bounds=bounds, x_scale=1.0, diff_step=1e-3)
    rms = float(np.sqrt(np.mean(sol.fun**2)))
    return ThermalFit(params(sol.x), amb, rms, float(np.sqrt(np.mean((logged - temp0) ** 2))), int(logged.size))


def motor_current(duty: np.ndarray, vin: np.ndarray | float, speed: np.ndarray, kt: float, R: float) -> np.ndarray:
    """I = (duty·vin − kt·θ̇)/R [A]: the DC-motor law (Duclusaud et al. Eq. 13) on a logged duty and speed."""
    if not (kt > 0 and R > 0 and math.isfinite(kt) and math.isfinite(R)):
        raise ValueError(f"kt and R must be > 0, got {kt}, {R}")
    return (np.asarray(duty, float) * vin - kt * np.asarray(speed, float)) / R
