"""A minimal rclpy echo: ``echo/joint_states`` (JointState) → ``echo/commands`` (Float64MultiArray of the positions),
default executor, depth 10 — the anchor of ``bench/nodes.py``'s JointState → goal latency (issue 25).

    python bench/_echo_node.py --ros-args -r __ns:=/ns
"""

from __future__ import annotations

import sys

import rclpy
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray


def main() -> int:
    rclpy.init(args=sys.argv)
    node = Node("echo")
    pub = node.create_publisher(Float64MultiArray, "echo/commands", 10)
    node.create_subscription(
        JointState, "echo/joint_states", lambda m: pub.publish(Float64MultiArray(data=m.position)), 10
    )
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, rclpy.executors.ExternalShutdownException):
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
