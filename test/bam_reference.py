"""An independent transcription of Rhoban/bam's simulator (commit 1b5a1ce), the reference implementation of
Duclusaud et al., *Extended Friction Models for the Physics Simulation of Servo Actuators*: written from
reading bam's ``simulate.py`` (``Simulator.step`` / ``rollout_log(simulate_control=True)``), ``model.py``
(``compute_frictions``), ``testbench.py`` (``Pendulum``), ``actuator.py`` (``VoltageControlledActuator``,
``CurrentControlledActuator``) and ``feetech/actuator.py`` (``STS3215Actuator``) — one Python step per sample
on floats, as bam steps. It shares no code with servo_ff: it is the oracle our kernels are tested against.
"""

from __future__ import annotations

import math

import numpy as np

G = -9.80665  # bam's Pendulum.compute_bias writes g negative


def bam_compute_frictions(f: dict, model: str, motor_torque, external_torque, dtheta):
    """bam's Model.compute_frictions, flag by flag: (frictionloss, damping); budget = loss + damping·|θ̇|."""
    load_dependent = model in ("m3", "m4", "m5", "m6")
    directional = model in ("m5", "m6")
    stribeck = model in ("m2", "m4", "m5", "m6")
    quadratic = model == "m6"
    if directional:
        gearbox = abs(external_torque * f["load_friction_external"] - motor_torque * f["load_friction_motor"])
        if stribeck:
            gearbox_s = abs(
                external_torque * f["load_friction_external_stribeck"]
                - motor_torque * f["load_friction_motor_stribeck"]
            )
    else:
        gearbox = abs(external_torque - motor_torque)
    if stribeck:
        coeff = np.exp(-(abs(dtheta / f["dtheta_stribeck"]) ** f["alpha"]))
    loss = f["friction_base"]
    if load_dependent:
        loss += gearbox if directional else f["load_friction_base"] * gearbox
    if stribeck:
        loss += coeff * f["friction_stribeck"]
        if load_dependent:
            loss += gearbox_s * coeff if directional else f["load_friction_stribeck"] * gearbox * coeff
            if quadratic:
                enable = np.sign(external_torque) != np.sign(motor_torque)
                d_motor = abs(external_torque) < abs(motor_torque)
                d_ext = abs(external_torque) > abs(motor_torque)
                loss += (
                    coeff
                    * (
                        d_motor * f["load_friction_external_quad"] * abs(external_torque) ** 2
                        + d_ext * f["load_friction_motor_quad"] * abs(motor_torque) ** 2
                    )
                    * enable
                )
    return loss, f["friction_viscous"]


class BamActuator:
    """The firmware side: compute_control (the command from goal and simulated θ) and compute_torque.

    ``law``: "voltage" (error_gain, max_pwm, optional max_current), "current" (error_gain, current_limit) or
    "sts" (voltage law on a target that moves at most max_velocity·dt per step, starting at 0 as bam's
    ``load_log`` sets ``q_target_smooth = 0``)."""

    def __init__(
        self,
        law: str,
        kt: float,
        R: float,
        vin: float,
        kp: float,
        error_gain: float,
        max_pwm: float = 1.0,
        max_current: float | None = None,
        current_limit: float = 1.5,
        max_velocity: float = math.inf,
    ):
        self.law, self.kt, self.R, self.vin, self.kp = law, kt, R, vin, kp
        self.error_gain, self.max_pwm, self.max_current = error_gain, max_pwm, max_current
        self.current_limit, self.max_velocity = current_limit, max_velocity
        self.q_target_smooth = 0.0

    def compute_control(self, q_target, q, dq, dt):
        if self.law == "current":
            current = (q_target - q) * self.kp * self.error_gain
            high = (1 / self.R) * (self.vin - self.kt * dq)
            low = (1 / self.R) * (-self.vin - self.kt * dq)
            current = np.clip(current, low, high)
            return np.clip(current, -self.current_limit, self.current_limit)
        if self.law == "sts":
            self.q_target_smooth = np.clip(
                q_target, self.q_target_smooth - self.max_velocity * dt, self.q_target_smooth + self.max_velocity * dt
            )
            q_target = self.q_target_smooth
        duty = (q_target - q) * self.kp * self.error_gain
        if self.max_current is not None:
            center = self.kt * dq / self.vin
            span = self.R * self.max_current / self.vin
            duty = np.clip(duty, center - span, center + span)
        duty = np.clip(duty, -self.max_pwm, self.max_pwm)
        return self.vin * duty

    def compute_torque(self, control, torque_enable, q, dq):
        if self.law == "current":
            return self.kt * control * torque_enable
        torque = self.kt * control / self.R
        torque -= (self.kt**2) * dq / self.R
        return torque * torque_enable


def bam_rollout(
    f: dict,
    model: str,
    actuator: BamActuator,
    armature: float,
    q_offset: float,
    mass: float,
    arm_mass: float,
    length: float,
    goals,
    torque_enable,
    q0: float,
    dq0: float,
    dt: float,
):
    """bam's rollout_log(simulate_control=True): positions recorded before each step."""
    q, dq = float(q0), float(dq0)
    positions = []
    for goal, enable in zip(goals, torque_enable):
        positions.append(q)
        control = actuator.compute_control(goal, q, dq, dt)
        # Simulator.step
        bias = (mass + arm_mass / 2) * G * length * np.sin(q + q_offset)
        motor = actuator.compute_torque(control, bool(enable), q + q_offset, dq)
        frictionloss, damping = bam_compute_frictions(f, model, motor, bias, dq)
        inertia = mass * length**2 + (arm_mass / 3) * length**2 + armature
        net = motor + bias
        tau_stop = (inertia / dt) * dq + net
        static = -np.sign(tau_stop) * np.min([np.abs(tau_stop), frictionloss + damping * np.abs(dq)], axis=0)
        net += static
        acc = net / inertia
        dq += acc * dt
        dq = np.clip(dq, -100.0, 100.0)
        q += dq * dt + 0.5 * acc * dt**2
    return np.array(positions)
