"""tools/op3_stiff_p.py ``--vin``: the walk runs the row's law at that supply, built for the run (the shared
FIRMWARE_LAWS table left as it was: no ``row@VV`` rows added for the rest of the process)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

from servo_ff.models.firmware import FIRMWARE_LAWS

ROOT = Path(__file__).resolve().parents[1]


def _tool():
    spec = importlib.util.spec_from_file_location("op3_stiff_p", ROOT / "tools" / "op3_stiff_p.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_vin_runs_the_row_at_that_supply_without_adding_rows():
    tool = _tool()
    table = dict(FIRMWARE_LAWS)
    own = tool.instrumented("high", 1, "xm430", 1)
    same = tool.instrumented("high", 1, "xm430", 1, vin=FIRMWARE_LAWS["xm430"].vin)  # the row's own 12 V
    higher = tool.instrumented("high", 1, "xm430", 1, vin=14.0)
    assert FIRMWARE_LAWS == table  # no "xm430@14V" row left behind
    assert np.array_equal(same["tau_all"], own["tau_all"])  # the supply is the only change
    assert not np.allclose(higher["tau_all"], own["tau_all"])  # and it reaches the servos
