"""What a robot's sensors would read from a MuJoCo state: IMU and foot contact forces (ROS-free).

* IMU (:func:`imu_reading`): orientation of the IMU body (quaternion x, y, z, w as in ``sensor_msgs/Imu``),
  angular velocity and linear acceleration in that body's frame. The acceleration is the specific force an
  accelerometer measures (+9.81 m/s² up at rest): MuJoCo's ``mj_rnePostConstraint`` + ``mj_objectAcceleration``,
  the computation behind its ``accelerometer`` sensor, done only when read (not every physics step).
* Feet (:func:`foot_forces`): total normal contact force [N] on each foot body; :func:`support_coefficient`
  turns the two into Schwarz & Behnke's c (1: all weight on the left foot, 0: on the right, 0.5 when neither
  touches).
* Odometry (:func:`free_joint_odometry`): the floating base's pose in the world (odom) frame and its twist in
  the base frame, as ``nav_msgs/Odometry`` carries them (REP-105), exact from the free joint's state.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import mujoco
import numpy as np

from ..models.kernels import HAVE_NUMBA, numba


class ImuReading(NamedTuple):
    orientation: np.ndarray  # (4,) quaternion x, y, z, w (world → IMU body)
    angular_velocity: np.ndarray  # (3,) [rad/s], IMU frame
    linear_acceleration: np.ndarray  # (3,) [m/s²], IMU frame, specific force (gravity reads +g up)


def imu_reading(model: mujoco.MjModel, data: mujoco.MjData, body: int) -> ImuReading:
    """The ideal IMU on ``body`` (no noise; the servo layer adds it)."""
    w, x, y, z = data.xquat[body]
    vel = np.zeros(6)
    mujoco.mj_objectVelocity(model, data, mujoco.mjtObj.mjOBJ_BODY, body, vel, 1)
    mujoco.mj_rnePostConstraint(model, data)
    acc = np.zeros(6)
    mujoco.mj_objectAcceleration(model, data, mujoco.mjtObj.mjOBJ_BODY, body, acc, 1)
    return ImuReading(np.array([x, y, z, w]), vel[:3].copy(), acc[3:].copy())


class Odometry(NamedTuple):
    position: np.ndarray  # (3,) [m], base frame origin in the world
    orientation: np.ndarray  # (4,) quaternion x, y, z, w (world → base)
    linear_velocity: np.ndarray  # (3,) [m/s] of the base frame origin, base frame
    angular_velocity: np.ndarray  # (3,) [rad/s], base frame


def free_joint_odometry(model: mujoco.MjModel, data: mujoco.MjData, body: int) -> Odometry:
    """Pose and twist of ``body`` from its free joint (MuJoCo: qpos = position, quaternion w x y z in the world;
    qvel = linear velocity in the world, angular velocity in the body frame); ValueError if it has none."""
    j = int(model.body_jntadr[body])
    if j < 0 or model.jnt_type[j] != mujoco.mjtJoint.mjJNT_FREE:
        raise ValueError(f"body {model.body(body).name!r} has no free joint (fixed base: no odometry)")
    a, d = int(model.jnt_qposadr[j]), int(model.jnt_dofadr[j])
    q = data.qpos[a + 3 : a + 7] / np.linalg.norm(data.qpos[a + 3 : a + 7])
    lin = np.zeros(3)
    mujoco.mju_rotVecQuat(lin, data.qvel[d : d + 3], np.array([q[0], -q[1], -q[2], -q[3]]))  # world → base
    return Odometry(
        data.qpos[a : a + 3].copy(), np.array([q[1], q[2], q[3], q[0]]), lin, data.qvel[d + 3 : d + 6].copy()
    )


def foot_forces(model: mujoco.MjModel, data: mujoco.MjData, feet: Sequence[int]) -> np.ndarray:
    """Total ground normal force [N] on each foot body (contacts touching a geom of that body).

    A contact's normal force is the first component of ``mj_contactForce``: the sum of its pyramid-edge forces
    in ``efc_force`` (pyramidal cones; one row when condim is 1), the first row for elliptic cones. Compiled
    with numba when available (one pass over the contacts), else :func:`foot_forces_py`."""
    out = np.zeros(len(feet))
    if data.ncon == 0 or not len(feet):
        return out
    if _FEET_KERNEL is None:
        return foot_forces_py(model, data, feet)
    con = data.contact
    _FEET_KERNEL(
        data.efc_force,
        con.efc_address,
        con.dim,
        con.geom1,
        con.geom2,
        model.geom_bodyid,
        np.asarray(feet, dtype=np.int64),  # no copy when given as int64 already
        model.opt.cone == _PYRAMIDAL,
        out,
    )
    return out


def foot_forces_py(model: mujoco.MjModel, data: mujoco.MjData, feet: Sequence[int]) -> np.ndarray:
    """:func:`foot_forces` through ``mj_contactForce``, contact by contact (the reference of the kernel)."""
    out = np.zeros(len(feet))
    if data.ncon == 0 or not len(feet):
        return out
    con = data.contact
    b1, b2 = model.geom_bodyid[con.geom1], model.geom_bodyid[con.geom2]
    f6 = np.zeros(6)
    for k, fb in enumerate(feet):
        for i in np.flatnonzero((b1 == fb) | (b2 == fb)):
            mujoco.mj_contactForce(model, data, int(i), f6)
            out[k] += abs(f6[0])
    return out


def _build_feet_kernel():
    @numba.njit(cache=True, nogil=True)
    def feet_kernel(efc_force, adr, dim, geom1, geom2, geom_bodyid, feet, pyramidal, out):
        for i in range(adr.shape[0]):
            if adr[i] < 0:
                continue  # excluded from the constraint: no force
            rows = max(2 * (dim[i] - 1), 1) if pyramidal else 1
            f = 0.0
            for r in range(rows):
                f += efc_force[adr[i] + r]
            b1, b2 = geom_bodyid[geom1[i]], geom_bodyid[geom2[i]]
            for k in range(feet.shape[0]):
                if b1 == feet[k] or b2 == feet[k]:
                    out[k] += abs(f)

    return feet_kernel


_PYRAMIDAL = int(mujoco.mjtCone.mjCONE_PYRAMIDAL)
_FEET_KERNEL = _build_feet_kernel() if HAVE_NUMBA else None


def support_coefficient(forces: np.ndarray, threshold: float = 1e-3) -> float:
    """c = F_left / (F_left + F_right) from two foot forces; 0.5 when the total is below ``threshold`` [N]."""
    total = float(forces[0] + forces[1])
    return float(forces[0]) / total if total > threshold else 0.5


__all__ = ["ImuReading", "imu_reading", "foot_forces", "foot_forces_py", "support_coefficient"]
