"""The on-line walk in a child process (servo_ff.dynamics.walk_worker): the samples it computes ahead are the
engine's own (ticked in an interpreter of its own, as the worker is: placo state left by earlier walks in a process
changes a walk), across re-plans and the stale-command rule; the child ends with close()."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("placo")

from servo_ff.dynamics.walk_pattern import WalkFrames, WalkParams  # noqa: E402
from servo_ff.dynamics.walk_worker import WalkWorker  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
URDF = ROOT / "urdf" / "op3.urdf"
DT = WalkParams().dt

_REFERENCE = """
import io, sys
import numpy as np
from servo_ff.dynamics.walk_pattern import WalkEngine
e = WalkEngine(sys.argv[1])
e.set_cmd(0.1, 0.0, 0.0)
e.start()
rows = [e.tick() for _ in range(120)]
e.set_cmd(0.0, 0.0, 0.0)  # the stale-command rule: cmd_vel older than cmd_timeout
rows += [e.tick() for _ in range(60)]
np.save(buf := io.BytesIO(), np.array([np.r_[s.q, s.c_left] for s in rows]))
sys.stdout.buffer.write(buf.getvalue())  # (np.save on a buffered pipe: 'obtaining file position failed')
"""


def _reference() -> np.ndarray:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    out = subprocess.run([sys.executable, "-c", _REFERENCE, str(URDF)], env=env, capture_output=True, check=True)
    return np.load(io.BytesIO(out.stdout))


def test_worker_samples_are_the_engines_across_replans_and_a_stale_command():
    ref = _reference()  # 1.8 s: three re-plans (a step: 0.48 s)
    worker = WalkWorker(URDF, WalkParams(), WalkFrames())
    try:
        worker.start((0.1, 0.0, 0.0))
        t = [k * DT for k in range(180)]
        worker.request(t[:50], (0.1, 0.0, 0.0), 0.0, 10.0)  # asked ahead, in pieces, as the walk node does
        worker.request(t[50:120], (0.1, 0.0, 0.0), 0.0, 10.0)
        q1, c1 = worker.take(120)
        assert not worker.expired
        worker.request(t[120:], (0.1, 0.0, 0.0), t[120] - 0.5, 0.5 - DT / 2)  # older than cmd_timeout: zero
        q2, c2 = worker.take(60)
        assert worker.expired
        got = np.column_stack([np.array(q1 + q2), c1 + c2])
        assert got.shape == ref.shape == (180, len(worker.joints()) + 1)
        np.testing.assert_array_equal(got, ref)
        with pytest.raises(RuntimeError, match="1 samples taken, 0 requested"):
            worker.take(1)
    finally:
        worker.close()
    assert worker._proc.poll() is not None


def test_worker_outlives_a_ctrl_c_and_ends_with_its_parents_socket():
    """A terminal's Ctrl-C reaches the whole process group: the child ignores SIGINT (no traceback; the walk node
    ends it), and it exits quietly when the parent's end of the socket closes."""
    import signal

    worker = WalkWorker(URDF, WalkParams(), WalkFrames())
    try:
        worker.joints()  # the engine is up
        worker._proc.send_signal(signal.SIGINT)
        worker.start((0.1, 0.0, 0.0))
        worker.request([0.0, DT], (0.1, 0.0, 0.0), 0.0, 10.0)
        q, _ = worker.take(2)  # still serving
        assert len(q) == 2 and worker._proc.poll() is None
    finally:
        worker._conn.close()  # as when the parent dies: no "stop" message
    assert worker._proc.wait(timeout=30) == 0


def test_a_dead_worker_is_one_clear_error():
    import signal

    worker = WalkWorker(URDF, WalkParams(), WalkFrames())
    try:
        worker.joints()
        worker._proc.send_signal(signal.SIGKILL)
        worker._proc.wait(timeout=30)
        with pytest.raises(RuntimeError, match=r"walk worker \(pid \d+\) ended \(exit code -9"):
            worker.start((0.1, 0.0, 0.0))
            worker.request([0.0], (0.1, 0.0, 0.0), None, 1.0)
            worker.take(1)
    finally:
        worker.close()


_HALT_REFERENCE = """
import io, sys
import numpy as np
from servo_ff.dynamics.walk_pattern import WalkEngine
e = WalkEngine(sys.argv[1])
e.set_cmd(0.1, 0.0, 0.0)
e.start()
rows, halted = [], []
for n, halt in ((150, False), (200, True), (150, False), (200, True)):  # walk, halt, walk again, the stale rule's halt
    e.set_halt(halt)
    for _ in range(n):
        s = e.tick()
        rows.append(np.r_[s.q, s.c_left])
        halted.append(e.halted)
np.save(buf := io.BytesIO(), np.column_stack([np.array(rows), halted]))
sys.stdout.buffer.write(buf.getvalue())  # (np.save on a buffered pipe: 'obtaining file position failed')
"""


def test_worker_carries_the_halt_request_and_on_timeout_halt_as_the_engine_in_process():
    """Through a halt requested by message, a restart and a halt from the stale-command rule (on_timeout "halt"):
    the worker's samples and halted flags are those of the engine ticked in an interpreter of its own."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    run = subprocess.run([sys.executable, "-c", _HALT_REFERENCE, str(URDF)], env=env, capture_output=True, check=True)
    ref = np.load(io.BytesIO(run.stdout))
    assert ref[349, -1] and not ref[350:500, -1].any() and ref[-1, -1]  # halted, walked again, halted
    worker = WalkWorker(URDF, WalkParams(), WalkFrames())
    try:
        cmd = (0.1, 0.0, 0.0)
        worker.start(cmd)
        t = [k * DT for k in range(700)]
        worker.request(t[:150], cmd, 0.0, 10.0)
        worker.request(t[150:350], cmd, 0.0, 10.0, halt=True)
        got, flags = [], []
        for _ in range(350):
            q, c = worker.take(1)
            got.append(np.r_[q[0], c[0]])
            flags.append(worker.halted)
        assert worker.halted and not worker.expired
        worker.request(t[350:500], cmd, t[350], 10.0, on_timeout="halt")  # fresh: walks again
        worker.request(t[500:], cmd, t[350], (t[500] - t[350]) - DT / 2, on_timeout="halt")  # stale from t[500]
        for _ in range(350):
            q, c = worker.take(1)
            got.append(np.r_[q[0], c[0]])
            flags.append(worker.halted)
        assert worker.expired
        np.testing.assert_array_equal(np.column_stack([np.array(got), flags]), ref)
        with pytest.raises(ValueError, match="on_timeout 'stop' is not one of step_in_place, halt"):
            worker.request(t[:1], cmd, None, 1.0, on_timeout="stop")  # refused before it reaches the worker
    finally:
        worker.close()
