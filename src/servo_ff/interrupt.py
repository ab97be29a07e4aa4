"""A Ctrl-C (SIGINT) while a process is still starting — importing numpy, rclpy, pinocchio — ends it at once with
exit code 130 and one line, not a KeyboardInterrupt traceback out of an import (numpy even turns it into an
ImportError): the CLI while it loads its commands, a node's process until its spin takes SIGINT over
(``ros.common.spin_node``). A terminal's Ctrl-C reaches every process of the group; ``servo-ff up`` and ros2 launch
forward one more. Once a node's spin has begun, its first SIGINT raises KeyboardInterrupt and any further one is
ignored, so that the shutdown (on_exit) runs to its end (:func:`interrupt_once`, :func:`ignore_further_interrupts`)."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator

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


#: [True] once the first SIGINT raised KeyboardInterrupt or the shutdown began: no SIGINT raises from then on
_SHUTTING_DOWN = [False]


def interrupt_once() -> Callable | None:
    """Before ``rclpy.init`` (which chains its own handler in front of this one): the first SIGINT raises
    KeyboardInterrupt and from then on SIGINT is ignored by the kernel (:func:`_set_sigint_ignored`). A second
    Ctrl-C anywhere in the shutdown (between the first one's ``except`` and the ``finally``, inside
    ``destroy_node``, during rclpy's handler swap at ``try_shutdown``) would otherwise escape as a
    KeyboardInterrupt (exit by SIGINT, on_exit not applied). Once the shutdown has begun
    (:func:`ignore_further_interrupts`) not even the first raises: its handler runs at the main thread's next
    bytecode, which can be inside that shutdown. The first one raises at once inside a callback of ours, a long one
    too (a bus connect attempt: rclpy's context shutdown alone would wait for it to return), but not inside rclpy's
    own code (:func:`inside_ros_machinery`: the context's shutdown ends the spin there). Raised inside rclpy's C++
    take of a message, pybind11 turned it into ``RuntimeError: Unable to convert call argument '0' to Python
    object``, which :func:`servo_ff.ros.common.spin_node` still takes for the interrupt it is. Returns the handler
    (None off the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    _SHUTTING_DOWN[0] = False

    def first_only(signum, frame) -> None:
        if not _SHUTTING_DOWN[0]:
            _SHUTTING_DOWN[0] = True
            _set_sigint_ignored()
            if not inside_ros_machinery(frame):
                raise KeyboardInterrupt

    signal.signal(signal.SIGINT, first_only)
    return first_only


def inside_ros_machinery(frame) -> bool:
    """The main thread was interrupted in rclpy's own code or a ROS interface class's (``frame``: where the SIGINT's
    handler runs). A KeyboardInterrupt raised there leaves a half-built object behind — an rclpy Task stopped
    inside ``Future.__init__`` reports "AttributeError: 'Task' object has no attribute '_exception'" from its
    finaliser at exit (CI of r3s24, the Ctrl-C storm test) — or comes out of pybind11 as a RuntimeError. None is
    raised there: rclpy's handler shuts the context down (from its own thread, just after it wakes the spin), and
    the spin, whose waits are bounded (``ros.common.SHUTDOWN_POLL``), ends on that."""
    name = frame.f_globals.get("__name__", "") if frame is not None else ""
    return name.split(".")[0] == "rclpy" or any(f".{kind}._" in name for kind in ("msg", "srv", "action"))


def ignore_further_interrupts() -> None:
    """A terminal's Ctrl-C reaches every process of the group and ``servo-ff up`` forwards one more: a second
    SIGINT must not interrupt the clean shutdown (a traceback out of ``destroy_node``), nor a first one whose
    handler had not run yet (rclpy's handler shuts the context down first: the spin may end on that, CI
    2026-11-27)."""
    if threading.current_thread() is threading.main_thread():  # (a spin in another thread leaves SIGINT alone)
        _SHUTTING_DOWN[0] = True  # before signal.signal: a SIGINT taken, not yet handled, runs its handler in there
        _set_sigint_ignored()


def shutting_down() -> bool:
    """True once the first SIGINT raised KeyboardInterrupt or the shutdown began (:func:`interrupt_once`)."""
    return _SHUTTING_DOWN[0]


def _set_sigint_ignored() -> None:
    """SIGINT ignored by the kernel from now on: ``SIG_IGN``, which, unlike a Python handler, outlives the
    interpreter's finalisation (a Ctrl-C repeated during the exit must not kill the process, on_exit not applied).
    A SIGINT that arrives while ``signal.signal`` swaps the handler is taken by the old handler's C part and
    checked at the next bytecode, which finds ``SIG_IGN`` and reports CPython's "OSError: Signal 2 ignored due to
    race condition" with a traceback on stderr (CI of r3s22, 2026-11-28). That report says that the SIGINT was
    ignored, as asked: it is dropped (:func:`_drop_ignored_sigint_report`); every other one is reported as before."""
    if sys.unraisablehook is not _drop_ignored_sigint_report:
        _HOOK_BEFORE[0] = sys.unraisablehook
        sys.unraisablehook = _drop_ignored_sigint_report
    signal.signal(signal.SIGINT, signal.SIG_IGN)


#: the unraisable hook found before :func:`_drop_ignored_sigint_report` was put in front of it
_HOOK_BEFORE = [sys.__unraisablehook__]


#: set while :func:`_drop_ignored_sigint_report` passes a report on
_PASSING_ON = threading.local()


def _drop_ignored_sigint_report(unraisable) -> None:
    """``sys.unraisablehook``: CPython's report of a SIGINT ignored (:func:`_set_sigint_ignored`) is dropped; any
    other goes to the hook found before, once (a hook put in between that calls ours again gets Python's own, not
    a loop: review of 13c9023)."""
    exc = unraisable.exc_value
    if isinstance(exc, OSError) and str(exc) == f"Signal {int(signal.SIGINT)} ignored due to race condition":
        return
    if getattr(_PASSING_ON, "now", False):
        sys.__unraisablehook__(unraisable)
        return
    _PASSING_ON.now = True
    try:
        _HOOK_BEFORE[0](unraisable)
    finally:
        _PASSING_ON.now = False


def node_executable() -> str | None:
    """The node this process was started as — ``python -m servo_ff.nodes.<x>_node`` (``servo-ff up``'s children)
    or an executable ``servo_<x>_node`` (ros2 launch's) — or None."""
    argv = getattr(sys, "orig_argv", sys.argv)
    if "-m" in argv[:-1]:
        module = argv[argv.index("-m") + 1]
        return module.rsplit(".", 1)[-1] if module.startswith("servo_ff.nodes.") else None
    name = os.path.basename(sys.argv[0]) if sys.argv else ""
    return name if name.startswith("servo_") and name.endswith("_node") else None
