"""MuJoCo servo layer on the 20-joint humanoid: real-time factor on one core, without ROS.

Run: python bench/mujoco_servos.py [--seconds 10]
urdf/humanoid20.urdf on a floating base with config/servos_humanoid.yaml (MX-106 M4 legs, MX-64 M4 arms and
neck), 1 ms physics, the stepping gait's goals at 125 Hz (k_P = 53.125). Rows: MuJoCo alone (mj_step, no
servos); the servo layer (servo law + friction budget every step); and the layer as the sim node will use it —
encoder quantisation (4096), one control period of latency, sensor noise, and every 2 ms (500 Hz) the joint
states, the IMU and the foot forces / support coefficient read. The process is pinned to one CPU; each row is
the median of 3 runs. Last line: RESULT rtf=<full row> rtf_layer=<layer row> rtf_mujoco=<mj_step row>
step_us=<full row, µs per physics step>; the ROS node's target is the ratio rtf_node_over_layer ≥ 0.7 (below), the
absolute rtf ≥ 5 beside it.

Same-run anchor (issue 25, ``bench/_sim_node_rtf.py``): the sim node over DDS (its own process, same options,
pinned to the same core) against the "full" row, rounds alternating (the node stopped while the layer runs):
``rtf_node_over_layer`` first in the RESULT line (``--no-node`` skips it). Nothing subscribes to the node's
topics but /diagnostics (as in the missions for ``foot_forces`` and ``support_coefficient``: the node then reads no
contacts, which the layer row does); ``--listen foot_forces support_coefficient …`` subscribes a probe off the
node's core to those topics: ``rtf_node_over_layer`` then includes DDS delivering them.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

import mujoco  # noqa: E402
import numpy as np  # noqa: E402

from servo_ff.dynamics.gait import stepping_in_place  # noqa: E402
from servo_ff.dynamics.mujoco_humanoid import KP_HIGH  # noqa: E402
from servo_ff.dynamics.mujoco_model import place_on_ground  # noqa: E402
from servo_ff.dynamics.mujoco_servos import MujocoServos, ServoOptions  # noqa: E402

URDF, YAML = ROOT / "urdf" / "humanoid20.urdf", ROOT / "config" / "servos_humanoid.yaml"
CONTROL_DT, PUBLISH_EVERY = 0.008, 2  # 125 Hz goals; readings every 2 physics steps (500 Hz)


def make(options: ServoOptions) -> tuple[MujocoServos, np.ndarray]:
    servos = MujocoServos.from_description(URDF, YAML, base="floating", options=options)
    servos.set_kp(KP_HIGH)
    traj = stepping_in_place(list(servos.joint_names), 4, CONTROL_DT)
    place_on_ground(servos.sim, servos.qadr, traj.q[0])
    servos.set_initial_state()
    servos.reset()
    return servos, traj.q


def run(kind: str, seconds: float) -> tuple[float, int]:
    """Wall time [s] of ``seconds`` of simulated time; number of physics steps."""
    opts = (
        ServoOptions(
            counts_per_rev=4096,
            latency=1,
            position_noise=2e-4,
            velocity_noise=1e-2,
            gyro_noise=1e-3,
            accel_noise=1e-2,
            seed=1,
        )
        if kind == "full"
        else ServoOptions()
    )
    servos, goals = make(opts)
    m, d = servos.model, servos.data
    ratio = int(round(CONTROL_DT / m.opt.timestep))
    ticks = int(round(seconds / CONTROL_DT))
    servos.step(1)  # numba compile / cache load outside the timing
    servos.reset()
    t0 = time.perf_counter()
    for k in range(ticks):
        g = goals[min(k, len(goals) - 1)]
        if kind == "mujoco":
            for _ in range(ratio):
                mujoco.mj_step(m, d)
            continue
        servos.command(g)
        if kind == "layer":
            servos.step(ratio)
            continue
        for i in range(ratio):
            servos.step(1)
            if i % PUBLISH_EVERY == PUBLISH_EVERY - 1:
                servos.joint_state()
                servos.imu()
                servos.support_coefficient()
    return time.perf_counter() - t0, ticks * ratio


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=10.0, help="simulated seconds per run")
    ap.add_argument("--no-node", action="store_true", help="skip the sim node over DDS (needs ROS 2)")
    ap.add_argument("--listen", nargs="*", default=[], help="the node's topics a probe subscribes to (default none)")
    args = ap.parse_args()
    over = ""
    if not args.no_node:
        from _sim_node_rtf import SimNodeProcess, describe, node_over_layer

        sim = SimNodeProcess(salt=92, listen=tuple(args.listen))
        try:
            time.sleep(2.0)
            ratio, node, layer, publish = node_over_layer(sim)
        finally:
            sim.close()
        print("## sim node over DDS vs this layer with the node's options, same core, rounds alternating")
        print(describe(ratio, node, layer, publish))
        print(f"  subscribed: {sim.received or 'nothing but /diagnostics'}\n")
        over = f"rtf_node_over_layer={ratio:.3g} "
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    rows = {
        "mujoco": "MuJoCo alone (mj_step, no servo layer)",
        "layer": "servo layer: law + friction budget every step, goals 125 Hz",
        "full": "+ quantisation, latency 1, noise, readings at 500 Hz (joint states, IMU, feet)",
    }
    print(f"## humanoid20, 20 servos, 1 ms physics, {args.seconds:g} s simulated per run, one CPU, median of 3")
    print("| configuration | µs / physics step | real-time factor |\n|---|---|---|")
    rtf = {}
    for kind, label in rows.items():
        walls = []
        for _ in range(3):
            wall, steps = run(kind, args.seconds)
            walls.append(wall / steps)
        per = float(np.median(walls))
        rtf[kind] = 1e-3 / per
        print(f"| {label} | {per * 1e6:.1f} | {rtf[kind]:.1f} |")
    print(
        f"RESULT {over}rtf={rtf['full']:.1f} rtf_layer={rtf['layer']:.1f} rtf_mujoco={rtf['mujoco']:.1f} "
        f"step_us={1e3 / rtf['full']:.1f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
