"""A Ctrl-C while a process starts (servo_ff/interrupt.py): a node's process or the CLI loading its commands ends
with exit 130 and one line, no KeyboardInterrupt traceback out of an import (before: `servo-ff up sim` stopped in its
first seconds printed three tracebacks, one of them numpy's ImportError, and exited 1); later, SIGINT is the
caller's again; the CLI says a Ctrl-C during a command in one line, exit 130."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[1] / "src")


def _run(code: str) -> subprocess.CompletedProcess:
    """``code`` in a child whose SIGINT acts as a terminal's (a shell's background job starts with it ignored)."""
    env = {**os.environ, "PYTHONPATH": SRC}
    code = f"import signal; signal.signal(signal.SIGINT, signal.default_int_handler)\n{code}"
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.skipif(not hasattr(signal, "SIGINT") or os.name != "posix", reason="POSIX signals")
def test_a_node_process_interrupted_while_it_imports_ends_with_one_line():
    # as ros2 launch starts it: an executable servo_<x>_node; the SIGINT lands while the process imports
    code = (
        "import sys; sys.argv[0] = '/opt/lib/servo_ff/servo_sim_node'\n"
        "import servo_ff.nodes, os, signal, time\n"
        "os.kill(os.getpid(), signal.SIGINT); time.sleep(10); print('not stopped')"
    )
    r = _run(code)
    assert r.returncode == 130 and r.stderr == "servo_sim_node: interrupted while starting\n", r
    assert "not stopped" not in r.stdout


@pytest.mark.skipif(os.name != "posix", reason="POSIX signals")
def test_outside_a_node_process_and_after_the_block_sigint_is_the_callers():
    code = (
        "import servo_ff.nodes, os, signal, time\n"  # (this process is no node: nothing changed)
        "from servo_ff.interrupt import quiet_interrupt\n"
        "try:\n"
        "    os.kill(os.getpid(), signal.SIGINT); time.sleep(10)\n"
        "except KeyboardInterrupt:\n"
        "    print('caller 1', flush=True)\n"
        "with quiet_interrupt('x'):\n"
        "    pass\n"
        "try:\n"
        "    os.kill(os.getpid(), signal.SIGINT); time.sleep(10)\n"
        "except KeyboardInterrupt:\n"
        "    print('caller 2', flush=True)\n"
        "with quiet_interrupt('servo-ff'):\n"
        "    os.kill(os.getpid(), signal.SIGINT); time.sleep(10)\n"
        "print('not stopped')"
    )
    r = _run(code)
    assert r.stdout.split() == ["caller", "1", "caller", "2"] and r.returncode == 130, r
    assert r.stderr == "servo-ff: interrupted while starting\n", r


def test_node_executable_names_the_node_started():
    from servo_ff.interrupt import node_executable

    def started_as(orig: list[str], argv0: str) -> str:
        code = (
            f"import sys; sys.orig_argv[:] = {orig!r}; sys.argv[0] = {argv0!r}\n"
            "from servo_ff.interrupt import node_executable; print(node_executable())"
        )
        return _run(code).stdout.strip()

    assert started_as(["python", "-m", "servo_ff.nodes.sim_node", "--ros-args"], "-m") == "sim_node"  # servo-ff up
    assert started_as(["python", "/ws/lib/servo_ff/servo_walk_node"], "/ws/lib/servo_ff/servo_walk_node") == (
        "servo_walk_node"  # ros2 launch
    )
    assert started_as(["python", "-m", "servo_ff", "up", "sim"], "-m") == "None"  # the CLI: its own handling
    assert started_as(["python", "bench/op3_mission.py"], "bench/op3_mission.py") == "None"
    code = "import signal; signal.signal(signal.SIGINT, signal.SIG_IGN)\nimport servo_ff.interrupt as i\n"
    code += "i.quiet_start('x'); print(signal.getsignal(signal.SIGINT) is signal.SIG_IGN)"
    assert _run(code).stdout.strip() == "True"  # ignored (a background job): left ignored
    assert node_executable() is None  # pytest


def test_the_cli_says_a_ctrl_c_during_a_command_in_one_line(monkeypatch, capsys):
    import servo_ff.cli as cli

    def interrupted(args: argparse.Namespace) -> int:
        raise KeyboardInterrupt

    real = cli.build_parser

    def parser() -> argparse.ArgumentParser:  # the command's function interrupted, as by a Ctrl-C in it
        p = real()
        parse = p.parse_args
        monkeypatch.setattr(
            p, "parse_args", lambda argv: argparse.Namespace(**{**vars(parse(argv)), "func": interrupted})
        )
        return p

    monkeypatch.setattr(cli, "build_parser", parser)
    assert cli.main(["up", "sim"]) == 130
    assert capsys.readouterr().err == "servo-ff up: interrupted\n"


def test_the_shutdown_hook_passes_other_unraisable_reports_on_once():
    """Once a shutdown has begun, CPython's "Signal 2 ignored due to race condition" report is dropped by an
    unraisable hook (ros.common.spin_node's two calls of ignore_further_interrupts); every other report reaches the
    hook found before, once, also when a hook that calls its predecessor was put in between two calls (before: ours
    → it → ours … a RecursionError and 2000 lines, the report itself lost)."""
    code = """
import sys
from servo_ff import interrupt
interrupt.ignore_further_interrupts()
before = sys.unraisablehook
def chaining(u):
    print("chained", type(u.exc_value).__name__)
    before(u)
sys.unraisablehook = chaining
interrupt.ignore_further_interrupts()
class Bad:
    def __del__(self):
        raise ValueError("a real unraisable report")
Bad()
ignored = OSError("Signal 2 ignored due to race condition")
sys.unraisablehook(type("U", (), {"exc_value": ignored, "exc_type": OSError})())
"""
    r = _run(code)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split("\n").count("chained ValueError") == 1, r.stdout[-500:]
    assert r.stderr.count("a real unraisable report") == 1 and "Recursion" not in r.stderr, r.stderr[-2000:]
    assert "race condition" not in r.stderr and "chained OSError" not in r.stdout
