"""Schwarz & Behnke's obstacle experiment (seed 002 §5.2, Fig. 6) on the paper's own robot, the NimbRo-OP (issue 21),
ROS-free (``dynamics.walk_sim.simulate_walk``): is the OP3's failure to reproduce it the OP3, or our stack?

Run: python bench/nimbro_obstacle.py [--workers 1|2] [--fig6b docs/img/nimbro_fig6b.png] [--perturb]

Pre-registered (this docstring was committed before any obstacle run on the NimbRo-OP; nothing below is tuned):

* Robot: urdf/nimbro_op.urdf (its authors' nimbro_op.xml, 6.46 kg), config/servos_nimbro_op.yaml (MX-106 M4 legs,
  MX-64 M4 arms and neck, bam's PWM position law at 15 V), the gait ``dynamics.nimbro_walk.nimbro_walk_params()``
  (step 0.42 s) as committed in bd5dca9, chosen on flat ground only; ``simulate_walk``'s defaults otherwise (0.48 s
  hold in the stance, 8 ms goals (the NimbRo-OP's 125 Hz), 1 ms physics, 4096 counts/rev, 1 period of latency).
* Controllers: (a) high-gain P, k_P 53.125 (the humanoid mission's high gain, ``mujoco_humanoid.KP_HIGH``: the
  MX-106(2.0) factory gain); (b) plain P at 0.35 of it (18.6); (c) (b) + feed-forward, α̂ per joint from the servo
  file at 15 V (``simulate_walk(alpha=None)``), gravity from the true trunk orientation (the paper's IMU).
* Obstacles: heights 15 mm and 5 mm (the paper's); shapes ``board`` (0.4 m wide, 1 m long, across the path, placed
  at the walk start with both feet down, its near edge 5 mm ahead of the soles) and ``foot_box`` (a box under the
  right foot at mid-swing of step 5); flat ground (0 mm) run once per speed and controller.
* Speeds: 0.025, 0.05 and 0.095 m/s (the paper's "very slow velocity" is not given; 0.095 is the OP3 bench's 0.05 m/s
  scaled by leg length, 0.05 × 0.479 / 0.2507 m; the slower two as on the OP3); 16 steps per run.
* Stood / fell: the existing rule, a fall is a trunk tilt > 0.6 rad (``walk_sim.FALL_TILT``), its direction the
  larger of pitch and roll at that moment (op3_obstacle_sweep's ``direction``).
* The paper's result in a cell: (a) fell backwards after its first foot touched the obstacle and (c) stood (the OP3
  bench's ``paper``). ``nimbro_paper_result=k/n``: over the 15 mm cells of both shapes at the speeds at which (a)
  stood on flat ground (n), those with the paper's result (k). The paper's result holds on the NimbRo-OP if k = n > 0,
  partly if 0 < k < n, not if k = 0.
* Fig. 6b: trunk pitch over time of (a) and (c) on the 15 mm board at the slowest speed at which (a) falls there (at
  0.025 m/s if it stands at all three), the first touch marked (docs/img/nimbro_fig6b.png).
* Energy (paper: left knee 189 J → 140 J over 40 steps, −26 %): (a), (b), (c) on flat ground, 40 steps at 0.05 m/s;
  E = ∫U·I dt per joint (the servo layer's, signed), compared over the whole steps all of them walked
  (``bringup.op3_energy``: common_steps / energy_over); reductions 1 − E(c)/E(a) over both knees and over all joints.
* Supplement (not in the paper-result count): the authors' own code writes the MX P register as effort × 32
  (nimbro-op-ros b1f777a ``robotcontrol/src/hw/robotinterface.cpp``: ``pValue = realEffort * 32``), so their
  "k_p = 1.0" may be P = 32; (a) and (c) with k_P 32 and 0.35 × 32 on flat ground and at 15 mm, both shapes, all
  speeds.

``--perturb`` (added after the run, not part of the rule): the 15 mm cells' (a) and (c) again with the plan rounded to
1e-5 and 1e-7 instead of 1e-6 (``walk_sim.settled_plan``, as op3_obstacle_sweep's): whether stood/fell holds.
Re-run with the rule unchanged after a bug fix in the gait, not a tuning: its IK bent a knee backwards (7a6ee94).

Last line: RESULT nimbro_mass_kg=… nimbro_flat_falls=… (controllers that fell on flat ground at any speed, ``none``)
nimbro_box15_ac=… nimbro_board15_ac=… nimbro_box5_ac=… nimbro_board5_ac=… (per speed, slowest first, (a) then (c), S
stood, F fell) nimbro_paper_result=k/n nimbro_knee_energy40_reduction=… nimbro_energy40_reduction=…
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from _cases import workers_refused  # noqa: E402
from _op3_scaled import plot_fig6b  # noqa: E402 (Fig. 6b as the OP3's)
from _paths import shown  # noqa: E402
from op3_obstacle_sweep import Cell, describe, direction  # noqa: E402 (the OP3 map's cell, its words, fall direction)

CONTROLLERS = ("high", "low", "ff")  # (a), (b), (c)
LABEL = {"high": "a", "low": "b", "ff": "c"}
SHAPES = ("board", "foot_box")
HEIGHTS_MM = (5, 15)
SPEEDS = (0.025, 0.05, 0.095)  # [m/s]
N_STEPS = 16
KP_HIGH = 850 / 128 * 8  # mujoco_humanoid.KP_HIGH (53.125)
KP_CODE = 32.0  # the supplement: the authors' code's P = effort × 32
ENERGY_VX, ENERGY_STEPS = 0.05, 40
PAPER_KNEE = (189.0, 140.0)  # [J] seed 002 §5.2: the left knee over 40 steps, (a) then (c)


def walk(
    controller: str, n_steps: int, vx: float, kp_high: float, height_mm: float = 0.0, shape: str = "foot_box",
    plan_grid: float = 1e-6, gait: str = "placo", desired: str = "plan",
):  # fmt: skip
    """One ``simulate_walk`` of the NimbRo-OP with its servo file, gait and placo frames; ``gait`` "cpg": its authors'
    CPG instead (``dynamics.nimbro_cpg_plan.cpg_plan`` at the gcv of ``vx``, the foot box at the right foot's third
    swing: the CPG's step 4, as the placo walk's step 5); ``desired``: simulate_walk's (``walk_node``: the goals, q̇, q̈
    sampled as servo_walk_node and the feed-forward node do)."""
    from servo_ff.dynamics.nimbro_walk import NIMBRO_FRAMES, NIMBRO_SERVOS, NIMBRO_URDF, nimbro_walk_params
    from servo_ff.dynamics.walk_sim import simulate_walk

    if gait not in ("placo", "cpg"):
        raise ValueError(f"gait must be 'placo' or 'cpg', got {gait!r}")
    more = {}
    if gait == "cpg":
        from servo_ff.dynamics.nimbro_cpg import CpgConfig, gcv_for_speed
        from servo_ff.dynamics.nimbro_cpg_plan import cpg_plan

        more = {"ready": cpg_plan(NIMBRO_URDF, gcv_for_speed(vx, CpgConfig()), n_steps), "obstacle_step": 4}
    return simulate_walk(
        controller, n_steps, vx=vx, kp_high=kp_high, params=nimbro_walk_params(), urdf=NIMBRO_URDF,
        servos=NIMBRO_SERVOS, alpha=None, frames=NIMBRO_FRAMES, obstacle=height_mm / 1000, obstacle_shape=shape,
        plan_grid=plan_grid, desired=desired, **more,
    )  # fmt: skip


def run_cell(
    key: tuple[str, str, float, float, float], plan_grid: float = 1e-6, gait: str = "placo", desired: str = "plan"
) -> Cell:
    """(controller, shape or "flat", height [mm], vx [m/s], kp_high) → the run as the OP3 map's :class:`Cell`."""
    controller, shape, height_mm, vx, kp_high = key
    where = "foot_box" if shape == "flat" else shape
    return cell_of(key, walk(controller, N_STEPS, vx, kp_high, height_mm, where, plan_grid, gait, desired))


