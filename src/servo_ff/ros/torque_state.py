"""``<prefix>/torque_enabled`` (std_msgs/Bool, latched: reliable, transient local, depth 1) of a servo interface node:
true only while the torque of every servo the node has read is on.

Published once at configure and on every change the node knows of: the ``torque_enable`` service, activate /
deactivate / cleanup / shutdown, the ``reboot`` service (torque off) and a sim's ``reset`` (torque on while active),
a protective shutdown, a servo that rebooted by itself (brown-out) and its restore.
The node knows of a change when it makes it, or (hardware) when a health read sees it: a brown-out between two
health reads is published when the next one sees it, up to ``health_period`` after the torque went off, and the
message has no stamp, so a recording marks the unpowered stretch from then on, not from the last healthy read.
A recorder or the replay reader (``servo-ff fit``, :mod:`servo_ff.io.rosbag_topics`) takes it as the torque enable
of the joints of that node (a Bool has no joint names: one topic per node).
"""

from __future__ import annotations

from rclpy.node import Node
from std_msgs.msg import Bool

from .robot_description import latched_qos


class TorqueStatePublisher:
    """The latched torque state; :meth:`update` publishes when it changed (or when forced)."""

    def __init__(self, node: Node, topic: str):
        self.pub = node.create_publisher(Bool, topic, latched_qos(1))
        self.last: bool | None = None  # None: nothing published yet
        self.published = 0

    def update(self, on: bool, force: bool = False) -> bool:
        """Publish ``on`` when it differs from the last published value (or ``force``); True when published."""
        on = bool(on)
        if not force and on == self.last:
            return False
        self.pub.publish(Bool(data=on))
        self.last = on
        self.published += 1
        return True


__all__ = ["TorqueStatePublisher"]
