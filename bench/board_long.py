"""The pre-registered *board_long* experiment (issue 21, ROS-free): the CPG benches' board cells at their slowest
speed, (a) and (c), walked long enough to get both soles onto the board; the PROPOSAL at the end of
docs/experiments.md's "Why (c) stands short of the 15 mm board" (commit 7ede890), implemented as written.

Run: python bench/board_long.py [--robots nimbro,op3] [--perturb]

The rule (the proposal's, quoted in docs/experiments.md; nothing here is tuned): the walks of
``bench/board_contact.py`` (``board_contact.run``: the cells' own ``simulate_walk`` arguments, the CPG scaled to the
OP3 at gcv 0.312, 0.0177 m/s, and the NimbRo-OP's CPG at 0.025 m/s; (a) high-gain P, (c) low-gain P + feed-forward,
the benches' gains, 0.48 s hold, fall rule tilt > 0.6 rad; the board 0.4 × 1 m, placed at the walk start with both
feet down, its near edge x_e 5 mm ahead of the soles) with two changes: the board's height h, 15 mm (NimbRo-OP) and
h* = 7.85 mm (OP3, ``_op3_scaled.h_star_mm``), and n steps commanded, n = 2·⌈(L_sole + 25 mm) / (2·d)⌉ + 4.

This implementation's reading, fixed before the first run:

* n from the proposal's own figures: NimbRo-OP L_sole 0.2085 m, d 8.8 mm → 32; OP3 L_sole 0.127 m, d 4.4 mm → 40.
  As a check (not used): d measured as the 16-step plan's CoM x advance over its 18 steps (4.37 mm OP3, 8.80 mm
  NimbRo-OP) and L_sole from the model (the foot's colliding boxes, toe − heel at the walk start: 127.0 mm, 208.0 mm)
  give the same n; the bench prints both and says so if they ever differ.
* "steps commanded": the CPG's n, then the stop it makes by itself (n + 2 steps in the plan) and its 0.5 s halt, as
  the benches' 16.
* "at the end": the run's last control period (the plan's end; for a fall, the period at which the tilt passed
  0.6 rad: the flag is printed there too but a fall is not "stood and on top").
* "heel": the rearmost x of the foot's colliding boxes (``dynamics.board_contact.body_over``'s ``rear``), "past the
  edge": > x_e; "sole's lowest corner": the lowest z of those boxes' corners (``z_low``) ≥ h − 2 mm; both feet.
* "fell backwards after touching": the benches' rule (``op3_obstacle_sweep.direction``: the larger of trunk pitch
  and roll at the fall, pitch < 0 back) and a foot's first board contact (``WalkRun.t_touch``) at or before the fall.
* The paper's result in a cell (one cell per robot: NimbRo-OP 15 mm, OP3 h*): (a) fell backwards after touching and
  (c) stood and is on top; ``boardlong_paper_result=k/2``. The proposal excludes no cell: (a) and (c) walking the
  same n steps on flat ground are run and printed as context only (whether a fall is the board's doing), not counted.

Printed per robot × controller: stood/fell (time, direction), on top (both heels − x_e [mm], both soles' lowest
corners [mm]), trunk travel, and ``board_contact``'s per-swing table (every swing; its columns are in that bench's
docstring), first contacts and median lifts; then the flat runs and a summary table.

Last line: RESULT boardlong_nimbro_a=… boardlong_nimbro_c=… boardlong_op3_a=… boardlong_op3_c=…
boardlong_paper_result=k/2 (per run: S stood or F<B|F|L|R> fell with its direction, then ``/top`` or ``/not_top``).

``--perturb`` (added after the run, not part of the rule): only the board runs again, with the plan rounded to 1e-5
and 1e-7 rad instead of 1e-6 (``walk_sim.settled_plan``, as ``op3_obstacle_sweep.py --perturb``): whether each run's
key holds under a perturbation far below an encoder count; last line RESULT boardlong_perturb_held=k/m
boardlong_perturb_paper_result=… (per grid).

Addendum (r3s10, after the runs, not part of the rule): since the placed CoM's support-change fix the check's d is
4.49 / 8.97 mm (OP3 / NimbRo-OP) and the OP3's check gives n = 38: printed as DIFFERS, not used; the rule's n is the
proposal's 40.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "src"))

import board_contact as bc  # noqa: E402 (the diagnosis' walks, probe and per-swing table)
import nimbro_cpg_obstacle as nc  # noqa: E402 (its speeds)
import op3_cpg_obstacle as oc  # noqa: E402 (its speeds)
import op3_obstacle_sweep as sw  # noqa: E402 (the fall's direction)
from _op3_scaled import h_star_mm  # noqa: E402

MARGIN = 0.025  # [m] the proposal's 25 mm past the sole's length
TOP_TOL = 0.002  # [m] on top: soles' lowest corners ≥ h − this
#: the proposal's figures per robot: board height h [m], L_sole [m], d [m], and the n it states
RULE = {"nimbro": (0.015, 0.2085, 0.0088, 32), "op3": (h_star_mm() / 1000, 0.127, 0.0044, 40)}
NAME = {"nimbro": "NimbRo-OP", "op3": "OP3"}
PERTURB_GRIDS = (1e-5, 1e-7)  # [rad] --perturb: other roundings of the plan (1e-6: the benches')


def steps_commanded(sole: float, d: float) -> int:
    """n = 2·⌈(L_sole + 25 mm) / (2·d)⌉ + 4, L_sole and d [m] (d: CoM advance per step)."""
    return 2 * math.ceil((sole + MARGIN) / (2 * d)) + 4


def speed(robot: str) -> float:
    """[m/s] the CPG bench's slowest speed (gcv 0.312)."""
    return oc.SPEEDS[0] if robot == "op3" else nc.SPEEDS[0]


