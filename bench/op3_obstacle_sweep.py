"""Schwarz & Behnke's obstacle experiment on the OP3 as a map, not one cell (issue 21): stood or fell per controller,
obstacle shape, height and forward speed, ROS-free (``dynamics.walk_sim.simulate_walk``, the walk of the mission's
ROS-free figures and of ``tools/op3_obstacle_trace.py``).

Run: python bench/op3_obstacle_sweep.py [--workers 1] [--plot docs/img/op3_obstacle_sweep.png] [--perturb]
     [--scaled] [--fig6b docs/img/op3_scaled_fig6b.png]   (--scaled: only the flat runs and h*, no map plot)

The grid, fixed before any of its results was seen (nothing tuned; the gait, obstacles and controllers are the
mission's): controllers (a) high-gain P (k_P 800, the XM430 factory gain), (b) plain P at 0.35 of it (k_P 280), (c)
(b) + feed-forward; shapes ``board`` (0.4 m wide, 1 m long, across the path, placed at the walk start with both feet
down, its near edge 5 mm ahead of the soles) and ``foot_box`` (a box under the right foot at mid-swing of step 5,
3.40 s after the walk start); heights 0, 5, 10, 15 mm (0: flat ground, one run per speed and controller, shown in
both shapes' tables); forward speeds 0.02, 0.035, 0.05, 0.08 m/s (the paper's "very slow velocity" is not given;
the mission uses 0.05); 16 steps of the 0.48 s placo gait at every speed, ``simulate_walk``'s defaults otherwise
(0.48 s hold in the stance, 8 ms goals, 1 ms physics, quantisation 4096, latency 1 period). A fall: trunk tilt
> 0.6 rad (``walk_sim.FALL_TILT``); its direction is the larger of the trunk's pitch and roll at that moment
(back/fwd: pitch, forward positive; left/right: roll, positive to the right). Per cell: stood (trunk travel) or fell
(time from the walk start, direction), the first foot contact with the obstacle, and the minimum trunk pitch over
the walk (the plan's trunk lean is +0.12 rad; negative: leaning backwards). "pre": the fall came before any foot
touched the obstacle. The paper's contrast in a cell: (a) fell and (c) stood. ``--perturb`` (not part of the grid):
those cells' (a) and (c), and every (c) at 15 mm and at h*, again with the plan rounded to 1e-5 and 1e-7 instead of
1e-6 (``walk_sim.settled_plan``): whether stood/fell holds under a perturbation far below an encoder count.

The scaled height h* (``--scaled``; rule and h* fixed here, committed before any run at h*): the paper's 15 mm on
the NimbRo-OP is scaled to the OP3 by leg length, from the hip-pitch axis to the sole, legs straight (the zero pose).
NimbRo-OP: 0.440 m hip pitch to ankle pitch (thigh 0.220 + shank 0.220 m) + 0.039 m ankle axis to sole = 0.479 m,
from its authors' own model (``NimbRo/nimbro-op-ros`` a286de0, ``src/nimbro_robotcontrol/hardware/nimbro_op_model``:
``robots/nimbro_op.xml`` joints ``*_knee_pitch``/``*_ankle_pitch`` and ``include/nimbro_op_model/dimensions.h``
``ANKLE_Z_HEIGHT``; the same 0.44 m is the gait's ``legLength`` in ``motion/gait/src/gaitcode/RobotModel``). OP3:
0.25065 m (``urdf/op3.urdf``, Menagerie's op3.xml: 0.11015 + 0.110 + 0.0305 m). h* = 15 mm × 0.25065 / 0.479 =
7.85 mm (by standing height instead, 0.51 / 0.95 m: 8.05 mm; not used). Cells: (a), (b), (c) × board and box × h*
× the map's four speeds (24 runs; the flat runs are the map's), gait, steps, gains, placement and fall rule as the
map's. The paper's result in a cell: (a) fell backwards after its first foot touched the obstacle and (c) stood.
Counted per shape over the speeds at which (a) stood on flat ground (where (a) falls without an obstacle, its fall
is not the obstacle's doing); the paper's result holds at h* on a shape if it holds at every such speed, partly if
at some, not if at none; the board (both feet step onto it) is the paper's reading of the obstacle, the box is
reported beside it. Fig. 6b at h*: trunk pitch over time of (a) and (c) on the h* board at the slowest speed at
which (a) falls there, the first foot's touch of the board marked (``--fig6b PATH``, docs/img/op3_scaled_fig6b.png).
Last line: RESULT cells=… contrast=… contrast_a_back=… contrast_a_flat_stood=… a_stood=… b_stood=… c_stood=…
           flat_a_stood=… flat_c_stood=… board15_ac=… box15_ac=… (…_ac: per speed, slowest first, (a) then (c), S
           stood, F fell) scaled_h_mm=… scaled_board_ac=… scaled_box_ac=… scaled_board_paper=k/m
           scaled_box_paper=k/m (k: speeds with the paper's result, m: speeds at which (a) stood on flat ground)
           workers=… wall_s=… [perturb_held=…/…]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from _cases import workers_refused  # noqa: E402
from _op3_scaled import fig6b, h_star_mm  # noqa: E402 (bench/ helper; needs src on the path)
from _paths import shown  # noqa: E402

CONTROLLERS = ("high", "low", "ff")  # (a), (b), (c)
LABEL = {"high": "a", "low": "b", "ff": "c"}
GAIN = {"high": "k_P 800", "low": "k_P 280", "ff": "280 + FF"}
SHAPES = ("board", "foot_box")
HEIGHTS_MM = (0, 5, 10, 15)
SPEEDS = (0.02, 0.035, 0.05, 0.08)  # [m/s]
N_STEPS = 16
PERTURB_GRIDS = (1e-5, 1e-7)  # [rad, …] --perturb: other roundings of the plan (walk_sim.settled_plan)


@dataclass(frozen=True)
class Cell:
    controller: str
    shape: str  # "flat" for height 0
    height_mm: float
    vx: float  # [m/s]
    fell_at: float  # [s from the walk start] nan: stood
    direction: str  # back, fwd, left, right ("" when it stood)
    travel: float  # [m] trunk x from the walk start to the end or the fall
    t_touch: float  # [s from the walk start] first foot contact with the obstacle (nan: none)
    pitch_min: float  # [rad] minimum trunk pitch over the walk (forward positive)

    @property
    def fell(self) -> bool:
        return not math.isnan(self.fell_at)

    @property
    def pre(self) -> bool:
        """It fell before any foot touched the obstacle (on flat ground: never)."""
        return self.fell and self.height_mm > 0 and not (self.t_touch <= self.fell_at)


def direction(pitch: float, roll: float) -> str:
    """The fall's direction from the trunk's pitch (forward positive) and roll (positive to the right) [rad]."""
    if abs(pitch) >= abs(roll):
        return "back" if pitch < 0 else "fwd"
    return "right" if roll > 0 else "left"


def run_cell(
    key: tuple[str, str, float, float], plan_grid: float = 1e-6, gait: str = "placo", n_steps: int = N_STEPS
) -> Cell:
    """One ``simulate_walk`` of the grid: (controller, shape or "flat", height [mm], vx [m/s]); ``plan_grid``: the
    plan's rounding (``walk_sim.settled_plan``; 1e-6 is ``simulate_walk``'s, another one perturbs the plan);
    ``gait`` "robotis": ROBOTIS's own walk instead of placo's (``bench/op3_robotis_obstacle.py``, its rule); "cpg":
    Missura & Behnke's CPG scaled to the OP3 (``bench/op3_cpg_obstacle.py``, its rule); ``n_steps``: steps walked."""
    from servo_ff.dynamics.walk_sim import simulate_walk  # noqa: PLC0415 (in the worker)

    controller, shape, height_mm, vx = key
    r = simulate_walk(
        controller,
        n_steps,
        vx=vx,
        obstacle=height_mm / 1000,
        obstacle_shape="foot_box" if shape == "flat" else shape,
        plan_grid=plan_grid,
        **robotis_ready(vx, n_steps, gait),
    )
    ok = np.isfinite(r.pitch) & np.isfinite(r.roll)
    p, q = (r.pitch[ok], r.roll[ok]) if ok.any() else (np.array([math.nan]), np.array([math.nan]))
    way = direction(float(p[-1]), float(q[-1])) if r.fell and ok.any() else ("?" if r.fell else "")
    return Cell(controller, shape, height_mm, vx, r.fell_at, way, r.travel, r.t_touch, float(np.min(p)))


