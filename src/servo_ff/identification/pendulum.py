"""The pendulum test bench as seen by identification: the output torque a motion needs (inverse dynamics
for τ_o of Schwarz & Behnke (Compliant Robot Behavior) Eq. 13) and a simulated servo usable as ILC's ``execute``
callable."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..models.params import ActuatorParams
from ..models.stepper import PendulumLoad, rollout


def output_torque(load: PendulumLoad, q: np.ndarray, ddq: np.ndarray) -> np.ndarray:
    """τ_o = J_load·q̈ + (m + m_arm/2)·g·l·sin q [N·m]: the torque the servo must deliver to the pendulum
    (bam's bench, θ = 0 hanging down; the servo's own armature is not included — α4 or α0 absorb it)."""
    return load.inertia() * np.asarray(ddq, float) + load.gravity_torque_amplitude() * np.sin(np.asarray(q, float))


def simulated_servo(
    params: ActuatorParams | np.ndarray,
    load: PendulumLoad,
    dt: float,
    theta0: float = 0.0,
    dtheta0: float = 0.0,
    backend: str = "auto",
) -> Callable[[np.ndarray], np.ndarray]:
    """``execute(command (T, ...)) -> θ (T, ...)``: one batched rollout of the simulated servo per call
    (θ[k] is the position measured when goal k is sent)."""

    def execute(command: np.ndarray) -> np.ndarray:
        return rollout(params, theta0, dtheta0, command, dt, load, backend=backend).theta

    return execute


__all__ = ["output_torque", "simulated_servo"]
