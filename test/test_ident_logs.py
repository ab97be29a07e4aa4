"""Log readers/writers: bam JSON, CSV, rosbag2 (mcap + sqlite3) round trips and malformed-input errors."""

import json
import math

import numpy as np
import pytest

from servo_ff.io.bam_logs import read_bam_json, read_csv, write_bam_json, write_csv
from servo_ff.io.logs import read_log
from servo_ff.io.rosbag import read_rosbag
from servo_ff.io.rosbag_write import write_rosbag
from servo_ff.io.servo_log import LogError, ServoLog, stack_logs


def _log(n=300, dt=0.005):
    t = np.arange(n) * dt
    return ServoLog(
        t=t,
        position=np.sin(3 * t),
        speed=3 * np.cos(3 * t),
        goal_position=np.sin(3 * t + 0.1),
        torque_enable=(t < 1.0).astype(float),
        input_volts=14.0 + 0.5 * (t > 0.7),
        mass=0.5,
        arm_mass=0.1,
        length=0.15,
        kp=8.0,
        vin=15.0,
        motor="mx106",
        trajectory="sub_oscillations",
    )


def _raw_json(path, entries, **meta):
    data = {
        "mass": 1.0,
        "arm-mass": 0.2,
        "length": 0.1,
        "kp": 16,
        "vin": 14.5,
        "motor": "mx64",
        "trajectory": "sin_sin",
        **meta,
        "entries": entries,
    }
    path.write_text(json.dumps(data))
    return path


def _entries(ts):
    return [
        {
            "timestamp": t,
            "position": 2.0 * t,
            "speed": 2.0,
            "load": 0.0,
            "input_volts": 14.5,
            "temp": 30,
            "goal_position": 2.0 * t + 0.1,
            "torque_enable": True,
        }
        for t in ts
    ]


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
            hdr = T["std_msgs/msg/Header"](
                stamp=T["builtin_interfaces/msg/Time"](sec=1, nanosec=k * 5_000_000), frame_id=""
            )
            msg = T["sensor_msgs/msg/JointState"](
                header=hdr,
                name=["j"],
                position=np.array([0.1 * k]),
                velocity=np.array([0.0]),
                effort=np.array([], float),
            )
            w.write(c, 1_000_000_000 + k * 5_000_000, ts.serialize_cdr(msg, "sensor_msgs/msg/JointState"))
    with pytest.raises(LogError, match="no command-like goal topic"):
        read_rosbag(tmp_path / "bag", meta={"mass": 1, "length": 0.1, "kp": 8, "vin": 12})
    with pytest.raises(LogError, match="'/commands' is not in the bag"):
        read_rosbag(tmp_path / "bag", goal_topic="/commands", meta={"mass": 1, "length": 0.1, "kp": 8, "vin": 12})


def test_rosbag_wrong_joint_and_missing_meta(tmp_path):
    write_rosbag(_log(), tmp_path / "bag", storage="sqlite3", joint="hip")
    with pytest.raises(LogError, match="no message names joint 'knee'"):
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


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda e: e[7].update(position=math.nan), r"entries\[7\] key 'position' is not finite"),
        (lambda e: e[5].update(timestamp=e[3]["timestamp"]), "not strictly increasing at sample 5"),
        (lambda e: e[4].pop("goal_position"), r"entries\[4\] is missing key 'goal_position'"),
    ],
)
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


def _bam_process_by_loop(times, entries, dt):
    """Independent expectation: bam.process read as a per-grid-point loop (frame advanced while t > next)."""
    out, frame = [], 0
    k = 0
    while k * dt < times[-1]:
        t = k * dt
        while t > times[frame + 1]:
            frame += 1
        a, b = entries[frame], entries[frame + 1]
        w = (t - times[frame]) / (times[frame + 1] - times[frame])
        out.append({key: float(a[key]) + (float(b[key]) - float(a[key])) * w for key in a if key != "timestamp"})
        out[-1]["timestamp"] = t
        k += 1
    return out


