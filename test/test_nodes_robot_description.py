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


# ------------------------------------------- /tf per joint_states message (robot_state_publisher's callbackJointState)
#: revolute, continuous and prismatic joints in a chain, a mimic joint of j_rev (2 × j_rev + 0.1) and a fixed one.
MIMIC_URDF = """<?xml version="1.0"?>
<robot name="probe">
  <link name="base_link"/><link name="l1"/><link name="l2"/><link name="l3"/><link name="finger"/><link name="tool"/>
  <joint name="j_rev" type="revolute"><parent link="base_link"/><child link="l1"/><origin xyz="0 0 0.1"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="5" velocity="5"/></joint>
  <joint name="j_cont" type="continuous"><parent link="l1"/><child link="l2"/><origin xyz="0.2 0 0"/>
    <axis xyz="0 1 0"/></joint>
  <joint name="j_pri" type="prismatic"><parent link="l2"/><child link="l3"/><origin xyz="0 0 0.05"/>
    <axis xyz="1 0 0"/><limit lower="0" upper="0.1" effort="5" velocity="1"/></joint>
  <joint name="j_mimic" type="revolute"><parent link="l3"/><child link="finger"/><origin xyz="0 0.02 0"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="5" velocity="5"/>
    <mimic joint="j_rev" multiplier="2.0" offset="0.1"/></joint>
  <joint name="j_fixed" type="fixed"><parent link="l3"/><child link="tool"/><origin xyz="0.03 0 0"/></joint>
</robot>
"""
CHILD = {"j_rev": "l1", "j_cont": "l2", "j_pri": "l3", "j_mimic": "finger"}


@pytest.fixture(scope="module")
def tf_probe():
    """A state publisher of MIMIC_URDF (50 Hz, warnings throttled 600 s: a count of lines cannot flake) and a probe:
    (harness, node, joint_states publisher, received /tf messages)."""
    pytest.importorskip("tf2_msgs")
    from sensor_msgs.msg import JointState
    from tf2_msgs.msg import TFMessage

    h = RosHarness(salt=68)
    params = {"robot_description": MIMIC_URDF, "publish_frequency": 50.0, "warn_throttle": 600.0}
    sp = h.add(
        StatePublisherNode(
            "servo_state_publisher",
            **h.node_kwargs(),
            parameter_overrides=[Parameter(k, value=v) for k, v in params.items()],
        )
    )
    probe = h.make_node("tf_probe")
    tf: list = []
    probe.create_subscription(TFMessage, "/tf", tf.append, 100)
    js = probe.create_publisher(JointState, "joint_states", 100)
    wait_for(lambda: js.get_subscription_count() and sp.pub_tf.get_subscription_count(), 20.0, "matched")
    yield h, sp, js, tf
    h.shutdown()


def joint_state(positions: dict, sec: int, n_positions: int | None = None):
    from sensor_msgs.msg import JointState

    msg = JointState(name=list(positions), position=[float(p) for p in positions.values()][:n_positions])
    msg.header.stamp.sec = sec
    return msg


def tf_at(tf: list, sec: int, child: str, timeout: float = 10.0):
    """The /tf message carrying ``child`` at ``sec`` (waited for), as {child frame: (stamp sec, 7-vector)}."""

    def poses(m):
        out = {}
        for t in m.transforms:
            tr, r = t.transform.translation, t.transform.rotation
            out[t.child_frame_id] = (t.header.stamp.sec, [tr.x, tr.y, tr.z, r.x, r.y, r.z, r.w])
        return out

    return wait_for(
        lambda: next((p for m in list(tf) if (p := poses(m)).get(child, (None,))[0] == sec), None),
        timeout,
        f"/tf of {child} at {sec} s",
    )


def reference(positions: dict) -> dict:
    """The pose of each moving joint's child link in its parent (kinematics.link_poses) at ``positions``."""
    from servo_ff.dynamics.kinematics import configuration, link_poses, link_tree

    tree = link_tree(MIMIC_URDF)
    q = configuration(tree.model, positions)
    ref = link_poses(tree.model, tree.model.createData(), q, tree.parent_frames, tree.child_frames)
    return {CHILD[j]: ref[tree.joints.index(j)] for j in positions}