def robotis_ready(vx: float, n_steps: int, gait: str) -> dict:
    """``simulate_walk``'s extra arguments for ``gait``: none for "placo"; for "robotis" ROBOTIS's walk
    (``dynamics.op3_robotis_walk``) as ``ready``, the foot box at its step 5 (the right foot's third swing); for
    "cpg" the CPG scaled to the OP3 (``dynamics.op3_cpg``) at the gcv.x of ``vx``, the foot box at its step 4 (the
    right foot's third swing: the CPG starts with the right foot)."""
    if gait not in ("placo", "robotis", "cpg"):
        raise ValueError(f"gait must be 'placo', 'robotis' or 'cpg', got {gait!r}")
    if gait == "placo":
        return {}
    if gait == "cpg":
        from servo_ff.dynamics.nimbro_cpg import gcv_for_speed  # noqa: PLC0415
        from servo_ff.dynamics.op3_cpg import op3_config, op3_cpg_plan  # noqa: PLC0415
        from servo_ff.dynamics.walk_sim import OP3_URDF  # noqa: PLC0415

        cfg = op3_config(OP3_URDF)
        return {"ready": op3_cpg_plan(OP3_URDF, gcv_for_speed(vx, cfg), n_steps, cfg), "obstacle_step": 4}
    from servo_ff.dynamics.op3_robotis_walk import robotis_plan  # noqa: PLC0415
    from servo_ff.dynamics.walk_sim import OP3_URDF  # noqa: PLC0415

    w = robotis_plan(OP3_URDF, vx, n_steps)
    return {"ready": (w.plan, w.q_stand, w.step_period), "obstacle_step": 5}


