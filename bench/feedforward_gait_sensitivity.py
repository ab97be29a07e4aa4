"""Sensitivity of the (a) vs (c) comparison to the gait (40 steps each; ≈ 5 min).

Run: /work/venv/bin/python bench/feedforward_gait_sensitivity.py — prints one table row per gait variant and a
last line RESULT with the smallest and largest energy reduction.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
import logging  # noqa: E402
logging.basicConfig(level=logging.ERROR)
from servo_ff.dynamics.gait import SteppingParams  # noqa: E402
from servo_ff.dynamics.mujoco_humanoid import simulate  # noqa: E402
print("| gait | (a) stood | (c) stood | E (a) [J] | E (c) [J] | energy (c) vs (a) | knee energy | RMS (c)/(a) |")
print("|---|---|---|---|---|---|---|---|")
reductions = []
for lift, cr, phi in [(0.25, 0.5, 0.17), (0.25, 0.6, 0.17), (0.35, 0.6, 0.17), (0.45, 0.6, 0.2)]:
    g = SteppingParams(shift=phi, lift=lift, crouch=cr)
    a = simulate("high", n_steps=40, gait=g); c = simulate("ff", n_steps=40, gait=g)
    k = a.joint_names.index('l_knee')
    reductions.append(1 - c.energy.sum() / a.energy.sum())
    print(f"| lift {lift}, crouch {cr}, φ {phi} | {'fell %.0f s' % a.t[-1] if a.fell else 'yes'} | {'fell %.0f s' % c.t[-1] if c.fell else 'yes'} | {a.energy.sum():.0f} | {c.energy.sum():.0f} | {100*(c.energy.sum()/a.energy.sum()-1):+.1f}% | {100*(c.energy[k]/a.energy[k]-1):+.1f}% | {c.rms()/a.rms():.3f} |", flush=True)
print(f"RESULT energy_reduction_min={min(reductions):.4f} energy_reduction_max={max(reductions):.4f}")
