"""Winding thermal model (models/thermal.py): closed-form step response, a hot servo is weaker, time to the limit,
the parameter-file row, and identification from logged temperatures."""

import math

import numpy as np
import pytest

from servo_ff.identification.thermal_fit import ThermalSegment, fit_thermal, simulate_segments
from servo_ff.models.errors import ParameterError
from servo_ff.models.params import ActuatorParams
from servo_ff.models.presets import preset
from servo_ff.models.servo_bank import ServoBank
from servo_ff.models.stepper import PendulumLoad
from servo_ff.models.thermal import ThermalParams, WindingTemperature, step_response, time_to_limit

TH = ThermalParams(resistance=6.0, capacity=15.0, tempco=0.0)  # τ = 90 s


def test_winding_model_follows_the_closed_form_step_response():
    w = WindingTemperature(TH, 2, ambient=30.0)
    t = np.arange(1, 601) * 0.5
    got = []
    for _ in t:
        w.advance(0.5, np.array([1.0, 0.5]), 4.0)
        got.append(w.temp.copy())
    got = np.array(got)
    np.testing.assert_allclose(got[:, 0], step_response(t, 4.0, TH, 30.0, 30.0), rtol=0, atol=1e-9)
    np.testing.assert_allclose(got[:, 1], step_response(t, 1.0, TH, 30.0, 30.0), rtol=0, atol=1e-9)
    assert got[-1, 0] == pytest.approx(30.0 + 4.0 * 6.0 * (1 - math.exp(-300 / 90)))


def test_a_stalled_servo_in_the_bank_heats_as_the_closed_form_says():
    """XL330 at full duty against a pendulum it cannot lift: constant current vin/R, so T(t) is the step response."""
    p = preset("xl330", "m1").with_(thermal=TH)
    bank = ServoBank(p, 1, PendulumLoad(3.0, 0.2))
    bank.goal = np.array([2.0])
    for _ in range(400):  # the pendulum swings out and settles where gravity equals the stall torque
        bank.advance(0.1, 20)
    assert abs(bank.dtheta[0]) < 1e-4  # stalled
    t0, temp0 = bank.time, float(bank.thermal.temp[0])
    amps = float(bank.tau_m[0] / p.kt)
    assert amps == pytest.approx(p.firmware.vin * p.firmware.max_pwm / p.R, rel=1e-3)
    for _ in range(600):
        bank.advance(0.1, 10)
    want = step_response(bank.time - t0, amps**2 * p.R, TH, temp0, TH.reference)
    assert float(bank.thermal.temp[0]) == pytest.approx(float(want), abs=1e-3 * (float(want) - temp0))


def test_a_hot_servo_is_weaker():
    hot_th = ThermalParams(resistance=6.0, capacity=15.0)  # copper's tempco
    cold = ServoBank(preset("xl330", "m1"), 1, PendulumLoad(0.6, 0.1))
    hot = ServoBank(preset("xl330", "m1").with_(thermal=hot_th), 1, PendulumLoad(0.6, 0.1))
    for b in (cold, hot):
        b.goal = np.array([2.0])
        for _ in range(1200):
            b.advance(0.1, 10)
    rise = float(hot.thermal.temp[0]) - hot_th.reference
    assert rise > 20
    assert hot.packed[0, 1] == pytest.approx(hot.params.R * (1 + hot_th.tempco * rise), rel=2e-3)
    assert hot.theta[0] < cold.theta[0] - 0.01  # lifts the pendulum less high


def test_time_to_limit_is_when_the_step_response_reaches_it():
    t = time_to_limit(np.array([40.0]), np.array([5.0]), TH, 30.0, np.array([60.0]))
    assert float(step_response(t, 5.0, TH, 40.0, 30.0)[0]) == pytest.approx(60.0)
    assert time_to_limit(np.array([40.0]), np.array([1.0]), TH, 30.0, np.array([60.0]))[0] == math.inf  # 36 °C max
    assert time_to_limit(np.array([61.0]), np.array([0.0]), TH, 30.0, np.array([60.0]))[0] == 0.0


