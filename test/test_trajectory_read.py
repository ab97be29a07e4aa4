"""A JointTrajectory's points read vectorised (ros/trajectory_plan.trajectory_points, from the message or from its
serialized bytes through ros/trajectory_cdr.read_trajectory) equal the per-point loop they replace, bit for bit,
on random messages: the same arrays, or the same ValueError line for every kind of bad input."""

from __future__ import annotations

import struct
import zlib

import numpy as np
import pytest

pytest.importorskip("rclpy")
from builtin_interfaces.msg import Duration  # noqa: E402
from rclpy.serialization import serialize_message  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

from servo_ff.ros.trajectory_cdr import TrajectoryCdr, read_trajectory  # noqa: E402
from servo_ff.ros.trajectory_plan import TrajectoryPoints, trajectory_points  # noqa: E402


def loop_points(msg: JointTrajectory, index: dict[str, int]) -> TrajectoryPoints:
    """The per-point loop of trajectory_points before the vectorisation (91627d2), kept as the reference."""
    names = list(msg.joint_names)
    if not msg.points:
        raise ValueError("trajectory has no points")
    unknown = [n for n in names if n not in index]
    if unknown or not names:
        raise ValueError(
            f"unknown joint name(s) {', '.join(map(repr, unknown)) or '(none given)'}; known: {', '.join(index)}"
        )
    if len(set(names)) != len(names):
        raise ValueError("duplicate joint names")
    m, p = len(names), len(msg.points)
    q, dq, ddq = np.empty((p, m)), np.zeros((p, m)), np.zeros((p, m))
    hv, ha = np.zeros(p, dtype=bool), np.zeros(p, dtype=bool)
    times = np.empty(p)
    for k, pt in enumerate(msg.points):
        if len(pt.positions) != m:
            raise ValueError(f"point {k} has {len(pt.positions)} positions for {m} joints")
        q[k] = pt.positions
        for arr, has, field, vals in (
            (dq, hv, "velocities", pt.velocities),
            (ddq, ha, "accelerations", pt.accelerations),
        ):
            if len(vals) not in (0, m):
                raise ValueError(f"point {k} has {len(vals)} {field} for {m} joints")
            if len(vals):
                arr[k], has[k] = vals, True
        times[k] = pt.time_from_start.sec + pt.time_from_start.nanosec * 1e-9
    for field, arr in (("position", q), ("velocity", dq), ("acceleration", ddq)):
        bad = ~np.isfinite(arr)
        if bad.any():
            k, j = np.argwhere(bad)[0]
            raise ValueError(f"point {k} {field} of {names[j]} is {arr[k, j]} (not finite)")
    if p > 1 and not (np.diff(times) > 0).all():
        k = int(np.argmax(np.diff(times) <= 0)) + 1
        raise ValueError(f"time_from_start is not increasing: point {k} at {times[k]:g} s after {times[k - 1]:g} s")
    cols = np.array([index[n] for n in names], dtype=int)
    stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
    return TrajectoryPoints(names, cols, times, q, dq, ddq, hv, ha, stamp)


INDEX = {f"joint_{k}": k for k in range(9)}


