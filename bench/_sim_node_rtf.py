"""The MuJoCo sim node's real-time factor over DDS against our MuJoCo servo layer without ROS, in the same run
(issue 25): ``rtf_node_over_layer``. Shared by ``bench/mujoco_servos.py`` and ``bench/humanoid_mission.py``.

The node (``servo_sim_node``, backend mujoco, humanoid20, 1 ms physics, joint_states + imu/data + foot_forces +
support_coefficient + /clock at 500 Hz, as fast as possible) runs in its own process pinned to core 0, following the
stepping gait. Rounds alternate (A B A B …): the node runs for a window and its rate is simulated seconds over wall
seconds between the first and last of its /diagnostics (``sim_time_s``) received in the window, by a probe on the
other core; then the node is stopped (SIGSTOP) and a fresh process pinned to core 0 runs the layer with the node's
options (``mujoco_servos.run("full")``: quantisation 4096, latency 1, noise, readings at 500 Hz), and another a bare
rclpy publisher of one period's messages as fast as possible (``_rclpy_publish.py``); then the node continues
(SIGCONT). The ratio is the median of the per-round ratios.

Not a bench itself (``run_all.py`` skips files starting with ``_``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
NAMES = [
    "neck_yaw",
    "head_pitch",
    "l_shoulder_pitch",
    "l_shoulder_roll",
    "l_elbow",
    "l_hip_yaw",
    "l_hip_roll",
    "l_hip_pitch",
    "l_knee",
    "l_ankle_pitch",
    "l_ankle_roll",
    "r_shoulder_pitch",
    "r_shoulder_roll",
    "r_elbow",
    "r_hip_yaw",
    "r_hip_roll",
    "r_hip_pitch",
    "r_knee",
    "r_ankle_pitch",
    "r_ankle_roll",
]


def node_command(ns: str) -> list[str]:
    """The sim node's command line (the humanoid, as the mission runs it, as fast as possible)."""
    params = {
        "backend": "mujoco",
        "urdf_path": "urdf/humanoid20.urdf",
        "servo_config": "config/servos_humanoid.yaml",
        "floating_base": "true",
        "rate_hz": "500.0",
        "physics_dt": "0.001",
        "publish_clock": "true",
        "real_time_factor": "0.0",
        "counts_per_rev": "4096",
        "latency": "1",
        "position_min": "[-2.8]",
        "position_max": "[2.8]",
    }
    cmd = [sys.executable, "-m", "servo_ff.nodes.sim_node", "--ros-args", "-r", f"__ns:={ns}"]
    for k, v in params.items():
        cmd += ["-p", f"{k}:={v}"]
    return cmd


def has_taskset() -> bool:
    from shutil import which

    return which("taskset") is not None and hasattr(os, "sched_getaffinity") and 0 in os.sched_getaffinity(0)


def gait_message(seconds_ahead: float = 2.0):
    """The stepping gait (40 steps) as one JointTrajectory starting ``seconds_ahead`` after receipt."""
    from builtin_interfaces.msg import Duration
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from servo_ff.dynamics.gait import stepping_in_place

    g = stepping_in_place(NAMES, 40, 0.02)
    msg = JointTrajectory(joint_names=NAMES)
    for t, q, dq, ddq in zip(g.t, g.q, g.dq, g.ddq):
        ns = int(round((t + seconds_ahead) * 1e9))
        msg.points.append(
            JointTrajectoryPoint(
                positions=q.tolist(),
                velocities=dq.tolist(),
                accelerations=ddq.tolist(),
                time_from_start=Duration(sec=ns // 10**9, nanosec=ns % 10**9),
            )
        )
    return msg


class SimNodeProcess:
    """The sim node in its own process (pinned to core 0 when ``taskset`` is there; this process then moves off
    core 0), a probe node recording its /diagnostics as (wall time received, sim time, measured rtf) and subscribed
    (bytes, counted in ``received``) to the node's topics named in ``listen`` (none by default)."""

    def __init__(self, salt: int = 91, listen: tuple[str, ...] = ()):
        from diagnostic_msgs.msg import DiagnosticArray
        from sensor_msgs.msg import Imu, JointState
        from std_msgs.msg import Float64, Float64MultiArray
        from trajectory_msgs.msg import JointTrajectory

        from servo_ff.bringup import python_env
        from servo_ff.ros.harness import RosHarness, wait_for

        self.pinned, self.affinity = has_taskset(), os.sched_getaffinity(0)
        if self.pinned and len(self.affinity) > 1:  # the probe off the sim's core: before rclpy and DDS start
            os.sched_setaffinity(0, self.affinity - {0})  # their threads, which inherit it
        self.ros = RosHarness(salt=salt)
        env = python_env()
        env["ROS_DOMAIN_ID"] = str(self.ros.domain)
        cmd = node_command(self.ros.ns)
        self.proc = subprocess.Popen(
            ["taskset", "-c", "0", *cmd] if self.pinned else cmd,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=ROOT,
        )
        self.node = self.ros.make_node("rtf_probe")
        self.diag: list[tuple[float, float, float]] = []

        def on_diag(msg) -> None:
            now = time.monotonic()
            for status in msg.status:
                kv = {v.key: v.value for v in status.values}
                if "real_time_factor_measured" in kv:
                    self.diag.append((now, float(kv["sim_time_s"]), float(kv["real_time_factor_measured"])))

        self.node.create_subscription(DiagnosticArray, "/diagnostics", on_diag, 100)
        self.received = dict.fromkeys(listen, 0)
        for topic in listen:
            typ = {"joint_states": JointState, "imu/data": Imu, "foot_forces": Float64MultiArray}.get(topic, Float64)
            self.node.create_subscription(typ, topic, lambda _, t=topic: self._count(t), 100, raw=True)
        pub = self.node.create_publisher(JointTrajectory, "servo/joint_trajectory", 10)
        wait_for(lambda: self.diag and pub.get_subscription_count(), 60.0, "the sim node process")
        pub.publish(gait_message())
        self.pub = pub

    def _count(self, topic: str) -> None:
        self.received[topic] += 1

    def window_rtf(self, seconds: float) -> float:
        """Simulated seconds per wall second over the diagnostics received in the next ``seconds``."""
        n0 = len(self.diag)
        time.sleep(seconds)
        got = self.diag[n0:]
        if len(got) < 2:
            return float("nan")
        return (got[-1][1] - got[0][1]) / (got[-1][0] - got[0][0])

    def close(self) -> None:
        os.sched_setaffinity(0, self.affinity)
        self.proc.send_signal(signal.SIGCONT)
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=5)
        self.ros.shutdown()


