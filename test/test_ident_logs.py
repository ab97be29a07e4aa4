"""Log readers/writers: bam JSON, CSV, rosbag2 (mcap + sqlite3) round trips and malformed-input errors."""
import json
import math

import numpy as np
import pytest

from servo_ff.identification.logs import (LogError, ServoLog, read_bam_json, read_csv, read_log, stack_logs,
                                          write_bam_json, write_csv)
from servo_ff.identification.rosbag import read_rosbag, write_rosbag


def _log(n=300, dt=0.005):
    t = np.arange(n) * dt
    return ServoLog(t=t, position=np.sin(3 * t), speed=3 * np.cos(3 * t), goal_position=np.sin(3 * t + 0.1),
                    torque_enable=(t < 1.0).astype(float), input_volts=14.0 + 0.5 * (t > 0.7), mass=0.5,
                    arm_mass=0.1, length=0.15, kp=8.0, vin=15.0, motor="mx106", trajectory="sub_oscillations")


def _raw_json(path, entries, **meta):
    data = {"mass": 1.0, "arm-mass": 0.2, "length": 0.1, "kp": 16, "vin": 14.5, "motor": "mx64",
            "trajectory": "sin_sin", **meta, "entries": entries}
    path.write_text(json.dumps(data))
    return path


def _entries(ts):
    return [{"timestamp": t, "position": 2.0 * t, "speed": 2.0, "load": 0.0, "input_volts": 14.5, "temp": 30,
             "goal_position": 2.0 * t + 0.1, "torque_enable": True} for t in ts]


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
@pytest.mark.parametrize("goal_type", ["Float64MultiArray", "JointState", "JointTrajectory"])
def test_rosbag_round_trip(tmp_path, storage, goal_type):
    log = _log()
    write_rosbag(log, tmp_path / "bag", storage=storage, goal_type=goal_type)
    back = read_rosbag(tmp_path / "bag")
    assert len(back) == len(log)
    np.testing.assert_allclose(back.position, log.position, atol=1e-12)
    np.testing.assert_allclose(back.speed, log.speed, atol=1e-12)
    np.testing.assert_allclose(back.goal_position, log.goal_position, atol=1e-12)
    np.testing.assert_array_equal(back.torque_enable, log.torque_enable)
    np.testing.assert_allclose(back.input_volts, log.input_volts, atol=1e-5)  # BatteryState is float32
    assert (back.mass, back.arm_mass, back.length, back.kp, back.motor) == (0.5, 0.1, 0.15, 8.0, "mx106")


def test_rosbag_single_mcap_file_and_meta_override(tmp_path):
    write_rosbag(_log(), tmp_path / "bag", storage="mcap")
    mcap = next((tmp_path / "bag").glob("*.mcap"))
    back = read_log(mcap, meta={"kp": 4})
    assert back.kp == 4.0 and len(back) == 300


def test_rosbag_missing_goal_topic_is_named(tmp_path):
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore

    ts = get_typestore(Stores.ROS2_JAZZY)
    T = ts.types
    with Writer(tmp_path / "bag", version=9, storage_plugin=StoragePlugin.MCAP) as w:
        c = w.add_connection("/joint_states", "sensor_msgs/msg/JointState", typestore=ts)
        for k in range(3):
            hdr = T["std_msgs/msg/Header"](stamp=T["builtin_interfaces/msg/Time"](sec=1, nanosec=k * 5_000_000),
                                           frame_id="")
            msg = T["sensor_msgs/msg/JointState"](header=hdr, name=["j"], position=np.array([0.1 * k]),
                                                  velocity=np.array([0.0]), effort=np.array([], float))
            w.write(c, 1_000_000_000 + k * 5_000_000, ts.serialize_cdr(msg, "sensor_msgs/msg/JointState"))
    with pytest.raises(LogError, match="no goal topic"):
        read_rosbag(tmp_path / "bag", meta={"mass": 1, "length": 0.1, "kp": 8, "vin": 12})
    with pytest.raises(LogError, match="'/commands' is not in the bag"):
        read_rosbag(tmp_path / "bag", goal_topic="/commands", meta={"mass": 1, "length": 0.1, "kp": 8, "vin": 12})