def plan_advance(robot: str) -> float:
    """[m] d measured: the 16-step plan's CoM x advance divided by its steps (with the gait's own stop)."""
    plan = bc.walk_args(robot, speed(robot))["ready"][0]
    return float(plan.com[-1, 0] - plan.com[0, 0]) / len(plan.steps)


@dataclass(frozen=True)
class Outcome:
    """One board run's outcome by the proposal's rule."""

    fell_at: float  # [s from the walk start] nan: stood
    direction: str  # back, fwd, left, right ("" when it stood)
    t_touch: float  # [s] first board contact (nan: none)
    heels: tuple[float, float]  # [m] left, right heel − x_e at the end
    lows: tuple[float, float]  # [m] left, right sole's lowest corner at the end
    travel: float  # [m] trunk x from the walk start
    on_top: bool

    @property
    def fell(self) -> bool:
        return not math.isnan(self.fell_at)

    def key(self) -> str:
        """``S`` or ``F<direction letter>``, then ``/top`` or ``/not_top``."""
        return ("S" if not self.fell else "F" + self.direction[:1].upper()) + ("/top" if self.on_top else "/not_top")


def outcome(r, p: bc.Probe, h: float) -> Outcome:
    """The proposal's outcome of a board run (``simulate_walk``'s WalkRun, the probe) on a board ``h`` [m] high."""
    ok = np.isfinite(r.pitch) & np.isfinite(r.roll)
    way = sw.direction(float(r.pitch[ok][-1]), float(r.roll[ok][-1])) if r.fell and ok.any() else ""
    end = p.rows[-1][3]  # both feet (Over) as walked at the last control period
    heels = (end[0].rear - p.edge, end[1].rear - p.edge)
    lows = (end[0].z_low, end[1].z_low)
    on = all(x > 0 for x in heels) and all(z >= h - TOP_TOL for z in lows)
    return Outcome(r.fell_at, way, r.t_touch, heels, lows, r.travel, on)


def paper(a: Outcome, c: Outcome) -> bool:
    """The paper's result in a cell: (a) fell backwards after touching, (c) stood and on top."""
    return a.fell and a.direction == "back" and a.t_touch <= a.fell_at and not c.fell and c.on_top


def describe(o: Outcome) -> str:
    """One line: stood/fell, touch, on top with its figures, travel."""
    what = "stood" if not o.fell else f"fell at {o.fell_at:.2f} s, {o.direction}"
    touch = "no board contact" if math.isnan(o.t_touch) else f"first touch {o.t_touch:.2f} s"
    heels = " / ".join(f"{1e3 * x:+.1f}" for x in o.heels)
    lows = " / ".join(f"{1e3 * z:.1f}" for z in o.lows)
    return (f"{what}; {touch}; on top: {'yes' if o.on_top else 'no'} (heels − edge L/R {heels} mm, soles' lowest "
            f"corners L/R {lows} mm); trunk travel {1e3 * o.travel:+.1f} mm")  # fmt: skip


