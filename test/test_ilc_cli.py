"""``servo-ff ilc``: the --params file's kp, --out checked first, Ctrl-C keeps the trials, the divergence stop."""

import numpy as np
import pytest

from servo_ff.cli import main
from servo_ff.io.ilc_record import load_ilc_record
from servo_ff.models.presets import preset

FAST = ["--delay", "0.06", "--dt", "0.01"]


def test_the_params_files_kp_is_used_unless_kp_is_given(tmp_path):
    """Before: --kp's default 4 replaced the file's kp (an xl330 file's 400 ran at 4)."""
    path = tmp_path / "xl330.json"
    preset("xl330", "m1").save_json(path)
    assert main(["ilc", "--params", str(path), *FAST, "--max-iterations", "0", "--out", str(tmp_path / "a")]) in (0, 1)
    assert load_ilc_record(tmp_path / "a" / "ilc.npz").kp == pytest.approx(400.0)
    args = ["ilc", "--params", str(path), "--kp", "16", *FAST, "--max-iterations", "0", "--out", str(tmp_path / "b")]
    assert main(args) in (0, 1)
    assert load_ilc_record(tmp_path / "b" / "ilc.npz").kp == pytest.approx(16.0)


def test_an_unwritable_out_is_refused_before_learning(tmp_path, monkeypatch, capsys):
    """Before: ``--out /dev/null`` failed after every iteration had run."""
    import servo_ff.workflows.ilc as workflow

    monkeypatch.setattr(workflow, "run_ilc", lambda *a, **k: pytest.fail("learned before checking --out"))
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["ilc", *FAST, "--out", str(blocker)]) == 2
    assert f"--out {blocker}: exists and is not a directory" in capsys.readouterr().err


def test_ctrl_c_keeps_the_trials_done_and_exits_130(tmp_path, monkeypatch):
    """Before: a Ctrl-C threw every trial away (exit 130, no ilc.npz)."""
    import servo_ff.workflows.ilc as workflow

    real = workflow.simulated_servo

    def interrupting(*a, **k):
        run, calls = real(*a, **k), []

        def execute(u):
            calls.append(1)
            if len(calls) == 3:
                raise KeyboardInterrupt
            return run(u)

        return execute

    monkeypatch.setattr(workflow, "simulated_servo", interrupting)
    out = tmp_path / "ilc"
    assert main(["ilc", *FAST, "--max-iterations", "10", "--threshold", "0", "--out", str(out)]) == 130
    rec = load_ilc_record(out / "ilc.npz")
    assert len(rec.errors) == 2 and "interrupted" in rec.stopped


def test_a_diverging_run_stops_by_default_as_the_node_does(tmp_path):
    """Before: no divergence stop by default (gain 6: the error grew to 2.8 rad and on), as servo_ilc_node has."""
    out = tmp_path / "ilc"
    assert main(["ilc", "--gain", "6", *FAST, "--max-iterations", "30", "--out", str(out)]) == 1
    rec = load_ilc_record(out / "ilc.npz")
    assert rec.stopped.startswith("diverged") and len(rec.errors) < 10
    assert np.all(np.isfinite(rec.errors))
