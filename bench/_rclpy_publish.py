"""A minimal rclpy publisher of what the sim node publishes per 2 ms period (JointState of 20 joints, Imu, foot
forces, support coefficient, /clock), as fast as possible with no executor, each message serialized once and
published as bytes (``publish_raw``, as the node's CDR templates do): the rclpy share of a sim period (issue 25).
Prints ``periods_per_s=<float>``.

    python bench/_rclpy_publish.py SECONDS --ros-args -r __ns:=/ns
"""

from __future__ import annotations

import sys
import time

import rclpy
from rclpy.node import Node
from rclpy.serialization import serialize_message
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64, Float64MultiArray


def main() -> int:
    seconds = float(sys.argv[1])
    rclpy.init(args=sys.argv)
    node = Node("publish_ceiling")
    pubs = [
        (node.create_publisher(JointState, "joint_states", 10), JointState(name=[f"j{i}" for i in range(20)])),
        (node.create_publisher(Imu, "imu/data", 100), Imu()),
        (node.create_publisher(Float64MultiArray, "foot_forces", 100), Float64MultiArray(data=[0.0] * 4)),
        (node.create_publisher(Float64, "support_coefficient", 100), Float64()),
        (node.create_publisher(Clock, "/clock", 10), Clock()),
    ]
    raw = []
    for pub, msg in pubs:
        if isinstance(msg, JointState):
            msg.position = msg.velocity = msg.effort = [0.1] * 20
        raw.append((pub, serialize_message(msg)))
    n, t_end, t0 = 0, time.perf_counter() + seconds, time.perf_counter()
    while time.perf_counter() < t_end:
        for pub, data in raw:
            pub.publish(data)
        n += 1
    print(f"periods_per_s={n / (time.perf_counter() - t0):.1f}")
    node.destroy_node()
    rclpy.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
