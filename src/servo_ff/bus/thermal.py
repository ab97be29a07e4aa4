"""Thermal model of the virtual bus's servos: a constant temperature, or C·dT/dt = I²R − (T − T_amb)/R_th.

The model is the servo's (:mod:`servo_ff.models.thermal`): when the servos' parameter file has a ``thermal`` row,
the servo bank runs it (R follows the temperature) and the bus reports the bank's temperatures; otherwise these
options (``enabled``, R_th, C) run the same exact first-order step here, on the bank's resistance.

Without the model (``enabled=False``) every servo stays at ``ambient``. With it, a servo holding a load heats up;
above its Temperature Limit register the bus latches Hardware Error Status bit 2 (overheating), which shuts the
torque off (Shutdown register) until a REBOOT; the servo then cools back toward ``ambient``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..models.thermal import ThermalParams
from ..models.thermal import advance as advance_temperature


@dataclass(frozen=True)
class ThermalOptions:
    """``ambient`` [°C], ``enabled`` (first-order model instead of a constant temperature), thermal
    ``resistance`` R_th [K/W] to ambient and ``capacity`` C [J/K] per servo."""

    ambient: float = 30.0
    enabled: bool = False
    resistance: float = 3.0
    capacity: float = 200.0

    def __post_init__(self) -> None:
        if not math.isfinite(self.ambient):
            raise ValueError(f"temperature must be finite, got {self.ambient}")
        if self.enabled and not (self.resistance > 0 and self.capacity > 0):
            raise ValueError(
                f"thermal_resistance and thermal_capacity must be > 0, got {self.resistance}, {self.capacity}"
            )


class ThermalModel:
    """Winding temperature ``temp`` [°C] of ``n`` servos."""

    def __init__(self, options: ThermalOptions, n: int):
        self.options = options
        self.temp = np.full(n, float(options.ambient))
        self.from_bank = False  # True once the bank's own thermal row gives the temperatures

    @property
    def active(self) -> bool:
        return self.options.enabled or self.from_bank

    def advance(self, dt: float, amps: np.ndarray, resistance: np.ndarray, bank_temp: np.ndarray | None = None) -> None:
        """``dt`` seconds of Joule heat ``amps``² · ``resistance`` [W] against the loss to ambient, or the bank's
        temperatures ``bank_temp`` [°C] when its parameters carry a thermal row."""
        o = self.options
        if bank_temp is not None:
            self.temp, self.from_bank = np.array(bank_temp, dtype=np.float64), True
        elif o.enabled and dt > 0:
            th = ThermalParams(o.resistance, o.capacity, tempco=0.0)  # ``resistance`` is the winding's present R
            self.temp = advance_temperature(self.temp, dt, amps**2 * resistance, th, o.ambient)

    def overheated(self, limit: np.ndarray) -> np.ndarray:
        """Servos above their Temperature Limit [°C] (never without a model)."""
        return self.temp > limit if self.active else np.zeros(self.temp.shape, dtype=bool)
