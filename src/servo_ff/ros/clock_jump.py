"""A node's ROS clock jumping back — a bag played with ``--loop``, a simulation restarted under a running stack, ROS
time switched on or off: what the node holds from the old time (buffered samples, input ages, a trajectory) would
be read against the new one (a negative age reads as fresh; a buffer mixes both times). It is dropped, as tf2 clears
its buffer on a jump back, and said in one warning line naming what was dropped. A jump back of any size counts.
A jump forward counts only for a node that asks (``forward``: the largest step its loop takes as time passing; a
servo node's trajectory sampled after a larger one went to its end point in one tick): steps of a clock coarser
than that, or a simulation faster than real time, are not jumps for the others."""

from __future__ import annotations

from collections.abc import Callable

from rclpy.clock import ClockChange, JumpHandle, JumpThreshold, TimeJump
from rclpy.duration import Duration
from rclpy.node import Node

from .throttle import Throttle

OLD_STAMP = 1.0  # [s] a message stamped further ahead of the node's clock is the old time's (queued behind a jump)
FORWARD_JUMP = 1.0  # [s] a forward step of the clock this large is a jump for a node without a bound of its own


def of_old_time(stamp: float, now: float) -> bool:
    """Whether a message stamped ``stamp`` [s] at ``now`` [s, the node's clock] is the old time's: a pose or a
    sample taken from it after a jump back would be the old time's (before a restarted simulation)."""
    return stamp > now + OLD_STAMP


def jump_text(jump: TimeJump, forward: float | None = None) -> str | None:
    """How the clock jumped, or None for a step forward (shorter than ``forward`` [s], or any when None)."""
    if jump.clock_change == ClockChange.ROS_TIME_ACTIVATED:
        return "ROS time was switched on (/clock)"
    if jump.clock_change == ClockChange.ROS_TIME_DEACTIVATED:
        return "ROS time was switched off"
    back = -jump.delta.nanoseconds
    if back <= 0:
        if forward is None or -back <= forward * 1e9:  # a step of the bound itself is time passing (a bag at
            return None  # --rate 10 --clock 10 steps exactly 1 s: before, each step was a jump)
        ahead = -back * 1e-9
        return f"the clock jumped forward {ahead:.3f} s (more than {forward:g} s: a bag or a simulation skipped ahead?)"
    by = f"{back * 1e-9:.3f} s" if back >= 1_000_000 else f"{back} ns"
    return f"the clock jumped back {by} (a bag played in a loop, a restarted simulation?)"


def on_clock_jump_back(
    node: Node,
    drop: Callable[[], str],
    forward: float | None = None,
    drop_forward: Callable[[str], str] | None = None,
) -> JumpHandle:
    """Call ``drop`` (it clears what ``node`` holds from the old time and says what, "" for nothing) on each jump
    back of the node's clock and when ROS time is switched on or off; with ``forward`` [s] also on each jump forward
    by more than that (``drop_forward(how)`` instead when given: ``how`` says the jump). Log it as one warning
    (a switch that found nothing to drop, as a lockstep sim's own clock taking over, is not said; a jump forward
    always is, throttled by the node's ``throttle``: :class:`.throttle.Throttle`, else one line a second). An
    exception of ``drop`` is logged as an error, not raised into the clock's callback (and the executor). Keep the
    handle: the callback lives as long as it does (``unregister()`` it to change ``forward``)."""

    throttle = getattr(node, "throttle", None)
    if not isinstance(throttle, Throttle):
        throttle = Throttle(1.0)

    def post(jump: TimeJump) -> None:
        how = jump_text(jump, forward)
        if how is None:
            return
        ahead = jump.clock_change == ClockChange.ROS_TIME_NO_CHANGE and jump.delta.nanoseconds > 0
        if ahead and node.get_clock().now().nanoseconds <= jump.delta.nanoseconds:
            return  # from 0: the first /clock, time starting
        try:
            what = drop_forward(how) if ahead and drop_forward is not None else drop()
        except Exception as e:  # noqa: BLE001 - raised here it would end the node's spin
            node.get_logger().error(f"{how}: dropping what was held from the old time failed: {e!r}")
            return
        if what or jump.clock_change == ClockChange.ROS_TIME_NO_CHANGE:
            none = "nothing to drop" if ahead else "nothing held from the old time"
            if ahead:  # a clock stepping by more than the bound on every message: one line per throttle period
                throttle("clock:jumped_forward", node.get_logger().warning, f"{how}: {what or none}")
            else:
                node.get_logger().warning(f"{how}: {what or none}")

    ahead = None if forward is None else Duration(nanoseconds=max(1, int(forward * 1e9) + 1))  # rcl: ≥ min_forward
    threshold = JumpThreshold(min_forward=ahead, min_backward=Duration(nanoseconds=-1), on_clock_change=True)
    return node.get_clock().create_jump_callback(threshold, post_callback=post)
