"""What carries the cross-gain error (issue 23): each gain's fit taken apart against the joint fit and the other gain's.

On the real XL330 recordings (../shared/data/xl330, bench/real_logs.py), M1 → M5 are identified as
bench/real_logs.py does (``identify``'s search, datasheet prior, q_offset fitted, the armature held at the training
logs' free-swing estimate, seed 0) three times: on the four kp 100 logs, on the four kp 400 logs, and on all eight
(the joint fit). For each direction (train on one gain, judge the other) and each model shown (M3, M5):

1. the three fits' parameters side by side;
2. the training gain's fit with one parameter group (identification/param_swap.py: motor kt/R — and kt, R alone —,
   friction — and each friction key alone —, armature, q_offset, firmware) taken from the joint fit, and from the
   other gain's own fit: held-out MAE overall and per held-out log, and the swap's cost on the training logs;
3. the held-out error by phase (identification/error_budget.py) before and after the swap that lowers the held-out
   MAE most (a diagnosis: the held-out gain is judged here, nothing is chosen for a model on it);
4. which *training* log resists that group: the training gain's model refitted with the group held at the joint
   fit's value (every other key free, warm from its own fit), training MAE per log against the free fit's;
5. every log's MAE under each of the three fits (is the error one log's?);
6. the first model refitted on each gain with R held at each value of a grid (``--r-profile``; the rest free, warm
   from its own fit, the armature at the gain's free swing): training MAE per log says which log pins R where; the
   held-out MAE is printed beside it, not used to choose.

Run: python bench/cross_gain_diagnosis.py [--data DIR] [--max-evals N] [--seed S] [--models m3,m5] [--no-hold]
[--r-profile 2.98,3.2,…]
Last line: RESULT model=<first shown> then per direction (up: kp 100 → kp 400, down: kp 400 → kp 100):
<dir>_base=<rad> (held-out MAE of the training gain's fit) <dir>_joint=<rad> (the joint fit on that gain, in sample)
<dir>_group=<group swapped from the joint fit that lowers the held-out MAE most> <dir>_swap=<rad> <dir>_other_group=
<the same from the other gain's fit> <dir>_other_swap=<rad> <dir>_worst_log=<held-out log of largest MAE>
<dir>_worst_share=<its share of the base held-out error>
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from _paths import NO_DATA  # noqa: E402
from fastest_out_diagnosis import diagnosis_inputs, diagnosis_parser, phase_cells  # noqa: E402
from real_logs import swing  # noqa: E402

from servo_ff.identification.error_budget import PHASES  # noqa: E402
from servo_ff.identification.param_swap import GROUPS, group_keys, param_value, swap_keys  # noqa: E402
from servo_ff.identification.simulation_fit import evaluate, fit_model, identify_nested  # noqa: E402


def name(lg) -> str:
    return f"{lg.trajectory}@{lg.kp:g}"


def swaps(params) -> dict[str, tuple[str, ...]]:
    """Swap name → keys: every group of param_swap.GROUPS, kt and R alone, and each friction key alone."""
    out = {g: group_keys(params, g) for g in GROUPS}
    out.update({"kt": ("kt",), "R": ("R",)})
    out.update({f"·{k}": (k,) for k in params.friction})
    return out


def parameter_table(fits: dict[str, object], keys: list[str]) -> None:
    print("| parameter | " + " | ".join(fits) + " |\n|---|" + "---|" * len(fits))
    for k in keys:
        print(f"| {k} | " + " | ".join(f"{param_value(p, k):.4g}" for p in fits.values()) + " |")


def swap_table(base, donors: dict[str, object], train, val) -> dict[str, dict[str, float]]:
    """Held-out MAE of ``base`` with each swap from each donor, per held-out log, and on the training logs; returns
    donor → swap → held-out MAE [rad] (``nothing`` and ``everything`` included)."""
    print(
        "| fit ← swap | held out | "
        + " | ".join(name(lg) for lg in val)
        + " | training |\n|---|---|"
        + "---|" * (len(val) + 1)
    )

    def row(label: str, p) -> float:
        per = [evaluate(p, [lg]) for lg in val]
        print(
            f"| {label} | {np.mean(per) * 1e3:.2f} | "
            + " | ".join(f"{v * 1e3:.2f}" for v in per)
            + f" | {evaluate(p, train) * 1e3:.2f} |"
        )
        return float(np.mean(per))

    out: dict[str, dict[str, float]] = {}
    nothing = row("nothing (the training gain's fit)", base)
    for dname, donor in donors.items():
        out[dname] = {"nothing": nothing}
        for s, keys in swaps(base).items():
            out[dname][s] = row(f"← {dname} {s}", swap_keys(base, donor, keys))
        out[dname]["everything"] = row(f"{dname} itself", donor)
    return out


def refit(model: str, train, val, firmware, prior, x0: dict[str, float], fixed: dict[str, float], args):
    """``model`` fitted on ``train`` (validated on ``val``) from ``x0`` with ``fixed`` held, at --max-evals/--seed."""
    return fit_model(
        train,
        model,
        "xl330",
        firmware,
        val,
        max_evals=args.max_evals,
        seed=args.seed,
        x0=x0,
        progress=False,
        fixed=fixed,
        prior=prior,
    )


def hold_refit(model: str, base_fit, donor, group: str, train, val, firmware, prior, fixed, args) -> None:
    """``model`` refitted on ``train`` with ``group`` held at ``donor``'s values (the rest warm from ``base_fit``):
    training MAE per log against the free fit's — the log that pays most is the one that pulls the group away."""
    p = base_fit.params
    keys = group_keys(p, group) if group in GROUPS else (group.lstrip("·"),)
    hold = {**fixed, **{k: param_value(donor, k) for k in keys}}
    x0 = {"kt": p.kt, "R": p.R, "armature": p.armature, "q_offset": p.q_offset, **p.friction}
    x0 = {k: v for k, v in x0.items() if k not in hold}
    r = refit(model, train, val, firmware, prior, x0, hold, args)
    print(
        f"\n{model.upper()} refitted on kp {train[0].kp:g} with {group} held at the joint fit's "
        f"({', '.join(f'{k} {hold[k]:.4g}' for k in keys)}): MAE per log [mrad], free fit, swapped (no refit), "
        "held refit"
    )
    sw = swap_keys(p, donor, keys)
    print("| log | free | swapped | held refit | Δ refit − free |\n|---|---|---|---|---|")
    for lg in train:
        a, s, b = evaluate(p, [lg]), evaluate(sw, [lg]), evaluate(r.params, [lg])
        print(f"| {name(lg)} | {a * 1e3:.2f} | {s * 1e3:.2f} | {b * 1e3:.2f} | {(b - a) * 1e3:+.2f} |")
    for label, logs_, a, b in (
        ("training mean", train, base_fit.train_mae, r.train_mae),
        (f"held out (kp {val[0].kp:g})", val, base_fit.validation_mae, r.validation_mae),
    ):
        print(f"| {label} | {a * 1e3:.2f} | {evaluate(sw, logs_) * 1e3:.2f} | {b * 1e3:.2f} | {(b - a) * 1e3:+.2f} |")
    print(
        "refit: "
        + ", ".join(
            f"{k} {param_value(p, k):.4g} → {param_value(r.params, k):.4g}"
            for k in ("kt", "R", "q_offset", *p.friction)
        )
    )


