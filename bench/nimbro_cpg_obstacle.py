"""Schwarz & Behnke's obstacle experiment (seed 002 §5.2, Fig. 6) on the NimbRo-OP walking with its authors' own gait,
Missura & Behnke's open-loop CPG (``dynamics.nimbro_cpg``, from nimbro-op-ros b1f777a), ROS-free (issue 21).

Run: python bench/nimbro_cpg_obstacle.py [--workers 1|2] [--fig6b docs/img/nimbro_cpg_fig6b.png]

Pre-registered (this docstring was committed before any obstacle run with the CPG; nothing below is tuned). As the
placo bench's rule (``bench/nimbro_obstacle.py``, committed in ab5923d), with only the gait changed:

* Robot: urdf/nimbro_op.urdf, config/servos_nimbro_op.yaml (MX-106 M4 legs, MX-64 M4 arms and neck, bam's PWM
  position law at 15 V); ``simulate_walk``'s defaults otherwise (0.48 s hold in the halt pose, 8 ms goals, 1 ms
  physics, 4096 counts/rev, 1 period of latency).
* Gait: ``nimbro_cpg_plan.cpg_plan`` with ``CpgConfig()``'s defaults as committed in 6fc0ad9: the authors' config.yaml
  values, none changed (on flat ground, before this rule, (a), (b) and (c) each walked 20 steps without a fall at
  0, 0.025, 0.05 and 0.080 m/s). Open loop: their fused-angle speed term and gyro ankle term are left out.
* Speeds: 0.025 and 0.05 m/s (gcv.x 0.312, 0.624) and gcv.x = 1, 0.080 m/s, the CPG's top speed under its norm limit,
  in place of the placo bench's 0.095 m/s (it needs gcv.x 1.19). 16 steps commanded per run, then the stop the gait
  makes by itself (the command withdrawn, gcv slopes down, halt at a phase centre once gcv < 0.1), then 0.5 s halted.
* Controllers: (a) high-gain P, k_P 53.125; (b) plain P at 0.35 of it (18.6); (c) (b) + feed-forward, α̂ per joint
  from the servo file at 15 V, gravity from the true trunk orientation.
* Obstacles: heights 15 mm and 5 mm; ``board`` (0.4 × 1 m across the path, placed at the walk start with both feet
  down, its near edge 5 mm ahead of the soles) and ``foot_box`` (a box under the right foot at the middle of its third
  swing: the CPG's step 4, as the placo walk's step 5: placo starts with the left foot, the CPG with the right);
  flat ground run once per speed and controller.
* Stood / fell: a fall is a trunk tilt > 0.6 rad, its direction the larger of pitch and roll at that moment.
* The paper's result in a cell: (a) fell backwards after its first foot touched the obstacle and (c) stood.
  ``cpg_paper_result=k/n``: over the 15 mm cells of both shapes at the speeds at which (a) stood on flat ground (n),
  those with the paper's result (k). Holds if k = n > 0, partly if 0 < k < n, not if k = 0.
* Fig. 6b: trunk pitch of (a) and (c) on the 15 mm board at the slowest speed at which (a) falls there (0.025 m/s if
  it stands at all three), the first touch marked (docs/img/nimbro_cpg_fig6b.png).
* Energy: (a), (b), (c) on flat ground, 40 steps commanded at 0.05 m/s; ∫U·I dt per joint over the whole steps all of
  them walked (``bringup.op3_energy``); reductions 1 − E(c)/E(a) over both knees and over all joints.

Supplement, registered after the rule above had been run and before any run of it (not in the paper-result count):
as the placo bench's, the authors' code writes the MX P register as effort × 32, so their "k_p = 1.0" may be P = 32;
(a) with k_P 32 and (c) with 0.35 × 32 = 11.2 + feed-forward (their walking legs' efforts 0.35–0.4 give P 11–13), on
flat ground and at 15 mm, both shapes, the three speeds; the same stood and paper's-result rules
(``cpg_kp32_board15_ac``, ``cpg_kp32_box15_ac``, ``cpg_kp32_paper_result``).

Last line: RESULT cpg_flat_falls=… cpg_box15_ac=… cpg_board15_ac=… cpg_box5_ac=… cpg_board5_ac=… (per speed, slowest
first, (a) then (c), S stood, F fell) cpg_paper_result=k/n cpg_knee_energy40_reduction=… cpg_energy40_reduction=…
cpg_kp32_board15_ac=… cpg_kp32_box15_ac=… cpg_kp32_paper_result=k/n (the supplement)
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from multiprocessing import get_context
from pathlib import Path

import nimbro_obstacle as nb  # the placo bench: its cells, tables, energy and Fig. 6b (it puts src/ on sys.path)
from _cases import workers_refused

from servo_ff.dynamics.nimbro_cpg import CpgConfig, speed_per_gcv

ROOT = Path(__file__).resolve().parents[1]
TOP = speed_per_gcv(CpgConfig())  # [m/s] gcv.x = 1
SPEEDS = (0.025, 0.05, TOP)  # [m/s]


def keys() -> list[tuple[str, str, float, float, float]]:
    """The pre-registered cells (flat, then each shape and height, per speed and controller), then the supplement's."""
    out = [(c, "flat", 0, v, nb.KP_HIGH) for v in SPEEDS for c in nb.CONTROLLERS]
    out += [(c, s, h, v, nb.KP_HIGH) for s in nb.SHAPES for h in nb.HEIGHTS_MM for v in SPEEDS for c in nb.CONTROLLERS]
    sup = [(c, "flat", 0, v, nb.KP_CODE) for v in SPEEDS for c in ("high", "ff")]
    return out + sup + [(c, s, 15, v, nb.KP_CODE) for s in nb.SHAPES for v in SPEEDS for c in ("high", "ff")]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=1, help="processes (at most 2: the machine's cores are shared)")
    ap.add_argument("--fig6b", default=str(ROOT / "docs" / "img" / "nimbro_cpg_fig6b.png"), help="Fig. 6b's PNG")
    a = ap.parse_args()
    if workers_refused("nimbro_cpg_obstacle.py", a.workers):
        return 2
    ks = keys()
    print(f"NimbRo-OP, its authors' CPG gait (top speed {TOP:.4f} m/s at gcv.x 1); {len(ks)} runs of {nb.N_STEPS} "
          f"steps + 3 of {nb.ENERGY_STEPS}, {a.workers} worker(s), load average {os.getloadavg()[0]:.2f} on "
          f"{os.cpu_count()} cores", flush=True)  # fmt: skip
    t0 = time.perf_counter()
    with ProcessPoolExecutor(a.workers, mp_context=get_context("spawn")) as pool:
        done = pool.map(partial(nb.run_energy, gait="cpg"), nb.CONTROLLERS)
        cells = dict(zip(ks, pool.map(partial(nb.run_cell, gait="cpg"), ks)))
        runs = dict(zip(nb.CONTROLLERS, done))
    wall = time.perf_counter() - t0
    print(nb.tables(cells, SPEEDS))
    text, knee, total = nb.energy(runs)
    print(text)
    print(nb.fig6b(cells, a.fig6b, SPEEDS, "cpg"))
    k, n = nb.paper_count(cells, speeds=SPEEDS)
    k32, n32 = nb.paper_count(cells, nb.KP_CODE, SPEEDS)
    free = [v for v in SPEEDS if not nb.cell(cells, "high", "", 0, v).fell]
    any_way = sum(
        nb.cell(cells, "high", s, 15, v).fell and not nb.cell(cells, "ff", s, 15, v).fell
        for s in nb.SHAPES
        for v in free
    )
    print(f"paper's result (pre-registered: (a) fell backwards after touching, (c) stood) in {k} of {n} 15 mm cells; "
          f"not pre-registered, for the record: (a) fell any way and (c) stood in {any_way} of {n}")  # fmt: skip
    print(f"wall time {wall:.0f} s, load average after {os.getloadavg()[0]:.2f}")
    print(
        f"RESULT cpg_flat_falls={nb.flat_falls(cells, SPEEDS)} {nb.ac_keys(cells, 'cpg', SPEEDS)} "
        f"cpg_paper_result={k}/{n} "
        f"cpg_knee_energy40_reduction={knee:.3f} cpg_energy40_reduction={total:.3f} "
        f"cpg_kp32_board15_ac={nb.ac(cells, 'board', 15, nb.KP_CODE, SPEEDS)} "
        f"cpg_kp32_box15_ac={nb.ac(cells, 'foot_box', 15, nb.KP_CODE, SPEEDS)} "
        f"cpg_kp32_paper_result={k32}/{n32}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
