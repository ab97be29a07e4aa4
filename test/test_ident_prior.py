"""Datasheet prior on kt/R, fitted firmware constants (error gain, target-velocity clamp) and the error budget."""

import math

import numpy as np
import pytest

from servo_ff.identification.datasheet_prior import DATASHEETS, DatasheetPrior, datasheet_prior
from servo_ff.identification.error_budget import PHASES, error_budget, phase_labels
from servo_ff.identification.search_space import firmware_keys, search_space
from servo_ff.identification.simulation_fit import fit_model
from servo_ff.identification.synthetic import bench_grid, simulate_logs
from servo_ff.io.servo_log import ServoLog
from servo_ff.models.firmware import FIRMWARE_LAWS
from servo_ff.models.presets import preset


def test_prior_box_is_the_datasheet_stall_torque_and_no_load_speed():
    p = datasheet_prior("xl330")
    s = DATASHEETS["xl330"]
    assert p.kt == pytest.approx(s.voltage / s.no_load_speed)
    assert p.kt * s.voltage / p.R == pytest.approx(s.stall_torque)
    lo, hi = p.kt_range()
    assert (lo, hi) == pytest.approx((p.kt / 1.25, p.kt * 1.25))
    # inside the box: no excess; ω0 20 % too high plus τs 40 % too high: the sum of the log-excesses
    assert p.excess(np.array([p.kt * 1.2]), np.array([p.R])) == pytest.approx([0.0])
    kt = p.kt / 1.2  # ω0 ×1.2: inside
    r = kt * s.voltage / (1.4 * s.stall_torque)
    assert p.excess(kt, r) == pytest.approx(math.log(1.4 / 1.25))
    assert datasheet_prior("no_such_servo") is None
    with pytest.raises(ValueError, match="factor"):
        DatasheetPrior(s, 1.0)


def test_a_fit_under_the_prior_stays_in_its_box_when_the_data_say_otherwise():
    """Truth with kt 1.5 × the datasheet's: unconstrained, the fit finds it; under the prior, kt stays in the ω0
    box and kt·V/R in the τs box (the prior wins, as a box should)."""
    prior = datasheet_prior("mx64")
    truth = preset("mx64", "m1").with_(kt=1.5 * prior.kt, R=1.5 * prior.R)
    logs = simulate_logs(truth, bench_grid(masses=(0.5,), lengths=(0.15,), kps=(8, 32)), duration=3.0, seed=2)
    fixed = {k: v for k, v in truth.friction.items()} | {"armature": truth.armature}
    free = fit_model(logs, "m1", "mx64", max_evals=400, fixed=fixed, progress=False, fit_q_offset=False)
    boxed = fit_model(logs, "m1", "mx64", max_evals=400, fixed=fixed, progress=False, fit_q_offset=False, prior=prior)
    assert free.params.kt == pytest.approx(truth.kt, rel=0.05)
    lo, hi = prior.kt_range()
    assert lo <= boxed.params.kt <= hi
    assert prior.excess(boxed.params.kt, boxed.params.R) < 1e-3
    assert boxed.train_mae > free.train_mae


def test_firmware_error_gain_and_clamp_are_searched_only_where_the_law_has_a_clamp():
    sts = FIRMWARE_LAWS["sts3215"]
    assert firmware_keys(sts) == ["error_gain", "goal_velocity_limit"]
    assert firmware_keys(FIRMWARE_LAWS["xl330"]) == []
    space = {k: (a, b) for k, a, b, _ in search_space("m1", "sts3215", firmware=sts)}
    assert space["error_gain"] == pytest.approx((0.1 * sts.error_gain, 10 * sts.error_gain))
    assert space["goal_velocity_limit"] == pytest.approx((0.1 * sts.goal_velocity_limit, 10 * sts.goal_velocity_limit))
    assert "error_gain" not in {k for k, *_ in search_space("m1", "xl330", firmware=FIRMWARE_LAWS["xl330"])}


