"""``servo_walk_node``'s support coefficient on each ``/joint_states`` (``support_clock: joint_states``): the plan's
at the message's stamp + ``support_lead`` (the feed-forward node's next tick), sent through the node's
``support_out`` (:class:`servo_ff.ros.level_publisher.LevelPublisher`: when it changes, and every ``publish_period``).

A stamp the plan cannot answer is not used silently (before: np.interp held the planned window's end — an unstamped
``/joint_states`` gave the window's first sample, 2–4 s old: 2 messages in 4 s of walking, off the plan by 0.44 on
average and 1.0 at worst, unsaid; audit 20a e6): an unstamped message (stamp 0: a driver that does not stamp) is
taken at the node's clock, said once; a stamp more than ``KEEP`` behind the clock or past the planned window
(another clock's: a driver stamping its boot time) sends none, one throttled warning."""

from __future__ import annotations

from typing import Any

from servo_ff.ros.clock_jump import OLD_STAMP
from servo_ff.ros.common import TOPIC_JOINT_STATES

KEEP = 2.0  # [s] planned samples kept behind now at least (/joint_states stamps lag), dropped by this much at most


class JointStatesSupport:
    """The walk node ``node``'s support coefficient for each ``/joint_states`` stamp (:meth:`send`); ``unstamped``
    and ``refused`` count the messages taken at the node's clock and those that sent none."""

    def __init__(self, node: Any):
        self.node = node
        self.unstamped = 0
        self.refused = 0

    def send(self, stamp: float) -> None:
        """The coefficient for the message stamped ``stamp`` [s] (0: unstamped), at stamp + ``support_lead``."""
        node, now = self.node, self.node.now_s()
        if stamp == 0.0:
            self.unstamped += 1
            if self.unstamped == 1:
                node.get_logger().info(
                    f"{TOPIC_JOINT_STATES} unstamped (header.stamp 0): the support coefficient is sent for this "
                    "node's clock + support_lead"
                )
            stamp = now
        t = stamp + float(node.table["support_lead"])
        last = node.times[-1] if node.times else now + OLD_STAMP  # (no plan yet: 0.5, before the walk)
        if not now - KEEP <= t <= last:
            self.refused += 1
            node.get_logger().warning(
                f"{TOPIC_JOINT_STATES} stamped {stamp:.3f} s: its time + support_lead is outside what the plan "
                f"answers ({now - KEEP:.3f} … {last:.3f} s; clock {now:.3f} s): no support coefficient for it "
                f"(another clock's stamps?; {self.refused} so far)",
                throttle_duration_sec=5.0,
            )
            return
        node.support_out.send(t, node.support(t))
