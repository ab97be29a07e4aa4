"""Log-space search coordinates (identification/search_space.Box): keys whose bounds span a decade or more are
searched in log(value), flagged beside their bounds; the written values stay in SI units and inside the box."""

import math

import numpy as np
import pytest

from servo_ff.identification.search_space import (
    FIRMWARE_KEY_FACTORS,
    SEARCH_BOUNDS,
    Box,
    SearchKey,
    search_space,
)
from servo_ff.identification.simulation_fit import fit_model
from servo_ff.identification.synthetic import bench_grid, simulate_logs
from servo_ff.models.firmware import FIRMWARE_LAWS
from servo_ff.models.friction_models import FRICTION_KEYS
from servo_ff.models.params import ParameterError
from servo_ff.models.presets import preset


def _box() -> Box:
    sts = FIRMWARE_LAWS["sts3215"]
    return Box(search_space("m6", "sts3215", fit_q_offset=True, firmware=sts))


def test_declared_log_flags_are_positive_boxes_a_decade_or_more_wide():
    """Every flag where bounds are declared: log iff lo > 0 and hi/lo >= 10 (the Stribeck velocity among them)."""
    declared = {f"friction {k}": (f.lo, f.hi, f.log) for k, f in FRICTION_KEYS.items()}
    for servo, row in SEARCH_BOUNDS.items():
        declared |= {f"{servo} {k}": getattr(row, k) for k in ("kt", "R", "armature")}
    declared |= {f"firmware {k}": b for k, b in FIRMWARE_KEY_FACTORS.items()}
    for name, (lo, hi, log) in declared.items():
        assert log == (lo > 0 and hi / lo >= 10), name
    assert FRICTION_KEYS["dtheta_stribeck"].log and not FRICTION_KEYS["friction_viscous"].log


def test_transform_round_trips_and_is_geometric_on_log_keys():
    box = _box()
    assert {"dtheta_stribeck", "alpha", "armature", "kt", "R", "error_gain"} <= set(box.log_keys)
    assert "q_offset" not in box.log_keys and "friction_base" not in box.log_keys
    u = np.random.default_rng(0).random((64, len(box.keys)))  # a population of candidates at once
    x = box.values(u)
    np.testing.assert_allclose(box.unit(x), u, rtol=0, atol=1e-12)
    np.testing.assert_allclose(x, np.array([box.values(row) for row in u]), rtol=0, atol=0)
    mid = box.values(np.full(len(box.keys), 0.5))
    j, k = box.keys.index("dtheta_stribeck"), box.keys.index("friction_viscous")
    assert mid[j] == pytest.approx(math.sqrt(box.lo[j] * box.hi[j]), rel=1e-12)  # 0.22 rad/s, not 2.5
    assert mid[k] == pytest.approx((box.lo[k] + box.hi[k]) / 2, rel=1e-12)


def test_bounds_are_respected_exactly_at_the_edges():
    box = _box()
    n = len(box.keys)
    np.testing.assert_array_equal(box.values(np.zeros(n)), box.lo)
    np.testing.assert_array_equal(box.values(np.ones(n)), box.hi)
    np.testing.assert_array_equal(box.values(np.full(n, -0.3)), box.lo)
    np.testing.assert_array_equal(box.values(np.full(n, 1.7)), box.hi)
    x = box.values(np.random.default_rng(1).random((1000, n)) * (1 - 1e-15) + 1e-16)
    assert (x >= box.lo).all() and (x <= box.hi).all()
    np.testing.assert_array_equal(box.unit(box.lo), np.zeros(n))
    np.testing.assert_array_equal(box.unit(box.hi), np.ones(n))
    np.testing.assert_array_equal(box.unit(box.hi * 3 + 1), np.ones(n))  # outside the box: its edge


def test_a_log_key_with_a_non_positive_lower_bound_is_refused_with_one_line():
    for lo in (0.0, -0.1):
        with pytest.raises(ParameterError, match=r"log-space search needs 0 < low <= high: friction_base \[") as e:
            Box([SearchKey("kt", 0.1, 3.0, True), SearchKey("friction_base", lo, 0.2, True)])
        assert "\n" not in str(e.value) and "kt" not in str(e.value)
    Box([SearchKey("friction_base", 0.0, 0.2, False)])  # linear: fine


def test_a_step_on_a_log_key_is_a_factor_on_the_value_whatever_its_decade():
    box = _box()
    j = box.keys.index("dtheta_stribeck")
    for u in (0.1, 0.5, 0.9):
        point = np.full(len(box.keys), u)
        step = box.steps(point, 0.2, 0.0)
        ratio = box.values(point + step)[j] / box.values(point)[j]
        assert ratio == pytest.approx(1.2, rel=1e-12)
    k = box.keys.index("friction_viscous")  # linear: 20 % of the value, as a fraction of the box
    point = np.full(len(box.keys), 0.4)
    assert box.steps(point, 0.2, 0.0)[k] == pytest.approx(0.2 * 0.4, rel=1e-12)
    assert box.steps(point, 1e-6, 0.01)[j] == 0.01  # the floor


def test_stribeck_velocity_searched_in_log_space_is_recovered_from_a_synthetic_log():
    """M2 on simulated MX-64 logs with a slow Stribeck velocity (0.05 rad/s, 1 % of the box's top): the search in
    log(v_s) finds it; the motor and Coulomb-viscous terms held at their true values to keep the test short."""
    truth = preset("mx64", "m2").with_(dtheta_stribeck=0.05, friction_stribeck=0.1)
    grid = bench_grid(masses=(0.5, 1.5), lengths=(0.15,), kps=(4, 16))
    logs = simulate_logs(truth, grid, duration=4.0, noise=0.0005, counts_per_rev=4096, seed=2)
    fixed = {k: getattr(truth, k) for k in ("kt", "R", "armature")} | {
        k: truth.friction[k] for k in ("friction_base", "friction_viscous")
    }
    res = fit_model(logs, "m2", "mx64", max_evals=1500, fixed=fixed, fit_q_offset=False, progress=False, seed=0)
    assert res.log_keys == ["dtheta_stribeck", "alpha"]
    assert res.params.friction["dtheta_stribeck"] == pytest.approx(0.05, rel=0.1)
    assert res.params.friction["friction_stribeck"] == pytest.approx(0.1, rel=0.1)
