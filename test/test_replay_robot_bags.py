"""Replay without traps: bags recorded as robots record them (`ros2 bag record`: raw CDR, no servo_ff-only topic)
through `servo-ff fit`, the one-shot fit node and `servo-ff up replay`: recorded gains win over defaults, column
order comes from the recording, replanned JointTrajectory horizons are replaced as a JointTrajectoryController
replaces them, namespaced topics, a failed fit ends the process (and the launch) non-zero, and the quality gate
refuses what cannot be trusted with nothing written."""

from __future__ import annotations

import importlib.util
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
VIN, DT = 15.0, 0.005
START = 1_763_900_000_000_000_000  # ns, a wall-clock stamp as a real recording has
J1 = "pendulum_1"


def servo(goal: np.ndarray, kp: float) -> tuple[np.ndarray, np.ndarray]:
    """pendulum_1 (mx64/m4, 0.5 kg at 0.15 m, P gain ``kp``) driven by ``goal`` every DT: θ, θ̇."""
    p = ACT.with_(firmware=ACT.firmware.with_(kp=kp))
    r = rollout(p, np.array([goal[0]]), np.array([0.0]), goal[:, None], DT, load=PendulumLoad(0.5, 0.15, 0.0))
    return r.theta[:, 0], r.dtheta[:, 0]


REF = schwarz_behnke_reference(dt=DT, offset=0.3).q


class Bag:
    """A rosbag2 (mcap) written message by message with the ROS 2 Jazzy types."""

    def __init__(self, path: Path):
        from rosbags.rosbag2 import StoragePlugin, Writer
        from rosbags.typesys import Stores, get_typestore

        self.ts = get_typestore(Stores.ROS2_JAZZY)
        self.T = self.ts.types
        self.w = Writer(path, version=9, storage_plugin=StoragePlugin.MCAP)
        self.w.open()
        self.conns: dict[str, object] = {}
        self.path = path

    def put(self, topic: str, msgtype: str, ns: int, msg, received: int | None = None) -> None:
        if topic not in self.conns:
            self.conns[topic] = self.w.add_connection(topic, msgtype, typestore=self.ts)
        t = ns + 300_000 if received is None else received  # received 0.3 ms after its stamp
        self.w.write(self.conns[topic], t, self.ts.serialize_cdr(msg, msgtype))

    def header(self, ns: int):
        t = self.T["builtin_interfaces/msg/Time"](sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)
        return self.T["std_msgs/msg/Header"](stamp=t, frame_id="")

    def joint_state(self, topic: str, ns: int, names: list[str], pos: list[float], vel: list[float]) -> None:
        msg = self.T["sensor_msgs/msg/JointState"](
            header=self.header(ns),
            name=names,
            position=np.array(pos, float),
            velocity=np.array(vel, float),
            effort=np.zeros(len(names)),
        )
        self.put(topic, "sensor_msgs/msg/JointState", ns, msg)

    def array(self, topic: str, ns: int, values: list[float]) -> None:
        layout = self.T["std_msgs/msg/MultiArrayLayout"](dim=[], data_offset=0)
        msg = self.T["std_msgs/msg/Float64MultiArray"](layout=layout, data=np.array(values, float))
        self.put(topic, "std_msgs/msg/Float64MultiArray", ns, msg)

    def supply(self, topic: str, ns: int, volts: float) -> None:
        from servo_ff.io.rosbag_write import _battery  # the BatteryState the project's bag writer records

        msg = _battery(self.T, self.header(ns), volts)
        self.put(topic, "sensor_msgs/msg/BatteryState", ns, msg)

    def trajectory(
        self, topic: str, ns: int, names: list[str], times: np.ndarray, q: np.ndarray, received: int | None = None
    ) -> None:
        T = self.T
        pts = [
            T["trajectory_msgs/msg/JointTrajectoryPoint"](
                positions=np.array(q[k], float),
                velocities=np.array([], float),
                accelerations=np.array([], float),
                effort=np.array([], float),
                time_from_start=T["builtin_interfaces/msg/Duration"](
                    sec=int(times[k]), nanosec=int(round((times[k] % 1) * 1e9))
                ),
            )
            for k in range(len(times))
        ]
        msg = T["trajectory_msgs/msg/JointTrajectory"](header=self.header(ns), joint_names=names, points=pts)
        self.put(topic, "trajectory_msgs/msg/JointTrajectory", ns, msg, received)

    def close(self) -> Path:
        self.w.close()
        return self.path


