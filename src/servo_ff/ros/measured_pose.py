"""The measured pose a pattern or a walk starts from: the positions of its joints in one ``/joint_states``
(:func:`measured_pose`, the walker node), or across the messages of several servo nodes each publishing its own joints
(:class:`PoseAcross`, the walk node: before, it needed every joint in one message and never started beside two servo
nodes); or the reason it is not one (said by the node, throttled)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .clock_jump import of_old_time
from .common import TOPIC_JOINT_STATES
from .start_pose import StartPose

POSE_MAX_AGE = 0.5  # [s, node clock] a pose read across messages: every joint's reading this recent (≥ 2 servo cycles)


def refused(names: Sequence[str], position: Sequence[float], stamp: float, now: float) -> str | None:
    """Why a JointState of ``names``/``position`` stamped ``stamp`` [s] gives no reading at the node's time ``now``
    [s] (None: it does): names and positions of different lengths, a stamp over 1 s ahead of the clock (another time
    base, or the old time queued behind a jump back: before, ignored without a word)."""
    if of_old_time(stamp, now):
        return f"{TOPIC_JOINT_STATES} stamped {stamp:.3f} s, ahead of the clock ({now:.3f} s): not taken as the pose"
    if len(position) != len(names):
        return f"{TOPIC_JOINT_STATES}: {len(names)} names but {len(position)} positions; waiting for a pose"
    return None


def measured_pose(names: Sequence[str], position: Sequence[float], stamp: float, joints: Sequence[str], now: float):
    """(q [rad] of ``joints``, None), or (None, why not) for a JointState of ``names``/``position`` stamped ``stamp``
    [s] at the node's time ``now`` [s]; (None, None) before the node has a clock. Refused, with the reason: a joint
    missing, a position not finite (a joint not read yet: the walk would start from NaN; before, it did, silently),
    and :func:`refused`'s."""
    if now <= 0.0:
        return None, None
    why = refused(names, position, stamp, now)
    if why is not None:
        return None, why
    names = list(names)
    missing = [j for j in joints if j not in names]
    if missing:
        return None, f"{TOPIC_JOINT_STATES} lacks {missing}; waiting for them"
    q = np.array([position[names.index(j)] for j in joints], dtype=np.float64)
    bad = ~np.isfinite(q)
    if bad.any():
        k = int(np.argmax(bad))
        return None, f"{TOPIC_JOINT_STATES}: {joints[k]} is {q[k]} (not read yet?); waiting for a finite pose"
    return q, None


class PoseAcross:
    """The pose of ``joints`` from ``/joint_states`` messages that each may carry some of them (one per servo node),
    read as the feed-forward node's :class:`.start_pose.StartPose` reads its start pose: each joint's latest finite
    position and its arrival [s, node clock]; whole once every joint was read in the last ``max_age`` [s] (a part
    older, or read before a jump back of the clock, waits for its next message)."""

    def __init__(self, joints: Sequence[str], max_age: float = POSE_MAX_AGE):
        self.joints, self.max_age = list(joints), max_age
        self.q = np.full(len(self.joints), np.nan)  # [rad] each joint's latest finite reading
        self.parts = StartPose({j: k for k, j in enumerate(self.joints)}, np.arange(len(self.joints)))
        self.not_finite: dict[str, float] = {}  # joints whose latest reading was not finite: that value

    def take(self, names: Sequence[str], position: Sequence[float], stamp: float, now: float):
        """(q [rad] of ``joints``, None) when this message (``names``/``position`` stamped ``stamp`` [s], arrived at
        ``now`` [s]) completes the pose; else (None, why it is refused — :func:`refused` — or None: the pose waits for
        its other parts, :meth:`missing`). (None, None) before the node has a clock."""
        if now <= 0.0:
            return None, None
        why = refused(names, position, stamp, now)
        if why is not None:
            return None, why
        values = np.asarray(position, dtype=np.float64)
        self.parts.take(names, values, self.q, now)
        for name, p in zip(names, values.tolist()):
            if name in self.parts.index:
                if math.isfinite(p):
                    self.not_finite.pop(name, None)
                else:
                    self.not_finite[name] = p
        if self.missing(now):
            return None, None
        return self.q.copy(), None  # (the parts kept: a pose not used yet, the engine process starting, is whole)

    def missing(self, now: float) -> str:
        """What the pose lacks at ``now`` [s]: the joints not read in the last ``max_age`` (those whose latest reading
        was not finite, with it); "" when whole."""
        age = now - self.parts.read_at
        lack = [j for j, a in zip(self.joints, age.tolist()) if not 0.0 <= a <= self.max_age]
        if not lack:
            return ""
        unread = [j for j in lack if j not in self.not_finite]
        bad = [f"{j} {self.not_finite[j]}" for j in lack if j in self.not_finite]
        what = [f"no reading of {unread} in the last {self.max_age:g} s"] if unread else []
        what += [f"not finite (not read yet?): {', '.join(bad)}"] if bad else []
        return f"{TOPIC_JOINT_STATES}: {'; '.join(what)}"

    def reset(self) -> None:
        """No part read (the clock jumped)."""
        self.parts.start_over(self.q)
        self.not_finite.clear()
