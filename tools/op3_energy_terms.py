"""What the OP3 energy figure counts (issue 21): ``dynamics.walk_sim``'s walk under (a) and (c), ROS-free, with the
servos' electrical energy split by definition.

    PYTHONPATH=src python tools/op3_energy_terms.py [--steps 12] [--window 2.5] [--firmware xm430_position]

The servo layer meters E = ∫U·I dt per servo (``MujocoServos.energy``: U the firmware's winding voltage, I = (U −
kt·θ̇)/R, signed, so regeneration counts against it; the DDS mission's figure). Here, integrated at every 1 ms physics
step from the walk start over ``--window`` s (both controllers upright over it): U·I; its positive part (drawn from
the supply, ``energy_drawn``); the Joule part I²R; the mechanical part |kt·I·θ̇|; and V_supply·|I| (a current
sensor's magnitude times the supply voltage, one reading of Schwarz & Behnke's "measured with the internal current
sensor"). One line per definition: knees (a), (c), reduction; all joints likewise. ``--firmware``: every servo on that
firmware row (``simulate_walk``'s ``firmware``; (c) with that law's α̂).
"""

from __future__ import annotations

import argparse

import numpy as np

from servo_ff.dynamics.mujoco_servos import MujocoServos
from servo_ff.dynamics.walk_sim import simulate_walk
from servo_ff.models import slots

HOLD = 0.48  # [s] simulate_walk's default hold before the walk starts
TERMS = ("U·I (the mission's)", "U·I > 0 (drawn)", "I²R (Joule)", "|kt·I·θ̇| (mechanical)", "V_supply·|I|")


def metered(
    controller: str, steps: int, window: float, firmware: str | None = None
) -> tuple[np.ndarray, tuple[str, ...]]:
    """(terms × joints [J] over ``window`` s from the walk start, joint names) of one ``simulate_walk``."""
    samples: list[tuple[float, np.ndarray]] = []
    joints: list[tuple[str, ...]] = []
    before = MujocoServos.before_step

    def metering(self: MujocoServos) -> None:  # the kernel's own U and pre-step θ̇: its energy exactly
        before(self)
        kt, r, vin = self.p[:, slots.KT], self.p[:, slots.R], self.p[:, slots.VIN]
        w = self.data.qvel[self.dadr]
        i = (self.volts - kt * w) / r
        terms = np.array([self.volts * i, np.maximum(self.volts * i, 0.0), i * i * r, np.abs(kt * i * w), vin * abs(i)])
        acc = samples[-1][1] if samples else np.zeros_like(terms)
        samples.append((float(self.data.time), acc + terms * self.model.opt.timestep))
        joints[:] = [tuple(self.joint_names)]

    MujocoServos.before_step = metering
    try:
        run = simulate_walk(controller, steps, firmware=firmware)
    finally:
        MujocoServos.before_step = before
    t = np.array([s[0] for s in samples])  # MuJoCo's time: 0 at the start of simulate_walk's hold
    i0, i1 = np.searchsorted(t, [HOLD, HOLD + window])
    if i1 >= len(t) or (run.fell and run.fell_at < window):
        raise SystemExit(f"{controller}: fell at {run.fell_at:.2f} s, within the {window} s window: shorten --window")
    return samples[i1][1] - samples[i0][1], joints[0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--window", type=float, default=2.5, help="s from the walk start")
    ap.add_argument("--firmware", default=None, help="firmware row for every servo (default: the servo file's)")
    a = ap.parse_args()
    (ea, joints), (ec, _) = (metered(c, a.steps, a.window, a.firmware) for c in ("high", "ff"))
    knees = [joints.index(j) for j in ("l_knee", "r_knee")]
    print(f"{a.window} s from the walk start | knees (a) [J] | (c) [J] | reduction | all (a) [J] | (c) [J] | reduction")
    for name, ta, tc in zip(TERMS, ea, ec):
        ka, kc = ta[knees].sum(), tc[knees].sum()
        print(
            f"{name} | {ka:.1f} | {kc:.1f} | {1 - kc / ka:+.3f} | {ta.sum():.1f} | {tc.sum():.1f} | "
            f"{1 - tc.sum() / ta.sum():+.3f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
