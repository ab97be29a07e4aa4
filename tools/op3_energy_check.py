"""The OP3 energy figure from both front-ends, per joint and controller, over the same window (issue 21 item 5): the
DDS mission (``bringup.op3_mission.run_op3``: its ``step_energy``) and the ROS-free walk (``walk_sim.simulate_walk``:
the servo layer's meter, ``tools/op3_energy_terms.py``'s setup: the mission's whole steps and desired motion).

    PYTHONPATH=src python tools/op3_energy_check.py [--steps 2] [--controllers high,ff] [--firmware xm430_position]
        [--desired plan] [--vx 0.1]

One table per controller: E = ∫U·I dt [J] per joint from the walk start to the end of step ``--steps``, DDS, ROS-free
and their difference (joints within 0.05 J of each other left out), then the sums over the knees and all joints.
The DDS runs one at a time, in this process (CPU-heavy: one such run on a machine at once).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from op3_energy_terms import known_firmware, known_speed, metered, steps_window  # noqa: E402

from servo_ff.bringup.op3_energy import KNEES, energy_over  # noqa: E402
from servo_ff.dynamics.walk_sim import DESIRED  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=2, help="whole steps from the walk start")
    ap.add_argument("--controllers", default="high,ff", help="comma-separated: high, low, ff")
    ap.add_argument("--firmware", default=None, help="firmware row for every servo (default: the servo file's)")
    ap.add_argument("--desired", default="walk_node", choices=DESIRED, help="the ROS-free walk's desired motion")
    ap.add_argument("--vx", type=float, default=0.1, help="m/s, both front-ends (the mission's section 1: 0.1)")
    a = ap.parse_args()
    if not (known_firmware(a.firmware) and known_speed(a.vx)):
        return 2
    from servo_ff.bringup.op3_mission import run_op3

    for c in a.controllers.split(","):
        dds = run_op3(c, n_steps=a.steps, vx=a.vx, firmware=a.firmware, log=lambda _: None)
        if len(dds.step_energy) <= a.steps:
            print(f"{c}: the DDS run fell after {len(dds.step_energy) - 1} whole steps")
            continue
        free, joints = metered(c, a.steps + 2, steps_window(a.steps), a.firmware, a.desired, a.vx)
        e_free = dict(zip(joints, free[0]))
        print(f"{c}: {a.steps} steps from the walk start | DDS [J] | ROS-free [J] | DDS − ROS-free [J]")
        rows = [(j, float(dds.step_energy[a.steps][k]), e_free[j]) for k, j in enumerate(dds.joints)]
        rows += [("knees", energy_over(dds, a.steps, KNEES), sum(e_free[j] for j in KNEES))]
        rows += [("all", energy_over(dds, a.steps), float(np.sum(free[0])))]
        for j, d, f in rows:
            if j in ("knees", "all") or abs(d - f) >= 0.05:
                print(f"{j} | {d:.2f} | {f:.2f} | {d - f:+.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
