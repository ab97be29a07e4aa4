"""robot_description over DDS (std_msgs/String, transient local) from servo_state_publisher_node: a late
subscriber gets it, the MuJoCo sim and the feed-forward node build their robot from it when their own URDF
parameters are empty, and without it they fail with one line naming the topic; /tf and /tf_static from the
joint states (where tf2_msgs is installed)."""

from __future__ import annotations

import numpy as np
import pytest
from nodes_harness import RosHarness, wait_for

pytest.importorskip("rclpy")
from rclpy.parameter import Parameter  # noqa: E402
from std_msgs.msg import String  # noqa: E402

from servo_ff.io.paths import share_file  # noqa: E402
from servo_ff.nodes.state_publisher_node import StatePublisherNode  # noqa: E402
from servo_ff.ros.robot_description import latched_qos  # noqa: E402

URDF = share_file("urdf", "so101.urdf")


@pytest.fixture(scope="module")
def ros():
    h = RosHarness(salt=47)
    pub = h.add(
        StatePublisherNode(
            "servo_state_publisher", **h.node_kwargs(), parameter_overrides=[Parameter("urdf_path", value=str(URDF))]
        )
    )
    yield h, pub
    h.shutdown()


def test_a_late_subscriber_gets_the_urdf(ros):
    h, pub = ros
    got: list[String] = []
    h.make_node("description_probe").create_subscription(String, "robot_description", got.append, latched_qos())
    msg = wait_for(lambda: got and got[-1], 20.0, "robot_description")
    assert msg.data == URDF.read_text()


def test_sim_and_feedforward_take_the_urdf_from_the_topic(ros, compiled_mujoco_kernels):
    from servo_ff.nodes.feedforward_node import FeedForwardNode
    from servo_ff.nodes.sim_node import MujocoSimNode

    h, pub = ros
    ff = h.add(FeedForwardNode("servo_feedforward", **h.node_kwargs()))
    assert ff.robot.joint_names == (
        "shoulder_pan",
        "shoulder_lift",
        "elbow_flex",
        "wrist_flex",
        "wrist_roll",
        "gripper",
    )
    sim = h.add(
        MujocoSimNode(
            "servo_sim",
            **h.node_kwargs(),
            parameter_overrides=[
                Parameter("servo_config", value=str(share_file("config", "servos_so100.yaml"))),
                Parameter("autostart", value=False),
            ],
        )
    )
    assert not sim.model_error and sim.joints == list(ff.robot.joint_names)
    assert sim.servos.sim.floating is False


def test_without_a_publisher_one_line_names_the_topic(ros):
    from servo_ff.nodes.feedforward_node import FeedForwardNode

    h, pub = ros
    kw = {"context": h.context, "namespace": h.ns + "/elsewhere"}
    with pytest.raises(ValueError, match=r"nothing on /.*/elsewhere/robot_description within 0.3 s") as e:
        FeedForwardNode(
            "servo_feedforward", **kw, parameter_overrides=[Parameter("robot_description_timeout", value=0.3)]
        )
    assert "\n" not in str(e.value)


def test_tf_static_and_tf_from_the_joint_states(ros):
    pytest.importorskip("tf2_msgs")
    from sensor_msgs.msg import JointState
    from tf2_msgs.msg import TFMessage

    from servo_ff.dynamics.kinematics import configuration, link_poses, link_tree

    h, pub = ros
    probe = h.make_node("tf_probe")
    static: list = []
    dynamic: list = []
    probe.create_subscription(TFMessage, "/tf_static", static.append, latched_qos())
    probe.create_subscription(TFMessage, "/tf", dynamic.append, 100)
    js = probe.create_publisher(JointState, "joint_states", 10)
    msg = wait_for(lambda: static and static[-1], 20.0, "/tf_static")
    assert [(t.header.frame_id, t.child_frame_id) for t in msg.transforms] == [
        ("gripper", "camera_mount"),
        ("gripper", "gripper_tip"),
    ]
    wait_for(lambda: js.get_subscription_count(), 20.0, "joint_states subscription")
    q = {"shoulder_pan": 0.4, "elbow_flex": -1.1, "not_ours": 3.0}
    state = JointState(name=list(q), position=list(q.values()))
    state.header.stamp.sec = 12
    js.publish(state)
    tf = wait_for(lambda: dynamic and dynamic[-1], 20.0, "/tf")
    assert {t.child_frame_id for t in tf.transforms} == {"shoulder", "lower_arm"}  # the two moving joints named
    assert all(t.header.stamp.sec == 12 for t in tf.transforms), [
        (t.header.stamp, t.child_frame_id) for t in tf.transforms
    ]
    tree = link_tree(URDF.read_text())
    ref = link_poses(
        tree.model,
        tree.model.createData(),
        configuration(tree.model, {"shoulder_pan": 0.4, "elbow_flex": -1.1}),
        tree.parent_frames,
        tree.child_frames,
    )
    for t in tf.transforms:
        k = tree.children.index(t.child_frame_id)
        tr, r = t.transform.translation, t.transform.rotation
        np.testing.assert_allclose([tr.x, tr.y, tr.z, r.x, r.y, r.z, r.w], ref[k], atol=1e-12)
