"""bench/candidate_laws.py --joint and --folds (bench/_joint.py): the joint fit is on every log and judged per gain
against the fit on that gain alone, the 2-fold split holds two trajectories per fold at every gain, and the summary
computes the ratio and its change against the baseline of the same seed."""

import dataclasses
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from servo_ff.identification.datasheet_prior import datasheet_prior
from servo_ff.identification.synthetic import bench_grid, simulate_logs
from servo_ff.models.presets import preset

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import candidate_laws as cl  # noqa: E402
from _joint import FOLDS, fold_cases, joint_row, parse_joint, summarize_joint  # noqa: E402

REAL = ("sin_sin", "lift_and_drop", "up_and_down", "sin_time_square")  # the recordings' trajectories
SYNTH = ("lift_and_drop", "sub_oscillations", "raise_and_lower", "accelerated_oscillations")


def _logs(duration: float = 3.0) -> list:
    """kp 100 and 400 on the recordings' pendulum, simulated by M4, renamed to the recordings' four trajectories."""
    grid = bench_grid(masses=(0.49,), lengths=(0.1,), kps=(100, 400), trajectories=SYNTH)
    logs = simulate_logs(preset("xl330", "m4"), grid, duration=duration, vin=7.4, seed=0)
    return [dataclasses.replace(lg, trajectory=REAL[SYNTH.index(lg.trajectory)]) for lg in logs]


def test_folds_hold_two_trajectories_at_every_gain_and_cover_the_logs_once():
    logs = _logs()
    (la, a, lb, b), (lb2, b2, la2, a2) = fold_cases(logs)
    assert (la, lb, la2, lb2) == ("foldA", "foldB", "foldA", "foldB") and a2 == a and b2 == b
    assert sorted((lg.trajectory, lg.kp) for lg in a) == sorted((t, k) for t in FOLDS[0] for k in (100.0, 400.0))
    assert sorted((lg.trajectory, lg.kp) for lg in b) == sorted((t, k) for t in FOLDS[1] for k in (100.0, 400.0))
    assert len(a) + len(b) == len(logs) == 8
    other = [dataclasses.replace(logs[0], trajectory="sub_oscillations"), *logs[1:]]
    with pytest.raises(ValueError, match="sub_oscillations not in exactly one fold"):
        fold_cases(other)


def test_joint_rows_are_the_fit_on_all_logs_against_each_gain_alone(capsys):
    """A small synthetic case: each printed cell is the fit it names (refitted here with the same seed), judged on
    that gain's logs: the joint fit on all eight logs, the alone fit on the gain's four."""
    logs = _logs()
    args = SimpleNamespace(max_evals=40, extra_evals=12)
    names = ["baseline", "load_scale"]
    cl.joint_seed(args, 0, names, logs)
    (seed, rows), *rest = parse_joint(capsys.readouterr().out)
    assert seed == 0 and not rest and list(rows) == names
    prior = datasheet_prior("xl330")
    _, joint = cl.fit_case(logs, [], names, 0, 40, 12, prior)
    for kp in (100.0, 400.0):
        mine = [lg for lg in logs if lg.kp == kp]
        _, alone = cl.fit_case(mine, [], names, 0, 40, 12, prior)
        for name in names:
            j = cl.judge(*joint[name][:4], mine, cl.CANDIDATES[name]())
            a = cl.judge(*alone[name][:4], mine, cl.CANDIDATES[name]())
            assert rows[name]["gains"][f"{kp:g}"] == pytest.approx((j, a), abs=6e-6)  # printed to 0.01 mrad
    # the joint cells differ between the gains: each is judged on its own gain's logs, not on all eight
    assert rows["baseline"]["gains"]["100"][0] != rows["baseline"]["gains"]["400"][0]
    assert rows["load_scale"]["values"].startswith("load_scale ")


def test_summary_ratio_and_change_against_the_same_seeds_baseline(capsys):
    def block(seed, base, cand):
        out = [f"  seed {seed}, joint fit on 8 logs: M4 training 20.00 mrad"]
        out.append(joint_row("baseline", {"kp100": base[0], "kp400": base[1]}, "", {"kp100": "", "kp400": ""}))
        out.append(joint_row("c", {"kp100": cand[0], "kp400": cand[1]}, "c 1.5", {"kp100": "c 1", "kp400": "c 2"}))
        return "\n".join(out)

    # ratios: seed 0 baseline (2 + 1.5)/2 = 1.75, c (1.5 + 1.25)/2 = 1.375; seed 1 baseline 1.5, c 1.6
    text = "\n".join(
        [
            block(0, ((0.020, 0.010), (0.030, 0.020)), ((0.015, 0.010), (0.025, 0.020))),
            block(1, ((0.015, 0.010), (0.030, 0.020)), ((0.016, 0.010), (0.032, 0.020))),
        ]
    )
    blocks = parse_joint(text)
    assert blocks[1][1]["c"]["gains"]["400"] == pytest.approx((0.032, 0.020))
    summarize_joint(blocks)
    out = capsys.readouterr().out
    assert "s0: c 1.5 ; s1: c 1.5" in out
    r = np.mean([1.375, 1.6])
    assert out.rstrip().splitlines()[-1] == (
        f"RESULT joint_over_alone_baseline=1.625 ratio_seed_spread=0.250 best_joint_candidate=c "
        f"best_joint_over_alone={r:.3f} best_lower_in=1/2"
    )