def cell_of(key: tuple[str, str, float, float, float], r) -> Cell:
    """The :class:`Cell` of cell ``key``'s run ``r`` (simulate_walk's WalkRun)."""
    controller, shape, height_mm, vx, _ = key
    ok = np.isfinite(r.pitch) & np.isfinite(r.roll)
    p, q = (r.pitch[ok], r.roll[ok]) if ok.any() else (np.array([math.nan]), np.array([math.nan]))
    way = direction(float(p[-1]), float(q[-1])) if r.fell and ok.any() else ("?" if r.fell else "")
    return Cell(controller, shape, height_mm, vx, r.fell_at, way, r.travel, r.t_touch, float(np.min(p)))


def run_energy(controller: str, gait: str = "placo", desired: str = "plan") -> tuple[list[str], np.ndarray, float]:
    """(joints, step_energy [J], fell_at [s]) of 40 steps on flat ground at ENERGY_VX."""
    r = walk(controller, ENERGY_STEPS, ENERGY_VX, KP_HIGH, gait=gait, desired=desired)
    return r.joints, r.step_energy, r.fell_at


def keys() -> list[tuple[str, str, float, float, float]]:
    """The pre-registered cells, then the k_P 32 supplement's."""
    out = [(c, "flat", 0, v, KP_HIGH) for v in SPEEDS for c in CONTROLLERS]
    out += [(c, s, h, v, KP_HIGH) for s in SHAPES for h in HEIGHTS_MM for v in SPEEDS for c in CONTROLLERS]
    sup = [(c, "flat", 0, v, KP_CODE) for v in SPEEDS for c in ("high", "ff")]
    return out + sup + [(c, s, 15, v, KP_CODE) for s in SHAPES for v in SPEEDS for c in ("high", "ff")]