def test_a_message_naming_some_joints_publishes_only_those_at_its_stamp(tf_probe, capfd):
    """No transform of an earlier message is republished with a later stamp (the old node kept every position and
    stamped all of them with each new message's stamp); a message naming only joints not in the URDF publishes
    nothing, and such a name is said once (info)."""
    h, sp, js, tf = tf_probe
    js.publish(joint_state({"j_rev": 0.5, "j_cont": 1.0, "j_pri": 0.05}, 10))
    assert {"l1", "l2", "l3"} <= set(tf_at(tf, 10, "l1"))
    n0 = len(tf)
    js.publish(joint_state({"j_cont": 1.5}, 11))
    got = tf_at(tf, 11, "l2")
    assert set(got) == {"l2"}, got  # not l1, l3 (j_rev, j_pri at 10 s) nor the mimic of j_rev
    np.testing.assert_allclose(got["l2"][1], reference({"j_cont": 1.5})["l2"], atol=1e-12)
    for _ in range(2):
        js.publish(joint_state({"other_robot_joint": 0.3}, 12))
    js.publish(joint_state({"j_pri": 0.07}, 13))  # in order after them: its /tf means they were handled
    assert set(tf_at(tf, 13, "l3")) == {"l3"}
    assert [sorted(t.child_frame_id for t in m.transforms) for m in tf[n0:]] == [["l2"], ["l3"]]
    said = [ln for ln in capfd.readouterr().err.splitlines() if "'other_robot_joint' is not in the URDF" in ln]
    assert len(said) == 1 and "INFO" in said[0], said


def test_two_sources_at_one_stamp_both_reach_tf(tf_probe):
    """Two /joint_states sources (two servo nodes, each its own joints) at the same stamp: each message is
    published with its own joints (the old node's one throttle for the whole node dropped the second)."""
    h, sp, js, tf = tf_probe
    b = h.make_node("second_source").create_publisher(type(joint_state({}, 0)), "joint_states", 100)
    wait_for(lambda: b.get_subscription_count(), 20.0, "second source matched")
    js.publish(joint_state({"j_rev": 0.2}, 20))
    b.publish(joint_state({"j_cont": 0.4, "j_pri": 0.03}, 20))
    a_tf, b_tf = tf_at(tf, 20, "l1"), tf_at(tf, 20, "l2")
    assert set(a_tf) - {"finger"} == {"l1"} and set(b_tf) == {"l2", "l3"}, (a_tf, b_tf)  # (finger: mimic of j_rev)
    ref = reference({"j_rev": 0.2, "j_cont": 0.4, "j_pri": 0.03})
    for got in (a_tf, b_tf):
        for child in set(got) - {"finger"}:
            np.testing.assert_allclose(got[child][1], ref[child], atol=1e-12)


def test_a_mimic_joint_is_published_at_multiplier_times_its_joint_plus_offset(tf_probe):
    h, sp, js, tf = tf_probe
    js.publish(joint_state({"j_rev": 0.8}, 30))
    got = tf_at(tf, 30, "finger")
    assert set(got) == {"l1", "finger"}
    np.testing.assert_allclose(got["finger"][1], reference({"j_mimic": 2.0 * 0.8 + 0.1})["finger"], atol=1e-12)
    np.testing.assert_allclose(got["l1"][1], reference({"j_rev": 0.8})["l1"], atol=1e-12)


def test_a_length_mismatch_is_one_warning_naming_the_lengths_and_no_tf(tf_probe, capfd):
    h, sp, js, tf = tf_probe
    n0 = len(tf)
    for sec in (40, 41, 42):  # within warn_throttle (600 s): one line
        js.publish(joint_state({"j_rev": 0.3, "j_cont": 0.1}, sec, n_positions=1))
    js.publish(joint_state({"j_pri": 0.02}, 43))  # in order after them: its /tf means they were handled
    tf_at(tf, 43, "l3")
    lines = [ln for ln in capfd.readouterr().err.splitlines() if "2 name(s) but 1 position(s)" in ln]
    assert len(lines) == 1 and "WARN" in lines[0] and "joint_states" in lines[0], lines
    assert [[t.child_frame_id for t in m.transforms] for m in tf[n0:]] == [["l3"]]  # none of the three
