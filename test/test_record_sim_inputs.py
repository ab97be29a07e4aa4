"""``servo-ff record-sim`` / ``ilc``: a time step outside fit/identify's [1e-4, 1] s and a non-positive encoder
resolution are refused in one line before anything is simulated."""

import pytest

from servo_ff.cli import main


def _no_simulation(monkeypatch):
    import servo_ff.identification.synthetic as synthetic
    import servo_ff.workflows.ilc as workflow

    monkeypatch.setattr(synthetic, "simulate_logs", lambda *a, **k: pytest.fail("simulated a refused input"))
    monkeypatch.setattr(workflow, "run_ilc", lambda *a, **k: pytest.fail("learned with a refused input"))


@pytest.mark.parametrize("command", [["record-sim"], ["ilc", "--delay", "0.06"]])
@pytest.mark.parametrize("dt", ["1e-7", "2"])
def test_a_time_step_outside_the_fit_bounds_is_refused(tmp_path, monkeypatch, capsys, command, dt):
    """Before: --dt 1e-7 ran for minutes without a word (fit and identify bound dt with check_dt)."""
    _no_simulation(monkeypatch)
    assert main([*command, "--dt", dt, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--dt must be a period in [0.0001, 1] s" in err[0], err


def test_a_negative_encoder_resolution_is_refused(tmp_path, monkeypatch, capsys):
    """Before: --quantize -5 wrote logs quantized to 1.2566 rad steps, exit 0."""
    from servo_ff.identification.synthetic import quantize

    _no_simulation(monkeypatch)
    assert main(["record-sim", "--quantize", "-5", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--quantize must be encoder counts per revolution > 0" in err[0], err
    with pytest.raises(ValueError, match="counts_per_rev must be > 0"):
        quantize([0.1], -5)
