"""A pre-registered rule for the cross-gain split (issue 23): the motor resistance held at the datasheet's stall point.

Why (bench/cross_gain_diagnosis.py, seed 0, before any run of this rule): what carries M3's cross-gain error is R,
in both directions. The kp 100 fit puts R at 2.98 Ω, the kp 400 fit at 3.91, the joint fit (all eight logs) at 3.48
(kt 0.373 in all three, the datasheet box's low edge). The joint fit's R alone, swapped into a one-gain fit, takes
M3's held-out MAE 56.53 → 32.93 mrad (kp 100 → kp 400) and 37.29 → 22.12 (kp 400 → kp 100); friction, armature,
q_offset and kt swaps do not (+4.8 … −3.4 mrad). Each gain's own logs do not pin R: at a gain's torques friction
and R trade off (the diagnosis's held-R refit moves the friction keys), so a fit on one gain puts R where its
friction is cheapest. R is a quantity a one-gain fit can be given without seeing the other gain: the datasheet's
stall point, U = R·I at θ̇ = 0 (Maximo et al. Eq. 2; models/datasheet.py ``motor_from_servo``), R = V/I_s =
6.0 V / 1.74 A = 3.448 Ω for the XL330-M288 (ROBOTIS e-manual: 'Stall Torque 0.60 [N.m] (at 6.0 [V], 1.74 [A])';
``DatasheetFigures.stall_resistance``). The current prior (a ×/÷ 1.25 box on stall torque and no-load speed) leaves
R free within 2.98–4.66 Ω at kt 0.373 (the kp 100 fit sits at its low edge).

The rule, written and committed before any of its runs (2026-11-26, round 3, ninth session); nothing here is chosen
on its outcome:

* **Change**: in ``identify_nested`` (bench/real_logs.py's settings: ``identify``'s search, 4000 evaluations per
  model, datasheet prior, q_offset fitted, the armature held at the training gain's free-swing estimate) R is held
  (``fixed``) at the datasheet's stall resistance V/I_s = 3.448 Ω instead of searched; kt and the friction are
  searched as before (kt inside the prior's boxes: with R held the stall-torque box caps kt at 0.431). The baseline
  is the same fit with R searched (bench/real_logs.py's cross-gain fit).
* **Split**: cross-gain (bench/real_logs.py): fit on the four kp 100 logs and judge the four kp 400 logs, and the
  reverse; a seed's cross-gain MAE is the mean of the two held-out MAEs (real_logs' headline).
* **Chain**: M1 → M3 (M3 is warm-started from M1 only, so its fit is bench/real_logs.py's; M2, M4, M5 not run: two
  shared cores).
* **Seeds**: CMA-ES seeds 0–7 (the split does not depend on the seed).
* **Decisive model**: M3 (the headline's best model, 46.91 mrad at seed 0). M1 and each direction are reported,
  not decisive.
* **Validated** (bench/armature_swing.py's and bench/confirm_law.py's rule): M3's cross-gain MAE lower than the
  baseline's of the same seed in ≥ 7 of 8 seeds, *and* the mean gain over the seeds larger than the seed spread
  (the baseline's cross-gain MAE range, max − min, over the seeds).
* Known before the run and stated here: the diagnosis above (seed 0), including its held-R refit: M3 refitted on
  one gain with R held at the *joint fit's* 3.484 Ω (the rest free) gains far less than the swap (kp 100 → kp 400
  56.53 → 53.23 mrad, kp 400 → kp 100 37.29 → 34.83; cross-gain −2.9 mrad), because the refit moves the friction
  back. So the expected gain is a few mrad, against a cross-gain seed spread of about 4–8 mrad
  (bench/candidate_laws.py): the rule may well not validate. The datasheet's own kt figures disagree with each
  other (V/ω_0 0.466 N·m/A, τ_s/I_s 0.345): only R is taken from the stall point; kt stays searched in the prior's
  box.

Run: python bench/datasheet_resistance.py [--seeds 0,…,7] [--max-evals 4000] [--data DIR]
Last line: RESULT rule=datasheet_resistance R=<Ω> seeds=<n> m3_lower_in=<k>/<n> m3_gain=<rad> m3_spread=<rad>
m3_baseline=<rad> m3_rule=<rad> (cross-gain MAE, means over the seeds) m3_up_baseline=<rad> m3_up_rule=<rad>
(kp 100 → kp 400) m3_down_baseline=<rad> m3_down_rule=<rad> (kp 400 → kp 100) m1_baseline=<rad> m1_rule=<rad>
m3_train_baseline=<rad> m3_train_rule=<rad> (training MAE, mean of both gains' fits) validated=<yes|no>
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
from armature_swing import verdict  # noqa: E402
from real_logs import DATA, real_recordings, swing  # noqa: E402

from servo_ff.identification.datasheet_prior import datasheet_prior  # noqa: E402
from servo_ff.identification.simulation_fit import identify_nested  # noqa: E402
from servo_ff.models.firmware import FIRMWARE_LAWS  # noqa: E402

CHAIN = ("m1", "m3")
DECISIVE = "m3"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--seeds", default="0,1,2,3,4,5,6,7")
    ap.add_argument("--max-evals", type=int, default=4000)
    args = ap.parse_args()
    logs = real_recordings(args.data)
    if logs is None:
        return NO_DATA
    prior = datasheet_prior("xl330")
    r_ds = prior.figures.stall_resistance
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    gains = sorted({lg.kp for lg in logs})
    dirs = {"up": (gains[0], gains[-1]), "down": (gains[-1], gains[0])}
    by_gain = {g: [lg for lg in logs if lg.kp == g] for g in gains}
    held = {g: swing(by_gain[g], True).fixed for g in gains}
    print(
        f"R held at the datasheet's stall resistance {prior.figures.voltage:g} V / {prior.figures.stall_current:g} A "
        f"= {r_ds:.3f} Ω; armature held at each training gain's free swing: "
        + ", ".join(f"kp {g:g} {held[g]['armature']:.5f} kg·m²" for g in gains)
    )
    print(
        "| seed | arm | M1 train up / down | M1 held out up / down | M3 train up / down | M3 held out up / down | "
        "M3 cross-gain | M3 R up / down [Ω] | s |\n|---|---|---|---|---|---|---|---|---|"
    )
    # res[arm][key][seed]: key = "m3" (cross-gain), "m3_up", "m3_down", "m1", "m3_train"
    res: dict[str, dict[str, dict[int, float]]] = {a: {} for a in ("base", "rule")}
    for s in seeds:
        for arm in ("base", "rule"):
            t0 = time.perf_counter()
            fits = {}
            for tag, (a, b) in dirs.items():
                fixed = {**held[a], **({"R": r_ds} if arm == "rule" else {})}
                fits[tag] = identify_nested(
                    by_gain[a],
                    by_gain[b],
                    CHAIN,
                    "xl330",
                    FIRMWARE_LAWS["xl330"],
                    seed=s,
                    max_evals=args.max_evals,
                    progress=False,
                    prior=prior,
                    fixed=fixed,
                )
            v = {m: {t: fits[t][m].validation_mae for t in dirs} for m in CHAIN}
            tr = {m: {t: fits[t][m].train_mae for t in dirs} for m in CHAIN}
            r = res[arm]
            r.setdefault("m3", {})[s] = float(np.mean(list(v["m3"].values())))
            r.setdefault("m3_up", {})[s], r.setdefault("m3_down", {})[s] = v["m3"]["up"], v["m3"]["down"]
            r.setdefault("m1", {})[s] = float(np.mean(list(v["m1"].values())))
            r.setdefault("m3_train", {})[s] = float(np.mean(list(tr["m3"].values())))

            def pair(d: dict[str, float]) -> str:
                return f"{d['up'] * 1e3:.2f} / {d['down'] * 1e3:.2f}"

            print(
                f"| {s} | {arm} | {pair(tr['m1'])} | {pair(v['m1'])} | {pair(tr['m3'])} | {pair(v['m3'])} | "
                f"{r['m3'][s] * 1e3:.2f} | {fits['up']['m3'].params.R:.3f} / {fits['down']['m3'].params.R:.3f} | "
                f"{time.perf_counter() - t0:.0f} |",
                flush=True,
            )
    m3 = verdict(res["base"]["m3"], res["rule"]["m3"])
    mean = {arm: {k: float(np.mean(list(d.values()))) for k, d in res[arm].items()} for arm in res}
    b, r = mean["base"], mean["rule"]
    print(
        f"\nM3 cross-gain: baseline {b['m3'] * 1e3:.2f} → rule {r['m3'] * 1e3:.2f} mrad (mean over {m3['n']} seeds), "
        f"lower in {m3['lower']}/{m3['n']}, gain {m3['gain'] * 1e3:.2f} mrad against a seed spread of "
        f"{m3['spread'] * 1e3:.2f}: {'passes' if m3['passes'] else 'does not pass'}; kp 100 → kp 400 "
        f"{b['m3_up'] * 1e3:.2f} → {r['m3_up'] * 1e3:.2f}, kp 400 → kp 100 {b['m3_down'] * 1e3:.2f} → "
        f"{r['m3_down'] * 1e3:.2f}; M1 {b['m1'] * 1e3:.2f} → {r['m1'] * 1e3:.2f}; M3 training "
        f"{b['m3_train'] * 1e3:.2f} → {r['m3_train'] * 1e3:.2f}"
    )
    print(
        f"RESULT rule=datasheet_resistance R={r_ds:.3f} seeds={m3['n']} m3_lower_in={m3['lower']}/{m3['n']} "
        f"m3_gain={m3['gain']:.5f} m3_spread={m3['spread']:.5f} m3_baseline={b['m3']:.5f} m3_rule={r['m3']:.5f} "
        f"m3_up_baseline={b['m3_up']:.5f} m3_up_rule={r['m3_up']:.5f} m3_down_baseline={b['m3_down']:.5f} "
        f"m3_down_rule={r['m3_down']:.5f} m1_baseline={b['m1']:.5f} m1_rule={r['m1']:.5f} "
        f"m3_train_baseline={b['m3_train']:.5f} m3_train_rule={r['m3_train']:.5f} "
        f"validated={'yes' if m3['passes'] else 'no'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
