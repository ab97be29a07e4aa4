"""What the OP3 energy figure counts (issue 21): ``dynamics.walk_sim``'s walk under (a) and (c), ROS-free, with the
servos' electrical energy split by definition, over the DDS mission's window.

    PYTHONPATH=src python tools/op3_energy_terms.py [--steps 40] [--firmware xm430_position] [--joints]
        [--window 2.5] [--desired plan] [--vx 0.1]

The servo layer meters E = ∫U·I dt per servo (``MujocoServos.energy``: U the firmware's winding voltage, I = (U −
kt·θ̇)/R, signed, so regeneration counts against it; the DDS mission's figure). Here, integrated at every 1 ms physics
step: U·I; its positive part (drawn from the supply, ``energy_drawn``); the Joule part I²R; the mechanical part
|kt·I·θ̇|; and V_supply·|I| (a current sensor's magnitude times the supply voltage, one reading of Schwarz & Behnke's
"measured with the internal current sensor"). One line per definition: knees (a), (c), reduction; all joints likewise;
``--joints``: U·I per joint. Defaults are the DDS mission's (``bench/op3_mission.py`` section 1, or 5 with
``--firmware xm430_position``), so the U·I line is its figure: the ``--steps`` whole steps from the walk start
(``bringup/op3_energy``; the walk planned 2 steps longer, as the mission's goes on walking), the goals and (c)'s q̇, q̈
sampled as its feed-forward node does (``--desired walk_node``: ``walk_sim.desired_motion``); ``--window`` s instead
of the steps; ``--firmware``: every servo on that firmware row ((c) with that law's α̂).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

from servo_ff.bringup.op3_energy import step_end as steps_window  # the DDS mission's step_energy rows
from servo_ff.dynamics.mujoco_servos import MujocoServos
from servo_ff.dynamics.walk_sim import DESIRED, WalkRun, simulate_walk
from servo_ff.models import slots
from servo_ff.models.errors import ParameterError
from servo_ff.models.firmware import firmware_row

HOLD = 0.48  # [s] simulate_walk's default hold before the walk starts
TERMS = ("U·I (the mission's)", "U·I > 0 (drawn)", "I²R (Joule)", "|kt·I·θ̇| (mechanical)", "V_supply·|I|")


def known_firmware(row: str | None) -> bool:
    """False, after one stderr line naming the valid rows, for an unknown firmware row (None: the servo file's)."""
    try:
        if row is not None:
            firmware_row(row)
    except ParameterError as e:
        print(f"{Path(sys.argv[0]).name}: --firmware: {e}", file=sys.stderr)
        return False
    return True


def known_speed(vx: float) -> bool:
    """False, after one stderr line, for a ``--vx`` [m/s] that is not finite (the walk plan's cmd_vel refuses it)."""
    if math.isfinite(vx):
        return True
    print(f"{Path(sys.argv[0]).name}: --vx: must be a finite speed [m/s], got {vx}", file=sys.stderr)
    return False


def winding_current(sv: MujocoServos) -> np.ndarray:
    """[A] per servo, this physics step: I = (U − kt·θ̇)/R with the kernel's own winding voltage U and pre-step θ̇."""
    return (sv.volts - sv.p[:, slots.KT] * sv.data.qvel[sv.dadr]) / sv.p[:, slots.R]


def metered(
    controller: str, steps: int, window: float, firmware: str | None = None, desired: str = "walk_node", vx: float = 0.1
) -> tuple[np.ndarray, tuple[str, ...]]:
    """(terms × joints [J] over ``window`` s from the walk start, joint names) of one ``simulate_walk`` of ``steps``
    at ``vx`` [m/s]; a fall within the window ends the tool with one line."""
    e, joints, run = metered_run(controller, steps, window, firmware, desired, vx)
    if e is None:
        raise SystemExit(f"{controller}: fell at {run.fell_at:.2f} s, within the {window} s window: shorten it")
    return e, joints


def metered_run(
    controller: str, steps: int, window: float, firmware: str | None = None, desired: str = "walk_node", vx: float = 0.1
) -> tuple[np.ndarray | None, tuple[str, ...], WalkRun]:
    """:func:`metered`'s (terms × joints [J] or None when the run fell within ``window``, joint names) and the run."""
    samples: list[tuple[float, np.ndarray]] = []
    joints: list[tuple[str, ...]] = []
    before = MujocoServos.before_step

    def metering(self: MujocoServos) -> None:  # the kernel's own U and pre-step θ̇: its energy exactly
        before(self)
        kt, r, vin = self.p[:, slots.KT], self.p[:, slots.R], self.p[:, slots.VIN]
        w, i = self.data.qvel[self.dadr], winding_current(self)
        terms = np.array([self.volts * i, np.maximum(self.volts * i, 0.0), i * i * r, np.abs(kt * i * w), vin * abs(i)])
        acc = samples[-1][1] if samples else np.zeros_like(terms)
        samples.append((float(self.data.time), acc + terms * self.model.opt.timestep))
        joints[:] = [tuple(self.joint_names)]

    MujocoServos.before_step = metering
    try:
        run = simulate_walk(controller, steps, vx=vx, firmware=firmware, desired=desired)
    finally:
        MujocoServos.before_step = before
    t = np.array([s[0] for s in samples])  # MuJoCo's time: 0 at the start of simulate_walk's hold
    i0, i1 = np.searchsorted(t, [HOLD - 1e-9, HOLD + window - 1e-9])
    if i1 >= len(t) or (run.fell and run.fell_at < window):
        return None, joints[0], run
    return samples[i1][1] - samples[i0][1], joints[0], run


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=40, help="whole steps from the walk start (the mission's)")
    ap.add_argument("--window", type=float, default=None, help="s from the walk start instead of --steps")
    ap.add_argument("--firmware", default=None, help="firmware row for every servo (default: the servo file's)")
    ap.add_argument("--desired", default="walk_node", choices=DESIRED, help="walk_sim.desired_motion")
    ap.add_argument("--joints", action="store_true", help="U·I per joint too")
    ap.add_argument("--vx", type=float, default=0.1, help="m/s (the mission's section 1: 0.1)")
    a = ap.parse_args()
    if not (known_firmware(a.firmware) and known_speed(a.vx)):
        return 2
    window = steps_window(a.steps) if a.window is None else a.window
    plan = a.steps + 2 if a.window is None else a.steps
    (ea, joints), (ec, _) = (metered(c, plan, window, a.firmware, a.desired, a.vx) for c in ("high", "ff"))
    knees = [joints.index(j) for j in ("l_knee", "r_knee")]
    what = f"{a.steps} steps ({window:.2f} s)" if a.window is None else f"{window} s"
    print(f"{what} from the walk start | knees (a) [J] | (c) [J] | reduction | all (a) [J] | (c) [J] | reduction")
    for name, ta, tc in zip(TERMS, ea, ec):
        ka, kc = ta[knees].sum(), tc[knees].sum()
        print(
            f"{name} | {ka:.1f} | {kc:.1f} | {1 - kc / ka:+.3f} | {ta.sum():.1f} | {tc.sum():.1f} | "
            f"{1 - tc.sum() / ta.sum():+.3f}"
        )
    if a.joints:
        print("joint | U·I (a) [J] | (c) [J]")
        print("\n".join(f"{j} | {ea[0, k]:.3f} | {ec[0, k]:.3f}" for k, j in enumerate(joints)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
