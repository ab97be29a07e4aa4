"""identify holds the armature at the training logs' free-swing estimate (identification/swing_armature.py), on
simulated XL330 bench logs written as bam JSON files and fitted through the CLI."""

import json

import pytest

from servo_ff.cli import main
from servo_ff.identification.search_space import SEARCH_BOUNDS, Bound
from servo_ff.identification.simulation_fit import split_logs
from servo_ff.identification.swing_armature import swing_armature
from servo_ff.identification.synthetic import bench_grid, simulate_logs
from servo_ff.io.bam_logs import write_bam_json
from servo_ff.models.params import ActuatorParams
from servo_ff.models.presets import preset

TRUTH = 0.0025  # [kg·m²] the simulated servo's armature (the XL330 preset has another)
FIT = ["--models", "m1", "--max-evals", "60", "--starts", "1", "--quiet"]


def _logs(trajectories, kps=(100, 400)):
    """Simulated M1 XL330 logs (encoder-quantised, as test_ident_free_swing's), one per trajectory × kp."""
    truth = preset("xl330", "m1").with_(armature=TRUTH)
    grid = bench_grid(masses=(0.49,), lengths=(0.1,), kps=kps, trajectories=trajectories)
    return simulate_logs(truth, grid, substeps=10, counts_per_rev=4096, vin=7.4)


def _write(logs, folder):
    folder.mkdir()
    for i, lg in enumerate(logs):
        write_bam_json(lg, folder / f"log{i}_{lg.trajectory}_kp{lg.kp:g}.json")
    return folder


def _identify(folder, out, *flags):
    return main(["identify", str(folder), "--out", str(out), *FIT, *flags])


def test_identify_holds_the_armature_of_the_training_drops(tmp_path, capsys):
    """Two lift_and_drop logs among the training logs: the armature is held at their swing estimate, within the
    estimator's 1e-4 kg·m² of the truth under M1, written in m1.json as a fitted one, and summary.json says so."""
    folder = _write(_logs(("lift_and_drop", "raise_and_lower")), tmp_path / "logs")
    out = tmp_path / "fit"
    assert _identify(folder, out, "--validation", "0") == 0
    assert "armature: held at 0.002" in capsys.readouterr().out
    s = json.loads((out / "summary.json").read_text())
    held = s["armature_from_swing"]
    assert held["held"] is True and held["armature"] == pytest.approx(TRUTH, abs=1e-4)
    assert sorted(p.rsplit("/", 1)[-1] for p in held["logs"]) == [
        "log0_lift_and_drop_kp100.json",
        "log1_lift_and_drop_kp400.json",
    ]
    assert len(held["half_swings"]) >= 6 and held["min_amplitude"] == 0.1
    assert s["models"]["m1"]["params"]["armature"] == held["armature"]
    assert ActuatorParams.load_json(out / "m1.json").armature == held["armature"]
    assert "armature" not in s["models"]["m1"]["log_space_keys"]  # held, not searched


def test_a_drop_only_in_validation_is_never_read_and_nothing_changes(tmp_path):
    """No training log swings (the only drop is the validation log): summary.json says why, and the fit is the
    same, parameter for parameter, as with --no-swing-armature."""
    logs = _logs(("raise_and_lower", "sub_oscillations")) + _logs(("lift_and_drop",), kps=(100,))
    seed = next(s for s in range(100) if split_logs(logs, 0.25, s)[1][0].trajectory == "lift_and_drop")
    folder = _write(logs, tmp_path / "logs")
    on, off = tmp_path / "on", tmp_path / "off"
    assert _identify(folder, on, "--seed", str(seed)) == 0
    assert _identify(folder, off, "--seed", str(seed), "--no-swing-armature") == 0
    s_on, s_off = (json.loads((d / "summary.json").read_text()) for d in (on, off))
    assert [p.rsplit("/", 1)[-1] for p in s_on["split"]["validation"]] == ["log4_lift_and_drop_kp100.json"]
    assert s_on["armature_from_swing"] == {
        "held": False,
        "reason": "no torque-off half-swing of >= 0.1 rad in the training logs",
    }
    assert s_off["armature_from_swing"] == {"held": False, "reason": "--no-swing-armature"}
    for key in ("train_mae", "validation_mae", "params", "evaluations", "log_space_keys"):
        assert s_on["models"]["m1"][key] == s_off["models"]["m1"][key]
    assert "armature" in s_on["models"]["m1"]["log_space_keys"]  # searched
    assert (on / "m1.json").read_text() == (off / "m1.json").read_text()


def test_a_log_whose_swing_gives_a_non_positive_armature_is_refused(tmp_path, capsys):
    """A drop log written with twice its pendulum length: m·g·l·(Δt/2K)² − m·l² < 0. Exit 2, one line naming the
    file, nothing written; --no-swing-armature does not read the swing."""
    logs = _logs(("lift_and_drop", "raise_and_lower"))
    logs[0] = logs[0].with_(length=2 * logs[0].length)
    folder = _write(logs, tmp_path / "logs")
    assert _identify(folder, tmp_path / "fit", "--validation", "0") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "log0_lift_and_drop_kp100.json" in err[0] and "not finite and positive" in err[0]
    assert "--no-swing-armature" in err[0] and not (tmp_path / "fit").exists()
    hold = swing_armature(logs, SEARCH_BOUNDS["xl330"].armature, enabled=False)
    assert hold.armature is None and hold.fixed == {}


def test_an_estimate_outside_the_search_box_is_refused_not_clamped():
    """The same drops against a box that excludes their estimate: a ValueError naming the logs and the box."""
    logs = _logs(("lift_and_drop",))
    assert swing_armature(logs, Bound(1e-4, 0.05)).armature == pytest.approx(TRUTH, abs=1e-4)
    with pytest.raises(
        ValueError,
        match=r"^sim:xl330/m1/lift_and_drop_m0.49_l0.1_kp100, sim:xl330/m1/lift_and_drop_m0.49_l0.1_kp400: "
        r".* outside the armature's search box \[0.003, 0.05\]",
    ):
        swing_armature(logs, Bound(0.003, 0.05))
