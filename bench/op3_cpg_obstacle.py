"""Schwarz & Behnke's obstacle experiment (seed 002 §5.2, Fig. 6) on the ROBOTIS OP3 walking with the paper's gait,
Missura & Behnke's open-loop CPG (``dynamics.nimbro_cpg``, the NimbRo-OP's), carried to the OP3 by dynamic
similarity (``dynamics.op3_cpg``), ROS-free (issue 21): the fifth gait × robot pair.

Run: python bench/op3_cpg_obstacle.py [--workers 1|2] [--fig6b docs/img/op3_cpg_fig6b.png] [--flat20]

Pre-registered (this docstring, the scaling rule and the joint map were committed before any walk of the CPG on the
OP3 was simulated; nothing below is tuned). As ``bench/op3_robotis_obstacle.py``'s rule (16aa08e), with only the
gait changed:

* Scale: s = L_op3 / L_nimbro, L the hip-to-ankle leg length = thigh + shank: NimbRo-OP 0.44 m (the gait's
  ``legLength``, RobotModel.cpp), OP3 0.11015 + 0.110 = 0.22015 m (urdf/op3.urdf: hip pitch → knee → ankle pitch
  origins; the same on both legs), s = 0.50034, √s = 0.70735. The OP3's thigh is 0.15 mm longer than its shank;
  ``abstract_to_joints`` assumes equal links (hip −a, knee 2a, ankle −a): the sole stays parallel to the trunk, the
  ankle lands (0.15 mm)·sin a ahead of where equal links put it (< 0.04 mm in the halt pose); kept as is.
* Gait: ``op3_cpg.op3_cpg_plan`` with ``op3_cpg.scaled_config(CpgConfig(), s)``, ``CpgConfig()`` the authors'
  config.yaml values as committed in 6fc0ad9, none changed. Every length × s (leg_length 0.22015, arm_length,
  step_height 0.0125, step_height_slope 0.0100, push_height, lateral_hip_swing 0.0055, first_step_hip_swing 0.0050,
  foot_offset (−0.0200, −0.0100, 0.0050), arm_offset x and z [m]); every time × √s (1/gait_frequency 0.417 →
  0.295 s a step, gait_frequency 3.393 /s; first_step_duration 0.354 s); dt stays 8 ms (the OP3's tick, as the
  NimbRo-OP's); acceleration_forward [gcv/s] × 1/√s (0.254); angles, phases (swing start/stop), gcv values
  (stopping_velocity), per-gcv angle slopes (step_length_x, arm_swing_slope), support_slope [1/rad],
  deceleration_factor and armOffsetY [rad] unchanged. So gcv.x keeps its Froude number: the speed per gcv.x
  (``speed_per_gcv``) × √s, 0.0802 → 0.0567 m/s. Open loop, as the NimbRo-OP bench: no fused-angle or gyro term.
* Joints: the CPG's leg angles are in the NimbRo-OP's URDF convention (yaw +z, roll +x, pitch +y on both legs);
  each OP3 joint gets the angle × the sign of its URDF axis along that one (``op3_cpg.joint_signs``: hip yaw and hip
  roll −1 both sides; l_hip_pitch +1, r_hip_pitch −1; l_knee +1, r_knee −1; l_ank_pitch −1, r_ank_pitch +1; ankle
  rolls +1; l_sho_pitch +1, r_sho_pitch −1). The OP3's arm is not the NimbRo-OP's (zero pose sideways, elbow axis
  x): shoulder roll, elbows and head are held at ROBOTIS's ini_pose (±45°, ±45°, tilt −10°, as ROBOTIS's walk
  holds them), the shoulder pitch carries the CPG's arm swing alone (arm extension and roll not carried). Halt pose
  checked kinematically before this rule: knees bent forward, soles flat (test/test_op3_cpg.py).
* Robot and controllers: urdf/op3.urdf, config/servos_op3.yaml, α̂ config/alpha_op3.yaml (``simulate_walk``'s
  defaults: 0.48 s hold in the halt pose, 8 ms goals, 1 ms physics, quantisation 4096, latency 1 period); (a)
  high-gain P, k_P 800; (b) plain P at 0.35 of it, 280; (c) (b) + feed-forward (gravity from the true trunk
  orientation, q̇ and q̈ of the plan).
* Speeds: the NimbRo-OP CPG bench's (``bench/nimbro_cpg_obstacle.py``: 0.025, 0.05 m/s and gcv.x 1) × √s, i.e. the
  same gcv.x 0.312, 0.624, 1: 0.0177, 0.0354 and 0.0567 m/s (the OP3 sweep's 0.02/0.035/0.05 are in reach of
  gcv ≤ 1 too, but dynamic similarity keeps the NimbRo-OP's gcv). 16 steps commanded per run, then the stop the
  gait makes by itself (command withdrawn, gcv slopes down, halt at a phase centre once gcv < 0.1), then 0.5 s
  halted.
* Obstacles: heights 5, 7.85 (h*, the paper's 15 mm scaled by leg length hip pitch to sole, op3_obstacle_sweep's
  rule, kept so the five pairs share obstacles; by this rule's s it would be 7.51 mm: not run) and 15 mm; ``board``
  (0.4 × 1 m across the path, placed at the walk start with both feet down, its near edge 5 mm ahead of the soles)
  and ``foot_box`` (a box under the right foot at the middle of its third swing: the CPG's step 4, as the NimbRo-OP
  CPG bench); flat ground once per speed and controller.
* Stood / fell: a fall is a trunk tilt > 0.6 rad, its direction the larger of pitch and roll at that moment.
* The paper's result in a cell: (a) fell backwards after its first foot touched the obstacle and (c) stood.
  ``op3cpg_paper_result=k/n``: over the 15 mm and h* cells of both shapes at the speeds at which (a) stood on flat
  ground in this grid's 16-step flat runs (n), those with the paper's result (k); a speed at which (a) falls on flat
  ground is excluded (its fall is not the obstacle's doing), as in the ROBOTIS bench. Holds if k = n > 0, partly if
  0 < k < n, not if k = 0; n = 0 (no speed at which (a) walks flat) is reported as 0/0, the question unanswered.
* Flat ground, 20 steps (``--flat20``, run after this rule): (a), (b), (c) at the three speeds, reported beside the
  grid; not part of the count.
* Fig. 6b: trunk pitch of (a) and (c) on the 15 mm board at the slowest of the speeds at which (a) stood on flat
  ground where (a) falls on it (else the slowest speed at which (a) stood on flat ground; the slowest speed if none),
  the first touch marked (docs/img/op3_cpg_fig6b.png).
* Energy: (a), (b), (c) on flat ground, 40 steps commanded at 0.0354 m/s (the NimbRo-OP CPG bench's 0.05 m/s × √s,
  gcv.x 0.624); ∫U·I dt per joint over the whole steps all of them walked (``bringup.op3_energy``); reductions
  1 − E(c)/E(a) over both knees and over all joints.

Last line: RESULT op3cpg_flat_falls=… op3cpg_board15_ac=… op3cpg_box15_ac=… op3cpg_board7_ac=… op3cpg_box7_ac=…
op3cpg_board5_ac=… op3cpg_box5_ac=… (per speed, slowest first, (a) then (c), S stood, F fell)
op3cpg_paper_result=k/n op3cpg_knee_energy40_reduction=… op3cpg_energy40_reduction=…
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from multiprocessing import get_context
from pathlib import Path

import nimbro_cpg_obstacle as nc  # the NimbRo-OP CPG bench's speeds (it puts src/ on sys.path)
import nimbro_obstacle as nb  # its energy table
import op3_obstacle_sweep as sw  # the OP3 map's cells, tables, stood/fell and paper's-result rules
import op3_robotis_obstacle as rb  # the ROBOTIS bench's energy run, paper count and record line
from _cases import workers_refused
from _op3_scaled import h_star_mm

from servo_ff.dynamics.nimbro_cpg import CpgConfig, speed_per_gcv
from servo_ff.dynamics.op3_cpg import op3_config, similarity
from servo_ff.dynamics.walk_sim import OP3_URDF

ROOT = Path(__file__).resolve().parents[1]
GAIT = "cpg"
ROOT_S = math.sqrt(similarity(OP3_URDF))  # √s
OP3_PER_GCV = speed_per_gcv(op3_config(OP3_URDF))  # [m/s per gcv.x] = the NimbRo-OP's × √s
SPEEDS = tuple(v / speed_per_gcv(CpgConfig()) * OP3_PER_GCV for v in nc.SPEEDS)  # [m/s] the same gcv.x
ENERGY_VX = nb.ENERGY_VX / speed_per_gcv(CpgConfig()) * OP3_PER_GCV  # [m/s]
FLAT_STEPS = 20


def flat20(workers: int) -> str:
    """(a), (b), (c) walking 20 steps on flat ground at each speed: one line per run."""
    ks = [(c, "flat", 0, v) for v in SPEEDS for c in sw.CONTROLLERS]
    run = partial(sw.run_cell, gait=GAIT, n_steps=FLAT_STEPS)
    with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
        done = list(pool.map(run, ks))
    return "\n".join(f"({sw.LABEL[c.controller]}) {c.vx:.4f} m/s: {sw.describe(c)}" for c in done)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=1, help="processes (at most 2: the machine's cores are shared)")
    ap.add_argument("--fig6b", default=str(ROOT / "docs" / "img" / "op3_cpg_fig6b.png"), help="Fig. 6b's PNG")
    ap.add_argument("--flat20", action="store_true", help="only (a), (b), (c) walking 20 steps on flat ground")
    a = ap.parse_args()
    if workers_refused("op3_cpg_obstacle.py", a.workers):
        return 2
    speeds = ", ".join(f"{v:.4f}" for v in SPEEDS)
    if a.flat20:
        print(f"OP3, the CPG scaled (√s = {ROOT_S:.5f}); {FLAT_STEPS} steps on flat ground at {speeds} m/s")
        print(flat20(a.workers))
        return 0
    h_star = h_star_mm()
    ks = sw.grid((5.0, h_star, 15.0), SPEEDS)
    print(f"OP3, Missura & Behnke's CPG scaled by dynamic similarity (√s = {ROOT_S:.5f}); speeds {speeds} m/s; "
          f"h* = {h_star:g} mm; {len(ks)} runs of {sw.N_STEPS} steps + 3 of {nb.ENERGY_STEPS}, {a.workers} "
          f"worker(s), load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores", flush=True)  # fmt: skip
    t0 = time.perf_counter()
    with ProcessPoolExecutor(a.workers, mp_context=get_context("spawn")) as pool:
        done = pool.map(partial(rb.run_energy, gait=GAIT, vx=ENERGY_VX), sw.CONTROLLERS)
        cells = dict(zip(ks, pool.map(partial(sw.run_cell, gait=GAIT), ks)))
        runs = dict(zip(sw.CONTROLLERS, done))
    wall = time.perf_counter() - t0
    return rb.report(cells, runs, h_star, SPEEDS, rb.Report("op3cpg", GAIT, a.fig6b, wall, ".4f", ENERGY_VX))


if __name__ == "__main__":
    sys.exit(main())
