"""Feed-forward on a URDF: pinocchio inverse dynamics → torque → goal positions for a low-gain P servo.

The 2R arm of ``urdf/arm2r.urdf`` (two MX-106, fixed base) follows a desired sine on both joints. For each
control cycle :class:`FeedForwardController` computes τ = M(q)q̈ + h(q, q̇) and turns it into the goal
position a P-controlled servo needs to produce it (Schwarz & Behnke, Compliant Robot Behavior, Eq. 19), with
α̂ from the MX-106 M2 preset and the battery voltage. ``SERVO_FF_EXAMPLE_SHORT=1`` runs 1 s.

    python examples/feedforward_arm.py
"""

import os
from pathlib import Path

import numpy as np

from servo_ff.dynamics.alpha import alpha_table_from_actuator
from servo_ff.dynamics.feedforward import FeedForwardController
from servo_ff.dynamics.robot import load_robot
from servo_ff.models.presets import preset

urdf = Path(__file__).resolve().parents[1] / "urdf" / "arm2r.urdf"
robot = load_robot(urdf)
alpha = alpha_table_from_actuator(preset("mx106", "m2"), robot.joint_names)
kp = 11.2  # low P gain (register units): compliant, so the goal must lead the desired angle
ff = FeedForwardController(robot, alpha, kp, mode="fixed")

dt, duration = 0.01, 1.0 if os.environ.get("SERVO_FF_EXAMPLE_SHORT") else 4.0
amp, w = np.array([0.6, 0.8]), 2 * np.pi * np.array([0.5, 0.7])  # [rad], [rad/s]
lead, tau_max = np.zeros(2), np.zeros(2)
for t in np.arange(0.0, duration, dt):
    q, dq, ddq = amp * np.sin(w * t), amp * w * np.cos(w * t), -amp * w**2 * np.sin(w * t)
    goal = ff.tick(q, dq, ddq, u_bat=12.0)  # goal positions [rad] inside the URDF limits
    lead = np.maximum(lead, np.abs(goal - q))
    tau_max = np.maximum(tau_max, np.abs(ff.tau))

print(f"{robot.joint_names}: {ff.n_ticks} cycles of {dt * 1e3:g} ms at kp = {kp:g}, 12 V")
for j, name in enumerate(robot.joint_names):
    print(f"{name:>9}: max |τ| {tau_max[j]:.3f} N·m, max |goal − desired| {lead[j]:.3f} rad")
print(f"clamped goals per joint: {ff.clamp_report()}")
