"""One rclpy harness for the tests, the benchmarks and the demo: a private Context on its own ROS_DOMAIN_ID
over loopback DDS, a private namespace, a single-threaded executor spinning in a background thread, and a
polling ``wait_for``. It never touches the caller's default rclpy context.

Single-threaded on purpose: rclpy's MultiThreadedExecutor re-dispatches a late timer and piles up futures (its
spin loop then burns the GIL); every servo_ff node answers its services without blocking the executor.
``events=True``: rclpy's EventsExecutor (``rclpy.experimental``, single-threaded as well: callbacks in the order
their events arrive, no wait set rebuilt over every entity of every node per callback; the OP3 lockstep loop runs
≈ 2× faster on it).
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from collections.abc import Callable
from typing import Any

_HARNESSES = itertools.count()  # harnesses made in this process: each one's namespace is its own


_HELD: dict[int, int] = {}  # domains this process holds: domain -> fd of its lock file (released at exit)
_BY_SALT: dict[int, int] = {}  # salt -> its domain in this process


def domain_lock_path(domain: int) -> str:
    """The lock file a process holds (``flock``) while it owns ROS_DOMAIN_ID ``domain``."""
    import tempfile

    return os.path.join(tempfile.gettempdir(), f"servo_ff_ros_domain_{domain}.lock")


def first_free_domain(start: int, held: dict[int, int]) -> int | None:
    """The first ROS_DOMAIN_ID in 1..100 from ``start`` (0-based, wrapping) that is in ``held`` or whose lock file
    this call can take (then added to ``held``); None when every one is held by other processes."""
    import fcntl

    for k in range(100):
        d = 1 + (start + k) % 100
        if d in held:
            return d
        try:
            fd = os.open(domain_lock_path(d), os.O_RDWR | os.O_CREAT, 0o666)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        held[d] = fd
        return d
    return None


def domain_id(salt: int) -> int:
    """A ROS_DOMAIN_ID in 1..100 from ``salt`` and the process id: the same salt gives the same domain within a
    process; a domain another process holds (its lock file, :func:`domain_lock_path`) is skipped, so parallel runs
    (two pytest processes, a test beside ``./run demo``) never meet on ``/clock`` or ``/tf``."""
    if salt not in _BY_SALT:
        start = (os.getpid() * 7 + salt * 31) % 100
        free = first_free_domain(start, _HELD)
        if free is None:
            import warnings

            warnings.warn(f"every ROS domain 1..100 is held by another process: sharing {1 + start}", stacklevel=2)
        _BY_SALT[salt] = 1 + start if free is None else free
    return _BY_SALT[salt]


def events_executor(context):
    """rclpy's EventsExecutor on ``context``; None (and a warning) where rclpy has none (Humble's rclpy: the
    caller falls back to the SingleThreadedExecutor, slower, same callbacks)."""
    try:
        from rclpy.experimental import EventsExecutor
    except ImportError as e:
        import warnings

        warnings.warn(f"rclpy has no EventsExecutor ({e}): using the SingleThreadedExecutor", stacklevel=3)
        return None
    return EventsExecutor(context=context)


class RosHarness:
    """Context + executor thread. ``salt`` picks the domain (:func:`domain_id`) unless ``domain`` is given;
    ``ns`` is a namespace private to this process."""

    def __init__(self, salt: int = 0, domain: int | None = None, prefix: str = "t", events: bool = False):
        import rclpy
        from rclpy.context import Context
        from rclpy.executors import SingleThreadedExecutor

        self._rclpy = rclpy
        os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        self.domain = domain_id(salt) if domain is None else int(domain)
        os.environ["ROS_DOMAIN_ID"] = str(self.domain)  # child processes (servo-ff up, bench nodes) join it
        # a private namespace as well: other runs on this machine that land on the same domain stay apart, and so
        # do two harnesses of one process with the same salt (a later one saw the endpoints of an earlier one's
        # nodes in the graph, not yet removed: two publishers of an action's feedback topic, shake run)
        self.ns = f"/{prefix}{os.getpid()}_{salt}_{next(_HARNESSES)}"
        self.context = Context()
        rclpy.init(context=self.context, domain_id=self.domain)
        self.executor = (events and events_executor(self.context)) or SingleThreadedExecutor(context=self.context)
        self.nodes: list[Any] = []
        self._stop = False
        self._busy = threading.Lock()  # held by the executor thread while it runs callbacks
        self._hold = threading.Event()  # set: the executor thread waits (a node is being removed)
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        while self.context.ok() and not self._stop:
            if self._hold.is_set():
                time.sleep(0.001)
                continue
            try:
                with self._busy:
                    self.executor.spin_once(timeout_sec=0.05)
            except Exception:  # shutdown races
                if not self.context.ok() or self._stop:
                    return
                raise

    def add(self, node):
        from .parameters import warn_undeclared_overrides

        warn_undeclared_overrides(node)
        self.nodes.append(node)
        if threading.current_thread() is self._thread:  # from a callback: spin_once is this thread's, not running
            self.executor.add_node(node)
        else:  # not while spin_once walks the executor's set of nodes (the EventsExecutor raised "Set changed size
            self._hold.set()  # during iteration" in the spin thread, which then died: CI, a node added mid-spin);
            try:  # _hold: the spin thread does not take the lock straight back (as remove)
                with self._busy:
                    self.executor.add_node(node)
            finally:
                self._hold.clear()
        return node

    def remove(self, node) -> None:
        """Take ``node`` out of the executor and destroy it between two callbacks (destroying it while one of its
        timers runs would kill the executor thread)."""
        self._hold.set()
        try:
            with self._busy:
                self.executor.remove_node(node)
                self.nodes.remove(node)
                node.destroy_node()
        finally:
            self._hold.clear()

    def make_node(self, name: str):
        return self.add(self._rclpy.create_node(name, context=self.context, namespace=self.ns))

    def node_kwargs(self) -> dict[str, Any]:
        """Keyword arguments that put a servo_ff node in this harness's context and namespace."""
        return {"context": self.context, "namespace": self.ns}

    def call(self, client, request, timeout: float = 5.0):
        if not client.wait_for_service(timeout_sec=timeout):
            raise TimeoutError(f"service {client.srv_name} not available")
        future = client.call_async(request)
        wait_for(future.done, timeout, f"an answer from {client.srv_name}")
        return future.result()

    def shutdown(self) -> None:
        """Stop the executor thread, destroy every node between two callbacks, then the executor and the context."""
        self._stop = True
        self._thread.join(timeout=30.0)  # the spin loop sees _stop within one spin_once (0.05 s) and a callback
        for node in list(self.nodes):
            self.remove(node)
        with self._busy:  # a spin thread still alive (join timed out) is not inside spin_once now
            self.executor.shutdown()
            self.context.try_shutdown()

    def __enter__(self) -> RosHarness:
        return self

    def __exit__(self, *exc) -> None:
        self.shutdown()


def wait_for(
    predicate: Callable[[], Any], timeout: float = 5.0, what: str = "condition", interval: float = 0.01
) -> Any:
    """Poll ``predicate`` every ``interval`` s until it returns something truthy (returned) or raise TimeoutError
    after ``timeout`` s."""
    t0 = time.monotonic()
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() - t0 > timeout:
            raise TimeoutError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(interval)


__all__ = ["RosHarness", "domain_id", "wait_for"]
