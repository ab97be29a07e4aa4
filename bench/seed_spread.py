"""Does `identify`'s optimiser converge? M2, M3 and M4 fitted over CMA-ES seeds on the real XL330 recordings.

For each split of bench/real_logs.py that does not depend on the seed (cross-gain kp 100 → kp 400 and the reverse,
and the fastest trajectory out), M1 → M2 → M3 → M4 are identified as bench/real_logs.py does (datasheet prior,
4000 evaluations per model and search) for every seed and every ``--starts`` (independent IPOP searches per model,
the lowest TRAINING MAE kept). A converged optimiser gives the same training MAE whatever the seed; the
validation MAE is printed beside it, never used to choose.

Run: python bench/seed_spread.py [--seeds 0,1,2,3,4,5] [--starts 1,4] [--max-evals 4000]   (≈ 1 + 4 min, 2 cores)
Last line: RESULT train_spread_m2_s<k>=<mrad> … train_spread_m4_s<k>=<mrad> mean_train_m2_s<k>=<mrad> …
mean_train_m4_s<k>=<mrad> s_per_model_s<k>=<s> for each k of --starts (spread: max − min training MAE over the
seeds, the largest over the splits; mean_train: mean over splits and seeds; each key once)
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from _paths import NO_DATA  # noqa: E402
from real_logs import DATA, real_recordings, splits  # noqa: E402

from servo_ff.identification.datasheet_prior import datasheet_prior  # noqa: E402
from servo_ff.identification.simulation_fit import identify_nested  # noqa: E402
from servo_ff.models.firmware import FIRMWARE_LAWS  # noqa: E402

MODELS = ("m1", "m2", "m3", "m4")
SHOWN = ("m2", "m3", "m4")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--seeds", default="0,1,2,3,4,5")
    ap.add_argument("--starts", default="1,4", help="independent searches per model to compare (comma-separated)")
    ap.add_argument("--max-evals", type=int, default=4000)
    args = ap.parse_args()
    logs = real_recordings(args.data)
    if logs is None:
        return NO_DATA
    plan = splits(logs, 0)
    cases = {
        "kp100→kp400": plan["cross_gain"][0],
        "kp400→kp100": plan["cross_gain"][1],
        "fastest_out": plan["fastest_out"][0],
    }
    seeds = [int(s) for s in args.seeds.split(",")]
    prior, fw = datasheet_prior("xl330"), FIRMWARE_LAWS["xl330"]
    results = []
    for starts in (int(s) for s in args.starts.split(",")):
        print(f"\n== starts={starts}, {args.max_evals} evaluations per model and search, seeds {seeds}")
        print("training MAE [mrad] per seed | spread | validation MAE [mrad] per seed | best-train / best-val seed")
        spread = {m: 0.0 for m in SHOWN}
        means, secs = {m: [] for m in SHOWN}, []
        for name, (train, val) in cases.items():
            fits = []
            for seed in seeds:
                t0 = time.perf_counter()
                fits.append(
                    identify_nested(
                        train,
                        val,
                        MODELS,
                        "xl330",
                        fw,
                        seed=seed,
                        max_evals=args.max_evals,
                        starts=starts,
                        progress=False,
                        prior=prior,
                    )
                )
                secs.append((time.perf_counter() - t0) / len(MODELS))
            for m in SHOWN:
                tr = np.array([f[m].train_mae for f in fits]) * 1e3
                va = np.array([f[m].validation_mae for f in fits]) * 1e3
                spread[m] = max(spread[m], float(tr.max() - tr.min()))
                means[m] += tr.tolist()
                print(
                    f"{name:12} {m} train {' '.join(f'{x:6.2f}' for x in tr)} | {tr.max() - tr.min():5.2f} | val "
                    f"{' '.join(f'{x:6.2f}' for x in va)} | {seeds[int(tr.argmin())]} / {seeds[int(va.argmin())]}"
                )
        print(f"identify: {np.mean(secs):.1f} s per model (mean over M1–M4, splits and seeds)")
        sfx = f"_s{starts}"  # one key per --starts value: a RESULT line names each key once
        results.append(
            " ".join(f"train_spread_{m}{sfx}={spread[m]:.2f}" for m in SHOWN)
            + " "
            + " ".join(f"mean_train_{m}{sfx}={np.mean(means[m]):.2f}" for m in SHOWN)
            + f" s_per_model{sfx}={np.mean(secs):.1f}"
        )
    print("RESULT " + " ".join(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
