"""Run the benchmarks and write their tables into bench/README.md (what `./run bench` does).

    python bench/run_all.py                 # every bench/*.py
    python bench/run_all.py real_logs bus   # only these; the other sections of README.md are kept
    python bench/run_all.py --write         # none run: README.md written again from its recorded sections
    python bench/run_all.py --timeout 600 bus   # a bench still running after 600 s is stopped (default 7200 s)

Each bench prints a table and a last line ``RESULT key=value …``; README.md gets the command, the bench's own
description (its docstring's first paragraph), its whole output, and a summary of the RESULT lines. A bench whose
last non-empty line of output is not a RESULT line (a crash; its data path missing, exit code 2, said in one line)
replaces nothing: the section recorded before is kept, and the run says so. So does a bench stopped at its timeout
(it and every process it started; exit code 124, as coreutils' ``timeout``).
"""

from __future__ import annotations

import ast
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from _paths import NO_DATA

HERE = Path(__file__).resolve().parent
TIMED_OUT = 124  # the exit code of a bench stopped at its timeout (coreutils' ``timeout`` uses it too)
TIMEOUT_S = 7200.0  # the longest bench recorded so far took 2079 s (op3_obstacle_sweep at load ≈ 4)
README = HERE / "README.md"
HEAD = """# Benchmarks

Every figure servo_ff claims comes from a script in this folder. Each prints a table and a last line
`RESULT key=value …`; this page is written by `./run bench` (`python bench/run_all.py [name …]`) from their
output — edit the scripts, not this page. Tests assert accuracy and correctness, never wall time. A bench whose last
line is no RESULT line (a crash; its data path missing: one line, exit code 2; stopped at `--timeout`, default
7200 s, with every process it started: exit code 124) replaces nothing here: the section recorded before stays, and
the run says so.

**Speed figures are ratios first.** On the shared 2-core development machine an absolute time moves by 2× between
runs, so every speed bench also times the engine it sits on (MuJoCo, numba, pinocchio, the vendor SDK, a bare
rclpy pair) in the same run, alternately (A B A B …, medians), and puts the ratio in its RESULT line:

| ratio | bench | target |
|---|---|---|
RATIOS

Absolute times (µs, joint-steps/s, real-time factors) are *this machine's, at the load of that run*: compare them
only within one run.
"""

#: the ratio every speed bench reports (issue 25): key in its RESULT line → (target or None when none is set, True if
#: higher is better)
RATIOS: dict[str, tuple[float | None, bool]] = {
    "rtf_node_over_layer": (0.7, True),
    "fused_over_numpy_4096x20": (5.0, True),
    "fused_over_roofline": (0.5, True),
    "tick_over_pinocchio": (3.0, False),
    "cpu_over_sdk": (1.5, False),
    "latency_over_echo": (1.5, False),
    "callback_over_echo": (None, False),  # bench/nodes.py: the feed-forward tick over a bare rclpy echo callback
    "rtf_of_bound": (None, True),  # the OP3 missions' rtf over the bare lockstep loop's (bench/_lockstep_bound.py)
}


def ratio_rows(results: dict[str, str]) -> str:
    """One table row per (ratio, bench) found in the RESULT lines: value, target, met or not."""
    rows = []
    for key, (target, higher) in RATIOS.items():
        for bench, line in results.items():
            m = re.search(rf"(?:^| ){key}=([-+0-9.eE]+)", line)
            if m and target is None:
                rows.append(
                    f"| `{key}` = **{m.group(1)}** | `{bench}` | none set "
                    f"({'higher' if higher else 'lower'} is better) |"
                )
            elif m:
                ok = float(m.group(1)) >= target if higher else float(m.group(1)) <= target
                rows.append(
                    f"| `{key}` = **{m.group(1)}** | `{bench}` | {'≥' if higher else '≤'} {target:g} "
                    f"({'met' if ok else 'not met'}) |"
                )
    return "\n".join(rows) or "| (no ratio measured yet) | | |"


def benches() -> list[Path]:
    return sorted(p for p in HERE.glob("*.py") if p.name != Path(__file__).name and not p.name.startswith("_"))


def description(path: Path) -> str:
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    return doc.split("\n\n")[0].strip()


def load() -> str:
    """The machine's load average over 1, 5 and 15 min (as ``uptime`` says it)."""
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def last_line(text: str) -> str:
    """The last non-empty line of ``text``, stripped ('' when there is none)."""
    return next((line.strip() for line in reversed(text.splitlines()) if line.strip()), "")


