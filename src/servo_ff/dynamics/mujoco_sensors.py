"""What a robot's sensors would read from a MuJoCo state: IMU and foot contact forces (ROS-free).

* IMU (:func:`imu_reading`): orientation of the IMU body (quaternion x, y, z, w as in ``sensor_msgs/Imu``),
  angular velocity and linear acceleration in that body's frame. The acceleration is the specific force an
  accelerometer measures (+9.81 m/s² up at rest): MuJoCo's ``mj_rnePostConstraint`` + ``mj_objectAcceleration``,
  the computation behind its ``accelerometer`` sensor, done only when read (not every physics step).
* Feet (:func:`foot_forces`): total normal contact force [N] on each foot body; :func:`support_coefficient`
  turns the two into Schwarz & Behnke's c (1: all weight on the left foot, 0: on the right, 0.5 when neither
  touches).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import mujoco
import numpy as np


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


def foot_forces(model: mujoco.MjModel, data: mujoco.MjData, feet: Sequence[int]) -> np.ndarray:
    """Total ground normal force [N] on each foot body (contacts touching a geom of that body)."""
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


def support_coefficient(forces: np.ndarray, threshold: float = 1e-3) -> float:
    """c = F_left / (F_left + F_right) from two foot forces; 0.5 when the total is below ``threshold`` [N]."""
    total = float(forces[0] + forces[1])
    return float(forces[0]) / total if total > threshold else 0.5


__all__ = ["ImuReading", "imu_reading", "foot_forces", "support_coefficient"]
