"""Schwarz & Behnke (Compliant Robot Behavior) §5.2 on a simulated 20-joint humanoid: feed-forward tick time, tracking
and energy of (a)/(b)/(c).

Run: /work/venv/bin/python bench/feedforward.py [--steps 40] [--plot docs/img/ff_knee_tracking.png]
Prints the tick timing, the 40-step table at the primary gain scale (k_P = 53.125 ↔ "1.0"), a cross-check
of (c) with α̂ identified by Schwarz & Behnke's ILC + least squares, optionally (--kp32) the table at the Protocol-1
default (k_P = 32 ↔ "1.0"), and a last line
RESULT tick_over_pinocchio=<tick ÷ its bare pinocchio calls, same run, alternating call by call> tick_us_20=<µs>
energy_reduction=<1 − E_c/E_a> tracking_rms_ratio=<RMS_c/RMS_a>.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from servo_ff.dynamics.mujoco_humanoid import GAIN_RATIO, HUMANOID_URDF, KP_HIGH, default_alpha, simulate  # noqa: E402
from servo_ff.dynamics.robot import load_robot  # noqa: E402
from servo_ff.models.presets import preset  # noqa: E402
from servo_ff.workflows.feedforward_experiment import alpha_from_ilc, format_table, plot_knee, run_experiment, time_tick  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--plot", default=str(ROOT / "docs" / "img" / "ff_knee_tracking.png"))
    ap.add_argument("--kp32", action="store_true", help="also run the secondary k_P(1.0) = 32 table (+1–2 min)")
    args = ap.parse_args()

    t = time_tick()
    print("## Feed-forward tick, 20 joints (best of 3 medians over 3000 ticks, this machine)")
    print("| part | single support [µs] | double support [µs] |\n|---|---|---|")
    print(f"| inverse dynamics (support foot fixed) | {t['id_single_us']:.1f} | {t['id_double_us']:.1f} |")
    print(f"| whole tick: ID + Eq. 19 + checks + clamps | {t['tick_single_us']:.1f} | {t['tick_double_us']:.1f} |")
    print(
        f"| anchor: the tick's bare pinocchio calls (alternating call by call with the tick) | | "
        f"{t['pin_double_us']:.1f} (tick {t['tick_double_alt_us']:.1f}) |"
    )
    print(
        f"tick ÷ pinocchio (median of per-call ratios, double support): {t['tick_over_pinocchio']:.2f}; "
        f"ratio of the 10th percentiles (the calls least disturbed by other load): {t['tick_over_pinocchio_p10']:.2f}"
    )

    wall = time.perf_counter()
    res = run_experiment(args.steps, KP_HIGH, progress=True)
    print(
        f"\n## {args.steps} steps in place, k_P(1.0) = {KP_HIGH:.3f} (MX-106(2.0) default P gain 850) "
        f"[{time.perf_counter() - wall:.0f} s wall]"
    )
    print(format_table(res, KP_HIGH))
    a, c = res["high"], res["ff"]
    e_red = 1.0 - c.energy.sum() / a.energy.sum()
    k = a.joint_names.index("l_knee")
    print(
        f"energy (c) vs (a): all joints {a.energy.sum():.0f} J → {c.energy.sum():.0f} J ({-100 * e_red:+.1f}%); "
        f"left knee {a.energy[k]:.0f} J → {c.energy[k]:.0f} J ({100 * (c.energy[k] / a.energy[k] - 1):+.1f}%; "
        "002: 189 J → 140 J, −26%)"
    )
    print(
        "per joint energy [J] (a) / (c): "
        + ", ".join(f"{n} {ea:.0f}/{ec:.0f}" for n, ea, ec in zip(a.joint_names, a.energy, c.energy) if max(ea, ec) > 1)
    )
    swing_contact = {
        key: float(
            (r.foot_force[r.swing[:, 0], 0] > 0.5).mean() / 2 + (r.foot_force[r.swing[:, 1], 1] > 0.5).mean() / 2
        )
        for key, r in res.items()
        if not r.fell
    }
    print(
        "fraction of scheduled swing time with the swing foot still touching the ground: "
        + ", ".join(f"{key} {v:.2f}" for key, v in swing_contact.items())
    )
    print("plot:", plot_knee(res, args.plot))

    # cross-check: (c) with α̂ identified by Schwarz & Behnke's ILC + least squares on a simulated single-joint bench
    wall = time.perf_counter()
    robot = load_robot(HUMANOID_URDF)
    params = preset("mx106", "m4")
    table, info = alpha_from_ilc(robot, params, GAIN_RATIO * KP_HIGH)
    c_ilc = simulate("ff", n_steps=args.steps, robot=robot, alpha=table, progress=True)
    fit = info["fit"]
    print(f"\n## cross-check: (c) with α̂ from Schwarz & Behnke's ILC + LS [{time.perf_counter() - wall:.0f} s wall]")
    print(
        f"bench: leg below {info['joint']} as a pendulum ({info['mass']:.2f} kg at {info['length']:.3f} m), "
        f"ILC shift {info['ilc_shift']:.3f} s, {info['ilc_iterations']} iterations to windowed error "
        f"{info['ilc_error']:.4f} rad; fit α̂ = {[round(a, 3) for a in fit['alpha']]} (q̇_s {fit['dq_s']:.3f}, "
        f"δ {fit['delta']:.3f}, t_d {fit['delay']:.3f} s, residual {fit['rms_rad']:.4f} rad); physics α̂ = "
        f"{[round(float(a), 3) for a in default_alpha(robot, params).alpha[0]]}"
    )
    print(
        f"| (c') low-gain P + FF, ILC α̂ | {'yes' if not c_ilc.fell else 'no'} | RMS {c_ilc.rms():.4f} | "
        f"max {c_ilc.max_error():.4f} | knee RMS {c_ilc.rms([k]):.4f} | E all {c_ilc.energy.sum():.0f} J | "
        f"E knee {c_ilc.energy[k]:.0f} J | energy vs (a) {100 * (c_ilc.energy.sum() / a.energy.sum() - 1):+.1f}% | "
        f"RMS vs (a) {c_ilc.rms() / a.rms():.3f} |"
    )

    if args.kp32:
        wall = time.perf_counter()
        res32 = run_experiment(args.steps, 32.0, progress=True)
        print(
            f"\n## {args.steps} steps, k_P(1.0) = 32 (Protocol-1 default, bam's identification gain) "
            f"[{time.perf_counter() - wall:.0f} s wall]"
        )
        print(format_table(res32, 32.0))
        a32, c32 = res32["high"], res32["ff"]
        if a32.fell or c32.fell:
            print(
                "energy/tracking ratios not comparable here: "
                + ", ".join(f"{key} fell at {r.t[-1]:.1f} s" for key, r in res32.items() if r.fell)
            )
        else:
            print(
                f"energy (c) vs (a): {a32.energy.sum():.0f} J → {c32.energy.sum():.0f} J "
                f"({100 * (c32.energy.sum() / a32.energy.sum() - 1):+.1f}%); RMS ratio {c32.rms() / a32.rms():.3f}"
            )

    print(
        f"RESULT tick_over_pinocchio={t['tick_over_pinocchio']:.3g} tick_us_20={t['tick_double_us']:.1f} "
        f"energy_reduction={e_red:.4f} "
        f"tracking_rms_ratio={c.rms() / a.rms():.4f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
