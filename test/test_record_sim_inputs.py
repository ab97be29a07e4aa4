"""``servo-ff record-sim`` / ``ilc`` / ``simulate``: a time step outside fit/identify's [1e-4, 1] s and a
non-positive encoder resolution are refused in one line before anything is simulated."""

import pytest

from servo_ff.cli import main


def _no_simulation(monkeypatch):
    import servo_ff.cli.simulate as simulate
    import servo_ff.identification.synthetic as synthetic
    import servo_ff.workflows.ilc as workflow

    monkeypatch.setattr(synthetic, "simulate_logs", lambda *a, **k: pytest.fail("simulated a refused input"))
    monkeypatch.setattr(workflow, "run_ilc", lambda *a, **k: pytest.fail("learned with a refused input"))
    monkeypatch.setattr(simulate, "simulate_bench", lambda *a, **k: pytest.fail("simulated a refused input"))


@pytest.mark.parametrize("command", [["record-sim"], ["ilc", "--delay", "0.06"], ["simulate"]])
@pytest.mark.parametrize("dt", ["1e-7", "2"])
def test_a_time_step_outside_the_fit_bounds_is_refused(tmp_path, monkeypatch, capsys, command, dt):
    """Before: --dt 1e-7 ran for minutes without a word (fit and identify bound dt with check_dt); simulate --dt 2
    wrote a 213 rad tracking error, exit 0."""
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


def test_record_sim_default_gains_of_an_xl330_are_logs_identify_takes(tmp_path, capsys):
    """record-sim's default gains are Table I's fractions 1/8…1 of the servo's default kp: an XL330 (kp 400) gets
    50…400 and every log moves. Before: the MX's 4…32 for every servo, and identify refused the XL330's
    kp 4 log ('no motion (measured position range 0.00364 rad < 0.01 rad)', exit 2)."""
    logs, out = tmp_path / "logs", tmp_path / "id"
    argv = ["record-sim", "--servo", "xl330", "--out", str(logs), "--masses", "0.5", "--lengths", "0.1"]
    assert main([*argv, "--duration", "2", "--trajectories", "sub_oscillations"]) == 0
    said = capsys.readouterr().out
    run = ["identify", str(logs), "--out", str(out), "--models", "m1", "--starts", "1", "--max-evals", "9"]
    code = main([*run, "--validation", "0", "--quiet"])
    err = capsys.readouterr().err
    assert code == 0 and (out / "m1.json").is_file(), err
    assert "(kp 50 100 200 400)" in said, said


def _options(*path: str) -> dict[str, str | None]:
    """{flag: help} of the sub-command ``path`` (e.g. "tf", "prbs")."""
    from servo_ff.cli import build_parser

    parser = build_parser()
    for name in path:
        parser = next(a for a in parser._actions if a.dest in ("command", "tf_command") or a.choices).choices[name]
    return {a.option_strings[-1]: a.help for a in parser._actions if a.option_strings and a.dest != "help"}


@pytest.mark.parametrize("path", [("record-sim",), ("ilc",), ("simulate",), ("tf", "prbs"), ("tf", "torque")])
def test_every_flag_says_what_it_is_and_a_time_its_unit(path):
    """Before: ilc --dt/--servo/--model/--max-iterations, record-sim --seed, tf prbs --out/--samples/--nbits/--seed and
    tf torque --dt had no help; record-sim --duration's was "[s]"."""
    opts = _options(*path)
    assert all(opts.values()), [k for k, v in opts.items() if not v]
    for flag in ("--dt", "--duration"):
        if flag in opts:
            assert "[s]" in opts[flag] and len(opts[flag]) > 3, (flag, opts[flag])


@pytest.mark.parametrize("command", [["record-sim"], ["ilc", "--delay", "0.06"], ["simulate"]])
@pytest.mark.parametrize("flag", [["--servo", "mx64"], ["--model", "m2"]])
def test_a_preset_flag_beside_params_is_refused(tmp_path, monkeypatch, capsys, command, flag):
    """--params gives the actuator: a --servo/--model beside it is refused in one line before simulating. Before:
    accepted and ignored, nothing said (the file's actuator simulated, exit 0)."""
    from servo_ff.models.presets import preset

    _no_simulation(monkeypatch)
    params = tmp_path / "xl330.json"
    preset("xl330", "m1").save_json(params)
    assert main([*command, "--params", str(params), *flag, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{' '.join(flag)}: not used with --params {params}" in err[0], err


def test_simulate_refuses_kp_given_twice(tmp_path, monkeypatch, capsys):
    """--kp 8 with --firmware kp=16: refused in one line. Before: --kp won, nothing said (title kp=8, exit 0)."""
    _no_simulation(monkeypatch)
    assert main(["simulate", "--kp", "8", "--firmware", "kp=16", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--kp 8 and --firmware kp=16: give the gain once" in err[0], err


def test_a_preset_without_m4_runs_its_best_model_when_none_is_given(tmp_path, capsys):
    """record-sim --servo sts3215 (its preset has m1 only), no --model: m1, said in one line. Before: exit 2, "no
    published sts3215 parameter file for model m4; valid: m1" (the default model m4 of every servo)."""
    grid = ["--masses", "0.5", "--lengths", "0.1", "--kps", "32", "--trajectories", "sub_oscillations"]
    assert main(["record-sim", "--servo", "sts3215", *grid, "--duration", "1", "--out", str(tmp_path / "o")]) == 0
    out, err = capsys.readouterr()
    assert err.strip() == "--model not given and preset sts3215 has no m4: m1, the best it has (m1)", err
    assert "logs of sts3215/m1" in out, out
