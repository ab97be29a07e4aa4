"""Datasheet figures as a prior on kt and R in simulation-MAE identification.

A fit on slow logs cannot see back-EMF: kt (torque per amp and back-EMF per rad/s in one constant, Duclusaud et al.
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
    """Vendor figures of one servo: ``stall_torque`` [N·m] and ``no_load_speed`` [rad/s] at ``voltage`` [V], and the
    ``stall_current`` [A] where the vendor lists it (None: not listed)."""

    stall_torque: float
    no_load_speed: float
    voltage: float
    source: str
    stall_current: float | None = None

    @property
    def stall_resistance(self) -> float | None:
        """R = V/I at stall [Ω] (the motor law's U = R·I at ω = 0: winding, driver and wiring), None without a
        stall current."""
        return None if self.stall_current is None else self.voltage / self.stall_current


#: Vendor datasheet figures (output shaft), one row per servo at the supply voltage of its firmware law
#: (:data:`servo_ff.models.firmware.FIRMWARE_TABLE` ``vin``) or, where the vendor does not list that voltage, at the
#: nearest one listed. ROBOTIS rows quote the e-manual Specifications table (ROBOTIS-GIT/emanual, the file named);
#: Feetech gives speed as seconds per 60° and torque in kg·cm. Checked 2026-11-25; "not verified" marks a figure
#: no vendor document reachable here confirms.
DATASHEETS: dict[str, DatasheetFigures] = {
    "xl330": DatasheetFigures(
        0.60,
        123 * RPM,
        6.0,
        "ROBOTIS e-manual XL330-M288-T (emanual.robotis.com/docs/en/dxl/x/xl330-m288, Specifications): "
        "'Stall Torque 0.60 [N.m] (at 6.0 [V], 1.74 [A])', 'No Load Speed 123 [rev/min] (at 6.0 [V])'; 6.0 V, the "
        "highest listed (3.7/5.0/6.0 V), nearest the law's vin 7.5 V (above the 3.7-6.0 V input range)",
        stall_current=1.74,
    ),
    "xl320": DatasheetFigures(
        0.39,
        114 * RPM,
        7.4,
        "ROBOTIS e-manual XL-320 (docs/en/dxl/x/xl320.md, Specifications): 'Stall Torque 0.39Nm @ 7.4V, 1.1A', "
        "'No Load Speed 114rpm @ 7.4V, 0.18A'; 7.4 V, the only voltage listed (law vin 7.5 V)",
        stall_current=1.1,
    ),
    "mx64": DatasheetFigures(
        7.3,
        78 * RPM,
        14.8,
        "ROBOTIS e-manual MX-64 (2.0) (docs/en/dxl/mx/mx-64-2.md, Specifications): 'Stall Torque 7.3Nm @ 14.8V, "
        "5.2A', 'No Load Speed 78rpm @ 14.8V'; 14.8 V, of 11.1/12/14.8 V the nearest the law's vin 15 V",
        stall_current=5.2,
    ),
    "mx106": DatasheetFigures(
        10.0,
        55 * RPM,
        14.8,
        "ROBOTIS e-manual MX-106 (2.0) (docs/en/dxl/mx/mx-106-2.md, Specifications): 'Stall Torque 10.0Nm @ 14.8V, "
        "6.3A', 'No Load Speed 55rpm @ 14.8V'; 14.8 V, of 11.1/12/14.8 V the nearest the law's vin 15 V",
        stall_current=6.3,
    ),
    "mx28": DatasheetFigures(
        2.5,
        55 * RPM,
        12.0,
        "ROBOTIS e-manual MX-28 (2.0) (docs/en/dxl/mx/mx-28-2.md, Specifications): 'Stall Torque 2.5Nm @ 12V, 1.4A', "
        "'No Load Speed 55rpm @ 12V'; 12 V, the law's vin",
        stall_current=1.4,
    ),
    "xm430": DatasheetFigures(
        4.1,
        46 * RPM,
        12.0,
        "ROBOTIS e-manual XM430-W350 (docs/en/dxl/x/xm430-w350.md, Specifications): 'Stall Torque 4.1Nm @ 12.0V, "
        "2.3A', 'No Load Speed 46rpm @ 12.0V'; 12 V, the law's vin",
        stall_current=2.3,
    ),
    "sts3215": DatasheetFigures(
        19.5 * KGCM,
        SIXTY_DEG / 0.192,
        7.4,
        "Feetech STS3215 7.4 V (C001), 7.4 V, the law's vin: not verified against a Feetech document (none reachable "
        "here); stall '19.5kg.cm@7.4V' and no-load '0.192sec/60°(52RPM)@7.4V' as resold by Waveshare (ST3215 "
        "19.5kg.cm@7.4V option) and DFRobot (SER0069); Evelta's Feetech C001 listing states 19.5kg.cm and "
        "0.238sec/60° at 6 V instead. 0.222 s/60° is the 12 V C018's figure (its label: 'SPEED: 0.222sec/60degree "
        "(12V)', 'TORQUE: 30kg.cm (12V)')",
    ),
    "sts3250": DatasheetFigures(
        50.0 * KGCM,
        SIXTY_DEG / 0.133,
        12.0,
        "Feetech STS3250 product specification sheet (Doc. No. 6384135881578380868917773, A/0, 2024-01-16), as "
        "quoted by robonine.com (the sheet itself not reachable here): 'Stall Torque 50 kg·cm @ 12 V', 'No-load "
        "Speed 0.133 s/60° @ 12 V'; 12 V, the law's vin",
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
