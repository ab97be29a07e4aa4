"""Schwarz & Behnke's 40-step energy experiment on the NimbRo-OP over DDS, with its authors' CPG gait and with placo,
beside the ROS-free figures of the same runs (issue 21 item 5).

Run: python bench/nimbro_dds_energy.py [--no-b] [--steps 40] [--vx 0.05]

DDS: the OP3 mission's graph (``bringup.op3_mission.run_op3``: MuJoCo sim node, feed-forward node and walk node in
one harness, lockstep, the sim's per-joint energy meter read after each period) built for the NimbRo-OP from its
bring-up YAML (``bringup.robot_graph.bringup_graph("sim_nimbro_op", gait=…)``: config/sim_nimbro_op.yaml's nodes,
α̂ from its servo file as ``servo-ff up`` gives it), ``gait`` ``cpg`` (the walk node's ``nimbro_cpg``) and
``placo``; cmd_vel ``vx`` from before the walk starts. Controllers: (a) k_P 53.125 (bench/nimbro_obstacle.py's
KP_HIGH), (b) 0.35 × 53.125 plain P (not with ``--no-b``), (c) (b) + feed-forward.
ROS-free: ``simulate_walk`` of the same gait, speed and controllers (bench/nimbro_obstacle.py's ``run_energy``; the
CPG via ``ready=cpg_plan(...)`` as bench/nimbro_cpg_obstacle.py). Both sides: ∫U·I dt per joint over the whole steps
all controllers of the DDS side walked (``bringup.op3_energy``; the ROS-free CPG's stop adds steps after the
commanded ones: its figure over all of them is printed too), knees = left/right_knee_pitch; reductions
1 − E(c)/E(a). The two sides differ in the start (DDS: 0.5 s then a 2 s approach from the sim's start pose to the
stance; ROS-free: 0.48 s hold in the stance) and in the DDS graph's timing (stamped goals, one period of latency
each way through the nodes); the step windows are the same (test_robot_graph.py). Each ROS-free walk is run a second
time with ``desired="walk_node"`` (q̇, q̈ as servo_walk_node's five-point differences, held at the URDF velocity limit,
and the feed-forward node's quintic between its points), its (c) against (a) last in the RESULT line.

Last line: RESULT dds_cpg_knee_energy40_reduction=… dds_cpg_energy40_reduction=… dds_placo_knee_energy40_reduction=…
dds_placo_energy40_reduction=… rosfree_cpg_knee_energy40_reduction=… rosfree_placo_knee_energy40_reduction=…
steps=… (the DDS runs' common whole steps, min over the gaits) rtf=… (the DDS runs' sim s / wall s)
rosfree_cpg_walknode_knee_energy40_reduction=… rosfree_cpg_walknode_energy40_reduction=… (and placo's)
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

import nimbro_obstacle as nb  # noqa: E402 (the ROS-free NimbRo-OP energy runs and table)

GAITS = ("cpg", "placo")


def run_dds(gait: str, controller: str, n_steps: int, vx: float):
    """(joints, step_energy [J], fell_at [s], sim s, wall s) of one DDS run of the NimbRo-OP mission graph."""
    from servo_ff.bringup.op3_mission import run_op3
    from servo_ff.bringup.robot_graph import bringup_graph
    from servo_ff.dynamics.nimbro_walk import NIMBRO_KNEES

    robot = bringup_graph("sim_nimbro_op", NIMBRO_KNEES, gait=gait)
    r = run_op3(controller, n_steps=n_steps, vx=vx, kp_high=nb.KP_HIGH, robot=robot, salt=71, log=print)
    print(f"     ({nb.LABEL[controller]}) {gait}: {len(r.step_energy) - 1} whole steps", flush=True)
    return r.joints, r.step_energy, r.fell_at, r.sim_s, r.wall_s


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-b", action="store_true", help="(a) and (c) only, no (b) 0.35 × 53.125 plain P")
    ap.add_argument("--steps", type=int, default=nb.ENERGY_STEPS, help="steps commanded")
    ap.add_argument("--vx", type=float, default=nb.ENERGY_VX, help="cmd_vel forward [m/s]")
    a = ap.parse_args()
    if a.steps < 2 or not (math.isfinite(a.vx) and a.vx > 0):
        print("nimbro_dds_energy.py: error: --steps must be ≥ 2 and --vx a positive number", file=sys.stderr)
        return 2
    nb.ENERGY_STEPS, nb.ENERGY_VX = a.steps, a.vx  # the ROS-free runs and the table's heading
    controllers = ("high", "ff") if a.no_b else ("high", "low", "ff")
    print(f"NimbRo-OP, {a.steps} steps at {a.vx:g} m/s, controllers {', '.join(nb.LABEL[c] for c in controllers)}; "
          f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores", flush=True)  # fmt: skip
    out: dict[str, float] = {}
    steps, sim_s, wall_s, t0 = [], 0.0, 0.0, time.perf_counter()
    for gait in GAITS:
        print(f"\n== {gait} over DDS", flush=True)
        dds = {c: run_dds(gait, c, a.steps, a.vx) for c in controllers}
        sim_s += sum(d[3] for d in dds.values())
        wall_s += sum(d[4] for d in dds.values())
        text, knee, total = nb.energy({c: d[:3] for c, d in dds.items()})
        steps.append(min(len(d[1]) - 1 for d in dds.values()))
        print(text.replace("\nenergy", f"\n{gait} over DDS: energy", 1))
        out[f"dds_{gait}_knee"], out[f"dds_{gait}_all"] = knee, total
        print(f"\n== {gait} ROS-free (simulate_walk)", flush=True)
        free = {c: nb.run_energy(c, gait) for c in controllers}
        whole = nb.energy(free)  # over all its common whole steps (the CPG's: its stop's steps too)
        same = {c: (j, e[: steps[-1] + 1], f) for c, (j, e, f) in free.items()}  # the DDS runs' window
        text, knee, total = nb.energy(same)
        print(text.replace("\nenergy", f"\n{gait} ROS-free, the DDS runs' window: energy", 1))
        n_free = min(len(e) - 1 for _, e, _ in free.values())
        print(f"(c) against (a) over all its {n_free} common whole steps: knees {-whole[1]:+.1%}, all joints "
              f"{-whole[2]:+.1%}")  # fmt: skip
        out[f"free_{gait}_knee"], out[f"free_{gait}_all"] = knee, total
        node = {c: nb.run_energy(c, gait, desired="walk_node") for c in controllers}  # sampled as the nodes do
        text, knee, total = nb.energy({c: (j, e[: steps[-1] + 1], f) for c, (j, e, f) in node.items()})
        print(text.replace("\nenergy", f"\n{gait} ROS-free, desired=walk_node, the DDS runs' window: energy", 1))
        out[f"node_{gait}_knee"], out[f"node_{gait}_all"] = knee, total
    print(f"\nwall time {time.perf_counter() - t0:.0f} s (DDS: {sim_s:.0f} s simulated in {wall_s:.0f} s), "
          f"load average after {os.getloadavg()[0]:.2f}")  # fmt: skip
    print(
        f"RESULT dds_cpg_knee_energy40_reduction={out['dds_cpg_knee']:.3f} "
        f"dds_cpg_energy40_reduction={out['dds_cpg_all']:.3f} "
        f"dds_placo_knee_energy40_reduction={out['dds_placo_knee']:.3f} "
        f"dds_placo_energy40_reduction={out['dds_placo_all']:.3f} "
        f"rosfree_cpg_knee_energy40_reduction={out['free_cpg_knee']:.3f} "
        f"rosfree_placo_knee_energy40_reduction={out['free_placo_knee']:.3f} "
        f"steps={min(steps)} rtf={sim_s / wall_s:.2f} "
        + " ".join(
            f"rosfree_{g}_walknode_knee_energy40_reduction={out[f'node_{g}_knee']:.3f} "
            f"rosfree_{g}_walknode_energy40_reduction={out[f'node_{g}_all']:.3f}"
            for g in GAITS
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
