"""A pre-registered confirmation of one candidate law (default ``torque_saturation``) on the real XL330 recordings.

The rule below was written and committed before any of its runs (2026-11-26, round 3, sixth session); the defaults
of this script are that run. Nothing here is chosen on its outcome.

* **Candidate**: bench/_candidates.py's ``torque_saturation`` as it stands (τ = τ_s·tanh(τ_law/τ_s), τ_s searched
  0.2–2 N·m from 0.35 N·m), unchanged from the runs of the previous session.
* **Seeds**: 8–15, never used before in any candidate run (0–7 were). If one seed, sized first, puts the whole run
  above ~40 min of CPU, the seeds are cut to 8–13 and this docstring says so in a commit before the rest runs.
* **Budget, per seed and case**: M4 fitted by ``identify``'s search as it is today (``identify_nested`` M1 → M3 → M4,
  four searches and a polish, log-space coordinates, datasheet prior, q_offset fitted) with 2000 evaluations per
  model (the protocol's figure in every earlier candidate run); then the baseline *and* the candidate refitted from
  that M4 with **800** CMA-ES evaluations each (``--extra-evals``; the baseline with no extra term), the refit of
  bench/candidate_laws.py. ≤ 2 worker processes.
* **Splits** (5 cases per seed): the joint 2-fold by trajectory (bench/_joint.py's ``FOLDS``, A → B and B → A,
  every gain in both); the fastest trajectory out (bench/real_logs.py's split: train on the slower three
  trajectories at both gains, judge the fastest, ``sin_time_square``, at both gains); the cross-gain split both ways
  (kp 100 → kp 400, kp 400 → kp 100).
* **Per seed and split**: the held-out MAE, mean over the split's directions, of the candidate and of the baseline
  of the same run; Δ = candidate − baseline. **Seed spread** of a split: per direction, the baseline's held-out MAE's
  range (max − min) over the seeds, mean over the directions (bench/_cases.py's definition).
* **A split passes** when Δ < 0 in all seeds but at most one (≥ 7 of 8; ≥ 5 of 6 if cut) *and* the mean −Δ over
  the seeds is larger than the split's seed spread.
* **Decision**: the candidate **validates** when the 2-fold split, the fastest-out split and the cross-gain
  direction kp 400 → kp 100 all pass. The direction kp 100 → kp 400 is run and reported but not part of the
  decision, for a reason known before the run: at kp 100 the law's torque stays ≤ 0.31 N·m, where the tanh cuts
  ≤ 9 %, so τ_s is not identifiable from it and stays near where the search starts (previous session: 0.36–0.61
  N·m, then +12 … +72 mrad on kp 400). If it validates, ``identify`` fits τ_s only on training logs that reach the
  law's full duty (the saturation phase of identification/error_budget.py), so that direction would get no term.

Options added after this run (off by default, so the defaults stay this run): ``--swing-armature`` (``identify``'s
default since: the armature held at each case's training logs' free-swing estimate, in M4's chain and both refits)
and ``--min-gain`` [rad] (a split must also gain at least that); bench/confirm_swing.py is the rule that uses them.

Run: python bench/confirm_law.py [--seeds 8,…,15] [--jobs 2] [--extra-evals 800] [--candidate torque_saturation]
     [--swing-armature] [--min-gain 0.001]
     python bench/confirm_law.py --combine out_seed8.txt …   # the summary from saved outputs
Last line: RESULT candidate=<name> seeds=<n> folds_lower_in=<k>/<n> folds_gain=<rad> folds_spread=<rad> …
(the same three keys for fastest_out, cross_400_100 and, reported only, cross_100_400) validated=<yes|no>
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from _cases import parse_cases, seed_workers  # noqa: E402
from _joint import fold_cases  # noqa: E402
from _paths import NO_DATA  # noqa: E402
from candidate_laws import gain_cases, run_seed  # noqa: E402
from real_logs import DATA, fastest_trajectory, real_recordings  # noqa: E402

SEEDS = tuple(range(8, 16))
#: split → the (train label, validation label) of its directions, in the order printed
SPLITS = {
    "folds": (("foldA", "foldB"), ("foldB", "foldA")),
    "fastest_out": (("slow", "fastest"),),
    "cross_400_100": (("kp400", "kp100"),),
    "cross_100_400": (("kp100", "kp400"),),
}
DECISIVE = ("folds", "fastest_out", "cross_400_100")


def fastest_cases(logs) -> list[tuple[str, list, str, list]]:
    """Train on the slower trajectories at every gain, judge the fastest at every gain (bench/real_logs.py)."""
    fast = fastest_trajectory(logs)
    return [
        ("slow", [lg for lg in logs if lg.trajectory != fast], "fastest", [lg for lg in logs if lg.trajectory == fast])
    ]


def split_table(blocks, name: str, directions, cand: str) -> dict[int, tuple[float, float]]:
    """seed → (baseline, candidate) held-out MAE [rad], mean over the split's directions (seeds with all of them)."""
    per: dict[int, dict[tuple[str, str], tuple[float, float]]] = {}
    for (seed, a, b), v in blocks:
        if (a, b) in directions and cand in v:
            per.setdefault(seed, {})[(a, b)] = (v["baseline"], v[cand])
    return {
        s: (float(np.mean([d[k][0] for k in directions])), float(np.mean([d[k][1] for k in directions])))
        for s, d in sorted(per.items())
        if all(k in d for k in directions)
    }


