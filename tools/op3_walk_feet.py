"""How the OP3's feet take the placo plan under (a), (b), (c) (issue 21), ROS-free: ``dynamics.walk_sim``'s walk.

    PYTHONPATH=src python tools/op3_walk_feet.py [--steps 12] [--vx 0.1] [--kp-high 800] [--firmware xm430_position]
        [--foot-height 0.02] [--obstacle 0.015] [--controllers high,low,ff] [--grids 1e-9,1e-6,1e-4] [--no-imu-roll]

One line per controller: fall time, trunk travel for the plan's, the share of planned single-support periods in which
the swing foot still touched the ground, the stance foot's share of the weight then, the loaded soles' travel
(sliding or rocking on an edge), the largest trunk roll and the trunk pitch range. ``--grids``: the same walks with
the plan rounded to each grid (``walk_sim.settled_plan``; perturbations of 1e-9 rad and up) to see how sensitive an
outcome is; ``--no-imu-roll``: (c)'s gravity from the trunk pitch alone.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from op3_energy_terms import known_firmware  # noqa: E402

from servo_ff.dynamics.walk_pattern import WalkParams  # noqa: E402
from servo_ff.dynamics.walk_sim import PLAN_GRID, simulate_walk  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--vx", type=float, default=0.1, help="m/s")
    ap.add_argument("--kp-high", type=float, default=800.0, help="(a)'s k_P; (b), (c): 0.35 of it")
    ap.add_argument("--firmware", default=None, help="firmware row for every servo (default: the servo file's)")
    ap.add_argument("--foot-height", type=float, default=WalkParams().foot_height, help="swing clearance [m]")
    ap.add_argument("--obstacle", type=float, default=0.0, help="box under the right foot [m] (0: flat)")
    ap.add_argument("--controllers", default="high,low,ff")
    ap.add_argument("--grids", default=str(PLAN_GRID), help="plan grids, comma-separated")
    ap.add_argument("--no-imu-roll", action="store_true", help="(c): gravity from the trunk pitch alone")
    a = ap.parse_args()
    if not known_firmware(a.firmware):
        return 2
    params = WalkParams(foot_height=a.foot_height)
    print(
        "controller | fell [s] | travel / planned [m] | swing foot touching | stance share | loaded-sole travel [m]"
        " | max |roll| [rad] | pitch [rad]"
    )
    for c, g in ((c, float(g)) for c in a.controllers.split(",") for g in a.grids.split(",")):
        r = simulate_walk(
            c, a.steps, vx=a.vx, kp_high=a.kp_high, params=params, obstacle=a.obstacle, firmware=a.firmware,
            plan_grid=g, imu_roll=not a.no_imu_roll,
        )  # fmt: skip
        print(
            f"{c} k_P {r.kp:.0f} grid {g:g} | {r.fell_at:.2f} | {r.travel:.3f} / {r.planned:.3f} | "
            f"{r.swing_contact:.2f} | {r.stance_share:.2f} | {r.slip:.3f} | {np.nanmax(np.abs(r.roll)):.3f} | "
            f"{np.nanmin(r.pitch):.3f}..{np.nanmax(r.pitch):.3f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
