"""Schwarz & Behnke's obstacle experiment (seed 002 §5.2, Fig. 6) on the ROBOTIS OP3 walking with ROBOTIS's own
engine, the open-loop sinusoidal ``op3_walking_module`` (``dynamics.op3_robotis_walk``), ROS-free (issue 21).

Run: python bench/op3_robotis_obstacle.py [--workers 1|2] [--fig6b docs/img/op3_robotis_fig6b.png]

Pre-registered (this docstring was committed before any obstacle run with this gait; nothing below is tuned). As
``bench/op3_obstacle_sweep.py``'s map and h* rule, with only the gait changed:

* Robot and controllers: urdf/op3.urdf, config/servos_op3.yaml, α̂ config/alpha_op3.yaml (``simulate_walk``'s
  defaults: 0.48 s hold in the stance, 8 ms goals, 1 ms physics, quantisation 4096, latency 1 period); (a) high-gain
  P, k_P 800 (the XM430's factory gain, ROBOTIS's OP3 setting); (b) plain P at 0.35 of it, 280; (c) (b) +
  feed-forward (gravity from the true trunk orientation, q̇ and q̈ of the plan).
* Gait: ``op3_robotis_walk.robotis_plan`` with ``RobotisConfig()``'s defaults as committed in 3db6bd4: param.yaml's
  values, none changed (period 0.6 s, a step 0.304 s on the 8 ms tick, foot height 0.06 m, dsp_ratio 0.2, ...), the
  left foot first, x_move = vx · 0.304 / 2; gyro feedback off (ROBOTIS's default). Flat ground before this rule
  (20 steps): (a) stood at 0.02 and 0.035 m/s and fell backwards at 0.05 (2.58 s) and 0.08 (1.41 s); (b) fell
  backwards at 0.77–0.78 s at all four speeds; (c) stood at 0.02, 0.05, 0.08 and fell at 0.035 (5.42 s).
* Speeds: 0.02, 0.035, 0.05, 0.08 m/s (op3_obstacle_sweep's). 16 steps commanded per run, then ROBOTIS's own stop
  (``stop()`` when the 16th swing ends; the module slows and halts at a double support by itself), then 0.5 s halted.
* Obstacles: heights 5, 7.85 (h*, the paper's 15 mm scaled to the OP3's leg, op3_obstacle_sweep's rule) and 15 mm;
  ``board`` (0.4 × 1 m across the path, placed at the walk start with both feet down, its near edge 5 mm ahead of
  the soles) and ``foot_box`` (a box under the right foot's footprint, placed half a step (0.152 s) after the start
  of the walk's step 5 (0-based), the right foot's third swing, as the placo map's step 5: 63 % into its 0.24 s
  swing); flat ground once per speed and controller.
* Stood / fell: a fall is a trunk tilt > 0.6 rad, its direction the larger of pitch and roll at that moment.
* The paper's result in a cell: (a) fell backwards after its first foot touched the obstacle and (c) stood.
  ``robotis_paper_result=k/n``: over the 15 mm and h* cells of both shapes at the speeds at which (a) stood on flat
  ground (n), those with the paper's result (k). Holds if k = n > 0, partly if 0 < k < n, not if k = 0.
* Fig. 6b: trunk pitch of (a) and (c) on the 15 mm board at the slowest of the speeds at which (a) stood on flat
  ground where (a) falls on it (else the slowest speed at which (a) stood on flat ground; 0.02 if none), the first
  touch marked (docs/img/op3_robotis_fig6b.png).
* Energy: (a), (b), (c) on flat ground, 40 steps commanded at 0.05 m/s; ∫U·I dt per joint over the whole steps all
  of them walked (``bringup.op3_energy``); reductions 1 − E(c)/E(a) over both knees and over all joints.

Last line: RESULT robotis_flat_falls=… robotis_board15_ac=… robotis_box15_ac=… robotis_board7_ac=…
robotis_box7_ac=… robotis_board5_ac=… robotis_box5_ac=… (per speed, slowest first, (a) then (c), S stood, F fell)
robotis_paper_result=k/n robotis_knee_energy40_reduction=… robotis_energy40_reduction=…
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
from typing import NamedTuple

import nimbro_obstacle as nb  # its energy table (it puts src/ on sys.path)
import op3_obstacle_sweep as sw  # the OP3 map's cells, tables, stood/fell and paper's-result rules
from _cases import workers_refused
from _op3_scaled import fig6b, h_star_mm
from _paths import shown

ROOT = Path(__file__).resolve().parents[1]
GAIT = "robotis"
KNEES = ("l_knee", "r_knee")


def keys(h_star: float) -> list[tuple[str, str, float, float]]:
    """The pre-registered cells: flat, then each shape, height and speed, per controller."""
    return sw.grid((5.0, h_star, 15.0))


def run_energy(controller: str, gait: str = GAIT, vx: float = nb.ENERGY_VX) -> tuple[list[str], object, float]:
    """(joints, step_energy [J], fell_at [s]) of 40 steps of ``gait`` (``sw.robotis_ready``'s; default ROBOTIS's
    walk) on flat ground at ``vx`` [m/s] (default 0.05)."""
    from servo_ff.dynamics.walk_sim import simulate_walk

    more = sw.robotis_ready(vx, nb.ENERGY_STEPS, gait)
    r = simulate_walk(controller, nb.ENERGY_STEPS, **more)
    return r.joints, r.step_energy, r.fell_at


def paper_result(cells: dict, h_star: float, speeds: tuple[float, ...] = sw.SPEEDS) -> tuple[int, int]:
    """(k, n) over the 15 mm and h* cells of both shapes at the ``speeds`` where (a) stood on flat ground."""
    counts = [sw.paper_count(cells, s, h, speeds) for s in sw.SHAPES for h in (15.0, h_star)]
    return sum(k for k, _ in counts), sum(m for _, m in counts)


def record(runs: dict) -> str:
    """Not pre-registered, for the record: (c) against (a) alone over their own common whole steps."""
    from types import SimpleNamespace

    from servo_ff.bringup.op3_energy import compare

    a, c = (SimpleNamespace(joints=runs[k][0], step_energy=runs[k][1]) for k in ("high", "ff"))
    r = compare(a, c)
    return (f"for the record (not pre-registered): (c) against (a) over their {r.steps} common whole steps: knees "
            f"{-r.knee_reduction:+.1%}, all joints {-r.reduction:+.1%}")  # fmt: skip


class Report(NamedTuple):
    """How a bench names its figures: RESULT keys' ``prefix``, the ``gait`` walked, Fig. 6b's ``fig6b`` path, the
    grid's ``wall`` time [s], the speeds' format ``fmt`` ("g" or ".4f") and the energy run's ``energy_vx`` [m/s]."""

    prefix: str
    gait: str
    fig6b: str
    wall: float
    fmt: str = "g"
    energy_vx: float = nb.ENERGY_VX