def test_raw_log_resampled_as_bam_process_grid_from_zero(tmp_path):
    """Grid from t = 0 (first timestamp 3.3 ms: the first grid point is extrapolated from the first two samples),
    ending before the last timestamp, torque_enable thresholded at 0.5 after interpolation."""
    rng = np.random.default_rng(4)
    ts = 0.0033 + np.cumsum(np.r_[0.0, rng.uniform(0.002, 0.009, 400)])
    pos = np.sin(2.0 * ts) + 0.01 * rng.standard_normal(len(ts))
    entries = [
        {
            "timestamp": float(t),
            "position": float(p),
            "speed": float(2 * np.cos(2 * t)),
            "load": float(i % 7),
            "input_volts": 7.3,
            "temp": 30.0,
            "goal_position": float(np.sin(2.0 * t + 0.2)),
            "torque_enable": bool(t < 1.0 or t > 1.5),
        }
        for i, (t, p) in enumerate(zip(ts, pos))
    ]
    lg = read_bam_json(_raw_json(tmp_path / "raw.json", entries))
    want = _bam_process_by_loop(ts, entries, 0.005)
    assert len(lg) == len(want) and lg.t[0] == 0.0 and lg.t[-1] < ts[-1] <= lg.t[-1] + 0.005
    np.testing.assert_allclose(lg.t, [w["timestamp"] for w in want], rtol=0, atol=1e-15)
    for key in ("position", "speed", "goal_position", "input_volts"):
        np.testing.assert_allclose(getattr(lg, key), [w[key] for w in want], rtol=0, atol=1e-14, err_msg=key)
    np.testing.assert_allclose(lg.extra["load"], [w["load"] for w in want], rtol=0, atol=1e-13)
    np.testing.assert_array_equal(lg.torque_enable, [float(w["torque_enable"] > 0.5) for w in want])
    # t = 0 lies before the first sample: linear extrapolation through the first two samples
    slope = (pos[1] - pos[0]) / (ts[1] - ts[0])
    assert lg.position[0] == pytest.approx(pos[0] - slope * ts[0], abs=1e-12)
    # bam's processed file of it (uniform grid, 'dt' key) is read as is: the same samples
    write_bam_json(lg, tmp_path / "processed.json")
    back = read_bam_json(tmp_path / "processed.json")
    assert len(back) == len(lg)
    np.testing.assert_array_equal(back.position, lg.position)
    np.testing.assert_array_equal(back.torque_enable, lg.torque_enable)


def test_linear_signal_is_exact_including_the_extrapolated_start(tmp_path):
    ts = 0.004 + np.cumsum(np.r_[0.0, np.full(60, 0.0071)])
    entries = [{**e, "position": 2.0 * e["timestamp"] + 0.3} for e in _entries(ts.tolist())]
    lg = read_bam_json(_raw_json(tmp_path / "lin.json", entries))
    np.testing.assert_allclose(lg.t, np.arange(0.0, ts[-1], 0.005), atol=1e-15)
    np.testing.assert_allclose(lg.position, 2.0 * lg.t + 0.3, atol=1e-12)


def test_clock_not_started_with_the_recording_starts_the_grid_at_its_first_timestamp(tmp_path):
    ts = 1.7e9 + np.arange(50) * 0.004  # Unix time: no 1.7e9 s extrapolation
    lg = read_bam_json(_raw_json(tmp_path / "unix.json", _entries(ts.tolist())))
    assert lg.t[0] == 0.0 and lg.t[-1] < ts[-1] - ts[0]
    np.testing.assert_allclose(lg.position, 2.0 * (ts[0] + lg.t), rtol=1e-12)


def test_a_log_given_twice_is_used_once_and_said(tmp_path, monkeypatch, caplog):
    """``identify L L ./L dir/`` read L four times (training and validation could share it); now once, one line."""
    from servo_ff.io.logs import read_logs

    write_csv(_log(), tmp_path / "a.csv")
    write_csv(_log(), tmp_path / "b.csv")
    monkeypatch.chdir(tmp_path)
    with caplog.at_level("WARNING"):
        logs = read_logs(["a.csv", "a.csv", "./a.csv", str(tmp_path)])
    assert len(logs) == 2
    lines = [r.getMessage() for r in caplog.records if "more than once" in r.getMessage()]
    assert len(lines) == 1 and "a.csv" in lines[0] and "b.csv" not in lines[0]


def test_logs_of_different_actuators_are_refused_naming_both(tmp_path):
    """An xl330 log among mx106 logs was identified as 'actuator xl330' (the first log's) without a word."""
    from servo_ff.workflows.identify import check_one_actuator

    logs = [_log().with_(motor="xl330", source="x.json"), _log().with_(source="m1.csv"), _log().with_(source="m2.csv")]
    with pytest.raises(ValueError, match=r"different actuators \(x\.json is xl330, m1\.csv is mx106\)"):
        check_one_actuator(logs)
    check_one_actuator(logs[1:])  # one actuator: accepted
