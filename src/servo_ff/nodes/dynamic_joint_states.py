"""``/dynamic_joint_states`` (control_msgs/DynamicJointState), as ros2_control's joint_state_broadcaster publishes
it: per joint, every state interface the node has by name (``position`` rad, ``velocity`` rad/s, ``effort`` N·m,
and the node's own, e.g. the hardware's ``temperature`` °C and ``voltage`` V), with the stamp of the matching
``joint_states``. Serialized only while someone subscribes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from control_msgs.msg import DynamicJointState, InterfaceValue

from .common import float64_field

TOPIC_DYNAMIC_JOINT_STATES = "dynamic_joint_states"


class DynamicJointStates:
    """The publisher of one servo interface node (``joints`` in its order)."""

    def __init__(self, node, joints: Sequence[str], depth: int = 10):
        self.joints = list(joints)
        self.pub = node.create_publisher(DynamicJointState, TOPIC_DYNAMIC_JOINT_STATES, depth)

    def publish(self, stamp, interfaces: Mapping[str, np.ndarray]) -> None:
        """One message: ``interfaces`` maps an interface name to its values (J,) in joint order."""
        if self.pub.get_subscription_count() == 0:
            return
        names = list(interfaces)
        table = np.stack([np.asarray(interfaces[k], dtype=np.float64) for k in names], axis=1)  # (J, K)
        msg = DynamicJointState(joint_names=self.joints)
        msg.header.stamp = stamp
        msg.interface_values = [InterfaceValue(interface_names=names, values=float64_field(row)) for row in table]
        self.pub.publish(msg)


__all__ = ["TOPIC_DYNAMIC_JOINT_STATES", "DynamicJointStates"]
