"""Simulate a preset servo on bam's pendulum bench and print how well it tracks.

The MX-106 with friction model M4 (Duclusaud et al., Extended Friction Models) follows bam's "accelerated
oscillations" trajectory with a 1 kg mass at 15 cm; the tracking error is printed and, with ``--plot FILE``,
plotted. ``SERVO_FF_EXAMPLE_SHORT=1`` simulates 2 s only (what test/test_examples.py runs).

    python examples/simulate_preset.py [--plot tracking.png]
"""

import argparse
import os

import numpy as np

from servo_ff.models.presets import preset
from servo_ff.models.stepper import PendulumLoad, rollout
from servo_ff.trajectories import trajectory

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--servo", default="mx106")
parser.add_argument("--model", default="m4")
parser.add_argument("--plot", help="PNG file for goal vs simulated angle")
args = parser.parse_args()

dt = 0.005  # [s], bam's step
params = preset(args.servo, args.model)
traj = trajectory("accelerated_oscillations", dt=dt)
n = int(2.0 / dt) if os.environ.get("SERVO_FF_EXAMPLE_SHORT") else len(traj.q)
goal, t = traj.q[:n], traj.t[:n]

res = rollout(params, goal[0], 0.0, goal, dt, PendulumLoad(mass=1.0, length=0.15), enable=traj.torque_enable[:n])
err = res.theta - goal
print(f"{params.actuator} {params.model}: {n} steps of {dt * 1e3:g} ms, kp = {params.firmware.kp:g}")
print(f"tracking MAE {np.mean(np.abs(err)):.4f} rad, max |error| {np.max(np.abs(err)):.4f} rad")

if args.plot:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.plot(t, goal, "k--", label="goal θd")
    plt.plot(t, res.theta, label="simulated θ")
    plt.xlabel("time [s]")
    plt.ylabel("angle [rad]")
    plt.legend()
    plt.savefig(args.plot, dpi=100)
    print(f"wrote {args.plot}")
