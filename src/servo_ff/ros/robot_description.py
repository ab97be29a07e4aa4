"""``robot_description``: the URDF as ROS 2 passes it between nodes — std_msgs/String on the node-relative topic
``robot_description`` (``/robot_description`` in the root namespace), reliable and transient local (a late
subscriber gets the last one), as ``robot_state_publisher`` publishes it and ros2_control / MoveIt read it.

:func:`wait_robot_description` is how a node whose own URDF parameters are empty (the MuJoCo sim, the
feed-forward node) takes it: the latched message, or one clear error after ``robot_description_timeout``."""

from __future__ import annotations

import tempfile
from pathlib import Path

from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from .parameters import ParamSpec

TOPIC_ROBOT_DESCRIPTION = "robot_description"


def latched_qos(depth: int = 1) -> QoSProfile:
    """Reliable, transient local, keep last ``depth``: robot_description and /tf_static."""
    return QoSProfile(depth=depth, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)


def timeout_spec() -> ParamSpec:
    return ParamSpec(
        "robot_description_timeout",
        30.0,
        "how long to wait for the robot_description topic when no URDF parameter is set",
        "s",
        lo=0.0,
        hi=3600.0,
        read_only=True,
    )


def wait_robot_description(node, timeout: float) -> str:
    """The URDF XML on the node's ``robot_description`` topic; ValueError naming the topic if none arrives
    within ``timeout`` [s] or it is empty."""
    from rclpy.wait_for_message import wait_for_message
    from std_msgs.msg import String

    topic = node.resolve_topic_name(TOPIC_ROBOT_DESCRIPTION)
    node.get_logger().info(f"no URDF parameter set: waiting up to {timeout:g} s for {topic}")
    ok, msg = wait_for_message(String, node, TOPIC_ROBOT_DESCRIPTION, qos_profile=latched_qos(), time_to_wait=timeout)
    if not ok:
        raise ValueError(
            f"no URDF: robot_description / urdf_path parameters empty and nothing on {topic} within {timeout:g} s "
            "(start servo_state_publisher_node, or set urdf_path)"
        )
    if not msg.data.strip():
        raise ValueError(f"{topic}: empty robot description")
    return msg.data


def urdf_file(xml: str, path: str) -> Path:
    """The URDF as a file: ``xml`` (a robot_description) written to a temporary file, else ``path`` resolved;
    ValueError when both are empty, FileNotFoundError naming a missing ``urdf_path``."""
    from servo_ff.io.paths import resolve_path

    if xml.strip():
        with tempfile.NamedTemporaryFile("w", prefix="robot_description_", suffix=".urdf", delete=False) as f:
            f.write(xml)
        return Path(f.name)
    if not path:
        raise ValueError("set urdf_path or robot_description")
    p = resolve_path(path)
    if not p.is_file():
        raise FileNotFoundError(f"urdf_path {path!r}: file not found ({p})")
    return p
