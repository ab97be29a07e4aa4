"""Independent IPOP-CMA-ES searches (identification/cmaes_search.py): the fit keeps the search of lowest TRAINING
MAE, is deterministic for a seed, and recovers known parameters from our own simulator's logs."""

import numpy as np
import pytest

from servo_ff.cli import main
from servo_ff.identification.cmaes_search import Begin, agreed, ipop, multi_start, start_seed
from servo_ff.identification.simulation_fit import evaluate, fit_model
from servo_ff.identification.synthetic import bench_grid, simulate_logs
from servo_ff.models.presets import preset

GRID = bench_grid(masses=(0.5, 1.5), lengths=(0.15,), kps=(4, 16))
TRUTH = preset("mx64", "m3")


@pytest.fixture(scope="module")
def logs():
    return simulate_logs(TRUTH, GRID[::2], duration=4.0, noise=0.001, counts_per_rev=4096, seed=1)


def _fit(logs, seed, starts, max_evals=600, polish=True, agree=None):
    return fit_model(
        logs,
        "m3",
        "mx64",
        max_evals=max_evals,
        patience=5,
        seed=seed,
        starts=starts,
        polish=polish,
        agree=agree,
        progress=False,
    )


def test_multi_start_keeps_the_search_of_lowest_training_mae(logs):
    """Three starts = the three single searches (seeds start_seed(7, s)) with the lowest training MAE kept; the
    polish search from it never ends higher."""
    single = [_fit(logs, start_seed(7, s), 1) for s in range(3)]
    multi = _fit(logs, 7, 3, polish=False)
    maes = [r.train_mae for r in single]
    assert len(set(maes)) == 3  # the searches differ, so picking the lowest is a choice
    best = single[int(np.argmin(maes))]
    assert multi.train_mae == min(maes)
    assert multi.params.packed().tolist() == best.params.packed().tolist()
    assert multi.evaluations == sum(r.evaluations for r in single)
    assert sorted({run["start"] for run in multi.runs}) == [0, 1, 2]
    assert multi.validation_mae is None
    polished = _fit(logs, 7, 3)
    assert polished.train_mae <= multi.train_mae and polished.evaluations > multi.evaluations
    assert sorted({run["start"] for run in polished.runs}) == [0, 1, 2, 3]  # 3: the polish
    assert polished.history == sorted(polished.history, reverse=True)


def test_multi_start_is_deterministic_and_recovers_the_simulated_servo(logs):
    """Measured: seeds 0 and 3 both end at 0.912 mrad (the truth's 0.887, noise and quantisation), kt and R within
    0.3 %, Coulomb and load friction within 1 %; one search of seed 0 stops at 1.08 mrad, viscous ×2.6."""
    a, b = _fit(logs, 0, 3, 1500), _fit(logs, 0, 3, 1500)
    assert a.params.packed().tolist() == b.params.packed().tolist() and a.train_mae == b.train_mae
    for key in ("kt", "R", "armature"):
        assert getattr(a.params, key) == pytest.approx(getattr(TRUTH, key), rel=0.02), key
    for key in ("friction_base", "load_friction_base"):
        assert a.params.friction[key] == pytest.approx(TRUTH.friction[key], rel=0.03), key
    assert a.train_mae < 1.05 * evaluate(TRUTH, logs)  # at the noise floor of the true parameters


def _rastrigin(u: np.ndarray) -> np.ndarray:
    """Multimodal cost on [0, 1]^2 (global minimum 0 at u = 0.3): local minima every 0.1."""
    z = (u - 0.3) * 10
    return 10 * z.shape[1] + (z**2 - 10 * np.cos(2 * np.pi * z)).sum(axis=1)


def test_multi_start_on_a_multimodal_cost_is_never_worse_than_one_search():
    kw = dict(
        restart_step=lambda u: np.full(2, 0.02),
        max_evals=200,
        pop0=6,
        patience=5,
        stall_restarts=0,
    )
    start = (np.array([0.8, 0.8]), np.array([0.8, 0.8]))
    inc = (float(_rastrigin(start[0][None])[0]), start[0])
    step = np.full(2, 0.1)
    singles = [ipop(_rastrigin, start[1].copy(), step, inc, seed=start_seed(0, s), **kw).f for s in range(6)]
    multi = multi_start(_rastrigin, 6, 0, [Begin(start[1], step, inc)], polish=False, **kw)
    assert multi.f == min(singles) and multi.f <= inc[0]
    assert multi_start(_rastrigin, 6, 0, [Begin(start[1], step, inc)], **kw).f <= multi.f
    with pytest.raises(ValueError, match="starts must be >= 1"):
        multi_start(_rastrigin, 0, 0, [Begin(start[1], step, inc)], **kw)


def test_identify_refuses_zero_starts_with_one_line_and_no_output(tmp_path, capsys):
    out = tmp_path / "fit"
    assert main(["identify", str(tmp_path), "--out", str(out), "--starts", "0", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "--starts must be >= 1, got 0" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def _bowl(u: np.ndarray) -> np.ndarray:
    """One basin on [0, 1]^2 (minimum 1 at u = 0.4): every search ends at the same cost."""
    return 1.0 + ((u - 0.4) ** 2).sum(axis=1)


def test_two_searches_that_agree_end_the_multi_start_without_a_polish():
    """One basin: the second search confirms the first (costs within 1e-3), so starts 3 and 4 and the polish do
    not run; with agree=None all four and the polish do, and end no lower."""
    kw = dict(restart_step=lambda u: np.full(2, 0.02), max_evals=300, pop0=6, patience=5, stall_restarts=0)
    start = np.array([0.9, 0.1])
    begin = Begin(start, np.full(2, 0.2), (float(_bowl(start[None])[0]), start))
    quick = multi_start(_bowl, 4, 0, [begin], **kw)
    every = multi_start(_bowl, 4, 0, [begin], agree=None, **kw)
    assert sorted({run["start"] for run in quick.runs}) == [0, 1]
    assert quick.stop == "agreed after 2 searches"
    assert sorted({run["start"] for run in every.runs}) == [0, 1, 2, 3, 4]  # 4: the polish
    assert quick.evaluations < every.evaluations
    assert quick.f == pytest.approx(every.f, rel=1e-3)
    assert agreed([1.0, 1.0005], 1e-3) and not agreed([1.0, 1.002], 1e-3) and not agreed([1.0, 1.0], None)
    assert not agreed([1.0], 1e-3) and not agreed([1.0, np.inf], 1e-3)


def test_searches_stuck_at_their_begin_point_confirm_nothing():
    """Begun at the bowl's minimum, no search improves on it: their equal costs are no agreement, so all four
    searches and the polish run."""
    kw = dict(restart_step=lambda u: np.full(2, 0.02), max_evals=120, pop0=6, patience=5, stall_restarts=0)
    start = np.array([0.4, 0.4])
    begin = Begin(start, np.full(2, 0.2), (float(_bowl(start[None])[0]), start))
    r = multi_start(_bowl, 4, 0, [begin], **kw)
    assert sorted({run["start"] for run in r.runs}) == [0, 1, 2, 3, 4] and r.f == 1.0
    assert not r.stop.startswith("agreed")
