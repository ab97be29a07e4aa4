"""The authors' CPG steering on the ROBOTIS OP3 in MuJoCo, closed loop under (c): does it turn, step sideways and walk
backward the way its plan says? (issue 21, deliverable 4: cmd_vel's linear.y, angular.z and linear.x < 0)

Run: python bench/cpg_steer.py [--workers 1|2]

Pre-registered (this docstring was committed before the first run of this bench; nothing below is tuned to it):

* Gait: Missura & Behnke's CPG with its steering terms (``dynamics.nimbro_cpg``: leg roll, hip yaw, the backward
  step length, lean, the norm limit and per-axis slopes, from nimbro-op-ros b1f777a DynamicGait.cpp with
  config.yaml's values) carried to the OP3 by dynamic similarity (``op3_cpg.op3_config``, ``op3_cpg_plan``), as
  committed with this docstring; none of its values changed.
* Robot and controller: urdf/op3.urdf, config/servos_op3.yaml, α̂ config/alpha_op3.yaml; ``walk_sim.simulate_walk``'s
  defaults (0.48 s hold in the halt pose, 8 ms goals, 1 ms physics, quantisation 4096, latency 1 period); (c) only:
  low-gain P (0.35 × 800 = k_P 280) + feed-forward (gravity from the true trunk orientation, the plan's q̇, q̈).
* Commands, each at half its axis's top (gcv 0.5, :meth:`.CpgEngine.tops` on the OP3): turn left gcv.z +0.5
  (0.273 rad/s), step left gcv.y +0.5 (0.041 m/s), walk backward gcv.x −0.5 (−0.083 m/s), and forward gcv.x +0.5
  (0.028 m/s) as the reference. Each: 16 steps commanded from the halt pose, then the gait's own stop (command
  withdrawn, gcv slopes down, halt at a phase centre once |gcv| < 0.1), then 0.5 s halted; flat ground; once.
* Measured, from the walk start (the end of the hold) to the run's end or its fall: the trunk's (the root body's) yaw
  change about the world z [rad, unwrapped] and its travel in world x and y [m] (the walk starts heading +x).
  Planned: the same of the plan's trunk (``nimbro_cpg_plan.trunk_path``: forward kinematics, the stance sole held
  flat where it landed) over the same time. Fell: trunk tilt > 0.6 rad (``simulate_walk``'s rule).
* Sign: a command's own axis (yaw for the turn, y for the step left, x for backward and forward) measured with the
  sign opposite to its plan's is a sign error: a bug, reported (``sign_errors``), not tuned away. A fall is reported.

Last line: RESULT steer_turn_yaw_rad=… steer_turn_planned_rad=… steer_turn_fell=0|1 steer_lateral_y_m=…
steer_lateral_planned_m=… steer_lateral_fell=0|1 steer_backward_x_m=… steer_backward_planned_m=…
steer_backward_fell=0|1 steer_forward_x_m=… steer_forward_planned_m=… steer_forward_fell=0|1 sign_errors=k
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import NamedTuple

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from _cases import workers_refused  # noqa: E402

N_STEPS = 16
#: name → (gcv.x, gcv.y, gcv.z) and the axis judged (0 x, 1 y, 2 yaw)
COMMANDS = {
    "turn": ((0.0, 0.0, 0.5), 2),
    "lateral": ((0.0, 0.5, 0.0), 1),
    "backward": ((-0.5, 0.0, 0.0), 0),
    "forward": ((0.5, 0.0, 0.0), 0),
}


class Steer(NamedTuple):
    name: str
    got: np.ndarray  # (x [m], y [m], yaw [rad]) measured from the walk start
    planned: np.ndarray  # the same of the plan over the same time
    fell: bool
    t_end: float  # [s from the walk start]
    wall: float  # [s]


def _yaw(q_wxyz) -> float:
    w, x, y, z = (float(v) for v in q_wxyz)
    return math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))


def run(name: str) -> Steer:
    """One command's closed-loop walk under (c) (module docstring)."""
    from servo_ff.dynamics.nimbro_cpg_plan import trunk_path  # noqa: PLC0415 (in the worker)
    from servo_ff.dynamics.op3_cpg import op3_cpg_plan  # noqa: PLC0415
    from servo_ff.dynamics.walk_sim import OP3_URDF, simulate_walk  # noqa: PLC0415

    (gx, gy, gz), _ = COMMANDS[name]
    ready = op3_cpg_plan(OP3_URDF, gx, N_STEPS, gcv_y=gy, gcv_z=gz)
    rows: list[tuple[float, float, float, float]] = []

    def probe(t: float, sv) -> None:  # the state at the end of the period that began at t
        b = sv.sim.root_body
        rows.append((t + 0.008, float(sv.data.xpos[b][0]), float(sv.data.xpos[b][1]), _yaw(sv.data.xquat[b])))

    t0 = time.perf_counter()
    r = simulate_walk("ff", N_STEPS, ready=ready, probe=probe)
    a = np.array(rows)
    a[:, 3] = np.unwrap(a[:, 3])
    k0 = int(np.searchsorted(a[:, 0], 0.0 - 1e-9))  # the period ending at the walk start
    got = a[-1, 1:] - a[k0, 1:]
    path = trunk_path(OP3_URDF, ready.plan)
    t_end = float(a[-1, 0])
    at = np.array([np.interp(min(t_end, ready.plan.t[-1]), ready.plan.t, path[:, i]) for i in range(3)])
    return Steer(name, got, at - path[0], r.fell, t_end, time.perf_counter() - t0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=1, help="processes (at most 2: the machine's cores are shared)")
    a = ap.parse_args(argv)
    if workers_refused("cpg_steer.py", a.workers):
        return 2
    print(f"OP3, the authors' CPG steering under (c), {N_STEPS} steps per command, {a.workers} worker(s)", flush=True)
    with ProcessPoolExecutor(a.workers, mp_context=get_context("spawn")) as pool:
        done = list(pool.map(run, COMMANDS))
    print(f"{'command':9} {'gcv':>17} {'x m':>8} {'plan':>8} {'y m':>8} {'plan':>8} {'yaw rad':>8} {'plan':>8}  fell")
    errors, out = 0, []
    for s in done:
        g, axis = COMMANDS[s.name]
        cells = " ".join(f"{v:8.4f} {p:8.4f}" for v, p in zip(s.got, s.planned))
        print(f"{s.name:9} {str(g):>17} {cells}  {int(s.fell)}   ({s.t_end:.2f} s walked, {s.wall:.0f} s wall)")
        if s.planned[axis] != 0 and math.copysign(1, s.got[axis]) != math.copysign(1, s.planned[axis]):
            errors += 1
            print(f"  SIGN ERROR: {s.name}'s axis {'x y yaw'.split()[axis]} measured {s.got[axis]:+.4f}, planned "
                  f"{s.planned[axis]:+.4f}")  # fmt: skip
        unit, key = ("rad", "yaw_rad") if axis == 2 else ("m", "xy"[axis] + "_m")
        out += [f"steer_{s.name}_{key}={s.got[axis]:.4f}", f"steer_{s.name}_planned_{unit}={s.planned[axis]:.4f}",
                f"steer_{s.name}_fell={int(s.fell)}"]  # fmt: skip
    print("RESULT " + " ".join(out) + f" sign_errors={errors}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