def test_a_slower_firmware_clamp_and_another_error_gain_are_recovered():
    law = FIRMWARE_LAWS["sts3215"]
    truth = preset("sts3215", "m1")
    truth = truth.with_(firmware=law.with_(goal_velocity_limit=2.0, error_gain=1.3 * law.error_gain))
    logs = simulate_logs(truth, bench_grid(masses=(0.5,), lengths=(0.15,), kps=(16, 32)), duration=3.0, seed=3)
    fixed = dict(truth.friction) | {"kt": truth.kt, "R": truth.R, "armature": truth.armature}
    res = fit_model(logs, "m1", "sts3215", law, max_evals=500, fixed=fixed, progress=False, fit_q_offset=False)
    assert res.params.firmware.goal_velocity_limit == pytest.approx(2.0, rel=0.05)
    assert res.params.firmware.error_gain == pytest.approx(1.3 * law.error_gain, rel=0.05)
    fixed.pop("armature")
    held = fit_model(
        logs, "m1", "sts3215", law, max_evals=60, fixed=fixed, progress=False, fit_q_offset=False, fit_firmware=False
    )
    assert held.params.firmware == law.with_(kp=held.params.firmware.kp, vin=held.params.firmware.vin)


def _log(goal, position, speed, kp=400.0):
    n = len(goal)
    return ServoLog(
        t=np.arange(n) * 0.005,
        position=np.asarray(position, float),
        speed=np.asarray(speed, float),
        goal_position=np.asarray(goal, float),
        torque_enable=np.ones(n),
        input_volts=np.full(n, 7.4),
        kp=kp,
    )


def test_phase_labels_and_budget():
    fw = FIRMWARE_LAWS["xl330"]
    n = 400
    t = np.arange(n) * 0.005
    goal = np.where(t < 1.0, 0.25 * np.sin(2 * np.pi * t), 0.0)  # ≤ 1.6 rad/s; reverses at 0.25/0.75 s, then holds
    position = goal.copy()
    speed = np.gradient(goal, 0.005)
    position[350:] = 1.0  # 1 rad from a held goal: kp 400 · error_gain · 1 rad > max_pwm, the duty saturates
    speed[100:110] = 3.0  # fast
    lab = phase_labels(_log(goal, position, speed), fw)
    names = np.array(PHASES)[lab]
    assert (names[350:] == "saturation").all()
    assert names[50] == "reversal" and names[150] == "reversal"  # goal velocity changes sign at 0.25 and 0.75 s
    assert (names[100:110] == "fast").all()
    assert names[260] == "hold" and names[20] == "slow"
    err = np.zeros(n)
    err[350:] = 0.1
    err[260] = 0.05
    b = error_budget([err], [lab])
    assert sum(b.error_share.values()) == pytest.approx(1.0)
    assert b.error_share["saturation"] == pytest.approx(5.0 / 5.05)
    assert b.mae["saturation"] == pytest.approx(0.1)
    assert b.samples["saturation"] == pytest.approx(50 / n)
    with pytest.raises(ValueError, match="differ in length"):
        error_budget([err], [lab[:-1]])


def test_stall_resistance_is_the_stall_point_voltage_over_current():
    """R = V/I_s from the vendor's stall figures (XL330-M288: 6.0 V, 1.74 A → 3.448 Ω), the value
    models/datasheet.py's motor_from_servo derives; None where the vendor gives no stall current."""
    from servo_ff.models.datasheet import XM430_W350_DATASHEET, motor_from_servo

    assert DATASHEETS["xl330"].stall_resistance == pytest.approx(6.0 / 1.74)
    assert DATASHEETS["xm430"].stall_resistance == pytest.approx(motor_from_servo(XM430_W350_DATASHEET).R)
    assert DATASHEETS["sts3215"].stall_current is None and DATASHEETS["sts3215"].stall_resistance is None
    for name, s in DATASHEETS.items():
        if s.stall_current is not None:  # every quoted current is the one in the row's source text
            assert f"{s.stall_current:g}" in s.source, name