def test_rosbag_wrong_joint_and_missing_meta(tmp_path):
    write_rosbag(_log(), tmp_path / "bag", storage="sqlite3", joint="hip")
    with pytest.raises(LogError, match="joint 'knee' not in"):
        read_rosbag(tmp_path / "bag", joint="knee")
    assert read_rosbag(tmp_path / "bag", joint="hip").kp == 8.0


def test_bam_json_round_trip_and_csv_round_trip(tmp_path):
    log = _log()
    write_bam_json(log, tmp_path / "a.json")
    back = read_bam_json(tmp_path / "a.json")
    np.testing.assert_allclose(back.position, log.position)
    np.testing.assert_array_equal(back.torque_enable, log.torque_enable)
    assert back.arm_mass == 0.1
    write_csv(log, tmp_path / "a.csv")
    back = read_csv(tmp_path / "a.csv")
    np.testing.assert_allclose(back.goal_position, log.goal_position)
    assert back.meta() == log.meta()


def test_raw_bam_json_is_resampled_and_hyphenated_arm_mass_read(tmp_path):
    ts = np.cumsum(np.r_[0.0, np.full(99, 0.0071)])  # irregular w.r.t. the 5 ms grid
    lg = read_bam_json(_raw_json(tmp_path / "raw.json", _entries(ts.tolist())))
    assert lg.dt == pytest.approx(0.005)
    assert lg.t[-1] <= ts[-1] + 1e-12
    np.testing.assert_allclose(lg.position, 2.0 * lg.t, atol=1e-12)  # linear signals interpolate exactly
    assert lg.arm_mass == 0.2 and lg.vin == 14.5


@pytest.mark.parametrize("mutate, message", [
    (lambda e: e[7].update(position=math.nan), r"entries\[7\] key 'position' is not finite"),
    (lambda e: e[5].update(timestamp=e[3]["timestamp"]), "not strictly increasing at sample 5"),
    (lambda e: e[4].pop("goal_position"), r"entries\[4\] is missing key 'goal_position'"),
])
def test_malformed_json_entries_are_named(tmp_path, mutate, message):
    entries = _entries(np.arange(20) * 0.005)
    mutate(entries)
    path = _raw_json(tmp_path / "bad.json", entries)
    with pytest.raises(LogError, match=message) as info:
        read_bam_json(path)
    assert "bad.json" in str(info.value)


def test_missing_meta_key_and_malformed_json(tmp_path):
    p = tmp_path / "m.json"
    p.write_text(json.dumps({"length": 0.1, "kp": 8, "vin": 12, "entries": _entries([0.0, 0.005])}))
    with pytest.raises(LogError, match="missing key 'mass'"):
        read_bam_json(p)
    p.write_text("{not json")
    with pytest.raises(LogError, match="malformed JSON"):
        read_bam_json(p)


def test_malformed_csv(tmp_path):
    p = tmp_path / "x.csv"
    p.write_text("# mass: 1\n# length: 0.1\n# kp: 8\n# vin: 12\ntimestamp,position,goal_position\n0,0,0\n0.005,nan,0\n")
    with pytest.raises(LogError, match="data row 1 column 'position' is not finite"):
        read_csv(p)
    p.write_text("# mass: 1\n# length: 0.1\n# kp: 8\n# vin: 12\ntimestamp,position\n0,0\n")
    with pytest.raises(LogError, match="missing column 'goal_position'"):
        read_csv(p)


def test_stack_logs_pads_and_masks():
    a, b = _log(100), _log(60)
    batch = stack_logs([a, b])
    assert batch.position.shape == (100, 2)
    assert batch.mask[:, 1].sum() == 60 and batch.mask[:, 0].all()
    assert (batch.position[60:, 1] == b.position[-1]).all()
