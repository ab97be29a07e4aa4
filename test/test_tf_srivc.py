"""Wada et al.: SRIVC, structure selection by YIC/R²_T, D-P law, reference-to-torque model."""

import control
import numpy as np
import pytest

from servo_ff.identification.controller_structure import (
    CONTROLLER_ORDERS,
    dp_control_law,
    orders_for,
    select_controller_structure,
)
from servo_ff.identification.reference_torque import (
    DPServoPhysical,
    dp_servo_tf,
    estimate_torque,
    torque_model_from_physical,
    two_inertia_parameters,
)
from servo_ff.identification.srivc import srivc
from servo_ff.identification.tf_fit import UnstableModelError, fit_tf_ls, simulate_ct

DT = 0.004
NUM, DEN = [1.409e4], [1.0, 37.46, 1150.0, 1.399e4]  # Wada et al. §IV-A estimate (D-P servo)


def steps_input(n=2000, dt=DT):
    """Wada et al. §IV-A reference: 0.8 s steps of 0.15 and 0.3 rad."""
    u = np.zeros(n)
    seg = int(round(0.8 / dt))
    for k, lev in enumerate([0, 0.15, 0, 0.3, 0, 0.15, 0, 0.3, 0, 0.15, 0]):
        u[k * seg : (k + 1) * seg] = lev
    return u


def test_srivc_recovers_noise_free_tf_exactly():
    u = steps_input()
    y = simulate_ct(NUM, DEN, u, DT)
    mod = srivc(u, y, DT, 3, 0)
    np.testing.assert_allclose(mod.den, DEN, rtol=1e-6)
    np.testing.assert_allclose(mod.num, NUM, rtol=1e-6)
    assert mod.converged and mod.r2t > 1 - 1e-9
    # a model with a zero (PD-like, n=3, m=1) too
    num2, den2 = [300.0, 9000.0], [1.0, 30.0, 900.0, 9000.0]
    y2 = simulate_ct(num2, den2, u, DT)
    mod2 = srivc(u, y2, DT, 3, 1)
    np.testing.assert_allclose(mod2.theta, np.r_[den2[1:], num2], rtol=1e-6)


def test_srivc_unbiased_where_least_squares_is_biased():
    """Small Monte Carlo at 10 dB SNR: SRIVC's mean is within a few standard errors of the truth, LS's
    damping coefficient a2 is far off (equation-error bias)."""
    rng = np.random.default_rng(7)
    u = steps_input()
    x = simulate_ct(NUM, DEN, u, DT)
    sd = np.std(x) / np.sqrt(10.0)
    truth = np.r_[DEN[1:], NUM]
    sr, ls = [], []
    for _ in range(10):
        y = x + sd * rng.standard_normal(x.size)
        sr.append(srivc(u, y, DT, 3, 0).theta)
        ls.append(fit_tf_ls(u, y, DT, 3, 0, require_stable=False).theta)
    sr, ls = np.array(sr), np.array(ls)
    rel_bias_sr = np.abs(sr.mean(0) - truth) / truth
    rel_bias_ls = np.abs(ls.mean(0) - truth) / truth
    assert np.all(rel_bias_sr < 0.05), rel_bias_sr
    se = sr.std(0, ddof=1) / np.sqrt(len(sr))
    assert np.all(np.abs(sr.mean(0) - truth) < 4 * se + 1e-9 * truth)
    assert rel_bias_ls[0] > 0.3, rel_bias_ls  # LS a2 biased by > 30 %
    assert rel_bias_ls[0] > 10 * rel_bias_sr[0]


@pytest.mark.parametrize(
    "true_structure,num,den",
    [
        ("D-P", NUM, DEN),
        ("PD", [300.0, 9000.0], [1.0, 30.0, 900.0, 9000.0]),
    ],
)
def test_structure_selection_picks_true_orders_on_clean_data(true_structure, num, den):
    u = steps_input()
    y = simulate_ct(num, den, u, DT) + 1e-6 * np.random.default_rng(1).standard_normal(u.size)
    sel = select_controller_structure(u, y, DT)
    assert sel.structure == true_structure
    assert (sel.model.n, sel.model.m) == CONTROLLER_ORDERS[true_structure]
    assert {r[0] for r in sel.table()} == {"PID", "PI", "PD", "D-P"}


def test_orders_table_I():
    assert orders_for("PID") == (4, 2) and orders_for("PI") == (4, 1) and orders_for("PD") == (3, 1)
    assert orders_for("D-P") == orders_for("P") == (3, 0)
    with pytest.raises(ValueError, match="unknown controller structure"):
        orders_for("PIDF")


