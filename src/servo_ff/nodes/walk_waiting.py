"""What ``servo_walk_node`` waits for before it plans, said: a warning (every 10 s while it lasts, from
:data:`SAY_AFTER` s on) on a timer of the steady clock (every :data:`TICK` s) — a node on sim time without ``/clock``
has no timer of its own that runs. ``/clock``: ``use_sim_time`` true and no clock yet (its time reads 0: no pose is
taken); ``/joint_states``: none arrived, or those that did lack joints
(:meth:`~servo_ff.ros.measured_pose.PoseAcross.missing`; one that arrived and was refused is said by the node, with
its reason); the engine process (``engine_process``): not up :data:`ENGINE_SAY_AFTER` s after it was started — the
tick also looks at it (:func:`.walk_start.engine_up`: one that ended or hung is a fault even while no
``/joint_states`` comes), and the walk starts once it is up from the pose read meanwhile
(:func:`.walk_start.start_walk`: a lockstep simulation sends no state before the walk's first chunk; measured: it
waited for its 10 s lockstep timeout)."""

from __future__ import annotations

import time
from typing import Any

from rclpy.clock import Clock, ClockType

SAY_AFTER = 2.0  # [s, wall] silence before the first line
TICK = 0.05  # [s, wall] the tick: the engine process looked at, the walk started within this of it being up
ENGINE_SAY_AFTER = 5.0  # [s, wall] an engine process not up this long is said (placo's start-up: ≈ 1.5 s)


def engine_wait(node: Any) -> float | None:
    """[s, wall] how long the walk node ``node`` has waited for its engine process to come up (None: none waited for:
    in process, up, or given up)."""
    w = node.worker
    if w is None or w.stance() is not None or getattr(node, "engine_given_up", False):
        return None
    return time.monotonic() - w.born


class StartWait:
    """Says what ``node`` (the walk node: its ``q0`` None until it takes a pose) waits for on ``topic``."""

    def __init__(self, node: Any, topic: str):
        self.node, self.topic = node, node.resolve_topic_name(topic)
        self.restart()
        self.timer = node.create_timer(TICK, self._tick, clock=Clock(clock_type=ClockType.STEADY_TIME))

    def restart(self) -> None:
        """Waiting (again, after a jump back of the clock) from now, no message seen."""
        self.since = time.monotonic()
        self.seen = 0  # /joint_states messages arrived since

    def _tick(self) -> None:
        from .walk_start import engine_up, start_walk

        if self.node.q0 is not None or getattr(self.node, "engine_given_up", False):
            return  # (given up: said once, walk_process.fault)
        if engine_up(self.node):  # (one that ended or hung: a fault)
            start_walk(self.node)  # (the pose read while it started)
            if self.node.q0 is not None:
                return
        engine = engine_wait(self.node)
        if engine is not None and engine >= ENGINE_SAY_AFTER:
            self.node.get_logger().warning(
                f"waiting for the engine process (pid {self.node.worker.pid}) to start ({engine:.0f} s; hung after "
                f"{self.node.worker.timeout:g} s): no pose is taken before it",
                throttle_duration_sec=10.0,
            )
        waited = time.monotonic() - self.since
        if waited < SAY_AFTER:
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
        elif lack := self.node.pose.missing(self.node.now_s()):
            self.node.get_logger().warning(
                f"waiting for a whole pose ({waited:.0f} s): {lack}", throttle_duration_sec=10.0
            )