def cell(cells: dict, controller: str, shape: str, h: float, v: float, kp: float = KP_HIGH) -> Cell:
    return cells[(controller, "flat" if h == 0 else shape, h, v, kp)]


def ac(cells: dict, shape: str, h: float, kp: float = KP_HIGH, speeds=SPEEDS) -> str:
    """(a) then (c) per speed, slowest first, S stood, F fell: e.g. "FS,FS,FF"."""
    return ",".join(
        "".join("F" if cell(cells, c, shape, h, v, kp).fell else "S" for c in ("high", "ff")) for v in speeds
    )


def flat_falls(cells: dict, speeds=SPEEDS) -> str:
    """The controllers that fell on flat ground at any of ``speeds`` [m/s] (k_P high), e.g. "a,b"; "none"."""
    return ",".join(LABEL[c] for c in CONTROLLERS if any(cell(cells, c, "", 0, v).fell for v in speeds)) or "none"


def ac_keys(cells: dict, prefix: str, speeds=SPEEDS, shapes=(("box", "foot_box"), ("board", "board"))) -> str:
    """RESULT's ``{prefix}_{name}{h}_ac=…`` keys (:func:`ac`) at 15 then 5 mm, per (name, shape) of ``shapes``."""
    return " ".join(
        f"{prefix}_{name}{h}_ac={ac(cells, shape, h, speeds=speeds)}" for h in (15, 5) for name, shape in shapes
    )


def paper(cells: dict, shape: str, h: float, v: float, kp: float = KP_HIGH) -> bool:
    """(a) fell backwards after its first foot touched the obstacle, (c) stood."""
    a = cell(cells, "high", shape, h, v, kp)
    return a.fell and a.direction == "back" and not a.pre and not cell(cells, "ff", shape, h, v, kp).fell


def paper_count(cells: dict, kp: float = KP_HIGH, speeds=SPEEDS) -> tuple[int, int]:
    """(k, n): n the 15 mm cells (both shapes) at speeds where (a) stood on flat ground, k those with the result."""
    free = [v for v in speeds if not cell(cells, "high", "", 0, v, kp).fell]
    hits = [paper(cells, s, 15, v, kp) for s in SHAPES for v in free]
    return sum(hits), len(hits)


