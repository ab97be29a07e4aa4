"""The age of a held input (servo_ff.ros.input_age): a message's time is its header stamp when set and earlier than
its arrival; older than the timeout it is stale, said once, and its return said; the feed-forward node's IMU input
judges a serialized Imu by its stamp."""

from __future__ import annotations

import numpy as np
import pytest

from servo_ff.ros.input_age import InputAge, reading_time


def test_reading_time_is_the_stamp_when_set_and_earlier_than_the_arrival():
    assert reading_time(10.0, 9.25) == 9.25
    assert reading_time(10.0, None) == 10.0
    assert reading_time(10.0, 0.0) == 10.0  # unset
    assert reading_time(10.0, 12.0) == 10.0  # ahead of the node's clock: counted from its arrival


def test_an_input_goes_stale_once_and_comes_again():
    infos, warnings = [], []
    age = InputAge("servo_supply", "voltage", "voltages", "supply_timeout", "held", infos.append, warnings.append)
    assert age.state(5.0, 1.0) is None and not age.stale
    age.taken(5.0)
    assert age.state(5.5, 1.0) == "0.500 s old" and not age.stale
    assert age.state(6.25, 1.0) == "stale: 1.250 s old, the last one held" and age.stale
    assert age.state(7.0, 1.0).startswith("stale: 2.000") and len(warnings) == 1
    assert warnings == ["servo_supply: the last voltage is 1.25 s old (supply_timeout 1 s): held"]
    age.taken(7.1)
    assert not age.stale and infos == ["servo_supply: voltages again"]
    assert age.state(7.2, 1.0) == "0.100 s old"


def test_the_feedforward_imu_input_judges_an_orientation_by_its_stamp():
    pytest.importorskip("rclpy")
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import Imu

    from servo_ff.dynamics.inverse_dynamics import gravity_from_imu
    from servo_ff.ros.imu_input import ImuInput

    warnings: list[str] = []
    imu = ImuInput("imu/data", gravity_from_imu, lambda m: None, warnings.append)
    msg = Imu()
    msg.orientation.w = 1.0
    msg.header.stamp.sec, msg.header.stamp.nanosec = 99, 500_000_000  # 0.5 s before it arrives
    assert imu.take(serialize_message(msg), 100.0) is None
    np.testing.assert_array_equal(imu.pending, [0.0, 0.0, 0.0, 1.0])  # in use
    assert imu.age.state(100.0, 0.2).startswith("stale: 0.500") and len(warnings) == 1
    msg.header.stamp.sec, msg.header.stamp.nanosec = 100, 0  # fresh
    imu.take(serialize_message(msg), 100.05)
    assert imu.age.state(100.1, 0.2) == "0.100 s old"
