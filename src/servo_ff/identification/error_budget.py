"""Where a simulated servo misses a recording: the position error split by phase of the motion.

Each sample of a log is given one phase, from the recording itself and the firmware law (never from the model
being judged, so two models are compared on the same samples), in this order of precedence:

* ``saturation``: the firmware's duty ``kp·error_gain·(θd − θ)`` on the *measured* θ reaches ``max_pwm`` (stalls
  and full-PWM climbs);
* ``reversal``: within ``reversal_window`` of a sign change of the goal velocity (the servo has to stop and
  start again: stiction, backlash);
* ``fast``: measured |θ̇| ≥ ``fast_speed`` (back-EMF, viscous friction, the supply under load);
* ``hold``: the goal moves slower than ``hold_speed`` (holding against the load: static friction, the P law's
  dead zone);
* ``slow``: the rest (slow tracking).

:func:`error_budget` gives, per phase, the share of samples, the MAE inside the phase and the share of the log's
total absolute error (the shares add up to 1).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..io.servo_log import ServoLog
from ..models.firmware import FirmwareLaw

PHASES: tuple[str, ...] = ("saturation", "reversal", "fast", "hold", "slow")


@dataclass(frozen=True)
class PhaseRules:
    """Thresholds of :func:`phase_labels` (SI units)."""

    fast_speed: float = 2.0  # [rad/s]
    hold_speed: float = 0.05  # [rad/s] goal speed below which the goal is held
    reversal_window: float = 0.1  # [s] each side of a goal-velocity sign change
    saturation_fraction: float = 0.99  # of max_pwm


def phase_labels(log: ServoLog, firmware: FirmwareLaw, rules: PhaseRules = PhaseRules()) -> np.ndarray:
    """Index into :data:`PHASES` of every sample of ``log`` (int array, same length as the log)."""
    n = len(log)
    duty = log.kp * firmware.error_gain * (log.goal_position - log.position)
    goal_speed = np.gradient(log.goal_position, log.dt) if n > 1 else np.zeros(n)
    moving = np.abs(goal_speed) >= rules.hold_speed
    sign = np.sign(goal_speed)
    idx = np.flatnonzero(moving)
    flips = idx[1:][sign[idx[1:]] != sign[idx[:-1]]]  # sign changes of the goal velocity (across holds too)
    near_flip = np.zeros(n, bool)
    w = max(1, int(round(rules.reversal_window / log.dt)))
    for k in flips:
        near_flip[max(0, k - w) : k + w + 1] = True
    labels = np.full(n, PHASES.index("slow"))
    labels[~moving] = PHASES.index("hold")
    labels[np.abs(log.speed) >= rules.fast_speed] = PHASES.index("fast")
    labels[near_flip] = PHASES.index("reversal")
    labels[np.abs(duty) >= rules.saturation_fraction * firmware.max_pwm] = PHASES.index("saturation")
    return labels


@dataclass(frozen=True)
class PhaseBudget:
    """Per phase: ``samples`` (share of samples), ``mae`` [rad] inside the phase (None when empty) and
    ``error_share`` (share of the total absolute error)."""

    samples: dict[str, float]
    mae: dict[str, float | None]
    error_share: dict[str, float]


def error_budget(errors: Sequence[np.ndarray], labels: Sequence[np.ndarray]) -> PhaseBudget:
    """Budget of absolute errors [rad] (one array per log) over their phase ``labels`` (pooled over the logs)."""
    e = np.abs(np.concatenate([np.asarray(x, float) for x in errors]))
    lab = np.concatenate([np.asarray(x) for x in labels])
    if e.shape != lab.shape:
        raise ValueError(f"errors and labels differ in length: {e.shape} vs {lab.shape}")
    total = float(e.sum())
    samples, mae, share = {}, {}, {}
    for i, name in enumerate(PHASES):
        sel = lab == i
        samples[name] = float(sel.mean()) if e.size else 0.0
        mae[name] = float(e[sel].mean()) if sel.any() else None
        share[name] = float(e[sel].sum() / total) if total > 0 else 0.0
    return PhaseBudget(samples, mae, share)