def tables(cells: dict, speeds=SPEEDS, supplement: bool = True) -> str:
    out = []
    for s in SHAPES:
        out += [
            f"\n{s}: per cell (k_P {KP_HIGH:g}; times from the walk start [s], pitch [rad] forward positive)",
            "| vx [m/s] | h [mm] | (a) P | (b) 0.35 P | (c) 0.35 P + FF | paper's result |",
            "|---|---|---|---|---|---|",
        ]
        for v in speeds:
            for h in (0, *HEIGHTS_MM):
                row = " | ".join(describe(cell(cells, c, s, h, v)) for c in CONTROLLERS)
                out.append(f"| {v:g} | {h} | {row} | {'yes' if h and paper(cells, s, h, v) else ''} |")
    if not supplement:
        return "\n".join(out)
    out += [
        f"\nsupplement, k_P {KP_CODE:g} (the authors' code's P = effort × 32) and 0.35 × {KP_CODE:g} + FF:",
        "| shape | vx [m/s] | h [mm] | (a) P 32 | (c) 11.2 + FF | paper's result |",
        "|---|---|---|---|---|---|",
    ]
    for s, h in (("flat", 0), *((s, 15) for s in SHAPES)):
        for v in speeds:
            a, c = (describe(cell(cells, k, s, h, v, KP_CODE)) for k in ("high", "ff"))
            mark = "yes" if h and paper(cells, s, h, v, KP_CODE) else ""
            out.append(f"| {s} | {v:g} | {h} | {a} | {c} | {mark} |")
    return "\n".join(out)


def energy(runs: dict, knees: tuple[str, str] | None = None, vx: float = ENERGY_VX) -> tuple[str, float, float]:
    """The 40-step table and (knee, all-joint) reductions 1 − E(c)/E(a) over the common whole steps; ``knees``
    (left, right): the robot's knee joints (default the NimbRo-OP's); ``vx`` [m/s]: the runs' speed, for the title."""
    from types import SimpleNamespace

    from servo_ff.bringup.op3_energy import MIN_STEPS, common_steps, energy_over
    from servo_ff.dynamics.nimbro_walk import NIMBRO_KNEES

    kn = knees or NIMBRO_KNEES

    r = {c: SimpleNamespace(joints=j, step_energy=e) for c, (j, e, _) in runs.items()}  # op3_energy's StepEnergy
    n = common_steps(list(r.values()))
    lines = [
        f"\nenergy on flat ground at {vx:.4g} m/s, ∫U·I dt over the first {n} whole steps (of "
        f"{ENERGY_STEPS}; paper: left knee {PAPER_KNEE[0]:g} → {PAPER_KNEE[1]:g} J over 40 steps, "
        f"{PAPER_KNEE[1] / PAPER_KNEE[0] - 1:+.0%})",
        "| controller | steps walked | left knee [J] | both knees [J] | all joints [J] |",
        "|---|---|---|---|---|",
    ]
    for c, (_, e, fell_at) in runs.items():
        walked = len(e) - 1
        if walked < n or n < 1:
            lines.append(f"| ({LABEL[c]}) | {walked} (fell at {fell_at:.2f} s) | | | |")
            continue
        left = energy_over(r[c], n, kn[:1])
        lines.append(f"| ({LABEL[c]}) | {walked} | {left:.1f} | {energy_over(r[c], n, kn):.1f} | "
                     f"{energy_over(r[c], n):.1f} |")  # fmt: skip
    if n < MIN_STEPS:
        return "\n".join(lines), math.nan, math.nan
    knee = 1 - energy_over(r["ff"], n, kn) / energy_over(r["high"], n, kn)
    total = 1 - energy_over(r["ff"], n) / energy_over(r["high"], n)
    lines.append(f"(c) against (a): knees {-knee:+.1%}, all joints {-total:+.1%} (paper, left knee: -26 %)")
    return "\n".join(lines), knee, total


