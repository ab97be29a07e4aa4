"""The rosbag replay's JointTrajectory goals (io/rosbag_clock.py, io/rosbag_goals.py) are the goals a servo node
commands (ros/trajectory_plan.py ``plan_trajectory``) for the same messages received at the same times: each taken on
receipt, from the state followed then to its first point at ``header.stamp + time_from_start`` — stamp 0, stamped
ahead, stamped late with the first point still ahead or already due, partial (the other joint held), ended before
receipt (refused by both)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("rclpy")
from builtin_interfaces.msg import Duration  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

from servo_ff.io.rosbag_clock import on_one_clock  # noqa: E402
from servo_ff.io.rosbag_goals import trajectory_goals, trajectory_piece  # noqa: E402
from servo_ff.ros.common import GoalGate, Throttle  # noqa: E402
from servo_ff.ros.trajectory_plan import plan_trajectory  # noqa: E402

JOINTS = ["a", "b"]
Q0 = np.array([0.1, -0.2])  # both joints at rest before the first message [rad]
BASE = 100_000_000_000  # [ns] the first joint state (a node clock at 100 s: float64 keeps well below a ns)
MS = 1_000_000


def _msg(stamp_ns: int, names: list[str], points: list[tuple[int, list[float], list[float]]]) -> JointTrajectory:
    """A JointTrajectory stamped ``stamp_ns`` naming ``names`` with (time_from_start [ns], positions, velocities
    (empty: none)) ``points``."""
    msg = JointTrajectory(joint_names=names)
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp_ns, 10**9)
    msg.points = [
        JointTrajectoryPoint(
            positions=[float(x) for x in q],
            velocities=[float(x) for x in v],
            time_from_start=Duration(sec=t // 10**9, nanosec=t % 10**9),
        )
        for t, q, v in points
    ]
    return msg


def _sequence() -> list[tuple[int, JointTrajectory]]:
    """(receipt [ns], message) in receipt order."""
    r = [BASE + k * 100 * MS for k in range(1, 8)]
    return [
        (r[0], _msg(0, JOINTS, [(200 * MS, [0.5, 0.3], [1.0, 0.0]), (500 * MS, [0.2, 0.6], [0.0, 0.0])])),
        (r[1], _msg(r[1] + 50 * MS, JOINTS, [(100 * MS, [0.4, 0.1], [0.5, -0.5]), (400 * MS, [0.0, 0.0], [])])),
        # stamped 60 ms before its receipt, the first point 150 ms after the stamp: still 90 ms ahead
        (r[2], _msg(r[2] - 60 * MS, ["a"], [(150 * MS, [0.7], [0.0]), (350 * MS, [0.3], [0.0])])),
        # stamped 80 ms late, the first point due 30 ms before receipt: the points alone
        (r[3], _msg(r[3] - 80 * MS, JOINTS, [(50 * MS, [0.3, -0.1], [0.2, 0.1]), (300 * MS, [-0.2, 0.2], [0, 0])])),
        # ended before its receipt: refused by both
        (r[4], _msg(r[4] - 500 * MS, JOINTS, [(100 * MS, [0.9, 0.9], [])])),
        (r[5], _msg(r[5] - 20 * MS, ["b"], [(70 * MS, [0.4], [1.5]), (250 * MS, [-0.3], [0.0])])),
        (r[6], _msg(r[6] - 10 * MS, JOINTS, [(10 * MS, [0.0, 0.0], []), (200 * MS, [0.25, -0.25], [])])),
    ]


def _node_goals(seq, ts: np.ndarray) -> np.ndarray:
    """The goals (N, 2) a servo node commands at ``ts`` [s] receiving ``seq``: ``plan_trajectory`` on receipt."""
    gate = GoalGate(JOINTS, np.full(2, -3.0), np.full(2, 3.0), goal=Q0.copy(), warn=print, throttle=Throttle(0.0))
    current, taken = None, []
    for recv, msg in seq:
        try:
            current = plan_trajectory(msg, recv * 1e-9, gate, JOINTS, current)
        except ValueError:
            continue
        taken.append(current)
    assert len(taken) == len(seq) - 1  # the ended one refused
    out = np.tile(Q0, (ts.size, 1))
    for i, t in enumerate(ts):
        now = [tr for tr in taken if tr.received <= t]
        if now:
            out[i] = now[-1].spline.position(t)
    return out


def _replay_goals(seq, joint: str, ts: np.ndarray) -> np.ndarray:
    """``joint``'s goals at ``ts`` [s] as the rosbag replay reconstructs them from the recorded ``seq`` (joint states
    stamped at their receipt, every 5 ms, at rest at Q0)."""
    k = JOINTS.index(joint)
    js = [(BASE + i * 5 * MS, BASE + i * 5 * MS, Q0[k], 0.0) for i in range(300)]
    stamp = [m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for _, m in seq]
    traj = [(trajectory_piece("bag", f"message {i}", m, joint, stamp[i]), r) for i, (r, m) in enumerate(seq)]
    streams = {"js": js, "goal": [], "traj": traj, "volts": [], "enable": [], "gains": [], "joint": joint}
    topics = {"js": "/joint_states", "goal": "/joint_trajectory"}
    timed = on_one_clock("bag", streams, topics, 0.05)  # the stamps' median lead, −40 ms, is within dt: one clock
    replaced, _ = trajectory_goals("bag", "/joint_trajectory", timed["traj"], BASE, Q0[k])
    return replaced.positions(ts - BASE * 1e-9)[:, 0]


def test_the_replay_commands_the_goals_of_the_servo_node_for_the_same_messages():
    """Late stamps with the first point still ahead (message 2: 60 ms late) start from the state at receipt, not at
    the stamp; due first points are followed alone; the ended message is skipped: every goal as the node's, to
    1e-9 rad, on a 1 ms grid and at every receipt."""
    seq = _sequence()
    receipts = np.array([r for r, _ in seq]) * 1e-9
    ts = np.unique(np.concatenate([BASE * 1e-9 + np.arange(0, 1.3, 0.001), receipts, receipts + 0.03]))
    node = _node_goals(seq, ts)
    assert np.ptp(node, axis=0).min() > 0.5  # both joints move
    for k, joint in enumerate(JOINTS):
        replay = _replay_goals(seq, joint, ts)
        err = np.abs(replay - node[:, k])
        assert err.max() < 1e-9, (joint, float(err.max()), float(ts[np.argmax(err)] - BASE * 1e-9))


@pytest.mark.parametrize("now", [0.13, 1795847861.31])  # a sim clock's start, a wall-clock stamp
def test_a_trajectory_received_exactly_when_its_first_point_is_due_starts_on_its_points(now):
    """Sent one 10 ms point late (stamp = receipt − 0.01 s, first point at 0.01 s): the first point is due at the
    receipt. In float seconds its time after receipt came out 9.5e-9 s at a wall-clock stamp, and the segment from
    the state toward it was refused as times that do not increase (CI: the ILC node's resent trial, 'point 1 at
    0.13 s follows 0.13 s'). Now it is due: the points alone, from their first."""
    from servo_ff.trajectory_receipt import on_receipt

    times = np.array([0.01, 0.2, 0.21])
    ahead = ((now - 0.01) - now) + times
    q = np.array([[0.3], [0.5], [0.5]])
    spline = on_receipt(now, (np.zeros(1), np.zeros(1), np.zeros(1)), np.array([0]), ahead, q,
                        np.zeros((3, 1)), np.zeros((3, 1)), np.zeros(3, bool), np.zeros(3, bool))  # fmt: skip
    assert spline.sample(now)[0][0] == pytest.approx(0.3, abs=1e-6)  # the due point, not the state's 0
