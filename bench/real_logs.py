"""Real servo recordings: identification of M1–M6 on a Dynamixel XL330 with cross-gain validation.

Data: ../shared/data/xl330 (eight pendulum-bench recordings published with Rhoban/bam, the reference
implementation of Duclusaud et al., *Extended Friction Models for the Physics Simulation of Servo Actuators*;
kp 100 and kp 400, four trajectories each). Raw recordings, resampled by servo_ff the way bam.process does.

1. bam's published XL330 files (m1–m6) evaluated in our simulator (identical to bam's, see
   test/test_models_bam_equality.py) on every log.
2. M1–M6 identified (CMA-ES with IPOP restarts on simulation MAE, warm-started along M1 → M6, q_offset
   fitted) on the four kp 100 logs and validated on the four kp 400 logs, then the reverse. The cross-gain MAE of a
   model is the mean of its two
   validation MAEs; nothing is tuned on a validation log.
3. A plot of measured vs simulated θ and duty for the worst validation log (the recordings' ``load`` column is
   the servo's Present PWM register, not a current).

Run: python bench/real_logs.py [--data DIR] [--max-evals N] [--firmware SPEC]
Last line: RESULT best_cross_gain_mae=<rad> bam_published_mae=<rad> m1_over_best=<x> identify_s=<s>
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from servo_ff.identification.simulation_fit import evaluate, identify_nested  # noqa: E402
from servo_ff.io.logs import read_logs  # noqa: E402
from servo_ff.models.firmware import FIRMWARE_LAWS, firmware_from_spec  # noqa: E402
from servo_ff.models.params import MODEL_NAMES  # noqa: E402
from servo_ff.models.presets import preset  # noqa: E402
from servo_ff.models.stepper import PendulumLoad, rollout  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "xl330"
IMG = ROOT / "docs" / "img"


def published(logs) -> dict[str, float]:
    """Mean MAE [rad] of each bam-published XL330 file on ``logs``."""
    return {m: evaluate(preset("xl330", m), logs) for m in MODEL_NAMES}


def present_pwm_duty(log) -> np.ndarray | None:
    """The raw recording's ``load`` column as a signed duty on the log's grid: bam's recorder wrote the XL330's
    Present PWM register (124; unsigned 16-bit, 885 = 100 %) into it, not a current. Converted to signed
    before interpolating (interpolating the unsigned words would invent spikes at every sign change)."""
    entries = json.loads(Path(log.source).read_text())["entries"]
    if "load" not in entries[0]:
        return None
    t = np.array([e["timestamp"] for e in entries], float)
    raw = np.array([e["load"] for e in entries], float)
    return np.interp(log.t, t, np.where(raw > 32767, raw - 65536, raw) / 885.0)


def plot_worst(log, params, path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    p = params.with_(firmware=params.firmware.with_(kp=log.kp, vin=log.vin))
    sim = rollout(
        p,
        log.position[0],
        log.speed[0],
        log.goal_position,
        log.dt,
        PendulumLoad(log.mass, log.length, log.arm_mass),
        enable=log.torque_enable,
    )
    fig, (a, b) = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
    a.plot(log.t, log.goal_position, "k:", lw=1, label="goal")
    a.plot(log.t, log.position, "C0", label="measured θ")
    a.plot(log.t, sim.theta, "C3--", label=f"simulated θ ({params.model})")
    a.set_ylabel("θ [rad]")
    a.legend(loc="best", fontsize=8)
    a.set_title(title, fontsize=9)
    duty = present_pwm_duty(log)
    if duty is not None:
        b.plot(log.t, duty, "C0", label="servo reading: Present PWM / 885")
    b.plot(log.t, sim.volts / p.firmware.vin, "C3--", label="simulated duty U / vin")
    b.set_xlabel("t [s]")
    b.set_ylabel("duty [-]")
    b.legend(loc="best", fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--max-evals", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--firmware", default="xl330", help=f"firmware law to identify under ({', '.join(FIRMWARE_LAWS)})")
    args = ap.parse_args()
    raw = args.data / "raw"
    if not raw.is_dir():
        print(f"no real recordings at {raw} (the data folder ships beside the project, not with it): nothing to do")
        return 0
    logs = read_logs([raw])
    firmware = firmware_from_spec(args.firmware, base=FIRMWARE_LAWS["xl330"])
    gains = sorted({lg.kp for lg in logs})
    print(
        f"{len(logs)} real XL330 logs from {raw} (kp {', '.join(f'{g:g}' for g in gains)}), "
        f"firmware law {args.firmware}, CMA-ES ≤ {args.max_evals} evals per model"
    )

    pub = published(logs)
    print("\nbam's published XL330 files in our simulator (mean MAE over all 8 logs, mrad):")
    print("  " + "  ".join(f"{m} {v * 1e3:6.2f}" for m, v in pub.items()))

    by_gain = {g: [lg for lg in logs if lg.kp == g] for g in gains}
    t0 = time.perf_counter()
    runs = {}
    for g_train, g_val in ((gains[0], gains[-1]), (gains[-1], gains[0])):
        runs[(g_train, g_val)] = identify_nested(
            by_gain[g_train],
            by_gain[g_val],
            MODEL_NAMES,
            "xl330",
            firmware,
            seed=args.seed,
            max_evals=args.max_evals,
            progress=False,
        )
    identify_s = time.perf_counter() - t0

    print(
        f"\n{'model':6} | "
        + " | ".join(f"train kp{a:g} → val kp{b:g} [mrad]" for a, b in runs)
        + " | cross-gain MAE [mrad] | bam file on the same val logs [mrad]"
    )
    cross = {}
    for m in MODEL_NAMES:
        cells = [f"{r[m].train_mae * 1e3:7.2f} → {r[m].validation_mae * 1e3:7.2f}" for r in runs.values()]
        cross[m] = float(np.mean([r[m].validation_mae for r in runs.values()]))
        bam_same = float(np.mean([evaluate(preset("xl330", m), by_gain[b]) for _, b in runs]))
        print(
            f"{m:6} | " + " | ".join(f"{c:>28}" for c in cells) + f" | {cross[m] * 1e3:21.2f} | {bam_same * 1e3:10.2f}"
        )
    best = min(cross, key=cross.get)
    bam_best = min(pub, key=pub.get)
    print(
        f"\nbest cross-gain model {best}: {cross[best] * 1e3:.2f} mrad; bam's best published file ({bam_best}) "
        f"on the same validation logs: {pub[bam_best] * 1e3:.2f} mrad; ratio {cross[best] / pub[bam_best]:.2f} "
        f"(target ≤ 0.5); MAE(M1)/MAE({best}) = {cross['m1'] / cross[best]:.2f} (target ≥ 1.5)"
    )
    print(f"identification wall time, 2 directions × 6 models × 4 logs: {identify_s:.1f} s")

    worst_log, worst_mae, worst_params = None, -1.0, None
    for (_, g_val), r in runs.items():
        for lg in by_gain[g_val]:
            mae = evaluate(r[best].params, [lg])
            if mae > worst_mae:
                worst_log, worst_mae, worst_params = lg, mae, r[best].params
    png = IMG / "real_logs_xl330_worst.png"
    plot_worst(
        worst_log,
        worst_params,
        png,
        f"XL330 kp {worst_log.kp:g}, {worst_log.trajectory}: validation MAE {worst_mae * 1e3:.1f} mrad "
        f"({best} fitted at the other gain)",
    )
    print(
        f"worst validation log: {Path(worst_log.source).name} ({worst_log.trajectory}, kp {worst_log.kp:g}), "
        f"{worst_mae * 1e3:.2f} mrad → {png.relative_to(ROOT)}"
    )
    print(
        f"RESULT best_cross_gain_mae={cross[best]:.5f} bam_published_mae={pub[bam_best]:.5f} "
        f"m1_over_best={cross['m1'] / cross[best]:.2f} identify_s={identify_s:.1f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