def r_profile(model: str, fits: dict, by_gain: dict, held: dict, grid: list[float], firmware, prior, args) -> None:
    """``model`` refitted on each gain with R held at each value of ``grid`` [Ω] (see the module docstring, 6)."""
    gains = sorted(by_gain)
    for a, b in ((gains[0], gains[-1]), (gains[-1], gains[0])):
        train, val, own = by_gain[a], by_gain[b], fits[a][model]
        print(
            f"\n## {model.upper()} refitted on kp {a:g} with R held: training MAE per log [mrad], mean, held-out kp "
            f"{b:g} (printed, not used to choose), and the refit's friction"
        )
        print(
            "| R [Ω] | "
            + " | ".join(name(lg) for lg in train)
            + f" | training | held out | {' | '.join(own.params.friction)} |\n|---|"
            + "---|" * (len(train) + 2 + len(own.params.friction))
        )
        p = own.params
        x0 = {"kt": p.kt, "q_offset": p.q_offset, **p.friction}
        for r_ohm in grid:
            r = refit(model, train, val, firmware, prior, x0, {**held[a], "R": r_ohm}, args)
            print(
                f"| {r_ohm:g} | "
                + " | ".join(f"{evaluate(r.params, [lg]) * 1e3:.2f}" for lg in train)
                + f" | {r.train_mae * 1e3:.2f} | {r.validation_mae * 1e3:.2f} | "
                + " | ".join(f"{v:.4g}" for v in r.params.friction.values())
                + " |"
            )
        print(f"| free ({p.R:.3f}) | " + " | ".join(f"{evaluate(p, [lg]) * 1e3:.2f}" for lg in train), end="")
        print(f" | {own.train_mae * 1e3:.2f} | {own.validation_mae * 1e3:.2f} | ", end="")
        print(" | ".join(f"{v:.4g}" for v in p.friction.values()) + " |")