def perturbed(robots: list[str]) -> str:
    """``--perturb`` (module docstring): one line per board run and grid, then the RESULT line."""
    from servo_ff.dynamics.walk_sim import simulate_walk  # noqa: PLC0415

    base = {(r, tag): None for r in robots for tag in "ac"}
    out, held, count, papers = [], 0, 0, []
    for grid in (1e-6, *PERTURB_GRIDS):
        done = {}
        for robot, tag in base:
            h, sole, d, _ = RULE[robot]
            args = {**bc.walk_args(robot, speed(robot), steps_commanded(sole, d)), "plan_grid": grid}
            probe = bc.Probe(args["ready"][0], True)
            controller = "high" if tag == "a" else "ff"
            r = simulate_walk(controller, obstacle=h, obstacle_shape="board", probe=probe, **args)
            done[robot, tag] = o = outcome(r, probe, h)
            if grid == 1e-6:
                base[robot, tag] = o.key()
                continue
            count += 1
            held += o.key() == base[robot, tag]
            out.append(f"{robot} ({tag}) plan grid {grid:g}: {o.key()} (at 1e-6: {base[robot, tag]}); {describe(o)}")
        if grid != 1e-6:
            papers.append(f"{sum(paper(done[r, 'a'], done[r, 'c']) for r in robots)}/{len(robots)}")
    return (
        "\n".join(out)
        + f"\n\nRESULT boardlong_perturb_held={held}/{count} "
        + (f"boardlong_perturb_paper_result={','.join(papers)}")
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--robots", default="nimbro,op3", help="comma-separated: nimbro, op3")
    ap.add_argument("--perturb", action="store_true", help="only the board runs under other plan roundings")
    a = ap.parse_args()
    robots = [x for x in a.robots.split(",") if x]
    bad = [x for x in robots if x not in RULE]
    if bad:
        print(f"board_long.py: --robots: unknown {', '.join(bad)} (nimbro, op3)", file=sys.stderr)
        return 2
    if a.perturb:
        print(perturbed(robots))
        return 0
    keys, summary, done = [], [], {}
    for robot in robots:
        h, sole, d, stated = RULE[robot]
        n, vx = steps_commanded(sole, d), speed(robot)
        if n != stated:
            print(f"board_long.py: {robot}: the formula gives n = {n}, the proposal states {stated}", file=sys.stderr)
            return 1
        d_plan = plan_advance(robot)
        print(f"\n### {NAME[robot]}: board {1e3 * h:.2f} mm, {vx:.4f} m/s, n = 2·⌈({1e3 * sole:.1f} + 25) / "
              f"(2·{1e3 * d:.1f})⌉ + 4 = {n} steps commanded (check: d from the 16-step plan "
              f"{1e3 * d_plan:.2f} mm)")  # fmt: skip
        for c, tag in (("high", "a"), ("ff", "c")):
            r, p = bc.run(robot, c, vx, True, height=h, n_steps=n)
            o = outcome(r, p, h)
            feet = [o_.front - o_.rear for o_ in p.rows[0][3]]
            n_model = steps_commanded(max(feet), d_plan)
            check = "the same n" if n_model == n else f"n = {n_model}: DIFFERS from the rule's"
            rows = bc.swings(p)
            print(f"\n{robot} ({tag}) {vx:.4f} m/s, {1e3 * h:.2f} mm board, {n} steps: {describe(o)}; edge x "
                  f"{1e3 * p.edge:.1f} mm; sole length from the model {1e3 * max(feet):.1f} mm ({check})")  # fmt: skip
            print("first contacts: " + "; ".join(bc.first_contacts(p)))
            print(bc.table(rows, len(rows)))
            med = " / ".join(f"{np.median([x[f'lift_{k}'] for x in rows]):.1f}" for k in bc.VARIANTS)
            top = sum("t" in x["faces"].split("/")[0] for x in rows)
            print(f"median lift over the swings, {'/'.join(bc.VARIANTS)}: {med} mm; swings touching the top {top}/"
                  f"{len(rows)}")  # fmt: skip
            fr, _ = bc.run(robot, c, vx, False, n_steps=n)
            flat = "stood" if not fr.fell else f"fell at {fr.fell_at:.2f} s"
            print(f"flat ground, the same {n} steps (context, not counted): {flat}, trunk travel "
                  f"{1e3 * fr.travel:+.1f} mm (the plan's CoM {1e3 * fr.planned:+.1f} mm)")  # fmt: skip
            done[robot, tag] = o
            keys.append(f"boardlong_{robot}_{tag}={o.key()}")
            summary.append(f"| {NAME[robot]} | {1e3 * h:.2f} | {n} | ({tag}) | {o.key()} | {describe(o)} | {top}/"
                           f"{len(rows)} | {flat} |")  # fmt: skip
    print("\n| robot | board [mm] | n | controller | key | outcome | swings on the top | flat, same n |")
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(summary))
    k = sum(paper(done[r, "a"], done[r, "c"]) for r in robots)
    print(f"\nRESULT {' '.join(keys)} boardlong_paper_result={k}/{len(robots)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
