"""Which joints not read on ``/joint_states`` (NaN: a servo missing at configure with the hardware node's
``missing_ids: continue``, or not read yet) stop the feed-forward node's goals.

A goal joint's NaN stops them (no goal computed on it: held, a throttled line), as before. Another joint's does not
(audit 20a E10: before, every URDF joint was judged, and a servo the node does not drive blocked every goal of the
others for ever): the goals are computed from the *desired* state ``q_des``, never from the readings after the
first goal, and a joint that is not a goal joint enters the inverse dynamics only through its ``q_des`` — the
desired trajectory's when it names it, else its last finite reading taken as the pose (readings are taken only
while finite), else 0 rad (never read). That value stays what it was with or without the NaN, so the NaN changes
no goal; on a fixed-base arm it still matters (gravity of the links beyond it), so the first NaN of each such joint
is one warning naming it and the position the model takes for it; said again after it was read again."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from servo_ff.ros.common import TOPIC_JOINT_STATES


class UnreadJoints:
    """NaN readings of the joints in ``index`` (name → column of ``q_des``), judged against ``goal_joints``."""

    def __init__(self, index: dict[str, int], goal_joints: Sequence[str]):
        self.index, self.goals = index, frozenset(goal_joints)
        self.said: set[str] = set()  # joints (not goal joints) whose NaN was said, until read again

    def judge(self, names: Sequence[str], position: np.ndarray, q_des: np.ndarray) -> tuple[list[str], str]:
        """(the goal joints read NaN: no goal; the warning for other joints newly NaN, or '')."""
        nan = [n for n, p in zip(names, position.tolist()) if n in self.index and not math.isfinite(p)]
        goal = [n for n in nan if n in self.goals]
        new = [n for n in nan if n not in self.goals and n not in self.said]
        self.said.update(new)
        if not new:
            return goal, ""
        held = ", ".join(f"{n} {q_des[self.index[n]]:.3f} rad" for n in new)
        return goal, (
            f"{TOPIC_JOINT_STATES}: {', '.join(new)} not read (NaN), not a goal joint: the goals go on; the inverse "
            f"dynamics takes its desired position ({held}: the desired trajectory's, else its last reading, else 0)"
        )

    def read_again(self, names: Sequence[str]) -> None:
        """A message with every position finite: its joints' NaN may be said again."""
        self.said.difference_update(names)
