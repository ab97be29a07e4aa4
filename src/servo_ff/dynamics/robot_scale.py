"""Geometric scaling between two humanoids of one body plan (ROS-free): a leg's length from a URDF, and a height
(an obstacle, a step) carried from one robot to the other in proportion to leg length.

Used to put Schwarz & Behnke's 15 mm obstacle (NimbRo-OP, seed 002 Fig. 6) on the smaller OP3
(``bench/op3_obstacle_sweep.py --scaled``).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pinocchio as pin

from .robot import RobotModelError, load_robot

#: NimbRo-OP, hip-pitch axis to sole with the legs straight [m]: thigh 0.220 + shank 0.220 (joints
#: ``*_knee_pitch`` and ``*_ankle_pitch`` of its authors' ``robots/nimbro_op.xml``) + 0.039 ankle axis to sole
#: (``include/nimbro_op_model/dimensions.h`` ``ANKLE_Z_HEIGHT``), both in ``NimbRo/nimbro-op-ros`` a286de0,
#: ``src/nimbro_robotcontrol/hardware/nimbro_op_model``.
NIMBRO_OP_LEG = 0.479


def hip_to_sole(urdf: str | Path, hip_joint: str, sole_frame: str) -> float:
    """Vertical distance [m] from the axis of ``hip_joint`` down to ``sole_frame`` with every joint at zero (legs
    straight), root link level; raises :class:`RobotModelError` naming the file and the missing joint or frame."""
    robot = load_robot(urdf)
    model = robot.fixed
    if hip_joint not in robot.joint_names:
        raise RobotModelError(f"{Path(urdf).name}: no joint named {hip_joint!r}")
    sole = robot.frame_id(sole_frame, floating=False)
    data = model.createData()
    pin.framesForwardKinematics(model, data, robot.configuration(np.zeros(robot.n_joints)))
    hip = data.oMi[model.getJointId(hip_joint)].translation
    length = float(hip[2] - data.oMf[sole].translation[2])
    if not length > 0.0:
        raise RobotModelError(f"{Path(urdf).name}: {sole_frame!r} is not below {hip_joint!r} ({length:+.4f} m)")
    return length


def scaled_height(height: float, leg_from: float, leg_to: float) -> float:
    """``height`` [m] on a robot whose leg is ``leg_from`` [m] long, carried to one whose leg is ``leg_to`` [m]:
    ``height · leg_to / leg_from`` (geometric similarity). Non-finite or non-positive legs, or a negative or
    non-finite height, raise ValueError."""
    for name, v in (("leg_from", leg_from), ("leg_to", leg_to)):
        if not (math.isfinite(v) and v > 0.0):
            raise ValueError(f"{name} must be a finite length > 0 m, got {v!r}")
    if not (math.isfinite(height) and height >= 0.0):
        raise ValueError(f"height must be a finite length >= 0 m, got {height!r}")
    return height * leg_to / leg_from


__all__ = ["NIMBRO_OP_LEG", "hip_to_sole", "scaled_height"]
