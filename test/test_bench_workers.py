"""The obstacle benches' ``--workers`` refusal (bench/_cases.workers_refused): one line on stderr, exit 2, nothing
on stdout, before any run."""

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


@pytest.mark.parametrize(
    "bench", ["nimbro_obstacle.py", "nimbro_cpg_obstacle.py", "op3_obstacle_sweep.py", "op3_robotis_obstacle.py"]
)
@pytest.mark.parametrize("workers", [0, 3])
def test_workers_refused_in_one_line_on_stderr(bench, workers):
    proc = subprocess.run(
        [sys.executable, str(BENCH / bench), "--workers", str(workers)], capture_output=True, text=True, timeout=300
    )
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.splitlines() == [f"{bench}: error: --workers must be 1 … 2, got {workers}"]