def servo_node_bag(
    path: Path, goal: np.ndarray, q: np.ndarray, dq: np.ndarray, kp: float, ns: str = "", other_ns: str | None = None
) -> Path:
    """What our hardware node publishes for one joint, under ``ns``: joint_states, servo/commands, servo/p_gains,
    servo_supply (and, under ``other_ns``, the same topics of a second robot standing still at kp 4, 7 V)."""
    bag = Bag(path)
    robots = [(ns, goal, q, dq, kp, VIN)]
    if other_ns is not None:
        zero = np.zeros(len(goal))
        robots.append((other_ns, zero, zero, zero, 4.0, 7.0))
    for k in range(len(goal)):
        t = START + k * 5_000_000
        for prefix, g, pos, vel, gain, volts in robots:
            bag.joint_state(f"{prefix}/joint_states", t, [J1], [pos[k]], [vel[k]])
            bag.array(f"{prefix}/servo/commands", t, [g[k]])
            if k % 100 == 0:
                bag.supply(f"{prefix}/servo_supply", t, volts)
                bag.array(f"{prefix}/servo/p_gains", t, [gain])
    return bag.close()


def fit(bag: Path, out: Path, *extra: str) -> int:
    return main(["fit", str(bag), "--urdf", URDF, "--joint", J1, "--out", str(out), *extra])


def alpha(out: Path) -> np.ndarray:
    return load_alpha(out / "alpha.yaml", [J1]).alpha[0]


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


