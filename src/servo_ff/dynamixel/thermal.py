"""Thermal model of the virtual bus's servos: a constant temperature, or C·dT/dt = I²R − (T − T_amb)/R_th.

Without the model (``enabled=False``) every servo stays at ``ambient``. With it, a servo holding a load heats up;
above its Temperature Limit register the bus latches Hardware Error Status bit 2 (overheating), which shuts the
torque off (Shutdown register) until a REBOOT; the servo then cools back toward ``ambient``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


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

    def advance(self, dt: float, amps: np.ndarray, resistance: np.ndarray) -> None:
        """``dt`` seconds of Joule heat ``amps``² · ``resistance`` [W] against the loss to ambient."""
        o = self.options
        if o.enabled:
            heat = amps**2 * resistance
            self.temp += dt * (heat - (self.temp - o.ambient) / o.resistance) / o.capacity

    def overheated(self, limit: np.ndarray) -> np.ndarray:
        """Servos above their Temperature Limit [°C] (never without the model)."""
        return self.temp > limit if self.options.enabled else np.zeros(self.temp.shape, dtype=bool)
