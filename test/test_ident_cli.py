"""CLI fronts: record-sim → identify, ilc → fit, and clear errors on bad input."""

import json
import math

import numpy as np
import pytest
import yaml

from servo_ff.cli import main
from servo_ff.dynamics.alpha import load_alpha
from servo_ff.identification.synthetic import bench_grid, simulate_logs
from servo_ff.io.bam_logs import write_bam_json
from servo_ff.models.firmware import FIRMWARE_LAWS
from servo_ff.models.params import ActuatorParams
from servo_ff.models.presets import preset


def _strict_json(path):
    """Parse refusing NaN/Infinity (json.loads accepts them by default)."""

    def refuse(name):
        raise AssertionError(f"{path}: {name} in the output")

    return json.loads(path.read_text(), parse_constant=refuse)


def _bam_logs(tmp_path, truth=None, n=4, duration=2.0):
    truth = truth or preset("mx64", "m1").with_(q_offset=0.03)
    grid = bench_grid(masses=(0.5, 1.5), lengths=(0.15,), kps=(8, 32))[:n]
    folder = tmp_path / "logs"
    folder.mkdir()
    for i, lg in enumerate(simulate_logs(truth, grid, duration=duration, noise=0.001, seed=1)):
        write_bam_json(lg, folder / f"log{i}.json")
    return folder


def test_record_sim_then_identify(tmp_path, capsys):
    logs = tmp_path / "logs"
    assert (
        main(
            [
                "record-sim",
                "--servo",
                "mx64",
                "--model",
                "m1",
                "--out",
                str(logs),
                "--masses",
                "1",
                "--lengths",
                "0.15",
                "--kps",
                "8",
                "32",
                "--duration",
                "3",
                "--format",
                "sqlite3",
                "--quantize",
                "4096",
            ]
        )
        == 0
    )
    assert len(list(logs.iterdir())) == 8
    out = tmp_path / "fit"
    assert main(["identify", str(logs), "--out", str(out), "--models", "m1", "--max-evals", "200", "--quiet"]) == 0
    summary = _strict_json(out / "summary.json")
    assert summary["models"]["m1"]["validation_mae"] > 0
    assert (out / "m1.yaml").exists() and (out / "validation_mae.png").exists()
    assert "m1" in capsys.readouterr().out


def test_ilc_then_fit(tmp_path):
    ilc = tmp_path / "ilc"
    assert main(["ilc", "--kp", "8", "--delay", "0.06", "--max-iterations", "8", "--out", str(ilc)]) == 0
    assert (ilc / "ilc.png").exists()
    out = tmp_path / "alpha"
    assert main(["fit", str(ilc / "ilc.npz"), "--out", str(out)]) == 0
    table = load_alpha(out / "alpha.yaml", ["pendulum"])  # the α file the feed-forward node reads
    alpha = table.alpha[0]
    assert len(alpha) == 5 and alpha[4] == 0 and min(alpha) >= 0 and alpha[0] > 0 and (out / "residuals.png").exists()
    assert "ilc_stopped" not in yaml.safe_load((out / "alpha.yaml").read_text())["fit"]