def random_message(rng: np.random.Generator, defect: str) -> JointTrajectory:
    """A message over a few of INDEX's joints (alike points, as a walk node sends, or points of mixed
    kinds), with one ``defect`` ("" for none)."""
    m, p = int(rng.integers(1, 8)), int(rng.integers(1, 9))
    names = [str(n) for n in rng.choice(list(INDEX), m, replace=False)]
    msg = JointTrajectory(joint_names=names)
    msg.header.frame_id = "trunk"[: int(rng.integers(0, 6))]  # odd lengths: CDR padding
    msg.header.stamp.sec, msg.header.stamp.nanosec = int(rng.integers(0, 2**31)), int(rng.integers(0, 10**9))
    alike = rng.random() < 0.5
    kinds = [(True, True)] * p if alike else [tuple(rng.random(2) < 0.6) for _ in range(p)]
    t = np.cumsum(rng.uniform(1e-3, 0.7, p)) - (0.0 if rng.random() < 0.7 else 0.3)
    for k, (v, a) in enumerate(kinds):
        sec = int(np.floor(t[k]))
        msg.points.append(
            JointTrajectoryPoint(
                positions=rng.normal(size=m).tolist(),
                velocities=rng.normal(size=m).tolist() if v else [],
                accelerations=rng.normal(size=m).tolist() if a else [],
                effort=rng.normal(size=m).tolist() if rng.random() < 0.2 else [],
                time_from_start=Duration(sec=sec, nanosec=min(int((t[k] - sec) * 1e9), 999_999_999)),
            )
        )
    k, j = int(rng.integers(0, p)), int(rng.integers(0, m))
    pt = msg.points[k]
    if defect == "no points":
        msg.points = []
    elif defect == "unknown joint":
        msg.joint_names = [*names[:-1], "elbow"]
    elif defect == "duplicate joint":
        msg.joint_names = [*names, names[0]]
        for q in msg.points:
            q.positions, q.velocities, q.accelerations = [*q.positions, 0.0], [], []
    elif defect in ("positions", "velocities", "accelerations"):
        extra = int(rng.choice([-1, 1])) if defect == "positions" else 1  # (none: valid for q̇, q̈)
        setattr(pt, defect, rng.normal(size=m + extra).tolist())
    elif defect in ("nan", "inf"):
        field = ("positions", "velocities", "accelerations")[int(rng.integers(0, 3))]
        vals = list(getattr(pt, field)) or list(pt.positions)
        vals[j] = float(defect) * (1 if rng.random() < 0.5 else -1)
        setattr(pt, field, vals)
    elif defect == "time" and p > 1:
        pt.time_from_start = msg.points[k - 1].time_from_start if k else msg.points[1].time_from_start
    return msg


def same(a: TrajectoryPoints, b: TrajectoryPoints) -> bool:
    return (
        a.names == b.names
        and a.stamp == b.stamp
        and all(
            x.dtype == y.dtype and np.array_equal(x, y)  # bitwise for finite values (no NaN reaches here)
            for x, y in zip(a[1:8], b[1:8])
        )
    )


DEFECTS = ["", "", "no points", "unknown joint", "duplicate joint", "positions", "velocities", "accelerations"]
DEFECTS += ["nan", "inf", "time"]


@pytest.mark.parametrize("defect", sorted(set(DEFECTS)))
def test_the_vectorised_read_equals_the_per_point_loop_on_random_messages(defect):
    rng = np.random.default_rng(zlib.crc32(defect.encode()))
    refused = 0
    for _ in range(150):
        msg = random_message(rng, defect)
        data = serialize_message(msg)
        try:
            ref = loop_points(msg, INDEX)
        except ValueError as e:
            refused += 1
            for source in (msg, data):
                with pytest.raises(ValueError) as got:
                    trajectory_points(source, INDEX)
                assert str(got.value) == str(e)
            continue
        assert same(trajectory_points(msg, INDEX), ref)
        assert same(trajectory_points(data, INDEX), ref)
    if defect:  # every defect refused at least once (each message has one, but "time" needs 2 points)
        assert refused > (75 if defect == "time" else 149), refused
    else:
        assert refused == 0