def report(cells: dict, runs: dict, h_star: float, speeds: tuple[float, ...], r: Report) -> int:
    """Print an OP3 obstacle grid's tables, energy, Fig. 6b, paper's result and RESULT line (this bench's and
    ``op3_cpg_obstacle.py``'s, as their docstrings say); 0."""
    print(sw.tables(cells, speeds))
    free = [v for v in speeds if not sw.cell(cells, "high", "", 0, v).fell]
    print(f"\nspeeds at which (a) stood on flat ground: {', '.join(f'{v:{r.fmt}}' for v in free) or 'none'}")
    for h in (15.0, h_star, 5.0):
        for s in sw.SHAPES:
            k, m = sw.paper_count(cells, s, h, speeds)
            print(f"{s} {h:g} mm: the paper's result at {k} of {m} of those speeds")
    text, knee, total = nb.energy(runs, KNEES, r.energy_vx)
    print(text)
    print(record(runs))
    slow = next((v for v in free if sw.cell(cells, "high", "board", 15.0, v).fell), free[0] if free else speeds[0])
    path, figs = fig6b(15.0, slow, sw.N_STEPS, r.fig6b, r.gait)
    same = all(figs[c].fell == sw.cell(cells, c, "board", 15.0, slow).fell for c in figs)
    print(f"Fig. 6b (15 mm board, {slow:{r.fmt}} m/s; the same outcomes as the cells: {same}): {shown(path)}")
    k, n = paper_result(cells, h_star, speeds)
    print(f"paper's result (pre-registered: (a) fell backwards after touching, (c) stood) in {k} of {n} cells "
          f"(15 mm and {h_star:g} mm, both shapes, speeds where (a) stood on flat ground)")  # fmt: skip
    falls = ",".join(sw.LABEL[c] for c in sw.CONTROLLERS if any(sw.cell(cells, c, "", 0, v).fell for v in speeds))
    print(f"wall time {r.wall:.0f} s, load average after {os.getloadavg()[0]:.2f}")
    ac = " ".join(
        f"{r.prefix}_{name}{tag}_ac={sw.ac(cells, shape, h, speeds)}"
        for tag, h in (("15", 15.0), ("7", h_star), ("5", 5.0))
        for name, shape in (("board", "board"), ("box", "foot_box"))
    )
    print(
        f"RESULT {r.prefix}_flat_falls={falls or 'none'} {ac} {r.prefix}_paper_result={k}/{n} "
        f"{r.prefix}_knee_energy40_reduction={knee:.3f} {r.prefix}_energy40_reduction={total:.3f}"
    )
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=1, help="processes (at most 2: the machine's cores are shared)")
    ap.add_argument("--fig6b", default=str(ROOT / "docs" / "img" / "op3_robotis_fig6b.png"), help="Fig. 6b's PNG")
    a = ap.parse_args()
    if workers_refused("op3_robotis_obstacle.py", a.workers):
        return 2
    h_star = h_star_mm()
    ks = keys(h_star)
    print(f"OP3, ROBOTIS's own walk (op3_walking_module, param.yaml); h* = {h_star:g} mm; {len(ks)} runs of "
          f"{sw.N_STEPS} steps + 3 of {nb.ENERGY_STEPS}, {a.workers} worker(s), load average "
          f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cores", flush=True)  # fmt: skip
    t0 = time.perf_counter()
    with ProcessPoolExecutor(a.workers, mp_context=get_context("spawn")) as pool:
        done = pool.map(run_energy, sw.CONTROLLERS)
        cells = dict(zip(ks, pool.map(partial(sw.run_cell, gait=GAIT), ks)))
        runs = dict(zip(sw.CONTROLLERS, done))
    wall = time.perf_counter() - t0
    return report(cells, runs, h_star, sw.SPEEDS, Report("robotis", GAIT, a.fig6b, wall, "g"))


if __name__ == "__main__":
    sys.exit(main())
