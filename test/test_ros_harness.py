"""The harness's executor choice: rclpy's EventsExecutor where rclpy has one, else (Humble) the
SingleThreadedExecutor with a warning, never an ImportError."""

from __future__ import annotations

import sys
import threading

import pytest

pytest.importorskip("rclpy")
from rclpy.executors import SingleThreadedExecutor  # noqa: E402

from servo_ff.ros.harness import RosHarness, wait_for  # noqa: E402


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


class _OwnedLock:
    """The harness's ``_busy`` lock, remembering which thread holds it."""

    def __init__(self):
        self.lock, self.owner = threading.Lock(), None

    def __enter__(self):
        self.lock.acquire()
        self.owner = threading.current_thread()

    def __exit__(self, *exc):
        self.owner = None
        self.lock.release()


class _Watched:
    """The harness's executor, recording for each node added whether the adding thread held ``busy`` (so the spin
    thread was between two spin_once)."""

    def __init__(self, executor, busy: _OwnedLock):
        self.inner, self.busy, self.added_between_spins = executor, busy, []

    def add_node(self, node):
        self.added_between_spins.append(self.busy.owner is threading.current_thread())
        self.inner.add_node(node)

    def __getattr__(self, name):
        return getattr(self.inner, name)


def test_a_node_is_added_between_two_spins_never_during_one():
    """CI: a node added while the spin thread was inside the EventsExecutor's spin_once raised "Set changed size
    during iteration" there, the spin thread died and every later service call timed out. A node is added only by a
    thread that holds the lock the spin thread holds around each spin_once."""
    ros = RosHarness(salt=63, events=True)
    inner = ros.executor
    try:
        with ros._busy:  # swapped between two spins
            ros._busy = busy = _OwnedLock()
        ros.executor = watched = _Watched(inner, busy)
        for k in range(3):
            ros.make_node(f"added_{k}")
        assert watched.added_between_spins == [True] * 3
        assert ros._thread.is_alive()
    finally:
        ros.executor = inner
        ros.shutdown()


@pytest.mark.parametrize("events", [True, False])
def test_a_node_added_from_a_callback_on_the_spin_thread_does_not_deadlock(events):
    """add() from a callback runs on the spin thread, which holds ``_busy`` around spin_once: taking the lock again
    there would block that thread for good (the lock is not re-entrant), and every later callback with it."""
    ros = RosHarness(salt=64, events=events)
    added: list = []
    try:
        host = ros.make_node("host")

        def once() -> None:
            timer.cancel()
            added.append(ros.make_node("from_callback"))

        timer = host.create_timer(0.01, once)
        fired = threading.Event()
        host.create_timer(0.01, fired.set)
        wait_for(lambda: added, 30.0, "the node added from a timer callback")
        fired.clear()
        wait_for(fired.is_set, 30.0, "a callback after it (the spin thread alive)")
        assert added[0] in ros.nodes and ros._thread.is_alive()
    finally:
        if not added and ros._busy.locked():  # the old harness: unblock the spin thread so shutdown can end
            ros._busy.release()
        ros.shutdown()


class _CountedLock:
    """The harness's ``_busy`` lock, counting the spin thread's acquisitions while another thread waits for it."""

    def __init__(self, spin_thread: threading.Thread):
        self.lock, self.spin, self.waiting, self.taken_back = threading.Lock(), spin_thread, False, []

    def __enter__(self):
        me = threading.current_thread() is not self.spin
        if me:
            self.waiting = True
            self.taken_back.append(0)
        self.lock.acquire()
        if me:
            self.waiting = False
        elif self.waiting:
            self.taken_back[-1] += 1

    def __exit__(self, *exc):
        self.lock.release()


@pytest.mark.parametrize("events", [True, False])
def test_an_add_waits_for_at_most_the_spin_once_under_way(events):
    """The spin thread releases its lock between two spin_once and took it straight back: an add() from another
    thread waited several spin_once (0.05 s each, 0.6 s seen). Now it holds off (as for remove) once an add waits:
    at most one spin_once (the one it was about to begin) is taken before the add."""
    ros = RosHarness(salt=65, events=events)
    try:
        with ros._busy:  # swapped between two spins
            ros._busy = busy = _CountedLock(ros._thread)
        for k in range(10):
            ros.make_node(f"added_{k}")
        assert len(busy.taken_back) == 10 and max(busy.taken_back) <= 1, busy.taken_back
    finally:
        ros.shutdown()
