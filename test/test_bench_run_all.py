"""bench/run_all.py records a bench only when the last non-empty line of its output is a RESULT line: a crash, a
RESULT line followed by more output, or a data bench without its data (one line, exit code 2) keeps the section
recorded before, and the run says so; the summary table quotes each section's last line."""

import shutil
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench"

OLD = "before\nRESULT kept=1"


def recorded(name: str) -> str:
    return (
        f"<!-- bench:{name} -->\n## `python bench/{name}.py`\n\nOld.\n\n```\n{OLD}\n```\n(1 s)\n<!-- /bench:{name} -->"
    )


def test_a_bench_without_a_result_last_line_keeps_its_recorded_section(tmp_path):
    bench = tmp_path / "bench"
    bench.mkdir()
    for f in ("run_all.py", "_paths.py", "thermal_xl330.py"):  # thermal_xl330: its data lies beside the project
        shutil.copy(BENCH / f, bench / f)
    (tmp_path / "src").symlink_to(BENCH.parent / "src")
    (bench / "crash.py").write_text('"""Crashes."""\nprint("table")\nraise SystemExit(3)\n')
    (bench / "trailing.py").write_text('"""A RESULT line, then more."""\nprint("RESULT first=1")\nprint("more")\n')
    (bench / "twice.py").write_text('"""Two RESULT lines."""\nprint("RESULT a=1")\nprint("RESULT a=2")\nprint()\n')
    names = ("crash", "trailing", "thermal_xl330", "twice")
    (bench / "README.md").write_text("# Benchmarks\n\n" + "\n\n".join(recorded(n) for n in names) + "\n")

    alone = subprocess.run([sys.executable, str(bench / "thermal_xl330.py")], capture_output=True, text=True)
    assert alone.returncode == 2 and len(alone.stdout.splitlines()) == 1
    assert alone.stdout.startswith(f"data path missing: {tmp_path.parent / 'shared'}")

    run = subprocess.run([sys.executable, str(bench / "run_all.py"), *names], capture_output=True, text=True)
    readme = (bench / "README.md").read_text()
    for name in ("crash", "trailing", "thermal_xl330"):
        assert recorded(name) in readme, name
        assert f"bench/{name}.py: its last line is no RESULT line" in run.stdout, name
    assert "(its data path is missing); kept the section recorded before" in run.stdout
    assert "(exit code 3, last line 'table'); kept the section recorded before" in run.stdout
    assert run.returncode == 3  # the crash; the missing data alone is no failure
    assert "| `bench/twice.py` | `a=2` |" in readme and "| `bench/crash.py` | `kept=1` |" in readme
    assert recorded("twice") not in readme


def _gone(pid: int) -> bool:
    """True once ``pid`` has exited (absent, or a zombie waiting for its reaper)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z")
    except (FileNotFoundError, IndexError):
        return True


def test_a_bench_past_its_timeout_is_stopped_with_its_children_and_keeps_its_section(tmp_path):
    bench = tmp_path / "bench"
    bench.mkdir()
    for f in ("run_all.py", "_paths.py"):
        shutil.copy(BENCH / f, bench / f)
    pid_file = tmp_path / "child.pid"
    (bench / "hangs.py").write_text(
        '"""Starts a worker and never ends."""\n'
        "import subprocess, sys, time\n"
        f"child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        "print('table so far', flush=True)\n"
        "time.sleep(600)\n"
    )
    (bench / "README.md").write_text("# Benchmarks\n\n" + recorded("hangs") + "\n")

    run = subprocess.run(
        [sys.executable, str(bench / "run_all.py"), "--timeout", "3", "hangs"], capture_output=True, text=True
    )
    assert run.returncode == 124, run.stdout + run.stderr
    assert "table so far" in run.stdout
    assert "(exit code 124, last line 'table so far', stopped after its timeout of 3 s)" in run.stdout
    assert recorded("hangs") in (bench / "README.md").read_text()
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 10.0
    while not _gone(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(child), "the bench's worker outlived its timeout"


def test_a_timeout_that_is_no_positive_number_is_one_line_and_exit_2(tmp_path):
    bench = tmp_path / "bench"  # a copy with one bench that would say it ran: none must run
    bench.mkdir()
    for f in ("run_all.py", "_paths.py"):
        shutil.copy(BENCH / f, bench / f)
    (bench / "ran.py").write_text('"""Runs."""\nprint("RESULT ran=1")\n')
    said = "--timeout takes a number of seconds > 0, e.g. --timeout 600"
    for bad in (["--timeout"], ["--timeout", "0"], ["--timeout", "soon"], ["--timeout", "nan"]):
        run = subprocess.run([sys.executable, str(bench / "run_all.py"), *bad], capture_output=True, text=True)
        assert (run.returncode, run.stdout.strip(), run.stderr) == (2, said, ""), bad
    assert not (bench / "README.md").exists()