def grid(heights_mm: tuple[float, ...], speeds: tuple[float, ...] = SPEEDS) -> list[tuple[str, str, float, float]]:
    """Every run of the grid over the obstacle heights ``heights_mm`` and ``speeds`` (the flat ones once)."""
    keys = [(c, "flat", 0, v) for v in speeds for c in CONTROLLERS]
    return keys + [(c, s, h, v) for s in SHAPES for v in speeds for h in heights_mm for c in CONTROLLERS]


def heights(cells: dict) -> list[float]:
    """The heights [mm] run, 0 (flat) first."""
    return sorted({k[2] for k in cells})


def cell(cells: dict, controller: str, shape: str, height_mm: float, vx: float) -> Cell:
    return cells[(controller, "flat" if height_mm == 0 else shape, height_mm, vx)]


def describe(c: Cell) -> str:
    if not c.fell:
        return f"stood {c.travel:.3f} m, min pitch {c.pitch_min:+.2f}"
    pre = ", pre" if c.pre else ""
    touch = f", touch {c.t_touch:.2f}" if not math.isnan(c.t_touch) else ""
    return f"fell {c.fell_at:.2f} s {c.direction}{pre}{touch}, min pitch {c.pitch_min:+.2f}"


def contrast(cells: dict, shape: str, h: float, v: float) -> bool:
    """(a) fell and (c) stood on ``shape`` ``h`` [mm] high at ``v`` [m/s]."""
    return cell(cells, "high", shape, h, v).fell and not cell(cells, "ff", shape, h, v).fell


def tables(cells: dict, speeds: tuple[float, ...] = SPEEDS) -> str:
    """Per shape: the detailed table (speed × height rows) and the compact map (a/b/c per cell)."""
    out, hs = [], heights(cells)
    for s in SHAPES:
        out.append(f"\n{s}: per cell (times from the walk start [s], pitch [rad] forward positive)")
        out.append("| vx [m/s] | h [mm] | (a) k_P 800 | (b) k_P 280 | (c) 280 + FF | (a) fell, (c) stood |")
        out.append("|---|---|---|---|---|---|")
        for v in speeds:
            for h in hs:
                row = [describe(cell(cells, c, s, h, v)) for c in CONTROLLERS]
                mark = "yes" if h and contrast(cells, s, h, v) else ""
                out.append(f"| {v:g} | {h} | " + " | ".join(row) + f" | {mark} |")
        out.append(f"\n{s}: map (S stood, F<direction> fell, * before touching the obstacle), a / b / c")
        out.append("| vx [m/s] | " + " | ".join(f"{h:g} mm" for h in hs) + " |")
        out.append("|---|" + "---|" * len(hs))
        for v in speeds:
            out.append(f"| {v:g} | " + " | ".join(short(cells, s, h, v) for h in hs) + " |")
    return "\n".join(out)


