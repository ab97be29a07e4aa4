"""An ILC record's ``t`` must step by its ``dt``: a record whose ``dt`` is not its samples' spacing (or whose ``t``
does not increase) is refused in one line naming the file and the key; the grids the writers make are read."""

from __future__ import annotations

import numpy as np
import pytest

from servo_ff.cli import main
from servo_ff.io.ilc_record import ILCFileError, ILCRecord, load_ilc_record, save_ilc_record
from servo_ff.trajectories import time_grid


def _record(t: np.ndarray, dt: float, k: int = 2) -> ILCRecord:
    n = len(t)
    q = 0.5 * np.sin(2.0 * t)
    return ILCRecord(
        joint="pendulum_1",
        t=t,
        reference_q=q,
        reference_dq=np.cos(2.0 * t),
        reference_ddq=np.zeros(n),
        commands=np.tile(q, (k, 1)),
        measured=np.tile(q, (k, 1)),
        errors=np.linspace(0.1, 0.05, k),
        supply=np.full(k, 15.0),
        kp=8.0,
        dt=dt,
        delay=0.01,
        converged_iteration=-1,
        pendulum=np.array([0.5, 0.15, 0.0]),
    )


@pytest.mark.parametrize("dt", [0.005, 1 / 300, 0.002, 0.01])
def test_the_writers_grids_are_read(tmp_path, dt):
    """``servo-ff ilc`` and the ILC node write t = k·dt (``time_grid``; the node's dt = 1/rate_hz)."""
    path = save_ilc_record(_record(time_grid(12.0, dt), dt), tmp_path / "rec.npz")
    assert load_ilc_record(path).dt == dt


def test_a_dt_that_is_not_the_spacing_of_t_is_refused_naming_file_and_keys(tmp_path, capsys):
    """Before: dt 0.01 with t stepping 0.005 was read, q̇ and t_d taken twice too slow: α̂1 16.65 for 9.45, exit 0."""
    path = save_ilc_record(_record(time_grid(6.0, 0.005), 0.01), tmp_path / "rec.npz")
    with pytest.raises(ILCFileError, match=r"rec.npz: key t steps by 0.005 s at sample 1, but key dt is 0.01 s"):
        load_ilc_record(path)
    assert main(["fit", str(path), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "rec.npz" in err and "key dt" in err, err


@pytest.mark.parametrize("i", [1, 10])
def test_a_t_that_does_not_increase_is_refused(tmp_path, i):
    """Before: a repeated time was read as if the samples were dt apart."""
    t = time_grid(6.0, 0.005)
    t[i] = t[i - 1]
    path = save_ilc_record(_record(t, 0.005), tmp_path / "rec.npz")
    with pytest.raises(ILCFileError, match=rf"rec.npz: key t is not strictly increasing at sample {i} "):
        load_ilc_record(path)


def test_a_t_with_a_hole_is_refused(tmp_path):
    t = time_grid(6.0, 0.005)
    t[500:] += 0.3  # 0.3 s missing: the record's samples are not the grid its dt says
    path = save_ilc_record(_record(t, 0.005), tmp_path / "rec.npz")
    with pytest.raises(ILCFileError, match=r"key t steps by 0.305 s at sample 500, but key dt is 0.005 s"):
        load_ilc_record(path)


def test_a_stopped_run_is_marked_in_its_record(tmp_path):
    """A run stopped early (a learned command beyond the joint limits, divergence, Ctrl-C) says why in the record;
    a record written before the key existed reads as a run that ended normally."""
    from dataclasses import replace

    dt = 0.01
    rec = replace(_record(time_grid(1.0, dt), dt), stopped="the command learned for iteration 1 leaves the limits")
    assert load_ilc_record(save_ilc_record(rec, tmp_path / "stopped.npz")).stopped == rec.stopped
    old = {k: np.asarray(v) for k, v in rec.__dict__.items() if k != "stopped"}
    np.savez(tmp_path / "old.npz", **old)
    assert load_ilc_record(tmp_path / "old.npz").stopped == ""
    np.savez(tmp_path / "bad.npz", **old, stopped=np.zeros(2))
    with pytest.raises(ILCFileError, match="bad.npz: stopped must be one text"):
        load_ilc_record(tmp_path / "bad.npz")
