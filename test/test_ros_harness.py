"""The harness's executor choice: rclpy's EventsExecutor where rclpy has one, else (Humble) the
SingleThreadedExecutor with a warning, never an ImportError."""

from __future__ import annotations

import sys

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