@pytest.mark.parametrize("n_joints, n_points", [(7, 1), (7, 2), (7, 3), (20, 52)])
def test_a_walk_nodes_message_is_read_through_the_strided_views(n_joints, n_points):
    """TrajectoryCdr's bytes (the walk node's) read back to the values written, times bit for bit (the first two
    points are read one by one, the rest through views at point 1's stride)."""
    names = [f"joint_{k}" for k in range(n_joints)]
    t = TrajectoryCdr(names, n_points)
    rng = np.random.default_rng(4)
    q, dq, ddq = rng.normal(size=(3, n_points, n_joints))
    tfs = np.cumsum(rng.integers(1, 3 * 10**9, n_points))
    t.fill(7 * 10**9 + 5, tfs, q, dq, ddq)
    raw = read_trajectory(t.data())
    assert raw.names == names and raw.stamp == 7 + 5 * 1e-9
    assert raw.times.tolist() == [int(x) // 10**9 + int(x) % 10**9 * 1e-9 for x in tfs]
    assert raw.counts.tolist() == [[n_joints] * 3] * n_points
    for got, want in zip(raw.rows, (q, dq, ddq)):
        assert isinstance(got, np.ndarray) == (n_points > 2)  # points 1.. through the views from 3 points on
        assert np.array_equal(np.asarray(got), want)


def test_bytes_that_are_not_a_trajectory_are_one_value_error():
    msg = JointTrajectory(joint_names=["joint_0"], points=[JointTrajectoryPoint(positions=[0.1])])
    data = serialize_message(msg)
    for bad in (data[:56], data[:20], b"\x00\x00" + data[2:]):  # truncated, big-endian
        with pytest.raises(ValueError, match="not a serialized JointTrajectory"):
            read_trajectory(bad)


def _big_endian(msg: JointTrajectory) -> bytes:
    """``msg`` as big-endian CDR (encapsulation 0x0000), packed by hand: bytes an rmw may deliver that the in-place
    reader does not read (rclpy's message is built instead)."""
    out = bytearray(b"\x00\x00\x00\x00")

    def align(n: int) -> None:
        out.extend(b"\x00" * (-(len(out) - 4) % n))

    def string(text: str) -> None:
        align(4)
        out.extend(struct.pack(">I", len(text) + 1) + text.encode() + b"\x00")

    out.extend(struct.pack(">iI", msg.header.stamp.sec, msg.header.stamp.nanosec))
    string(msg.header.frame_id)
    align(4)
    out.extend(struct.pack(">I", len(msg.joint_names)))
    for name in msg.joint_names:
        string(name)
    align(4)
    out.extend(struct.pack(">I", len(msg.points)))
    for pt in msg.points:
        for values in (pt.positions, pt.velocities, pt.accelerations, pt.effort):
            align(4)
            out.extend(struct.pack(">I", len(values)))
            if len(values):
                align(8)
                out.extend(struct.pack(f">{len(values)}d", *values))
        align(4)
        out.extend(struct.pack(">iI", pt.time_from_start.sec, pt.time_from_start.nanosec))
    return bytes(out)


def test_bytes_in_another_encoding_are_read_by_rclpy_and_garbage_is_one_value_error():
    rng = np.random.default_rng(9)
    for _ in range(20):
        msg = random_message(rng, "")
        assert same(trajectory_points(_big_endian(msg), INDEX), loop_points(msg, INDEX))
    data = serialize_message(JointTrajectory(joint_names=["joint_0"], points=[JointTrajectoryPoint(positions=[0.1])]))
    with pytest.raises(ValueError, match="not a serialized JointTrajectory"):
        trajectory_points(b"\x00\x00" + data[2:], INDEX)  # little-endian bytes declared big-endian


def test_a_joint_name_without_its_terminating_nul_is_refused():
    """A CDR string's length counts its NUL: bytes where that byte is not NUL are no JointTrajectory (rclpy reads
    the name with the byte; the in-place reader dropped it unread and took "joint_0" for "joint_0X")."""
    msg = JointTrajectory(joint_names=["joint_0"], points=[JointTrajectoryPoint(positions=[0.1])])
    data = serialize_message(msg)
    at = data.index(b"joint_0\x00") + len("joint_0")
    bad = data[:at] + b"X" + data[at + 1 :]
    assert read_trajectory(data).names == ["joint_0"]
    with pytest.raises(ValueError, match="not a serialized JointTrajectory"):
        read_trajectory(bad)
    with pytest.raises(ValueError):
        trajectory_points(bad, INDEX)