def fig6b(cells: dict, path: str, speeds=SPEEDS, gait: str = "placo") -> str:
    """(a) and (c) on the 15 mm board at the slowest speed where (a) fell there (else the slowest): trunk pitch."""
    v = next((v for v in speeds if cell(cells, "high", "board", 15, v).fell), speeds[0])
    runs = {c: walk(c, N_STEPS, v, KP_HIGH, 15, "board", gait=gait) for c in ("high", "ff")}
    same = all(runs[c].fell == cell(cells, c, "board", 15, v).fell for c in runs)
    how = "its authors' CPG walk" if gait == "cpg" else "placo walk"
    title = f"NimbRo-OP (its authors' model) onto a 15 mm board at {v:g} m/s, ROS-free ({how}, MuJoCo)"
    plot_fig6b(runs, ("(a) k_P 53.1", "(c) 18.6 + FF"), title, path)
    return f"Fig. 6b (15 mm board, {v:g} m/s; the same outcomes as the cells: {same}): {shown(path)}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=1, help="processes (at most 2: the machine's cores are shared)")
    ap.add_argument("--perturb", action="store_true", help="the 15 mm cells' (a), (c) with the plan perturbed")
    ap.add_argument("--fig6b", default=str(ROOT / "docs" / "img" / "nimbro_fig6b.png"), help="Fig. 6b's PNG")
    a = ap.parse_args()
    if workers_refused("nimbro_obstacle.py", a.workers):
        return 2
    import pinocchio as pin

    from servo_ff.dynamics.nimbro_walk import NIMBRO_URDF

    mass = sum(i.mass for i in pin.buildModelFromUrdf(str(NIMBRO_URDF)).inertias)
    ks = keys()
    print(f"NimbRo-OP {mass:.3f} kg; {len(ks)} runs of {N_STEPS} steps + 3 of {ENERGY_STEPS}, {a.workers} worker(s), "
          f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores", flush=True)  # fmt: skip
    t0 = time.perf_counter()
    with ProcessPoolExecutor(a.workers, mp_context=get_context("spawn")) as pool:
        done = pool.map(run_energy, CONTROLLERS)
        cells = dict(zip(ks, pool.map(run_cell, ks)))
        runs = dict(zip(CONTROLLERS, done))
        if a.perturb:
            pk = [(c, s, 15, v, KP_HIGH) for s in SHAPES for v in SPEEDS for c in ("high", "ff")]
            grids = [g for _ in pk for g in (1e-5, 1e-7)]
            again = list(pool.map(run_cell, [k for k in pk for _ in (0, 1)], grids))
    wall = time.perf_counter() - t0
    print(tables(cells))
    text, knee, total = energy(runs)
    print(text)
    print(fig6b(cells, a.fig6b))
    k, n = paper_count(cells)
    free = [v for v in SPEEDS if not cell(cells, "high", "", 0, v).fell]
    any_way = sum(
        cell(cells, "high", s, 15, v).fell and not cell(cells, "ff", s, 15, v).fell for s in SHAPES for v in free
    )
    print(f"paper's result (pre-registered: (a) fell backwards after touching, (c) stood) in {k} of {n} 15 mm cells; "
          f"not pre-registered, for the record: (a) fell any way and (c) stood in {any_way} of {n}")  # fmt: skip
    falls = flat_falls(cells)
    print(f"wall time {wall:.0f} s, load average after {os.getloadavg()[0]:.2f}")
    extra = ""
    if a.perturb:
        held = sum(r.fell == cells[k].fell for k, r in zip([k for k in pk for _ in (0, 1)], again))
        print("\nthe plan perturbed (rounded to 1e-5 and 1e-7 instead of 1e-6), 15 mm, (a) and (c):")
        for i, key in enumerate(pk):
            print(f"  {key[1]} {key[3]:g} m/s ({LABEL[key[0]]}): {describe(cells[key])} | {describe(again[2 * i])} | "
                  f"{describe(again[2 * i + 1])}")  # fmt: skip
        print(f"stood/fell the same as in the cells in {held} of {len(again)} runs")
        extra = f" perturb_held={held}/{len(again)}"
    k32, n32 = paper_count(cells, KP_CODE)
    print(
        f"RESULT nimbro_mass_kg={mass:.3f} nimbro_flat_falls={falls} {ac_keys(cells, 'nimbro')} "
        f"nimbro_paper_result={k}/{n} "
        f"nimbro_knee_energy40_reduction={knee:.3f} nimbro_energy40_reduction={total:.3f} "
        f"nimbro_kp32_board15_ac={ac(cells, 'board', 15, KP_CODE)} "
        f"nimbro_kp32_box15_ac={ac(cells, 'foot_box', 15, KP_CODE)} "
        f"nimbro_kp32_paper_result={k32}/{n32}{extra}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
