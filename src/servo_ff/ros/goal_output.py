"""How the feed-forward node's goals reach the servo interface: positions [rad] on ``servo/commands``
(std_msgs/Float64MultiArray, ``joints`` order); with ``stamped`` by name on ``servo/joint_command``
(sensor_msgs/JointState, ``header.stamp`` = the ``/joint_states`` a goal answers: a lockstep sim matches each goal
to its state, :mod:`.sim_clock`). While a servo reports a hardware error in ``/diagnostics``
(:mod:`.servo_faults`), the goals go by name for the other joints only."""

from __future__ import annotations

from typing import Any

import numpy as np
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from .cdr_template import CdrTemplate
from .common import TOPIC_COMMANDS, TOPIC_JOINT_COMMAND, float64_field
from .servo_faults import FaultedJoints


class GoalOutput:
    """The publishers of a node sending goals for ``joints``, and the joints whose servo reports an error."""

    def __init__(self, node: Any, joints: list[str], stamped: bool):
        self.joints, self.stamped = list(joints), bool(stamped)
        self.faults = FaultedJoints(self.joints)
        self.pub_commands = node.create_publisher(Float64MultiArray, TOPIC_COMMANDS, 10)
        self.pub_named = node.create_publisher(JointState, TOPIC_JOINT_COMMAND, 10)
        self._commands = Float64MultiArray()
        n = len(self.joints)
        self._named = CdrTemplate(JointState(name=self.joints, position=[0.0] * n), ["position"])  # in place

    def send(self, goal: np.ndarray, answering: tuple[int, int] = (0, 0)) -> None:
        """``goal`` [rad], one per joint of ``joints``; ``answering`` = (sec, nanosec) of the state it answers
        ((0, 0): none, or not ``stamped``)."""
        if self.faults.faulted:
            ok = [k for k, j in enumerate(self.joints) if j not in self.faults.faulted]
            if ok:
                msg = JointState(name=[self.joints[k] for k in ok], position=goal[ok].tolist())
                if self.stamped:
                    msg.header.stamp.sec, msg.header.stamp.nanosec = answering
                self.pub_named.publish(msg)
        elif self.stamped:
            self._named.set_stamp(*answering)
            self._named.block(0)[:] = goal
            self._named.publish(self.pub_named)
        else:
            self._commands.data = float64_field(goal)
            self.pub_commands.publish(self._commands)
