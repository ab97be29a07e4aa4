"""Issue 21's flat-ground target under the authors' CPG on the OP3, over DDS: does (c) walk ≥ 2 m without a fall?

Run: python bench/op3_cpg_distance.py [--steps 140] [--vx 0.0567]

Pre-registered (this docstring was committed before any run of it). ``bench/op3_mission.py --gait cpg`` (rule of
bd333a6) walks (c) 80 steps at 0.0354 m/s on flat ground, 0.84 m planned: the ≥ 2 m target is out of reach of that
run by construction, not by a fall. This asks the target's question of the CPG itself: (c) (k_P 280 + feed-forward,
the mission's), the walk node on ``gait: op3_cpg`` over DDS (``run_op3``, the mission's graph ``op3_graph("cpg")``),
cmd_vel at the gait's top speed 0.0567 m/s (gcv.x 1, its norm limit), 140 steps (2.34 m planned: 140 × 0.295 s ×
0.0567 m/s), flat ground, once. Passes when (c) does not fall (trunk tilt ≤ 0.6 rad throughout) and its trunk travels
≥ 2 m. Reported whatever it gives: travel, step period, fell, rtf. Nothing else is run or changed.

Last line: RESULT cpg_distance_c_m=… cpg_step_period_s=… cpg_fell=0|1 cpg_rtf=… passes=0|1
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from servo_ff.bringup.op3_mission import run_op3  # noqa: E402
from servo_ff.bringup.op3_report import format_table  # noqa: E402
from servo_ff.bringup.robot_graph import op3_graph  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=140)
    ap.add_argument("--vx", type=float, default=0.0567, help="m/s (the CPG's top speed on the OP3)")
    a = ap.parse_args(argv)
    if a.steps < 1 or not (math.isfinite(a.vx) and a.vx > 0):  # this bench asks the forward walk
        print(f"{Path(__file__).name}: error: --steps must be >= 1 and --vx a finite speed > 0 m/s (this bench "
              f"asks the forward walk), got {a.steps} and {a.vx:g}", file=sys.stderr)  # fmt: skip
        return 2
    r = run_op3("ff", n_steps=a.steps, vx=a.vx, robot=op3_graph("cpg"))
    print(format_table([r]))
    ok = int(not r.fell and r.travel >= 2.0)
    print(
        f"RESULT cpg_distance_c_m={r.travel:.3f} cpg_step_period_s={r.step_period:.3f} cpg_fell={int(r.fell)} "
        f"cpg_rtf={r.sim_s / r.wall_s:.2f} passes={ok}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
