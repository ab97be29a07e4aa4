"""Datasheet figures as a prior on kt and R in simulation-MAE identification.

A fit on slow logs cannot see back-EMF: kt (torque per amp and back-EMF per rad/s in one constant, seed 004
Eq. 13) drifts until the simulated servo is too slow for a faster trajectory. The vendor's stall torque τ_s and
no-load speed ω_0 at a rated voltage V pin the DC-motor law: ω_0 = V/kt and τ_s = kt·V/R (Maximo et al.,
*Modeling of a Position Servo Used in Robotics Applications*, Eq. 1–13: the motor constants from the
datasheet's stall and no-load points). Both are voltage-independent constants of the servo, so the figures at
the rated voltage bound kt and R at any supply.

The prior is a box: ω_0 = V/kt and τ_s = kt·V/R each within ×/÷ ``factor`` (1.25 by default) of the datasheet.
kt's search range is the ω_0 box; τ_s depends on kt and R together, so a candidate outside its τ_s box pays
:data:`PENALTY` rad of MAE per unit of log-excess (a 1 % excess adds ≈ 10 mrad: a wall, not a trade-off).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

RPM = 2 * math.pi / 60  # [rad/s per rpm]
KGCM = 9.80665e-2  # [N·m per kg·cm]
SIXTY_DEG = math.pi / 3  # [rad]
PENALTY = 1.0  # [rad of MAE per unit of log-excess over the box]


@dataclass(frozen=True)
class DatasheetFigures:
    """Vendor figures of one servo: ``stall_torque`` [N·m] and ``no_load_speed`` [rad/s] at ``voltage`` [V]."""

    stall_torque: float
    no_load_speed: float
    voltage: float
    source: str


#: Vendor datasheet figures (output shaft). Feetech gives speed as seconds per 60° and torque in kg·cm.
DATASHEETS: dict[str, DatasheetFigures] = {
    "xl330": DatasheetFigures(
        0.52, 103 * RPM, 5.0, "ROBOTIS e-manual XL330-M288-T: stall torque 0.52 N·m (5.0 V, 1.47 A), no-load 103 rpm"
    ),
    "xl320": DatasheetFigures(0.39, 114 * RPM, 7.4, "ROBOTIS e-manual XL-320: stall 0.39 N·m (7.4 V), no-load 114 rpm"),
    "mx64": DatasheetFigures(6.0, 63 * RPM, 12.0, "ROBOTIS e-manual MX-64 (2.0): stall 6.0 N·m (12 V), no-load 63 rpm"),
    "mx106": DatasheetFigures(
        8.0, 45 * RPM, 12.0, "ROBOTIS e-manual MX-106 (2.0): stall 8.0 N·m (12 V), no-load 45 rpm"
    ),
    "mx28": DatasheetFigures(2.5, 55 * RPM, 12.0, "ROBOTIS e-manual MX-28 (2.0): stall 2.5 N·m (12 V), no-load 55 rpm"),
    "xm430": DatasheetFigures(4.1, 46 * RPM, 12.0, "ROBOTIS e-manual XM430-W350: stall 4.1 N·m (12 V), no-load 46 rpm"),
    "sts3215": DatasheetFigures(
        19.5 * KGCM, SIXTY_DEG / 0.222, 7.4, "Feetech STS3215 (7.4 V): stall 19.5 kg·cm, no-load 0.222 s/60°"
    ),
    "sts3250": DatasheetFigures(
        50.0 * KGCM, SIXTY_DEG / 0.133, 12.0, "Feetech STS3250 (12 V): stall 50 kg·cm, no-load 0.133 s/60°"
    ),
}


@dataclass(frozen=True)
class DatasheetPrior:
    """Box prior on kt [N·m/A] and R [Ω] from :class:`DatasheetFigures` (see the module docstring)."""

    figures: DatasheetFigures
    factor: float = 1.25

    def __post_init__(self) -> None:
        if not (self.factor > 1 and math.isfinite(self.factor)):
            raise ValueError(f"datasheet prior factor must be > 1, got {self.factor}")

    @property
    def kt(self) -> float:
        """Datasheet kt = V/ω_0 [N·m/A]."""
        return self.figures.voltage / self.figures.no_load_speed

    @property
    def R(self) -> float:
        """Datasheet R = kt·V/τ_s [Ω]."""
        return self.kt * self.figures.voltage / self.figures.stall_torque

    def kt_range(self) -> tuple[float, float]:
        return self.kt / self.factor, self.kt * self.factor

    def R_range(self) -> tuple[float, float]:
        """R over the whole kt box and τ_s box (the joint constraint is :meth:`excess`)."""
        return self.R / self.factor**2, self.R * self.factor**2

    def excess(self, kt: np.ndarray, R: np.ndarray) -> np.ndarray:
        """Log-excess (≥ 0) of ω_0 = V/kt and τ_s = kt·V/R over the box, summed."""
        f = math.log(self.factor)
        v = self.figures.voltage
        e_w = np.maximum(np.abs(np.log(v / np.asarray(kt) / self.figures.no_load_speed)) - f, 0.0)
        e_t = np.maximum(np.abs(np.log(np.asarray(kt) * v / np.asarray(R) / self.figures.stall_torque)) - f, 0.0)
        return e_w + e_t

    def describe(self) -> str:
        s = self.figures
        return (
            f"box ×/÷{self.factor:g} on stall torque {s.stall_torque:.3g} N·m and no-load speed "
            f"{s.no_load_speed:.3g} rad/s at {s.voltage:g} V (kt {self.kt:.3g} N·m/A, R {self.R:.3g} Ω)"
        )

    def to_dict(self) -> dict:
        s = self.figures
        return {
            "kind": "box",
            "factor": self.factor,
            "stall_torque": s.stall_torque,
            "no_load_speed": s.no_load_speed,
            "voltage": s.voltage,
            "kt": self.kt,
            "R": self.R,
            "kt_range": list(self.kt_range()),
            "R_range": list(self.R_range()),
            "penalty_rad_per_log_excess": PENALTY,
            "source": s.source,
            "method": "Maximo et al., Modeling of a Position Servo Used in Robotics Applications, Eq. 1-13",
        }


def datasheet_prior(actuator: str, factor: float = 1.25) -> DatasheetPrior | None:
    """The prior of ``actuator`` (None without a :data:`DATASHEETS` row)."""
    figures = DATASHEETS.get(actuator)
    return DatasheetPrior(figures, factor) if figures else None