def run(path: Path, timeout: float = TIMEOUT_S) -> tuple[str, float, int, str, str]:
    """The bench's output, its wall time [s], exit code, the load averages before → after it, and the last
    non-empty line of its stdout. A bench still running after ``timeout`` seconds is stopped with its process group
    (the nodes and workers it started) and gets exit code ``TIMED_OUT``, said in its output."""
    t0, before = time.perf_counter(), load()
    proc = subprocess.Popen(
        [sys.executable, str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=HERE.parent,
        start_new_session=True,
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
        code = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        stderr += f"\nstopped after its timeout of {timeout:g} s"
        code = TIMED_OUT
    except BaseException:  # Ctrl-C: the bench runs in its own session, so the terminal's SIGINT does not reach it
        os.killpg(proc.pid, signal.SIGKILL)
        raise
    err = stderr.strip()[-2000:] if code else ""
    out = stdout.strip() + (f"\n[stderr]\n{err}" if err else "")
    return out, time.perf_counter() - t0, code, f"{before} → {load()}", last_line(stdout)


def recorded_result(sec: str) -> str | None:
    """The ``key=value …`` of a recorded section's RESULT line: the last non-empty line of its output (before any
    stderr), or None when that is no RESULT line."""
    m = re.search(r"\n```\n(.*?)\n```", sec, flags=re.S)
    last = last_line(m.group(1).split("\n[stderr]\n")[0]) if m else ""
    return last.removeprefix("RESULT ") if last.startswith("RESULT ") else None


def section(path: Path, out: str, seconds: float, code: int, loads: str) -> str:
    status = "" if code == 0 else f" — **exit code {code}**"
    return (
        f"<!-- bench:{path.stem} -->\n## `python bench/{path.name}`{status}\n\n{description(path)}\n\n"
        f"```\n{out}\n```\n({seconds:.0f} s; machine load average 1 / 5 / 15 min {loads}, {os.cpu_count()} CPUs, "
        f"shared)\n<!-- /bench:{path.stem} -->"
    )


def main(argv: list[str]) -> int:
    timeout, names = TIMEOUT_S, list(argv)
    if "--timeout" in names:
        i = names.index("--timeout")
        try:
            timeout = float(names[i + 1])
        except (IndexError, ValueError):
            timeout = float("nan")
        if not timeout > 0:
            print("--timeout takes a number of seconds > 0, e.g. --timeout 600")
            return 2
        del names[i : i + 2]
    old = README.read_text() if README.exists() else ""
    sections = dict(re.findall(r"<!-- bench:(\w+) -->\n(.*?)<!-- /bench:\1 -->", old, flags=re.S))
    sections = {k: f"<!-- bench:{k} -->\n{v}<!-- /bench:{k} -->" for k, v in sections.items()}
    write_only = names == ["--write"]
    chosen = [] if write_only else [p for p in benches() if not names or p.stem in names]
    unknown = set() if write_only else set(names) - {p.stem for p in benches()}
    if unknown:
        print(f"unknown bench(es): {', '.join(sorted(unknown))}; known: {', '.join(p.stem for p in benches())}")
        return 2
    worst = 0
    for path in chosen:
        print(f"== bench/{path.name}", flush=True)
        out, seconds, code, loads, last = run(path, timeout)
        print(out, flush=True)
        if last.startswith("RESULT "):
            sections[path.stem] = section(path, out, seconds, code, loads)
            worst = max(worst, code)
            continue
        no_data = code == NO_DATA and last.startswith("data path missing")
        kept = "kept the section recorded before" if path.stem in sections else "no section recorded before: none"
        why = "its data path is missing" if no_data else f"exit code {code}, last line {last[-120:]!r}"
        why += f", stopped after its timeout of {timeout:g} s" if code == TIMED_OUT else ""
        print(f"bench/{path.name}: its last line is no RESULT line ({why}); {kept}", flush=True)
        worst = max(worst, 0 if no_data else code or 1)
    results, lines = [], {}
    for p in benches():
        res = recorded_result(sections.get(p.stem, ""))
        results.append(f"| `bench/{p.name}` | `{res if res is not None else '(not run yet)'}` |")
        if res is not None:
            lines[f"bench/{p.name}"] = res
    body = "\n\n".join(sections[p.stem] for p in benches() if p.stem in sections)
    head = HEAD.replace("RATIOS", ratio_rows(lines))
    README.write_text(f"{head}\n| bench | last line |\n|---|---|\n" + "\n".join(results) + f"\n\n{body}\n")
    print(f"wrote {README}")
    return worst


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
