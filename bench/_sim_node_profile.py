"""Where one period of the MuJoCo sim node goes (issue 25): the node of ``bench/_sim_node_rtf.py`` (humanoid20,
1 ms physics, 500 Hz, own /clock, as fast as possible, nothing subscribed) built in this process and spun as
``servo_sim_node`` spins it (``rclpy.spin_once`` of the global SingleThreadedExecutor; as_fast_batch 10 ms), the
stepping gait sent to it once; each part timed with ``time.perf_counter_ns`` around the node's own functions (a
wrapper ≈ 0.1–0.2 µs, so the node runs a few % slower than unprofiled). Prints µs per period of each part (a part
includes the parts listed under it in ``PARTS``), the executor's share (wall time outside every callback) and the
total. Pin it to one core:

    taskset -c 0 python bench/_sim_node_profile.py [SECONDS] [--loop]

``--loop``: no wrappers and no executor: the period loop against the layer (:func:`loop_ratio`).

Not a bench itself (``run_all.py`` skips files starting with ``_``).
"""

from __future__ import annotations

import os
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

SPENT: dict[str, int] = defaultdict(int)  # label → ns
OUTER = [0, 0]  # [depth of the wrappers now running, ns spent in outermost wrappers]


def timed(obj, attr: str, label: str) -> None:
    """Wrap ``obj.attr`` to add its wall time [ns] to ``SPENT[label]`` (and, outermost, to ``OUTER``)."""
    f = getattr(obj, attr)
    clock = time.perf_counter_ns

    def wrapper(*a, **k):
        t0 = clock()
        OUTER[0] += 1
        try:
            return f(*a, **k)
        finally:
            dt = clock() - t0
            SPENT[label] += dt
            OUTER[0] -= 1
            if OUTER[0] == 0:
                OUTER[1] += dt

    setattr(obj, attr, wrapper)


def instrument(node) -> None:
    """Wrap the parts of a period (the timers' callbacks included, as the executor holds them)."""
    from servo_ff.nodes import servo_base

    out, s = node.backend.outputs, node.backend.servos
    parts = [
        (s, "step", "  physics + servo law (servos.step, 2 steps)"),
        (s, "command", "  servos.command"),
        (s, "joint_state", "  servos.joint_state"),
        (node, "_step", " backend step (command, step, read)"),
        (node, "hw_write_goal", "  hw_write_goal"),
        (node, "follow_trajectory", " follow_trajectory"),
        (node._clock_cdr, "publish", "  /clock publish"),
        (node, "_set_time", " _set_time (/clock, stamp)"),
        (s, "imu", "   servos.imu"),
        (out._imu_cdr, "publish", "   imu/data publish"),
        (out.odom, "publish", "   odom (nobody listens: the check)"),
        (out, "publish", "  backend outputs (imu/data, odom, feet)"),
        (servo_base, "all_finite", "  all_finite (joint_states)"),
        (node._js, "publish", "  joint_states publish"),
        (node, "publish_state", " publish_state (every output)"),
        (node, "_tick_owned", "period (_tick_owned)"),
        (node, "_sync_node_clock", "node clock sync (once a batch)"),
    ]
    for obj, attr, label in parts:
        timed(obj, attr, label)
    for t in node.timers:
        name = getattr(t.callback, "__name__", "?")
        timed(t, "callback", f"timer callback {name}" + (" (the batch)" if name == "_tick_paced" else ""))


def loop_ratio(node, rounds: int = 7, periods: int = 3000) -> None:
    """The node's period without the executor (``_tick_owned`` in a loop, the node clock synced every 5 periods as
    a 10 ms batch does) against the layer's (``mujoco_servos.run("full")``), alternating in this process: prints
    µs per period of each and the median of the per-round ratios layer ÷ node."""
    from mujoco_servos import run

    node_us, layer_us = [], []
    for _ in range(rounds):
        t0 = time.perf_counter_ns()
        for k in range(periods):
            node._tick_owned(False)
            if k % 65 == 64:
                node._sync_node_clock()
        node_us.append((time.perf_counter_ns() - t0) / periods / 1e3)
        wall, steps = run("full", periods * 0.002)
        layer_us.append(wall / steps * 2e6)
    import numpy as np

    ratio = np.median(np.array(layer_us) / np.array(node_us))
    print(
        f"loop: node {np.median(node_us):.1f} µs/period, layer {np.median(layer_us):.1f} µs/period, ratio {ratio:.3f}"
    )


