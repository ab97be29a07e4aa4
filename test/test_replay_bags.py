"""Replay of bags as `ros2 bag record` writes them (raw CDR, only the topics the nodes publish, no
/servo_ff/log_meta): from our hardware node, our sim node (driven by the ILC node) and a ros2_control robot, in
mcap and sqlite3, through `servo-ff fit` and the one-shot `servo-ff up replay`; bad bags end with one line and
exit code 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("rosbags")
from servo_ff.cli import main  # noqa: E402
from servo_ff.dynamics.alpha import load_alpha  # noqa: E402
from servo_ff.models.presets import preset  # noqa: E402
from servo_ff.models.stepper import PendulumLoad, rollout  # noqa: E402
from servo_ff.trajectories import schwarz_behnke_reference  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
URDF = str(ROOT / "urdf" / "pendulums2.urdf")
ACT = preset("mx64", "m4")
ALPHA0 = ACT.R / (ACT.kt * ACT.firmware.error_gain)  # Schwarz & Behnke Eq. 19 α̂0 for this firmware
KP, VIN, DT = 8.0, 15.0, 0.005
START = 1_763_900_000_000_000_000  # ns, a wall-clock stamp as a real recording has


def _motion():
    """pendulum_1 (mx64/m4, 0.5 kg at 0.15 m, kp 8) driven by the Schwarz & Behnke-style reference: command, θ, θ̇."""
    ref = schwarz_behnke_reference(dt=DT, offset=0.3)
    p = ACT.with_(firmware=ACT.firmware.with_(kp=KP))
    r = rollout(p, np.array([0.3]), np.array([0.0]), ref.q[:, None], DT, load=PendulumLoad(0.5, 0.15, 0.0))
    return ref.q, r.theta[:, 0], r.dtheta[:, 0]


MOTION = _motion()


def record(path: Path, source: str, storage: str = "mcap", truncate: bool = False) -> Path:
    """A bag as `ros2 bag record -a` writes it next to ``source`` (hardware, sim or ros2_control): every topic
    those nodes publish, raw CDR, receive times a little after the header stamps, no servo_ff-only topic."""
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore

    ts = get_typestore(Stores.ROS2_JAZZY)
    T = ts.types
    cmd, q, dq = MOTION

    def stamp(ns):
        return T["builtin_interfaces/msg/Time"](sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)

    def header(ns):
        return T["std_msgs/msg/Header"](stamp=stamp(ns), frame_id="")

    def js(ns, names, pos, vel):
        return T["sensor_msgs/msg/JointState"](
            header=header(ns),
            name=names,
            position=np.array(pos, float),
            velocity=np.array(vel, float),
            effort=np.zeros(len(names)),
        )

    def array(values):
        return T["std_msgs/msg/Float64MultiArray"](
            layout=T["std_msgs/msg/MultiArrayLayout"](dim=[], data_offset=0), data=np.array(values, float)
        )

    def battery(ns, volts):
        nan = float("nan")
        return T["sensor_msgs/msg/BatteryState"](
            header=header(ns),
            voltage=volts,
            temperature=nan,
            current=nan,
            charge=nan,
            capacity=nan,
            design_capacity=nan,
            percentage=nan,
            power_supply_status=0,
            power_supply_health=0,
            power_supply_technology=0,
            present=True,
            cell_voltage=np.array([], np.float32),
            cell_temperature=np.array([], np.float32),
            location="",
            serial_number="",
        )

    def diag(ns):
        kv = T["diagnostic_msgs/msg/KeyValue"](key="position_rad", value="0.3")
        st = T["diagnostic_msgs/msg/DiagnosticStatus"](
            level=b"\x00"[0], name="servo: pendulum_1", message="ok", hardware_id="dxl/1", values=[kv]
        )
        return T["diagnostic_msgs/msg/DiagnosticArray"](header=header(ns), status=[st])

    def log_msg(ns, text):
        return T["rcl_interfaces/msg/Log"](
            stamp=stamp(ns), level=20, name="servo", msg=text, file="x.py", function="f", line=1
        )

    plugin = {"mcap": StoragePlugin.MCAP, "sqlite3": StoragePlugin.SQLITE3}[storage]
    with Writer(path, version=9, storage_plugin=plugin) as w:
        conns = {}

        def put(topic, msgtype, ns, msg):
            if topic not in conns:
                conns[topic] = w.add_connection(topic, msgtype, typestore=ts)
            w.write(conns[topic], ns + 300_000, ts.serialize_cdr(msg, msgtype))  # received 0.3 ms later

        if source == "ros2_control":  # joint_state_broadcaster order differs from the controller's joints
            names, goal_topic = ["pendulum_2", "pendulum_1"], "/forward_position_controller/commands"
        elif source == "sim":
            names, goal_topic = ["pendulum_1", "pendulum_2"], "/servo/joint_command"  # the ILC node's goals
        else:
            names, goal_topic = ["pendulum_1"], "/servo/commands"
        j1 = names.index("pendulum_1")
        put("/rosout", "rcl_interfaces/msg/Log", START, log_msg(START, "started"))
        if source != "ros2_control":
            conns["/servo/joint_trajectory"] = w.add_connection(
                "/servo/joint_trajectory",  # subscribed, never
                "trajectory_msgs/msg/JointTrajectory",
                typestore=ts,
            )
        for k in range(len(cmd)):
            ns = START + k * 5_000_000
            pos, vel = [0.0] * len(names), [0.0] * len(names)
            pos[j1], vel[j1] = q[k], dq[k]
            put("/joint_states", "sensor_msgs/msg/JointState", ns, js(ns, names, pos, vel))
            if source == "ros2_control":
                put(goal_topic, "std_msgs/msg/Float64MultiArray", ns, array([cmd[k], 0.0]))
            elif source == "sim":
                put(goal_topic, "sensor_msgs/msg/JointState", ns, js(0, ["pendulum_1"], [cmd[k]], []))
            else:
                put(goal_topic, "std_msgs/msg/Float64MultiArray", ns, array([cmd[k]]))
            if source != "ros2_control" and k % 100 == 0:  # 2 Hz supply, 1 Hz gains and diagnostics
                put("/servo_supply", "sensor_msgs/msg/BatteryState", ns, battery(ns, VIN))
                if k % 200 == 0:
                    put("/servo/p_gains", "std_msgs/msg/Float64MultiArray", ns, array([KP] * len(names)))
                    put("/diagnostics", "diagnostic_msgs/msg/DiagnosticArray", ns, diag(ns))
    if truncate:
        f = next(p for p in path.iterdir() if p.suffix in (".mcap", ".db3"))
        data = f.read_bytes()
        f.write_bytes(data[: len(data) // 2])
    return path


def fit(bag: Path, out: Path, *extra: str) -> int:
    return main(["fit", str(bag), "--urdf", URDF, "--joint", "pendulum_1", "--out", str(out), *extra])


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
@pytest.mark.parametrize(
    "source, extra",
    [
        ("hardware", []),  # kp from /servo/p_gains, supply from /servo_supply, goal /servo/commands (not p_gains)
        ("sim", []),  # two joints, the ILC's /servo/joint_command (JointState); /servo/joint_trajectory is empty
        ("ros2_control", ["--joints", "pendulum_1,pendulum_2", "--kp", str(KP), "--vin", str(VIN)]),
    ],
)
def test_recorded_bag_replays_to_alpha(tmp_path, storage, source, extra):
    bag = record(tmp_path / "bag", source, storage)
    assert fit(bag, tmp_path / "out", *extra) == 0
    table = load_alpha(tmp_path / "out" / "alpha.yaml", ["pendulum_1"])
    assert abs(table.alpha[0, 0] - ALPHA0) < 0.25 * ALPHA0, (table.alpha, ALPHA0)


def test_a_bags_only_joint_names_the_alpha_file(tmp_path):
    """fit on a bag of one joint, no --joint: the α file names the bag's joint, which the feed-forward node reads.
    Before, it was named "joint" (refused by the node: unknown joint name(s) ['joint'])."""
    bag = record(tmp_path / "bag", "hardware")
    out = tmp_path / "out"
    assert main(["fit", str(bag), "--urdf", URDF, "--out", str(out)]) == 0
    table = load_alpha(out / "alpha.yaml", ["pendulum_1"])
    assert abs(table.alpha[0, 0] - ALPHA0) < 0.25 * ALPHA0


def test_velocities_not_finite_in_a_bag_are_samples_left_out_and_said(tmp_path, monkeypatch, caplog):
    """A few NaN velocities (a servo node's silent servo: its last position kept, velocity and effort NaN): those
    samples are left out (a run of them is a gap), in one warning naming the topic and how many; the recorded speed
    is kept elsewhere. Before: the positions were used as fresh and the speed derived from them."""
    import logging
    import sys

    from servo_ff.io.rosbag import read_rosbag

    cmd, q, dq = MOTION
    dq = dq.copy()
    dq[[10, 20, 30]] = np.nan
    monkeypatch.setattr(sys.modules[__name__], "MOTION", (cmd, q, dq))
    bag = record(tmp_path / "bag", "hardware")
    with caplog.at_level(logging.WARNING):
        log = read_rosbag(bag, joint="pendulum_1")
    lines = [r.getMessage() for r in caplog.records if "no finite velocity or effort" in r.getMessage()]
    assert len(lines) == 1 and "/joint_states: 3 of" in lines[0] and "its message 10;" in lines[0], lines
    assert not any("velocities are not finite" in r.getMessage() for r in caplog.records)
    assert np.isfinite(log.speed).all() and log.segments is None  # 3 lone samples: interpolated over, no gap


def test_bag_reader_takes_the_bench_from_arguments_and_the_bag(tmp_path):
    from servo_ff.io.rosbag import read_rosbag

    hw = read_rosbag(record(tmp_path / "hw", "hardware"), joint="pendulum_1")
    assert (hw.kp, hw.vin, hw.mass, hw.length) == (KP, VIN, 0.0, 0.0)  # p_gains, /servo_supply, no pendulum
    assert (hw.torque_enable == 1).all()  # no torque topic: powered throughout
    np.testing.assert_allclose(hw.goal_position[:50], MOTION[0][:50], atol=1e-12)  # not the gains (8.0)
    rc = record(tmp_path / "rc", "ros2_control", "sqlite3")
    log = read_rosbag(rc, joint="pendulum_1", goal_joints=["pendulum_1", "pendulum_2"], meta={"kp": 4, "vin": 12})
    np.testing.assert_allclose(log.goal_position[:50], MOTION[0][:50], atol=1e-12)  # controller order, not JS
    np.testing.assert_allclose(log.position[:50], MOTION[1][:50], atol=1e-3)  # pendulum_1, not pendulum_2 (0)
    assert (log.kp, log.vin) == (4.0, 12.0)


def test_identify_refuses_a_bag_whose_bench_is_unknown_and_a_bool_gain(tmp_path, capsys):
    """A bag without mass and length in /servo_ff/log_meta: the α fit takes it (the URDF's dynamics), identify
    refuses it in one line; before, it fitted a massless pendulum with exit 0. A JSON/YAML ``true`` is no gain."""
    from servo_ff.io.rosbag import read_rosbag
    from servo_ff.io.servo_log import LogError, clean_meta

    bag = record(tmp_path / "bag", "hardware")
    assert not read_rosbag(bag, joint="pendulum_1").bench_known
    assert read_rosbag(bag, joint="pendulum_1", meta={"mass": 0.2, "length": 0.1}).bench_known
    out = tmp_path / "id"
    assert main(["identify", str(bag), "--out", str(out), "--models", "m1", "--max-evals", "20", "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "the bench's mass and length are unknown" in err and str(bag) in err, err
    assert not out.exists()
    bench = {"vin": 12.0, "mass": 0.2, "length": 0.1}
    with pytest.raises(LogError, match="key 'kp' must be a number, got a bool"):
        clean_meta("log", {**bench, "kp": True})
    assert clean_meta("log", {**bench, "kp": 1})["kp"] == 1.0


@pytest.mark.parametrize(
    "case, args, words",
    [
        ("missing goal topic", ["--goal-topic", "/servo/goal"], ["'/servo/goal' is not in the bag"]),
        ("joint not recorded", ["--joint", "knee"], ["/joint_states", "no message names joint 'knee'"]),
        ("joint not configured", ["--joints", "pendulum_2"], ["joint 'pendulum_1' is not configured"]),
        ("no kp", ["--joints", "pendulum_1,pendulum_2", "--vin", "12"], ["kp unknown"]),
        ("several goal topics", [], ["several candidate goal topics"]),
    ],
)
def test_bad_bags_are_one_line_exit_2(tmp_path, capsys, case, args, words):
    source = "hardware" if case in ("missing goal topic", "several goal topics") else "ros2_control"
    bag = record(tmp_path / "bag", source)
    if case == "several goal topics":  # /servo/commands and /arm_controller/commands both carry goals
        bag = _append_goal_topic(bag)
    argv = ["fit", str(bag), "--urdf", URDF, "--out", str(tmp_path / "out")]
    if "--joint" not in args:
        argv += ["--joint", "pendulum_1"]
    assert main(argv + args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(bag) in err, err
    for w in words:
        assert w in err, (w, err)
    assert not (tmp_path / "out").exists()


def _append_goal_topic(path: Path) -> Path:
    """Copy ``path`` into a new bag with one more command-like goal topic (/arm_controller/commands)."""
    from rosbags.highlevel import AnyReader
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore

    ts = get_typestore(Stores.ROS2_JAZZY)
    out = path.with_name(path.name + "_two_goals")
    with AnyReader([path], default_typestore=ts) as r, Writer(out, version=9, storage_plugin=StoragePlugin.MCAP) as w:
        conns = {c.topic: w.add_connection(c.topic, c.msgtype, typestore=ts) for c in r.connections}
        extra = w.add_connection("/arm_controller/commands", "std_msgs/msg/Float64MultiArray", typestore=ts)
        for c, t, raw in r.messages():
            w.write(conns[c.topic], t, raw)
            if c.topic == "/servo/commands":
                w.write(extra, t, raw)
    return out


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_truncated_bag_is_one_line_exit_2(tmp_path, capsys, storage):
    bag = record(tmp_path / "bag", "hardware", storage, truncate=True)
    assert fit(bag, tmp_path / "out") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(bag) in err, err


def _up(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    from servo_ff.bringup import python_env

    return subprocess.run(
        [sys.executable, "-m", "servo_ff", "up", *args],
        cwd=cwd,
        env=python_env(),
        capture_output=True,
        text=True,
        timeout=240,
    )


def test_up_replay_is_one_shot_with_the_fit_code(tmp_path):
    """`servo-ff up replay` on a ros2_control bag: the fit node exits 0 after writing α̂ (the bring-up ends with
    it), and 2 with one line naming the bag and the topic when the named goal topic is not in the bag."""
    pytest.importorskip("rclpy")
    bag = record(tmp_path / "rc_bag", "ros2_control", "sqlite3")
    params = tmp_path / "robot.yaml"
    params.write_text(  # the bag records no gains or supply: the robot's file gives them
        "servo_fit:\n  ros__parameters:\n    joints: [pendulum_1, pendulum_2]\n    kp: 8.0\n    vin: 12.0\n"
    )
    ok = _up(["replay", "--arg", f"bag:={bag}", "--params-file", str(params)], tmp_path)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    table = load_alpha(tmp_path / "alpha.yaml", ["pendulum_1"])
    assert abs(table.alpha[0, 0] - ALPHA0) < 0.25 * ALPHA0
    bad = _up(
        ["replay", "--arg", f"bag:={bag}", "--arg", "goal_topic:=/servo/commands", "--params-file", str(params)],
        tmp_path,
    )
    assert bad.returncode == 2, bad.stdout + bad.stderr
    lines = [ln for ln in bad.stderr.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and str(bag) in lines[0] and "'/servo/commands' is not in the bag" in lines[0], bad.stderr


def test_up_replay_fits_a_bag_record_sim_wrote(tmp_path):
    """A bag `servo-ff record-sim --format mcap` writes (joint "joint", its pendulum on /servo_ff/log_meta)
    replays through `servo-ff up replay` with no other argument: τ_o of the bag's pendulum, α̂ for its joint, said in
    one line. Before: exit 2, "no message names joint 'pendulum_1' (they name ['joint'])" (the YAML's joint and URDF,
    which has no joint "joint")."""
    pytest.importorskip("rclpy")
    out = tmp_path / "logs"
    argv = ["record-sim", "--format", "mcap", "--out", str(out), "--masses", "0.5", "--lengths", "0.1"]
    assert main([*argv, "--kps", "16", "--trajectories", "sub_oscillations", "--duration", "2"]) == 0
    (bag,) = out.iterdir()
    run = _up(["replay", "--arg", f"bag:={bag}"], tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    said = [ln for ln in run.stderr.splitlines() if "record-sim bag" in ln]
    assert len(said) == 1 and str(bag) in said[0] and "0.5 kg at 0.1 m" in said[0], run.stderr
    table = load_alpha(tmp_path / "alpha.yaml", ["joint"])
    mx106 = preset("mx106", "m4")
    alpha0 = mx106.R / (mx106.kt * mx106.firmware.error_gain)  # Eq. 19 α̂0 of the simulated servo
    assert abs(table.alpha[0, 0] - alpha0) < 0.25 * alpha0, table.alpha
