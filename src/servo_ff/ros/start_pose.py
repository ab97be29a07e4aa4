"""The pose a feed-forward node's first goal starts from (ROS-free state of the node; no message types).

Before its first goal — at start, again after a jump back of the clock, and when the servos' torque comes on
again (:mod:`servo_ff.nodes.feedforward_resume`) — the node reads every goal joint's
position from ``/joint_states`` (several servo nodes' messages too) and holds it as the desired position. A
trajectory that arrives when that pose is incomplete, older than ``pose_max_age`` or read in another time base (a
clock that jumped back) waits: it is followed once every goal joint was read at or after its arrival (the joints
may have moved meanwhile: torque off, a push); a newer trajectory takes its place. Before, the old pose was the
first goal — a snap back."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np


class StartPose:
    """Readings of the joints in ``index`` (name → column of the desired position), the goal joints
    ``goal_cols``; ``waiting`` the trajectory (any object) held until they are read again."""

    def __init__(self, index: dict[str, int], goal_cols: np.ndarray):
        self.index, self.goal_cols = index, np.asarray(goal_cols, dtype=int)
        self.read_at = np.full(len(index), -np.inf)  # [s] when each joint's reading was taken
        self.before_first_goal = True
        self.waiting: Any = None
        self.since = -np.inf  # [s] the waiting trajectory's arrival: readings at or after it count

    def take(self, names: Sequence[str], position: np.ndarray, q_des: np.ndarray, now: float) -> None:
        """The readings of a ``/joint_states`` message (finite positions [rad] of known joints) into ``q_des``."""
        for n, p in zip(names, position.tolist()):
            k = self.index.get(n)
            if k is not None and math.isfinite(p):
                q_des[k], self.read_at[k] = p, now

    def must_wait(self, now: float, max_age: float) -> bool:
        """Whether a trajectory arriving at ``now`` [s] waits for the pose to be read again: one waits already, or
        before the first goal a goal joint is unread, read over ``max_age`` [s] ago or in another time base."""
        if self.waiting is not None:
            return True
        age = now - self.read_at[self.goal_cols].min()  # inf: unread; negative: read before a jump back
        return self.before_first_goal and not 0.0 <= age <= max_age

    def wait(self, msg: Any, now: float) -> None:
        """``msg`` waits (replacing one waiting: the arrival time of the first is kept)."""
        if self.waiting is None:
            self.since = now
        self.waiting = msg

    def ready(self) -> bool:
        """A trajectory waits and every goal joint was read at or after its arrival."""
        return self.waiting is not None and bool((self.read_at[self.goal_cols] >= self.since).all())

    def unread(self, names: Sequence[str]) -> list[str]:
        """The goal joints (``names``, in ``goal_cols`` order) not read since the waiting trajectory came."""
        return [n for n, t in zip(names, self.read_at[self.goal_cols]) if t < self.since]

    def never_read(self, names: Sequence[str]) -> list[str]:
        """The goal joints (``names``, in ``goal_cols`` order) not read since the pose was last reset."""
        return [n for n, t in zip(names, self.read_at[self.goal_cols]) if not math.isfinite(t)]

    def all_read(self) -> bool:
        """Every goal joint read since the pose was last reset."""
        return bool(np.isfinite(self.read_at[self.goal_cols]).all())

    def read_again(self, q_des: np.ndarray) -> None:
        """The joints may have moved (torque off): the pose is read again, the next goal is a first; a trajectory
        waiting for the pose waits on."""
        self.read_at[:] = -np.inf
        self.before_first_goal = True
        q_des[self.goal_cols] = np.nan

    def start_over(self, q_des: np.ndarray) -> None:
        """The clock jumped back: readings of the old time are no pose, nothing waits, the next goal is a first."""
        self.read_again(q_des)
        self.waiting = None
