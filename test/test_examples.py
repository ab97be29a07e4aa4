"""Every script under examples/ runs (short mode: ``SERVO_FF_EXAMPLE_SHORT=1``), exits 0 and prints its figure."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run_example(name: str, *args: str) -> str:
    env = dict(os.environ, SERVO_FF_EXAMPLE_SHORT="1", MPLBACKEND="Agg")
    env["PYTHONPATH"] = str(ROOT / "src") + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / name), *args], capture_output=True, text=True, env=env, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def figure(pattern: str, out: str) -> float:
    m = re.search(pattern, out)
    assert m, (pattern, out)
    return float(m.group(1))


def test_every_example_is_short_and_tested():
    names = sorted(p.name for p in (ROOT / "examples").glob("*.py"))
    assert names == ["feedforward_arm.py", "identify_m1.py", "simulate_preset.py", "virtual_dynamixel_bus.py"]
    for n in names:
        assert len((ROOT / "examples" / n).read_text().splitlines()) <= 60, n


def test_simulate_preset_tracks_and_plots(tmp_path):
    out = run_example("simulate_preset.py", "--plot", str(tmp_path / "t.png"))
    assert 0.0 < figure(r"tracking MAE ([\d.]+) rad", out) < 0.3
    assert (tmp_path / "t.png").stat().st_size > 0


def test_identify_m1_fits_the_simulated_logs():
    out = run_example("identify_m1.py")
    assert figure(r"(\d+) logs of", out) == 8
    assert 0.0 < figure(r"train MAE ([\d.]+) mrad", out) < 50.0
    kt, truth = (float(x) for x in re.search(r"kt\s+([\d.e-]+)\s+([\d.e-]+)", out).groups())
    assert kt == pytest.approx(truth, rel=0.5)


def test_feedforward_arm_leads_the_desired_angle():
    out = run_example("feedforward_arm.py")
    assert figure(r"(\d+) cycles", out) == 100
    assert figure(r"shoulder: max \|τ\| ([\d.]+) N·m", out) > 0.1
    assert 0.0 < figure(r"elbow: .*max \|goal − desired\| ([\d.]+) rad", out) < 1.0


def test_virtual_dynamixel_bus_reaches_the_goal():
    pytest.importorskip("dynamixel_sdk")
    out = run_example("virtual_dynamixel_bus.py", "--goal", "2600")
    assert out.count("Communication success") == 2
    pos = {int(k): int(v) for k, v in re.findall(r"(\d+): (\d+)", out.splitlines()[-1].split("s:")[-1])}
    assert pos.keys() == {1, 2} and all(abs(p - 2600) <= 20 for p in pos.values()), out
