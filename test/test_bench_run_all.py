"""bench/run_all.py records a bench only when the last non-empty line of its output is a RESULT line: a crash, a
RESULT line followed by more output, or a data bench without its data (one line, exit code 2) keeps the section
recorded before, and the run says so; the summary table quotes each section's last line."""

import shutil
import subprocess
import sys
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
