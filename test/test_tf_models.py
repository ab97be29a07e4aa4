"""Maximo et al. datasheet model: parameters, transfer functions, register units, nonlinear simulation."""

import math
from dataclasses import replace

import control
import numpy as np
import pytest

from servo_ff.models import transfer_functions as tfm
from servo_ff.models.datasheet import MX28AT_DATASHEET
from servo_ff.models.params import ParameterError
from servo_ff.models.servo_nonlinear import cylinder_load_inertia, plant_state_space, simulate_servo
from servo_ff.models.step_study import step_study

DS = MX28AT_DATASHEET


def test_eta_and_bm_from_datasheet_numbers():
    # Maximo et al. Eq. 13 and Eq. 17 with the paper's datasheet values
    assert tfm.gearbox_efficiency(2.5, 0.0155, 193) == pytest.approx(0.836, abs=5e-4)
    assert tfm.motor_viscous_friction(0.0107, 0.0092, tfm.rpm_to_rad_s(10600)) == pytest.approx(8.87e-8, rel=2e-3)
    ds = tfm.datasheet_from_measurements(
        R=8.3,
        Kt=0.0107,
        Kw=93.1,
        Jm=8.68e-8,
        N=193,
        tau_load_stall=2.5,
        tau_motor_stall=0.0155,
        i_no_load=0.0092,
        speed_no_load=tfm.rpm_to_rad_s(10600),
        L=2.03e-3,
    )
    assert ds.eta == pytest.approx(DS.eta, abs=5e-4) and ds.bm == pytest.approx(DS.bm, rel=2e-3)


@pytest.mark.parametrize(
    "call",
    [
        lambda: tfm.gearbox_efficiency(-2.5, 0.0155, 193),
        lambda: tfm.gearbox_efficiency(2.5, 0.0, 193),
        lambda: tfm.gearbox_efficiency(5.0, 0.0155, 193),  # η > 1
        lambda: tfm.motor_viscous_friction(0.0107, float("nan"), 1000.0),
        lambda: tfm.datasheet_from_measurements(
            R=8.3,
            Kt=0.0107,
            Kw=0.0,
            Jm=8.68e-8,
            N=193,
            tau_load_stall=2.5,
            tau_motor_stall=0.0155,
            i_no_load=0.0092,
            speed_no_load=1100.0,
        ),
        lambda: tfm.gear_ratio_from_teeth([12, 64, 12]),
        lambda: tfm.pid_gain_from_register(4, Vs=0),
    ],
)
def test_non_positive_datasheet_values_raise(call):
    with pytest.raises(ParameterError):
        call()


def test_open_loop_poles_match_seed_000_statement():
    # Maximo et al. §2.4 states poles 0, 161 and 4.01e4 rad/s. Table 1's L = 2.03 mH gives an electrical pole near
    # R/L ≈ 4e3; the statement is reproduced with L = 0.203 mH (a factor-10 inconsistency in the paper).
    p = tfm.poles_sorted(tfm.voltage_to_angle_tf(replace(DS, L=2.03e-4)))
    assert abs(p[0]) < 1e-9
    assert -p[1].real == pytest.approx(161, rel=0.01)
    assert -p[2].real == pytest.approx(4.01e4, rel=0.02)
    p_table = tfm.poles_sorted(tfm.voltage_to_angle_tf(DS))
    assert -p_table[1].real == pytest.approx(167.4, rel=2e-3)
    assert -p_table[2].real == pytest.approx(3922, rel=2e-3)


def test_open_loop_tf_matches_physical_state_space():
    # independent route: eigenvalues of the physical ODE (J θ̈ = NηKt i − b θ̇, L i̇ = u − R i − N θ̇/Kω)
    A, _ = plant_state_space(DS, J_l=1e-4)
    eig = np.sort(np.linalg.eigvals(A).real)
    poles = np.sort(tfm.poles_sorted(tfm.voltage_to_angle_tf(DS, J_l=1e-4)).real)
    np.testing.assert_allclose(poles, eig, rtol=1e-8, atol=1e-9)
    # L → 0 mechanical pole (b_m R + K_t/K_ω)/(R J_m) (one motor, no load)
    p = tfm.poles_sorted(tfm.voltage_to_angle_tf(DS, include_inductance=False))
    assert -p[1].real == pytest.approx((DS.bm * DS.R + DS.Kt / DS.Kw) / (DS.R * DS.Jm), rel=1e-9)


@pytest.mark.parametrize("gains", [(61.2, 0, 0), (61.2, 30.0, 0), (61.2, 30.0, 0.4), (20.0, 0.0, 0.2)])
def test_closed_loop_eq30_coefficients_and_unit_dc_gain(gains):
    Kp, Ki, Kd = gains
    Jl = 2e-4
    sys = tfm.closed_loop_tf(DS, Kp, Ki, Kd, J_l=Jl)
    assert float(np.real(control.dcgain(sys))) == pytest.approx(1.0, abs=1e-9)
    # literal Eq. 30 (PID) / its Ki = 0 reduction, normalised to monic
    N, eta, Kt, Kw, R, L, bm, Jm = DS.N, DS.eta, DS.Kt, DS.Kw, DS.R, DS.L, DS.bm, DS.Jm
    J = Jl + Jm * N**2 * eta
    den = [
        L * J,
        R * J + L * bm * N**2 * eta,
        bm * N**2 * eta * R + Kt * N**2 * eta / Kw + N * eta * Kt * Kd,
        N * eta * Kt * Kp,
        N * eta * Kt * Ki,
    ]
    num = [N * eta * Kt * Kd, N * eta * Kt * Kp, N * eta * Kt * Ki]
    if Ki == 0:
        den, num = den[:-1], num[:-1]
    num = np.trim_zeros(np.array(num), "f")
    got_den = sys.den[0][0] / sys.den[0][0][0]
    np.testing.assert_allclose(got_den, np.array(den) / den[0], rtol=1e-7)
    np.testing.assert_allclose(sys.num[0][0] / sys.den[0][0][0], num / den[0], rtol=1e-7)


