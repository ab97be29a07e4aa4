"""ROBOTIS's analytic OP3 leg IK, re-expressed (ROS-free): ROBOTIS-GIT/ROBOTIS-OP3
``op3_kinematics_dynamics/src/op3_kinematics_dynamics.cpp`` (7f5c08e) ``calcInverseKinematicsForLeg`` (the foot's
pose from the hip → six leg angles) and the joint directions its ``calcInverseKinematicsFor{Right,Left}Leg`` apply
(each joint axis' components summed; urdf/op3.urdf has the same axes). Used by :mod:`.op3_robotis_walk`."""

from __future__ import annotations

import math

import numpy as np

LEG = ("hip_yaw", "hip_roll", "hip_pitch", "knee", "ank_pitch", "ank_roll")
#: joint directions (op3_kinematics_dynamics.cpp: the sum of each joint axis' components), LEG order
DIRECTION = {"r": (-1, -1, -1, -1, 1, 1), "l": (-1, -1, 1, 1, -1, 1)}


def _rpy(roll: float, pitch: float, yaw: float) -> np.ndarray:
    cr, sr, cp, sp, cy, sy = (f(a) for a in (roll, pitch, yaw) for f in (math.cos, math.sin))
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])  # fmt: skip


def _pose(xyz, rpy) -> np.ndarray:
    m = np.eye(4)
    m[:3, :3], m[:3, 3] = _rpy(*rpy), xyz
    return m


def leg_ik(
    xyz: tuple[float, float, float], lengths: tuple[float, float, float], rpy=(0.0, 0.0, 0.0)
) -> tuple[float, ...]:
    """(hip yaw, hip roll, hip pitch, knee, ankle pitch, ankle roll) [rad, ROBOTIS's leg frame, before the joint
    directions] putting the leg end (the ankle axes' crossing, ``ankle`` below it) at ``xyz`` [m] from the hip with
    orientation ``rpy`` [rad] (``calcInverseKinematicsForLeg``); ``lengths``: (thigh, calf, ankle) [m]; out of reach:
    a ValueError naming the point."""
    th, ca, a = lengths
    t = _pose(xyz, rpy)
    v = t[:3, 3] + t[:3, 2] * a
    c = (v @ v - th * th - ca * ca) / (2.0 * th * ca)
    if not -1.0 <= c <= 1.0:
        raise ValueError(f"robotis walk: leg end {tuple(round(x, 4) for x in xyz)} m out of the leg's reach")
    knee = math.acos(c)
    da = np.linalg.inv(t)
    k, m2 = math.hypot(da[1, 3], da[2, 3]), math.hypot(da[1, 3], da[2, 3] - a)
    roll_a = math.acos(min(1.0, max(-1.0, (k * k - m2 * m2 - a * a) / (2.0 * m2 * a))))
    roll_a = -roll_a if da[1, 3] < 0.0 else roll_a
    ac = t @ np.linalg.inv(_pose((0.0, 0.0, -a), (roll_a, 0.0, 0.0)))
    yaw = math.atan2(-ac[0, 1], ac[1, 1])
    cy, sy = math.cos(yaw), math.sin(yaw)
    roll = math.atan2(ac[2, 1], -ac[0, 1] * sy + ac[1, 1] * cy)
    theta = math.atan2(ac[0, 2] * cy + ac[1, 2] * sy, ac[0, 0] * cy + ac[1, 0] * sy)
    kk, ll = math.sin(knee) * ca, -th - math.cos(knee) * ca
    mm = cy * v[0] + sy * v[1]
    nn = math.cos(roll) * v[2] + sy * math.sin(roll) * v[0] - cy * math.sin(roll) * v[1]
    s = (kk * nn + ll * mm) / (kk * kk + ll * ll)
    pitch = math.atan2(s, (nn - kk * s) / ll)
    return yaw, roll, pitch, knee, theta - knee - pitch, roll_a
