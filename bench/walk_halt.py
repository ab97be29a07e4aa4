"""The walk's halt and restart on the OP3 in MuJoCo, closed loop, ROS-free (issue 21, the walk node's halt).

Run: python bench/walk_halt.py [--steps 8]

Rule (committed before the first run; nothing tuned after it). For each gait family on urdf/op3.urdf, the engine
the walk node runs is ticked on line as the node does (``gait: op3_cpg``: ``op3_cpg_engine``, 8 ms; ``gait:
placo``: ``WalkEngine`` with its defaults, 10 ms): a forward command (CPG 0.0354 m/s, gcv.x 0.624, the CPG
benches' middle speed; placo 0.1 m/s, ``simulate_walk``'s), ``--steps`` steps walked (counted from the samples'
single supports), then the halt requested (``set_halt(True)``, what cmd_vel ``angular.x = -1`` does), ticks until
the engine stands halted, 3 s standing, the walk again (``set_halt(False)``) for ``--steps`` steps, then 0.5 s more.
Those samples are the plan ``simulate_walk`` walks (``ready``: q̇, q̈ by finite differences, the support
coefficient the engine's) under (c) low-gain P + feed-forward (k_P 0.35 × 800, config/servos_op3.yaml, α̂
config/alpha_op3.yaml, 0.48 s hold in the stance first, 8 ms goals, 1 ms physics, as every OP3 bench).

Reported per gait: halt_s, the engine's time from the request to its first halted sample; whether and when the robot
fell (trunk tilt > 0.6 rad, simulate_walk's rule); the trunk pitch and roll range [rad] over the standing time's
last 2.5 s (the first 0.5 s after the halt left to settle); the trunk's x travel after the restart against the
plan's CoM travel over the same time.

Passes (``pass=1``) when, for both gaits: the robot does not fall anywhere in the run; halt_s is within the bound
of test/test_walk_halt.py (CPG: 2 step periods + the ramp-down (gcv − stoppingVelocity)/(accelerationForward ×
decelerationFactor); placo: 2 (single + double support) + the end double support); the trunk is at rest while
standing (pitch and roll range each < 0.02 rad); and the restart walks (trunk x travel after it > half the plan's).

Added after the first run (reported, not part of the rule): the pitch and roll ranges over the standing time's last
1 s, which show whether the sway is decaying or sustained.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from servo_ff.dynamics.walk_sim import OP3_URDF, simulate_walk  # noqa: E402

STAND = 3.0  # [s] standing between the halt and the restart
SETTLE = 0.5  # [s] after the halt, before the trunk's rest is judged
REST = 0.02  # [rad] trunk pitch and roll range while standing


@dataclass
class Sequence:
    """An engine's on-line samples through walk, halt, stand, walk again: t [s], q (T, J) [rad], c_left (T,), the
    plan's CoM x (T,) [m] (placo: planned; CPG: placed later), steps (t, side), the request, halt and restart times
    [s], the halt bound [s] and the step period [s]."""

    joints: list[str]
    t: np.ndarray
    q: np.ndarray
    c: np.ndarray
    steps: list[tuple[float, str]]
    t_request: float
    t_halted: float
    t_restart: float
    bound: float
    step_period: float
    q_stand: np.ndarray
    samples: list


def _run(engine, n_steps: int, bound: float) -> Sequence:
    """Tick ``engine`` through the rule's sequence (its command set)."""
    dt = engine.params.dt
    samples, steps = [], []

    def tick() -> None:
        s = engine.tick()
        if samples and s.c_left in (0.0, 1.0) and samples[-1].c_left != s.c_left:
            steps.append((s.t, "right" if s.c_left == 1.0 else "left"))  # single support begun: the other foot swings
        samples.append(s)

    engine.start()
    while len(steps) < n_steps:
        tick()
    engine.set_halt(True)
    t_request = engine.t
    while not engine.halted:
        tick()
    t_halted = samples[-1].t
    for _ in range(int(round(STAND / dt))):
        tick()
    engine.set_halt(False)
    t_restart, n0 = engine.t, len(steps)
    while len(steps) < n0 + n_steps:
        tick()
    for _ in range(int(round(0.5 / dt))):
        tick()
    t = np.array([s.t for s in samples])
    return Sequence(
        list(engine.joints), t, np.array([s.q for s in samples]), np.array([s.c_left for s in samples]), steps,
        t_request, t_halted, t_restart, bound, engine.params.step_period, engine.q_stand, samples,
    )  # fmt: skip


