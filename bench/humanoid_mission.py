"""The humanoid mission over DDS (issue 14): Schwarz & Behnke §5.2's (a)/(b)/(c) closed over ROS 2, the 15 mm obstacle
of their Fig. 6, and the MuJoCo sim node's real-time factor.

Run: python bench/humanoid_mission.py [--steps 40] [--obstacle-steps 6] [--stride 0.03]
     [--plot docs/img/mission_knee.png]
Mission: ``servo_ff.bringup.mission`` (walker → feed-forward → MuJoCo sim node with quantisation 4096 and one
period of bus latency, 125 Hz, lockstep on sim time; all nodes in one process, real DDS between them).
Real-time factor: ``servo_sim_node`` (backend mujoco, humanoid, 20 servos, 1 ms physics, publishing
joint_states + imu/data + foot_forces + support_coefficient + /clock at 500 Hz, as fast as possible) in its own
process pinned to one core, following the stepping gait sent as one JointTrajectory: the node's own measured
real-time factor (its /diagnostics), then simulated over wall seconds of its /clock taken by a subscriber.
Same-run anchor (issue 25, ``bench/_sim_node_rtf.py``): the node's real-time factor ÷ our MuJoCo layer's with the
node's options and no ROS, rounds alternating on the same core: ``rtf_node_over_layer``.
Last line: RESULT rtf_node_over_layer=… energy_reduction=… rms_ratio=… knee_reduction=… tick_us=… obstacle_up=…
           obstacle_up_<h>mm=… walk_flat_up=… rtf=… rtf_clock_subscriber=…
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from _sim_node_rtf import SimNodeProcess, describe, node_over_layer  # noqa: E402

from servo_ff.bringup.mission import CONTROLLERS, format_table, plot_mission, run_mission  # noqa: E402


def real_time_factor(seconds: float = 10.0) -> tuple[float, float, float, tuple]:
    """(real-time factor alone, with a /clock subscriber, sim seconds, (rtf_node_over_layer, node, layer)) of a
    servo_sim_node process (backend mujoco) pinned to one core, running the gait (``bench/_sim_node_rtf.py``).
    First the same-run ratio to our MuJoCo layer without ROS (rounds alternating, the node stopped while the layer
    runs). Alone: the node's own ``real_time_factor_measured`` in its /diagnostics (one message per simulated
    second: the probe, on the other core, stays idle). Then with a best-effort /clock subscriber in the probe, as
    every use_sim_time node has: the probe then takes every /clock (≈ 2500 per wall second), which keeps the other
    core busy; on this VM the two cores share a physical one, and that alone slows a tick by ≈ 1.5× (measured with a
    plain busy loop on the other core)."""
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from rosgraph_msgs.msg import Clock

    from servo_ff.ros.harness import wait_for

    sim = SimNodeProcess(salt=91)
    try:
        time.sleep(2.0)
        ratio = node_over_layer(sim)
        n0 = len(sim.diag)
        time.sleep(seconds)
        alone = [r for _, _, r in sim.diag[n0 + 1 :]]  # the first interval may straddle the start of the window
        clocks: list[tuple[float, float]] = []
        sim.node.create_subscription(  # as every use_sim_time node subscribes (rclpy's TimeSource: best effort)
            Clock,
            "/clock",
            lambda m: clocks.append((time.monotonic(), m.clock.sec + m.clock.nanosec * 1e-9)),
            QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT),
        )
        wait_for(lambda: clocks, 10.0, "/clock at the probe")
        time.sleep(1.0)
        n0 = len(clocks)
        time.sleep(seconds)
        (w0, s0), (w1, s1) = clocks[n0], clocks[-1]
        return sum(alone) / len(alone), (s1 - s0) / (w1 - w0), s1, ratio
    finally:
        sim.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--obstacle-steps", type=int, default=6)
    ap.add_argument("--obstacle", type=float, nargs="+", default=[0.015, 0.005], help="box heights [m]")
    ap.add_argument("--stride", type=float, default=0.03, help="forward step of the obstacle walk [m]")
    ap.add_argument("--plot", default=str(ROOT / "docs" / "img" / "mission_knee.png"))
    ap.add_argument("--skip-mission", action="store_true")
    a = ap.parse_args()

    rtf, rtf_clock, sim_s, (over_layer, node_rtf, layer_rtf, pub_rtf) = real_time_factor()
    print(
        "## MuJoCo sim node, humanoid: 20 servos, 1 ms physics, publishing at 500 Hz, as fast as possible (one "
        "process, pinned to one core)"
    )
    print("| probe on the other core | real-time factor |\n|---|---|")
    print(f"| /diagnostics only (the node's real_time_factor_measured; the other core idle) | {rtf:.2f} |")
    print(f"| + a /clock subscriber taking every message (the other core busy) | {rtf_clock:.2f} |")
    print(f"({sim_s:.1f} s simulated)")
    print(describe(over_layer, node_rtf, layer_rtf, pub_rtf) + "\n")
    if a.skip_mission:
        print(f"RESULT rtf_node_over_layer={over_layer:.3g} rtf={rtf:.2f} rtf_clock_subscriber={rtf_clock:.2f}")
        return 0

    print(f"## {a.steps} steps in place over DDS (quantisation 4096, latency 1 period, 125 Hz)")
    res = [run_mission(c, a.steps, log=lambda s: print(s, file=sys.stderr)) for c in CONTROLLERS]
    print(format_table(res))
    ra, rc = res[0], res[2]
    k = ra.knee()
    e_red = 1 - rc.energy.sum() / ra.energy.sum()
    knee_red = 1 - rc.energy[k] / ra.energy[k]
    print(
        f"energy (c) vs (a): all joints {ra.energy.sum():.0f} J → {rc.energy.sum():.0f} J "
        f"({-100 * e_red:+.1f}%); left knee {ra.energy[k]:.0f} J → {rc.energy[k]:.0f} J "
        f"({-100 * knee_red:+.1f}%; 002: 189 J → 140 J, −26%); RMS (c)/(a) {rc.rms() / ra.rms():.3f}"
        + ("" if not any(r.fell for r in (ra, rc)) else " (not comparable: a run fell before the end)")
    )
    print(
        f"feed-forward tick (20 joints, in the node, over DDS): median {rc.tick_median_us():.0f} µs, p95 "
        f"{sorted(rc.tick_us)[int(0.95 * len(rc.tick_us))]:.0f} µs"
    )
    print("plot:", os.path.relpath(plot_mission(res, a.plot), ROOT))

    heights = sorted(a.obstacle, reverse=True)
    print(
        f"\n## obstacle: a box where the first swing foot (right) lands, {a.obstacle_steps} steps walking forward "
        f"({100 * a.stride:.0f} cm per step, quasi-static)"
    )
    flat = [
        run_mission(c, a.obstacle_steps, stride=a.stride, log=lambda s: print(s, file=sys.stderr)) for c in CONTROLLERS
    ]
    runs = {
        h: [
            run_mission(c, a.obstacle_steps, obstacle=h, stride=a.stride, log=lambda s: print(s, file=sys.stderr))
            for c in CONTROLLERS
        ]
        for h in heights
    }

    def stayed(r) -> str:
        return "no, fell at %.1f s" % r.fell_at if r.fell else "yes"

    print(
        "| controller | flat: stayed up | walked [cm] | " + " | ".join(f"{1000 * h:.0f} mm box" for h in heights) + " |"
    )
    print("|---|---|---|" + "---|" * len(heights))
    for i, f in enumerate(flat):
        print(
            f"| {f.label} | {stayed(f)} | {100 * f.travel:.1f} | "
            + " | ".join(stayed(runs[h][i]) for h in heights)
            + " |"
        )

    def up_set(rs) -> str:
        return "".join("abc"[i] for i, r in enumerate(rs) if not r.fell) or "none"

    up, up_low, flat_up = up_set(runs[heights[0]]), up_set(runs[heights[-1]]), up_set(flat)
    print(
        f"RESULT rtf_node_over_layer={over_layer:.3g} "
        f"energy_reduction={e_red:.4f} rms_ratio={rc.rms() / ra.rms():.4f} knee_reduction={knee_red:.4f} "
        f"tick_us={rc.tick_median_us():.0f} falls={''.join('abc'[i] for i, r in enumerate(res) if r.fell) or 'none'} "
        f"obstacle_up={up} obstacle_up_{1000 * heights[-1]:.0f}mm={up_low} walk_flat_up={flat_up} rtf={rtf:.2f} "
        f"rtf_clock_subscriber={rtf_clock:.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
