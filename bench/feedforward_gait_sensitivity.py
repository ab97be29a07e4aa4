"""Sensitivity of the (a) high-gain P vs (c) low-gain P + feed-forward comparison to the gait (40 steps each).

Run: /work/venv/bin/python bench/feedforward_gait_sensitivity.py (≈ 6 min) — one table row per gait variant (the
first is the default gait of bench/feedforward.py) and a last line
RESULT energy_reduction_min=<> energy_reduction_max=<>.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from servo_ff.dynamics.gait import SteppingParams  # noqa: E402
from servo_ff.dynamics.mujoco_humanoid import simulate  # noqa: E402

VARIANTS = [(0.25, 0.5, 0.17), (0.25, 0.6, 0.17), (0.35, 0.6, 0.17), (0.45, 0.6, 0.2)]  # lift, crouch, φ


def main() -> int:
    logging.basicConfig(level=logging.ERROR)
    print("| gait | (a) stood | (c) stood | E (a) [J] | E (c) [J] | energy (c) vs (a) | knee energy | RMS (c)/(a) |")
    print("|---|---|---|---|---|---|---|---|")
    reductions = []
    for lift, crouch, phi in VARIANTS:
        gait = SteppingParams(shift=phi, lift=lift, crouch=crouch)
        a = simulate("high", n_steps=40, gait=gait)
        c = simulate("ff", n_steps=40, gait=gait)
        k = a.joint_names.index("l_knee")
        stood = lambda r: f"fell at {r.t[-1]:.0f} s" if r.fell else "yes"  # noqa: E731
        reductions.append(1 - c.energy.sum() / a.energy.sum())
        print(
            f"| lift {lift}, crouch {crouch}, φ {phi} | {stood(a)} | {stood(c)} | {a.energy.sum():.0f} | "
            f"{c.energy.sum():.0f} | {100 * (c.energy.sum() / a.energy.sum() - 1):+.1f}% | "
            f"{100 * (c.energy[k] / a.energy[k] - 1):+.1f}% | {c.rms() / a.rms():.3f} |",
            flush=True,
        )
    print(f"RESULT energy_reduction_min={min(reductions):.4f} energy_reduction_max={max(reductions):.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
