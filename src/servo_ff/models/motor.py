"""DC motor and firmware control laws (Duclusaud et al. (Extended Friction Models) §IV-B/C), vectorised. SI units: V, A,
Ω, N·m, rad, rad/s."""

from __future__ import annotations

import numpy as np

from . import slots


def motor_torque(volts: np.ndarray, dtheta: np.ndarray, kt: np.ndarray, R: np.ndarray) -> np.ndarray:
    """τ_m = kt/R·U − kt²/R·θ̇ (Eq. 13; drive/brake H-bridge, kt includes the gear ratio)."""
    return kt / R * volts - kt**2 / R * dtheta


def duty_torque(duty: np.ndarray, vin: np.ndarray, dtheta: np.ndarray, kt: np.ndarray, R: np.ndarray) -> np.ndarray:
    """Motor torque of a voltage-driven servo from its drive duty [−1, 1] (the H-bridge's PWM: U = duty·vin [V]),
    supply ``vin`` [V] and velocity ``dtheta`` [rad/s]: τ_m = kt·(duty·vin − kt·θ̇)/R [N·m] (Eq. 13, kt [N·m/A] and
    R [Ω] at the output shaft). The sim's voltage law (:func:`firmware_torque`) and the hardware path's reading of a
    duty register (Feetech STS Present Load, :func:`servo_ff.bus.bus_types.joint_state`) both take it: a duty is a
    torque only at stall (θ̇ = 0), where it is duty·vin·kt/R, not duty × a datasheet stall torque."""
    return motor_torque(duty * vin, dtheta, kt, R)


def torque_duty(tau: np.ndarray, vin: np.ndarray, dtheta: np.ndarray, kt: np.ndarray, R: np.ndarray) -> np.ndarray:
    """The inverse of :func:`duty_torque`: the drive duty that gives motor torque ``tau`` [N·m] at supply ``vin``
    [V] and velocity ``dtheta`` [rad/s]: duty = (τ·R/kt + kt·θ̇)/vin (at stall, θ̇ = 0: τ·R/(kt·vin)); beyond ±1
    where the supply cannot give ``tau``."""
    return (tau * R / kt + kt * dtheta) / vin


def current_limited_duty(
    duty: np.ndarray, dtheta: np.ndarray, vin: np.ndarray, kt: np.ndarray, R: np.ndarray, i_max: np.ndarray
) -> np.ndarray:
    """Voltage-mode current limiter (Rhoban/bam ``VoltageControlledActuator``): the duty held in
    [(kt·θ̇ − R·I_max)/vin, (kt·θ̇ + R·I_max)/vin] so that I = (duty·vin − kt·θ̇)/R stays within ±I_max
    (before the ±max_pwm clamp, which wins). ``i_max = inf``: unchanged."""
    limited = np.isfinite(i_max)
    if not np.any(limited):
        return duty
    center = kt * dtheta / vin
    span = np.where(limited, R * np.where(limited, i_max, 0.0) / vin, np.inf)
    return np.clip(duty, center - span, center + span)


def goal_profile(goals: np.ndarray, v_max: np.ndarray, dt: float, start: np.ndarray) -> np.ndarray:
    """The firmware's internal target: it follows the goals (T, …) no faster than ``v_max`` [rad/s]
    (Feetech STS, bam's ``STS3215Actuator.compute_control``), from ``start`` [rad]. ``v_max = inf``: the goals.

    target_k = clip(goal_k, target_{k−1} − v_max·dt, target_{k−1} + v_max·dt), target_{−1} = start.
    """
    goals = np.asarray(goals, dtype=np.float64)
    if not np.any(np.isfinite(v_max)):
        return goals
    out = np.empty_like(goals)
    prev = np.broadcast_to(np.asarray(start, dtype=np.float64), goals.shape[1:])
    for k in range(goals.shape[0]):
        prev = out[k] = goal_slew(prev, goals[k], v_max, dt)
    return out


def goal_slew(target: np.ndarray, goal: np.ndarray, v_max: np.ndarray, dt: float) -> np.ndarray:
    """One control period of the firmware's internal target: toward ``goal`` by at most ``v_max·dt`` [rad]."""
    return np.clip(goal, target - v_max * dt, target + v_max * dt)


def current_limits(
    dtheta: np.ndarray, u_max: np.ndarray, kt: np.ndarray, R: np.ndarray, i_heat: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(I_min, I_max) of Eq. 14: I_emf = (U_max ∓ kt·θ̇)/R bounded by the heat limit I_heat."""
    i_max = np.minimum((u_max - kt * dtheta) / R, i_heat)
    i_min = np.maximum((-u_max - kt * dtheta) / R, -i_heat)
    return i_min, i_max


def current_control_law(
    pid_output: np.ndarray, dtheta: np.ndarray, u_max: np.ndarray, kt: np.ndarray, R: np.ndarray, i_heat: np.ndarray
) -> np.ndarray:
    """I = clip(PID, I_min, I_max) (Eq. 14); the torque is then τ_m = kt·I (Eq. 15)."""
    i_min, i_max = current_limits(dtheta, u_max, kt, R, i_heat)
    return np.minimum(np.maximum(pid_output, i_min), i_max)


def firmware_torque(
    p: np.ndarray, theta: np.ndarray, dtheta: np.ndarray, goal: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The servo model S(θ, θ̇, θd) (Eq. 11) from packed params → (τ_m [N·m], U [V]).

    Voltage law: U = vin·duty, τ_m by Eq. 13. Current law: I by Eq. 14, τ_m = kt·I (Eq. 15), U = R·I + kt·θ̇.
    """
    kt, R = p[..., slots.KT], p[..., slots.R]
    command = p[..., slots.KP] * p[..., slots.EGAIN] * (goal - theta)
    u_max = p[..., slots.VIN] * p[..., slots.MAXPWM]
    duty = current_limited_duty(command, dtheta, p[..., slots.VIN], kt, R, p[..., slots.IMAX])
    duty = np.clip(duty, -p[..., slots.MAXPWM], p[..., slots.MAXPWM])
    volts_v = p[..., slots.VIN] * duty
    tau_v = duty_torque(duty, p[..., slots.VIN], dtheta, kt, R)
    current = current_control_law(command, dtheta, u_max, kt, R, p[..., slots.IMAX])
    is_voltage = p[..., slots.LAW] == 0.0
    return np.where(is_voltage, tau_v, kt * current), np.where(is_voltage, volts_v, R * current + kt * dtheta)
