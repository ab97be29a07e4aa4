"""The walk's stop when its engine is lost (the walk node's engine process ended or hung:
:mod:`servo_ff.nodes.walk_process`), ROS-free, in two quintics per joint from the state the published plan is in at
the cut (q, q̇, q̈): a brake to rest over :data:`BRAKE` s, ending where a uniform deceleration would (q + q̇·BRAKE/2:
with q̈ = 0 at the cut q̇ falls monotonically to 0, no overshoot; with the plan's q̈ up to 0.015 rad beyond that
segment on the OP3 at 0.1 m/s, the review), then a minimum-jerk move to the gait's stance over at least
``t_min`` (the step period); each lengthened (× 1.25 at a time, at most :data:`LONGEST` s) until its q̇ and q̈ are
within the feed-forward node's bounds (q̈: or the plan's own at the cut, if beyond). The support coefficient is
blended to 0.5 (both feet down) by a minimum-jerk over the whole stop; then the stance is held. Kinematic and open
loop: it puts the swing foot down where the stance has it, it does not balance. (One quintic from the cut's state to
the stance overshot by up to 0.42 rad on the OP3 walking at 0.125 m/s.)"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

BRAKE = 0.1  # [s] the brake to rest, at least
LONGEST = 10.0  # [s] the longest segment (bounds not met by then: that one, q̇/q̈ then held by the node as any plan's)


def quintic_to_rest(q0: np.ndarray, dq0: np.ndarray, ddq0: np.ndarray, q1: np.ndarray, T: float) -> np.ndarray:
    """Coefficients (6, J) of q(τ) = Σ a_k τ^k, τ ∈ [0, ``T``] [s]: q, q̇, q̈ = ``q0``, ``dq0``, ``ddq0`` at 0 and
    ``q1``, 0, 0 at ``T``."""
    h = np.asarray(q1, dtype=float) - q0
    v, a = np.asarray(dq0, dtype=float), np.asarray(ddq0, dtype=float)
    return np.array(
        [
            q0,
            v,
            a / 2.0,
            (20.0 * h - 12.0 * v * T - 3.0 * a * T**2) / (2.0 * T**3),
            (-30.0 * h + 16.0 * v * T + 3.0 * a * T**2) / (2.0 * T**4),
            (12.0 * h - 6.0 * v * T - a * T**2) / (2.0 * T**5),
        ],
        dtype=float,
    )


def _within(coef: np.ndarray, T: float, vmax: np.ndarray, amax: np.ndarray) -> bool:
    """Whether the quintic ``coef`` keeps |q̇| ≤ ``vmax`` and |q̈| ≤ ``amax`` over [0, T] (sampled at 65 points)."""
    tau = np.linspace(0.0, T, 65)[:, None]
    dq = sum(k * coef[k] * tau ** (k - 1) for k in range(1, 6))
    ddq = sum(k * (k - 1) * coef[k] * tau ** (k - 2) for k in range(2, 6))
    return bool((np.abs(dq) <= vmax).all() and (np.abs(ddq) <= amax).all())


def _segment(make, T: float, bounds: tuple[np.ndarray, np.ndarray]) -> tuple[float, np.ndarray]:
    """(duration [s], coefficients) of ``make(T)``, from ``T`` lengthened until within ``bounds``."""
    while True:
        coef = make(T)
        if _within(coef, T, *bounds) or T * 1.25 > LONGEST:
            return T, coef
        T *= 1.25


@dataclass(frozen=True)
class StopPlan:
    """The stop from ``t0`` [s, the node's clock]: the brake (``brake`` s, quintics ``coef_brake``), then the move to
    the stance (``duration`` − ``brake`` s, ``coef_move``); the support coefficient from ``c0`` to 0.5."""

    t0: float
    brake: float
    duration: float
    coef_brake: np.ndarray
    coef_move: np.ndarray
    c0: float

    @property
    def end(self) -> float:
        return self.t0 + self.duration

    def at(self, t: float) -> tuple[np.ndarray, float]:
        """(q [rad], support coefficient) at ``t`` [s]: the stance and 0.5 from :attr:`end` on."""
        tau = min(max(t - self.t0, 0.0), self.duration)
        coef, x = (self.coef_brake, tau) if tau < self.brake else (self.coef_move, tau - self.brake)
        s = tau / self.duration
        return sum(coef[k] * x**k for k in range(6)), self.c0 + (10 * s**3 - 15 * s**4 + 6 * s**5) * (0.5 - self.c0)


def stop_plan(
    t0: float,
    state: tuple[np.ndarray, np.ndarray, np.ndarray],
    c0: float,
    stance: np.ndarray,
    bounds: tuple[np.ndarray, np.ndarray],
    t_min: float,
) -> StopPlan:
    """The stop from ``state`` (q [rad], q̇ [rad/s], q̈ [rad/s²]) and support coefficient ``c0`` at ``t0`` [s] to
    ``stance`` [rad] at rest, within ``bounds`` (|q̇| [rad/s], |q̈| [rad/s²] per joint), the move taking at least
    ``t_min`` [s]."""
    q0, dq0, ddq0 = (np.asarray(x, dtype=float) for x in state)
    vmax, amax = bounds
    brake_bounds = (np.maximum(vmax, np.abs(dq0)), np.maximum(amax, np.abs(ddq0)))  # the plan's own at the cut stay
    tb, coef_brake = _segment(lambda T: quintic_to_rest(q0, dq0, ddq0, q0 + 0.5 * dq0 * T, T), BRAKE, brake_bounds)
    q1, zero = q0 + 0.5 * dq0 * tb, np.zeros_like(q0)
    tm, coef_move = _segment(lambda T: quintic_to_rest(q1, zero, zero, stance, T), max(float(t_min), 1e-3), bounds)
    return StopPlan(float(t0), tb, tb + tm, coef_brake, coef_move, float(c0))
