"""Taking a fit apart: its parameters by group, one group swapped in from another fit, and the model's no-load speed.

A held-out log that one fit misses and another fits can be diagnosed by moving one group of parameters at a time
from the good fit into the poor one (:func:`swap_group`) and re-judging: the group whose swap closes the gap is the
one the poor fit's training logs could not pin. Groups (:data:`GROUPS`): the motor (``kt``, ``R``: torque per volt
and back-EMF damping kt²/R), the friction model's coefficients, the armature, the encoder offset and the fitted
firmware constants. :func:`no_load_speed` is the model's steady speed with no load at full duty, the datasheet's
"no-load speed" as this model would measure it (back-EMF *and* friction).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..models.params import ActuatorParams, ParameterError
from ..models.stepper import rollout

#: group → the keys it holds (``friction``: every friction coefficient of the model, filled by :func:`group_keys`).
GROUPS: dict[str, tuple[str, ...]] = {
    "motor": ("kt", "R"),
    "friction": (),
    "armature": ("armature",),
    "q_offset": ("q_offset",),
    "firmware": ("error_gain", "goal_velocity_limit"),
}


def group_keys(params: ActuatorParams, group: str) -> tuple[str, ...]:
    """The keys of ``group`` in ``params`` (the friction group: the model's coefficients, in its order)."""
    if group not in GROUPS:
        raise ParameterError(f"unknown parameter group {group!r}; known: {', '.join(GROUPS)}")
    return tuple(params.friction) if group == "friction" else GROUPS[group]


def param_value(params: ActuatorParams, key: str) -> float:
    """The value of ``key`` in ``params`` (a friction coefficient, a firmware constant or a top-level parameter)."""
    if key in params.friction:
        return params.friction[key]
    if key in GROUPS["firmware"]:
        return getattr(params.firmware, key)
    return getattr(params, key)


def swap_keys(params: ActuatorParams, donor: ActuatorParams, keys: Sequence[str]) -> ActuatorParams:
    """``params`` with the values of ``keys`` taken from ``donor`` (same friction model; ParameterError otherwise)."""
    if donor.model != params.model:
        raise ParameterError(f"cannot swap parameters between models {params.model!r} and {donor.model!r}")
    top, fw = {}, {}
    for k in keys:
        (fw if k in GROUPS["firmware"] else top)[k] = param_value(donor, k)
    out = params.with_(**top) if top else params
    return out.with_(firmware=out.firmware.with_(**fw)) if fw else out


def swap_group(params: ActuatorParams, donor: ActuatorParams, group: str) -> ActuatorParams:
    """``params`` with ``group`` (:data:`GROUPS`) taken from ``donor``."""
    return swap_keys(params, donor, group_keys(params, group))


def no_load_speed(params: ActuatorParams, vin: float, duration: float = 3.0, dt: float = 1e-3) -> float:
    """Steady speed [rad/s] of ``params`` with no load, its firmware at full duty from supply ``vin`` [V]: the
    motor law's back-EMF and the model's friction at once (a goal far ahead, ``duration`` [s] simulated, the mean
    speed over its last tenth)."""
    if not (vin > 0 and np.isfinite(vin)):
        raise ParameterError(f"supply voltage must be positive and finite, got {vin}")
    p = params.with_(firmware=params.firmware.with_(vin=vin))
    n = int(round(duration / dt))
    goals = np.full(n, 1e6)  # [rad]: the law stays at max_pwm throughout
    res = rollout(p, 0.0, 0.0, goals, dt, None)
    return float(np.mean(res.dtheta[-max(1, n // 10) :]))
