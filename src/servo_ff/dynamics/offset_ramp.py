"""The walk node's balance offsets (:mod:`servo_ff.ros.imu_balance`) changed by a ramp, not a step (ROS-free): each
trajectory message's offsets go from what the previous message had at its first point to the new ones by a
minimum-jerk over ``period`` (the node's ``publish_period``) from that point, then stay. A reading arriving, going
stale or coming back moves the joints over that time: the largest change per 8 ms tick is 1.875·Δ·0.008 s/period
(0.03 rad for a 0.2 rad offset over 0.1 s; before, the whole Δ in one tick). The ramp is part of the published
positions, so the points' q̇ and q̈ (differences of them) carry it."""

from __future__ import annotations

import math

import numpy as np


class OffsetRamp:
    """Offsets (``n`` joints) ramped over ``period`` [s]; none (0) at first."""

    def __init__(self, n: int, period: float):
        self.period = float(period)
        self.reset(n)

    def reset(self, n: int | None = None) -> None:
        """Back to no offset, no ramp (a walk starting again)."""
        n = len(self.b) if n is None else n
        self.t0 = -math.inf  # [s] the ramp's start (the first point of the last message)
        self.a = np.zeros(n)  # [rad] the offsets it starts from
        self.b = np.zeros(n)  # [rad] those it heads for

    def at(self, times: np.ndarray) -> np.ndarray:
        """The offsets (len(times), n) [rad] at ``times`` [s] on the present ramp."""
        s = np.clip((np.asarray(times, dtype=float) - self.t0) / self.period, 0.0, 1.0)[:, None]
        return self.a + (10 * s**3 - 15 * s**4 + 6 * s**5) * (self.b - self.a)

    def follow(self, times: np.ndarray, t_first: float, target: np.ndarray | None) -> np.ndarray:
        """The offsets (len(times), n) [rad] of a message whose first point is at ``t_first`` [s], sampled at
        ``times`` [s]: a ramp from the previous message's offsets at ``t_first`` to ``target`` (None: no offset)."""
        start = self.at(np.array([t_first]))[0]
        self.t0, self.a = float(t_first), start
        self.b = np.zeros_like(start) if target is None else np.asarray(target, dtype=float)
        return self.at(times)
