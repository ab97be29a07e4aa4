"""The harness's executor choice: rclpy's EventsExecutor where rclpy has one, else (Humble) the
SingleThreadedExecutor with a warning, never an ImportError."""

from __future__ import annotations

import sys
import threading

import pytest

pytest.importorskip("rclpy")
from rclpy.executors import SingleThreadedExecutor  # noqa: E402

from servo_ff.ros.harness import RosHarness  # noqa: E402


def test_events_harness_falls_back_to_the_single_threaded_executor_without_events_executor(monkeypatch):
    monkeypatch.setitem(sys.modules, "rclpy.experimental", None)  # import rclpy.experimental raises ImportError
    with pytest.warns(UserWarning, match="no EventsExecutor"):
        ros = RosHarness(salt=61, events=True)
    try:
        assert type(ros.executor) is SingleThreadedExecutor
        node = ros.make_node("fallback_probe")
        assert node.get_name() == "fallback_probe"
    finally:
        ros.shutdown()


def test_events_harness_uses_the_events_executor_where_rclpy_has_it():
    pytest.importorskip("rclpy.experimental")
    ros = RosHarness(salt=62, events=True)
    try:
        assert type(ros.executor).__name__ == "EventsExecutor"  # rclpy's factory returns its pybind11 class
    finally:
        ros.shutdown()


def test_a_domain_another_process_holds_is_skipped_and_taken_once_free():
    """Two processes whose salts hash to one domain: the second takes the next one while the first holds it."""
    import os
    import subprocess

    from servo_ff.ros.harness import domain_id, domain_lock_path, first_free_domain

    held: dict[int, int] = {}
    d = first_free_domain(40, held)  # a domain nobody holds now (this process takes it) ...
    assert d is not None and d in held
    fd = held.pop(d)  # ... and hands its lock to the child (the same open file: no gap another process could take)
    assert os.fstat(fd).st_ino == os.stat(domain_lock_path(d)).st_ino
    code = "import os, sys; assert os.fstat(int(sys.argv[1])); print('held', flush=True); sys.stdin.read()"
    child = subprocess.Popen(
        [sys.executable, "-c", code, str(fd)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, pass_fds=(fd,)
    )
    os.close(fd)  # the child's copy holds the lock now
    try:
        assert child.stdout.readline().strip() == "held"
        mine: dict[int, int] = {}
        other = first_free_domain(d - 1, mine)
        assert other is not None and other != d
        assert first_free_domain(d - 1, mine) == other  # this process's own domain is its own again
    finally:
        child.stdin.close()
        child.wait(timeout=60)
    again: dict[int, int] = {}
    assert first_free_domain(d - 1, again) == d  # the child exited: its lock went with it
    for fd in (*mine.values(), *again.values()):
        os.close(fd)
    assert domain_id(12345) == domain_id(12345)  # one salt, one domain, within a process


def test_every_domain_held_elsewhere_is_said_in_one_warning(monkeypatch):
    from servo_ff.ros import harness

    monkeypatch.setattr(harness, "first_free_domain", lambda start, held: None)
    monkeypatch.setattr(harness, "_BY_SALT", {})
    with pytest.warns(UserWarning, match="every ROS domain 1..100 is held by another process: sharing"):
        d = harness.domain_id(777)
    assert 1 <= d <= 100


class _Held:
    """The harness's executor with its spin_once held open (as a real one waits for work) until ``release``; it records
    whether that spin was open when a node was added."""

    def __init__(self, executor):
        self.inner, self.spinning, self.added_mid_spin = executor, False, []
        self.entered, self.release = threading.Event(), threading.Event()

    def spin_once(self, timeout_sec=None):
        self.spinning = True
        self.entered.set()
        try:
            self.release.wait(10.0)
            self.inner.spin_once(timeout_sec=timeout_sec)
        finally:
            self.spinning = False

    def add_node(self, node):
        self.added_mid_spin.append(self.spinning)
        self.inner.add_node(node)

    def __getattr__(self, name):
        return getattr(self.inner, name)


def test_a_node_is_added_between_two_spins_never_during_one():
    """CI: a node added while the spin thread was inside the EventsExecutor's spin_once raised "Set changed size
    during iteration" there, the spin thread died and every later service call timed out. Here the spin is held
    open: the node must wait for it to end (make_node still running after 0.5 s), then be added."""
    ros = RosHarness(salt=63, events=True)
    try:
        ros.executor = held = _Held(ros.executor)
        assert held.entered.wait(10.0)
        adder = threading.Thread(target=ros.make_node, args=("added_mid_spin",))
        adder.start()
        adder.join(0.5)  # the old harness adds at once, inside the open spin
        held.release.set()
        adder.join(10.0)
        assert held.added_mid_spin == [False]
        assert ros._thread.is_alive()
    finally:
        held.release.set()
        ros.executor = held.inner
        ros.shutdown()
