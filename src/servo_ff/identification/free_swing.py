"""The armature from a pendulum's free swing: the torque-off segments of a pendulum-bench log.

With the H-bridge released the servo's output is a pendulum whose inertia is the load's plus the armature (the rotor
still turns through the gear): J·θ̈ = −m·g·l·sin θ − friction. Its half-period at amplitude A is
2·√(J/(m·g·l))·K(sin²(A/2)) (K: the complete elliptic integral of the first kind), so each half-swing gives

    J = m·g·l · (Δt / (2·K))²,   armature = J − J_load.

Coulomb friction does not change a linear oscillator's half-period (each half-swing is a half-sine about a shifted
centre), and light viscous damping changes it by 1/√(1 − ζ²); the estimate is the median over every half-swing of
at least ``min_amplitude``. The motor law, its gains and the friction model play no part: the swing is timed, not
simulated, so the estimate does not depend on what the model gets wrong while the motor drives.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import ellipk

from ..io.servo_log import ServoLog
from ..models.loads import PendulumLoad


@dataclass(frozen=True)
class SwingEstimate:
    """``armature`` [kg·m²] (median over ``per_swing``, the armature of each half-swing used) from ``n`` half-swings
    of ``logs`` logs."""

    armature: float
    per_swing: tuple[float, ...]
    logs: int

    @property
    def n(self) -> int:
        return len(self.per_swing)


def _runs(mask: np.ndarray) -> list[slice]:
    """Contiguous runs of True in ``mask``."""
    edges = np.flatnonzero(np.diff(np.concatenate(([0], mask.astype(int), [0]))))
    return [slice(a, b) for a, b in zip(edges[::2], edges[1::2])]


def extrema(theta: np.ndarray, hysteresis: float) -> list[int]:
    """Indices of the turning points of ``theta`` [rad]: a maximum or minimum is kept once θ has come back from it by
    more than ``hysteresis`` [rad] (a flat top, from encoder quantisation, gives its middle sample)."""
    out: list[int] = []
    if len(theta) < 3:
        return out
    direction = 0  # +1 rising, −1 falling
    ext_lo = ext_hi = 0  # first and last index at the running extreme value
    for k in range(1, len(theta)):
        v, e = theta[k], theta[ext_lo]
        if direction >= 0 and v >= e or direction <= 0 and v <= e:
            if v == e:
                ext_hi = k
            elif direction == 0 and abs(v - theta[0]) <= hysteresis:
                continue
            else:
                direction = direction or (1 if v > e else -1)
                ext_lo = ext_hi = k
        elif abs(v - e) > hysteresis:
            out.append((ext_lo + ext_hi) // 2)
            direction = -direction if direction else (1 if v > e else -1)
            ext_lo = ext_hi = k
    return out


def half_swings(log: ServoLog, load: PendulumLoad, min_amplitude: float = 0.1, hysteresis: float = 0.01) -> list[float]:
    """The armature [kg·m²] each half-swing of amplitude ≥ ``min_amplitude`` [rad] in the torque-off segments of
    ``log`` gives (see the module docstring)."""
    mgl = float(load.gravity_torque_amplitude())
    j_load = float(load.inertia())
    out = []
    measured = np.zeros(len(log.t), bool)  # never a half-swing timed across a recorder gap
    for a, b in log.spans():
        measured[a:b] = True
    for run in _runs((np.asarray(log.torque_enable) < 0.5) & measured):
        theta, t = np.asarray(log.position)[run], np.asarray(log.t)[run]
        idx = extrema(theta, hysteresis)
        for a, b in zip(idx, idx[1:]):
            amplitude = abs(theta[b] - theta[a]) / 2
            if amplitude < min_amplitude:
                continue
            k = ellipk(np.sin(amplitude / 2) ** 2)
            out.append(mgl * ((t[b] - t[a]) / (2 * k)) ** 2 - j_load)
    return out


def swings_by_log(
    logs: Sequence[ServoLog], min_amplitude: float = 0.1, hysteresis: float = 0.01
) -> list[tuple[ServoLog, list[float]]]:
    """(log, the armature [kg·m²] of each of its half-swings, :func:`half_swings`) for every pendulum-bench log of
    ``logs`` (length > 0: its mass, arm mass and length give the load) with a torque-off half-swing of
    ``min_amplitude`` [rad] or more."""
    out = []
    for lg in logs:
        if not lg.length > 0:
            continue
        got = half_swings(lg, PendulumLoad(lg.mass, lg.length, lg.arm_mass), min_amplitude, hysteresis)
        if got:
            out.append((lg, got))
    return out


def armature_from_swings(
    logs: Sequence[ServoLog], min_amplitude: float = 0.1, hysteresis: float = 0.01
) -> SwingEstimate | None:
    """The armature [kg·m²] from every free half-swing of ``logs`` (:func:`swings_by_log`), or None when none has a
    torque-off half-swing of ``min_amplitude`` [rad]."""
    by_log = swings_by_log(logs, min_amplitude, hysteresis)
    per = [a for _, got in by_log for a in got]
    if not per:
        return None
    return SwingEstimate(float(np.median(per)), tuple(per), len(by_log))