def cpg_sequence(n_steps: int) -> tuple[Sequence, tuple]:
    from servo_ff.dynamics.nimbro_cpg import speed_per_gcv
    from servo_ff.dynamics.nimbro_cpg_engine import op3_cpg_engine
    from servo_ff.dynamics.open_loop_plan import open_loop_plan

    e = op3_cpg_engine(OP3_URDF)
    cfg = e.params
    gcv = 0.0354 / speed_per_gcv(cfg)
    e.set_cmd(0.0354, 0.0, 0.0)
    bound = 2 * cfg.step_period + (gcv - cfg.stopping_velocity) / (cfg.acceleration_forward * cfg.deceleration_factor)
    s = _run(e, n_steps, bound)
    plan = open_loop_plan(OP3_URDF, s.joints, s.t, s.q, s.c, s.steps, "the CPG halt walk")
    return s, (plan, s.q_stand, s.step_period)


def placo_sequence(n_steps: int) -> tuple[Sequence, tuple]:
    from servo_ff.dynamics.walk_pattern import WalkEngine, _as_plan

    e = WalkEngine(OP3_URDF)
    p = e.params
    e.set_cmd(0.1, 0.0, 0.0)
    ds = p.double_support_ratio * p.single_support
    s = _run(e, n_steps, 2 * (ds + p.single_support) + p.startend_double_support_ratio * p.single_support)
    plan = _as_plan(s.joints, s.samples, [], s.steps, p.dt)
    return s, (plan, s.q_stand, s.step_period)


def judge(name: str, seq: Sequence, ready: tuple) -> dict:
    """Simulate (c) on ``ready`` and the rule's figures for one gait."""
    xs: list[tuple[float, float]] = []
    run = simulate_walk("ff", 0, ready=ready, probe=lambda t, sv: xs.append((t, float(sv.data.qpos[0]))))
    tx = np.array(xs)
    standing = (run.t >= seq.t_halted + SETTLE) & (run.t < seq.t_restart)
    pitch_range = float(np.ptp(run.pitch[standing])) if standing.any() else math.nan
    roll_range = float(np.ptp(run.roll[standing])) if standing.any() else math.nan
    last = (run.t >= seq.t_restart - 1.0) & (run.t < seq.t_restart)
    last_range = float(max(np.ptp(run.pitch[last]), np.ptp(run.roll[last]))) if last.any() else math.nan
    plan = ready[0]
    t_end = float(run.t[-1])
    planned = float(np.interp(t_end, plan.t, plan.com[:, 0]) - np.interp(seq.t_restart, plan.t, plan.com[:, 0]))
    walked = float(np.interp(t_end, tx[:, 0], tx[:, 1]) - np.interp(seq.t_restart, tx[:, 0], tx[:, 1]))
    halt_s = seq.t_halted - seq.t_request
    ok = (
        not run.fell
        and halt_s <= seq.bound + 1e-9
        and pitch_range < REST
        and roll_range < REST
        and walked > 0.5 * planned > 0
    )
    return dict(
        name=name, halt_s=halt_s, bound=seq.bound, fell=int(run.fell), fell_at=run.fell_at, pitch=pitch_range,
        roll=roll_range, last=last_range, walked=walked, planned=planned, ok=ok, steps=len(seq.steps),
        t_total=float(seq.t[-1]),
    )  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=8, help="steps walked before the halt and after the restart")
    a = ap.parse_args()
    rows = [judge("cpg", *cpg_sequence(a.steps)), judge("placo", *placo_sequence(a.steps))]
    print("| gait | halt s (bound) | fell | standing pitch range rad | roll range rad | last 1 s: max range rad | "
          "x after restart m (plan) |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        fell = f"at {r['fell_at']:.2f} s" if r["fell"] else "no"
        print(f"| {r['name']} | {r['halt_s']:.3f} ({r['bound']:.3f}) | {fell} | {r['pitch']:.4f} | {r['roll']:.4f} | "
              f"{r['last']:.4f} | {r['walked']:.3f} ({r['planned']:.3f}) |")  # fmt: skip
    c, p = rows
    print(
        f"RESULT cpg_halt_s={c['halt_s']:.3f} cpg_fell={c['fell']} cpg_rest_pitch_range={c['pitch']:.4f} "
        f"cpg_rest_roll_range={c['roll']:.4f} placo_halt_s={p['halt_s']:.3f} placo_fell={p['fell']} "
        f"placo_rest_pitch_range={p['pitch']:.4f} placo_rest_roll_range={p['roll']:.4f} "
        f"pass={int(c['ok'] and p['ok'])}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