# ------------------------------------------------------------------------------------------------ gains
def test_recorded_gain_wins_over_the_replay_defaults(tmp_path):
    """A kp-32 bag with /servo/p_gains replayed by `servo-ff up replay` (no kp anywhere but the bag): α̂0 within
    25 % of the truth (a kp of 8 from the bring-up's YAML gave α̂ 4× too small); the summary names the source."""
    pytest.importorskip("rclpy")
    q, dq = servo(REF, 32.0)
    bag = servo_node_bag(tmp_path / "kp32", REF, q, dq, 32.0)
    run = _up(["replay", "--arg", f"bag:={bag}"], tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    a = alpha(tmp_path)
    assert abs(a[0] - ALPHA0) < 0.25 * ALPHA0, (a, ALPHA0)
    assert "kp 32 (recorded /servo/p_gains)" in run.stdout + run.stderr
    # an explicit kp still wins (over recorded gains too): α̂ scales with it
    assert fit(bag, tmp_path / "given", "--kp", "16") == 0
    assert abs(alpha(tmp_path / "given")[0] - ALPHA0 / 2) < 0.25 * ALPHA0 / 2


# --------------------------------------------------------------------------------------------- column order
def _ros2_control_bag(path: Path) -> Path:
    """joint_state_broadcaster order [pendulum_2, pendulum_1]; the forward command controller's [pendulum_1,
    pendulum_2] on /forward_position_controller/commands; no gains or supply recorded."""
    q, dq = servo(REF, 8.0)
    bag = Bag(path)
    for k in range(len(REF)):
        t = START + k * 5_000_000
        bag.joint_state("/joint_states", t, ["pendulum_2", J1], [0.0, q[k]], [0.0, dq[k]])
        bag.array("/forward_position_controller/commands", t, [REF[k], 0.0])
    return bag.close()


@pytest.mark.parametrize("joint", [J1, "pendulum_2"])
def test_unnamed_command_columns_need_joints(tmp_path, capsys, joint):
    """A Float64MultiArray of two joints without `--joints` is refused with the reason (the /joint_states order
    fitted the wrong column: α̂0 = 0, rms 0.44 rad), for either joint; with `--joints` α̂0 is the truth's."""
    bag = _ros2_control_bag(tmp_path / "rc")
    argv = ["fit", str(bag), "--urdf", URDF, "--joint", joint, "--kp", "8", "--vin", str(VIN)]
    assert main([*argv, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "names no joints" in err and "--joints" in err, err
    assert not (tmp_path / "o").exists()
    if joint == J1:
        assert main([*argv, "--joints", "pendulum_1,pendulum_2", "--out", str(tmp_path / "ok")]) == 0
        assert abs(alpha(tmp_path / "ok")[0] - ALPHA0) < 0.25 * ALPHA0


def test_per_joint_gains_need_joints(tmp_path, capsys):
    """/servo/p_gains [4, 8] of two joints (a Float64MultiArray: no names) with the goal as a named JointState:
    kp is not guessed from the /joint_states order (refused with the reason); with `--joints` it is pendulum_1's."""
    q, dq = servo(REF, 8.0)
    bag = Bag(tmp_path / "two")
    for k in range(len(REF)):
        t = START + k * 5_000_000
        bag.joint_state("/joint_states", t, ["pendulum_2", J1], [0.0, q[k]], [0.0, dq[k]])
        bag.joint_state("/servo/joint_command", t, [J1], [REF[k]], [])
        if k % 100 == 0:
            bag.supply("/servo_supply", t, VIN)
            bag.array("/servo/p_gains", t, [4.0, 8.0])
    bag = bag.close()
    assert fit(bag, tmp_path / "o") == 2
    err = capsys.readouterr().err.strip()
    assert "kp unknown" in err and "/servo/p_gains has different gains per joint" in err, err
    assert not (tmp_path / "o").exists()
    assert fit(bag, tmp_path / "ok", "--joints", "pendulum_2,pendulum_1") == 0
    assert "kp = 8 (recorded /servo/p_gains)" in capsys.readouterr().out
    assert abs(alpha(tmp_path / "ok")[0] - ALPHA0) < 0.25 * ALPHA0


# ---------------------------------------------------------------------------------------- replanned horizons
HORIZON = 0.06 + np.arange(10) * 0.04  # s: ten points 40 ms apart, sent every 50 ms (a replanner at 20 Hz)
PERIOD = 10  # samples between messages (50 ms)


def _replanned() -> tuple[list[tuple[int, np.ndarray]], np.ndarray]:
    """Each plan at t_i predicts the reference with an error growing along the horizon (the next plan corrects
    it): (start index, points) per message, and the goal a JointTrajectoryController executes — computed here
    independently: from the state at t_i, linearly (positions only) toward the first point at t_i + 60 ms, until
    the next message replaces it at t_i + 50 ms."""
    t = np.arange(len(REF)) * DT
    msgs, executed = [], REF.copy()
    for i0 in range(0, len(REF) - PERIOD, PERIOD):
        pts = np.interp(t[i0] + HORIZON, t, REF) + 0.6 * HORIZON * np.sin(7.0 * t[i0])  # stale tail
        msgs.append((i0, pts))
        q_start = executed[i0]
        seg = np.arange(i0, i0 + PERIOD + 1)
        executed[seg] = q_start + (pts[0] - q_start) * (seg - i0) * DT / HORIZON[0]
    return msgs, executed


def test_replanned_horizons_are_replaced_not_merged(tmp_path):
    """JointTrajectory horizons each replacing the last (JTC): α̂ equal to the fit on the executed goal sent as
    commands (α̂0 within 25 % of the truth, α̂2 within 0.5); merging the stale tails point by point gave α̂2 8.3
    instead of 2.2."""
    msgs, executed = _replanned()
    q, dq = servo(executed, 8.0)
    bag = Bag(tmp_path / "jt")
    for k in range(len(REF)):
        t = START + k * 5_000_000
        bag.joint_state("/joint_states", t, [J1], [q[k]], [dq[k]])
        if k % 100 == 0:
            bag.supply("/servo_supply", t, VIN)
            bag.array("/servo/p_gains", t, [8.0])
    for i0, pts in msgs:
        bag.trajectory("/arm_controller/joint_trajectory", START + i0 * 5_000_000, [J1], HORIZON, pts[:, None])
    assert fit(bag.close(), tmp_path / "jt_out") == 0
    ref = servo_node_bag(tmp_path / "cmd", executed, q, dq, 8.0)
    assert fit(ref, tmp_path / "cmd_out") == 0
    got, want = alpha(tmp_path / "jt_out"), alpha(tmp_path / "cmd_out")
    assert abs(got[0] - ALPHA0) < 0.25 * ALPHA0, (got, ALPHA0)
    assert abs(got[2] - want[2]) < 0.5, (got, want)


def test_trajectory_goal_follows_jtc_replacement(tmp_path):
    """The bag reader's goal of the replanned bag is the executed goal (the JTC spline), sample by sample; a
    message that ended before it was received (stamped 10 s earlier) is not followed, as a JTC refuses it."""
    from servo_ff.io.rosbag import read_rosbag

    msgs, executed = _replanned()
    bag = Bag(tmp_path / "jt")
    for k in range(len(REF)):
        bag.joint_state("/joint_states", START + k * 5_000_000, [J1], [REF[k]], [0.0])
    for i0, pts in msgs:
        bag.trajectory("/arm_controller/joint_trajectory", START + i0 * 5_000_000, [J1], HORIZON, pts[:, None])
        if i0 == 500:
            late = START + i0 * 5_000_000 - 10_000_000_000
            bag.trajectory(
                "/arm_controller/joint_trajectory", late, [J1], HORIZON, pts[:, None] + 1.0, START + i0 * 5_000_000
            )
    log = read_rosbag(bag.close(), joint=J1, meta={"kp": 8, "vin": VIN})
    n = msgs[-1][0] + PERIOD  # after that the last horizon's tail is followed
    np.testing.assert_allclose(log.goal_position[:n], executed[:n], atol=1e-5)  # 1 µs of stamp jitter


# ------------------------------------------------------------------------------------------------- namespace
def test_namespaced_bag_replays_by_namespace(tmp_path, capsys):
    """/robot1/... next to a second robot's /robot2/...: `--namespace robot1` finds robot1's topics (joint states,
    command, gains, supply); an explicit topic name is used as given."""
    q, dq = servo(REF, 32.0)
    bag = servo_node_bag(tmp_path / "ns", REF, q, dq, 32.0, ns="/robot1", other_ns="/robot2")
    assert fit(bag, tmp_path / "o", "--namespace", "robot1") == 0
    assert abs(alpha(tmp_path / "o")[0] - ALPHA0) < 0.25 * ALPHA0
    assert "kp = 32 (recorded /robot1/servo/p_gains)" in capsys.readouterr().out
    assert fit(bag, tmp_path / "o2", "--joint-states-topic", "/robot1/joint_states", "--goal-topic",
               "/robot1/servo/commands", "--p-gains-topic", "/robot1/servo/p_gains", "--supply-topic",
               "/robot1/servo_supply") == 0  # fmt: skip
    assert abs(alpha(tmp_path / "o2")[0] - ALPHA0) < 0.25 * ALPHA0
    if importlib.util.find_spec("rclpy") is None:
        return
    params = tmp_path / "robot1.yaml"  # the fit node's parameter, as the replay bring-up reads it
    params.write_text("servo_fit:\n  ros__parameters:\n    namespace: robot1\n")
    run = _up(["replay", "--arg", f"bag:={bag}", "--params-file", str(params)], tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert abs(alpha(tmp_path)[0] - ALPHA0) < 0.25 * ALPHA0


# ------------------------------------------------------------------------------- failed fits end non-zero
def _still_bag(path: Path) -> Path:
    """A still servo (1 mrad of noise around 0.3 rad) under a constant goal, gains and supply recorded."""
    rng = np.random.default_rng(3)
    n = 2000
    q = 0.3 + rng.normal(0.0, 1e-3, n)
    return servo_node_bag(path, np.full(n, 0.3), q, np.gradient(q, DT), 8.0)


def test_fit_node_process_exits_non_zero_on_a_failed_fit(tmp_path):
    """The one-shot fit node (the replay bring-up's, as `ros2 launch` runs it) on a still servo: exit code 2, one
    error line naming the figure and its threshold, no alpha.yaml (it exited 0 and wrote α̂0 = 2.26)."""
    pytest.importorskip("rclpy")
    from servo_ff.bringup import config_dir, plan, python_command, python_env

    bag = _still_bag(tmp_path / "still")
    (node,) = plan("replay", bag=str(bag))
    run = subprocess.run(
        python_command(node, config_dir()), cwd=tmp_path, env=python_env(), capture_output=True, text=True, timeout=240
    )
    assert run.returncode == 2, run.stdout + run.stderr
    lines = [ln for ln in run.stderr.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and "motion range" in lines[0] and "min_range 0.05 rad" in lines[0], run.stderr
    assert not (tmp_path / "alpha.yaml").exists()


def test_no_alpha_file_when_the_feedforward_node_does_not_take_it(tmp_path):
    """A good fit the feed-forward node does not take (not reachable): exit 2 naming it, and no alpha.yaml (it was
    written before the node was asked)."""
    pytest.importorskip("rclpy")
    from servo_ff.bringup import config_dir, plan, python_command, python_env

    bag = _good_bag(tmp_path / "good")
    params = tmp_path / "ff.yaml"
    params.write_text("servo_fit:\n  ros__parameters:\n    feedforward_node: nobody\n    service_timeout: 0.5\n")
    (node,) = plan("replay", bag=str(bag), params_file=str(params))
    run = subprocess.run(
        python_command(node, config_dir()), cwd=tmp_path, env=python_env(), capture_output=True, text=True, timeout=240
    )
    assert run.returncode == 2, run.stdout + run.stderr
    assert "'nobody' not reachable" in run.stderr and "nothing written" in run.stderr, run.stderr
    assert not (tmp_path / "alpha.yaml").exists()


def test_launch_ends_non_zero_when_the_fit_node_fails():
    """The replay launch file's exit handler: a failed fit raises inside `ros2 launch`'s loop (its only way to exit
    non-zero), a successful one shuts down."""
    from servo_ff.bringup import BringupFailed, one_shot_ended

    assert one_shot_ended("servo_fit", 0) == "servo_fit finished"
    with pytest.raises(BringupFailed, match="servo_fit exited with code 2"):
        one_shot_ended("servo_fit", 2)


def test_replay_launch_description_builds():
    """Where launch and launch_ros are installed (skipped otherwise)."""
    pytest.importorskip("launch")
    pytest.importorskip("launch_ros")
    from launch.actions import OpaqueFunction

    spec = importlib.util.spec_from_file_location("replay_launch", ROOT / "launch" / "replay.launch.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert any(isinstance(e, OpaqueFunction) for e in mod.generate_launch_description().entities)


# ---------------------------------------------------------------------------------------------- quality gate
def _good_bag(path: Path) -> Path:
    q, dq = servo(REF, 8.0)
    return servo_node_bag(path, REF, q, dq, 8.0)


@pytest.mark.parametrize(
    "case, flags, words",
    [
        ("still servo", [], ["motion range 0.00", "< min_range 0.05 rad"]),
        # a supply of 1e-12 V is refused before the fit (test_replay_supply.py): a kp wrong by 1e12 is the gate's
        ("kp 1e-12", ["--kp", "1e-12"], ["α̂0=", "outside its admissible range"]),
        ("random goals and positions", [], ["rms residual", "> max_rms 0.05 rad"]),
        ("slow", ["--min-speed", "50"], ["speed (95th percentile of |q̇|)", "< min_speed 50 rad/s"]),
        ("no acceleration", ["--inertia", "--min-accel", "1e4"], ["acceleration", "< min_accel 10000 rad/s²"]),
        ("ill-conditioned", ["--max-condition", "2"], ["condition number 2.", "> max_condition 2"]),
    ],
)
def test_quality_gate_refuses_with_nothing_written(tmp_path, capsys, case, flags, words):
    if case == "still servo":
        bag = _still_bag(tmp_path / "bag")
    elif case == "random goals and positions":
        rng = np.random.default_rng(5)
        q = rng.uniform(-1.0, 1.0, 2000)
        bag = servo_node_bag(tmp_path / "bag", rng.uniform(-1.0, 1.0, 2000), q, np.gradient(q, DT), 8.0)
    else:
        bag = _good_bag(tmp_path / "bag")
    assert fit(bag, tmp_path / "out", *flags) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "nothing written" in err, err
    for w in words:
        assert w in err, (w, err)
    assert not (tmp_path / "out").exists()
