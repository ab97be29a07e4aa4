"""A Ctrl-C (SIGINT) while a process is still starting — importing numpy, rclpy, pinocchio — ends it at once with
exit code 130 and one line, not a KeyboardInterrupt traceback out of an import (numpy even turns it into an
ImportError): the CLI while it loads its commands, a node's process until its spin takes SIGINT over
(``ros.common.spin_node``). A terminal's Ctrl-C reaches every process of the group; ``servo-ff up`` and ros2 launch
forward one more."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator

EXIT_INTERRUPTED = 128 + signal.SIGINT  # 130, a shell's code for a process ended by SIGINT


def _handler(name: str):
    def stop(signum: int, frame: object) -> None:
        os.write(2, f"{name}: interrupted while starting\n".encode())
        os._exit(EXIT_INTERRUPTED)

    return stop


def _ours_to_set() -> bool:
    """In the main thread, and SIGINT not ignored (a background job started by a shell ignores it: left so)."""
    main = threading.current_thread() is threading.main_thread()
    return main and signal.getsignal(signal.SIGINT) is not signal.SIG_IGN


def quiet_start(name: str) -> None:
    """From now on (in the main thread), SIGINT ends the process with one line naming ``name`` and exit 130."""
    if _ours_to_set():
        signal.signal(signal.SIGINT, _handler(name))


@contextlib.contextmanager
def quiet_interrupt(name: str) -> Iterator[None]:
    """:func:`quiet_start` within the block; the handler found is put back after it."""
    if not _ours_to_set():
        yield
        return
    old = signal.signal(signal.SIGINT, _handler(name))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


def node_executable() -> str | None:
    """The node this process was started as — ``python -m servo_ff.nodes.<x>_node`` (``servo-ff up``'s children)
    or an executable ``servo_<x>_node`` (ros2 launch's) — or None."""
    argv = getattr(sys, "orig_argv", sys.argv)
    if "-m" in argv[:-1]:
        module = argv[argv.index("-m") + 1]
        return module.rsplit(".", 1)[-1] if module.startswith("servo_ff.nodes.") else None
    name = os.path.basename(sys.argv[0]) if sys.argv else ""
    return name if name.startswith("servo_") and name.endswith("_node") else None
