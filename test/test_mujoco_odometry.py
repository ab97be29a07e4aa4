"""Odometry of a floating base from its MuJoCo free joint (nav_msgs/Odometry convention, REP-105): pose in the
world (odom) frame, twist in the base frame — checked against MuJoCo's own body pose and object velocity."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from servo_ff.dynamics.mujoco_model import build_model
from servo_ff.dynamics.mujoco_sensors import free_joint_odometry
from servo_ff.io.paths import share_file

HUMANOID = share_file("urdf", "humanoid20.urdf")


def test_odometry_is_the_base_pose_and_its_twist_in_the_base_frame():
    sim = build_model(HUMANOID, base="floating")
    m, d = sim.model, sim.data
    rng = np.random.default_rng(7)
    d.qpos[:3] = [0.3, -0.2, 0.5]
    q = rng.normal(size=4)
    d.qpos[3:7] = q / np.linalg.norm(q)  # w x y z, an arbitrary attitude
    d.qvel[:] = rng.normal(size=m.nv)
    mujoco.mj_forward(m, d)
    odom = free_joint_odometry(m, d, sim.root_body)
    np.testing.assert_allclose(odom.position, d.xpos[sim.root_body], atol=1e-12)
    w, x, y, z = d.xquat[sim.root_body]
    assert np.allclose(odom.orientation, [x, y, z, w], atol=1e-12) or np.allclose(
        odom.orientation, [-x, -y, -z, -w], atol=1e-12
    )
    vel = np.zeros(6)  # MuJoCo: [angular, linear] of the body frame, in the body frame
    mujoco.mj_objectVelocity(m, d, mujoco.mjtObj.mjOBJ_XBODY, sim.root_body, vel, 1)
    np.testing.assert_allclose(odom.angular_velocity, vel[:3], atol=1e-12)
    np.testing.assert_allclose(odom.linear_velocity, vel[3:], atol=1e-12)
    # the world velocity differs from the base-frame one at this attitude: a frame mix-up would fail above
    assert np.linalg.norm(odom.linear_velocity - d.qvel[:3]) > 0.1


def test_fixed_base_has_no_odometry():
    sim = build_model(share_file("urdf", "arm2r.urdf"), base="fixed")
    with pytest.raises(ValueError, match="no free joint"):
        free_joint_odometry(sim.model, sim.data, sim.root_body)
