"""``/dynamic_joint_states`` (control_msgs/DynamicJointState), as ros2_control's joint_state_broadcaster publishes
it: per joint, every state interface the node has by name (``position`` rad, ``velocity`` rad/s, ``effort`` N·m,
and the node's own, e.g. the hardware's ``temperature`` °C and ``voltage`` V), with the stamp of the matching
``joint_states``. Published only while someone subscribes, from a message serialized once
(:class:`.cdr_template.CdrTemplate`: the stamp and values written in place)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from control_msgs.msg import DynamicJointState, InterfaceValue

from .cdr_template import CdrTemplate, Listened

TOPIC_DYNAMIC_JOINT_STATES = "dynamic_joint_states"


class DynamicJointStates:
    """The publisher of one servo interface node (``joints`` in its order)."""

    def __init__(self, node, joints: Sequence[str], depth: int = 10):
        self.joints = list(joints)
        self.pub = node.create_publisher(DynamicJointState, TOPIC_DYNAMIC_JOINT_STATES, depth)
        self.listened = Listened(self.pub)  # the caller skips building its interfaces when False
        self._names: list[str] = []
        self._cdr: CdrTemplate | None = None

    def _template(self, names: list[str]) -> CdrTemplate:
        """The serialized message for these interface names (built again if they change)."""
        if self._cdr is None or names != self._names:
            msg = DynamicJointState(joint_names=self.joints)
            msg.interface_values = [
                InterfaceValue(interface_names=names, values=[0.0] * len(names)) for _ in self.joints
            ]
            self._cdr = CdrTemplate(msg, [f"interface_values.{j}.values" for j in range(len(self.joints))])
            self._names = names
        return self._cdr

    def publish(self, stamp, interfaces: Mapping[str, np.ndarray]) -> None:
        """One message: ``interfaces`` maps an interface name to its values (J,) in joint order."""
        if not self.listened():
            return
        cdr = self._template(list(interfaces))
        cdr.set_stamp(stamp.sec, stamp.nanosec)
        table = np.column_stack(list(interfaces.values()))  # (J, K)
        for j, row in enumerate(table):
            cdr.block(j)[:] = row
        self.pub.publish(cdr.data())


__all__ = ["TOPIC_DYNAMIC_JOINT_STATES", "DynamicJointStates"]
