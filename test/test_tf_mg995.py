"""Santana et al. workflow: potentiometer LS, PRBS, TF identification, physical parameters, 5 V simulation."""

import math

import numpy as np
import pytest

from servo_ff.identification.hobby_servo import MG995_DATA, MG995_IDENTIFIED_DEN, physical_parameters_from_tf
from servo_ff.identification.potentiometer import MG995_POT_ALPHA, MG995_POT_BETA, calibrate_potentiometer
from servo_ff.identification.prbs import prbs
from servo_ff.identification.srivc import srivc
from servo_ff.identification.tf_fit import UnstableModelError
from servo_ff.models import transfer_functions as tfm
from servo_ff.models.params import ParameterError
from servo_ff.models.servo_nonlinear import cylinder_load_inertia, simulate_servo


def test_potentiometer_least_squares():
    rng = np.random.default_rng(0)
    theta = np.radians(np.arange(0, 181, 5.0))  # Santana et al. §2.3: 0..180° by 5°
    v = MG995_POT_ALPHA * theta + MG995_POT_BETA + 0.002 * rng.standard_normal(theta.size)
    cal = calibrate_potentiometer(theta, v)
    assert cal.alpha == pytest.approx(MG995_POT_ALPHA, rel=5e-3)
    assert cal.beta == pytest.approx(MG995_POT_BETA, abs=3e-3)
    assert 0.001 < cal.rms_residual < 0.003
    # Eq. 4 in degrees: v = 0.014973 θ° + 0.297403
    assert float(cal.volts(math.radians(90))) == pytest.approx(0.014973 * 90 + 0.297403, abs=5e-3)
    np.testing.assert_allclose(cal.angle(cal.volts(theta)), theta, atol=1e-12)
    with pytest.raises(ValueError, match="at least 3"):
        calibrate_potentiometer([0.1, 0.2], [1, 2])
    with pytest.raises(ValueError, match="single value"):
        calibrate_potentiometer([0.1] * 5, [1, 2, 3, 4, 5])
    with pytest.raises(ValueError, match="NaN"):
        calibrate_potentiometer([0.1, 0.2, np.nan], [1, 2, 3])


def test_prbs_levels_hold_and_whiteness():
    amp = math.radians(10)
    u = prbs(4000, 0.01, amplitude=amp, clock=0.07, nbits=9)
    assert set(np.round(np.unique(u) / amp, 12)) == {-1.0, 1.0}
    changes = np.flatnonzero(np.diff(u)) + 1
    assert np.all(np.diff(changes) % 7 == 0)  # 0.07 s bits at 10 ms sampling
    bits = u[::7][:511]
    assert abs(bits.sum() / amp) == pytest.approx(1.0)  # m-sequence: one more +1 than −1 per period
    assert not np.array_equal(
        prbs(100, 0.01, amplitude=1, clock=0.02, seed=1), prbs(100, 0.01, amplitude=1, clock=0.02, seed=2)
    )
    with pytest.raises(ValueError, match="clock"):
        prbs(100, 0.01, amplitude=1.0, clock=0.0)


def test_physical_parameters_reproduce_table_3():
    hm = physical_parameters_from_tf(MG995_IDENTIFIED_DEN)
    ds = hm.datasheet
    assert ds.N == pytest.approx(275.6923, rel=1e-6)
    assert ds.Kt == pytest.approx(5.8857e-3, rel=1e-4)
    assert ds.Kw == pytest.approx(169.9029, rel=1e-5)
    assert ds.eta == pytest.approx(0.81156, rel=1e-4)
    assert ds.bm == pytest.approx(2.49797e-7, rel=1e-5)
    assert ds.Jm == pytest.approx(6.3173e-7, rel=1e-4)
    assert hm.KP == pytest.approx(16.6742, rel=1e-4)
    # round trip: the physical P-loop model (Santana et al. Eq. 23) reproduces the identified denominator
    sys = tfm.closed_loop_tf(ds, hm.KP, include_inductance=False)
    den = sys.den[0][0] / sys.den[0][0][0]
    np.testing.assert_allclose(den, MG995_IDENTIFIED_DEN, rtol=1e-9)


def test_physical_parameters_with_load_and_errors():
    hm = physical_parameters_from_tf(MG995_IDENTIFIED_DEN)
    J_l = cylinder_load_inertia(0.1, 0.022, 0.05)
    loaded = tfm.closed_loop_tf(hm.datasheet, hm.KP, J_l=J_l, include_inductance=False)
    den_l = loaded.den[0][0] / loaded.den[0][0][0]
    assert den_l[1] < MG995_IDENTIFIED_DEN[1] and den_l[2] < MG995_IDENTIFIED_DEN[2]  # more inertia, slower
    back = physical_parameters_from_tf(den_l, J_l=J_l)  # same motor recovered from the loaded experiment
    assert back.datasheet.Jm == pytest.approx(hm.datasheet.Jm, rel=1e-9)
    assert back.KP == pytest.approx(hm.KP, rel=1e-9)
    with pytest.raises(UnstableModelError):
        physical_parameters_from_tf([1.0, -2.0, 225.4])
    with pytest.raises(ValueError, match="second-order"):
        physical_parameters_from_tf([1.0, 2.0, 3.0, 4.0])
    with pytest.raises(ParameterError, match="tau_motor_stall"):
        physical_parameters_from_tf(
            MG995_IDENTIFIED_DEN, MG995_DATA.__class__(**{**MG995_DATA.__dict__, "tau_motor_stall": -1.0})
        )


def test_prbs_identification_workflow_recovers_model():
    """Simulated 001 experiment: PRBS reference through the Table 3 servo (no saturation at 3° amplitude),
    potentiometer noise, SRIVC n=2/m=0 (Eq. 5), physical parameters back."""
    hm = physical_parameters_from_tf(MG995_IDENTIFIED_DEN)
    dt = 0.002
    u = prbs(6000, dt, amplitude=math.radians(3), clock=0.07, seed=4)
    sim = simulate_servo(hm.datasheet, u, dt, Kp=hm.KP, Vs=5.0, counts_per_rev=None, include_inductance=False)
    assert not sim.saturated.any()
    y = sim.theta[0] + 1e-4 * np.random.default_rng(5).standard_normal(u.size)
    # the controller acts on the sampled angle and holds its voltage for dt = 2 ms: close to Eq. 23
    mod = srivc(u, y, dt, 2, 0)
    np.testing.assert_allclose(mod.den, MG995_IDENTIFIED_DEN, rtol=0.02)
    back = physical_parameters_from_tf(mod.den)
    assert back.datasheet.Jm == pytest.approx(hm.datasheet.Jm, rel=0.02)
    assert back.KP == pytest.approx(hm.KP, rel=0.02)
    with pytest.raises(ValueError, match="too short"):
        srivc(u[:20], y[:20], dt, 2, 0)


def test_five_volt_saturation_slows_large_steps():
    hm = physical_parameters_from_tf(MG995_IDENTIFIED_DEN)
    dt, n = 1e-3, 800
    amps = np.radians([10.0, 60.0])
    sim = simulate_servo(
        hm.datasheet,
        np.repeat(amps[:, None], n, 1),
        dt,
        Kp=hm.KP,
        Vs=5.0,
        counts_per_rev=None,
        include_inductance=False,
    )
    assert np.max(np.abs(sim.volts)) <= 5.0 + 1e-12
    assert not sim.saturated[0].any() and sim.saturated[1].sum() * dt > 0.1
    t90 = [np.argmax(sim.theta[k] >= 0.9 * a) * dt for k, a in enumerate(amps)]
    assert t90[1] > 1.3 * t90[0]
