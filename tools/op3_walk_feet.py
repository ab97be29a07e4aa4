"""How the OP3's feet take the placo plan under (a), (b), (c) (issue 21), ROS-free: ``dynamics.walk_sim``'s walk.

    PYTHONPATH=src python tools/op3_walk_feet.py [--steps 12] [--vx 0.1] [--kp-high 800] [--firmware xm430_position]
        [--foot-height 0.02] [--obstacle 0.015] [--controllers high,low,ff]

One line per controller: fall time, trunk travel for the plan's, the share of planned single-support periods in which
the swing foot still touched the ground, the stance foot's share of the weight then, the loaded soles' travel
(sliding or rocking on an edge), the largest trunk roll and the trunk pitch range.
"""

from __future__ import annotations

import argparse

import numpy as np

from servo_ff.dynamics.walk_pattern import WalkParams
from servo_ff.dynamics.walk_sim import simulate_walk


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--vx", type=float, default=0.1, help="m/s")
    ap.add_argument("--kp-high", type=float, default=800.0, help="(a)'s k_P; (b), (c): 0.35 of it")
    ap.add_argument("--firmware", default=None, help="firmware row for every servo (default: the servo file's)")
    ap.add_argument("--foot-height", type=float, default=WalkParams().foot_height, help="swing clearance [m]")
    ap.add_argument("--obstacle", type=float, default=0.0, help="box under the right foot [m] (0: flat)")
    ap.add_argument("--controllers", default="high,low,ff")
    a = ap.parse_args()
    params = WalkParams(foot_height=a.foot_height)
    print(
        "controller | fell [s] | travel / planned [m] | swing foot touching | stance share | loaded-sole travel [m]"
        " | max |roll| [rad] | pitch [rad]"
    )
    for c in a.controllers.split(","):
        r = simulate_walk(
            c, a.steps, vx=a.vx, kp_high=a.kp_high, params=params, obstacle=a.obstacle, firmware=a.firmware
        )
        print(
            f"{c} k_P {r.kp:.0f} | {r.fell_at:.2f} | {r.travel:.3f} / {r.planned:.3f} | {r.swing_contact:.2f} | "
            f"{r.stance_share:.2f} | {r.slip:.3f} | {np.nanmax(np.abs(r.roll)):.3f} | "
            f"{np.nanmin(r.pitch):.3f}..{np.nanmax(r.pitch):.3f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