def verdict(blocks, name: str, directions, cand: str, min_gain: float = 0.0) -> dict:
    """One split's figures: per-seed Δ [rad], lower in, mean gain [rad], seed spread [rad] and whether it passes
    (``min_gain`` [rad]: the mean gain must also reach it)."""
    table = split_table(blocks, name, directions, cand)
    seeds = list(table)
    delta = np.array([table[s][1] - table[s][0] for s in seeds])
    ranges = []
    for k in directions:
        base = [v["baseline"] for (s, a, b), v in blocks if (a, b) == k and s in table]
        ranges.append(max(base) - min(base))
    spread = float(np.mean(ranges)) if len(seeds) > 1 else float("nan")
    lower, gain = int(np.sum(delta < 0)), float(-delta.mean()) if len(seeds) else float("nan")
    return {
        "table": table,
        "lower": lower,
        "n": len(seeds),
        "gain": gain,
        "spread": spread,
        "passes": len(seeds) > 1 and lower >= len(seeds) - 1 and gain > spread and gain >= min_gain,
    }


def summarize(text: str, cand: str, min_gain: float = 0.0, armature: str = "") -> None:
    """Per split: the per-seed held-out MAE of the baseline and the candidate's Δ, the counts and the verdict; then
    the RESULT line (``min_gain`` [rad] > 0 and ``armature`` stated in it when given; else the 42c570f rule's)."""
    blocks = parse_cases(text)
    out = {name: verdict(blocks, name, dirs, cand, min_gain) for name, dirs in SPLITS.items()}
    seeds = sorted({s for v in out.values() for s in v["table"]})
    print(f"\nheld-out MAE [mrad], baseline → {cand} (Δ), mean over each split's directions:")
    print(f"{'split':14} | " + " | ".join(f"{'seed ' + str(s):>17}" for s in seeds) + " | lower in | gain | spread")
    for name, v in out.items():
        cells = [
            f"{v['table'][s][0] * 1e3:6.2f} ({(v['table'][s][1] - v['table'][s][0]) * 1e3:+6.2f})"
            if s in v["table"]
            else " " * 17
            for s in seeds
        ]
        tag = "decides" if name in DECISIVE else "reported"
        print(
            f"{name:14} | " + " | ".join(f"{c:>17}" for c in cells) + f" | {v['lower']}/{v['n']} | "
            f"{v['gain'] * 1e3:+.2f} | {v['spread'] * 1e3:.2f} | {'passes' if v['passes'] else 'fails'} ({tag})"
        )
    ok = all(out[n]["passes"] for n in DECISIVE)
    floor = f" and is ≥ {min_gain * 1e3:g} mrad" if min_gain > 0 else ""
    print(
        "rule (committed before the run): a split passes when Δ < 0 in all seeds but at most one and the mean gain "
        f"exceeds its seed spread{floor}; {cand} validates when {', '.join(DECISIVE)} all pass"
    )
    cells = " ".join(
        f"{n}_lower_in={v['lower']}/{v['n']} {n}_gain={v['gain']:.5f} {n}_spread={v['spread']:.5f}"
        for n, v in out.items()
    )
    extra = (f" min_gain={min_gain:.5f}" if min_gain > 0 else "") + (f" armature={armature}" if armature else "")
    print(f"RESULT candidate={cand} seeds={len(seeds)}{extra} {cells} validated={'yes' if ok else 'no'}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--candidate", default="torque_saturation")
    ap.add_argument("--seeds", default=",".join(map(str, SEEDS)))
    ap.add_argument("--max-evals", type=int, default=2000, help="identify budget per model for the M1→M4 chain")
    ap.add_argument("--extra-evals", type=int, default=800, help="CMA-ES budget of each refit (baseline too)")
    ap.add_argument("--jobs", type=int, default=2, help="seeds run in parallel processes (≤ 2 on the shared box)")
    ap.add_argument(
        "--swing-armature",
        action="store_true",
        help="identify's default since 42c570f: the armature held at each case's training logs' free-swing estimate "
        "in M4's chain and both refits (searched where they have no torque-off swing)",
    )
    ap.add_argument("--min-gain", type=float, default=0.0, help="a split passes only if its mean gain is ≥ this [rad]")
    ap.add_argument("--cases-only", action="store_true", help=argparse.SUPPRESS)  # a --jobs worker
    ap.add_argument("--combine", nargs="+", type=Path, help="summarize saved outputs of this script (no fitting)")
    args = ap.parse_args(argv)
    held = "swing" if args.swing_armature else ""
    if args.combine:
        summarize("\n".join(f.read_text() for f in args.combine), args.candidate, args.min_gain, held)
        return 0
    logs = real_recordings(args.data)
    if logs is None:
        return NO_DATA
    seeds = [int(s) for s in args.seeds.split(",")]
    names = ["baseline", args.candidate]
    if args.cases_only:
        run_seed(args, seeds[0], names, fold_cases(logs) + fastest_cases(logs) + gain_cases(logs))
        return 0
    arm = "armature held at each case's training swing" if args.swing_armature else "armature searched"
    floor = f", minimum gain {args.min_gain * 1e3:g} mrad" if args.min_gain > 0 else ""
    print(
        f"{args.candidate} against the baseline, M4 by identify ({args.max_evals} evals per model), each refit "
        f"+{args.extra_evals} evals, {arm}{floor}; splits {', '.join(SPLITS)}; seeds {seeds} "
        f"({min(args.jobs, len(seeds))} processes):",
        flush=True,
    )
    argv = [sys.executable, __file__, "--data", str(args.data), "--max-evals", str(args.max_evals)]
    argv += ["--extra-evals", str(args.extra_evals), "--candidate", args.candidate, "--cases-only"]
    argv += ["--swing-armature"] if args.swing_armature else []
    text = seed_workers(argv, seeds, args.jobs)
    if text is None:
        return 1
    summarize(text, args.candidate, args.min_gain, held)
    return 0


if __name__ == "__main__":
    sys.exit(main())
