"""Benchmark of the feed-forward node at 500 Hz with 20 joints (urdf/humanoid20.urdf, floating base).

1. End-to-end latency JointState → goal: ``servo_feedforward_node`` runs as its own process (as ``servo-ff up``
   starts it); this process publishes ``/joint_states`` (20 joints) on a 500 Hz clock and a
   desired trajectory, and times each ``servo/commands`` goal against the JointState that triggered it, over
   real DDS on loopback. One state is in flight at a time (a cycle whose previous goal has not come back is
   counted as skipped), so the latency is the response time, not a queue length.
2. Cost of each callback: the node's callbacks called directly in this process, each given what its subscription
   hands it (CDR bytes for /joint_states, imu/data and the trajectory, which the node takes serialized; a message
   for the others), ``--calls`` times each.

   Anchor (issue 25): a minimal rclpy echo pair (``bench/_echo_node.py``: JointState in, Float64MultiArray out, in
   its own process, up at the same time); the driver alternates between the node and the echo every 0.5 s, and
   ``latency_over_echo`` is the median over the block pairs of (node's median latency ÷ echo's).

   Anchor of the callback costs: the echo's own callback (the JointState CDR deserialized by rclpy, its positions
   published as a Float64MultiArray by a real publisher), timed in the same process alternately with the node's
   /joint_states callback (blocks of 100 calls, A B A B …); ``callback_over_echo`` is the median over the block pairs
   of the ratio of their medians.

Prints a table; the last line is ``RESULT latency_over_echo=<ratio> callback_over_echo=<ratio> latency_ms=<median>
callback_us=<median joint_states callback>``.

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


def _median_us(fn, msg, calls: int) -> tuple[float, float]:
    """Median and 99th percentile [µs] of ``calls`` calls of ``fn(msg)``."""
    times = np.empty(calls)
    for k in range(calls):
        t0 = time.perf_counter()
        fn(msg)
        times[k] = time.perf_counter() - t0
    return float(np.median(times) * 1e6), float(np.percentile(times, 99) * 1e6)


def callback_costs(calls: int, block: int = 100) -> tuple[list[tuple[str, float, float]], float, float]:
    """Per callback: name, median and p99 [µs]; then the median over A B A B block pairs of (the /joint_states
    callback's median ÷ the echo callback's) and the echo callback's median [µs]."""
    from rclpy.parameter import Parameter
    from rclpy.serialization import deserialize_message, serialize_message
    from sensor_msgs.msg import BatteryState, Imu, JointState
    from std_msgs.msg import Float64, Float64MultiArray

    from servo_ff.nodes.feedforward_node import FeedForwardNode
    from servo_ff.ros.harness import RosHarness

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
        imu = serialize_message(imu)  # the node takes imu/data and its trajectory serialized (raw=True)
        cases = [
            ("trajectory (50 points × 20 joints)", node._on_trajectory, serialize_message(traj)),
            # what the /joint_states subscription runs per message: the CDR read in place, then the tick
            ("joint_states → goal (feed-forward tick)", node._on_joint_states_cdr, serialize_message(js)),
            ("imu", node._on_imu, imu),
            ("servo_supply", node._on_supply, BatteryState(voltage=14.8)),
            ("support_coefficient", node._on_support, Float64(data=0.5)),
        ]
        out = []
        for name, fn, msg in cases:
            for _ in range(min(50, calls)):
                fn(msg)
            out.append((name, *_median_us(fn, msg, calls)))
        echo_pub = node.create_publisher(Float64MultiArray, "echo/commands", 10)

        def echo(cdr: bytes) -> None:  # bench/_echo_node.py's callback, given the bytes its subscription reads
            echo_pub.publish(Float64MultiArray(data=deserialize_message(cdr, JointState).position))

        tick, js_cdr = cases[1][1], cases[1][2]
        pairs, echo_us = [], []
        for _ in range(max(1, calls // block)):
            node_med = _median_us(tick, js_cdr, block)[0]
            echo_med = _median_us(echo, js_cdr, block)[0]
            pairs.append(node_med / echo_med)
            echo_us.append(echo_med)
        node.destroy_node()
    return out, float(np.median(pairs)), float(np.median(echo_us))


def _stop(proc: subprocess.Popen) -> None:
    proc.send_signal(2)  # SIGINT, as servo-ff up
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=5)


def latency(seconds: float, rate: float, block_s: float = 0.5) -> tuple[dict[str, list[np.ndarray]], dict, dict]:
    """JointState → goal latency of the feed-forward node and of the echo anchor (``bench/_echo_node.py``), both
    processes up at once, the driver alternating between them every ``block_s`` seconds (A B A B …): per arm, the
    latencies [s] of each block; joint states sent and cycles skipped per arm."""
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    from trajectory_msgs.msg import JointTrajectory

    from servo_ff.bringup import python_env
    from servo_ff.dynamics.robot import load_robot
    from servo_ff.ros.harness import RosHarness, wait_for

    joints = list(load_robot(URDF).joint_names)
    ros = RosHarness(salt=62, prefix="servo_ff_bench_")  # exports ROS_DOMAIN_ID for the nodes' processes
    args = ["--ros-args", "-r", "__node:=servo_feedforward", "-r", f"__ns:={ros.ns}"]
    for k, v in ff_params(joints).items():
        lit = "[" + ",".join(map(str, v)) + "]" if isinstance(v, list) else str(v)
        args += ["-p", f"{k}:={lit}"]
    procs = {
        "node": subprocess.Popen(
            [sys.executable, "-m", "servo_ff.nodes.feedforward_node", *args],
            env=python_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        ),
        "echo": subprocess.Popen(
            [sys.executable, str(ROOT / "bench" / "_echo_node.py"), "--ros-args", "-r", f"__ns:={ros.ns}"],
            env=python_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        ),
    }
    node = ros.make_node("bench_driver")
    sent: deque = deque()
    blocks: dict[str, list[list[float]]] = {"node": [], "echo": []}
    n_sent = {"node": 0, "echo": 0}
    missed = {"node": 0, "echo": 0}
    pubs = {
        "node": node.create_publisher(JointState, "joint_states", 10),
        "echo": node.create_publisher(JointState, "echo/joint_states", 10),
    }
    pub_traj = node.create_publisher(JointTrajectory, "feedforward/trajectory", 10)
    state = {"run": False, "arm": "node"}

    def on_goal(arm: str, msg: Float64MultiArray) -> None:
        now = time.perf_counter()
        if sent and sent[0][0] == arm:
            blocks[arm][-1].append(now - sent.popleft()[1])

    node.create_subscription(Float64MultiArray, "servo/commands", lambda m: on_goal("node", m), 10)
    node.create_subscription(Float64MultiArray, "echo/commands", lambda m: on_goal("echo", m), 10)
    js = JointState(name=joints, position=[0.0] * len(joints), velocity=[0.0] * len(joints), effort=[0.0] * len(joints))

    def tick() -> None:
        if not state["run"]:
            return
        arm = state["arm"]
        if sent:  # the previous goal has not arrived within one period: a missed cycle, not queued up
            missed[arm] += 1
            return
        js.header.stamp = node.get_clock().now().to_msg()
        sent.append((arm, time.perf_counter()))
        pubs[arm].publish(js)
        n_sent[arm] += 1

    node.create_timer(1.0 / rate, tick)
    try:
        wait_for(
            lambda: (
                any(p.poll() is not None for p in procs.values())
                or (pub_traj.get_subscription_count() > 0 and all(p.get_subscription_count() for p in pubs.values()))
            ),
            30.0,
            "the feed-forward node and the echo",
        )
        for name, p in procs.items():
            if p.poll() is not None:
                raise RuntimeError(f"{name} did not come up: {p.stderr.read()}")
        pub_traj.publish(desired(joints))
        time.sleep(0.5)
        state["run"] = True
        for _ in range(max(1, int(round(seconds / block_s / 2)))):
            for arm in ("node", "echo"):
                state["arm"] = arm
                blocks[arm].append([])
                time.sleep(block_s)
        state["run"] = False
        time.sleep(0.3)
    finally:
        for p in procs.values():
            _stop(p)
        ros.shutdown()
    return {k: [np.array(b) for b in v] for k, v in blocks.items()}, n_sent, missed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--rate", type=float, default=500.0)
    ap.add_argument("--calls", type=int, default=2000)
    a = ap.parse_args()
    costs, cb_ratio, echo_us = callback_costs(a.calls)
    blocks, sent, missed = latency(a.seconds, a.rate)
    lat = np.concatenate(blocks["node"])
    echo = np.concatenate(blocks["echo"])
    n_sent, n_missed = sent["node"], missed["node"]
    paired = [np.median(n) / np.median(e) for n, e in zip(blocks["node"], blocks["echo"]) if len(n) and len(e)]
    ratio = float(np.median(paired))
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
    print(
        f"| anchor: a minimal rclpy echo pair (JointState → Float64MultiArray, own process) | "
        f"{np.median(echo) * 1e3:.3f} ms | {np.percentile(echo, 99) * 1e3:.3f} ms |"
    )
    for name, med, p99 in costs:
        print(f"| callback: {name} | {med:.1f} µs | {p99:.1f} µs |")
    print(f"| anchor: the echo's callback (JointState CDR → Float64MultiArray published) | {echo_us:.1f} µs | |")
    print()
    print(
        f"cycles {n_sent + n_missed}: joint states sent {n_sent}, goals received {len(lat)}, cycles skipped "
        f"because the previous goal was still outstanding {n_missed} "
        f"({100 * n_missed / max(n_sent + n_missed, 1):.1f} %)"
    )
    print(
        f"latency ÷ echo: {ratio:.2f} (median over {len(paired)} pairs of {a.seconds / len(paired) / 2:.2f} s blocks "
        f"alternating node / echo, ratio of the blocks' medians); echo cycles skipped {missed['echo']} of "
        f"{sent['echo'] + missed['echo']}; absolute ms are this machine's"
    )
    print(
        f"joint_states callback ÷ the echo's callback: {cb_ratio:.2f} (median over {max(1, a.calls // 100)} pairs of "
        "100-call blocks, alternating, same process)"
    )
    tick = next(c for c in costs if c[0].startswith("joint_states"))
    print(
        f"RESULT latency_over_echo={ratio:.4g} callback_over_echo={cb_ratio:.4g} latency_ms={np.median(ms):.4f} "
        f"callback_us={tick[1]:.1f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
