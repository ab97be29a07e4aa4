"""A Ctrl-C to a ``servo_ilc_node`` process during a run: the completed trials are written, marked interrupted, and
the process ends with one line and exit 130 (before: exit 0, nothing said, the completed iterations lost)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from nodes_harness import RosHarness, sim_node, wait_for

pytest.importorskip("rclpy")
pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX signals")

from servo_ff.io.ilc_record import load_ilc_record  # noqa: E402

SRC = str(Path(__file__).resolve().parents[1] / "src")


def test_ctrl_c_mid_run_writes_the_completed_trials_and_exits_130(tmp_path):
    h = RosHarness(salt=19)
    try:
        sim_node(
            h,
            joints=["pendulum_1"],
            rate_hz=100.0,
            servo="mx64",
            model="m4",
            **{"load.mass": [0.5], "load.length": [0.15]},
            kp=[8.0],
        )
        out = tmp_path / "ilc.npz"
        params = {
            "joints": "[pendulum_1]",
            "joint": "pendulum_1",
            "reference": "sub_oscillations",
            "reference_amplitude": "0.6",
            "reference_duration": "3.0",
            "settle_time": "0.3",
            "max_iterations": "5",
            "threshold": "0.0",
            "start_on_launch": "true",
            "output": str(out),
        }
        args = [a for k, v in params.items() for a in ("-p", f"{k}:={v}")]
        env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
        proc = subprocess.Popen(
            [sys.executable, "-m", "servo_ff.nodes.ilc_node", "--ros-args", "-r", f"__ns:={h.ns}", *args],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # a terminal's SIGINT (not a background
        )  # job's, ignored)
        lines: list[str] = []  # the node's log as it comes (a full pipe would stall it)
        reader = threading.Thread(target=lambda: [lines.append(line) for line in proc.stderr], daemon=True)
        reader.start()
        try:
            try:
                wait_for(
                    lambda: any("ILC iteration 0:" in x for x in lines) or proc.poll() is not None, 90.0, "trial 0"
                )
            except TimeoutError as e:
                raise AssertionError(f"{e}; the node said: {''.join(lines)[-2000:]!r}") from None
            assert proc.poll() is None, "".join(lines)
            proc.send_signal(signal.SIGINT)  # during trial 1 (3 s long, plus 0.3 s of settling)
            rc = proc.wait(timeout=90)
            reader.join(timeout=10)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        err = "".join(lines)
        said = [x for x in lines if x.startswith("servo_ilc_node: ILC interrupted on pendulum_1")]
        assert rc == 130 and len(said) == 1, err[-3000:]
        assert "Traceback" not in err, err
        rec = load_ilc_record(out)  # what servo-ff fit and the fit node read
        assert len(rec.commands) >= 1 and rec.stopped.startswith(f"iteration {len(rec.commands)}: ROS shut down")
        assert f"wrote {out}" in said[0], said
    finally:
        h.shutdown()
