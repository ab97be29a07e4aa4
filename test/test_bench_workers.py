"""The obstacle benches' ``--workers`` refusal (bench/_cases.workers_refused): one line on stderr, exit 2, nothing
on stdout, before any run; an unknown gait name refused."""

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


@pytest.mark.parametrize(
    "bench",
    [
        "nimbro_obstacle.py",
        "nimbro_cpg_obstacle.py",
        "op3_obstacle_sweep.py",
        "op3_robotis_obstacle.py",
        "op3_cpg_obstacle.py",
    ],
)
@pytest.mark.parametrize("workers", [0, 3])
def test_workers_refused_in_one_line_on_stderr(bench, workers):
    proc = subprocess.run(
        [sys.executable, str(BENCH / bench), "--workers", str(workers)], capture_output=True, text=True, timeout=300
    )
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.splitlines() == [f"{bench}: error: --workers must be 1 … 2, got {workers}"]


def test_an_unknown_gait_is_refused_naming_it(monkeypatch):
    """The obstacle benches' ``gait`` argument: a name they do not know is a ValueError naming it, not another gait
    run silently (placo for anything but "cpg", ROBOTIS's walk or the CPG for anything but "placo")."""
    monkeypatch.syspath_prepend(str(BENCH))
    import nimbro_obstacle
    import op3_obstacle_sweep

    with pytest.raises(ValueError, match="gait must be 'placo' or 'cpg', got 'robotis'"):
        nimbro_obstacle.walk("high", 1, 0.05, nimbro_obstacle.KP_HIGH, gait="robotis")
    with pytest.raises(ValueError, match="gait must be 'placo', 'robotis' or 'cpg', got 'nimbro'"):
        op3_obstacle_sweep.robotis_ready(0.05, 1, "nimbro")


def test_nimbro_dds_obstacle_only_matching_no_cell_is_refused():
    """bench/nimbro_dds_obstacle.py --only with a pattern no cell matches: one line on stderr naming it, exit 2,
    before any node or plan (was a ZeroDivisionError traceback after printing the empty tables)."""
    proc = subprocess.run(
        [sys.executable, str(BENCH / "nimbro_dds_obstacle.py"), "--only", "stairs:15"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.splitlines() == [
        "nimbro_dds_obstacle.py: error: --only 'stairs:15' matches none of the 45 cells ('shape:h:vx', e.g. "
        "'board:15:0.025')"
    ]


@pytest.mark.parametrize("args", [["--steps", "0"], ["--vx", "-0.05"], ["--vx", "nan"]])
def test_op3_cpg_distance_bad_steps_or_speed_refused(args):
    """bench/op3_cpg_distance.py: no step or a speed the forward-only CPG cannot walk (it stepped in place and
    printed a RESULT for --vx -1; --steps 0 was a traceback): one line on stderr, exit 2, before any node starts."""
    proc = subprocess.run(
        [sys.executable, str(BENCH / "op3_cpg_distance.py"), *args], capture_output=True, text=True, timeout=300
    )
    assert (proc.returncode, proc.stdout) == (2, "")
    [line] = proc.stderr.splitlines()
    assert line.startswith("op3_cpg_distance.py: error: --steps must be >= 1 and --vx a finite speed > 0 m/s")
