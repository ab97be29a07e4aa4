"""Firmware laws: the table and its sources, --firmware specs, unknown actuators, the STS goal-velocity limit."""

import json
import math

import numpy as np
import pytest

from servo_ff.cli import main
from servo_ff.models.firmware import FIRMWARE_LAWS, FIRMWARE_TABLE, STS_MAX_SPEED, FirmwareLaw, firmware_from_spec
from servo_ff.models.motor import goal_profile
from servo_ff.models.params import ParameterError, load_params
from servo_ff.models.presets import available_presets, preset
from servo_ff.models.stepper import PendulumLoad, rollout
from servo_ff.nodes.sim_backend import SimServos

UNKNOWN = {
    "kt": 1.0,
    "R": 2.0,
    "armature": 0.01,
    "friction_base": 0.01,
    "friction_viscous": 0.02,
    "model": "m1",
    "actuator": "ax12",
}


def test_every_row_cites_a_source_and_every_preset_uses_its_row():
    assert {"mx64", "mx106", "xl320", "xl330", "xm430", "sts3215", "sts3250"} <= set(FIRMWARE_TABLE)
    for name, row in FIRMWARE_TABLE.items():
        assert len(row.source) > 20, name
    for servo, model in available_presets():
        assert preset(servo, model).firmware == FIRMWARE_LAWS[servo]
    sts = FIRMWARE_LAWS["sts3215"]
    assert (sts.vin, sts.kp, sts.error_gain, sts.max_pwm) == (7.4, 32.0, 0.166, 0.97)
    assert sts.goal_velocity_limit == pytest.approx(3400 * 2 * math.pi / 4096)


def test_firmware_spec_forms(tmp_path):
    assert firmware_from_spec("sts3215") == FIRMWARE_LAWS["sts3215"]
    over = firmware_from_spec("kp=16,current_limit=1.2", base=FIRMWARE_LAWS["mx106"])
    assert over == FIRMWARE_LAWS["mx106"].with_(kp=16.0, current_limit=1.2)
    law = FirmwareLaw("current", vin=12.0, kp=800.0, error_gain=0.01, max_pwm=1.0, current_limit=2.0)
    path = tmp_path / "fw.json"
    path.write_text(json.dumps({"firmware": {**law.__dict__, "goal_velocity_limit": None}}))
    assert firmware_from_spec(str(path)) == law
    yml = tmp_path / "fw.yaml"
    yml.write_text("control: voltage\nvin: 7.4\nkp: 32\nerror_gain: 0.166\nmax_pwm: 0.97\n")
    assert firmware_from_spec(str(yml)).vin == 7.4
    for bad, words in (
        ("kp=abc", "kp must be a number"),
        ("speed=3", "unknown key 'speed'"),
        ("nonsense", "not a known law"),
        ("max_pwm=2", "max_pwm"),
        (str(tmp_path / "no.json"), "no such"),
    ):
        with pytest.raises(ParameterError, match=words):
            firmware_from_spec(bad)


