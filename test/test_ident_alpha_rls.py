"""Recursive least squares on α̂ (identification/alpha_rls.py): tracking, admissible box, finiteness, trust switch."""

import numpy as np
import pytest

from servo_ff.identification.alpha_rls import AlphaRLS, RLSOptions, regression_rows
from servo_ff.models.schwarz_behnke import motor_regressors

REF = np.array([8.5, 14.4, 0.2, 1.0])


def _rows(alpha, n, seed):
    rng = np.random.default_rng(seed)
    t = np.arange(n) * 0.005
    dq = 2.0 * np.sin(2 * np.pi * 0.7 * t) + 0.3 * rng.standard_normal(n)
    tau = 3.0 * np.sin(2 * np.pi * 0.3 * t + 1.0) + 0.2 * rng.standard_normal(n)
    A = motor_regressors(tau, dq, None, 0.5, 1.0)
    return A, np.array([a @ alpha for a in A])  # the row product AlphaRLS forms: its reference error exactly 0


def test_rls_follows_a_change_of_the_servo_with_forgetting():
    new = REF * np.array([1.15, 1.0, 2.5, 2.0])
    rls = AlphaRLS(REF, RLSOptions(forgetting=0.995, min_samples=200))
    A, y = _rows(REF, 1000, 0)
    assert rls.update_batch(A, y) == 1000
    np.testing.assert_allclose(rls.alpha, REF, rtol=1e-6)
    assert not rls.trusted  # the reference is exact: nothing to gain
    A, y = _rows(new, 3000, 1)
    rls.update_batch(A, y)
    np.testing.assert_allclose(rls.alpha, new, rtol=1e-3)
    assert rls.trusted
    np.testing.assert_array_equal(rls.current(), rls.alpha)


def test_alpha_is_held_in_its_box_and_never_non_finite():
    rls = AlphaRLS(REF, RLSOptions(box_factor=2.0))
    A, y = _rows(REF * np.array([1.0, 1.0, -5.0, 10.0]), 2000, 2)  # a negative Coulomb term, a huge static one
    rls.update_batch(A, y)
    assert rls.alpha[2] >= REF[2] / 2 and rls.alpha[3] == pytest.approx(rls.hi[3])
    assert (rls.alpha >= rls.lo).all() and (rls.alpha <= rls.hi).all()
    before = rls.alpha.copy()
    assert not rls.update(np.array([np.nan, 1, 1, 1]), 1.0)
    assert not rls.update(np.ones(4), np.inf)
    assert not rls.update(np.ones(3), 1.0)
    assert not rls.update(np.full(4, 1e200), 1e300)  # overflows: refused, state kept
    assert rls.skipped == 4
    np.testing.assert_array_equal(rls.alpha, before)
    assert np.isfinite(rls.P).all()


def test_covariance_does_not_wind_up_without_excitation():
    rls = AlphaRLS(REF, RLSOptions(forgetting=0.98, max_trace=10.0))
    phi = np.array([1.0, 0.0, 0.0, 0.0])  # only α0 excited, under strong forgetting
    for _ in range(5000):
        rls.update(phi, float(phi @ REF))
    assert np.trace(rls.P) <= 10.0 * np.trace(rls.P0) * (1 + 1e-9)
    np.testing.assert_allclose(rls.alpha, REF, rtol=1e-9)


def test_trust_needs_min_samples_and_a_better_prediction():
    rls = AlphaRLS(REF, RLSOptions(min_samples=300))
    A, y = _rows(REF * 1.3, 299, 3)
    rls.update_batch(A, y)
    assert not rls.trusted and np.array_equal(rls.current(), REF)
    rls.update_batch(*_rows(REF * 1.3, 50, 4))
    assert rls.trusted
    s = rls.state()
    assert s["trusted"] and s["samples"] == 349 and s["rms_rls"] < s["rms_reference"]


def test_options_and_start_are_checked():
    with pytest.raises(ValueError, match="forgetting"):
        RLSOptions(forgetting=0.0)
    with pytest.raises(ValueError, match="box_factor"):
        RLSOptions(box_factor=1.0)
    with pytest.raises(ValueError, match="alpha0"):
        AlphaRLS(np.array([1.0, np.nan, 0, 0]))


def test_regression_rows_are_eq_19_with_the_reaction_delay():
    n, d = 50, 3
    cmd = np.linspace(0, 1, n)
    q = np.linspace(0, 0.9, n)
    tau, dq = np.ones(n), np.full(n, 0.5)
    A, y = regression_rows(cmd, q, tau, dq, None, 4.0, 12.0, d, 0.5, 1.0)
    assert A.shape == (n - d, 4) and y.shape == (n - d,)
    np.testing.assert_allclose(y, 48.0 * (cmd[: n - d] - q[d:]))
