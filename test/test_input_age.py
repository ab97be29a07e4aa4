"""The age of a held input (servo_ff.ros.input_age): a message's time is its header stamp when set and earlier than
its arrival by at most the bound (another clock's beyond it: the arrival, said once); older than the timeout it is
stale, said once, and a fresh one after it said too; the feed-forward node's IMU input judges a serialized Imu by
its stamp."""

from __future__ import annotations

import numpy as np
import pytest

from servo_ff.ros.input_age import InputAge, reading_time, stamp_bound


def test_reading_time_is_the_stamp_when_set_and_earlier_than_the_arrival_within_the_bound():
    assert stamp_bound(0.2) == 2.0 and stamp_bound(0.01) == 1.0
    assert reading_time(10.0, 9.25, 1.0) == (9.25, False)
    assert reading_time(10.0, None, 1.0) == (10.0, False)
    assert reading_time(10.0, 0.0, 1.0) == (10.0, False)  # unset
    assert reading_time(10.0, 12.0, 1.0) == (10.0, False)  # ahead of the node's clock: counted from its arrival
    assert reading_time(10.0, 8.5, 1.0) == (10.0, True)  # 1.5 s back: another clock's


def _age(infos: list, warnings: list) -> InputAge:
    return InputAge("servo_supply", "voltage", "voltages", "supply_timeout", "held", infos.append, warnings.append)


def test_an_input_goes_stale_once_and_comes_again():
    infos, warnings = [], []
    age = _age(infos, warnings)
    assert age.state(5.0, 1.0) is None and not age.stale
    age.taken(5.0)
    assert age.state(5.5, 1.0) == "0.500 s old" and not age.stale
    assert age.state(6.25, 1.0) == "stale: 1.250 s old, the last one held" and age.stale
    assert age.state(7.0, 1.0).startswith("stale: 2.000") and len(warnings) == 1
    assert warnings == ["servo_supply: the last voltage is 1.25 s old (supply_timeout 1 s): held"]
    age.taken(7.1)
    assert age.state(7.2, 1.0) == "0.100 s old" and not age.stale and infos == ["servo_supply: voltages again"]


def test_readings_stale_on_arrival_are_said_once_not_again_and_again():
    """Every message stamped 1.5 s before it arrives (a slow pipeline; timeout 1 s): stale at every look, one
    warning, no "again" line between two messages."""
    infos, warnings = [], []
    age = _age(infos, warnings)
    for k in range(10):
        age.taken(10.0 + k, 8.5 + k, timeout=1.0)
        assert age.state(10.0 + k + 0.05, 1.0).startswith("stale: 1.55")
    assert len(warnings) == 1 and infos == [] and age.foreign_stamps == 0


def test_a_stamp_from_another_clock_is_said_once_and_the_arrival_used():
    infos, warnings = [], []
    age = _age(infos, warnings)
    for k in range(3):
        age.taken(1000.0 + k, 3.0 + k, timeout=0.2)  # a driver stamping its boot time
        assert age.state(1000.0 + k + 0.1, 0.2) == "0.100 s old"
    assert age.foreign_stamps == 3 and len(warnings) == 1 and "taken as another clock's" in warnings[0]


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
    assert imu.take(serialize_message(msg), 100.0, 0.2) is None
    np.testing.assert_array_equal(imu.pending, [0.0, 0.0, 0.0, 1.0])  # in use
    assert imu.age.state(100.0, 0.2).startswith("stale: 0.500") and len(warnings) == 1
    msg.header.stamp.sec, msg.header.stamp.nanosec = 100, 0  # fresh
    imu.take(serialize_message(msg), 100.05, 0.2)
    assert imu.age.state(100.1, 0.2) == "0.100 s old"
