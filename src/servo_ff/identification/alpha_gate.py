"""Fit-quality gate of the α̂ least squares (Schwarz & Behnke Eq. 19, 26): what ``servo-ff fit`` and
``servo_fit_node`` refuse to write or set.

Before the fit, the data must excite the terms fitted (:func:`check_excitation`): a motion range (peak-to-peak
of q), a speed (95th percentile of |q̇|) and, when α̂4 is fitted, an acceleration (95th percentile of |q̈|) at
least the gate's minimum. After it (:func:`check_fit`): every α̂, q̇_s and δ inside its admissible range
(:data:`servo_ff.models.schema.ALPHA_FIELDS`, what the feed-forward node accepts), the RMS residual (goal-position
equivalent) at most ``max_rms`` and the condition number of the regressor at most ``max_condition``. A refusal is
one :class:`FitRefused` line naming the figure and its threshold.

Defaults from measurement (``servo-ff fit``, dt 5 ms): a good synthetic bag (mx64 pendulum, Schwarz & Behnke
reference) range 0.89 rad, speed 2.6 rad/s, rms 0.006 rad, condition 3.0; an ILC record (``servo-ff ilc --kp 8``)
1.14 rad, 3.7 rad/s, rms 0.005 rad, condition 2.8; a still servo with 1 mrad of noise range 0.003 rad, speed
0.10 rad/s; random goals and positions rms 0.60 rad; kp and supply of 1e-12 α̂ = 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import numpy as np

from ..errors import ServoFFError
from ..models.errors import ParameterError
from ..models.schema import ALPHA_FIELDS, check_field
from .alpha_data import AlphaData
from .alpha_fit import AlphaFit


class FitRefused(ServoFFError, ValueError):
    """The data or the fit fail the quality gate; the message names the figure and its threshold."""


@dataclass(frozen=True)
class FitGate:
    """Thresholds of the gate (0 disables a minimum, ``inf`` a maximum)."""

    min_range: float = 0.05  # rad: peak-to-peak of q
    min_speed: float = 0.3  # rad/s: 95th percentile of |q̇|
    min_accel: float = 2.0  # rad/s²: 95th percentile of |q̈| (only when α̂4 is fitted)
    max_rms: float = 0.05  # rad: RMS residual, goal-position equivalent
    max_condition: float = 1000.0  # condition number of the regressor (unit-norm columns)

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if math.isnan(v) or v < 0:
                raise ValueError(f"fit gate: {f.name} must be >= 0, got {v}")


#: (unit, meaning) of each threshold: the one description of the fit node's parameters and ``servo-ff fit``'s flags.
GATE_DOCS: dict[str, tuple[str, str]] = {
    "min_range": ("rad", "refuse data whose motion range (peak-to-peak q) is below this"),
    "min_speed": ("rad/s", "refuse data whose speed (95th percentile of |q̇|) is below this"),
    "min_accel": ("rad/s²", "with α̂4: refuse data whose acceleration (95th percentile of |q̈|) is below this"),
    "max_rms": ("rad", "refuse a fit whose RMS residual (goal-position equivalent) is above this"),
    "max_condition": ("–", "refuse a fit whose regressor condition number is above this"),
}


def excitation(data: AlphaData) -> dict[str, float]:
    """Motion range [rad], speed [rad/s] and acceleration [rad/s²] figures of ``data`` (see the module doc)."""
    return motion_figures(data.q, data.dq, data.ddq)


def motion_figures(q: np.ndarray, dq: np.ndarray, ddq: np.ndarray) -> dict[str, float]:
    """Motion range [rad], speed [rad/s] and acceleration [rad/s²] figures of samples q, q̇, q̈ (the module doc), along
    the last axis: floats for 1-D samples, one figure per row of 2-D ones."""
    figures = {
        "range": np.ptp(q, axis=-1),
        "speed": np.percentile(np.abs(dq), 95, axis=-1),
        "accel": np.percentile(np.abs(ddq), 95, axis=-1),
    }
    return {k: float(v) if np.ndim(v) == 0 else v for k, v in figures.items()}


def lack_of_excitation(figures: dict[str, float], gate: FitGate, with_inertia: bool = False) -> str | None:
    """ "not enough excitation: …" naming the first figure of :func:`motion_figures` below the gate's minimum, or
    None (what the batch fit refuses and the online RLS holds on)."""
    checks = [
        ("motion range", figures["range"], gate.min_range, "rad", "min_range"),
        ("speed (95th percentile of |q̇|)", figures["speed"], gate.min_speed, "rad/s", "min_speed"),
    ]
    if with_inertia:
        checks.append(
            ("acceleration (95th percentile of |q̈|)", figures["accel"], gate.min_accel, "rad/s²", "min_accel")
        )
    for what, value, lo, unit, key in checks:
        if value < lo:
            return f"not enough excitation: {what} {value:.3g} {unit} < {key} {lo:g} {unit}"
    return None


def check_excitation(data: AlphaData, gate: FitGate, with_inertia: bool = False) -> None:
    """FitRefused when ``data`` moves too little, too slowly (or, with α̂4, accelerates too little)."""
    why = lack_of_excitation(excitation(data), gate, with_inertia)
    if why:
        raise FitRefused(f"{data.source}: {why}; nothing written")


def check_fit(fit: AlphaFit, gate: FitGate, source: str) -> None:
    """FitRefused when α̂ (or q̇_s, δ) is outside its admissible range, the RMS residual is above ``max_rms`` or the
    condition number above ``max_condition``."""
    values = {f"alpha{i}": float(a) for i, a in enumerate(fit.alpha)}
    values.update(dq_s=fit.dq_s, delta=fit.delta)
    for key, v in values.items():
        try:
            check_field(ALPHA_FIELDS, key, v, name=f"α̂{key[5:]}" if key.startswith("alpha") else key)
        except ParameterError as e:
            raise FitRefused(f"{source}: fitted {e}; nothing written") from None
    if not fit.rms <= gate.max_rms:
        raise FitRefused(f"{source}: rms residual {fit.rms:.3g} rad > max_rms {gate.max_rms:g} rad; nothing written")
    if not fit.condition_number <= gate.max_condition:
        raise FitRefused(
            f"{source}: condition number {fit.condition_number:.3g} > max_condition {gate.max_condition:g}; "
            "nothing written"
        )


__all__ = [
    "FitGate",
    "FitRefused",
    "GATE_DOCS",
    "excitation",
    "motion_figures",
    "lack_of_excitation",
    "check_excitation",
    "check_fit",
]
