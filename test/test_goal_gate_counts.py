"""GoalGate's counts are written last: the node's threads (diagnostics, a test waiting on a count) read a count and
then its reason or time, so a count must never be seen ahead of what it counts."""

from __future__ import annotations

import numpy as np
import pytest


def _watched_gate():
    """A gate that notes, at each write of a count, what its reader would then see."""
    from servo_ff.ros.common import GoalGate, Throttle

    seen: list[tuple] = []

    class Watched(GoalGate):
        def __setattr__(self, name, value):
            if name in ("rejected", "accepted") and hasattr(self, "index"):  # past __init__
                seen.append((name, value, self.last_reason, self.last_reject_time, self.last_accept_time))
            super().__setattr__(name, value)

    ticks = iter(range(1, 100))
    gate = Watched(["hip", "knee"], np.array([-2.0, -2.0]), np.array([2.0, 2.0]), goal=np.zeros(2),
                   warn=lambda _: None, throttle=Throttle(0.0), clock=lambda: float(next(ticks)))  # fmt: skip
    return gate, seen


def test_a_refusal_is_counted_after_its_reason_and_time_are_written():
    pytest.importorskip("rclpy")
    gate, seen = _watched_gate()
    assert gate.from_array([0.3, 9.0], "servo/commands") is None
    assert gate.from_array([np.nan, 0.0], "servo/commands") is None
    (n1, c1, r1, t1, _), (n2, c2, r2, t2, _) = seen
    assert (n1, c1, t1) == ("rejected", 1, 1.0) and "knee=9.0000 rad is outside" in r1
    assert (n2, c2, t2) == ("rejected", 2, 2.0) and "hip=nan is not finite" in r2


def test_an_accepted_goal_is_counted_after_its_time_is_written():
    pytest.importorskip("rclpy")
    gate, seen = _watched_gate()
    assert gate.from_array([0.3, 0.4], "servo/commands") is not None
    gate.count_accept()  # a trajectory (topic or action) is counted the same way
    assert [(n, c, ta) for n, c, _, _, ta in seen] == [("accepted", 1, 1.0), ("accepted", 2, 2.0)]
