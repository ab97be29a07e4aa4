"""A node's ROS clock jumping back — a bag played with ``--loop``, a simulation restarted under a running stack, ROS
time switched on or off: what the node holds from the old time (buffered samples, input ages, a trajectory) would
be read against the new one (a negative age reads as fresh; a buffer mixes both times). It is dropped, as tf2 clears
its buffer on a jump back, and said in one warning line naming what was dropped. A jump back of any size counts;
forward jumps (a simulation faster than real time) do not."""

from __future__ import annotations

from collections.abc import Callable

from rclpy.clock import ClockChange, JumpHandle, JumpThreshold, TimeJump
from rclpy.duration import Duration
from rclpy.node import Node


def jump_text(jump: TimeJump) -> str | None:
    """How the clock jumped, or None for a jump forward."""
    if jump.clock_change == ClockChange.ROS_TIME_ACTIVATED:
        return "ROS time was switched on (/clock)"
    if jump.clock_change == ClockChange.ROS_TIME_DEACTIVATED:
        return "ROS time was switched off"
    back = -jump.delta.nanoseconds * 1e-9
    if back <= 0.0:
        return None
    return f"the clock jumped back {back:.3f} s (a bag played in a loop, a restarted simulation?)"


def on_clock_jump_back(node: Node, drop: Callable[[], str]) -> JumpHandle:
    """Call ``drop`` (it clears what ``node`` holds from the old time and says what, "" for nothing) on each jump
    back of the node's clock and when ROS time is switched on or off; log it as one warning (a switch that found
    nothing to drop, as at start-up, is not said). Keep the handle: the callback lives as long as it does."""

    def post(jump: TimeJump) -> None:
        how = jump_text(jump)
        if how is None:
            return
        what = drop()
        if what or jump.clock_change == ClockChange.ROS_TIME_NO_CHANGE:
            node.get_logger().warning(f"{how}: {what or 'nothing held from the old time'}")

    threshold = JumpThreshold(min_forward=None, min_backward=Duration(nanoseconds=-1), on_clock_change=True)
    return node.get_clock().create_jump_callback(threshold, post_callback=post)
