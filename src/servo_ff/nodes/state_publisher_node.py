"""``servo_state_publisher_node``: what ``robot_state_publisher`` does, for machines without it — the one place a
bring-up gives the URDF.

* ``robot_description`` (std_msgs/String, reliable, transient local: :mod:`servo_ff.ros.robot_description`) — the
  URDF of ``robot_description`` (XML) or ``urdf_path``, published once; the MuJoCo sim and the feed-forward node read it
  when their own URDF parameters are empty;
* ``/tf_static`` (tf2_msgs/TFMessage, transient local): every fixed joint, parent link → child link, once;
* ``/tf``: per ``joint_states`` message, as robot_state_publisher's ``callbackJointState``: parent link → child link
  of the moving joints (revolute, continuous, prismatic; ``joints`` if given) THAT message names, at its stamp —
  no joint of an earlier message (two sources, e.g. two servo nodes, each reach /tf with their own joints);
  nothing for a message naming none of them (:mod:`servo_ff.dynamics.kinematics`). Mimic joints (URDF ``<mimic>``)
  are published with the joint they mimic (multiplier × its position + offset), not needed in ``joint_states``.
  The throttle is per joint: a message goes out when its stamp is at least 1 / ``publish_frequency`` after the last
  one of the least recently published of its joints, or before it (a clock jump back, a bag replayed).

Frame names are the link names with ``frame_prefix`` before them. A message whose name and position arrays differ in
length is ignored (one throttled warning naming the lengths); names not in the URDF are ignored (another robot's:
one info line per name); a non-finite position keeps that joint's transform out of the message (one throttled
warning). Without tf2_msgs installed only ``robot_description`` is published (one line says so).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import String

from servo_ff.io.paths import resolve_path
from servo_ff.ros.common import TOPIC_JOINT_STATES, ParameterTable, ParamSpec, Throttle, spin_node
from servo_ff.ros.robot_description import TOPIC_ROBOT_DESCRIPTION, latched_qos
from servo_ff.ros.tf_template import TOPIC_TF, TOPIC_TF_STATIC, TfTemplate


def state_publisher_specs() -> list[ParamSpec]:
    return [
        ParamSpec("robot_description", "", "URDF XML (takes precedence over urdf_path)", read_only=True),
        ParamSpec("urdf_path", "", "URDF file of the robot (relative: to the package share dir)", read_only=True),
        ParamSpec(
            "publish_frequency", 50.0, "largest /tf rate of each joint (two sources: each at it)", "Hz", lo=0.1, hi=1e4
        ),
        ParamSpec("frame_prefix", "", "prefix of every frame name (the link names)", read_only=True),
        ParamSpec("joints", [""], "moving joints put on /tf (empty: every one of the URDF)", read_only=True),
        ParamSpec("warn_throttle", 1.0, "minimum time between two warnings of one kind", "s", lo=0.0, hi=3600.0),
    ]


def read_urdf(xml: str, path: str) -> str:
    """The URDF text from the ``robot_description`` / ``urdf_path`` parameters (ValueError / FileNotFoundError
    naming the parameter)."""
    if xml.strip():
        return xml
    if not path:
        raise ValueError("servo_state_publisher needs robot_description or urdf_path")
    p = resolve_path(path)
    if not Path(p).is_file():
        raise FileNotFoundError(f"urdf_path {path!r}: file not found ({p})")
    return Path(p).read_text()


class StatePublisherNode(Node):
    def __init__(self, name: str = "servo_state_publisher", **kwargs: Any):
        super().__init__(name, **kwargs)
        self.table = ParameterTable(self, state_publisher_specs(), n_joints=lambda v: None)
        v = self.table.values
        self.urdf = read_urdf(v["robot_description"], v["urdf_path"])
        self.throttle = Throttle(v["warn_throttle"])
        self.pub_description = self.create_publisher(String, TOPIC_ROBOT_DESCRIPTION, latched_qos())
        self.pub_description.publish(String(data=self.urdf))
        self.tf_published = 0
        self.tree = None
        try:
            from tf2_msgs.msg import TFMessage  # noqa: F401  (not on PyPI: generated into the environment)
        except ImportError as e:
            self.get_logger().warning(f"tf2_msgs not importable ({e}): only robot_description is published")
            return
        self._setup_tf(v["frame_prefix"])

    def _setup_tf(self, prefix: str) -> None:
        from tf2_msgs.msg import TFMessage

        from servo_ff.dynamics.kinematics import link_tree

        self.tree = t = link_tree(self.urdf, self.table["urdf_path"] or "robot_description")
        self.data = t.model.createData()
        self.frames = [(prefix + p, prefix + c) for p, c in zip(t.parents, t.children)]
        chosen = [j for j in self.table["joints"] if j] or list(t.moving_joints)
        unknown = [j for j in chosen if j not in t.moving_joints]
        if unknown:
            raise ValueError(f"joints {unknown} are not moving joints of the URDF ({', '.join(t.moving_joints)})")
        self.index = {j: t.joints.index(j) for j in chosen}  # the joints put on /tf → their row
        self._in_urdf = frozenset(t.joints)
        self._last_ns: dict[str, int] = {}  # joint → stamp [ns] of its last /tf
        self._templates: dict[tuple[int, ...], TfTemplate] = {}  # rows of a message → its serialized TFMessage
        self._unknown_said: set[str] = set()
        self.pub_tf = self.create_publisher(TFMessage, TOPIC_TF, 100)
        self.pub_tf_static = self.create_publisher(TFMessage, TOPIC_TF_STATIC, latched_qos())
        fixed = np.flatnonzero(~t.moving)
        if fixed.size:
            self.pub_tf_static.publish(self._message(fixed, self._poses({}), self.get_clock().now().to_msg()))
        sub = self.create_subscription(JointState, TOPIC_JOINT_STATES, self._on_joint_states, 100)
        self.topic = sub.topic_name
        self.get_logger().info(
            f"robot_description published; /tf for {len(self.index)} moving joint(s), /tf_static for {fixed.size}"
        )

    def _poses(self, positions: dict[str, float]) -> np.ndarray:
        from servo_ff.dynamics.kinematics import link_poses

        t = self.tree
        return link_poses(t.model, self.data, t.configuration(positions), t.parent_frames, t.child_frames)

    def _message(self, rows, poses: np.ndarray, stamp):
        from geometry_msgs.msg import TransformStamped
        from tf2_msgs.msg import TFMessage

        out = TFMessage()
        for k in rows:
            tf = TransformStamped()
            tf.header.stamp = stamp
            tf.header.frame_id, tf.child_frame_id = self.frames[k]
            p = poses[k]
            tf.transform.translation.x, tf.transform.translation.y, tf.transform.translation.z = map(float, p[:3])
            r = tf.transform.rotation
            r.x, r.y, r.z, r.w = map(float, p[3:])
            out.transforms.append(tf)
        return out

    def _positions(self, msg: JointState) -> dict[str, float]:
        """The positions of this message's joints put on /tf, its mimic joints' included (finite only); said: a
        length mismatch, non-finite positions, names not in the URDF."""
        if len(msg.name) != len(msg.position):
            self.throttle(
                "length",
                self.get_logger().warning,
                f"{self.topic}: {len(msg.name)} name(s) but {len(msg.position)} position(s): message ignored",
            )
            return {}
        given, bad, slots = {}, [], self.tree.q_slots
        for name, p in zip(msg.name, msg.position):
            if name in slots:
                if math.isfinite(p):
                    given[name] = float(p)
                elif name in self.index:
                    bad.append(name)
            elif name not in self._in_urdf and name not in self._unknown_said and len(self._unknown_said) < 4096:
                self._unknown_said.add(name)  # (bounded: a stream of ever new names is not kept)
                self.get_logger().info(f"{self.topic}: joint {name!r} is not in the URDF: ignored (another robot's?)")
        if bad:
            self.throttle("nonfinite", self.get_logger().warning, f"{self.topic}: {bad} not finite: no transform")
        given.update(self.tree.mimic_positions(given))
        return {j: p for j, p in given.items() if j in self.index and math.isfinite(p)}

    def _on_joint_states(self, msg: JointState) -> None:
        positions = self._positions(msg)
        if not positions:
            return
        t = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
        last = [self._last_ns.get(j) for j in positions]
        if None not in last and 0 <= t - min(last) < round(1e9 / self.table["publish_frequency"]):
            return  # the least recently published of its joints went out less than a period ago
        if not self.pub_tf.get_subscription_count():  # nobody listens: no forward kinematics
            return
        rows = tuple(sorted(self.index[j] for j in positions))
        tf = self._templates.get(rows)
        if tf is None:
            if len(self._templates) >= 256:  # (bounded: ever new subsets of the joints)
                self._templates.clear()
            tf = self._templates[rows] = TfTemplate(
                rows, self._message(rows, np.zeros((len(self.frames), 7)), msg.header.stamp)
            )
        self.pub_tf.publish(tf.data(self._poses(positions), msg.header.stamp))
        self._last_ns.update(dict.fromkeys(positions, t))
        self.tf_published += 1


def main(args: list[str] | None = None) -> int:
    return spin_node(StatePublisherNode, args)


if __name__ == "__main__":
    import sys

    sys.exit(main())
