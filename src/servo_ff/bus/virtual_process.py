"""The virtual bus in another process: ``servo-ff virtual-bus ARGS`` (run as ``python -m servo_ff.cli.virtual_bus``),
its pty path read from the ``DEVICE …`` line it prints first."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Sequence

_DEVICE_RE = re.compile(r"^DEVICE (\S+)")


class VirtualBusProcess:
    """``servo-ff virtual-bus ARGS`` (run as ``python -m servo_ff.cli.virtual_bus``) in a subprocess;
    ``.device`` is the pty path it printed."""

    def __init__(self, args: Sequence[str] = (), python: str | None = None, timeout: float = 20.0):
        env = dict(os.environ)
        src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        self.proc = subprocess.Popen(
            [python or sys.executable, "-m", "servo_ff.cli.virtual_bus", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        deadline = time.monotonic() + timeout
        self.device = None
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            m = _DEVICE_RE.match(line)
            if m:
                self.device = m.group(1)
                break
        if self.device is None:
            self.proc.kill()
            err = self.proc.stderr.read()
            raise RuntimeError(f"virtual-bus did not report a device: {err.strip()[-800:]}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self) -> VirtualBusProcess:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def spawn_virtual_bus(args: Sequence[str] = (), **kw) -> VirtualBusProcess:
    """Start ``servo-ff virtual-bus`` with CLI ``args`` in a subprocess; use as a context manager."""
    return VirtualBusProcess(args, **kw)
