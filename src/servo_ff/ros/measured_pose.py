"""The measured pose a pattern or a walk starts from: the positions of its joints in one ``/joint_states``, or
the reason it is not one (said by the node, throttled) — shared by the walk and walker nodes."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .clock_jump import of_old_time
from .common import TOPIC_JOINT_STATES


def measured_pose(names: Sequence[str], position: Sequence[float], stamp: float, joints: Sequence[str], now: float):
    """(q [rad] of ``joints``, None), or (None, why not) for a JointState of ``names``/``position`` stamped ``stamp``
    [s] at the node's time ``now`` [s]; (None, None) before the node has a clock. Refused, with the reason: a joint
    missing, names and positions of different lengths, a position not finite (a joint not read yet: the walk would
    start from NaN; before, it did, silently), a stamp over 1 s ahead of the clock (another time base, or the old
    time queued behind a jump back: before, ignored without a word)."""
    if now <= 0.0:
        return None, None
    if of_old_time(stamp, now):
        return (
            None,
            f"{TOPIC_JOINT_STATES} stamped {stamp:.3f} s, ahead of the clock ({now:.3f} s): not taken as the pose",
        )
    names = list(names)
    if len(position) != len(names):
        return None, f"{TOPIC_JOINT_STATES}: {len(names)} names but {len(position)} positions; waiting for a pose"
    missing = [j for j in joints if j not in names]
    if missing:
        return None, f"{TOPIC_JOINT_STATES} lacks {missing}; waiting for them"
    q = np.array([position[names.index(j)] for j in joints], dtype=np.float64)
    bad = ~np.isfinite(q)
    if bad.any():
        k = int(np.argmax(bad))
        return None, f"{TOPIC_JOINT_STATES}: {joints[k]} is {q[k]} (not read yet?); waiting for a finite pose"
    return q, None
