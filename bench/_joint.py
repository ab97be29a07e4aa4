"""The joint fit over both gains for bench/candidate_laws.py (``--joint``, ``--folds``): the 2-fold split within
it, the printed rows and their summary (not a bench itself).

``--joint``: per seed, each candidate is fitted by the cross-gain protocol on each gain alone and on all logs at
once; a row gives, per gain, the joint fit's training MAE on that gain's logs over the fit on that gain alone
(the same candidate), and their ratio (mean over the gains, as ``joint_over_alone`` in bench/real_logs.py).
``--folds``: the 2-fold split within the joint fit (fold A and fold B of :data:`FOLDS`, every gain in both),
judged by bench/candidate_laws.py's ``summarize``.
"""

from __future__ import annotations

import re

import numpy as np

# fixed before any result: two trajectories per fold, at every gain
FOLDS = (("sin_sin", "lift_and_drop"), ("up_and_down", "sin_time_square"))

JOINT_CASE = re.compile(r"^  seed (\d+), joint fit on ")
JOINT_ROW = re.compile(r"^    (\S+)\s+(kp\S+ +[\d.]+ / +[\d.]+.*?)\s+×([\d.]+)\s+joint: (.*?) \| alone")
GAIN_CELL = re.compile(r"kp(\S+) +([\d.]+) / +([\d.]+)")


def fold_cases(logs, folds=FOLDS) -> list[tuple[str, list, str, list]]:
    """Train on fold A at every gain, judge fold B, and the reverse: [(label, train, label, validation), …]. A log
    whose trajectory is in neither fold (or in both) is a ValueError naming it."""
    where = {lg.trajectory: [i for i, f in enumerate(folds) if lg.trajectory in f] for lg in logs}
    bad = sorted(t for t, f in where.items() if len(f) != 1)
    if bad:
        raise ValueError(f"trajectories {', '.join(bad)} not in exactly one fold of {folds}")
    a = [lg for lg in logs if where[lg.trajectory] == [0]]
    b = [lg for lg in logs if where[lg.trajectory] == [1]]
    return [("foldA", a, "foldB", b), ("foldB", b, "foldA", a)]


def joint_row(name: str, per_gain: dict[str, tuple[float, float]], joint_x: str, alone_x: dict[str, str]) -> str:
    """One printed row: per gain label (``kp100``) the joint and alone training MAE [rad], and the values."""
    cells = "  ".join(f"{g} {j * 1e3:7.2f} / {a * 1e3:6.2f}" for g, (j, a) in per_gain.items())
    ratio = float(np.mean([j / a for j, a in per_gain.values()]))
    alone = " | ".join(f"alone {g}: {v}" for g, v in alone_x.items())
    return f"    {name:20} {cells}  ×{ratio:.3f}  joint: {joint_x} | {alone}"


def parse_joint(text: str) -> list[tuple[int, dict[str, dict]]]:
    """[(seed, {candidate: {"gains": {kp: (joint, alone) [rad]}, "values": joint values}}), …] of ``--joint``'s
    rows."""
    blocks: list[tuple[int, dict[str, dict]]] = []
    for line in text.splitlines():
        if m := JOINT_CASE.match(line):
            blocks.append((int(m.group(1)), {}))
        elif (m := JOINT_ROW.match(line)) and blocks:
            gains = {g: (float(j) * 1e-3, float(a) * 1e-3) for g, j, a in GAIN_CELL.findall(m.group(2))}
            blocks[-1][1][m.group(1)] = {"gains": gains, "values": m.group(4)}
    return blocks


def ratio(row: dict) -> float:
    """Joint over alone, mean over the gains."""
    return float(np.mean([j / a for j, a in row["gains"].values()]))


def summarize_joint(blocks) -> None:
    """Per candidate over the seeds: joint and alone training MAE per gain, the ratio, its change against the
    baseline of the same seed, and the joint fit's values per seed; then the RESULT line."""
    seeds = [s for s, _ in blocks]
    base = [ratio(v["baseline"]) for _, v in blocks]
    spread = max(base) - min(base) if len(base) > 1 else float("nan")
    gains = list(blocks[0][1]["baseline"]["gains"])
    names = list(dict.fromkeys(n for _, v in blocks for n in v))
    head = " | ".join(f"kp{g} joint / alone [mrad] (ratio)" for g in gains)
    print(f"\njoint fit, seeds {seeds}, means over the seeds:")
    print(f"candidate            | {head} | joint / alone (min, max) | Δ vs baseline (min, max) | lower in")
    means, lower = {}, {}
    for name in names:
        rows = [(v[name], ratio(v["baseline"])) for _, v in blocks if name in v]
        r = np.array([ratio(row) for row, _ in rows])
        d = r - np.array([b for _, b in rows])
        means[name], lower[name] = float(r.mean()), int(np.sum(d < 0))
        cells = []
        for g in gains:
            j = np.mean([row["gains"][g][0] for row, _ in rows])
            a = np.mean([row["gains"][g][1] for row, _ in rows])
            rg = np.mean([row["gains"][g][0] / row["gains"][g][1] for row, _ in rows])
            cells.append(f"{j * 1e3:7.2f} / {a * 1e3:6.2f} (×{rg:.2f})")
        print(
            f"{name:20} | " + " | ".join(cells) + f" | ×{r.mean():.3f} ({r.min():.3f}, {r.max():.3f}) | "
            f"{d.mean():+.3f} ({d.min():+.3f}, {d.max():+.3f}) | {lower[name]}/{len(rows)}"
        )
    print("\njoint fit's values per seed:")
    for name in names[1:]:
        print(f"  {name:20} " + " ; ".join(f"s{s}: {v[name]['values']}" for s, v in blocks if name in v))
    others = {n: m for n, m in means.items() if n != "baseline"}
    best = min(others, key=others.get) if others else "baseline"
    n = sum(1 for _, v in blocks if best in v)
    print(
        f"RESULT joint_over_alone_baseline={means['baseline']:.3f} ratio_seed_spread={spread:.3f} "
        f"best_joint_candidate={best} best_joint_over_alone={means[best]:.3f} best_lower_in={lower[best]}/{n}"
    )
