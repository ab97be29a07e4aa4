"""Simulation-MAE identification (Duclusaud et al. §V): packing, recovery of known parameters, model ranking, output."""

import math

import numpy as np
import pytest

from servo_ff.identification.simulation_fit import (
    FRICTION_BOUNDS,
    SEARCH_BOUNDS,
    bounds_row,
    evaluate,
    fit_model,
    identify_models,
    pack_candidates,
    params_from_vector,
    search_space,
    split_logs,
    warm_start,
)
from servo_ff.identification.synthetic import bench_grid, quantize, simulate_logs
from servo_ff.io.servo_log import LogError, stack_logs
from servo_ff.models.params import MODEL_NAMES, N_PACKED, ActuatorParams, ParameterError
from servo_ff.models.presets import available_presets, preset

GRID = bench_grid(masses=(0.5, 1.5), lengths=(0.15,), kps=(4, 16))


def _logs(truth, seed=1):
    return simulate_logs(truth, GRID, duration=4.0, noise=0.001, counts_per_rev=4096, seed=seed)


@pytest.mark.parametrize("model", MODEL_NAMES)
def test_pack_candidates_matches_actuator_params_packed(model):
    """Writing values at the P_* indices must equal ActuatorParams.packed() for the same values."""
    truth = preset("mx106", model)
    logs = _logs(truth)[:3]
    batch = stack_logs(logs)
    keys = [k for k, *_ in search_space(model, "mx106")]
    values = np.array([[getattr(truth, k) if k in ("kt", "R", "armature") else truth.friction[k] for k in keys]])
    base = preset("mx106", model).with_(kt=1.0, R=1.0).packed()
    packed = pack_candidates(base, keys, values, batch)
    assert packed.shape == (1, 3, N_PACKED)
    for j, lg in enumerate(logs):
        want = truth.with_(firmware=truth.firmware.with_(kp=lg.kp, vin=lg.vin)).packed()
        np.testing.assert_array_equal(packed[0, j], want)


@pytest.mark.parametrize(
    "truth", [preset("mx64", "m4"), preset("mx106", "m6").with_(friction_base=0.05)], ids=["m4", "m6"]
)
def test_cmaes_recovers_motor_and_friction_within_5_percent(truth):
    """kt, R, armature, viscous and base friction from noisy, quantised M4/M6 logs (the model's other friction
    terms held at their true values to keep the test short; bench/identification.py fits everything)."""
    logs = _logs(truth)
    fixed = {k: v for k, v in truth.friction.items() if k not in ("friction_base", "friction_viscous")}
    res = fit_model(logs, truth.model, truth.actuator, max_evals=3000, fixed=fixed, progress=False, seed=0)
    got = res.params
    for key in ("kt", "R", "armature"):
        assert getattr(got, key) == pytest.approx(getattr(truth, key), rel=0.05), key
    for key in ("friction_base", "friction_viscous"):
        assert got.friction[key] == pytest.approx(truth.friction[key], rel=0.05), key
    assert res.train_mae < 1.1 * evaluate(truth, logs)  # down to the noise floor
    assert res.history == sorted(res.history, reverse=True)  # best-so-far never gets worse
    assert res.validation_mae is None


def test_m1_validates_worse_than_m4_on_m4_data(tmp_path):
    truth = preset("mx64", "m4")
    logs = _logs(truth)
    res = identify_models(logs, ("m1", "m4"), max_evals=1500, progress=False, seed=0)
    assert res["m1"].validation_mae > 2 * res["m4"].validation_mae
    assert res["m4"].train_mae < res["m1"].train_mae
    for r in res.values():  # written parameter files round-trip and are finite
        assert all(math.isfinite(v) for v in r.params.packed()[:14])
        r.params.save_json(tmp_path / "p.json")
        r.params.save_yaml(tmp_path / "p.yaml")
        assert ActuatorParams.load_json(tmp_path / "p.json").friction == pytest.approx(r.params.friction)
        assert ActuatorParams.load_yaml(tmp_path / "p.yaml").kt == pytest.approx(r.params.kt)


def test_split_is_75_25_and_deterministic():
    logs = _logs(preset("mx64", "m1"))
    train, val = split_logs(logs, 0.25, seed=3)
    assert (len(train), len(val)) == (12, 4)
    assert [lg.source for lg in split_logs(logs, 0.25, seed=3)[1]] == [lg.source for lg in val]
    assert not {lg.source for lg in train} & {lg.source for lg in val}


def test_non_finite_parameters_are_refused():
    keys = [k for k, *_ in search_space("m1", "mx106")]
    with pytest.raises(ParameterError, match="non-finite fitted parameter.*friction_viscous"):
        params_from_vector("m1", "mx106", preset("mx106", "m1").firmware, keys, np.array([2, 3, 0.01, 0.1, np.nan]))
    with pytest.raises(ParameterError, match="no kt/R/armature bounds for actuator 'foo'.*--params"):
        search_space("m1", "foo")


def test_synthetic_logs_quantised_and_one_per_grid_point():
    truth = preset("mx106", "m1")
    logs = simulate_logs(truth, GRID[:5], duration=1.0, counts_per_rev=4096)
    assert len(logs) == 5 and {lg.kp for lg in logs} <= {4.0, 16.0}
    counts = logs[0].position / (2 * np.pi / 4096)
    np.testing.assert_allclose(counts, np.round(counts), atol=1e-9)
    np.testing.assert_array_equal(quantize(np.array([0.0007, 0.0009]), 4096), [0.0, 2 * np.pi / 4096])


