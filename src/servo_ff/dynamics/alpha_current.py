"""α̂ of Schwarz & Behnke Eq. 19 for a servo whose firmware closes the position loop on current (XM430
current-based position control, Operating Mode 5), where Eq. 19's voltage law does not hold (and
:func:`servo_ff.models.schwarz_behnke.alpha_hat_from_actuator` refuses).

With an ideal current loop the motor torque is kt·I, I = error_gain·k_P·(q_d − q) (A per rad per k_P unit, the
firmware row's ``error_gain``), and kt·I = τ_o + K_v·q̇ + K_c·sgn(q̇) + J_m·q̈ (no back-EMF term: the current loop
absorbs it while below the supply). The feed-forward node computes q_d = q + α̂·(τ, q̇, sgn q̇ …)/(k_P·U_bat), so
α̂ = U_nom/(kt·error_gain)·(1, K_v, K_c, K_c + K_s, J_m): U_bat cancels at U_bat = U_nom (the supply the node
runs with). Current limit and PWM saturation are not modelled (as in Eq. 19).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from servo_ff.models.params import ActuatorParams, ParameterError
from servo_ff.models.schwarz_behnke import stribeck_shape_from_actuator

from .alpha import AlphaTable


def alpha_hat_current_law(params: ActuatorParams, u_nominal: float) -> np.ndarray:
    """α̂0..α̂4 for a current-based firmware law at the feed-forward node's supply ``u_nominal`` [V]."""
    if params.firmware.control != "current":
        raise ParameterError(f"{params.actuator}: firmware law is {params.firmware.control}-based, not current-based")
    if not (np.isfinite(u_nominal) and u_nominal > 0):
        raise ValueError(f"u_nominal must be finite and > 0 V, got {u_nominal}")
    f = params.friction
    kc = f["friction_base"]
    a = [1.0, f["friction_viscous"], kc, kc + f.get("friction_stribeck", 0.0), params.armature]
    return np.asarray(a) * u_nominal / (params.kt * params.firmware.error_gain)


def alpha_table_current_law(params: ActuatorParams, joint_names: Sequence[str], u_nominal: float) -> AlphaTable:
    """Every joint gets :func:`alpha_hat_current_law` of one parameter set and its Stribeck shape."""
    a = alpha_hat_current_law(params, u_nominal)
    dq_s, delta = stribeck_shape_from_actuator(params)
    J = len(joint_names)
    return AlphaTable(tuple(joint_names), np.tile(a, (J, 1)), np.full(J, float(dq_s)), np.full(J, float(delta)))