def short(cells: dict, shape: str, h: float, v: float) -> str:
    """The map's a / b / c entry of one cell (S stood, F<direction> fell, * before touching the obstacle)."""

    def one(c: Cell) -> str:
        return "S" if not c.fell else f"F{c.direction[:1].upper()}{'*' if c.pre else ''}"

    return " / ".join(one(cell(cells, c, shape, h, v)) for c in CONTROLLERS)


def plot(cells: dict, path: str) -> str:
    """Per shape, speed × height; a marker per controller: filled = stood, open = fell, with the fall's direction."""
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    hs = heights(cells)
    fig, axes = plt.subplots(1, len(SHAPES), figsize=(10, max(4.2, 1.0 + 0.8 * len(hs))), sharey=True)
    style = {"high": ("s", -0.27, "C3"), "low": ("^", 0.0, "C7"), "ff": ("o", 0.27, "C0")}
    for ax, s in zip(axes, SHAPES):
        for i, v in enumerate(SPEEDS):
            for j, h in enumerate(hs):
                if h and contrast(cells, s, h, v):
                    flat = cell(cells, "high", s, 0, v).fell  # (a) fell on flat ground too: hatched
                    box = plt.Rectangle((i - 0.45, j - 0.4), 0.9, 0.8, fc=(0.17, 0.63, 0.17, 0.15), ec="C2", lw=0)
                    if flat:
                        box.set_hatch("///")
                    ax.add_patch(box)
                for c, (m, dx, col) in style.items():
                    r = cell(cells, c, s, h, v)
                    ax.plot(i + dx, j, m, ms=10, color=col, mfc=col if not r.fell else "white", mew=1.5)
                    if r.fell:
                        mark = r.direction[:1].upper() + ("*" if r.pre else "")
                        ax.annotate(mark, (i + dx, j - 0.32), ha="center", fontsize=7)
        ax.set_xticks(range(len(SPEEDS)), [f"{v:g}" for v in SPEEDS])
        ax.set_yticks(range(len(hs)), [f"{h:g}" for h in hs])
        ax.set_xlim(-0.6, len(SPEEDS) - 0.4)
        ax.set_ylim(-0.6, len(hs) - 0.4)
        ax.set_xlabel("forward speed [m/s]")
        ax.set_title({"board": "board across the path", "foot_box": "box under the right foot"}[s])
    axes[0].set_ylabel("obstacle height [mm] (0: flat)")
    for c, (m, _, col) in style.items():
        axes[-1].plot([], [], m, color=col, label=f"({LABEL[c]}) {GAIN[c]}")
    axes[-1].plot(
        [],
        [],
        "o",
        color="k",
        mfc="white",
        label="open: fell (B, F, L, R: backwards, forwards,\nleft, right; *: before touching the obstacle)",
    )
    axes[-1].add_patch(
        plt.Rectangle(
            (0, 0), 0, 0, color="C2", alpha=0.15, label="(a) fell, (c) stood\n(hatched: (a) fell on flat ground too)"
        )
    )
    axes[-1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.suptitle("OP3, 16 steps of the placo walk onto an obstacle (ROS-free, MuJoCo): filled = stood")
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def ac(cells: dict, shape: str, h: float, speeds: tuple[float, ...] = SPEEDS) -> str:
    """(a) then (c) per speed, slowest first, S stood, F fell: e.g. "FS,FS,FF,FF"."""
    return ",".join("".join("F" if cell(cells, c, shape, h, v).fell else "S" for c in ("high", "ff")) for v in speeds)


def paper(cells: dict, shape: str, h: float, v: float) -> bool:
    """The paper's result in a cell: (a) fell backwards after its first foot touched the obstacle, (c) stood."""
    a = cell(cells, "high", shape, h, v)
    return a.fell and a.direction == "back" and not a.pre and not cell(cells, "ff", shape, h, v).fell


def paper_count(cells: dict, shape: str, h: float, speeds: tuple[float, ...] = SPEEDS) -> tuple[int, int]:
    """(speeds with the paper's result, speeds at which (a) stood on flat ground): k/m of the RESULT line."""
    free = [v for v in speeds if not cell(cells, "high", shape, 0, v).fell]
    return sum(paper(cells, shape, h, v) for v in free), len(free)


def scaled_result(cells: dict, h: float) -> str:
    """The RESULT keys of the h* cells (the rule in the docstring)."""
    (kb, mb), (kx, mx) = (paper_count(cells, s, h) for s in SHAPES)
    return (
        f"scaled_h_mm={h:g} scaled_board_ac={ac(cells, 'board', h)} scaled_box_ac={ac(cells, 'foot_box', h)} "
        f"scaled_board_paper={kb}/{mb} scaled_box_paper={kx}/{mx}"
    )


def result(cells: dict, workers: int, wall: float, h_star: float) -> str:
    """The last line: the map's keys (when its heights ran), the h* keys (when h* ran), workers and wall time."""
    tail = f"workers={workers} wall_s={wall:.0f}"
    scaled = scaled_result(cells, h_star) + " " if h_star in heights(cells) else ""
    if not set(HEIGHTS_MM) <= set(heights(cells)):
        return f"RESULT {scaled}{tail}"
    obst = [(s, h, v) for s in SHAPES for h in HEIGHTS_MM[1:] for v in SPEEDS]
    hits = [k for k in obst if contrast(cells, *k)]
    back = [k for k in hits if cell(cells, "high", *k).direction == "back"]
    flat_ok = [k for k in hits if not cell(cells, "high", k[0], 0, k[2]).fell]

    def stood(c: str) -> int:
        return sum(not cell(cells, c, *k).fell for k in obst)

    flat = {c: sum(not cell(cells, c, "", 0, v).fell for v in SPEEDS) for c in ("high", "ff")}
    return (
        f"RESULT cells={len(obst)} contrast={len(hits)} contrast_a_back={len(back)} "
        f"contrast_a_flat_stood={len(flat_ok)} a_stood={stood('high')} b_stood={stood('low')} c_stood={stood('ff')} "
        f"flat_a_stood={flat['high']}/{len(SPEEDS)} flat_c_stood={flat['ff']}/{len(SPEEDS)} "
        f"board15_ac={ac(cells, 'board', 15)} box15_ac={ac(cells, 'foot_box', 15)} {scaled}{tail}"
    )


def scaled_table(cells: dict, h: float) -> str:
    """Per shape and speed at h*: (a) and (c), whether (a) stood on flat ground, and the paper's result."""
    out = [f"\nh* = {h:g} mm: the paper's result ((a) fell backwards after touching, (c) stood)"]
    out += ["| shape | vx [m/s] | (a) k_P 800 | (c) 280 + FF | (a) on flat ground | paper's result |", "|" + "---|" * 6]
    for s in SHAPES:
        for v in SPEEDS:
            a, c, flat = (cell(cells, k, s, hh, v) for k, hh in (("high", h), ("ff", h), ("high", 0)))
            free = "fell" if flat.fell else "stood"
            mark = "yes" if paper(cells, s, h, v) else ("(not counted)" if flat.fell else "no")
            out.append(f"| {s} | {v:g} | {describe(a)} | {describe(c)} | {free} | {mark} |")
    return "\n".join(out)


def run_all(keys: list, grids: list[float], workers: int) -> list[Cell]:
    """``run_cell`` over ``keys`` and ``grids`` (pairwise) in ``workers`` processes."""
    if workers == 1:
        return list(map(run_cell, keys, grids))
    with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
        return list(pool.map(run_cell, keys, grids))


def perturb(cells: dict, workers: int, h_star: float) -> tuple[str, int, int]:
    """The contrast cells' (a) and (c) and every (c) at 15 mm and at h* (of the heights run) again with the plan
    rounded to each of PERTURB_GRIDS: (table, runs whose stood/fell held, runs)."""
    obst = [(s, h, v) for s in SHAPES for h in heights(cells)[1:] for v in SPEEDS]
    keys = [("high", *k) for k in obst if contrast(cells, *k)]
    keys += [("ff", *k) for k in obst if contrast(cells, *k) or k[1] in (15, h_star)]
    runs = [(k, g) for k in keys for g in PERTURB_GRIDS]
    done = dict(zip(runs, run_all([k for k, _ in runs], [g for _, g in runs], workers)))
    lines = [
        "| controller | shape | h [mm] | vx [m/s] | plan 1e-6 (the map) | "
        + " | ".join(f"plan {g:g}" for g in PERTURB_GRIDS)
        + " |",
        "|---|---|---|---|---|" + "---|" * len(PERTURB_GRIDS),
    ]
    held = 0
    for k in keys:
        base = cells[k]
        others = [done[(k, g)] for g in PERTURB_GRIDS]
        held += sum(o.fell == base.fell for o in others)
        lines.append(
            f"| ({LABEL[k[0]]}) | {k[1]} | {k[2]} | {k[3]:g} | {describe(base)} | "
            + " | ".join(describe(o) for o in others)
            + " |"
        )
    return "\n".join(lines), held, len(runs)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=1, help="processes (at most 2: the machine's cores are shared)")
    ap.add_argument("--plot", help="the map's plot (default docs/img/op3_obstacle_sweep.png; none with --scaled)")
    ap.add_argument(
        "--perturb",
        action="store_true",
        help="re-run the contrast cells and (c) at 15 mm and h* with the plan perturbed",
    )
    ap.add_argument("--scaled", action="store_true", help="only the flat runs and the h* cells (not the map's heights)")
    ap.add_argument("--fig6b", default=str(ROOT / "docs" / "img" / "op3_scaled_fig6b.png"), help="Fig. 6b at h*")
    a = ap.parse_args()
    if workers_refused("op3_obstacle_sweep.py", a.workers):
        return 2
    h_star = h_star_mm()
    hs = (h_star,) if a.scaled else tuple(sorted((*HEIGHTS_MM[1:], h_star)))
    keys = grid(hs)
    print(
        f"h* = {h_star:g} mm (the paper's 15 mm on the NimbRo-OP, scaled by leg length hip pitch to sole)\n"
        f"{len(keys)} runs ({N_STEPS} steps each; speeds {', '.join(f'{v:g}' for v in SPEEDS)} m/s; heights "
        f"0, {', '.join(f'{h:g}' for h in hs)} mm), {a.workers} worker(s), load average {os.getloadavg()[0]:.2f} "
        f"on {os.cpu_count()} cores",
        flush=True,
    )
    t0 = time.perf_counter()
    cells = dict(zip(keys, run_all(keys, [1e-6] * len(keys), a.workers)))
    wall = time.perf_counter() - t0
    print(tables(cells))
    print(scaled_table(cells, h_star))
    path = a.plot or (None if a.scaled else str(ROOT / "docs" / "img" / "op3_obstacle_sweep.png"))
    if path:
        print(f"\nplot: {shown(plot(cells, path))}")
    slow = next((v for v in SPEEDS if cell(cells, "high", "board", h_star, v).fell), None)
    if slow is None:
        print(f"Fig. 6b: (a) stood on the {h_star:g} mm board at every speed; no plot")
    else:
        path, runs = fig6b(h_star, slow, N_STEPS, a.fig6b)
        same = all(runs[c].fell == cell(cells, c, "board", h_star, slow).fell for c in runs)
        print(f"Fig. 6b ({h_star:g} mm board, {slow:g} m/s; the same outcomes as the cells: {same}): {shown(path)}")
    print(f"wall time {wall:.0f} s, load average after {os.getloadavg()[0]:.2f}")
    extra = ""
    if a.perturb:
        table, held, n = perturb(cells, a.workers, h_star)
        print(f"\nthe plan perturbed (rounded to {' and '.join(f'{g:g}' for g in PERTURB_GRIDS)} instead of 1e-6):")
        print(table)
        print(f"stood/fell the same as in the map in {held} of {n} runs")
        extra = f" perturb_held={held}/{n}"
    print(result(cells, a.workers, wall, h_star) + extra)
    return 0


if __name__ == "__main__":
    sys.exit(main())
