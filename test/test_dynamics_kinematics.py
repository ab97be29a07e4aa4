"""Forward kinematics for /tf (servo_ff.dynamics.kinematics): each link's pose in its parent, composed from the
root, equals the MuJoCo body pose of the same URDF at random joint positions (an independent URDF import and
kinematics), and a bad description is one line naming the joint."""

from __future__ import annotations

import mujoco
import numpy as np
import pinocchio as pin
import pytest

from servo_ff.dynamics.kinematics import configuration, link_poses, link_tree
from servo_ff.dynamics.mujoco_model import build_model
from servo_ff.dynamics.robot import RobotModelError
from servo_ff.io.paths import share_file


def world_poses(tree, poses: np.ndarray) -> dict[str, pin.SE3]:
    """Link → world pose, composing the parent → child poses from the root link (at the identity)."""
    root = next(p for p in tree.parents if p not in tree.children)
    world = {root: pin.SE3.Identity()}
    todo = list(range(len(tree.joints)))
    while todo:
        for k in list(todo):
            if tree.parents[k] in world:
                x, y, z, qx, qy, qz, qw = poses[k]
                rel = pin.SE3(pin.Quaternion(qw, qx, qy, qz).matrix(), np.array([x, y, z]))
                world[tree.children[k]] = world[tree.parents[k]] * rel
                todo.remove(k)
    return world


@pytest.mark.parametrize("urdf", ["so101.urdf", "humanoid20.urdf"])
def test_link_poses_compose_to_the_mujoco_body_poses(urdf):
    path = share_file("urdf", urdf)
    tree = link_tree(path.read_text(), urdf)
    sim = build_model(path, base="fixed")
    m, d = sim.model, sim.data
    rng = np.random.default_rng(3)
    data = tree.model.createData()
    compared = 0
    for _ in range(5):
        q = {j: float(rng.uniform(-1.5, 1.5)) for j in tree.moving_joints}
        for j, v in q.items():
            d.qpos[m.joint(j).qposadr[0]] = v
        mujoco.mj_kinematics(m, d)
        poses = link_poses(tree.model, data, configuration(tree.model, q), tree.parent_frames, tree.child_frames)
        np.testing.assert_allclose(np.linalg.norm(poses[:, 3:], axis=1), 1.0, atol=1e-12)
        for link, pose in world_poses(tree, poses).items():
            b = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, link)
            if b < 0:
                continue  # fused into its parent by MuJoCo (fixed joint)
            np.testing.assert_allclose(pose.translation, d.xpos[b], atol=1e-9, err_msg=link)
            np.testing.assert_allclose(pose.rotation, d.xmat[b].reshape(3, 3), atol=1e-9, err_msg=link)
            compared += 1
    assert compared >= 5 * len(tree.moving_joints)  # every moving link was checked


def test_fixed_joints_are_static_and_a_revolute_joint_rotates_about_its_axis():
    tree = link_tree(share_file("urdf", "so101.urdf").read_text())
    assert tree.moving_joints == ("shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper")
    assert list(np.array(tree.joints)[~tree.moving]) == ["camera_mount_fixed", "gripper_tip_joint"]
    data = tree.model.createData()
    k = tree.joints.index("shoulder_pan")
    p0 = link_poses(tree.model, data, configuration(tree.model, {}), tree.parent_frames, tree.child_frames)
    p1 = link_poses(
        tree.model, data, configuration(tree.model, {"shoulder_pan": 0.5}), tree.parent_frames, tree.child_frames
    )
    static = ~tree.moving
    np.testing.assert_allclose(p0[static], p1[static], atol=1e-12)  # composed poses: rounding only
    np.testing.assert_allclose(p1[k, :3], p0[k, :3])  # a revolute joint moves no origin
    r0 = pin.Quaternion(p0[k, 6], *p0[k, 3:6]).matrix()
    r1 = pin.Quaternion(p1[k, 6], *p1[k, 3:6]).matrix()
    angle = np.arccos(np.clip((np.trace(r0.T @ r1) - 1) / 2, -1, 1))
    assert abs(angle - 0.5) < 1e-12


@pytest.mark.parametrize(
    "text, match",
    [
        (
            '<robot name="r"><link name="a"/><link name="b"/><joint name="j" type="floating"><parent link="a"/>'
            '<child link="b"/></joint></robot>',
            "joint 'j' of type 'floating'",
        ),
        ('<robot name="r"><link name="a"/>', "malformed URDF XML"),
        ("<mujoco/>", "expected <robot>"),
        ('<!DOCTYPE r [<!ENTITY x "y">]><robot name="r"/>', "ENTITY"),
    ],
)
def test_bad_descriptions_are_one_line(text, match):
    with pytest.raises(RobotModelError, match=match) as e:
        link_tree(text, "robot_description")
    assert "\n" not in str(e.value) and str(e.value).startswith("robot_description")


def test_quaternions_of_rotation_matrices_including_half_turns():
    from servo_ff.dynamics.kinematics import quaternions

    rng = np.random.default_rng(0)
    r = [pin.Quaternion(*(v / np.linalg.norm(v))).matrix() for v in rng.normal(size=(500, 4))]
    r += [np.diag(d).astype(float) for d in ([1, -1, -1], [-1, 1, -1], [-1, -1, 1], [1, 1, 1])]  # every branch
    q = quaternions(np.array(r))
    assert (q[:, 3] >= 0).all()
    back = np.array([pin.Quaternion(w, x, y, z).matrix() for x, y, z, w in q])
    np.testing.assert_allclose(back, np.array(r), atol=1e-12)
