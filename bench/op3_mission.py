"""Schwarz & Behnke's experiments on the ROBOTIS OP3 over DDS under the placo walk (issue 21 item 5).

Run: python bench/op3_mission.py [--gait placo|cpg] [--steps 40] [--vx 0.1] [--flat-steps 80] [--obstacle-vx 0.05]
     [--kp-high 800] [--plot docs/img/op3_obstacle_pitch.png] [--firmware ROW] [--pwm-steps 40]
Mission: ``servo_ff.bringup.op3_mission`` (servo_walk_node under cmd_vel → feed-forward → MuJoCo sim node, lockstep;
all nodes in one process, real DDS between them). (a) high-gain P (k_P 800, the XM430 factory gain), (b) 0.35 of
it, (c) (b) + feed-forward; the same gait, cmd_vel and obstacles for all three.
1. energy over ``--steps`` steps on flat ground at ``--vx`` for (a), (b), (c);
2. (c) on flat ground for ``--flat-steps`` steps: distance walked;
3. obstacles: forward at ``--obstacle-vx`` onto a 15 mm box under the right foot ((a), (b), (c)) and 5 mm ((a),
   (c)); trunk pitch per controller plotted as Schwarz & Behnke Fig. 6b;
4. the board (their "rectangular obstacles" walked onto): at the same speed onto a board across the path (0.4 m wide,
   1 m long, placed at the walk start 5 mm ahead of the feet): 15 mm ((a), (b), (c)), 5 mm ((a), (c)); pitch plotted
   in ``--board-plot``.
5. the same as 1. under the XM430's factory position mode for every servo (firmware row ``xm430_position``, the PWM
   law ROBOTIS's OP3 runs, the kind of law of the paper's MX-106; (c) with that law's α̂, Eq. 19) for ``--pwm-steps``
   steps, and the 15 mm box and board of 3. and 4. for (a) and (c): an additional result (``pwm_*`` keys), beside
   the mission's current-based one (``--pwm-steps 0``: no 5., no ``pwm_*`` keys; ``rtf`` is over 1.-4. either way);
6. energy over 40 steps at a speed where (a) walks (``--energy40-steps``, 0: skip 6.), pre-registered before any
   such run (``energy40_section``'s docstring: the rule, the runs and what is reported);
``--firmware ROW``: sections 1-4 and 6 with every servo on that firmware row instead of config/servos_op3.yaml's own
(current-based position control, Operating Mode 5); an unknown row is one line naming the valid rows (exit 2).
Energy: (c) against (a) over their common window of whole steps (``bringup/op3_energy.py``): all ``--steps`` when
neither falls, else the whole steps before the first fall of the two (``energy_steps``; nan below 2 steps); (b) is
listed over the same window when it walked it.
Anchor (issue 25's style): the bare lockstep loop under the mission (``bench/_lockstep_bound.py``: the same message
hops per 8 ms period, no work in any callback, the mission's EventsExecutor) measured before and after the runs in
this process: ``rtf_bound`` (median, one process) is the best any loop of this shape reaches here and now, and
``rtf_of_bound`` = rtf / rtf_bound.
``--gait cpg`` (issue 21; pre-registered: this paragraph was committed before any DDS run of the CPG on the OP3):
the mission's sections 1.-5. with the walk node's ``gait: op3_cpg`` (Missura & Behnke's CPG carried to the OP3 by
dynamic similarity, ``dynamics/op3_cpg.py``, ``nimbro_cpg_engine.op3_cpg_engine``: the ROS-free
``bench/op3_cpg_obstacle.py``'s gait, rule of 282d28e; its engine in the walk node, no engine process) instead of
placo; robot, servo file, α̂, lockstep, gains ((a) 800, (b) 280, (c) 280 + feed-forward), heights (15, 5 mm), shapes
and step counts (``--steps`` 40, ``--flat-steps`` 80, ``--obstacle-steps`` 16, ``--pwm-steps`` 40) the mission's.
Speeds from the ROS-free rule, not chosen from any DDS run: ``--vx`` 0.0354 m/s (gcv.x 0.624, its energy speed: 1.,
2., 5.'s flat runs) and ``--obstacle-vx`` 0.0177 m/s (gcv.x 0.312, its slowest, the "very slow" speed: 3., 4., 5.'s
obstacles). The box under the right foot is placed at mid-swing of step index 4 (``obstacle_step`` 4, the ROS-free
CPG bench's; the CPG's step 5 swings the left foot, placo's 5 the right). Section 6. is not run (``--energy40-steps``
0): its candidate speeds are placo's ROS-free map's, and 1. already is the ROS-free rule's 40 steps at 0.0354 m/s.
Unlike the ROS-free bench the walk starts from the sim's initial pose through the walk node's approach (start_delay
0.5 s, 2 s minimum jerk to the CPG's halt pose; ROS-free: 0.48 s held in the halt pose), and the walk node's points
carry q̇, q̈ by five-point differences held (scaled as a whole) at the URDF's 4.8171 rad/s and max_acceleration (the
scaled CPG's knee peaks 5.0-6.5 rad/s); positions are the plan's. Reported: the whole RESULT line (the same keys,
plus ``gait=cpg vx=… obstacle_vx=…``); each obstacle cell at 0.0177 m/s ((a), (b), (c) on the 15 mm box and board,
(a), (c) on 5 mm) and the knee and all-joint energy reductions set beside the ROS-free bench's (its RESULT of
9d6aff1: at 0.0177 m/s box15 FF, board15 FS, box5 SS, board5 FS for (a), (c); knees −30.3 %, all −43.8 % over the 3
steps all three walked, −32.8 %, −50.0 % over (a), (c)'s 44; the mission's window is (a), (c)'s: ``op3_energy``),
and where they differ, why (the approach, the q̇/q̈ hold, the lockstep's one-period latency as ROS-free). The
walk_distance target (≥ 2 m) is out of the CPG's reach at 0.0354 m/s: 80 steps of 0.295 s plan 0.84 m; reported as
walked. The placo default (no ``--gait``) is unchanged: the same arguments, defaults and keys.

Added 2026-11-27 (reported, no target): the goals the feed-forward node clamped to the URDF limits in each of (c)'s
runs of 1.-4. (``Op3Result.clamps``), and ``ff_clamps_stood``, their sum over the runs that stood (a falling robot's
own clamps left out): on a robot a goal at a joint limit is a kick.

Last line: RESULT walk_distance_c_m=… step_period_s=… falls_flat=… knee_energy_reduction=… energy_reduction=…
           obstacle15_a_stood=0|1 obstacle15_c_stood=0|1 obstacle5_c_stood=0|1 rtf=… rtf_bound=… rtf_of_bound=…
           board15_a_stood=0|1 board15_c_stood=0|1 board5_c_stood=0|1 energy_steps=… ff_clamps_stood=…
           pwm_energy_steps=…
           pwm_knee_energy_reduction=… pwm_energy_reduction=… pwm_falls_flat=… pwm_obstacle15_a_stood=0|1
           pwm_obstacle15_c_stood=0|1 pwm_board15_a_stood=0|1 pwm_board15_c_stood=0|1 energy40_vx=…
           energy40_steps=… knee_energy40_reduction=… energy40_reduction=…
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import NamedTuple

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))  # its helper modules, also when loaded as a module (test_op3_energy)

from _lockstep_bound import lockstep_bound  # noqa: E402
from _paths import shown  # noqa: E402

from servo_ff.bringup.op3_energy import (  # noqa: E402
    ENERGY40_SPEEDS,
    compare,
    energy40_keys,
    group_sums,
    step_end,
    whole_steps,
    window_lines,
)
from servo_ff.bringup.op3_mission import run_op3  # noqa: E402
from servo_ff.bringup.op3_report import format_table, plot_pitch  # noqa: E402
from servo_ff.bringup.robot_graph import op3_graph  # noqa: E402
from servo_ff.models.errors import ParameterError  # noqa: E402
from servo_ff.models.firmware import firmware_row  # noqa: E402

PWM_ROW = "xm430_position"  #: 5.'s firmware row: the XM430's factory position mode (Operating Mode 3)
TRACKED = ("l_hip_pitch", "l_knee", "l_ank_pitch", "r_hip_pitch", "r_knee", "r_ank_pitch")  #: 6.'s tracking rows
IMG = ROOT / "docs" / "img"


def cpg_speed(v_nimbro: float) -> float:
    """[m/s] the OP3's speed at the gcv.x of the NimbRo-OP's ``v_nimbro`` [m/s] (bench/op3_cpg_obstacle.py's rule:
    v / 0.0802 × 0.0567, the same Froude number)."""
    from servo_ff.dynamics.nimbro_cpg import CpgConfig, speed_per_gcv
    from servo_ff.dynamics.op3_cpg import op3_config
    from servo_ff.dynamics.walk_sim import OP3_URDF

    return v_nimbro / speed_per_gcv(CpgConfig()) * speed_per_gcv(op3_config(OP3_URDF))


class Gait(NamedTuple):
    """A gait's defaults of the arguments left unset and the box's step index (``run_op3``'s ``obstacle_step``)."""

    defaults: dict
    obstacle_step: int


GAITS = ("placo", "cpg")  #: the walk node's: placo (the default, unchanged), the authors' CPG scaled (the rule above)


def gait_setup(gait: str) -> Gait:
    """The defaults of ``gait``: placo's as ever; the CPG's speeds from the ROS-free rule, its plots beside placo's."""
    if gait == "placo":
        plots = {"plot": str(IMG / "op3_obstacle_pitch.png"), "board_plot": str(IMG / "op3_board_pitch.png")}
        return Gait({"vx": 0.1, "obstacle_vx": 0.05, "energy40_steps": 40, **plots}, 5)
    plots = {
        "plot": str(IMG / "op3_cpg_dds_obstacle_pitch.png"),
        "board_plot": str(IMG / "op3_cpg_dds_board_pitch.png"),
    }
    speeds = {"vx": cpg_speed(0.05), "obstacle_vx": cpg_speed(0.025)}  # 0.0354, 0.0177 m/s (NimbRo-OP 0.05, 0.025)
    return Gait({**speeds, "energy40_steps": 0, **plots}, 4)  # the CPG's step 4 swings the right foot (its 5 the left)


def bound(periods: int) -> tuple[float, float]:
    """The bare lockstep loop's rtf: one process, two processes."""
    return lockstep_bound(periods, 1), lockstep_bound(periods, 2)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gait", choices=GAITS, default="placo", help="the walk node's (cpg: the rule above)")
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--vx", type=float, default=None, help="m/s, flat-ground runs (placo 0.1; cpg 0.0354)")
    ap.add_argument("--flat-steps", type=int, default=80)
    ap.add_argument("--obstacle-vx", type=float, default=None, help="m/s, obstacle runs (placo 0.05; cpg 0.0177)")
    ap.add_argument("--obstacle-steps", type=int, default=16)
    ap.add_argument("--kp-high", type=float, default=800.0, help="(a)'s gain; (b), (c): 0.35 of it")
    ap.add_argument("--plot", default=None, help="3.'s PNG (default docs/img/op3_obstacle_pitch.png; cpg: op3_cpg_…)")
    ap.add_argument("--board-plot", default=None, help="4.'s PNG (default docs/img/op3_board_pitch.png; cpg: …)")
    ap.add_argument("--bound-periods", type=int, default=2000, help="periods of each bare lockstep loop (anchor)")
    ap.add_argument("--firmware", default=None, help="every servo's firmware row in 1-4, 6 (default: the servo file's)")
    ap.add_argument("--pwm-steps", type=int, default=40, help="5.: steps under xm430_position (0: skip 5.)")
    ap.add_argument("--energy40-steps", type=int, default=None, help="6.: steps at (a)'s speed (0: skip; cpg 0)")
    a = ap.parse_args()
    g = gait_setup(a.gait)
    for k, v in g.defaults.items():
        if getattr(a, k) is None:
            setattr(a, k, v)
    robot = {"robot": op3_graph(a.gait)} if a.gait != "placo" else {}  # placo: run_op3's own default graph
    at = {"obstacle_step": g.obstacle_step}  # the box's step (placo: run_op3's default 5)
    try:
        if a.firmware is not None:
            firmware_row(a.firmware)
    except ParameterError as e:
        print(f"{Path(__file__).name}: --firmware: {e}", file=sys.stderr)
        return 2
    fw = {"firmware": a.firmware, **robot}

    anchors = [bound(a.bound_periods)]

    print(f"1. flat ground, {a.steps} steps at {a.vx} m/s:")
    flat = {c: run_op3(c, n_steps=a.steps, vx=a.vx, kp_high=a.kp_high, **fw) for c in ("high", "low", "ff")}
    print(format_table(list(flat.values())))
    energy = compare(flat["high"], flat["ff"])
    print(f"energy over the first {energy.steps} whole steps (before the first fall of (a) and (c); 0: none):")
    print("\n".join(f"   {line}" for line in window_lines({r.label: r for r in flat.values()}, energy.steps)))
    print(f"2. (c) on flat ground, {a.flat_steps} steps at {a.vx} m/s:")
    long = run_op3("ff", n_steps=a.flat_steps, vx=a.vx, kp_high=a.kp_high, **fw)
    print(format_table([long]))
    print(f"3. obstacles under the right foot, forward at {a.obstacle_vx} m/s:")
    obst = {
        (c, h): run_op3(c, n_steps=a.obstacle_steps, vx=a.obstacle_vx, obstacle=h / 1000, kp_high=a.kp_high, **fw, **at)
        for c, h in (("high", 15), ("low", 15), ("ff", 15), ("high", 5), ("ff", 5))
    }
    print(format_table(list(obst.values())))
    Path(a.plot).parent.mkdir(parents=True, exist_ok=True)
    plot_pitch([obst[("high", 15)], obst[("ff", 15)], obst[("ff", 5)]], a.plot, gait=a.gait)
    print(f"plot: {shown(a.plot)}")
    print(f"4. a board across the path, forward at {a.obstacle_vx} m/s:")
    board = {
        (c, h): run_op3(
            c,
            n_steps=a.obstacle_steps,
            vx=a.obstacle_vx,
            obstacle=h / 1000,
            kp_high=a.kp_high,
            obstacle_shape="board",
            **fw,
            **at,
        )
        for c, h in (("high", 15), ("low", 15), ("ff", 15), ("high", 5), ("ff", 5))
    }
    print(format_table(list(board.values())))
    Path(a.board_plot).parent.mkdir(parents=True, exist_ok=True)
    plot_pitch(
        [board[k] for k in (("high", 15), ("ff", 15), ("high", 5), ("ff", 5))],
        a.board_plot,
        after=8.0,
        board=True,
        gait=a.gait,
    )
    print(f"plot: {shown(a.board_plot)}")

    knee, allj = energy.knee_reduction, energy.reduction
    runs = [*flat.values(), long, *obst.values(), *board.values()]
    rtf = sum(r.sim_s for r in runs) / sum(r.wall_s for r in runs)
    anchors.append(bound(a.bound_periods))  # the anchor brackets 1.-4., the mission's runs (5. is an addition)
    one, two = (float(np.median([b[k] for b in anchors])) for k in (0, 1))
    pwm = pwm_section(a, {**robot, **at}) if a.pwm_steps > 0 else None
    e40 = energy40_section(a.energy40_steps, a.kp_high, a.firmware) if a.energy40_steps > 0 else ""
    print(
        f"rtf: the mission {rtf:.2f} (sim s / wall s over every run of 1.-4., start-up included); the bare lockstep "
        f"loop {one:.2f} in one process, {two:.2f} across two (before / after: "
        f"{' / '.join(f'{b[0]:.2f}, {b[1]:.2f}' for b in anchors)})"
    )
    ff_runs = [("1. flat", flat["ff"]), ("2. flat", long)]
    ff_runs += [(f"3. box {h} mm", obst[("ff", h)]) for h in (15, 5)] + [
        (f"4. board {h} mm", board[("ff", h)]) for h in (15, 5)
    ]
    print("goals the feed-forward node clamped to the URDF limits, (c)'s runs (per joint; a fall's own included):")
    for name, r in ff_runs:
        print(f"   {name}: {'fell' if r.fell else 'stood'}, {sum(r.clamps.values())} {r.clamps or ''}".rstrip())
    clamps_stood = sum(sum(r.clamps.values()) for _, r in ff_runs if not r.fell)
    fell = {c: flat[c].fell or (c == "ff" and long.fell) for c in ("high", "low", "ff")}
    extra = f" gait={a.gait} vx={a.vx:.4f} obstacle_vx={a.obstacle_vx:.4f}" if a.gait != "placo" else ""
    falls = "".join(k for k, c in zip("abc", fell) if fell[c]) or "none"  # the controllers that fell on flat ground
    print(
        f"RESULT walk_distance_c_m={long.travel:.3f} step_period_s={long.step_period:.3f} falls_flat={falls} "
        f"knee_energy_reduction={knee:.3f} energy_reduction={allj:.3f} "
        f"obstacle15_a_stood={int(not obst[('high', 15)].fell)} obstacle15_c_stood={int(not obst[('ff', 15)].fell)} "
        f"obstacle5_c_stood={int(not obst[('ff', 5)].fell)} rtf={rtf:.2f} rtf_bound={one:.2f} "
        f"rtf_of_bound={rtf / one:.3f} board15_a_stood={int(not board[('high', 15)].fell)} "
        f"board15_c_stood={int(not board[('ff', 15)].fell)} board5_c_stood={int(not board[('ff', 5)].fell)} "
        f"energy_steps={energy.steps} ff_clamps_stood={clamps_stood}{pwm.keys if pwm else ''}{e40}{extra}"
    )
    return 0


class PwmSection(NamedTuple):
    runs: list  # every run of section 5
    keys: str  # " pwm_…=…" RESULT keys


def pwm_section(a, gait: dict | None = None) -> PwmSection:
    """5.: (a), (b), (c) on flat ground and (a), (c) on the 15 mm box and board, every servo on ``PWM_ROW``;
    ``gait``: ``run_op3``'s ``robot`` (every run) and ``obstacle_step`` (the box's) of the gait (none: placo's)."""
    gait = dict(gait or {})
    at = {"obstacle_step": gait.pop("obstacle_step")} if "obstacle_step" in gait else {}
    row, kw = PWM_ROW, {"kp_high": a.kp_high, "firmware": PWM_ROW, **gait}
    print(f"5. every servo on the firmware row {row} (XM430 position mode, PWM law; (c): that law's α̂, Eq. 19):")
    print(f"   flat ground, {a.pwm_steps} steps at {a.vx} m/s:")
    flat = {c: run_op3(c, n_steps=a.pwm_steps, vx=a.vx, **kw) for c in ("high", "low", "ff")}
    print(format_table(list(flat.values())))
    energy = compare(flat["high"], flat["ff"])
    print(f"   energy over the first {energy.steps} whole steps (before the first fall of (a) and (c); 0: none):")
    print("\n".join(f"   {line}" for line in window_lines({r.label: r for r in flat.values()}, energy.steps)))
    obst = {}
    for shape, what in (
        ("foot_box", "a box under the right foot (as 3.)"),
        ("board", "a board across the path (as 4.)"),
    ):
        print(f"   15 mm, {what}, forward at {a.obstacle_vx} m/s:")
        for c in ("high", "ff"):
            obst[(c, shape)] = run_op3(
                c, n_steps=a.obstacle_steps, vx=a.obstacle_vx, obstacle=0.015, obstacle_shape=shape, **kw, **at
            )
        print(format_table([obst[(c, shape)] for c in ("high", "ff")]))
    falls = "".join(k for k, c in zip("abc", flat) if flat[c].fell) or "none"
    keys = (
        f" pwm_energy_steps={energy.steps} pwm_knee_energy_reduction={energy.knee_reduction:.3f} "
        f"pwm_energy_reduction={energy.reduction:.3f} pwm_falls_flat={falls} "
        f"pwm_obstacle15_a_stood={int(not obst[('high', 'foot_box')].fell)} "
        f"pwm_obstacle15_c_stood={int(not obst[('ff', 'foot_box')].fell)} "
        f"pwm_board15_a_stood={int(not obst[('high', 'board')].fell)} "
        f"pwm_board15_c_stood={int(not obst[('ff', 'board')].fell)}"
    )
    return PwmSection([*flat.values(), *obst.values()], keys)


def energy40_section(steps: int, kp_high: float, firmware: str | None) -> str:
    """6.: energy of (c) against (a) over ``steps`` (40) steps at a speed where (a) walks; the RESULT keys.

    Pre-registered (2026-11-26, committed before any run of this section or of its ROS-free twin
    ``tools/op3_energy40.py``). The speed is picked from (a)'s survival alone, never from an energy figure: the
    candidates are ``op3_energy.ENERGY40_SPEEDS``, the ROS-free obstacle map's grid speeds at which (a) stood on flat
    ground (0.05, 0.035, 0.02 m/s; it fell at 0.08), fastest first; (a) (k_P ``kp_high``, 800) walks ``steps`` steps
    on flat ground at each in turn, and the first at which it completes all of them without a fall is the speed
    (``energy40_vx``; nan, with no (c) run, when it falls at all three). Then (c) (0.35·k_P + feed-forward) walks
    ``steps`` steps at that speed, once; (b) is not run. Gains, gait, law and α̂ are the mission's (section 1's, the
    servo file's current-based law unless ``--firmware``); nothing is tuned. Reported: E = ∫U·I dt over the common
    window of whole steps (``op3_energy.compare``: all ``steps`` when (c) walks them too, else the steps before its
    fall, and the speed is not changed): per joint group (``op3_energy.GROUPS``: knees, hips, ankles, all) [J] for
    (a) and (c) and the reduction 1 − E(c)/E(a); the hip, knee and ankle pitch joints' RMS error against the walk
    node's desired positions [rad], the trunk pitch's mean [rad] from ``imu/data`` and the trunk travel [m], each
    over the window. Keys: ``energy40_vx energy40_steps knee_energy40_reduction energy40_reduction``.
    """
    print(f"6. energy over {steps} steps at a speed where (a) walks (pre-registered; candidates {ENERGY40_SPEEDS}):")
    vx, base = float("nan"), None
    for v in ENERGY40_SPEEDS:
        r = run_op3("high", n_steps=steps, vx=v, kp_high=kp_high, firmware=firmware, track=TRACKED)
        print(f"   (a) at {v} m/s: {'walked' if not r.fell else 'fell after'} {whole_steps(r)} whole steps")
        if not r.fell and whole_steps(r) >= steps:
            vx, base = v, r
            break
    if base is None:
        return " " + energy40_keys(math.nan, 0, math.nan, math.nan)
    other = run_op3("ff", n_steps=steps, vx=vx, kp_high=kp_high, firmware=firmware, track=TRACKED)
    cmp = compare(base, other)
    print(format_table([base, other]))
    print(f"   over the first {cmp.steps} whole steps at {vx} m/s:")
    print("\n".join(f"   {line}" for line in energy40_lines(base, other, cmp.steps)))
    return " " + energy40_keys(vx, cmp.steps, cmp.knee_reduction, cmp.reduction)


def energy40_lines(base, other, steps: int) -> list[str]:
    """6.'s table: per joint group E [J] of (a) and (c) over ``steps`` whole steps, then their tracking and posture."""
    if steps < 1:
        return [f"no common window ({steps} steps)"]
    t_end = step_end(steps)  # [s from the walk start]
    ea, ec = (group_sums(r.joints, r.step_energy[steps]) for r in (base, other))
    lines = ["| | (a) | (c) | (c) against (a) |", "|---|---|---|---|"]
    lines += [f"| E {g} [J] | {ea[g]:.1f} | {ec[g]:.1f} | {ec[g] / ea[g] - 1:+.1%} |" for g in ea]
    track = [tracking_error(r, t_end) for r in (base, other)]
    for k, name in enumerate(("hip pitch", "knee", "ankle pitch")):
        (ra, ma), (rc, mc) = track[0][k], track[1][k]
        what = f"| {name} − desired, RMS (mean, + bent more) [rad] |"
        lines.append(f"{what} {ra:.3f} ({ma:+.3f}) | {rc:.3f} ({mc:+.3f}) | |")
    pitch = [float(np.mean([y for t, y in r.pitch if t <= t_end])) for r in (base, other)]
    lines.append(f"| trunk pitch, mean [rad] | {pitch[0]:.3f} | {pitch[1]:.3f} | {pitch[1] - pitch[0]:+.3f} |")
    lines.append(f"| trunk travel (whole run) [m] | {base.travel:.3f} | {other.travel:.3f} | |")
    return lines


def tracking_error(run, t_end: float) -> list[tuple[float, float]]:
    """[rad] (RMS, mean) of measured − desired over both legs' hip pitch, knee, ankle pitch (``TRACKED``) up to
    ``t_end``, the mean signed along the joint's bend in the stance (the legs mirror: + is bent more than desired)."""
    rows = [(d, m) for t, d, m in run.tracking if t <= t_end]
    err = np.array([m - d for d, m in rows])
    bend = np.sign(np.mean([d for d, _ in rows], axis=0))  # per TRACKED joint: the sign of its mean desired angle
    rms, mean = np.sqrt(np.mean(err**2, axis=0)), np.mean(err * bend, axis=0)
    return [(float(np.sqrt(np.mean(rms[[k, k + 3]] ** 2))), float(np.mean(mean[[k, k + 3]]))) for k in range(3)]


if __name__ == "__main__":
    sys.exit(main())
