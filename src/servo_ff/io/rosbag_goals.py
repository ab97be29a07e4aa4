"""What a rosbag2's goal, gain and trajectory messages mean for one joint (used by :mod:`.rosbag`): topic names under a
namespace, the column of a Float64MultiArray (which names no joints), the servo gain from recorded ``*p_gains``, and
JointTrajectory goals replaced as JointTrajectoryController replaces them."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..trajectory_receipt import ReplacedTrajectories
from .servo_log import LogError


def normalize_namespace(namespace: str | None) -> str:
    """``robot1`` / ``/robot1/`` → ``/robot1``; empty → ``""``."""
    ns = (namespace or "").strip().strip("/")
    return f"/{ns}" if ns else ""


def resolve_topic(name: str, namespace: str | None) -> str:
    """A topic name as recorded: absolute names as given, relative ones under ``namespace`` (ROS name resolution)."""
    return name if name.startswith("/") else f"{normalize_namespace(namespace)}/{name.lstrip('~/')}"


def array_column(
    src: str, joint: str, order: Sequence[str] | None, n_values: int, where: str, js_joints: Sequence[str] = ()
) -> int:
    """Index of ``joint`` in a goal of ``n_values`` values naming no joints (a Float64MultiArray, a JointState
    without names). With more than one value — or one while the joint states ``js_joints`` name several joints:
    it may be another joint's — the order must come from ``order`` (the ``joints`` parameter / ``--joints``): the
    order of ``/joint_states`` is often not the controller's. Never another joint's column: ``joint`` not in
    ``order`` is refused."""
    if order is not None:
        if len(order) != n_values:
            raise LogError(f"{src}: {where} has {n_values} values, the configured joints are {len(order)} ({order})")
        if joint not in order:
            raise LogError(f"{src}: joint {joint!r} is not configured (joints: {list(order)})")
        return order.index(joint)
    if n_values == 1 and len(js_joints) <= 1:
        return 0
    if n_values == 1:
        raise LogError(
            f"{src}: {where} has one value naming no joint, and the joint states name joints {list(js_joints)}: "
            f"whose is it? give the order (joints parameter, servo-ff fit or identify --joints) for joint {joint!r}"
        )
    raise LogError(
        f"{src}: {where} has {n_values} values and a Float64MultiArray names no joints: give their order "
        f"(joints parameter, servo-ff fit or identify --joints) to find joint {joint!r}"
    )


def kp_from_gains(
    src: str,
    gains: list[tuple[int, tuple[float, ...]]],
    topic: str,
    joint: str,
    order: Sequence[str] | None,
    span: tuple[int, int] | None = None,
    base_ns: int = 0,
) -> tuple[float | None, str]:
    """(recorded gain of ``joint``, "") or (None, why not) from (time [ns], values) messages: one value per
    message, the same value for every joint, or the column ``order`` gives. Only the gain in effect over ``span``
    [ns] (the data: the last message before it and those inside) counts; one that changes there by more than 1 %
    is refused naming the time of the change [s since ``base_ns``] — no one kp fits such data."""
    if order is not None:
        try:
            k = array_column(src, joint, order, len(gains[0][1]), f"topic {topic}")
        except LogError as e:
            return None, str(e).split(": ", 1)[-1]
        rows = [(t, g[k]) for t, g in gains if k < len(g)]
    elif all(len(set(g)) == 1 for _, g in gains if g):
        rows = [(t, g[0]) for t, g in gains if g]
    else:
        return None, f"{topic} has different gains per joint and names no joints: give joints"
    good = [(i, t, v) for i, (t, v) in enumerate(rows) if math.isfinite(v) and v > 0]
    if not good:
        return None, f"{topic} has no finite gain > 0 for joint {joint!r}"
    if span is not None:
        before = [r for r in good if r[1] <= span[0]]
        good = before[-1:] + [r for r in good if span[0] < r[1] <= span[1]] or good
    ref = good[0][2]
    for i, t, v in good:
        if abs(v - ref) > 0.01 * ref:
            raise LogError(
                f"{src}: topic {topic} message {i}: the P gain of joint {joint!r} changes from {ref:g} to {v:g} at "
                f"{(t - base_ns) * 1e-9:.3f} s, within the data: no one kp fits it; fit a stretch recorded at one "
                "gain (a bag recorded, or cut, before or after the change)"
            )
    return float(np.median([v for _, _, v in good])), ""


#: One JointTrajectory for one joint: (start [ns], time_from_start [s] (P,), q, q̇, q̈ (P, M), has_q̇, has_q̈ (P,)),
#: M = 1, or M = 0 when the message does not name the joint (held at its state on receipt).
TrajectoryPiece = tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def trajectory_piece(src: str, where: str, msg, joint: str, start: int) -> TrajectoryPiece:
    """``joint``'s points of a JointTrajectory (none of its own when it does not name it: the joint is held, the
    message's times kept), from the header stamp ``start`` [ns] (the receive time when zero) as
    JointTrajectoryController starts it."""
    names = list(msg.joint_names)
    p = len(msg.points)
    times = np.array([pt.time_from_start.sec + pt.time_from_start.nanosec * 1e-9 for pt in msg.points], float)
    if joint not in names:  # JTC holds a joint a (partial) trajectory does not name
        return start, times, *(np.zeros((p, 0)) for _ in range(3)), np.zeros(p, bool), np.zeros(p, bool)
    k = names.index(joint)
    q, dq, ddq = (np.zeros((p, 1)) for _ in range(3))
    hv, ha = np.zeros(p, bool), np.zeros(p, bool)
    for i, pt in enumerate(msg.points):
        if len(pt.positions) <= k:
            raise LogError(
                f"{src}: {where}: point {i} has {len(pt.positions)} position(s) for joint(s) {names}; "
                f"joint index {k} has none"
            )
        q[i] = pt.positions[k]
        if len(pt.velocities) > k:
            dq[i], hv[i] = pt.velocities[k], True
        if len(pt.accelerations) > k:
            ddq[i], ha[i] = pt.accelerations[k], True
    if not (np.isfinite(q).all() and np.isfinite(dq).all() and np.isfinite(ddq).all()):
        raise LogError(f"{src}: {where}: a point of joint {joint!r} is not finite")
    return start, times, q, dq, ddq, hv, ha


def trajectory_goals(
    src: str, topic: str, pieces: list[TrajectoryPiece], base_ns: int, q0: float
) -> tuple[ReplacedTrajectories, float]:
    """The goal a servo node commands from ``pieces`` (receipt [ns], times after it [s], …: :func:`.rosbag_clock.
    _trajectory_starts`), each taken on receipt as :func:`servo_ff.trajectory_receipt.on_receipt` takes it, starting
    from ``q0`` [rad] (the measured position at the first receipt), times in s since ``base_ns``; and the first
    receipt [s]."""
    order = sorted(range(len(pieces)), key=lambda i: pieces[i][0])
    traj = ReplacedTrajectories([q0])
    for i in order:
        received, ahead, q, dq, ddq, hv, ha = pieces[i]
        try:
            traj.add((received - base_ns) * 1e-9, ahead, q, dq, ddq, hv, ha, cols=np.arange(q.shape[1]))
        except ValueError as e:
            raise LogError(f"{src}: topic {topic} message {i}: {e}") from None
    return traj, (pieces[order[0]][0] - base_ns) * 1e-9


__all__ = [
    "normalize_namespace",
    "resolve_topic",
    "array_column",
    "kp_from_gains",
    "TrajectoryPiece",
    "trajectory_piece",
    "trajectory_goals",
]
