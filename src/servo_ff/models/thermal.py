"""Winding temperature of a servo: a first-order thermal model, and copper's temperature coefficient on R.

    C·dT/dt = I²·R(T) − (T − T_amb)/R_th,      R(T) = R·(1 + α_Cu·(T − T_ref))

R_th [K/W] is the thermal resistance from the winding to ambient, C [J/K] the heat capacity, α_Cu [1/K] copper's
resistance coefficient (0.00393 /K) and R the actuator's winding resistance at T_ref [°C]. A hot servo is weaker:
stall torque kt·U/R(T) falls by α_Cu per kelvin. For a constant heat P over a step the solution is exact:

    T(t) = T_∞ + (T(0) − T_∞)·exp(−t/τ),   T_∞ = T_amb + P·R_th,   τ = R_th·C

(:func:`step_response`), which :func:`advance` applies per step with the heat of the step's start. The model is a
row of the parameter file (``thermal`` in bam JSON, ``actuator.thermal.*`` in ROS parameters), run by the stepper's
:class:`~servo_ff.models.servo_bank.ServoBank`, the sim node and the virtual bus, and identified from logged
temperatures by :func:`servo_ff.identification.thermal_fit.fit_thermal`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import ParameterError
from .schema import FieldSpec, check_field

COPPER_TEMPCO = 0.00393  # [1/K] at 20 °C

#: The thermal row of a parameter file (one description: validation, files, docs).
THERMAL_FIELDS: dict[str, FieldSpec] = {
    "resistance": FieldSpec("K/W", 0.0, 1e4, "thermal resistance winding → ambient R_th", lo_open=True),
    "capacity": FieldSpec("J/K", 0.0, 1e6, "heat capacity of winding and case C", lo_open=True),
    "tempco": FieldSpec("1/K", 0.0, 0.01, "temperature coefficient of the winding resistance (copper 0.00393)"),
    "reference": FieldSpec("°C", -50.0, 200.0, "temperature at which the actuator's R holds"),
}


@dataclass(frozen=True)
class ThermalParams:
    """R_th [K/W], C [J/K], α_Cu [1/K], T_ref [°C] (see the module docstring)."""

    resistance: float = 3.0
    capacity: float = 200.0
    tempco: float = COPPER_TEMPCO
    reference: float = 25.0

    def __post_init__(self) -> None:
        for k in THERMAL_FIELDS:
            object.__setattr__(self, k, check_field(THERMAL_FIELDS, k, getattr(self, k), f"thermal.{k}"))

    @property
    def time_constant(self) -> float:
        """τ = R_th·C [s]."""
        return self.resistance * self.capacity

    def to_dict(self) -> dict[str, float]:
        return dataclasses.asdict(self)

    @classmethod
    def from_mapping(cls, data: Any, source: str) -> ThermalParams:
        if not isinstance(data, Mapping):
            raise ParameterError(f"{source}: thermal must be an object of {', '.join(THERMAL_FIELDS)}")
        unknown = [k for k in data if k not in THERMAL_FIELDS]
        if unknown:
            raise ParameterError(f"{source}: unknown thermal key(s) {', '.join(map(str, unknown))}")
        try:
            return cls(**{k: float(v) for k, v in data.items()})
        except (TypeError, ValueError) as e:
            raise ParameterError(f"{source}: {e}") from None


def hot_resistance(R: np.ndarray | float, temp: np.ndarray | float, th: ThermalParams) -> np.ndarray:
    """R(T) = R·(1 + α_Cu·(T − T_ref)) [Ω], never below 10 % of R."""
    return np.asarray(R, float) * np.maximum(1.0 + th.tempco * (np.asarray(temp, float) - th.reference), 0.1)


def step_response(t: np.ndarray | float, power: float, th: ThermalParams, temp0: float, ambient: float) -> np.ndarray:
    """Closed-form T(t) [°C] under a constant heat ``power`` [W] from ``temp0``."""
    t_inf = ambient + power * th.resistance
    return t_inf + (temp0 - t_inf) * np.exp(-np.asarray(t, float) / th.time_constant)


def advance(temp: np.ndarray, dt: float, power: np.ndarray, th: ThermalParams, ambient: float) -> np.ndarray:
    """Temperatures [°C] after ``dt`` [s] of heat ``power`` [W] (exact for a constant heat over the step)."""
    t_inf = ambient + np.asarray(power, float) * th.resistance
    return t_inf + (np.asarray(temp, float) - t_inf) * math.exp(-dt / th.time_constant)


def joule_heat(amps: np.ndarray, R: np.ndarray | float, temp: np.ndarray, th: ThermalParams) -> np.ndarray:
    """I²·R(T) [W]."""
    return np.asarray(amps, float) ** 2 * hot_resistance(R, temp, th)


def time_to_limit(
    temp: np.ndarray, power: np.ndarray, th: ThermalParams, ambient: float, limit: np.ndarray
) -> np.ndarray:
    """Predicted time [s] to reach ``limit`` [°C] at the present heat (0 at or above it; inf when the steady
    temperature T_amb + P·R_th stays below it)."""
    temp, limit = np.asarray(temp, float), np.asarray(limit, float)
    t_inf = ambient + np.asarray(power, float) * th.resistance
    with np.errstate(divide="ignore", invalid="ignore"):
        t = th.time_constant * np.log((t_inf - temp) / (t_inf - limit))
    t = np.where((t_inf > limit) & np.isfinite(t), t, math.inf)
    return np.where(temp >= limit, 0.0, np.maximum(t, 0.0))


class WindingTemperature:
    """Temperatures of ``n`` servos of one thermal row, advanced with the current each carries."""

    def __init__(self, th: ThermalParams, n: int, ambient: float = 25.0):
        if not math.isfinite(ambient):
            raise ValueError(f"ambient temperature must be finite, got {ambient}")
        self.th = th
        self.ambient = float(ambient)
        self.temp = np.full(int(n), float(ambient))
        self.power = np.zeros(int(n))

    def advance(self, dt: float, amps: np.ndarray, R: np.ndarray | float) -> None:
        """``dt`` seconds at currents ``amps`` [A] through windings of cold resistance ``R`` [Ω] (at T_ref)."""
        if dt > 0:
            self.power = joule_heat(np.nan_to_num(amps), R, self.temp, self.th)
            self.temp = advance(self.temp, dt, self.power, self.th, self.ambient)

    def resistance(self, R: np.ndarray | float) -> np.ndarray:
        return hot_resistance(R, self.temp, self.th)

    def time_to(self, limit: np.ndarray | float) -> np.ndarray:
        """Predicted time [s] to ``limit`` [°C] at the present load."""
        return time_to_limit(self.temp, self.power, self.th, self.ambient, np.broadcast_to(limit, self.temp.shape))
