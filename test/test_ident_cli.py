"""CLI fronts: record-sim → identify, ilc → fit, and clear errors on bad input."""
import json

import pytest

from servo_ff.cli import main


def test_record_sim_then_identify(tmp_path, capsys):
    logs = tmp_path / "logs"
    assert main(["record-sim", "--servo", "mx64", "--model", "m1", "--out", str(logs), "--masses", "1",
                 "--lengths", "0.15", "--kps", "8", "32", "--duration", "3", "--format", "sqlite3",
                 "--quantize", "4096"]) == 0
    assert len(list(logs.iterdir())) == 8
    out = tmp_path / "fit"
    assert main(["identify", str(logs), "--out", str(out), "--models", "m1", "--max-evals", "200", "--quiet"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["m1"]["validation_mae"] > 0 and (out / "m1.yaml").exists() and (out / "validation_mae.png").exists()
    assert "m1" in capsys.readouterr().out


def test_ilc_then_fit(tmp_path):
    ilc = tmp_path / "ilc"
    assert main(["ilc", "--kp", "8", "--delay", "0.06", "--max-iterations", "8", "--out", str(ilc)]) == 0
    assert (ilc / "ilc.png").exists()
    out = tmp_path / "alpha"
    assert main(["fit", str(ilc / "ilc.npz"), "--out", str(out)]) == 0
    alpha = json.loads((out / "alpha.json").read_text())["alpha"]
    assert len(alpha) == 4 and min(alpha) >= 0 and (out / "residuals.png").exists()


def test_cli_errors_name_the_problem(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"mass": 1, "length": 0.1, "kp": 8, "vin": 12, "entries": [
        {"timestamp": 0.0, "position": 0.0, "goal_position": 0.0},
        {"timestamp": 0.0, "position": 0.1, "goal_position": 0.0}]}))
    assert main(["identify", str(bad), "--out", str(tmp_path / "o"), "--quiet", "--actuator", "mx64"]) == 2
    assert "not strictly increasing at sample 1" in capsys.readouterr().err
    assert main(["record-sim", "--servo", "mx999", "--out", str(tmp_path / "x")]) == 2
    assert "unknown servo preset" in capsys.readouterr().err