def main() -> int:
    ap = diagnosis_parser(__doc__)
    ap.add_argument("--no-hold", dest="hold", action="store_false", help="skip the held-group refits (step 4)")
    ap.add_argument(
        "--r-profile",
        default="2.98,3.2,3.448,3.7,3.9,4.2,4.66",
        help="R values [Ω] at which the first model is refitted on each gain (step 6; '' skips); default: the prior "
        "box at kt 0.373 (2.98–4.66) and the datasheet's stall resistance 3.448",
    )
    args = ap.parse_args()
    inputs = diagnosis_inputs(args)
    if inputs is None:
        return NO_DATA
    logs, shown, chain, firmware, prior = inputs
    gains = sorted({lg.kp for lg in logs})
    by_gain = {g: [lg for lg in logs if lg.kp == g] for g in gains}
    kw = dict(seed=args.seed, max_evals=args.max_evals, progress=False, prior=prior)
    fits, held = {}, {}
    for g, other in ((gains[0], gains[-1]), (gains[-1], gains[0])):
        hold = swing(by_gain[g], True)
        held[g] = hold.fixed
        print(f"kp {g:g} fit: armature {hold.describe()}", flush=True)
        fits[g] = identify_nested(by_gain[g], by_gain[other], chain, "xl330", firmware, fixed=hold.fixed, **kw)
    hold = swing(logs, True)
    print(f"joint fit (all {len(logs)} logs): armature {hold.describe()}", flush=True)
    joint = identify_nested(logs, [], chain, "xl330", firmware, fixed=hold.fixed, **kw)

    print("\n## every log's MAE [mrad] under each fit (seed 0)")
    print("| log | " + " | ".join(f"{m.upper()} kp {g:g} fit" for m in shown for g in gains) + " | ", end="")
    print(" | ".join(f"{m.upper()} joint" for m in shown) + " |\n|---|" + "---|" * (len(shown) * (len(gains) + 1)))
    for lg in logs:
        cells = [evaluate(fits[g][m].params, [lg]) for m in shown for g in gains]
        cells += [evaluate(joint[m].params, [lg]) for m in shown]
        print(f"| {name(lg)} | " + " | ".join(f"{v * 1e3:.2f}" for v in cells) + " |")

    result: dict[str, dict] = {}
    for m in shown:
        p0 = joint[m].params
        print(f"\n## {m.upper()}: parameters")
        parameter_table(
            {f"kp {g:g} fit": fits[g][m].params for g in gains} | {"joint": p0},
            ["kt", "R", "armature", "q_offset", *p0.friction, *GROUPS["firmware"]],
        )
        for tag, (a, b) in (("up", (gains[0], gains[-1])), ("down", (gains[-1], gains[0]))):
            train, val = by_gain[a], by_gain[b]
            base = fits[a][m].params
            print(
                f"\n## {m.upper()} kp {a:g} → kp {b:g}: fit on kp {a:g} (train {fits[a][m].train_mae * 1e3:.2f}) → "
                f"{fits[a][m].validation_mae * 1e3:.2f} mrad; the joint fit on kp {b:g} {evaluate(p0, val) * 1e3:.2f}"
                f", kp {b:g}'s own fit {fits[b][m].train_mae * 1e3:.2f}. Held-out MAE [mrad] per swap"
            )
            got = swap_table(base, {"joint": p0, f"kp {b:g}": fits[b][m].params}, train, val)
            best = {d: min((s for s in v if s not in ("nothing", "everything")), key=v.get) for d, v in got.items()}
            bj, bo = best["joint"], best[f"kp {b:g}"]
            print(
                f"\n### held-out kp {b:g}, MAE [mrad] (share of error) by phase\n| fit | mean | "
                + " | ".join(PHASES)
                + " |"
            )
            print("|---|---|" + "---|" * len(PHASES))
            rows = {"nothing": base, f"← joint {bj}": swap_keys(base, p0, swaps(base)[bj]), "joint itself": p0}
            rows[f"← kp {b:g} {bo}"] = swap_keys(base, fits[b][m].params, swaps(base)[bo])
            for label, p in rows.items():
                print(f"| {label} | {evaluate(p, val) * 1e3:.2f} | {phase_cells(p, val, firmware)} |")
            per = {name(lg): evaluate(base, [lg]) for lg in val}
            worst = max(per, key=per.get)
            result.setdefault(m, {})[tag] = {
                "base": fits[a][m].validation_mae,
                "joint": evaluate(p0, val),
                "group": bj,
                "swap": got["joint"][bj],
                "other_group": bo,
                "other_swap": got[f"kp {b:g}"][bo],
                "worst_log": worst,
                "worst_share": per[worst] / sum(per.values()),
            }
            if args.hold and bj not in ("armature", "firmware"):
                hold_refit(m, fits[a][m], p0, bj, train, val, firmware, prior, held[a], args)

    grid = [float(v) for v in args.r_profile.split(",") if v.strip()]
    if grid:
        r_profile(shown[0], fits, by_gain, held, grid, firmware, prior, args)

    r = result[shown[0]]
    print(
        f"RESULT model={shown[0]} "
        + " ".join(
            f"{t}_{k}={v:.5f}" if isinstance(v, float) else f"{t}_{k}={v.lstrip('·')}"
            for t in ("up", "down")
            for k, v in r[t].items()
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