def test_thermal_row_of_the_parameter_file(tmp_path):
    p = preset("xl330", "m4").with_(thermal=ThermalParams(5.0, 30.0))
    path = tmp_path / "p.json"
    p.save_json(path)
    assert ActuatorParams.load_json(path) == p
    yml = tmp_path / "p.yaml"
    p.save_yaml(yml)
    assert ActuatorParams.load_yaml(yml).thermal == p.thermal
    d = p.to_bam_dict()
    d["thermal"]["capacity"] = -1.0
    with pytest.raises(ParameterError, match="thermal.capacity"):
        ActuatorParams.from_bam_dict(d, source="p.json")
    d["thermal"] = {"resistance": 1.0, "mass": 2.0}
    with pytest.raises(ParameterError, match="p.json: unknown thermal key"):
        ActuatorParams.from_bam_dict(d, source="p.json")
    assert "thermal" not in preset("xl330", "m4").to_bam_dict()


def test_thermal_parameters_are_identified_from_integer_temperatures():
    truth = ThermalParams(resistance=8.0, capacity=12.0)
    rng = np.random.default_rng(0)
    segments, start = [], 0.0
    for _ in range(4):  # four logs of 200 s with 30 s pauses
        n = 2000
        amps = np.abs(1.0 + 0.3 * rng.standard_normal(n))
        segments.append(ThermalSegment(start, 0.1, np.zeros(n), amps))
        start += 230.0
    sims = simulate_segments(segments, 4.0, truth, 28.0, 28.0)
    logged = [ThermalSegment(s.start, s.dt, np.round(t), s.amps) for s, t in zip(segments, sims)]
    fit = fit_thermal(logged, 4.0, ambient=28.0)
    assert fit.params.capacity == pytest.approx(truth.capacity, rel=0.1)
    assert fit.params.resistance == pytest.approx(truth.resistance, rel=0.15)
    assert fit.rms < 0.4 < fit.rms_constant


def test_measured_trend_predicts_the_time_to_the_limit_of_the_model():
    """Readings of a servo heating by the model (integer °C, every 0.5 s): T_∞ = T + τ·dT/dt and the step response
    give the time to the limit, within a few seconds of the truth."""
    from servo_ff.models.thermal import TemperatureTrend, thermal_warning

    power, amb = 5.0, 30.0  # T_∞ = 60 °C
    trend = TemperatureTrend(1, TH.time_constant, window=20.0)
    t = np.arange(0, 60.5, 0.5)
    for ti in t:
        trend.add(ti, np.round(step_response(np.array([ti]), power, TH, amb, amb)))
    truth = float(
        time_to_limit(
            step_response(np.array([60.0]), power, TH, amb, amb), np.array([power]), TH, amb, np.array([55.0])
        )[0]
    )
    got = float(trend.time_to(55.0)[0])
    assert got == pytest.approx(truth, abs=0.15 * truth)
    assert trend.time_to(65.0)[0] == math.inf  # above T_∞
    assert thermal_warning(50.0, 30.0, 70.0, 60.0)[0] == 1 and "in 30 s" in thermal_warning(50.0, 30.0, 70.0, 60.0)[1]
    assert thermal_warning(71.0, 0.0, 70.0, 60.0)[0] == 2
    assert thermal_warning(50.0, math.inf, 70.0, 60.0) == (0, "")
    assert thermal_warning(math.nan, 0.0, 70.0, 60.0) == (0, "")


def test_trend_without_readings_predicts_nothing():
    from servo_ff.models.thermal import TemperatureTrend

    trend = TemperatureTrend(3, 600.0)
    assert (trend.time_to(70.0) == math.inf).all() and trend.time_to(70.0).shape == (3,)
    trend.add(0.0, np.array([40.0, np.nan, 80.0]))
    trend.add(1.0, np.array([41.0, np.nan, 80.0]))
    got = trend.time_to(70.0)
    assert math.isfinite(got[0]) and got[1] == math.inf and got[2] == 0.0