def test_every_published_preset_lies_inside_its_search_box():
    """bam's published files (and the datasheet presets, searched around themselves) are points of our box, q_offset
    included; the XL330 row is bam's XL330Actuator box (its published m5/m6 R ≈ 2.8 Ω lie inside)."""
    for servo, model in available_presets():
        p = preset(servo, model)
        box = {k: (lo, hi) for k, lo, hi, _ in search_space(model, servo, fit_q_offset=True)}
        values = {"kt": p.kt, "R": p.R, "armature": p.armature, "q_offset": p.q_offset, **p.friction}
        assert set(box) == set(values), (servo, model)
        for k, v in values.items():
            assert box[k][0] <= v <= box[k][1], f"{servo} {model}: {k} = {v} outside {box[k]}"
    assert [b[:2] for b in SEARCH_BOUNDS["xl330"][:3]] == [(0.1, 3.0), (2.0, 5.0), (0.0001, 0.05)]
    assert SEARCH_BOUNDS["sts3215"].q_offset == (-0.2, 0.2) and SEARCH_BOUNDS["mx64"].q_offset == (-0.1, 0.1)
    assert {s.key: s.hi for s in search_space("m3", "xl320")}["load_friction_base"] == 1.0
    assert all("bam" in row.source for row in SEARCH_BOUNDS.values())
    assert all(src for *_, src in FRICTION_BOUNDS.values())


def test_unknown_actuator_is_searched_around_a_reference():
    ref = preset("mx64", "m1").with_(actuator="myservo")
    box = {k: (lo, hi) for k, lo, hi, _ in search_space("m1", "myservo", ref, fit_q_offset=True)}
    assert box["kt"] == pytest.approx((ref.kt / 4, ref.kt * 4)) and box["q_offset"] == (-0.1, 0.1)
    assert "reference" in bounds_row("myservo", ref).source


def test_warm_started_nested_model_improves_on_its_warm_start():
    """M2 data (Stribeck friction 0.08 N·m): M2 warm-started from the fitted M1 must go well below the M1 optimum
    (its extra terms start inside the box, not pinned at 0 with a tiny step)."""
    truth = preset("mx64", "m2")
    logs = _logs(truth)[::2]
    r1 = fit_model(logs, "m1", "mx64", max_evals=800, progress=False, seed=0)
    r2 = fit_model(logs, "m2", "mx64", max_evals=800, progress=False, seed=0, x0=warm_start("m2", {"m1": r1.params}))
    assert r2.start_mae == pytest.approx(r1.train_mae, rel=1e-9)  # the warm start is the M1 optimum
    assert r2.train_mae < 0.75 * r2.start_mae  # measured: 2.88 → 1.84 mrad
    assert r2.params.friction["friction_stribeck"] > 0.02


def test_whole_budget_is_used_with_ipop_restarts_unless_restarts_end_it():
    """One search (starts=1), stall_restarts=0: every restart runs until the budget is spent; restarts=0: one run."""
    logs = _logs(preset("mx64", "m1"))[::4]
    r = fit_model(logs, "m1", "mx64", max_evals=1200, patience=5, stall_restarts=0, starts=1, progress=False, seed=0)
    pop0 = r.runs[0]["population"]
    assert 1200 - pop0 < r.evaluations <= 1200 and r.stop == "budget"
    assert len(r.runs) >= 3 and r.runs[1]["population"] == 2 * pop0 and r.runs[2]["population"] == 4 * pop0
    assert sum(run["evaluations"] for run in r.runs) == r.evaluations
    assert r.history == sorted(r.history, reverse=True)
    one = fit_model(logs, "m1", "mx64", max_evals=1200, patience=5, restarts=0, starts=1, progress=False, seed=0)
    assert len(one.runs) == 1 and one.stop == "restarts" and one.evaluations < 1200 - pop0
    assert one.runs[0]["stop"] in ("patience", "converged")
    assert r.train_mae <= one.train_mae


def test_search_stops_when_restarts_stop_improving():
    """Noise-free M1 data started at the truth: no restart can improve, so two restarts in a row end it."""
    truth = preset("mx64", "m1")
    logs = simulate_logs(truth, GRID[::4], duration=3.0)
    x0 = {"kt": truth.kt, "R": truth.R, "armature": truth.armature, **truth.friction}
    r = fit_model(logs, "m1", "mx64", max_evals=20000, patience=5, x0=x0, starts=1, progress=False, seed=0)
    assert r.stop == "converged" and len(r.runs) == 3 and r.evaluations < 20000
    assert r.train_mae == r.start_mae < 1e-9


def test_q_offset_is_fitted_and_can_be_held_at_zero():
    truth = preset("mx64", "m1").with_(q_offset=0.05)
    logs = _logs(truth)[::2]
    fixed = {"friction_base": truth.friction["friction_base"]}
    res = fit_model(logs, "m1", "mx64", max_evals=1500, progress=False, seed=0, fixed=fixed)
    assert res.params.q_offset == pytest.approx(0.05, abs=0.005)
    off = fit_model(logs, "m1", "mx64", max_evals=300, progress=False, seed=0, fit_q_offset=False)
    assert off.params.q_offset == 0.0 and res.train_mae < off.train_mae


def test_a_split_needs_two_logs():
    logs = _logs(preset("mx64", "m1"))[:1]
    with pytest.raises(LogError, match="needs at least 2 logs"):
        identify_models(logs, ("m1",), max_evals=100, progress=False)
    res = identify_models(logs, ("m1",), max_evals=100, progress=False, validation_fraction=0.0)
    assert res["m1"].validation_mae is None and res["m1"].validation_logs == []
