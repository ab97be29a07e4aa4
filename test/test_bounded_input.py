"""Bounded input (issue 24): a 1 GB parameter file (sparse: it costs no disk) and a rosbag2 recording cut mid-chunk
each give one clear line naming the file, read in bounded memory (tracemalloc: the file is refused from its size,
never read whole), and exit code 2 without a traceback from the CLI."""

from __future__ import annotations

import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from servo_ff.io.servo_log import LogError, ServoLog
from servo_ff.models.errors import ParameterError
from servo_ff.models.params import load_params

SRC = str(Path(__file__).resolve().parents[1] / "src")
GB = 2**30


def peak_bytes(fn) -> tuple[int, BaseException | None]:
    """Peak Python allocation [bytes] while ``fn()`` runs, and what it raised."""
    tracemalloc.start()
    try:
        fn()
        raised = None
    except Exception as e:  # noqa: BLE001 (returned and checked by the caller)
        raised = e
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak, raised


def cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": SRC}
    return subprocess.run(
        [sys.executable, "-m", "servo_ff", *args], capture_output=True, text=True, env=env, timeout=300
    )


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_a_1gb_parameter_file_is_one_line_in_bounded_memory(tmp_path, suffix):
    big = tmp_path / f"params{suffix}"
    with open(big, "wb") as f:
        f.truncate(GB)
    peak, e = peak_bytes(lambda: load_params(big))
    assert isinstance(e, ParameterError), e
    assert str(big) in str(e) and "limit" in str(e) and "\n" not in str(e), str(e)
    assert peak < 2**20, f"{peak} bytes allocated to refuse it"  # not read: refused from its size
    r = cli("simulate", "--params", str(big), "--out", str(tmp_path / "out"))
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr[-2000:]
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and str(big) in lines[0] and "limit" in lines[0], r.stderr


def test_a_1gb_alpha_file_and_ilc_record_are_one_line_in_bounded_memory(tmp_path):
    from servo_ff.dynamics.alpha import AlphaError, load_alpha
    from servo_ff.io.ilc_record import ILCFileError, load_ilc_record

    for name, load, error in (
        ("alpha.yaml", lambda p: load_alpha(p, ("j",)), AlphaError),
        ("ilc.npz", load_ilc_record, ILCFileError),
    ):
        big = tmp_path / name
        with open(big, "wb") as f:
            f.truncate(GB)
        peak, e = peak_bytes(lambda big=big, load=load: load(big))
        assert isinstance(e, error) and str(big) in str(e) and "\n" not in str(e), e
        assert peak < 2**20, f"{name}: {peak} bytes allocated to refuse it"


def _log(n: int = 20000) -> ServoLog:
    t = np.arange(n) * 0.005
    return ServoLog(
        t=t,
        position=np.sin(t),
        speed=np.cos(t),
        goal_position=np.sin(t),
        torque_enable=np.ones_like(t),
        input_volts=np.full_like(t, 14.0),
        mass=0.5,
        arm_mass=0.1,
        length=0.15,
        kp=8.0,
        vin=15.0,
        motor="mx106",
        trajectory="sub_oscillations",
    )


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_a_bag_cut_mid_chunk_is_one_line_in_bounded_memory(tmp_path, storage):
    pytest.importorskip("rosbags")
    from servo_ff.io.rosbag import read_rosbag
    from servo_ff.io.rosbag_write import write_rosbag

    whole = tmp_path / "whole"
    write_rosbag(_log(), whole, storage=storage)
    data = next(p for p in whole.iterdir() if p.suffix in (".mcap", ".db3"))
    size = data.stat().st_size
    for frac in (0.3, 0.7, 0.99):
        cut = tmp_path / f"cut{int(frac * 100)}"
        cut.mkdir()
        for p in whole.iterdir():
            (cut / p.name).write_bytes(p.read_bytes()[: int(size * frac)] if p == data else p.read_bytes())
        peak, e = peak_bytes(lambda cut=cut: read_rosbag(cut, joint="joint"))
        assert isinstance(e, LogError), f"cut at {frac}: {e!r}"
        assert str(cut) in str(e) and "\n" not in str(e), str(e)
        assert peak < 4 * size + 2**22, f"cut at {frac}: {peak} bytes for a {size}-byte bag"
    r = cli("identify", str(cut), "--out", str(tmp_path / "out"))
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr[-2000:]
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and str(cut) in lines[0], r.stderr
