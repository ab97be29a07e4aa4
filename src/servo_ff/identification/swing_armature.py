"""The armature held at the training logs' free-swing estimate (issue 23): what ``identify`` holds, or why not.

A fit on slow logs can put the armature wherever it best compensates what the model gets wrong (on the shared XL330
logs, a stall the model does not hold pulls it to 0.00124 kg·m² against 0.00219 in sample); the torque-off swings
of the *training* logs time it with no motor model (:mod:`~servo_ff.identification.free_swing`). Where they hold a
half-swing of at least ``min_amplitude`` the armature is held (``fixed``) at that estimate instead of searched.

Refused, one :class:`ValueError` line naming the log(s): a log whose half-swings give a non-finite or non-positive
armature (its mass, arm mass or length is wrong), and an estimate outside the actuator's armature search box (the
same box a fitted value must lie in; held values are not clamped into it). ``--no-swing-armature`` searches the
armature as before.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..io.servo_log import ServoLog
from .free_swing import swings_by_log
from .search_space import Bound

MIN_AMPLITUDE = 0.1  # [rad] smallest half-swing amplitude used (free_swing's criterion)
HYSTERESIS = 0.01  # [rad] turning-point hysteresis (free_swing's)
SOURCE = "identification/free_swing.py: J = m·g·l·(Δt/2K)² − J_load per torque-off half-swing, median"


@dataclass(frozen=True)
class SwingHold:
    """The held armature [kg·m²] (None: searched, ``reason`` says why), the logs and half-swings it comes from."""

    armature: float | None
    reason: str = ""
    logs: tuple[str, ...] = ()
    per_swing: tuple[float, ...] = ()

    @property
    def fixed(self) -> dict[str, float]:
        """``fit_model``'s ``fixed`` keys: the armature when held, else nothing."""
        return {} if self.armature is None else {"armature": self.armature}

    def to_dict(self) -> dict[str, Any]:
        """summary.json's ``armature_from_swing``."""
        if self.armature is None:
            return {"held": False, "reason": self.reason}
        return {
            "held": True,
            "armature": self.armature,
            "unit": "kg·m²",
            "logs": list(self.logs),
            "half_swings": list(self.per_swing),
            "min_amplitude": MIN_AMPLITUDE,
            "source": SOURCE,
        }

    def describe(self) -> str:
        """One line for the console."""
        if self.armature is None:
            return f"searched ({self.reason})"
        return (
            f"held at {self.armature:.5f} kg·m² from {len(self.per_swing)} torque-off half-swings of "
            f"{', '.join(Path(s).name for s in self.logs)}"
        )


def swing_armature(train: Sequence[ServoLog], box: Bound, enabled: bool = True) -> SwingHold:
    """The armature to hold from the torque-off half-swings (≥ :data:`MIN_AMPLITUDE`) of ``train`` (the training
    logs only), checked against the armature's search ``box`` [kg·m²]; searched (None) when ``enabled`` is False or
    no training log has such a swing. Raises ValueError (one line naming the log) on a non-finite or non-positive
    estimate, or one outside ``box``."""
    if not enabled:
        return SwingHold(None, "--no-swing-armature")
    by_log = swings_by_log(train, MIN_AMPLITUDE, HYSTERESIS)
    for lg, got in by_log:
        own = float(np.median(got))
        if not (math.isfinite(own) and own > 0):
            raise ValueError(
                f"{lg.source}: its torque-off swings give armature {own:.3g} kg·m² (not finite and positive: check the "
                "log's mass, arm_mass and length); pass --no-swing-armature to search the armature"
            )
    per = [a for _, got in by_log for a in got]
    used = [lg.source for lg, _ in by_log]
    if not per:
        return SwingHold(None, f"no torque-off half-swing of >= {MIN_AMPLITUDE:g} rad in the training logs")
    est = float(np.median(per))
    if not (math.isfinite(est) and est > 0):
        raise ValueError(
            f"{', '.join(used)}: the torque-off swings give armature {est:.3g} kg·m² (not finite and positive); "
            "pass --no-swing-armature to search the armature"
        )
    if not box.lo <= est <= box.hi:
        raise ValueError(
            f"{', '.join(used)}: the torque-off swings give armature {est:.3g} kg·m², outside the armature's search "
            f"box [{box.lo:g}, {box.hi:g}] (check the logs' mass and length); pass --no-swing-armature to search it"
        )
    return SwingHold(est, logs=tuple(used), per_swing=tuple(per))


__all__ = ["MIN_AMPLITUDE", "SwingHold", "swing_armature"]
