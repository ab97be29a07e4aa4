"""``servo-ff tf`` command line: real files in, tables out, clear errors."""

import sys
from pathlib import Path

import numpy as np
import pytest

from servo_ff.cli import main
from servo_ff.identification.tf_fit import simulate_ct


def _write_steps_csv(path, noise=0.002):
    u = np.zeros(2000)
    for k, lev in enumerate([0, 0.15, 0, 0.3, 0, 0.15, 0, 0.3, 0, 0.15]):
        u[k * 200 : (k + 1) * 200] = lev
    y = simulate_ct([1.409e4], [1, 37.46, 1150, 1.399e4], u, 0.004)
    y = y + noise * np.random.default_rng(0).standard_normal(u.size)
    np.savetxt(path, np.c_[np.arange(u.size) * 0.004, u, y], delimiter=",", header="t,u,y", comments="")


def test_tf_srivc_auto_selects_dp(tmp_path, capsys):
    f = tmp_path / "servo.csv"
    _write_steps_csv(f)
    assert main(["tf", "srivc", "--csv", str(f), "--structure", "auto", "--ls"]) == 0
    out = capsys.readouterr().out
    assert "selected embedded controller: D-P" in out and "LS (equation error)" in out


def test_tf_mx28_prints_poles_and_writes_plots(tmp_path, capsys):
    assert main(["tf", "mx28", "--inductance", "2.03e-4", "--plot", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "-161.2" in out and "closed-loop DC gain: 1.000000" in out
    # every figure with its unit (before: Ki, Kd and the Bode table's ω and phase had none)
    assert "Ki=0 V/(rad·s) Kd=0 V·s/rad" in out, out
    assert "ω [rad/s]  mag [dB] phase [deg]" in out, out
    assert (tmp_path / "tf_mx28_steps.png").stat().st_size > 1000


@pytest.mark.parametrize("dt", ["0", "-0.001", "nan"])
def test_tf_refuses_a_step_that_is_not_positive(capsys, dt):
    """Before: a ZeroDivisionError (0), an IndexError in python-control (< 0) or a message about the duration."""
    assert main(["tf", "mx28", "--dt", dt]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "dt must be finite and > 0" in err, err


def test_tf_prbs_then_errors(tmp_path, capsys):
    f = tmp_path / "prbs.csv"
    assert main(["tf", "prbs", "--out", str(f), "--samples", "300", "--dt", "0.01"]) == 0
    data = np.genfromtxt(f, delimiter=",", names=True)
    assert data.size == 300 and set(np.unique(np.round(np.abs(data["u"]), 9))) == {round(np.radians(10), 9)}
    # the PRBS file has no output column: named in the error, exit code 2
    assert main(["tf", "srivc", "--csv", str(f), "--n", "2", "--m", "0"]) == 2
    assert "missing column 'y'" in capsys.readouterr().err
    assert main(["tf", "srivc", "--csv", str(tmp_path / "nope.csv"), "--n", "2", "--m", "0"]) == 2
    assert "no such CSV file" in capsys.readouterr().err
    short = tmp_path / "short.csv"
    np.savetxt(
        short,
        np.c_[np.arange(20) * 0.01, np.sign(np.sin(np.arange(20))), np.arange(20.0)],
        delimiter=",",
        header="t,u,y",
        comments="",
    )
    assert main(["tf", "srivc", "--csv", str(short), "--n", "2", "--m", "0"]) == 2
    assert "too short" in capsys.readouterr().err


@pytest.mark.parametrize("fault", ["a directory --out", "interrupted while writing"])
def test_tf_prbs_leaves_no_temporary_file(tmp_path, capsys, monkeypatch, fault):
    """`tf prbs` writes its CSV atomically: a refused --out (a directory) or a Ctrl-C while it writes leaves nothing
    beside it. Before: ``<out>.tmp`` stayed (and the refusal read "[Errno 21] Is a directory: 'out.tmp' -> 'out'")."""
    out = tmp_path / "out"
    if fault == "a directory --out":
        out.mkdir()
        code, words = 2, f"--out {out}: is a directory"
    else:
        out = tmp_path / "prbs.csv"

        def cut(path, *a, **k):
            Path(path).write_text("t,u\n0,")
            raise KeyboardInterrupt

        monkeypatch.setattr(np, "savetxt", cut)
        code, words = 130, "interrupted"
    assert main(["tf", "prbs", "--out", str(out), "--samples", "300", "--dt", "0.01"]) == code
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0], err
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == (["out"] if fault == "a directory --out" else []), left


@pytest.mark.parametrize("error", ["KeyboardInterrupt", "ImportError('no such thing')"])
def test_lazy_import_lets_what_the_module_raises_propagate(tmp_path, monkeypatch, error):
    """Before: importlib's LazyLoader marked the module loaded before executing it; a Ctrl-C (or ImportError)
    raised while it executed was lost and every later access gave ``AttributeError: module ... has no attribute``
    (``tf`` interrupted while starting: 4 of 5 runs). Now it propagates as itself and a later access imports again."""
    from servo_ff.cli import lazy_import

    name = f"lazy_probe_{abs(hash(error))}"
    flag = tmp_path / "raise"
    flag.touch()
    (tmp_path / f"{name}.py").write_text(
        f"import pathlib\nif pathlib.Path({str(flag)!r}).exists():\n    raise {error}\nVALUE = 7\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, name, raising=False)
    mod = lazy_import(name)
    with pytest.raises(KeyboardInterrupt if error == "KeyboardInterrupt" else ImportError):
        _ = mod.VALUE
    flag.unlink()
    assert mod.VALUE == 7
    sys.modules.pop(name, None)