def test_reduced_model_eq31_is_eq30_with_L_zero():
    red = tfm.closed_loop_tf(DS, 61.2, 5.0, 0.1, include_inductance=False)
    full0 = tfm.closed_loop_tf(replace(DS, L=0.0), 61.2, 5.0, 0.1)
    np.testing.assert_allclose(red.den[0][0], full0.den[0][0], rtol=1e-10)
    assert len(red.den[0][0]) == 4  # third order with the integrator (Eq. 31)
    # neglecting L barely changes the low-frequency response (electrical pole ≫ bandwidth)
    full = tfm.closed_loop_tf(DS, 61.2, 5.0, 0.1)
    m_red, _ = tfm.frequency_response(red, [1, 8, 32])
    m_full, _ = tfm.frequency_response(full, [1, 8, 32])
    np.testing.assert_allclose(m_red, m_full, atol=0.3)


def test_register_and_pwm_conversions():
    kpc, kic, kdc = tfm.mx28_counts_gains(32, 0, 0)
    assert (kpc, kic, kdc) == (4.0, 0.0, 0.0)  # Maximo et al. Table 1: P/8 = 4
    Kp = tfm.pid_gain_from_register(4, Vs=12)
    assert Kp == pytest.approx(4 * 2048 * 12 / (511 * math.pi))
    # physical meaning: one count of error → K^c PWM units → K^c·Vs/511 volts
    assert Kp * float(tfm.counts_to_rad(1)) == pytest.approx(float(tfm.pwm_to_volts(4, 12)), rel=1e-12)
    assert tfm.pid_gain_to_register(Kp, 12) == pytest.approx(4)
    assert tfm.mx28_si_gains(32, 2048 / 1000, 250, 12) == pytest.approx(
        (Kp, tfm.pid_gain_from_register(1, 12), tfm.pid_gain_from_register(1, 12))
    )
    np.testing.assert_allclose(tfm.pwm_to_volts([0, 511, -511], 12), [0, 12, -12])
    np.testing.assert_allclose(tfm.volts_to_pwm(tfm.pwm_to_volts([17, -300], 12), 12), [17, -300])
    assert float(tfm.rad_to_counts(tfm.counts_to_rad(395))) == pytest.approx(395)
    with pytest.raises(ValueError, match="pwm"):
        tfm.pwm_to_volts(600, 12)
    with pytest.raises(ValueError, match="volts"):
        tfm.volts_to_pwm(12.5, 12)


def test_frequency_response_matches_seed_000_fig2():
    sys = tfm.closed_loop_tf(DS, *tfm.mx28_si_gains(32, 0, 0, 12.0))
    mag, phase = tfm.frequency_response(sys)
    assert mag.shape == (8,) and np.all(np.diff(mag) < 0)
    assert abs(mag[0]) < 0.05  # unity at 1 rad/s
    assert -15.0 < mag[-1] < -13.0  # "less than −14 dB for frequencies higher than 128 rad/s"
    with pytest.raises(ValueError):
        tfm.frequency_response(sys, [0.0, 1.0])


def test_nonlinear_simulation_linear_limit_and_saturation():
    Kp, Ki, Kd = tfm.mx28_si_gains(32, 0, 0, 12.0)
    amps = tfm.counts_to_rad([95, 195, 395])
    # linear limit of the simulator equals the transfer function (Eq. 30) step response
    dt = 1e-4
    t = np.arange(3000) * dt
    lin_sim = simulate_servo(DS, np.repeat(amps[:, None], t.size, 1), dt, Kp=Kp, saturate=False, counts_per_rev=None)
    sys = tfm.closed_loop_tf(DS, Kp)
    for k, a in enumerate(amps):
        y = tfm.linear_step_response(sys, a, t)
        assert np.max(np.abs(lin_sim.theta[k] - y)) < 0.01 * a
    st = step_study(DS, amps, Kp=Kp, Vs=12.0, dt=1e-3, duration=0.6)
    assert np.all(np.abs(st.volts) <= 12.0 + 1e-12)
    # 95 counts never saturates (Kp·e0 = 8.9 V) and stays close to linear; 395 counts saturates and is slower
    assert st.saturated_time[0] == 0 and st.saturated_time[2] > 0.05
    assert abs(st.metrics_nonlinear[0]["rise_time"] - st.metrics_linear[0]["rise_time"]) < 0.005
    assert st.metrics_nonlinear[2]["rise_time"] > 1.3 * st.metrics_linear[2]["rise_time"]
    # quantised steady state within one count of the goal
    assert np.all(np.abs(tfm.rad_to_counts(st.nonlinear[:, -1] - amps)) <= 1.0)


def test_simulation_rejects_bad_input():
    with pytest.raises(ValueError, match="NaN"):
        simulate_servo(DS, [0.0, float("nan")], 1e-3, Kp=10)
    with pytest.raises(ParameterError, match="dt"):
        simulate_servo(DS, [0.0, 0.1], 0.0, Kp=10)
    with pytest.raises(ParameterError, match="Vs"):
        simulate_servo(DS, [0.0, 0.1], 1e-3, Kp=10, Vs=-5)


def test_cylinder_load_inertia_steiner():
    assert cylinder_load_inertia(0.1, 0.022, 0.05) == pytest.approx(0.1 * 0.022**2 / 2 + 0.1 * 0.05**2)
    with pytest.raises(ParameterError):
        cylinder_load_inertia(0.0, 0.022, 0.05)
