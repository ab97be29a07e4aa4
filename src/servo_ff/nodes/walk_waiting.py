"""What ``servo_walk_node`` waits for before it plans, said: a warning (every 10 s while it lasts, from
:data:`SAY_AFTER` s on) on a timer of the steady clock — a node on sim time without ``/clock`` has no timer of its own
that runs. ``/clock``: ``use_sim_time`` true and no clock yet (its time reads 0: no pose is taken); ``/joint_states``:
none arrived (one that arrived and was refused is said by the node, with its reason)."""

from __future__ import annotations

import time
from typing import Any

from rclpy.clock import Clock, ClockType

SAY_AFTER = 2.0  # [s, wall] silence before the first line


class StartWait:
    """Says what ``node`` (the walk node: its ``q0`` None until it takes a pose) waits for on ``topic``."""

    def __init__(self, node: Any, topic: str):
        self.node, self.topic = node, node.resolve_topic_name(topic)
        self.restart()
        self.timer = node.create_timer(1.0, self._tick, clock=Clock(clock_type=ClockType.STEADY_TIME))

    def restart(self) -> None:
        """Waiting (again, after a jump back of the clock) from now, no message seen."""
        self.since = time.monotonic()
        self.seen = 0  # /joint_states messages arrived since

    def _tick(self) -> None:
        waited = time.monotonic() - self.since
        if self.node.q0 is not None or waited < SAY_AFTER:
            return
        if self.node.get_clock().now().nanoseconds == 0:
            self.node.get_logger().warning(
                f"waiting for /clock (use_sim_time true, no clock in {waited:.0f} s): no pose is taken, nothing "
                "is planned before it",
                throttle_duration_sec=10.0,
            )
        elif not self.seen:
            self.node.get_logger().warning(
                f"waiting for {self.topic} (none in {waited:.0f} s): the walk starts from the first measured pose",
                throttle_duration_sec=10.0,
            )
