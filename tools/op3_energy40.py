"""The OP3 energy over 40 steps at a speed where (a) walks, ROS-free (issue 21 item 5): the twin of section 6 of
``bench/op3_mission.py``, with ``dynamics.walk_sim.simulate_walk`` and the servo layer's meter
(``tools/op3_energy_terms.py``'s ``metered``: the mission's whole steps, the goals and (c)'s q̇, q̈ sampled as the
feed-forward node does).

    PYTHONPATH=src python tools/op3_energy40.py [--steps 40] [--firmware ROW] [--desired walk_node]

The same pre-registered rule as section 6 (``bench/op3_mission.energy40_section``): (a) walks ``--steps`` steps at
each of ``op3_energy.ENERGY40_SPEEDS`` (0.05, 0.035, 0.02 m/s) in turn, the first at which it completes them all
without a fall is the speed; (c) walks there once. The walk is planned 2 steps longer, as the DDS walk goes on
walking. One difference from section 6: when (c) falls within the steps, this tool compares nothing
(``energy40_steps=nan``), where section 6 compares over the whole steps before (c)'s fall. Printed: E = ∫U·I dt [J]
per joint group (``op3_energy.GROUPS``) for (a) and (c) over the ``--steps`` whole steps, their difference, the
trunk pitch's mean [rad], the travel [m] over the run (and the plan's), and the knees' motor torque kt·I [N·m] split
into its mean over the window (the steady load) and the RMS about it (the motion): the knees' Joule energy is
R/kt²·T·(mean² + RMS²), summed over both knees.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from op3_energy_terms import HOLD, known_firmware, metered_run, steps_window, winding_current  # noqa: E402

from servo_ff.bringup.op3_energy import ENERGY40_SPEEDS, KNEES, MIN_STEPS, energy40_keys, group_sums  # noqa: E402
from servo_ff.dynamics.mujoco_servos import MujocoServos  # noqa: E402
from servo_ff.dynamics.walk_sim import DESIRED  # noqa: E402
from servo_ff.models import slots  # noqa: E402


def knee_torque(controller: str, steps: int, window: float, firmware: str | None, desired: str, vx: float):
    """:func:`metered_run`'s result and the knees' motor torque kt·I [N·m] over ``window`` s from the walk start:
    (mean, RMS about the mean) per knee, (2, 2)."""
    samples: list[np.ndarray] = []
    before = MujocoServos.before_step

    def record(self: MujocoServos) -> None:  # the kernel's U and pre-step θ̇, as metered's meter
        before(self)
        if HOLD - 1e-9 <= self.data.time < HOLD + window - 1e-9:  # [HOLD, HOLD + window): the energy's is one
            # physics step later, (HOLD, HOLD + window]; 1 ms of the 20 s, kept so the figures in docs hold
            k = [self.joint_names.index(j) for j in KNEES]
            samples.append(self.p[k, slots.KT] * winding_current(self)[k])

    MujocoServos.before_step = record
    try:
        out = metered_run(controller, steps, window, firmware, desired, vx)
    finally:
        MujocoServos.before_step = before
    tau = np.array(samples)
    return out, np.stack([tau.mean(axis=0), tau.std(axis=0)], axis=1)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=40, help="whole steps from the walk start")
    ap.add_argument("--firmware", default=None, help="firmware row for every servo (default: the servo file's)")
    ap.add_argument("--desired", default="walk_node", choices=DESIRED, help="walk_sim.desired_motion")
    a = ap.parse_args()
    if not known_firmware(a.firmware):
        return 2
    if a.steps < MIN_STEPS:  # as op3_energy.compare: fewer whole steps compare nothing
        print(f"{Path(sys.argv[0]).name}: --steps: at least {MIN_STEPS} whole steps, got {a.steps}", file=sys.stderr)
        return 2
    window = steps_window(a.steps)
    for vx in ENERGY40_SPEEDS:
        (ea, joints, ra), ta = knee_torque("high", a.steps + 2, window, a.firmware, a.desired, vx)
        print(f"(a) at {vx} m/s: {'walked the' if ea is not None else f'fell at {ra.fell_at:.2f} s, within the'} "
              f"{a.steps} steps ({window:.2f} s)")  # fmt: skip
        if ea is not None:
            break
    else:
        print(f"RESULT {energy40_keys(math.nan, 0, math.nan, math.nan)}")
        return 0
    (ec, _, rc), tc = knee_torque("ff", a.steps + 2, window, a.firmware, a.desired, vx)
    if ec is None:
        print(f"(c) at {vx} m/s: fell at {rc.fell_at:.2f} s, within the {a.steps} steps: no comparison")
        print(f"RESULT {energy40_keys(vx, math.nan, math.nan, math.nan)}")
        return 0
    ga, gc = group_sums(list(joints), ea[0]), group_sums(list(joints), ec[0])
    print(f"{a.steps} steps at {vx} m/s, ROS-free | (a) [J] | (c) [J] | (c) against (a)")
    for g in ga:
        print(f"E {g} | {ga[g]:.1f} | {gc[g]:.1f} | {gc[g] / ga[g] - 1:+.1%}")
    pitch = [float(np.nanmean(r.pitch[r.t <= window])) for r in (ra, rc)]
    print(f"trunk pitch, mean [rad] | {pitch[0]:.3f} | {pitch[1]:.3f} | {pitch[1] - pitch[0]:+.3f}")
    for k, j in enumerate(KNEES):
        print(
            f"{j} kt·I, mean; RMS about it [N·m] | {ta[k, 0]:+.3f}; {ta[k, 1]:.3f} | {tc[k, 0]:+.3f}; {tc[k, 1]:.3f} |"
        )
    print(
        f"trunk travel, the whole walk of {a.steps + 2} steps [m] | {ra.travel:.3f} | {rc.travel:.3f} | "
        f"plan {ra.planned:.3f}"
    )
    print(f"RESULT {energy40_keys(vx, a.steps, 1 - gc['knees'] / ga['knees'], 1 - gc['all'] / ga['all'])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
