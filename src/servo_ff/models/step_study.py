"""Step and frequency responses of a datasheet servo, linear (Maximo et al. Eq. 30) against nonlinear (saturation +
quantisation), as arrays for tables and plots (Maximo et al. (Position Servo) §3, Figs. 2–5; Santana et al. (MG995
Servomotor) §6, Fig. 16)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .datasheet import MotorDatasheet
from .servo_nonlinear import simulate_servo
from .transfer_functions import closed_loop_tf, frequency_response, linear_step_response, step_metrics


@dataclass(frozen=True)
class StepStudy:
    t: np.ndarray  # (T,) [s]
    amplitudes: np.ndarray  # (K,) step sizes [rad]
    linear: np.ndarray  # (K, T) Eq. 30 response [rad]
    nonlinear: np.ndarray  # (K, T) saturated + quantised response [rad]
    volts: np.ndarray  # (K, T) nonlinear motor voltage [V]
    metrics_linear: list[dict]
    metrics_nonlinear: list[dict]
    saturated_time: np.ndarray  # (K,) time at the voltage limit [s]


def step_study(
    ds: MotorDatasheet,
    amplitudes_rad,
    *,
    Kp: float,
    Ki: float = 0.0,
    Kd: float = 0.0,
    Vs: float,
    J_l: float = 0.0,
    dt: float = 1e-3,
    duration: float = 1.0,
    counts_per_rev: int | None = 4096,
    include_inductance: bool = True,
) -> StepStudy:
    """Steps of ``amplitudes_rad`` from rest: the closed-loop transfer function against the nonlinear
    simulation with ±``Vs`` saturation and encoder quantisation (``counts_per_rev``, None = ideal)."""
    amps = np.atleast_1d(np.asarray(amplitudes_rad, dtype=float))
    if amps.ndim != 1 or not np.all(np.isfinite(amps)) or np.any(amps == 0):
        raise ValueError("amplitudes_rad must be finite and non-zero")
    if not (np.isfinite(dt) and dt > 0):  # before: a ZeroDivisionError or IndexError traceback
        raise ValueError(f"dt must be finite and > 0, got {dt}")
    if not (np.isfinite(duration) and duration > 2 * dt):
        raise ValueError(f"duration must exceed 2*dt, got {duration}")
    nt = int(round(duration / dt)) + 1
    t = np.arange(nt) * dt
    sys = closed_loop_tf(ds, Kp, Ki, Kd, J_l, include_inductance=include_inductance)
    lin = np.stack([linear_step_response(sys, a, t) for a in amps])
    sim = simulate_servo(
        ds,
        np.repeat(amps[:, None], nt, axis=1),
        dt,
        Kp=Kp,
        Ki=Ki,
        Kd=Kd,
        Vs=Vs,
        J_l=J_l,
        counts_per_rev=counts_per_rev,
        include_inductance=include_inductance,
    )
    ml = [step_metrics(t, lin[k], a) for k, a in enumerate(amps)]
    mn = [step_metrics(t, sim.theta[k], a) for k, a in enumerate(amps)]
    return StepStudy(t, amps, lin, sim.theta, sim.volts, ml, mn, sim.saturated.sum(axis=1) * dt)


def bode_arrays(sys, omega) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ω, |G| [dB], ∠G [deg]) on ``omega`` [rad/s]."""
    mag, ph = frequency_response(sys, omega)
    return np.asarray(omega, dtype=float), mag, ph
