"""The 2R arm of Duclusaud et al. §VI-B in MuJoCo: how far M1 (Coulomb–viscous) and M4 trajectories differ.

Run: python bench/arm_friction.py [--plot docs/img/arm2r_m1_m4.png]
urdf/arm2r.urdf (MX-106 shoulder, MX-64 elbow, masses from bam's CAD export) on a fixed base traces a
triangle (IK, minimum-jerk edges of 1 s, 0.5 s at rest on each corner, 2 loops) with goals at 100 Hz and 1 ms
physics, at a low (k_P = 8) and a high gain (k_P = 32, bam's identification gain), once with bam's m1 files
and once with its m4 files for both servos. The table gives each run's end-effector tracking RMS and the
M1–M4 distance between the two simulated trajectories (joint and end effector, max and RMS). Last line:
RESULT ee_max_mm_low=… ee_rms_mm_low=… ee_max_mm_high=… ee_rms_mm_high=… (M1 vs M4).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

import numpy as np  # noqa: E402
from _paths import shown  # noqa: E402

from servo_ff.dynamics.arm2r import KP_HIGH, KP_LOW, TRIANGLE, compare, run_arm  # noqa: E402


def plot(runs: dict, path: str) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(13, 4.2))
    for ax, (label, kp) in zip(axes[:2], (("low", KP_LOW), ("high", KP_HIGH))):
        m1, m4 = runs[label]
        ax.plot(*(m1.ee_des * 1e3).T, "k--", lw=1, label="path (goals)")
        ax.plot(*(m1.ee * 1e3).T, lw=1.2, label="M1 Coulomb-viscous")
        ax.plot(*(m4.ee * 1e3).T, lw=1.2, label="M4 Stribeck load-dependent")
        ax.set_title(f"k_P = {kp:g}: end effector")
        ax.set_xlabel("x [mm]")
        ax.set_ylabel("z [mm]")
        ax.axis("equal")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8, loc="lower right")
    for label, kp in (("low", KP_LOW), ("high", KP_HIGH)):
        m1, m4 = runs[label]
        axes[2].plot(m1.t, np.linalg.norm(m1.ee - m4.ee, axis=1) * 1e3, lw=1, label=f"k_P = {kp:g}")
    axes[2].set_title("|EE(M1) − EE(M4)|")
    axes[2].set_xlabel("t [s]")
    axes[2].set_ylabel("[mm]")
    axes[2].grid(alpha=0.3)
    axes[2].legend(fontsize=8)
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    return path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--plot", default=str(ROOT / "docs" / "img" / "arm2r_m1_m4.png"))
    args = ap.parse_args()
    print(f"## 2R arm (MX-106 shoulder, MX-64 elbow), triangle {TRIANGLE} m, 2 loops, 100 Hz goals, 1 ms physics")
    print(
        "| k_P | EE tracking RMS M1 [mm] | M4 [mm] | M1−M4 shoulder max / RMS [mrad] | elbow max / RMS [mrad] "
        "| EE max [mm] | EE RMS [mm] |"
    )
    print("|---|---|---|---|---|---|---|")
    runs, diffs = {}, {}
    for label, kp in (("low", KP_LOW), ("high", KP_HIGH)):
        m1, m4 = run_arm("m1", kp), run_arm("m4", kp)
        d = compare(m1, m4)
        runs[label], diffs[label] = (m1, m4), d
        print(
            f"| {kp:g} | {m1.tracking_rms() * 1e3:.1f} | {m4.tracking_rms() * 1e3:.1f} | "
            f"{d.joint_max[0] * 1e3:.1f} / {d.joint_rms[0] * 1e3:.1f} | "
            f"{d.joint_max[1] * 1e3:.1f} / {d.joint_rms[1] * 1e3:.1f} | {d.ee_max * 1e3:.1f} | "
            f"{d.ee_rms * 1e3:.1f} |"
        )
    print("plot:", shown(plot(runs, args.plot)))
    lo, hi = diffs["low"], diffs["high"]
    print(
        f"RESULT ee_max_mm_low={lo.ee_max * 1e3:.1f} ee_rms_mm_low={lo.ee_rms * 1e3:.1f} "
        f"ee_max_mm_high={hi.ee_max * 1e3:.1f} ee_rms_mm_high={hi.ee_rms * 1e3:.1f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
