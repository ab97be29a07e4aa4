"""`servo-ff virtual-bus` command line: what it refuses before serving (a duration that is no time, fault ids not on
the bus: one line, exit 2) and a Ctrl-C (exit 130 after the stats, the CLI's rule, as `servo-ff up` does)."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import servo_ff
from servo_ff.bus.virtual_bus import VirtualBus
from servo_ff.cli import main
from servo_ff.ros.harness import wait_for

SRC = str(Path(servo_ff.__file__).resolve().parents[1])  # the tree under test, for the children too


@pytest.fixture
def never_served(monkeypatch):
    """A command line that should be refused must not reach the serve loop (before: it served for ever)."""

    def served(self) -> None:
        pytest.fail("the bus was served")

    monkeypatch.setattr(VirtualBus, "serve_forever", served)


@pytest.mark.parametrize("duration", ["0", "-1", "nan", "inf"])
def test_a_duration_that_is_no_time_is_refused_in_one_line(duration, capsys, never_served):
    """Before: --duration 0 served for ever (0 is false: no timer), -1 stopped at once, exit 0."""
    assert main(["virtual-bus", "--duration", duration]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--duration {duration}: expected a number of seconds > 0" in err, err


@pytest.mark.parametrize(
    "flags,said",
    [
        (["--silent", "9@0", "--silent", "2@1", "--silent", "7@0+1"], "--silent given for ids [7, 9]"),
        (["--overload", "5@1"], "--overload given for ids [5]"),
        (["--brownout", "4@0.5", "--brownout", "1@1"], "--brownout given for ids [4]"),
    ],
)
def test_fault_ids_that_are_not_on_the_bus_are_refused_naming_them(flags, said, capsys, never_served):
    """Before: `--ids 1-3 --silent 9@0` served with no servo silent, unsaid (the schedule skips unknown ids)."""
    assert main(["virtual-bus", "--ids", "1-3", *flags]) == 2
    err = capsys.readouterr().err
    assert err == f"servo-ff virtual-bus: error: {said} that are not in --ids 1-3\n", err


def _start(cmd: list[str], env: dict[str, str]) -> subprocess.Popen:
    """``cmd`` in a child whose SIGINT is a terminal's (a shell's background job starts with it ignored)."""
    return subprocess.Popen(
        cmd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def _lines_until(proc: subprocess.Popen, done, timeout: float, stream: str = "stdout") -> list[str]:
    """Lines of ``proc``'s ``stream`` read until ``done(lines)`` (polled, deadline ``timeout`` [s])."""
    lines: list[str] = []
    out = getattr(proc, stream)
    deadline = time.monotonic() + timeout
    while not done(lines):
        left = deadline - time.monotonic()
        assert left > 0 and proc.poll() is None, (lines[-20:], proc.poll())
        if select.select([out], [], [], min(left, 0.2))[0]:
            lines.append(out.readline())
    return lines


@pytest.mark.skipif(os.name != "posix", reason="POSIX signals and ptys")
@pytest.mark.parametrize("entry", [["servo_ff", "virtual-bus"], ["servo_ff.cli.virtual_bus"]])
def test_a_ctrl_c_of_the_virtual_bus_exits_130_after_its_stats(entry):
    """Before: exit 0 from both entry points, as if it had served its --duration."""
    from dynamixel_sdk import COMM_SUCCESS, PacketHandler, PortHandler

    proc = _start([sys.executable, "-m", *entry, "--ids", "1-2"], {**os.environ, "PYTHONPATH": SRC})
    try:
        lines = _lines_until(proc, lambda ls: any(ln.startswith("DEVICE ") for ln in ls), 30.0)
        port = PortHandler(lines[-1].split()[1])
        assert port.openPort()
        ph = PacketHandler(2.0)
        wait_for(lambda: ph.ping(port, 2)[1] == COMM_SUCCESS, 20.0, "a reply: the bus serves")
        port.closePort()
        os.kill(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    stats = json.loads(next(ln for ln in err.splitlines() if ln.startswith("{")))
    assert stats["instructions"]["PING"] >= 1 and stats["internal_errors"] == 0
    assert err.endswith("servo-ff virtual-bus: interrupted\n") and "Traceback" not in err, err


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX signals")
def test_a_ctrl_c_of_up_sim_stops_its_nodes_and_exits_130():
    """Before: `servo-ff up sim` stopped by Ctrl-C exited 0 (its nodes up: each has logged); SIGTERM still stops it
    with 0."""
    pytest.importorskip("rclpy")
    from servo_ff.bringup import plan, python_env
    from servo_ff.ros.harness import domain_id

    env = {**python_env(), "ROS_DOMAIN_ID": str(domain_id(21))}  # (python_env: this source tree first)
    n_nodes = len(plan("sim"))
    ns = f"t21a_{os.getpid()}"
    up = [sys.executable, "-m", "servo_ff", "up", "sim", "--arg", f"namespace:={ns}"]
    for sig, code in ((signal.SIGINT, 130), (signal.SIGTERM, 0)):
        proc = _start(up, env)
        try:
            _lines_until(proc, lambda ls: sum(ln.startswith("[up] starting") for ln in ls) == n_nodes, 60.0)
            if sig == signal.SIGINT:  # every node past its start-up: each has logged under its name

                def all_logged(lines: list[str]) -> bool:
                    return all(any(f"[{ns}.{node.name}]" in ln for ln in lines) for node in plan("sim"))

                _lines_until(proc, all_logged, 180.0, "stderr")
            os.kill(proc.pid, sig)  # to up alone: it stops its nodes
            _, err = proc.communicate(timeout=60)
        finally:
            proc.kill()
        assert proc.returncode == code, (sig, err[-2000:])
        if sig == signal.SIGINT:
            assert err.endswith("servo-ff up: interrupted\n") and "Traceback" not in err, err[-2000:]