def ablation(node, periods: int = 2000, repeats: int = 5) -> None:
    """What each part of the period costs, without wrappers: µs per period of the loop of :func:`loop_ratio` with
    that part replaced by a no-op (or its last result), minus the whole loop's, alternating (median of
    ``repeats``)."""
    import numpy as np

    b = node.backend
    s, out = b.servos, b.outputs
    js, imu = s.joint_state(), s.imu()
    parts = {
        "physics + servo law (servos.step)": (s, "step", lambda *a: None),
        "servos.command (500 Hz)": (s, "command", lambda *a: None),
        "servos.joint_state (readings)": (s, "joint_state", lambda: js),
        "servos.imu (readings)": (s, "imu", lambda: imu),
        "follow_trajectory (spline, limits)": (node, "follow_trajectory", lambda t: None),
        "/clock publish": (node._clock_cdr, "publish", lambda p: None),
        "imu/data publish": (out._imu_cdr, "publish", lambda p: None),
        "joint_states publish": (node._js, "publish", lambda p: None),
        "odom (the subscriber check)": (out.odom, "publish", lambda st: None),
    }

    def per_period() -> float:
        t0 = time.perf_counter_ns()
        for k in range(periods):
            node._tick_owned(False)
            if k % 65 == 64:
                node._sync_node_clock()
        return (time.perf_counter_ns() - t0) / periods / 1e3

    whole = []
    saved: dict[str, list[float]] = {k: [] for k in parts}
    for _ in range(repeats):
        for label, (obj, attr, stub) in parts.items():
            base = per_period()
            whole.append(base)
            setattr(obj, attr, stub)
            try:
                saved[label].append(base - per_period())
            finally:
                delattr(obj, attr) if attr in vars(obj) and not isinstance(obj, type) else None
    print(f"| the period (no executor) | {np.median(whole):.1f} |")
    for label, v in saved.items():
        print(f"| {label} | {np.median(v):.1f} |")


def main() -> int:
    import rclpy
    from _sim_node_rtf import gait_message, node_command
    from trajectory_msgs.msg import JointTrajectory

    from servo_ff.nodes.sim_node import sim_node_factory

    loop = "--loop" in sys.argv
    loop = loop or "--ablate" in sys.argv
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    seconds = float(args[0]) if args else 5.0
    rclpy.init(args=node_command(f"/prof{os.getpid()}")[3:])
    node = sim_node_factory()
    if not loop:
        instrument(node)
    pub = node.create_publisher(JointTrajectory, "servo/joint_trajectory", 10)
    t_end = time.monotonic() + 30.0
    while not node.active and time.monotonic() < t_end:
        rclpy.spin_once(node, timeout_sec=0.05)
    pub.publish(gait_message(0.5))
    t_end = time.monotonic() + 1.0
    while time.monotonic() < t_end:  # warm-up
        rclpy.spin_once(node, timeout_sec=0.05)
    if loop:
        ablation(node) if "--ablate" in sys.argv else loop_ratio(node)
        node.destroy_node()
        rclpy.shutdown()
        return 0
    SPENT.clear()
    OUTER[1] = 0
    n0, t0 = node.ticks, time.perf_counter_ns()
    t_end = time.monotonic() + seconds
    spins = 0
    while time.monotonic() < t_end:
        rclpy.spin_once(node, timeout_sec=0.05)
        spins += 1
    wall, periods = time.perf_counter_ns() - t0, node.ticks - n0
    us = 1e-3 / periods
    print(f"periods {periods}, executor passes {spins}, {wall / 1e9:.2f} s: rtf {periods * 0.002 / (wall / 1e9):.2f}")
    print("| part | µs / period |\n|---|---|")
    for label, ns in SPENT.items():
        print(f"| {label.replace(' ', '&nbsp;', len(label) - len(label.lstrip()))} | {ns * us:.1f} |")
    print(f"| executor (wall outside every callback) | {(wall - OUTER[1]) * us:.1f} |")
    print(f"| **total** (wall) | **{wall * us:.1f}** |")
    node.destroy_node()
    rclpy.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