def layer_rtf(seconds: float) -> float:
    """Real-time factor of our MuJoCo layer with the node's options (no ROS), in a fresh process on core 0 (not in
    this one: the probe's executor thread would share its GIL)."""
    from servo_ff.bringup import python_env

    code = (
        "import sys; sys.path.insert(0, 'bench'); from mujoco_servos import run; "
        f"run('full', 0.05); w, n = run('full', {seconds}); print(f'rtf={{n * 1e-3 / w}}')"
    )
    cmd = [sys.executable, "-c", code]
    out = subprocess.run(
        ["taskset", "-c", "0", *cmd] if has_taskset() else cmd,
        env=python_env(),
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    line = [x for x in out.stdout.splitlines() if x.startswith("rtf=")]
    if not line:
        raise RuntimeError(f"the layer run failed: {out.stderr[-2000:]}")
    return float(line[-1].split("=")[1])


def publish_rtf(sim: SimNodeProcess, seconds: float = 2.0) -> float:
    """Real-time factor a bare rclpy publisher of one sim period's messages reaches on core 0, as fast as possible
    (``bench/_rclpy_publish.py``, its own process, a namespace of its own): the ceiling rclpy sets."""
    from servo_ff.bringup import python_env

    env = python_env()
    env["ROS_DOMAIN_ID"] = str(sim.ros.domain)
    cmd = [sys.executable, str(ROOT / "bench" / "_rclpy_publish.py"), str(seconds), "--ros-args"]
    cmd += ["-r", f"__ns:={sim.ros.ns}_ceiling"]
    out = subprocess.run(["taskset", "-c", "0", *cmd] if sim.pinned else cmd, env=env, capture_output=True, text=True)
    line = [x for x in out.stdout.splitlines() if x.startswith("periods_per_s=")]
    return float(line[-1].split("=")[1]) * 0.002 if line else float("nan")


def node_over_layer(sim: SimNodeProcess, rounds: int = 8, window_s: float = 2.0, layer_sim_s: float = 3.0):
    """(median of the per-round ratios node ÷ layer, node rtf, layer rtf, rclpy publish rtf per round); ``sim`` has
    run the gait for a while (the first window starts after a settle of 1 s). The node is stopped while the layer
    and the bare publisher run on its core."""
    time.sleep(1.0)
    node, layer, publish = np.empty(rounds), np.empty(rounds), np.empty(rounds)
    for r in range(rounds):
        node[r] = sim.window_rtf(window_s)
        sim.proc.send_signal(signal.SIGSTOP)
        try:
            layer[r] = layer_rtf(layer_sim_s)
            publish[r] = publish_rtf(sim)
        finally:
            sim.proc.send_signal(signal.SIGCONT)
        time.sleep(0.5)  # diagnostics in flight across the stop are not in the next window
    return float(np.nanmedian(node / layer)), node, layer, publish


def describe(ratio: float, node: np.ndarray, layer: np.ndarray, publish: np.ndarray) -> str:
    ideal = 1.0 / (1.0 / layer + 1.0 / publish)  # the layer's and rclpy's time per simulated second, added
    return (
        f"sim node over DDS: rtf {np.nanmedian(node):.2f} [{np.nanmin(node):.2f}–{np.nanmax(node):.2f}]; our MuJoCo "
        f"layer with the node's options, no ROS, same core: rtf {np.median(layer):.2f} "
        f"[{layer.min():.2f}–{layer.max():.2f}]; a bare rclpy publisher of one period's five messages, no executor: "
        f"rtf {np.nanmedian(publish):.2f}; {len(node)} rounds alternating\n"
        f"  rtf_node_over_layer = {ratio:.3f} (median of the per-round ratios; absolute rtf are this machine's)\n"
        f"  layer + rclpy publishing alone would give rtf {np.nanmedian(ideal):.2f}: "
        f"rtf_node_over_layer_plus_publish = {np.nanmedian(node / ideal):.3f}"
    )