def test_fit_of_a_stopped_ilc_record_says_why_it_stopped(tmp_path, capsys):
    """A record whose ILC run stopped early (diverged, interrupted): the fit warns in one line naming the reason
    and alpha.yaml keeps it (before: fitted and written as any record, the reason dropped)."""
    from dataclasses import replace

    from servo_ff.io.ilc_record import load_ilc_record, save_ilc_record

    ilc = tmp_path / "ilc"
    assert main(["ilc", "--kp", "8", "--delay", "0.06", "--max-iterations", "8", "--out", str(ilc)]) == 0
    why = "diverged: q_max 0.9000 rad at iteration 3"
    save_ilc_record(replace(load_ilc_record(ilc / "ilc.npz"), stopped=why), tmp_path / "stopped.npz")
    capsys.readouterr()
    assert main(["fit", str(tmp_path / "stopped.npz"), "--out", str(tmp_path / "alpha")]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "stopped.npz" in err[0] and why in err[0], err
    assert yaml.safe_load((tmp_path / "alpha" / "alpha.yaml").read_text())["fit"]["ilc_stopped"] == why


def test_cli_errors_name_the_problem(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps(
            {
                "mass": 1,
                "length": 0.1,
                "kp": 8,
                "vin": 12,
                "entries": [
                    {"timestamp": 0.0, "position": 0.0, "goal_position": 0.0},
                    {"timestamp": 0.0, "position": 0.1, "goal_position": 0.0},
                ],
            }
        )
    )
    assert main(["identify", str(bad), "--out", str(tmp_path / "o"), "--quiet", "--servo", "mx64"]) == 2
    assert "not strictly increasing at sample 1" in capsys.readouterr().err
    assert main(["record-sim", "--servo", "mx999", "--out", str(tmp_path / "x")]) == 2
    assert "unknown servo preset" in capsys.readouterr().err


@pytest.mark.parametrize(
    "flags, words",
    [
        (["--speed-noise", "inf"], "speed_noise must be finite and >= 0, got inf"),  # before: "speed": Infinity
        (["--noise", "nan"], "noise must be finite and >= 0, got nan"),  # before: no noise, said nowhere
        (["--noise", "-1"], "noise must be finite and >= 0, got -1.0"),
        (["--kps", "0"], "kp must be finite and > 0, got 0.0"),  # before: a log identify refuses
        (["--masses", "-0.5"], "mass must be finite and >= 0, got -0.5"),
        (["--duration", "0"], "duration must be finite and > 0, got 0.0"),
    ],
)
def test_record_sim_refuses_settings_no_reader_takes_and_writes_nothing(tmp_path, capsys, flags, words):
    out = tmp_path / "x"
    argv = ["record-sim", "--servo", "xl330", "--model", "m1", "--masses", "0.5", "--lengths", "0.1", "--kps", "100"]
    argv += ["--trajectories", "raise_and_lower", "--duration", "1", "--out", str(out)]
    assert main([*argv, *flags]) == 2
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1, err
    assert not out.exists()


def test_summary_records_split_seed_budget_firmware_and_no_nan(tmp_path):
    logs = _bam_logs(tmp_path)
    out = tmp_path / "fit"
    assert (
        main(
            [
                "identify",
                str(logs),
                "--out",
                str(out),
                "--models",
                "m1",
                "m3",
                "--max-evals",
                "300",
                "--patience",
                "7",
                "--starts",
                "2",
                "--seed",
                "3",
                "--quiet",
            ]
        )
        == 0
    )
    s = _strict_json(out / "summary.json")
    names = sorted(p.name for p in logs.iterdir())
    train = [p.rsplit("/", 1)[-1] for p in s["split"]["train"]]
    val = [p.rsplit("/", 1)[-1] for p in s["split"]["validation"]]
    assert sorted(train + val) == names and len(val) == 1 and not set(train) & set(val)
    assert s["seed"] == 3 and s["split"]["seed"] == 3
    assert s["budget"] == {
        "max_evals": 300,
        "starts": 2,
        "selection": "lowest training MAE of the independent searches, stopping once two agree within 0.001 "
        "(relative; no polish then), else one polish search from it",
        "patience": 7,
        "restarts": None,
        "stall_restarts": 2,
        "population": None,
        "tol": 1e-3,
    }
    assert s["firmware"]["law"]["error_gain"] == FIRMWARE_LAWS["mx64"].error_gain
    assert "MXActuator" in s["firmware"]["source"] and "MXActuator" in s["bounds"]
    prior = s["datasheet_prior"]
    assert prior["kind"] == "box" and prior["factor"] == 1.25 and "MX-64" in prior["source"]
    for m in ("m1", "m3"):  # every fitted model inside the datasheet box
        kt, r = s["models"][m]["params"]["kt"], s["models"][m]["params"]["R"]
        assert prior["kt_range"][0] <= kt <= prior["kt_range"][1]
        assert 1 / 1.2501 <= kt * prior["voltage"] / r / prior["stall_torque"] <= 1.2501
    assert s["firmware_fit"] == {"keys": [], "reason": "the firmware law has no target-velocity clamp"}
    assert s["fit_q_offset"] is True
    assert s["models"]["m1"]["log_space_keys"] == ["armature"]  # kt, R under the prior box: linear
    for m in ("m1", "m3"):
        r = s["models"][m]
        assert r["train_mae"] > 0 and r["validation_mae"] > 0 and r["evaluations"] <= 3 * 300
        searches = {0, 1} if r["stop"] == "agreed after 2 searches" else {0, 1, 2}  # 2: the polish
        assert {run["start"] for run in r["runs"]} == searches  # two independent searches (and the polish)
        for start in searches:  # each within --max-evals
            spent = sum(run["evaluations"] for run in r["runs"] if run["start"] == start)
            assert spent <= 300
        assert r["params"]["q_offset"] != 0.0
        assert ActuatorParams.load_json(out / f"{m}.json").q_offset == r["params"]["q_offset"]
        _strict_json(out / f"{m}.json")
    assert s["models"]["m3"]["start_mae"] == pytest.approx(s["models"]["m1"]["train_mae"])


def test_no_validation_logs_gives_null_and_says_so(tmp_path, capsys):
    out = tmp_path / "fit"
    assert (
        main(
            [
                "identify",
                str(_bam_logs(tmp_path, n=2)),
                "--out",
                str(out),
                "--models",
                "m1",
                "--validation",
                "0",
                "--max-evals",
                "100",
                "--no-fit-q-offset",
                "--quiet",
            ]
        )
        == 0
    )
    s = _strict_json(out / "summary.json")
    assert s["models"]["m1"]["validation_mae"] is None and s["split"]["validation"] == []
    assert any("validation_mae is null" in n for n in s["notes"])
    assert s["models"]["m1"]["params"]["q_offset"] == 0.0
    assert "validation MAE not available" in capsys.readouterr().out


def _write(tmp_path, name, mutate=None, n=400):
    t = np.arange(n) * 0.005
    goal = 0.5 * np.sin(2 * t)
    cols = dict(position=goal * 0.9, goal_position=goal, torque_enable=np.ones(n))
    if mutate:
        mutate(cols)
    path = tmp_path / name
    lines = [
        "# mass: 1",
        "# length: 0.1",
        "# kp: 8",
        "# vin: 12",
        "# motor: mx64",
        "timestamp,position,goal_position,torque_enable",
    ]
    lines += [
        f"{a},{b},{c},{d}" for a, b, c, d in zip(t, cols["position"], cols["goal_position"], cols["torque_enable"])
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize(
    "name, mutate, n, reason",
    [
        ("two_rows.csv", None, 2, "too short: 2 samples"),
        ("still.csv", lambda c: c.update(position=np.zeros_like(c["position"])), 400, "no motion"),
        (
            "constant_goal.csv",
            lambda c: c.update(goal_position=np.full_like(c["goal_position"], 0.3)),
            400,
            "constant goal",
        ),
        ("torque_off.csv", lambda c: c.update(torque_enable=np.zeros_like(c["torque_enable"])), 400, "torque never on"),
    ],
)
def test_degenerate_logs_are_refused_and_nothing_is_written(tmp_path, capsys, name, mutate, n, reason):
    good = _write(tmp_path, "good.csv")
    bad = _write(tmp_path, name, mutate, n)
    out = tmp_path / "out" / "fit"
    assert main(["identify", str(good), str(bad), "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and name in err and reason in err
    assert not (tmp_path / "out").exists()


def test_one_log_cannot_be_split_and_unknown_actuator_lists_the_laws(tmp_path, capsys):
    good = _write(tmp_path, "good.csv")
    out = tmp_path / "out"
    assert main(["identify", str(good), "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "good.csv" in err and "at least 2 logs" in err
    assert (
        main(["identify", str(good), str(_write(tmp_path, "b.csv")), "--out", str(out), "--servo", "foo", "--quiet"])
        == 2
    )
    err = capsys.readouterr().err
    assert "'foo' has no known firmware law; known laws: " + ", ".join(FIRMWARE_LAWS) in err and "--firmware" in err
    assert not out.exists()


def test_params_and_firmware_flags(tmp_path, capsys):
    logs = _bam_logs(tmp_path, n=2)
    sts = tmp_path / "sts3215.json"
    preset("sts3215", "m1").save_json(sts)
    out = tmp_path / "sts"
    assert (
        main(
            [
                "identify",
                str(logs),
                "--out",
                str(out),
                "--params",
                str(sts),
                "--models",
                "m1",
                "--max-evals",
                "60",
                "--quiet",
            ]
        )
        == 0
    )
    s = _strict_json(out / "summary.json")
    assert s["actuator"] == "sts3215" and "STS3215Actuator" in s["bounds"]
    assert s["firmware"]["law"]["goal_velocity_limit"] == pytest.approx(FIRMWARE_LAWS["sts3215"].goal_velocity_limit)
    assert str(sts) in s["firmware"]["source"]
    # the STS law has a target-velocity clamp: its error gain and clamp are fitted (bam's boxes, 0.1–10 ×)
    assert s["firmware_fit"]["keys"] == ["error_gain", "goal_velocity_limit"]
    assert s["firmware_fit"]["bounds_factor_of_law"]["error_gain"] == [0.1, 10.0]
    assert s["models"]["m1"]["log_space_keys"] == ["armature", "error_gain", "goal_velocity_limit"]
    fitted = ActuatorParams.load_json(out / "m1.json").firmware
    law = FIRMWARE_LAWS["sts3215"]
    assert 0.1 * law.error_gain <= fitted.error_gain <= 10 * law.error_gain
    assert 0.1 * law.goal_velocity_limit <= fitted.goal_velocity_limit <= 10 * law.goal_velocity_limit
    assert s["datasheet_prior"]["kind"] == "box" and "STS3215" in s["datasheet_prior"]["source"]
    # an actuator without a row: its firmware from --firmware, its box around the --params reference
    mine = tmp_path / "mine.json"
    data = preset("mx64", "m1").to_bam_dict(with_firmware=False)
    mine.write_text(json.dumps({**data, "actuator": "myservo"}))
    out2 = tmp_path / "mine"
    assert main(["identify", str(logs), "--out", str(out2), "--params", str(mine), "--quiet"]) == 2
    assert not out2.exists()
    assert (
        main(
            [
                "identify",
                str(logs),
                "--out",
                str(out2),
                "--params",
                str(mine),
                "--firmware",
                "mx64",
                "--models",
                "m1",
                "--max-evals",
                "60",
                "--quiet",
            ]
        )
        == 0
    )
    assert "mine.json: actuator 'myservo' has no known firmware law; known laws:" in capsys.readouterr().err
    s = _strict_json(out2 / "summary.json")
    assert s["actuator"] == "myservo" and "reference" in s["bounds"] and s["firmware"]["source"] == "--firmware mx64"
    fitted = ActuatorParams.load_json(out2 / "m1.json")
    assert data["kt"] / 4 <= fitted.kt <= data["kt"] * 4 and math.isfinite(fitted.R)


def test_sts3215_identified_end_to_end_from_simulated_bench_logs(tmp_path):
    """`servo-ff record-sim --servo sts3215` then `servo-ff identify` (actuator read from the logs): bam's published
    STS3215 M1 file is recovered under the STS3215 firmware law, whose 3400 steps/s goal-speed limit binds in
    accelerated_oscillations. 16 logs (1 mrad noise, 4096 counts), 1500 evaluations; measured: kt −0.007 %,
    R +0.05 %, armature −0.03 %, friction_base +0.3 %, friction_viscous −0.1 %, q_offset +0.01 mrad, validation
    MAE 0.87 mrad (the noise floor). The bounds below are 10–20× those errors. Without the goal-speed limit the
    true parameters miss the same logs by 11.6 mrad mean MAE (×13; up to 0.29 rad in accelerated_oscillations),
    so the law's limit is part of what is identified against. Run without the datasheet prior and with the firmware
    row held: bam's published file lies outside the STS3215 datasheet box (its stall torque at 7.4 V is 3.35 N·m,
    1.75 × the datasheet's 1.91), and the error gain is only identifiable against kt and R under that prior."""
    from servo_ff.identification.simulation_fit import evaluate
    from servo_ff.io.logs import read_logs

    logs, out = tmp_path / "logs", tmp_path / "fit"
    grid = ["--masses", "0.3", "0.6", "--lengths", "0.15", "--kps", "8", "32", "--duration", "4"]
    noise = ["--noise", "0.001", "--quantize", "4096"]
    assert main(["record-sim", "--servo", "sts3215", "--model", "m1", "--out", str(logs), *grid, *noise]) == 0
    held = ["--no-datasheet-prior", "--no-fit-firmware"]
    assert (
        main(["identify", str(logs), "--out", str(out), "--models", "m1", "--max-evals", "1500", "--quiet", *held]) == 0
    )
    truth, got = preset("sts3215", "m1"), ActuatorParams.load_json(out / "m1.json")
    assert got.actuator == "sts3215" and got.firmware == FIRMWARE_LAWS["sts3215"]
    for key in ("kt", "R", "armature"):
        assert getattr(got, key) == pytest.approx(getattr(truth, key), rel=0.01), key
    for key in ("friction_base", "friction_viscous"):
        assert got.friction[key] == pytest.approx(truth.friction[key], rel=0.03), key
    assert got.q_offset == pytest.approx(truth.q_offset, abs=1e-3)
    s = _strict_json(out / "summary.json")
    assert s["models"]["m1"]["validation_mae"] < 1.2e-3  # rad; 1 mrad noise → MAE ≈ 0.8 mrad
    recorded = read_logs([logs])
    unlimited = truth.with_(firmware=truth.firmware.with_(goal_velocity_limit=math.inf))
    assert evaluate(unlimited, recorded) > 8 * evaluate(truth, recorded)


def test_fit_of_an_ilc_record_takes_the_pendulum_given(tmp_path, capsys):
    """Before: --mass/--length were ignored for an ILC record without a pendulum of its own (servo_ilc_node's),
    while the error told the user to give them. Now they give τ_o: the α̂ of the record with its pendulum."""
    from dataclasses import replace

    from servo_ff.io.ilc_record import load_ilc_record, save_ilc_record

    ilc = tmp_path / "ilc"
    assert main(["ilc", "--kp", "8", "--delay", "0.06", "--max-iterations", "4", "--out", str(ilc)]) == 0
    rec = load_ilc_record(ilc / "ilc.npz")
    mass, length, arm = (str(float(v)) for v in rec.pendulum)
    save_ilc_record(replace(rec, pendulum=None), tmp_path / "bare.npz")
    capsys.readouterr()
    assert main(["fit", str(tmp_path / "bare.npz"), "--out", str(tmp_path / "x"), "--mass", mass]) == 2
    assert "(--mass and --length)" in capsys.readouterr().err
    assert main(["fit", str(ilc / "ilc.npz"), "--out", str(tmp_path / "own")]) == 0
    flags = ["--mass", mass, "--length", length, "--arm-mass", arm]
    assert main(["fit", str(tmp_path / "bare.npz"), "--out", str(tmp_path / "given"), *flags]) == 0
    own, given = (yaml.safe_load((tmp_path / d / "alpha.yaml").read_text()) for d in ("own", "given"))
    assert given["joints"].keys() == own["joints"].keys() == {rec.joint}
    np.testing.assert_allclose(given["joints"][rec.joint]["alpha"], own["joints"][rec.joint]["alpha"], rtol=1e-9)
