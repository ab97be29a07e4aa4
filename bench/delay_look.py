"""Quick look at time across gains: M3/M4 fitted with a fixed command or measurement delay, judged at the other gain.

The delay is folded into the logs (servo_ff.identification.time_shift.shift_log: the goal read d_c late, the
position read d_m early) on both the training and the validation gain, then M1 → M3 → M4 are identified as in
bench/real_logs.py's cross-gain split (datasheet prior, each seed) on kp 100 and judged on kp 400, and the reverse.
``--periods`` runs the same protocol on the raw logs resampled onto a finer grid: the law evaluated (and the
simulation compared) every 2.5 or 1 ms instead of 5 ms.

Run: python bench/delay_look.py [--delays 0,2,5,10] [--kinds command,measurement] [--periods 1] [--no-origin]
     [--max-evals 2000] [--seeds 0,1,2,3]   (≈ 20 min on one core)
Last line: RESULT best_kind=<kind> best_delay_ms=<ms> best_val_m4=<rad> zero_delay_val_m4=<rad> (M4 validation
MAE, mean over seeds × both directions; ``first_stamp``: the 5 ms grid from each log's first timestamp)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from _paths import no_data  # noqa: E402

from servo_ff.identification.datasheet_prior import datasheet_prior  # noqa: E402
from servo_ff.identification.search_space import pack_candidates  # noqa: E402
from servo_ff.identification.simulation_cost import mae_per_log  # noqa: E402
from servo_ff.identification.simulation_fit import identify_nested  # noqa: E402
from servo_ff.identification.time_shift import shift_log, simulate_timed  # noqa: E402
from servo_ff.io.logs import find_logs, read_logs  # noqa: E402
from servo_ff.io.servo_log import ENTRY_KEYS, log_from_columns, log_mean, stack_logs  # noqa: E402
from servo_ff.models.firmware import FIRMWARE_LAWS  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "xl330"


def read_from_first_stamp(raw: Path) -> list:
    """The raw logs resampled onto a 5 ms grid that starts at each log's first timestamp (bam starts it at t = 0,
    ≈ 3.5 ms before the first sample, extrapolating there): the same samples at another phase."""
    logs = []
    for path in find_logs([raw]):
        data = json.loads(path.read_text())
        entries = data["entries"]
        t = np.array([e["timestamp"] for e in entries], float)
        cols = {k: np.array([e[k] for e in entries], float) for k in ENTRY_KEYS if k in entries[0] and k != "timestamp"}
        logs.append(log_from_columns(str(path), t - t[0], cols, data))
    return logs


LANDSCAPE_MS = (-5.0, -2.0, 0.0, 1.0, 2.0, 3.0, 5.0, 10.0)


def landscape(held, logs) -> None:
    """MAE [mrad] of one M4 (no delay in its fit) as only a delay moves, on its training and its validation gain:
    where each gain's own optimum lies (one batched rollout per gain and kind: a delay per candidate)."""
    ds = np.array(LANDSCAPE_MS) * 1e-3
    print(f"\nM4 of the first seed held, only the delay moved: MAE [mrad] at delays {list(LANDSCAPE_MS)} ms")
    for a, b, params in held:
        for kind in ("command_delay", "measurement_delay"):
            for label, kp in (("train", a), ("val", b)):
                batch = stack_logs([lg for lg in logs if lg.kp == kp])
                packed = np.repeat(pack_candidates(params.packed(), [], np.zeros((1, 0)), batch), len(ds), axis=0)
                mae = log_mean(mae_per_log(simulate_timed(packed, batch, **{kind: ds}), batch), batch) * 1e3
                print(f"  fit kp{a:g} {kind:17} on kp{kp:g} ({label}): " + " ".join(f"{m:6.2f}" for m in mae))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--delays", default="0,2,5,10", help="comma-separated delays [ms]")
    ap.add_argument("--kinds", default="command,measurement")
    ap.add_argument("--max-evals", type=int, default=2000, help="identify budget per model")
    ap.add_argument("--seeds", default="0,1,2,3", help="comma-separated seeds")
    ap.add_argument(
        "--origin", action=argparse.BooleanOptionalAction, default=True, help="also the grid from the first timestamp"
    )
    ap.add_argument("--periods", default="1", help="firmware periods [ms] (the logs resampled onto that grid)")
    args = ap.parse_args()
    kinds = [k for k in args.kinds.split(",") if k]
    delays = [d for d in args.delays.split(",") if d]
    periods = [float(p) for p in args.periods.split(",") if p]
    seeds = [int(s) for s in args.seeds.split(",")]
    if not (args.data / "raw").is_dir():
        return no_data(args.data / "raw")
    raw = {0.005: read_logs([args.data / "raw"])}
    for ms in periods:
        raw.setdefault(ms * 1e-3, read_logs([args.data / "raw"], dt=ms * 1e-3))
    configs = [("none", 0.0)] + [(k, float(d)) for k in kinds for d in delays if float(d) != 0]
    configs += [("period", ms) for ms in periods if ms != 5]
    if args.origin:
        configs.append(("first_stamp", 0.0))
    prior = datasheet_prior("xl330")
    rows: dict[tuple[str, float], list[float]] = {}
    held: list = []  # (train kp, val kp, M4 params) of the first seed without delay
    print("kind        | [ms] | seed | train→val  | M3 train / val [mrad] | M4 train / val [mrad]")
    for kind, ms in configs:
        if kind == "period":
            shifted = raw[ms * 1e-3]
        elif kind == "first_stamp":
            shifted = read_from_first_stamp(args.data / "raw")
        else:
            kw = {"command_delay": ms * 1e-3} if kind == "command" else {"measurement_delay": ms * 1e-3}
            shifted = [shift_log(lg, **kw) for lg in raw[0.005]]
        gains = sorted({lg.kp for lg in shifted})
        for seed in seeds:
            for a, b in ((gains[0], gains[-1]), (gains[-1], gains[0])):
                r = identify_nested(
                    [lg for lg in shifted if lg.kp == a],
                    [lg for lg in shifted if lg.kp == b],
                    ["m1", "m3", "m4"],
                    "xl330",
                    FIRMWARE_LAWS["xl330"],
                    seed=seed,
                    max_evals=args.max_evals,
                    progress=False,
                    prior=prior,
                )
                rows.setdefault((kind, ms), []).append(r["m4"].validation_mae)
                if kind == "none" and seed == seeds[0]:
                    held.append((a, b, r["m4"].params))
                print(
                    f"{kind:11} | {ms:4g} | {seed:4d} | {a:g}→{b:g}".ljust(42)
                    + f"| {r['m3'].train_mae * 1e3:6.2f} / {r['m3'].validation_mae * 1e3:6.2f}       "
                    f"| {r['m4'].train_mae * 1e3:6.2f} / {r['m4'].validation_mae * 1e3:6.2f}",
                    flush=True,
                )
    landscape(held, raw[0.005])
    means = {k: float(np.mean(v)) for k, v in rows.items()}
    zero_cases = np.array(rows[("none", 0.0)])
    print("\nkind        | [ms] | M4 val mean [mrad] | Δ vs none per seed × direction [mrad] (min, max) | better in")
    for (kind, ms), v in rows.items():
        d = (np.array(v) - zero_cases) * 1e3
        print(
            f"{kind:11} | {ms:4g} | {means[kind, ms] * 1e3:18.2f} | {d.mean():+6.2f} ({d.min():+6.2f}, {d.max():+6.2f})"
            f"                      | {int(np.sum(d < 0))}/{len(d)}"
        )
    best = min(means, key=means.get)
    zero = means[("none", 0.0)]
    print(
        f"RESULT best_kind={best[0]} best_delay_ms={best[1]:g} best_val_m4={means[best]:.5f} "
        f"zero_delay_val_m4={zero:.5f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
