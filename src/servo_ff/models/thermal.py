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


def thermal_warning(temp: float, time_to: float, limit: float, warn_s: float) -> tuple[int, str]:
    """(0 ok, 1 warn, 2 error; message) for a servo at ``temp`` [°C] predicted to reach ``limit`` in ``time_to``
    [s]: error at or above the limit, warning when the limit is nearer than ``warn_s``."""
    if not math.isfinite(temp):
        return 0, ""
    if temp >= limit:
        return 2, f"temperature {temp:.1f} °C at its limit {limit:g} °C"
    if time_to < warn_s:
        return 1, f"temperature {temp:.1f} °C reaches its limit {limit:g} °C in {time_to:.0f} s at the present load"
    return 0, ""


class TemperatureTrend:
    """Time to a temperature limit from *measured* temperatures (a servo whose current is not modelled).

    Inverting the first-order model, the steady temperature at the present heat is T_∞ = T + τ·dT/dt (τ = R_th·C,
    the only constant needed); the time to ``limit`` follows from the step response. T and dT/dt are the mean and
    least-squares slope of the readings over the last ``window`` seconds, taken at the window's mean time (integer
    °C readings need a window of tens of seconds), and brought to the last reading by the model.
    """

    def __init__(self, n: int, time_constant: float, window: float = 30.0):
        if not (time_constant > 0 and window > 0):
            raise ValueError(f"time_constant and window must be > 0, got {time_constant}, {window}")
        self.n, self.tau, self.window = int(n), float(time_constant), float(window)
        self.t: list[float] = []
        self.temps: list[np.ndarray] = []

    def add(self, t: float, temps: np.ndarray) -> None:
        """Readings [°C] at time ``t`` [s] (NaN: not read)."""
        self.t.append(float(t))
        self.temps.append(np.array(temps, dtype=np.float64))
        while self.t and self.t[0] < t - self.window:
            self.t.pop(0)
            self.temps.pop(0)

    def time_to(self, limit: np.ndarray | float) -> np.ndarray:
        """Predicted time [s] to ``limit`` per servo (inf without a rising trend or before two readings)."""
        if len(self.t) < 2:
            return np.full(self.n, math.inf)
        t = np.array(self.t) - self.t[-1]
        temps = np.array(self.temps)
        ok = np.isfinite(temps)
        n = ok.sum(axis=0)
        tm = np.where(ok, t[:, None], 0.0).sum(axis=0) / np.maximum(n, 1)
        ym = np.where(ok, temps, 0.0).sum(axis=0) / np.maximum(n, 1)
        dt = np.where(ok, t[:, None] - tm, 0.0)
        slope = (dt * np.where(ok, temps - ym, 0.0)).sum(axis=0) / np.maximum((dt**2).sum(axis=0), 1e-12)
        t_inf = ym + self.tau * slope  # T_∞ = T + τ·dT/dt at the window's mean time (the LS slope's own time)
        now = t_inf + (ym - t_inf) * np.exp(tm / self.tau)  # the model's T at the last reading (tm ≤ 0)
        limit = np.broadcast_to(np.asarray(limit, float), now.shape)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = self.tau * np.log((t_inf - now) / (t_inf - limit))
        out = np.where((n >= 2) & (slope > 0) & (t_inf > limit) & np.isfinite(out), np.maximum(out, 0.0), math.inf)
        return np.where(temps[-1] >= limit, 0.0, out)
