"""The node tests use the package's one rclpy harness (:mod:`servo_ff.nodes.harness`); skipped without rclpy."""

from __future__ import annotations

import pytest

rclpy = pytest.importorskip("rclpy")
from servo_ff.nodes.harness import RosHarness, domain_id, wait_for  # noqa: E402

__all__ = ["RosHarness", "domain_id", "wait_for", "rclpy"]
