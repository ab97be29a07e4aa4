"""Datasheet servo model as transfer functions (Maximo et al., Position Servo; Santana et al., MG995 Servomotor).

Motor + gearbox from datasheet values (:class:`~servo_ff.models.datasheet.MotorDatasheet`), SI units:

* η from stall torques, Maximo et al. Eq. 13 / Santana et al. Eq. 26; b_m from no-load data, Maximo et al.
  Eq. 16–17 / Santana et al. Eq. 27; K_t from stall torque and current, Santana et al. Eq. 25; N from tooth
  counts, Santana et al. Eq. 24;
* Θ_l/I  (Maximo et al. Eq. 24), Θ_l/U (Maximo et al. Eq. 28, Santana et al. Eq. 20), closed loop with a PID
  (Maximo et al. Eq. 30), the reduced model neglecting L (Maximo et al. Eq. 31; with a P controller it is
  Santana et al. Eq. 23);
* PID register gains: K = K^c·2048·V_s/(511π) (Maximo et al. Eq. 32), PWM 0..511 ↔ volts (Maximo et al. Remark 2),
  counts ↔ rad with 4096 counts/rev (Maximo et al. Remark 1).

Transfer functions are :class:`control.TransferFunction` objects (python-control); algebra (series,
feedback, cancellation) is python-control's, not hand-written polynomial code.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import control
import numpy as np

from .datasheet import MotorDatasheet
from .params import ParameterError

#: Encoder resolution of the MX-28AT (Maximo et al. Remark 1).
COUNTS_PER_REV = 4096
#: Full-scale PWM command of the MX-28AT (Maximo et al. Remark 2).
PWM_FULL_SCALE = 511


def _positive(name: str, value: float) -> float:
    v = float(value)
    if not math.isfinite(v) or v <= 0:
        raise ParameterError(f"{name} must be positive and finite, got {value!r}")
    return v


def _nonneg(name: str, value: float) -> float:
    v = float(value)
    if not math.isfinite(v) or v < 0:
        raise ParameterError(f"{name} must be finite and >= 0, got {value!r}")
    return v


# --------------------------------------------------------------------------------------------------
# Parameters from datasheet data
# --------------------------------------------------------------------------------------------------
def gearbox_efficiency(tau_load_stall: float, tau_motor_stall: float, N: float) -> float:
    """η = τ_l,s / (N·τ_m,s) [-] from the servo and motor stall torques [N·m]
    (Maximo et al. Eq. 13, Santana et al. Eq. 26)."""
    eta = _positive("tau_load_stall", tau_load_stall) / (
        _positive("N", N) * _positive("tau_motor_stall", tau_motor_stall)
    )
    if eta > 1:
        raise ParameterError(
            f"gearbox efficiency from stall torques is {eta:.4g} > 1: tau_load_stall is larger than N*tau_motor_stall"
        )
    return eta


def motor_viscous_friction(Kt: float, i_no_load: float, speed_no_load: float) -> float:
    """b_m = K_t·i_NL / θ̇_m,NL [N·m·s/rad] from the no-load current [A] and speed [rad/s] (Maximo et al. Eq. 16–17)."""
    return _positive("Kt", Kt) * _positive("i_no_load", i_no_load) / _positive("speed_no_load", speed_no_load)


def torque_constant_from_stall(tau_motor_stall: float, i_motor_stall: float) -> float:
    """K_t = τ_m^stall / i_m^stall [N·m/A] (Santana et al. Eq. 25)."""
    return _positive("tau_motor_stall", tau_motor_stall) / _positive("i_motor_stall", i_motor_stall)


def gear_ratio_from_teeth(teeth: Sequence[int]) -> float:
    """N = (G2·G4·…)/(G1·G3·…) from tooth counts in transmission order (Santana et al. Eq. 24): pairs
    (pinion, wheel)."""
    t = [float(x) for x in teeth]
    if len(t) < 2 or len(t) % 2:
        raise ParameterError(f"teeth must list an even number (>= 2) of tooth counts, got {len(t)}")
    for k, x in enumerate(t):
        _positive(f"teeth[{k}]", x)
    return float(np.prod(t[1::2]) / np.prod(t[0::2]))


def rpm_to_rad_s(rpm: float) -> float:
    """rev/min → rad/s."""
    return float(rpm) * 2 * math.pi / 60


def datasheet_from_measurements(
    *,
    R: float,
    Kt: float,
    Kw: float,
    Jm: float,
    N: float,
    tau_load_stall: float,
    tau_motor_stall: float,
    i_no_load: float,
    speed_no_load: float,
    L: float = 0.0,
) -> MotorDatasheet:
    """Build a :class:`MotorDatasheet` with η from stall torques (Eq. 13) and b_m from no-load data (Eq. 16–17)."""
    for k, v in dict(R=R, Kt=Kt, Kw=Kw, Jm=Jm, N=N).items():
        _positive(k, v)
    _nonneg("L", L)
    eta = gearbox_efficiency(tau_load_stall, tau_motor_stall, N)
    bm = motor_viscous_friction(Kt, i_no_load, speed_no_load)
    return MotorDatasheet(R=R, Kt=Kt, Kw=Kw, Jm=Jm, N=N, eta=eta, bm=bm, L=L)


# --------------------------------------------------------------------------------------------------
# Transfer functions
# --------------------------------------------------------------------------------------------------
def equivalent_inertia(ds: MotorDatasheet, J_l: float = 0.0) -> float:
    """J_eq = J_l + J_m·N²·η [kg·m²] at the output shaft (Maximo et al. Eq. 24, Santana et al. §4.2)."""
    return _nonneg("J_l", J_l) + ds.Jm * ds.N**2 * ds.eta


def equivalent_damping(ds: MotorDatasheet) -> float:
    """b_eq = b_m·N²·η [N·m·s/rad] (Santana et al. §4.2)."""
    return ds.bm * ds.N**2 * ds.eta


def current_to_angle_tf(ds: MotorDatasheet, J_l: float = 0.0) -> control.TransferFunction:
    """Θ_l(s)/I(s) = NηK_t / (J_eq s² + b_eq s)  [rad/A] (Maximo et al. Eq. 24)."""
    return control.tf([ds.N * ds.eta * ds.Kt], [equivalent_inertia(ds, J_l), equivalent_damping(ds), 0.0])


def voltage_to_angle_tf(
    ds: MotorDatasheet, J_l: float = 0.0, *, include_inductance: bool = True
) -> control.TransferFunction:
    """Θ_l(s)/U(s) [rad/V] (Maximo et al. Eq. 28, Santana et al. Eq. 20): Eq. 24 closed with the back-EMF loop of
    Eq. 27.

    ``include_inductance=False`` sets L = 0 (the reduction behind Maximo et al. Eq. 31)."""
    L = ds.L if include_inductance else 0.0
    current_per_volt = control.tf([1.0], [L, ds.R]) if L > 0 else control.tf([1.0], [ds.R])
    theta_per_amp = current_to_angle_tf(ds, J_l)
    back_emf = control.tf([ds.N / ds.Kw, 0.0], [1.0])  # volts per (rad of load angle): N·s/K_ω
    sys = control.feedback(current_per_volt * theta_per_amp, back_emf)
    return control.minreal(sys, verbose=False)


def pid_tf(Kp: float, Ki: float = 0.0, Kd: float = 0.0) -> control.TransferFunction:
    """C(s) = K_p + K_i/s + K_d s [V/rad] (Maximo et al. Eq. 29); improper when K_d > 0, which python-control accepts
    (the closed loop of :func:`closed_loop_tf` is proper)."""
    Kp, Ki, Kd = _nonneg("Kp", Kp), _nonneg("Ki", Ki), _nonneg("Kd", Kd)
    if Kp == Ki == Kd == 0:
        raise ParameterError("PID gains Kp, Ki, Kd are all zero: no closed loop")
    return control.tf([Kd, Kp, Ki], [1.0, 0.0]) if Ki > 0 else control.tf([Kd, Kp], [1.0])


def closed_loop_tf(
    ds: MotorDatasheet,
    Kp: float,
    Ki: float = 0.0,
    Kd: float = 0.0,
    J_l: float = 0.0,
    *,
    include_inductance: bool = True,
) -> control.TransferFunction:
    """Θ_l(s)/Θ_r(s) with the PID of Eq. 29 around Eq. 28: Maximo et al. Eq. 30; ``include_inductance=False`` gives
    Maximo et al. Eq. 31 (and with Ki = Kd = 0 the P-controlled hobby servo of Santana et al. Eq. 23). Gains in SI
    [V/rad…]."""
    plant = voltage_to_angle_tf(ds, J_l, include_inductance=include_inductance)
    loop = pid_tf(Kp, Ki, Kd) * plant
    return control.minreal(control.feedback(loop, 1), verbose=False)


def poles_sorted(sys: control.TransferFunction) -> np.ndarray:
    """Poles sorted by magnitude (rad/s)."""
    p = np.asarray(control.poles(sys))
    return p[np.argsort(np.abs(p), kind="stable")]


# --------------------------------------------------------------------------------------------------
# Register units (Maximo et al. Remarks 1–2, Eq. 32)
# --------------------------------------------------------------------------------------------------
def counts_to_rad(counts, counts_per_rev: int = COUNTS_PER_REV):
    """Encoder counts → rad (Maximo et al. Remark 1: 4096/(2π) counts/rad)."""
    return np.asarray(counts, dtype=float) * (2 * math.pi / counts_per_rev)


def rad_to_counts(rad, counts_per_rev: int = COUNTS_PER_REV):
    """rad → encoder counts (float; round to command)."""
    return np.asarray(rad, dtype=float) * (counts_per_rev / (2 * math.pi))


def pid_gain_from_register(K_counts: float, Vs: float) -> float:
    """K = K^c·2048·V_s/(511π) (Maximo et al. Eq. 32 text): PWM-per-count gain → volts-per-rad gain."""
    return _nonneg("K_counts", K_counts) * 2048 * _positive("Vs", Vs) / (PWM_FULL_SCALE * math.pi)


def pid_gain_to_register(K: float, Vs: float) -> float:
    """Inverse of :func:`pid_gain_from_register`: V/rad → PWM/count."""
    return _nonneg("K", K) * PWM_FULL_SCALE * math.pi / (2048 * _positive("Vs", Vs))


def mx28_counts_gains(P: float, I: float = 0.0, D: float = 0.0) -> tuple[float, float, float]:
    """MX-28 control-table P, I, D → (K_p^c, K_i^c, K_d^c) = (P/8, 1000·I/2048, 4·D/1000) (Maximo et al. Table 1)."""
    return _nonneg("P", P) / 8, 1000 * _nonneg("I", I) / 2048, 4 * _nonneg("D", D) / 1000


def mx28_si_gains(P: float, I: float = 0.0, D: float = 0.0, Vs: float = 12.0) -> tuple[float, float, float]:
    """MX-28 control-table P, I, D and supply V_s → SI gains (K_p [V/rad], K_i [V/(rad·s)], K_d [V·s/rad])."""
    return tuple(pid_gain_from_register(k, Vs) for k in mx28_counts_gains(P, I, D))  # type: ignore[return-value]


def pwm_to_volts(pwm, Vs: float):
    """Average motor voltage u = V_s·u_c/511 [V] for a signed PWM command |u_c| ≤ 511 (Maximo et al. Remark 2)."""
    Vs = _positive("Vs", Vs)
    uc = np.asarray(pwm, dtype=float)
    if not np.all(np.isfinite(uc)) or np.any(np.abs(uc) > PWM_FULL_SCALE):
        raise ValueError(f"pwm must be finite with |pwm| <= {PWM_FULL_SCALE}")
    return uc * (Vs / PWM_FULL_SCALE)


def volts_to_pwm(volts, Vs: float):
    """Inverse of :func:`pwm_to_volts`; |volts| must not exceed V_s (no silent clipping)."""
    Vs = _positive("Vs", Vs)
    u = np.asarray(volts, dtype=float)
    if not np.all(np.isfinite(u)) or np.any(np.abs(u) > Vs * (1 + 1e-12)):
        raise ValueError(f"volts must be finite with |volts| <= Vs = {Vs}")
    return u * (PWM_FULL_SCALE / Vs)


# --------------------------------------------------------------------------------------------------
# Responses
# --------------------------------------------------------------------------------------------------
#: Validation frequencies of Maximo et al. §3.1: ω_i = 2^i rad/s, i = 0..7.
VALIDATION_OMEGAS = 2.0 ** np.arange(8)
#: Step amplitudes of Maximo et al. §3.2 [counts].
VALIDATION_STEPS_COUNTS = (95, 195, 395)


def frequency_response(sys: control.TransferFunction, omega=VALIDATION_OMEGAS) -> tuple[np.ndarray, np.ndarray]:
    """Magnitude [dB] and phase [deg] of ``sys`` at ``omega`` [rad/s] (Maximo et al. Figs. 2–3)."""
    w = np.asarray(omega, dtype=float)
    if w.ndim != 1 or not np.all(np.isfinite(w)) or np.any(w <= 0):
        raise ValueError("omega must be a 1-D array of positive finite frequencies")
    resp = control.frequency_response(sys, w)
    mag = np.asarray(resp.magnitude).reshape(-1)
    phase = np.unwrap(np.asarray(resp.phase).reshape(-1))
    return 20 * np.log10(mag), np.degrees(phase)


def linear_step_response(sys: control.TransferFunction, amplitude: float, t: np.ndarray) -> np.ndarray:
    """Response of ``sys`` to a step of ``amplitude`` at t = 0 on the grid ``t`` [s]."""
    resp = control.step_response(sys, T=np.asarray(t, dtype=float))
    return amplitude * np.asarray(resp.outputs).reshape(-1)


def step_metrics(t: np.ndarray, y: np.ndarray, amplitude: float) -> dict[str, float]:
    """Rise time (10–90 %) [s], overshoot [%], settling time (2 %) [s] and final value of a step response."""
    info = control.step_info(np.asarray(y, dtype=float), T=np.asarray(t, dtype=float), yfinal=float(y[-1]))
    return dict(
        rise_time=float(info["RiseTime"]),
        overshoot=float(info["Overshoot"]),
        settling_time=float(info["SettlingTime"]),
        final_value=float(y[-1]),
        final_error=float(amplitude - y[-1]),
    )
