"""The per-case lines of bench/candidate_laws.py (cross-gain and ``--folds``: train on one set of logs, judge on
another) and their summary: which candidate validates (not a bench itself); the benches' ``--workers`` refusal."""

from __future__ import annotations

import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np

CASE = re.compile(r"^  seed (\d+), train (\S+) → val (\S+):")
ROW = re.compile(r"^    (\S+)\s+train\s+(\S+)\s+val\s+(\S+) mrad")


MAX_WORKERS = 2  # processes of a bench: the machine's two cores are shared


def workers_refused(prog: str, workers: int) -> bool:
    """True, after one line on stderr (``<prog>: error: …``, as servo-ff's argument errors; the caller exits 2), when
    ``--workers`` is not 1 … MAX_WORKERS."""
    if 1 <= workers <= MAX_WORKERS:
        return False
    print(f"{prog}: error: --workers must be 1 … {MAX_WORKERS}, got {workers}", file=sys.stderr)
    return True


def seed_workers(argv: list[str], seeds: list[int], jobs: int) -> str | None:
    """Run ``argv --seeds s`` for every seed in at most ``jobs`` processes, printing each one's output in seed order
    as it ends; their outputs joined, or None (and one line) when a worker failed."""
    outputs: dict[int, str] = {}
    with ThreadPoolExecutor(max(1, jobs)) as pool:
        runs = {
            s: pool.submit(subprocess.run, [*argv, "--seeds", str(s)], capture_output=True, text=True) for s in seeds
        }
        for s in seeds:
            r = runs[s].result()
            if r.returncode:
                print(f"seed {s}: worker failed (exit {r.returncode}): {r.stderr.strip().splitlines()[-1:]}")
                return None
            outputs[s] = r.stdout
            print(r.stdout, end="", flush=True)
    return "".join(outputs[s] for s in seeds)


def parse_cases(text: str) -> list[tuple[tuple[int, str, str], dict[str, float]]]:
    """[((seed, train label, validation label), {candidate: validation MAE [rad]}), …] (labels: ``kp100``, ``foldA``)
    from the per-case lines; each block holds the baseline of its own run."""
    blocks: list[tuple[tuple[int, str, str], dict[str, float]]] = []
    for line in text.splitlines():
        if m := CASE.match(line):
            blocks.append(((int(m.group(1)), m.group(2), m.group(3)), {}))
        elif (m := ROW.match(line)) and blocks:
            blocks[-1][1][m.group(1)] = float(m.group(3)) * 1e-3
    return blocks


def summarize(blocks, what: str = "cross_gain") -> None:
    """Per candidate, over every seed × direction it ran in: its validation MAE against the baseline of the same
    run, the baseline's seed-to-seed spread, and the RESULT line (best: the largest mean gain over its own
    baselines). Saved outputs of runs whose M4 differs (another ``identify``) give each case one baseline per M4:
    the baseline row and the spread take them all."""
    dirs = sorted({c[1:] for c, _ in blocks})
    unique = {(c, v["baseline"]): v["baseline"] for c, v in blocks}  # a seed's baseline run again: counted once
    base = {d: [v for (c, _), v in unique.items() if c[1:] == d] for d in dirs}
    # the seed spread: per direction, the baseline's range over the seeds (and runs); averaged over the directions
    spread = float(np.mean([max(v) - min(v) for v in base.values()])) if min(map(len, base.values())) > 1 else np.nan
    names = list(dict.fromkeys(n for _, v in blocks for n in v))
    print(
        "\ncandidate            | cases | mean val [mrad] | its baselines [mrad] | Δ vs baseline [mrad] (min, max) | "
        "better in | validates"
    )
    kept, means, gains = [], {}, {}
    for name in names:
        if name == "baseline":
            pairs = np.array([(v, v) for v in unique.values()])
        else:
            pairs = np.array([(v[name], v["baseline"]) for _, v in blocks if name in v])
        delta = pairs[:, 0] - pairs[:, 1]
        better = int(np.sum(delta < 0))
        ok = name != "baseline" and len(pairs) >= 4 and better == len(pairs) and -delta.mean() > spread
        if ok:
            kept.append(name)
        means[name], gains[name] = float(pairs[:, 0].mean()), float(-delta.mean())
        print(
            f"{name:20} | {len(pairs):5d} | {pairs[:, 0].mean() * 1e3:15.2f} | {pairs[:, 1].mean() * 1e3:20.2f} | "
            f"{delta.mean() * 1e3:+8.2f} ({delta.min() * 1e3:+6.2f}, {delta.max() * 1e3:+6.2f}) | "
            f"{better}/{len(pairs)}       | {ok}"
        )
    print(
        f"baseline seed spread (per direction, max − min over the seeds and runs, mean of the two): {spread * 1e3:.2f} "
        "mrad; a "
        "candidate validates if it is better than its baseline in every seed × direction (≥ 2 seeds) and by more than "
        "the spread"
    )
    best = max(gains, key=gains.get)
    print(
        f"RESULT baseline_{what}={means['baseline']:.5f} best_candidate={best} "
        f"best_{what}={means[best]:.5f} seed_spread={spread:.5f} validated={','.join(kept) or 'none'}"
    )
