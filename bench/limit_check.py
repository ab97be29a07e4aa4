"""The planner's limit check of an interpolated path (``JointSpline.outside``): exact against the 16 samples per
segment it replaced, in accuracy and in time.

Accuracy: 2000 random one-segment quintics (seeded; knot positions, velocities and accelerations drawn as a
trajectory message may give them) — how far the path's true peak lies beyond the highest of the 16 samples per
segment (what the sampled check let through: its samples were then held at the limit), and how far the exact
check's extremum lies from a 200 001-sample dense search (the exact check's own error).

Time (same run, the two arms alternating A B A B …, median of the per-round ratios, ``bench/_anchor.py``): a
walk-node-like message (20 joints, 0.025 s knots, quintic, sine paths of 0.3 rad at 2 Hz) of 22 and 88 segments,
with limits 0.05 rad clear of the path (the Bernstein enclosure settles every segment) and with one joint's limit at
the highest of its 16 samples per segment (``_tight``: the roots of its velocity are sought; its path peaks beyond
them), against the sampled check of the same message (positions
on 16 samples per segment, compared with the limits).

    python bench/limit_check.py [--rounds 15]

Last line: ``RESULT grid_missed_max_mrad=… exact_error_max_urad=… exact_over_grid_22=… exact_over_grid_88=…
exact_over_grid_88_tight=…``
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from _anchor import interleaved, paired_ratio, per_call

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))  # this checkout's servo_ff, not the editable install's

from servo_ff.interpolation import JointSpline, extreme_points, unit_coefficients  # noqa: E402


def one_segment(rng: np.random.Generator) -> JointSpline:
    q = rng.uniform(-1.0, 1.0, (2, 1))
    return JointSpline([0.0, rng.uniform(0.02, 1.0)], q, rng.normal(0.0, 2.0, (2, 1)), rng.normal(0.0, 20.0, (2, 1)))


def accuracy(n: int, seed: int = 0) -> tuple[float, float]:
    """(largest peak beyond the 16 samples [rad], largest |exact extremum − dense extremum| [rad]) over n paths."""
    rng = np.random.default_rng(seed)
    missed = error = 0.0
    for _ in range(n):
        sp = one_segment(rng)
        T = sp.times[-1]
        dense = sp.positions(np.linspace(0.0, T, 200_001))[:, 0].max()
        grid = sp.positions(np.linspace(0.0, T, 17))[:, 0].max()
        missed = max(missed, dense - grid)
        b = unit_coefficients(sp._position_coefficients, np.diff(sp.times)).reshape(-1, 6)
        exact = float(np.nanmax(extreme_points(b)[1]))  # the highest of the segment's extreme points
        error = max(error, abs(exact - dense))
    return missed, error


def walk_like(segments: int, joints: int = 20, dt: float = 0.025) -> JointSpline:
    t = np.arange(segments + 1) * dt
    w = 2.0 * np.pi * 2.0
    phase = np.linspace(0.0, np.pi, joints)
    q = 0.3 * np.sin(w * t[:, None] + phase)
    dq = 0.3 * w * np.cos(w * t[:, None] + phase)
    ddq = -0.3 * w * w * np.sin(w * t[:, None] + phase)
    return JointSpline(t, q, dq, ddq)


def sampled_check(sp: JointSpline, lower: np.ndarray, upper: np.ndarray) -> bool:
    """The check it replaced: positions on 16 samples per segment (knots included) against the limits."""
    s = np.linspace(0.0, 1.0, 17)[:-1]
    ts = np.append((sp.times[:-1, None] + s * np.diff(sp.times)[:, None]).reshape(-1), sp.times[-1])
    q = sp.positions(ts)
    return bool(((q < lower - 1e-9) | (q > upper + 1e-9)).any())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--paths", type=int, default=2000)
    a = ap.parse_args()

    missed, error = accuracy(a.paths)
    print(f"accuracy over {a.paths} one-segment quintics (seed 0):")
    print(f"  true peak beyond the highest of 16 samples per segment: up to {missed * 1e3:.3f} mrad")
    print(f"  exact check's extremum against a 200 001-sample search:   up to {error * 1e6:.4f} µrad")

    rows = []
    ratios = {}
    for segments, tight in ((22, False), (88, False), (88, True)):
        sp = walk_like(segments)
        peak = sp.positions(np.linspace(0.0, sp.times[-1], 100_001)).max(axis=0)
        upper, lower = peak + 0.05, -peak - 0.05
        if tight:  # one joint's limit at the highest of its 16 samples per segment: between them it goes beyond
            s = np.linspace(0.0, 1.0, 17)
            upper[7] = sp.positions((sp.times[:-1, None] + s * np.diff(sp.times)[:, None]).reshape(-1))[:, 7].max()
        exact_found = sp.outside(lower, upper) is not None
        grid_found = sampled_check(sp, lower, upper)
        figures = interleaved(
            {
                "exact": lambda: per_call(lambda: sp.outside(lower, upper), 20),  # noqa: B023
                "grid": lambda: per_call(lambda: sampled_check(sp, lower, upper), 20),  # noqa: B023
            },
            a.rounds,
        )
        key = f"{segments}" + ("_tight" if tight else "")
        ratios[key] = paired_ratio(figures["exact"], figures["grid"])
        rows.append(
            (
                key,
                np.median(figures["exact"]) * 1e6,
                np.median(figures["grid"]) * 1e6,
                ratios[key],
                exact_found,
                grid_found,
            )
        )
    print(f"\n20 joints, quintic, 0.025 s knots; median of {a.rounds} rounds × 20 calls")
    print("| segments | exact [µs] | 16 samples [µs] | exact / sampled | exact refuses | sampled refuses |")
    print("|---|---|---|---|---|---|")
    for key, e, g, r, ef, gf in rows:
        print(f"| {key} | {e:.0f} | {g:.0f} | {r:.2f} | {ef} | {gf} |")
    print(
        f"RESULT grid_missed_max_mrad={missed * 1e3:.3f} exact_error_max_urad={error * 1e6:.4f} "
        f"exact_over_grid_22={ratios['22']:.2f} exact_over_grid_88={ratios['88']:.2f} "
        f"exact_over_grid_88_tight={ratios['88_tight']:.2f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
