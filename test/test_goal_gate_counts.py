"""GoalGate's counts are written last: the node's threads (diagnostics, a test waiting on a count) read a count and
then its reason or time, so a count must never be seen ahead of what it counts."""

from __future__ import annotations

import numpy as np
import pytest


def _watched_gate():
    """A gate that notes, at each write of a count, what its reader would then see."""
    from nodes_harness import watched

    from servo_ff.ros.common import GoalGate, Throttle

    def snap(g, v):  # (hasattr: past __init__)
        return (v, g.last_reason, g.last_reject_time, g.last_accept_time) if hasattr(g, "index") else None

    Rejects, rejects = watched(GoalGate, "rejected", snap)
    Watched, accepts = watched(Rejects, "accepted", snap)
    ticks = iter(range(1, 100))
    gate = Watched(["hip", "knee"], np.array([-2.0, -2.0]), np.array([2.0, 2.0]), goal=np.zeros(2),
                   warn=lambda _: None, throttle=Throttle(0.0), clock=lambda: float(next(ticks)))  # fmt: skip
    return gate, rejects, accepts


def test_a_refusal_is_counted_after_its_reason_and_time_are_written():
    pytest.importorskip("rclpy")
    gate, seen, _ = _watched_gate()
    assert gate.from_array([0.3, 9.0], "servo/commands") is None
    assert gate.from_array([np.nan, 0.0], "servo/commands") is None
    (c1, r1, t1, _), (c2, r2, t2, _) = seen
    assert (c1, t1) == (1, 1.0) and "knee=9.0000 rad is outside" in r1
    assert (c2, t2) == (2, 2.0) and "hip=nan is not finite" in r2


def test_an_accepted_goal_is_counted_after_its_time_is_written():
    pytest.importorskip("rclpy")
    gate, _, seen = _watched_gate()
    assert gate.from_array([0.3, 0.4], "servo/commands") is not None
    gate.count_accept()  # a trajectory (topic or action) is counted the same way
    assert [(c, ta) for c, _, _, ta in seen] == [(1, 1.0), (2, 2.0)]
