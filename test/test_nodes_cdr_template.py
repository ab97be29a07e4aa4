"""CdrTemplate (servo_ff.ros.cdr_template): the bytes published for joint_states, imu/data, foot forces, the
support coefficient and /clock are what rclpy serializes for the same message, whatever is written in place; the
walk node's TrajectoryCdr (ros/trajectory_cdr.py) deserializes to the message of the same points."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("rclpy")
from rclpy.serialization import deserialize_message, serialize_message  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from sensor_msgs.msg import Imu, JointState  # noqa: E402
from std_msgs.msg import Float64, Float64MultiArray  # noqa: E402

from servo_ff.ros.cdr_template import CdrTemplate, all_finite  # noqa: E402


def test_joint_state_bytes_equal_rclpy_serialization_for_any_values():
    names = [f"joint_{k}" for k in range(7)]  # odd lengths: CDR alignment padding before the arrays
    zeros = [0.0] * 7
    t = CdrTemplate(
        JointState(name=names, position=zeros, velocity=zeros, effort=zeros), ["position", "velocity", "effort"]
    )
    rng = np.random.default_rng(1)
    for sec, nanosec in ((0, 0), (12, 999_999_999), (2**31 - 1, 5)):
        p, v, e = rng.normal(size=(3, 7))
        t.set_stamp(sec, nanosec)
        t.block(0)[:], t.block(1)[:], t.block(2)[:] = p, v, e
        ref = JointState(name=names, position=p.tolist(), velocity=v.tolist(), effort=e.tolist())
        ref.header.stamp.sec, ref.header.stamp.nanosec = sec, nanosec
        assert t.data() == serialize_message(ref)
        back = deserialize_message(t.data(), JointState)
        assert list(back.name) == names and np.array_equal(back.position, p) and back.header.stamp.sec == sec


def test_imu_blocks_of_scalars_and_the_other_messages():
    imu = Imu()
    imu.header.frame_id = "trunk"
    imu.angular_velocity_covariance[0::4] = [1e-4] * 3
    t = CdrTemplate(
        imu,
        [
            ("orientation.x", "orientation.y", "orientation.z", "orientation.w"),
            ("angular_velocity.x", "angular_velocity.y", "angular_velocity.z"),
            ("linear_acceleration.x", "linear_acceleration.y", "linear_acceleration.z"),
        ],
    )
    t.set_stamp(3, 4)
    t.block(0)[:], t.block(1)[:], t.block(2)[:] = [0.1, 0.2, 0.3, 0.9], [1, 2, 3], [0, 0, 9.81]
    ref = Imu()
    ref.header.frame_id, ref.header.stamp.sec, ref.header.stamp.nanosec = "trunk", 3, 4
    ref.angular_velocity_covariance[0::4] = [1e-4] * 3
    ref.orientation.x, ref.orientation.y, ref.orientation.z, ref.orientation.w = 0.1, 0.2, 0.3, 0.9
    ref.angular_velocity.x, ref.angular_velocity.y, ref.angular_velocity.z = 1.0, 2.0, 3.0
    ref.linear_acceleration.z = 9.81
    assert t.data() == serialize_message(ref)

    feet = CdrTemplate(Float64MultiArray(data=[0.0, 0.0]), ["data"], stamp=None)
    feet.block(0)[:] = [120.5, 3.25]
    assert t.data() != feet.data() and feet.data() == serialize_message(Float64MultiArray(data=[120.5, 3.25]))
    c = CdrTemplate(Float64(), [("data",)], stamp=None)
    c.block(0)[0] = 0.75
    assert c.data() == serialize_message(Float64(data=0.75))
    clock = CdrTemplate(Clock(), [], stamp="clock")
    clock.set_stamp(7, 500_000_000)
    ref_clock = Clock()
    ref_clock.clock.sec, ref_clock.clock.nanosec = 7, 500_000_000
    assert clock.data() == serialize_message(ref_clock)


@pytest.mark.parametrize("frame_id", ["", "a", "trunk", "imu_link", "base_imu_1"])  # each CDR padding before it
def test_cdr_imu_reads_the_stamp_and_orientation_rclpy_serialized(frame_id):
    from servo_ff.ros.cdr_template import cdr_imu

    rng = np.random.default_rng(len(frame_id))
    imu = Imu()
    imu.header.frame_id, imu.header.stamp.sec, imu.header.stamp.nanosec = frame_id, 1234, 999_999_999
    quat = rng.normal(size=4)
    imu.orientation.x, imu.orientation.y, imu.orientation.z, imu.orientation.w = quat.tolist()
    imu.angular_velocity.x, imu.linear_acceleration.z = 0.5, 9.81
    imu.orientation_covariance[0], imu.orientation_covariance[1] = -1.0, 7.0  # REP-145: no orientation given
    stamp, got, cov0 = cdr_imu(serialize_message(imu))
    assert stamp == 1234 + 999_999_999 * 1e-9 and got == tuple(quat.tolist()) and cov0 == -1.0
    assert cdr_imu(serialize_message(imu)[:30]) is None and cdr_imu(b"\x00\x00" + bytes(60)) is None


def test_a_block_that_is_not_one_run_of_doubles_is_refused():
    with pytest.raises(ValueError, match="not contiguous"):
        CdrTemplate(Imu(), [("orientation.x", "angular_velocity.x")])  # a covariance array lies between


def test_listened_follows_the_subscribers_within_its_period():
    """Listened (a per-period publisher's "does anyone take this?") is False without a subscriber, becomes True
    within its period once one exists, and False again after it leaves; it asks rclpy at most once a period."""
    from servo_ff.ros.cdr_template import Listened
    from servo_ff.ros.harness import RosHarness, wait_for

    with RosHarness(salt=29) as h:
        pub = h.make_node("listened_pub").create_publisher(Float64, "listened", 10)
        listened, slow = Listened(pub, period_s=0.01), Listened(pub, period_s=3600.0)
        assert not listened() and not slow()  # slow: asked now, the answer then holds for an hour
        other = h.make_node("listened_sub")
        other.create_subscription(Float64, "listened", lambda m: None, 10)
        wait_for(listened, 30.0, "Listened to see the subscriber")
        assert pub.get_subscription_count() > 0 and not slow()
        h.remove(other)  # between two callbacks of the executor thread
        wait_for(lambda: not listened(), 30.0, "Listened to see the subscriber leave")


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_all_finite_is_numpys_isfinite_all_for_every_position_and_huge_values(bad):
    rng = np.random.default_rng(2)
    base = [rng.normal(size=20), np.full(3, 1.7e308), np.array([-1.7e308, 0.0, -0.0, 5e-324])]
    assert all_finite(*base) and all_finite(np.empty(0))
    for k, a in enumerate(base):
        for i in range(a.size):
            arrays = [x.copy() for x in base]
            arrays[k][i] = bad
            assert not all_finite(*arrays), (k, i)
            assert all_finite(*arrays) == all(np.isfinite(x).all() for x in arrays)


@pytest.mark.parametrize("n_joints, n_points", [(7, 1), (7, 5), (20, 27)])
def test_trajectory_bytes_equal_rclpy_serialization_of_the_same_points(n_joints, n_points):
    from builtin_interfaces.msg import Duration
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from servo_ff.ros.trajectory_cdr import TrajectoryCdr

    names = [f"j{k}" for k in range(n_joints)]  # 7: odd, padding between a point's arrays
    t = TrajectoryCdr(names, n_points)
    rng = np.random.default_rng(2)
    for stamp in (0, 12_999_999_999, (2**31 - 1) * 10**9 + 5):
        q, dq, ddq = rng.normal(size=(3, n_points, n_joints))
        tfs = np.cumsum(rng.integers(1, 3 * 10**9, n_points)) - 1
        t.fill(stamp, tfs, q, dq, ddq)
        ref = JointTrajectory(joint_names=names)
        ref.header.stamp.sec, ref.header.stamp.nanosec = divmod(stamp, 10**9)
        for k in range(n_points):
            sec, ns = divmod(int(tfs[k]), 10**9)
            ref.points.append(
                JointTrajectoryPoint(
                    positions=q[k].tolist(),
                    velocities=dq[k].tolist(),
                    accelerations=ddq[k].tolist(),
                    time_from_start=Duration(sec=sec, nanosec=ns),
                )
            )
        back = deserialize_message(t.data(), JointTrajectory)  # (CDR padding bytes are not defined: not compared)
        assert back == ref
        assert len(t.data()) == len(serialize_message(ref))


def test_level_publisher_sends_changes_and_heartbeats_and_the_receiver_holds_every_value():
    """A level sent on change and every heartbeat: the subscriber receives each distinct value in order (the value
    it holds at each instant is the one sent every period), a repeated value within the heartbeat is not sent."""
    from servo_ff.ros.cdr_template import cdr_stamp
    from servo_ff.ros.harness import RosHarness, wait_for
    from servo_ff.ros.level_publisher import LevelPublisher

    js = JointState(name=["a"], position=[1.0])
    js.header.stamp.sec, js.header.stamp.nanosec = 12, 345_000_000
    assert cdr_stamp(serialize_message(js)) == pytest.approx(12.345, abs=1e-12)
    assert cdr_stamp(b"\x01\x00" + bytes(10)) is None  # big-endian CDR: not read here
    with RosHarness(salt=31) as h:
        got: list[float] = []
        h.make_node("level_sub").create_subscription(Float64, "level", lambda m: got.append(m.data), 100)
        pub = h.make_node("level_pub").create_publisher(Float64, "level", 100)
        wait_for(lambda: pub.get_subscription_count() > 0, 30.0, "the level subscriber")
        level = LevelPublisher(pub, heartbeat=0.1)
        values = [0.5, 0.5, 0.5, 1.0, 1.0, 0.75, 0.75, 0.75]  # one a period of 0.008 s
        for k, c in enumerate(values):
            level.send(k * 0.008, c)
        level.send(0.2, 0.75)  # the heartbeat: sent again
        assert level.sent == 4
        wait_for(lambda: len(got) == 4, 30.0, "the four level messages")
        assert got == [0.5, 1.0, 0.75, 0.75]
