"""Benchmark of the feed-forward node at 500 Hz with 20 joints (urdf/humanoid20.urdf, floating base).

1. End-to-end latency JointState → goal: ``servo_feedforward_node`` runs as its own process (as ``servo-ff up``
   starts it); this process publishes ``/joint_states`` (20 joints) on a 500 Hz clock and a
   desired trajectory, and times each ``servo/commands`` goal against the JointState that triggered it, over
   real DDS on loopback. One state is in flight at a time (a cycle whose previous goal has not come back is
   counted as skipped), so the latency is the response time, not a queue length.
2. Cost of each callback: the node's callbacks called directly in this process (message already
   deserialised), ``--calls`` times each.

Prints a table; the last line is ``RESULT latency_ms=<median> callback_us=<median joint_states callback>``.

    /work/venv/bin/python bench/nodes.py [--seconds 4] [--rate 500] [--calls 2000]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections import deque
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

URDF = ROOT / "urdf" / "humanoid20.urdf"


def desired(joints, n_points=50, horizon=10.0):
    from builtin_interfaces.msg import Duration
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    t = np.linspace(0.0, horizon, n_points)
    msg = JointTrajectory(joint_names=list(joints))
    for ti in t:
        q = 0.2 * np.sin(2 * np.pi * 0.5 * ti + np.arange(len(joints)))
        dq = 0.2 * np.pi * np.cos(2 * np.pi * 0.5 * ti + np.arange(len(joints)))
        msg.points.append(
            JointTrajectoryPoint(
                positions=q.tolist(),
                velocities=dq.tolist(),
                accelerations=(-(np.pi**2) * q).tolist(),
                time_from_start=Duration(sec=int(ti), nanosec=int((ti % 1) * 1e9)),
            )
        )
    return msg


def ff_params(joints):
    return {
        "urdf_path": str(URDF),
        "mode": "floating",
        "kp": [8.0],
        "servo": "mx106",
        "model": "m4",
        "left_foot": "l_sole",
        "right_foot": "r_sole",
    }


def callback_costs(calls: int) -> list[tuple[str, float, float]]:
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import BatteryState, Imu, JointState
    from std_msgs.msg import Float64

    from servo_ff.nodes.feedforward_node import FeedForwardNode
    from servo_ff.nodes.harness import RosHarness

    with RosHarness(salt=61, prefix="servo_ff_bench_") as ros:  # the node is called directly, not spun
        node = FeedForwardNode(
            "bench_ff",
            parameter_overrides=[Parameter(k, value=v) for k, v in ff_params(None).items()],
            **ros.node_kwargs(),
        )
        joints = list(node.robot.joint_names)
        traj = desired(joints)
        js = JointState(
            name=joints, position=[0.0] * len(joints), velocity=[0.0] * len(joints), effort=[0.0] * len(joints)
        )
        imu = Imu()
        imu.orientation.w = 1.0
        cases = [
            ("trajectory (50 points × 20 joints)", node._on_trajectory, traj),
            ("joint_states → goal (feed-forward tick)", node._on_joint_states, js),
            ("imu", node._on_imu, imu),
            ("servo_supply", node._on_supply, BatteryState(voltage=14.8)),
            ("support_coefficient", node._on_support, Float64(data=0.5)),
        ]
        out = []
        for name, fn, msg in cases:
            for _ in range(min(50, calls)):
                fn(msg)
            times = np.empty(calls)
            for k in range(calls):
                t0 = time.perf_counter()
                fn(msg)
                times[k] = time.perf_counter() - t0
            out.append((name, float(np.median(times) * 1e6), float(np.percentile(times, 99) * 1e6)))
        node.destroy_node()
    return out


def latency(seconds: float, rate: float) -> tuple[np.ndarray, int, int]:
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    from trajectory_msgs.msg import JointTrajectory

    from servo_ff.dynamics.robot import load_robot
    from servo_ff.nodes.bringup import python_env
    from servo_ff.nodes.harness import RosHarness, wait_for

    joints = list(load_robot(URDF).joint_names)
    ros = RosHarness(salt=62, prefix="servo_ff_bench_")  # exports ROS_DOMAIN_ID for the node's process
    args = ["--ros-args", "-r", "__node:=servo_feedforward", "-r", f"__ns:={ros.ns}"]
    for k, v in ff_params(joints).items():
        lit = "[" + ",".join(map(str, v)) + "]" if isinstance(v, list) else str(v)
        args += ["-p", f"{k}:={lit}"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "servo_ff.nodes.feedforward_node", *args],
        env=python_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    node = ros.make_node("bench_driver")
    sent: deque = deque()
    lat: list[float] = []
    n_sent = {"n": 0}
    missed = {"n": 0}
    pub_js = node.create_publisher(JointState, "joint_states", 10)
    pub_traj = node.create_publisher(JointTrajectory, "feedforward/trajectory", 10)

    def on_goal(msg: Float64MultiArray) -> None:
        now = time.perf_counter()
        if sent:
            lat.append(now - sent.popleft())

    node.create_subscription(Float64MultiArray, "servo/commands", on_goal, 10)
    js = JointState(name=joints, position=[0.0] * len(joints), velocity=[0.0] * len(joints), effort=[0.0] * len(joints))
    state = {"run": False}

    def tick() -> None:
        if not state["run"]:
            return
        if sent:  # the previous goal has not arrived within one period: a missed cycle, not queued up
            missed["n"] += 1
            return
        js.header.stamp = node.get_clock().now().to_msg()
        sent.append(time.perf_counter())
        pub_js.publish(js)
        n_sent["n"] += 1

    node.create_timer(1.0 / rate, tick)
    try:
        wait_for(
            lambda: (
                proc.poll() is not None
                or (pub_traj.get_subscription_count() > 0 and pub_js.get_subscription_count() > 0)
            ),
            30.0,
            "the feed-forward node",
        )
        if proc.poll() is not None:
            raise RuntimeError(f"feed-forward node did not come up: {proc.stderr.read()}")
        pub_traj.publish(desired(joints))
        time.sleep(0.5)
        state["run"] = True
        time.sleep(seconds)
        state["run"] = False
        time.sleep(0.3)
    finally:
        proc.send_signal(2)  # SIGINT, as servo-ff up
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
        ros.shutdown()
    return np.array(lat), n_sent["n"], missed["n"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--rate", type=float, default=500.0)
    ap.add_argument("--calls", type=int, default=2000)
    a = ap.parse_args()
    costs = callback_costs(a.calls)
    lat, n_sent, n_missed = latency(a.seconds, a.rate)
    ms = lat * 1e3
    print(
        f"servo_feedforward_node, {URDF.name} (20 joints, floating base), {a.rate:g} Hz, {a.seconds:g} s, "
        f"{os.cpu_count()} CPU(s)"
    )
    print()
    print("| measurement | median | p99 |")
    print("|---|---|---|")
    print(
        f"| JointState → goal latency (separate process, DDS loopback) | {np.median(ms):.3f} ms | "
        f"{np.percentile(ms, 99):.3f} ms |"
    )
    for name, med, p99 in costs:
        print(f"| callback: {name} | {med:.1f} µs | {p99:.1f} µs |")
    print()
    print(
        f"cycles {n_sent + n_missed}: joint states sent {n_sent}, goals received {len(lat)}, cycles skipped "
        f"because the previous goal was still outstanding {n_missed} "
        f"({100 * n_missed / max(n_sent + n_missed, 1):.1f} %)"
    )
    tick = next(c for c in costs if c[0].startswith("joint_states"))
    print(f"RESULT latency_ms={np.median(ms):.4f} callback_us={tick[1]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
