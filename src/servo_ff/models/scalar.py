"""One joint, one step: Algorithm 1 of Duclusaud et al. written line by line on Python floats.

These functions are the *reference* (the way bam steps, one sample at a time) and, compiled with numba,
the body of the fused batched kernel in :mod:`.kernels`. ``p`` is a packed coefficient vector
(:meth:`~servo_ff.models.params.ActuatorParams.packed`). Only ``math`` is used so numba can compile them.
"""

from __future__ import annotations

import math

try:  # numba compiles these bodies into the fused kernels; plain Python calls are unaffected
    from numba.extending import register_jitable as jitable
except ImportError:  # pragma: no cover

    def jitable(fn):
        return fn


from . import slots


@jitable
def _sign(x: float) -> float:
    return 1.0 if x > 0.0 else (-1.0 if x < 0.0 else 0.0)


@jitable
def friction_budget_1(p, tau_m: float, tau_e: float, dtheta: float) -> float:
    """τ_f^m of M6 (Eq. 10); M1–M5 are M6 with coefficients zeroed (Eq. 3, 6–9). [N·m]

    Q (Eq. 10) follows bam: it acts only when τ_m and τ_e have opposite signs.
    """
    budget = p[slots.KC] + p[slots.KV] * abs(dtheta) + abs(p[slots.KM] * tau_m - p[slots.KE] * tau_e)
    kcs, kms, kes, kmq, keq = p[slots.KCS], p[slots.KMS], p[slots.KES], p[slots.KMQ], p[slots.KEQ]
    if kcs != 0.0 or kms != 0.0 or kes != 0.0 or kmq != 0.0 or keq != 0.0:
        weight = math.exp(-(abs(dtheta / p[slots.VS]) ** p[slots.ALPHA]))
        q = 0.0
        if _sign(tau_m) != _sign(tau_e):
            if abs(tau_m) > abs(tau_e):
                q = keq * tau_e * tau_e
            elif abs(tau_m) < abs(tau_e):
                q = kmq * tau_m * tau_m
        budget += weight * (kcs + abs(kms * tau_m - kes * tau_e) + q)
    return budget


@jitable
def firmware_1(p, theta: float, dtheta: float, goal: float) -> tuple[float, float]:
    """Firmware law → (motor torque τ_m [N·m], motor voltage U [V]).

    Voltage law (Eq. 12–13): duty = clip(kp·g·(θd − θ), ±max_pwm), U = vin·duty, τ_m = kt/R·U − kt²/R·θ̇;
    a finite current limit first holds the duty in [(kt·θ̇ − R·I_max)/vin, (kt·θ̇ + R·I_max)/vin] (bam).
    Current law (Eq. 14–15): I = clip(kp·g·(θd − θ), I_min, I_max), τ_m = kt·I, U = R·I + kt·θ̇.
    """
    kt, r = p[slots.KT], p[slots.R]
    command = p[slots.KP] * p[slots.EGAIN] * (goal - theta)
    if p[slots.LAW] == 0.0:
        lim = p[slots.MAXPWM]
        if p[slots.IMAX] < math.inf:
            center, span = kt * dtheta / p[slots.VIN], r * p[slots.IMAX] / p[slots.VIN]
            command = min(max(command, center - span), center + span)
        duty = min(max(command, -lim), lim)
        volts = p[slots.VIN] * duty
        return kt / r * volts - kt * kt / r * dtheta, volts
    u_max = p[slots.VIN] * p[slots.MAXPWM]
    i_hi = min((u_max - kt * dtheta) / r, p[slots.IMAX])
    i_lo = max((-u_max - kt * dtheta) / r, -p[slots.IMAX])
    current = min(max(command, i_lo), i_hi)
    return kt * current, r * current + kt * dtheta


@jitable
def step_1(
    p,
    theta: float,
    dtheta: float,
    goal: float,
    dt: float,
    gravity: float,
    tau_ext: float,
    inertia: float,
    enable: float,
) -> tuple[float, float, float, float, float]:
    """Algorithm 1 (Duclusaud et al.): one step of one joint, in bam's order.

    External torque τ_e = −gravity·sin(θ + q_offset) + tau_ext (gravity = (m + m_arm/2)·g·l for the pendulum,
    θ = 0 hanging down), J = inertia + armature. ``enable`` 0 releases the H-bridge (τ_m = 0, no back-EMF).
    Integration: θ̇' = clip(θ̇ + θ̈Δt, ±dtheta_max), then θ' = θ + θ̇'Δt + ½θ̈Δt² with the *updated* θ̇
    (Algorithm 1 read in order, and bam's ``Simulator.step``). Returns (θ_{k+1}, θ̇_{k+1}, τ_m, τ_f, U).
    """
    tau_m, volts = firmware_1(p, theta, dtheta, goal)
    tau_m *= enable
    volts *= enable
    tau_e = tau_ext
    if gravity != 0.0:
        tau_e -= gravity * math.sin(theta + p[slots.QOFF])
    j = inertia + p[slots.ARM]
    budget = friction_budget_1(p, tau_m, tau_e, dtheta)
    stop = -(j / dt * dtheta + tau_m + tau_e)  # Eq. 4
    tau_f = min(max(stop, -budget), budget)  # Eq. 5
    ddtheta = (tau_m + tau_e + tau_f) / j
    vmax = p[slots.VMAX]
    dtheta_next = min(max(dtheta + ddtheta * dt, -vmax), vmax)
    theta_next = theta + dtheta_next * dt + 0.5 * ddtheta * dt * dt
    return theta_next, dtheta_next, tau_m, tau_f, volts