def test_unknown_actuator_needs_a_law_and_names_how_to_give_one(tmp_path, capsys):
    path = tmp_path / "ax12.json"
    path.write_text(json.dumps(UNKNOWN))
    with pytest.raises(ParameterError, match=r"ax12.*known laws: mx64, .*sts3215.*'firmware' object.*--firmware"):
        load_params(path)
    assert load_params(path, firmware=FIRMWARE_LAWS["sts3215"]).firmware == FIRMWARE_LAWS["sts3215"]
    path.write_text(
        json.dumps(
            {**UNKNOWN, "firmware": {"control": "voltage", "vin": 12.0, "kp": 10.0, "error_gain": 0.1, "max_pwm": 1.0}}
        )
    )
    assert load_params(path).firmware.vin == 12.0
    out = tmp_path / "out"
    path.write_text(json.dumps(UNKNOWN))
    assert main(["simulate", "--params", str(path), "--out", str(out)]) == 2
    assert "known laws" in capsys.readouterr().err and not out.exists()
    assert main(["simulate", "--params", str(path), "--firmware", "xl330", "--out", str(out)]) == 0
    assert (
        main(
            [
                "simulate",
                "--params",
                str(path),
                "--firmware",
                "control=voltage,vin=12,kp=10,error_gain=0.1,max_pwm=1",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert len(list(out.glob("*.csv"))) == 1


def test_sts_internal_target_moves_at_most_its_speed():
    goals = np.concatenate([np.zeros(10), np.full(300, 2.0)])
    dt = 0.005
    target = goal_profile(goals, STS_MAX_SPEED, dt, 0.0)
    assert np.max(np.diff(target)) == pytest.approx(STS_MAX_SPEED * dt)
    assert target[-1] == 2.0 and target[10] == pytest.approx(STS_MAX_SPEED * dt)
    assert np.array_equal(goal_profile(goals, math.inf, dt, 0.0), goals)  # no limit: the goals as sent
    p = preset("sts3215", "m1")
    slow = rollout(p, 0.0, 0.0, goals, dt, PendulumLoad(0.1, 0.1))
    fast = rollout(
        p.with_(firmware=p.firmware.with_(goal_velocity_limit=math.inf)), 0.0, 0.0, goals, dt, PendulumLoad(0.1, 0.1)
    )
    assert np.max(np.abs(slow.dtheta)) < np.max(np.abs(fast.dtheta))  # the profile slows the step response
    bank = SimServos(p, 1, load=PendulumLoad(0.1, 0.1))  # the sim node's bank follows the same profile
    bank.goal = np.array([2.0])
    thetas = []
    for _ in range(300):
        bank.advance(dt)
        thetas.append(bank.theta[0])
    assert np.max(np.abs(np.array(thetas[:299]) - slow.theta[11:])) < 1e-9
    assert bank.target[0] == 2.0


def test_docs_parameter_tables_are_generated_from_the_schema():
    from pathlib import Path

    from servo_ff.models.schema_doc import BEGIN, END, markdown_tables

    page = (Path(__file__).resolve().parents[1] / "docs" / "models.md").read_text()
    assert (
        page.split(BEGIN)[1].split(END)[0].strip() == markdown_tables().strip()
    )  # regenerate: python -m servo_ff.models.schema_doc


def test_xm430_current_based_mode_holds_as_its_position_mode_and_cancels_the_back_emf():
    """ROBOTIS e-manual (X series, Position PID Gain(84, 82, 80)): in mode 3 the PID's output is the PWM, in mode 5 the
    desired current, which a current controller turns into the PWM. At rest the two hold alike (the PWM and current
    units scale alike: 6.25 counts⁻¹ of 885 full duty vs 6.25 × 2.69 mA, stall current 2.3 A at 12 V); moving, mode 5's
    current loop cancels the back-EMF that damps mode 3 (kt²/R), until the supply voltage bounds the current."""
    import dataclasses

    from servo_ff.models.scalar import firmware_1

    base = preset("xm430", "m1")
    mode5 = base.packed()
    mode3 = dataclasses.replace(base, firmware=FIRMWARE_LAWS["xm430_position"]).packed()
    kt, r = base.kt, base.R
    for error in (0.01, 0.1):  # [rad], both below the 0.21 rad where the torque saturates
        tau5, _ = firmware_1(mode5, 0.0, 0.0, error)
        tau3, _ = firmware_1(mode3, 0.0, 0.0, error)
        assert tau5 == pytest.approx(tau3, rel=0.04) and tau5 == pytest.approx(19.5 * error, rel=0.01)
    w = 0.5  # [rad/s]
    tau5, u5 = firmware_1(mode5, 0.0, w, 0.05)
    tau3, _ = firmware_1(mode3, 0.0, w, 0.05)
    assert tau5 == pytest.approx(firmware_1(mode5, 0.0, 0.0, 0.05)[0], rel=1e-12)  # no velocity term
    assert u5 == pytest.approx(r * tau5 / kt + kt * w, rel=1e-12)  # the PWM the current loop needs
    assert firmware_1(mode3, 0.0, 0.0, 0.05)[0] - tau3 == pytest.approx(kt * kt / r * w, rel=1e-12)
    tau_fast, u_fast = firmware_1(mode5, 0.0, 3.0, 0.15)  # the supply bounds the current: back-EMF 5.3 V
    assert u_fast == pytest.approx(12.0, rel=1e-12) and tau_fast == pytest.approx(kt * (12.0 - kt * 3.0) / r)