def test_bad_identification_input():
    u = steps_input()
    y = simulate_ct(NUM, DEN, u, DT)
    with pytest.raises(ValueError, match="too short"):
        srivc(u[:30], y[:30], DT, 3, 0)
    with pytest.raises(ValueError, match="too short"):
        srivc(u[:60], y[:60], DT, 4, 2)
    with pytest.raises(ValueError, match="NaN"):
        srivc(np.r_[u[:-1], np.nan], y, DT, 3, 0)
    with pytest.raises(ValueError, match="constant"):
        srivc(np.zeros_like(u), y, DT, 3, 0)
    with pytest.raises(ValueError, match="orders"):
        srivc(u, y, DT, 2, 3)
    with pytest.raises(ValueError, match="same length"):
        srivc(u, y[:-1], DT, 3, 0)


def test_unstable_identified_model_raises():
    # data from an unstable plant 1/(s − 1)
    rng = np.random.default_rng(3)
    u = np.repeat(rng.choice([-1.0, 1.0], 40), 10)
    y = simulate_ct([1.0], [1.0, -1.0], u, 0.005)
    with pytest.raises(UnstableModelError, match="unstable"):
        srivc(u, y, 0.005, 1, 0)
    with pytest.raises(UnstableModelError, match="unstable"):
        fit_tf_ls(u, y, 0.005, 1, 0)


# ---------------------------------------------------------------------------------------------------
PHYS = DPServoPhysical(J=0.01, D=0.2, R=3.0, L=0.17, ke=0.5, kt=0.5, KP=5.0, KD=0.3)


def _closed_loop_ss(p: DPServoPhysical, J: float):
    """Independent physical model: states [φ, φ̇, i], input u, D-P law (Eq. 6), outputs [φ, τ = kτ i]."""
    A = np.array([[0, 1, 0], [0, -p.D / J, p.kt / J], [-p.KP / p.L, -(p.ke + p.KD) / p.L, -p.R / p.L]])
    B = np.array([[0], [0], [p.KP / p.L]])
    C = np.array([[1, 0, 0], [0, 0, p.kt]])
    return control.ss(A, B, C, np.zeros((2, 1)))


def test_dp_law_and_closed_loop_coefficients():
    # Eq. 6 by value
    np.testing.assert_allclose(dp_control_law([0.3, 0.1], [0.1, 0.1], [2.0, -1.0], KP=5, KD=0.3), [0.4, 0.3])
    # the closed loop of the physical D-P servo equals the B0..B3 model of Wada et al. §IV-A
    g = dp_servo_tf(PHYS)
    ss = _closed_loop_ss(PHYS, PHYS.J)
    w = np.array([0.5, 5.0, 50.0])
    np.testing.assert_allclose(
        control.frequency_response(g, w).complex.reshape(-1),
        control.frequency_response(ss[0, 0], w).complex.reshape(-1),
        rtol=1e-9,
    )


def test_two_inertia_experiment_and_torque_estimate():
    dJ = 0.004
    u = steps_input()
    dens = []
    for J in (PHYS.J, PHYS.J + dJ):
        sysd = control.c2d(_closed_loop_ss(PHYS, J), DT, "zoh")  # held reference, exact sampling
        phi = control.forced_response(sysd, U=u).outputs[0]
        dens.append(srivc(u, phi, DT, 3, 0).den)
    tm = two_inertia_parameters(dens[0], dens[1], dJ)
    ref = torque_model_from_physical(PHYS)
    for k in ("J", "D", "R_over_L", "c0", "c1"):
        assert getattr(tm, k) == pytest.approx(getattr(ref, k), rel=2e-3), k
    assert tm.consistency < 1e-3
    # applied torque from reference and angle (Eq. 10) against the simulated k_τ·i (exact ZOH input)
    sysd = control.c2d(_closed_loop_ss(PHYS, PHYS.J), DT, "zoh")
    out = control.forced_response(sysd, U=u).outputs
    tau_hat = estimate_torque(tm, u, out[0], DT)
    assert np.max(np.abs(tau_hat - out[1])) < 0.02 * np.max(np.abs(out[1]))
    with pytest.raises(ValueError, match="sign of delta_J"):
        two_inertia_parameters(dens[0], dens[1], -dJ)
    with pytest.raises(UnstableModelError):
        two_inertia_parameters([1, -1, 2, 3], dens[1], dJ)


def test_seed_003_reported_models_give_paper_inertia():
    # Wada et al. §IV-B: the two identified denominators; the printed numbers are consistent with the second load being
    # 0.0022 kg m² lighter (a0 grows), and give J ≈ 0.0099 kg m² and K_P k_τ / L ≈ 140
    tm = two_inertia_parameters([1, 37.46, 1150, 1.399e4], [1, 45.29, 1413, 1.797e4], -0.0022)
    assert tm.J == pytest.approx(0.0099, rel=0.01)
    assert tm.c0 == pytest.approx(140.9, rel=0.03)
