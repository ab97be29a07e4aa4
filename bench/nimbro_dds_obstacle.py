"""Schwarz & Behnke's obstacle experiment (seed 002 §5.2, Fig. 6) on the NimbRo-OP with its authors' CPG gait over DDS,
against the ROS-free bench of the same rule (bench/nimbro_cpg_obstacle.py), issue 21 item 5.

Run: python bench/nimbro_dds_obstacle.py [--fig6b docs/img/nimbro_dds_fig6b.png] [--only board:15] [--halt-start]

``--only`` runs the cells whose "shape:height:speed" contains it (no RESULT line); ``--halt-start`` (a diagnostic
added after the rule had been run, not part of it): the sim node starts in the CPG's halt pose (``initial_position``)
instead of its own start pose, so that the DDS start is the ROS-free one (the approach then moves nothing).

Pre-registered (this docstring was committed before any DDS obstacle run; nothing below is tuned). The rule of
bench/nimbro_cpg_obstacle.py as committed in 7b2f983, run over DDS:

* Graph: the walking mission's (``bringup.op3_mission.run_op3``: MuJoCo sim node, feed-forward node, walk node in one
  harness, lockstep on the sim's ``/clock``, stamped goals) built for the NimbRo-OP from its bring-up YAML
  (``bringup.robot_graph.bringup_graph("sim_nimbro_op", NIMBRO_KNEES, gait="cpg")``: config/sim_nimbro_op.yaml's
  nodes as ``servo-ff up sim_nimbro_op gait:=cpg`` gives them, α̂ from the servo file; urdf/nimbro_op.urdf,
  config/servos_nimbro_op.yaml, 125 Hz, 1 ms physics, 4096 counts/rev, 1 period of latency). The walk node runs
  ``gait: nimbro_cpg`` (``CpgConfig()``'s defaults, the same as the ROS-free plan's) under ``cmd_vel`` linear.x = vx,
  published before the walk starts.
* Cells: the rule's, all of them (the grid is small enough for one process: 45 runs): flat ground, then ``board`` and
  ``foot_box`` at 5 and 15 mm; speeds 0.025, 0.05 and 0.080 m/s (gcv.x 1); controllers (a) high-gain P k_P 53.125,
  (b) 0.35 of it (18.6), (c) (b) + feed-forward. Not run: the k_P 32 supplement and the energy (over DDS in
  bench/nimbro_dds_energy.py).
* Steps: 16 commanded, then the command withdrawn: cmd_vel 0 published so that the engine latches 0 at the same phase
  centre as the ROS-free plan's withdrawal (at the middle of step 16 less the walk node's look-ahead, horizon + 4
  ticks + half a publish_period, the time its engine ticks ahead of the sim's clock). Corrected from "the start of
  step 18: at the middle of step 17" after a smoke run (board 15 mm at 0.025 and 0.05 m/s, 6 cells) and 8 flat cells
  of an aborted full run had been seen: the plan latches 0 at the tick after step 17's start, and the walk node's
  desired pose strayed from the plan's by 0.04 rad after it; the principle unchanged, every cell re-run. The run
  ends when the ROS-free plan ends (its halt + 0.5 s). One difference is known before running: the walk node never
  halts (with cmd_vel 0 it steps in place, gcv sloping to 0), where the plan halts once gcv < 0.1 at a phase centre;
  the start differs too (DDS: 0.5 s, then a 2 s approach from the sim's start pose to the halt pose; ROS-free: 0.48 s
  held in the halt pose).
* Obstacles, placed in the sim node as the OP3 mission does (``obstacle_shape`` set at start, ``obstacle_height`` set
  in the sim's period tap): the board (0.4 × 1 m across the path, its near edge 5 mm ahead of the soles) at the walk
  start with both feet down; the foot box under the right foot at the middle of its third swing (the CPG's step 4,
  ``robot_graph.step_times``, the same time as the ROS-free plan's).
* Stood / fell: a fall is a trunk tilt > 0.6 rad (the sim's ``imu/data``), its direction the larger of pitch and roll
  at that moment; the first touch: the first period after which a foot's geom is in contact with the obstacle.
* The paper's result in a cell: (a) fell backwards after its first foot touched the obstacle and (c) stood.
  ``dds_cpg_paper_result=k/n``: over the 15 mm cells of both shapes at the speeds at which (a) stood on flat ground
  over DDS (n), those with the paper's result (k).
* What is compared: each of the 45 cells against the ROS-free bench's same cell (``nimbro_obstacle.run_cell`` with the
  CPG, recomputed in the same run): it agrees if both stood, or both fell in the same direction;
  ``agree_with_rosfree=k/45``. Diagnostic, not the comparison: the same against the ROS-free walk sampled as the
  nodes sample it (``simulate_walk(desired="walk_node")``): ``agree_with_rosfree_walknode=k/45``. Where DDS and
  ROS-free disagree, the cause is looked for (sampling, latency, contact timing, the stop) and reported, not fixed
  here by changing the rule.
* Fig. 6b over DDS: trunk pitch of (a) and (c) on the 15 mm board at the slowest speed at which DDS (a) falls there
  (0.025 m/s if it stands at all three), the first touch marked (docs/img/nimbro_dds_fig6b.png), from the cells' runs.

Addendum (2026-11-26, tenth session; committed before the re-run): the walk node now has a halt (cmd_vel
``angular.x = -1``, its engine's ``set_halt``: ``gait_tick``'s None, exactly the plan's withdrawal). The withdrawal
is now that halt, published at the same time as cmd_vel 0 was (``run_op3(withdraw=True)``), so the DDS walk halts
at a phase centre once gcv < 0.1 and stands in the halt pose as the plan does: the known difference named above
("the walk node never halts") is gone. Everything else of the rule is unchanged; every cell is re-run and reported
against the previous RESULT line (dds_cpg_flat_falls=none dds_cpg_board15_ac=FS,FF,FF dds_cpg_box15_ac=FF,FF,FF
dds_cpg_board5_ac=SS,SS,SS dds_cpg_box5_ac=SS,SS,SS dds_cpg_paper_result=1/6 agree_with_rosfree=45/45
agree_with_rosfree_walknode=45/45), cell by cell where anything differs. Reported, not part of the rule: the halt
itself, the trunk's pitch range over the run's last 0.5 s (in the halt pose) of the cells that stood, DDS against
the ROS-free plan's (a ``HALT`` line before the RESULT line).

Last line: RESULT dds_cpg_flat_falls=… dds_cpg_board15_ac=… dds_cpg_box15_ac=… dds_cpg_board5_ac=… dds_cpg_box5_ac=…
(per speed, slowest first, (a) then (c), S stood, F fell) dds_cpg_paper_result=k/n agree_with_rosfree=k/n
agree_with_rosfree_walknode=k/n rtf=… (the DDS runs' sim s / wall s) load=… (the 1-min load average after the runs)
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import nimbro_cpg_obstacle as ncpg  # the ROS-free CPG bench's speeds (it puts src/ on sys.path via nimbro_obstacle)
import nimbro_obstacle as nb  # the cells' tables, ac, paper's result
import numpy as np
from _op3_scaled import plot_fig6b
from _paths import shown
from op3_obstacle_sweep import Cell, describe, direction

ROOT = Path(__file__).resolve().parents[1]
SPEEDS = ncpg.SPEEDS  # [m/s] 0.025, 0.05, 0.080 (gcv.x 1)
OBSTACLE_STEP = 4  # the CPG's step 4: the right foot's third swing


def keys() -> list[tuple[str, str, float, float, float]]:
    """The 45 pre-registered cells: flat, then each shape and height, per speed and controller."""
    out = [(c, "flat", 0, v, nb.KP_HIGH) for v in SPEEDS for c in nb.CONTROLLERS]
    return out + [
        (c, s, h, v, nb.KP_HIGH) for s in nb.SHAPES for h in nb.HEIGHTS_MM for v in SPEEDS for c in nb.CONTROLLERS
    ]


class Probe:
    """The bench's per-period tap (run_op3's ``tap``): trunk pitch and roll, the first touch of the obstacle, the pitch
    and roll at the fall, and how far the walk node's desired pose strays from the ROS-free plan's before its halt."""

    def __init__(self, plan, t_halt: float):
        self.plan, self.t_halt = plan, t_halt  # plan: the ROS-free WalkPlan of this speed; [s] its halt
        self.dt = float(plan.t[1] - plan.t[0])  # [s] its grid (the engine's tick)
        self.t, self.pitch, self.roll = [], [], []
        self.t_touch, self.at_fall, self.gait_err = math.nan, None, 0.0
        self.cols: list[int] | None = None

    def __call__(self, t: float, quat, sim, walk) -> None:
        from servo_ff.bringup.mission import FALL_TILT
        from servo_ff.dynamics.walk_balance import trunk_pitch_roll
        from servo_ff.dynamics.walk_sim import touches

        pitch, roll = trunk_pitch_roll(quat)
        self.t.append(t)
        self.pitch.append(pitch)
        self.roll.append(roll)
        x, y = quat[0], quat[1]
        if self.at_fall is None and 1.0 - 2.0 * (x * x + y * y) < math.cos(FALL_TILT):
            self.at_fall = (pitch, roll)
        sv = sim.servos
        if math.isnan(self.t_touch) and touches(sv.model, sv.data, int(sv.model.geom("obstacle").id), sv.sim.feet):
            self.t_touch = t
        k = round(t / self.dt)  # the plan's samples before its halt (the halt snaps its phase to the centre)
        if k * self.dt < self.t_halt - 0.5 * self.dt:
            if self.cols is None:
                self.cols = [self.plan.joints.index(j) for j in walk.joints]
            t1 = math.ceil((walk.t_walk - 1e-9) / self.dt) * self.dt  # the engine's first tick (the node's dt grid)
            q = walk.desired(t1 + k * self.dt)
            self.gait_err = max(self.gait_err, float(np.max(np.abs(q - self.plan.q[k, self.cols]))))


def plans() -> dict[float, tuple]:
    """Per speed: (the ROS-free CPG plan of the rule's steps, [s] its halt)."""
    from servo_ff.dynamics.nimbro_cpg import CpgConfig, gcv_for_speed
    from servo_ff.dynamics.nimbro_cpg_plan import cpg_plan, gait_states
    from servo_ff.dynamics.nimbro_walk import NIMBRO_URDF

    out = {}
    for v in SPEEDS:
        g = gcv_for_speed(v, CpgConfig())
        s = gait_states(g, nb.N_STEPS, CpgConfig())
        plan = cpg_plan(NIMBRO_URDF, g, nb.N_STEPS).plan
        out[v] = (plan, float(s.t[np.argmin(s.walking)]))
    return out


def run_dds(key, plan, t_halt: float, salt: int, halt_start: bool = False):
    """One DDS run of cell ``key`` → (Cell, Probe, Op3Result); ``halt_start``: the sim starts in the CPG's halt pose
    (its ``initial_position``), not in its own start pose (a diagnostic, not the rule)."""
    from servo_ff.bringup.op3_mission import run_op3
    from servo_ff.bringup.robot_graph import bringup_graph
    from servo_ff.dynamics.nimbro_walk import NIMBRO_KNEES

    controller, shape, h, vx, kp = key
    probe, graph = Probe(plan, t_halt), bringup_graph("sim_nimbro_op", NIMBRO_KNEES, gait="cpg")
    if halt_start:
        from servo_ff.dynamics.nimbro_cpg_engine import CpgEngine
        from servo_ff.dynamics.nimbro_walk import NIMBRO_URDF

        stand = dict(zip(plan.joints, CpgEngine(NIMBRO_URDF).q_stand))
        graph = replace(graph, sim={**graph.sim, "initial_position": [float(stand[j]) for j in graph.sim["joints"]]})
    r = run_op3(
        controller, n_steps=nb.N_STEPS, vx=vx, obstacle=h / 1000, obstacle_step=OBSTACLE_STEP, kp_high=kp,
        robot=graph, salt=salt, log=lambda _: None, obstacle_shape="foot_box" if shape == "flat" else shape,
        withdraw=True, tap=probe,
    )  # fmt: skip
    end = r.fell_at if r.fell else float(plan.t[-1])  # the taps go on until the harness stops: the run's end
    n = int(np.searchsorted(probe.t, end, side="right"))
    del probe.t[n:], probe.pitch[n:], probe.roll[n:]
    touch = probe.t_touch if probe.t_touch <= end else math.nan
    way = direction(*probe.at_fall) if r.fell and probe.at_fall else ("?" if r.fell else "")
    pmin = float(np.min(probe.pitch)) if probe.pitch else math.nan
    return Cell(controller, shape, h, vx, r.fell_at, way, r.travel, touch, pmin), probe, r


def still(t, pitch, fell: bool, last: float = 0.5) -> float:
    """[rad] the trunk pitch's range over the run's ``last`` [s] (the halt pose); NaN for a run that fell."""
    t, pitch = np.asarray(t), np.asarray(pitch)
    if fell or not len(t):
        return math.nan
    w = pitch[t >= t[-1] - last]
    return float(np.ptp(w))


def rosfree(key, desired: str = "plan") -> tuple[Cell, float]:
    """The ROS-free bench's cell ``key`` (``nb.run_cell`` with the CPG) and its :func:`still`."""
    controller, shape, h, vx, kp = key
    where = "foot_box" if shape == "flat" else shape
    r = nb.walk(controller, nb.N_STEPS, vx, kp, h, where, gait="cpg", desired=desired)
    return nb.cell_of(key, r), still(r.t, r.pitch, r.fell)


def same(a: Cell, b: Cell) -> bool:
    """Both stood, or both fell the same way."""
    return a.fell == b.fell and a.direction == b.direction


def fig6b(cells: dict, probes: dict, path: str) -> str:
    """(a) and (c) over DDS on the 15 mm board at the slowest speed where (a) fell there (else the slowest)."""
    v = next((v for v in SPEEDS if nb.cell(cells, "high", "board", 15, v).fell), SPEEDS[0])
    runs = {}
    for c in ("high", "ff"):
        k = (c, "board", 15, v, nb.KP_HIGH)
        p, cl = probes[k], cells[k]
        runs[c] = SimpleNamespace(t=np.array(p.t), pitch=np.array(p.pitch), fell=cl.fell, fell_at=cl.fell_at,
                                  travel=cl.travel, t_touch=cl.t_touch)  # fmt: skip
    title = f"NimbRo-OP onto a 15 mm board at {v:g} m/s over DDS (CPG walk node → feed-forward → MuJoCo sim node)"
    plot_fig6b(runs, ("(a) k_P 53.1", "(c) 18.6 + FF"), title, path)
    return f"Fig. 6b over DDS (15 mm board, {v:g} m/s): {shown(path)}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fig6b", default=str(ROOT / "docs" / "img" / "nimbro_dds_fig6b.png"), help="Fig. 6b's PNG")
    ap.add_argument("--only", default="", help="cells whose 'shape:h:vx' contains this (a partial run, no RESULT)")
    ap.add_argument("--halt-start", action="store_true", help="diagnostic: the sim starts in the CPG's halt pose")
    a = ap.parse_args()
    ks = [k for k in keys() if a.only in f"{k[1]}:{k[2]}:{k[3]:g}"]
    if not ks:
        print(f"{Path(__file__).name}: error: --only {a.only!r} matches none of the {len(keys())} cells "
              "('shape:h:vx', e.g. 'board:15:0.025')", file=sys.stderr)  # fmt: skip
        return 2
    print(f"NimbRo-OP, its authors' CPG over DDS: {len(ks)} runs of {nb.N_STEPS} steps, 1 process, load average "
          f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cores", flush=True)  # fmt: skip
    pl = plans()
    dds, probes, sim_s, wall_s, t0 = {}, {}, 0.0, 0.0, time.perf_counter()
    for k in ks:
        dds[k], probes[k], r = run_dds(k, *pl[k[3]], salt=83, halt_start=a.halt_start)
        sim_s, wall_s = sim_s + r.sim_s, wall_s + r.wall_s
        print(f"  {k[1]} {k[2]} mm {k[3]:g} m/s ({nb.LABEL[k[0]]}): {describe(dds[k])}; gait vs plan before its halt "
              f"{probes[k].gait_err:.1e} rad; {r.sim_s:.1f} s in {r.wall_s:.1f} s", flush=True)  # fmt: skip
    t_dds = time.perf_counter() - t0
    free_still = {k: rosfree(k) for k in ks}
    free = {k: c for k, (c, _) in free_still.items()}
    node = {k: nb.run_cell(k, gait="cpg", desired="walk_node") for k in ks}
    halt = {k: (still(probes[k].t, probes[k].pitch, dds[k].fell), free_still[k][1]) for k in ks}
    print("\nper cell: DDS | ROS-free (plan) | ROS-free (desired=walk_node); agree: stood, or fell the same way; "
          "halt still (not the rule): the trunk pitch's range over the last 0.5 s [mrad], DDS / ROS-free")  # fmt: skip
    print(
        "| shape | h [mm] | vx [m/s] | ctl | DDS | ROS-free | ROS-free walk_node | agree | halt still [mrad] |\n"
        "|---|---|---|---|---|---|---|---|---|"
    )
    for k in ks:
        hs = " / ".join("–" if math.isnan(x) else f"{1e3 * x:.2f}" for x in halt[k])
        print(f"| {k[1]} | {k[2]} | {k[3]:g} | ({nb.LABEL[k[0]]}) | {describe(dds[k])} | {describe(free[k])} | "
              f"{describe(node[k])} | {'yes' if same(dds[k], free[k]) else '**no**'} | {hs} |")  # fmt: skip
    agree = sum(same(dds[k], free[k]) for k in ks)
    agree_node = sum(same(dds[k], node[k]) for k in ks)
    load = os.getloadavg()[0]
    print(f"\nDDS: {sim_s:.0f} s simulated in {wall_s:.0f} s of lockstep ({t_dds:.0f} s with the nodes' start-up), "
          f"real-time factor {sim_s / wall_s:.2f}; load average after {load:.2f}")  # fmt: skip
    both = [h for h in halt.values() if not any(map(math.isnan, h))]
    if both:
        d, f = np.array(both).T
        print(f"HALT (reported, not the rule) over the {len(both)} cells that stood in both: the trunk pitch's range "
              f"over the last 0.5 s, DDS max {1e3 * d.max():.2f} mrad (median {1e3 * np.median(d):.2f}), ROS-free max "
              f"{1e3 * f.max():.2f} mrad (median {1e3 * np.median(f):.2f}); |DDS − ROS-free| max "
              f"{1e3 * np.abs(d - f).max():.2f} mrad")  # fmt: skip
    if len(ks) < len(keys()) or a.halt_start:
        print(f"partial or diagnostic run: agree_with_rosfree {agree}/{len(ks)}, walk_node {agree_node}/{len(ks)}")
        return 0
    print(nb.tables(dds, SPEEDS, supplement=False))
    print(fig6b(dds, probes, a.fig6b))
    k, n = nb.paper_count(dds, speeds=SPEEDS)
    ac = nb.ac_keys(dds, "dds_cpg", SPEEDS, (("board", "board"), ("box", "foot_box")))
    print(
        f"RESULT dds_cpg_flat_falls={nb.flat_falls(dds, SPEEDS)} {ac} dds_cpg_paper_result={k}/{n} "
        f"agree_with_rosfree={agree}/{len(ks)} agree_with_rosfree_walknode={agree_node}/{len(ks)} "
        f"rtf={sim_s / wall_s:.2f} load={load:.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
