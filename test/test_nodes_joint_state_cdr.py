"""JointStateCdr (servo_ff.ros.joint_command_cdr): a JointState in a known layout read from its CDR bytes gives
rclpy's stamp and positions bit for bit; any other bytes (another layout, truncated, random) are None, never an
exception, so the caller hands them to rclpy."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("rclpy")
from rclpy.serialization import deserialize_message, serialize_message  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from servo_ff.ros.joint_command_cdr import JointCommandCdr, JointStateCdr  # noqa: E402


def _random_state(rng: np.random.Generator) -> JointState:
    n = int(rng.integers(1, 24))
    names = [f"j{k}" + "x" * int(rng.integers(0, 7)) for k in range(n)]  # lengths 3-9: every CDR padding
    msg = JointState(name=names, position=rng.normal(size=n).tolist())
    msg.velocity = rng.normal(size=int(rng.choice([0, n]))).tolist()
    msg.effort = rng.normal(size=int(rng.choice([0, n]))).tolist()
    msg.header.frame_id = "f" * int(rng.integers(0, 9))
    msg.header.stamp.sec, msg.header.stamp.nanosec = int(rng.integers(0, 2**31)), int(rng.integers(0, 10**9))
    return msg


def test_a_state_in_its_layout_is_read_as_rclpy_reads_it_bit_for_bit():
    rng = np.random.default_rng(21)
    for _ in range(300):
        msg = _random_state(rng)
        reader = JointStateCdr.like(msg)
        for _ in range(3):  # new values, same layout
            msg.position = (rng.normal(size=len(msg.name)) * 10.0 ** rng.integers(-300, 300)).tolist()
            msg.header.stamp.sec, msg.header.stamp.nanosec = int(rng.integers(0, 2**31)), int(rng.integers(0, 2**32))
            data = serialize_message(msg)
            ref = deserialize_message(data, JointState)
            sec, nanosec, position = reader.read_parts(data)
            assert (sec, nanosec) == (ref.header.stamp.sec, ref.header.stamp.nanosec)
            assert position.tobytes() == np.asarray(ref.position, dtype=float).tobytes()


def test_another_layout_or_garbage_is_none_never_an_exception():
    rng = np.random.default_rng(22)
    for _ in range(300):
        msg = _random_state(rng)
        reader = JointStateCdr.like(msg)
        data = serialize_message(msg)
        other = _random_state(rng)
        if (list(other.name), len(other.velocity), len(other.effort), other.header.frame_id) != (
            list(msg.name),
            len(msg.velocity),
            len(msg.effort),
            msg.header.frame_id,
        ):
            assert reader.read_parts(serialize_message(other)) is None
        renamed = JointState(name=[*msg.name[:-1], msg.name[-1] + "y"], position=list(msg.position))
        assert reader.read_parts(serialize_message(renamed)) is None
        assert reader.read_parts(data[: int(rng.integers(0, len(data)))]) is None  # truncated
        assert reader.read_parts(rng.integers(0, 256, int(rng.integers(0, 400)), dtype=np.uint8).tobytes()) is None
    assert JointStateCdr.like(JointState(name=["a", "b"], position=[1.0])) is None  # not one position per name
    assert JointStateCdr.like(JointState()) is None


def test_the_goal_reader_gives_the_stamp_in_nanoseconds():
    msg = JointState(name=["a", "bc"], position=[0.5, -0.25])
    msg.header.stamp.sec, msg.header.stamp.nanosec = 3, 8_000_000
    ns, position = JointCommandCdr(["a", "bc"]).read(serialize_message(msg))
    assert ns == 3_008_000_000 and position.tolist() == [0.5, -0.25]
    msg.velocity = [0.0, 0.0]  # a goal with velocities is another layout: left to rclpy
    assert JointCommandCdr(["a", "bc"]).read(serialize_message(msg)) is None
