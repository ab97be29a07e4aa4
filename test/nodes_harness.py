"""rclpy harness for the node tests: one private Context per test module on its own ROS_DOMAIN_ID over
loopback DDS, an executor spinning in a background thread, and a polling ``wait_for``."""
from __future__ import annotations

import os
import threading
import time
from typing import Any, Callable

import pytest

rclpy = pytest.importorskip("rclpy")
from rclpy.context import Context  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402


def domain_id(module_salt: int) -> int:
    """A ROS_DOMAIN_ID in 1..100 from the module and the process id (parallel runs do not talk)."""
    return 1 + (os.getpid() * 7 + module_salt * 31) % 100


class RosHarness:
    def __init__(self, salt: int):
        os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        self.domain = domain_id(salt)
        # a private namespace as well: other runs on this machine that land on the same domain stay apart
        self.ns = f"/t{os.getpid()}_{salt}"
        os.environ["ROS_DOMAIN_ID"] = str(self.domain)
        self.context = Context()
        rclpy.init(context=self.context, domain_id=self.domain)
        # single-threaded: rclpy's MultiThreadedExecutor re-dispatches a late timer and piles up futures (its spin
        # loop then burns the GIL); every node here answers its services without blocking the executor
        self.executor = SingleThreadedExecutor(context=self.context)
        self.nodes: list[Any] = []
        self._stop = False
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        while self.context.ok() and not self._stop:
            try:
                self.executor.spin_once(timeout_sec=0.05)
            except Exception:  # shutdown races
                if not self.context.ok():
                    return
                raise

    def add(self, node):
        self.nodes.append(node)
        self.executor.add_node(node)
        return node

    def remove(self, node) -> None:
        self.executor.remove_node(node)
        self.nodes.remove(node)
        node.destroy_node()

    def make_node(self, name: str):
        return self.add(rclpy.create_node(name, context=self.context, namespace=self.ns))

    def call(self, client, request, timeout: float = 5.0):
        assert client.wait_for_service(timeout_sec=timeout), f"service {client.srv_name} not available"
        future = client.call_async(request)
        t0 = time.monotonic()
        while not future.done():
            assert time.monotonic() - t0 < timeout, f"service {client.srv_name} did not answer"
            time.sleep(0.01)
        return future.result()

    def shutdown(self) -> None:
        self._stop = True
        self._thread.join(timeout=2.0)
        for node in list(self.nodes):
            self.remove(node)
        self.executor.shutdown()
        self.context.try_shutdown()


def wait_for(predicate: Callable[[], Any], timeout: float = 5.0, what: str = "condition") -> Any:
    t0 = time.monotonic()
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() - t0 > timeout:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.01)
