"""tools/knee_energy_split.py (issue 21): its split of the knees' E = ∫U·I dt adds up, and its E is the servo layer's
own meter over the same whole steps."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from servo_ff.models.firmware import FIRMWARE_LAWS

TOOL = Path(__file__).resolve().parents[1] / "tools" / "knee_energy_split.py"


@cache
def tool():
    spec = importlib.util.spec_from_file_location("knee_energy_split", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_split_adds_up_and_its_energy_is_the_servo_layers_meter():
    """(c) on the OP3 under the XM430's PWM law, 2 whole steps: per knee E = I²R + mech+ + mech− and the phases' E add
    to E (the winding model leaves no rest), and both knees' E equals ``step_energy`` (``MujocoServos.energy``,
    metered in the kernel) over the same physics steps."""
    pytest.importorskip("placo")
    from servo_ff.bringup.op3_energy import step_end

    t = tool()
    rec, plan, run, knees, params = t.recorded_walk("ff", 2, 0.05, "op3", "xm430_position", "plan")
    assert not run.fell
    window = step_end(2, params)
    figs = [t.knee_figures(rec, plan, params, k, j, window, "plan") for k, j in enumerate(knees)]
    for f in figs:
        assert f["E"] > 1.0
        assert f["I2R"] + f["mech+"] + f["mech-"] == pytest.approx(f["E"], rel=1e-9)
        assert sum(f[f"{p}_E"] for p in t.PHASES) == pytest.approx(f["E"], rel=1e-9)
        assert f["mech-"] <= 0.0 <= f["mech+"]
    # step_energy's row 2 ends at step_end itself (on the 8 ms grid here), not one control period later
    meter = sum(run.step_energy[2][run.joints.index(j)] for j in knees)
    assert sum(f["E"] for f in figs) == pytest.approx(meter, rel=1e-9)
    assert np.isfinite(rec["tau_ff"]).all() and rec["tau_ff"].shape[1] == 2  # (c)'s inverse dynamics, every tick


@pytest.mark.parametrize(
    "args, line",
    [
        (["--drop", "a4,a9"], "--drop: unknown column 'a9'; one of a0, a1, a23, a4"),
        (["--controllers", "high,fff"], "--controllers: unknown controller 'fff'; one of high, low, ff"),
        (["--firmware", "xm431"], f"--firmware: unknown firmware row 'xm431'; valid rows: {', '.join(FIRMWARE_LAWS)}"),
        (["--vx", "nan"], "--vx: must be a finite speed [m/s], got nan"),
    ],
)
def test_a_bad_option_is_one_line_and_exit_2(args, line):
    """An unknown α̂ column, controller or firmware row, or a non-finite speed: one line naming the option (exit 2),
    before any walk (the controller, row and speed were simulate_walk's traceback after the first walk's setup)."""
    proc = subprocess.run([sys.executable, str(TOOL), *args], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [f"knee_energy_split.py: {line}"]
    assert proc.stdout == ""
