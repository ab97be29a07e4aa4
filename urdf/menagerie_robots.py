"""Source tables for urdf/op3.urdf and urdf/so101.urdf (written by urdf/generate.py), and their writers.

Every number in OP3_BODIES and SO101_BODIES is copied as printed from MuJoCo Menagerie (google-deepmind/
mujoco_menagerie, Apache-2.0; files and commits in OP3_SOURCE / SO101_SOURCE): body position and orientation in its
parent, joint name, axis and range, mass, centre of mass and inertia (MuJoCo's ``diaginertia`` with its principal
axes ``quat``, or ``fullinertia`` in MuJoCo's order ixx iyy izz ixy ixz iyz). The meshes are not used (binary):
collision geometry is the source's own primitives (the OP3's foot boxes, the SO-101's boxes) and every link is
drawn as the uniform box with its mass and principal inertias (I1 = m/12·(b² + c²) …).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

Vec3 = tuple[float, float, float]
Quat = tuple[float, float, float, float]  # MuJoCo order (w, x, y, z), not necessarily normalised


class Body(NamedTuple):
    """One MJCF body as printed in the source (frames in the parent body; MuJoCo quaternions w, x, y, z)."""

    name: str
    parent: str | None
    pos: Vec3
    quat: Quat | None  # body frame in its parent (None: identity)
    joint: str | None  # hinge joint name (None: welded to the parent)
    axis: Vec3
    range: tuple[float, float] | None  # joint range [rad] (None: the source gives none)
    mass: float  # [kg]
    com: Vec3  # [m], body frame
    iquat: Quat | None  # principal axes of a diaginertia (None: fullinertia, or diaginertia along the body axes)
    inertia: tuple[float, ...]  # diaginertia (3) or fullinertia (6, MuJoCo order ixx iyy izz ixy ixz iyz) [kg·m²]


class Box(NamedTuple):
    """A collision box of the source: body, centre, orientation, half sizes [m]."""

    body: str
    pos: Vec3
    quat: Quat | None
    half: Vec3


OP3_SOURCE = (
    "google-deepmind/mujoco_menagerie robotis_op3/op3.xml, commit 361161b2b9b901d8f4133cb113aa6b26c8ca1bdc "
    "(Apache-2.0; ROBOTIS OP3, 20 x Dynamixel XM430-W350-R)"
)
_Z, _Y, _X = (0.0, 0.0, 1.0), (0.0, 1.0, 0.0), (1.0, 0.0, 0.0)
_NZ, _NY, _NX = (0.0, 0.0, -1.0), (0.0, -1.0, 0.0), (-1.0, 0.0, 0.0)
_HIP_ROLL = (0.000125243, 0.000108598, 4.65693e-05)
_SHO_PITCH = (4.23401e-06, 3.60599e-06, 1.65e-06)
_HIP_YAW = (4.3e-06, 4.12004e-06, 1.50996e-06)
#: op3.xml's bodies in file order (body_link carries the free joint: the floating base).
OP3_BODIES: tuple[Body, ...] = (
    Body(
        "body_link",
        None,
        (0, 0, 0.3),
        None,
        None,
        _Z,
        None,
        1.34928,
        (-0.01501, 0.00013, 0.06582),
        (0.704708, 0.704003, 0.0667707, -0.0575246),
        (0.00341264, 0.00316574, 0.00296931),
    ),
    Body(
        "head_pan_link",
        "body_link",
        (-0.001, 0, 0.1365),
        None,
        "head_pan",
        _Z,
        None,
        0.01176,
        (0.00233, 0, 0.00823),
        (0.663575, 0.663575, 0.244272, -0.244272),
        _SHO_PITCH,
    ),
    Body(
        "head_tilt_link",
        "head_pan_link",
        (0.01, 0.019, 0.0285),
        None,
        "head_tilt",
        _NY,
        None,
        0.13631,
        (0.0023, -0.01863, 0.0277),
        (0.997312, 0.00973825, 0.0726131, -0.00102702),
        (0.000107452, 8.72266e-05, 4.39413e-05),
    ),
    Body(
        "l_sho_pitch_link",
        "body_link",
        (-0.001, 0.06, 0.111),
        None,
        "l_sho_pitch",
        _Y,
        None,
        0.01176,
        (0, 0.00823, -0.00233),
        (0.244272, 0.663575, 0.244272, 0.663575),
        _SHO_PITCH,
    ),
    Body(
        "l_sho_roll_link",
        "l_sho_pitch_link",
        (0.019, 0.0285, -0.01),
        None,
        "l_sho_roll",
        _NX,
        None,
        0.17758,
        (-0.01844, 0.04514, 0.00028),
        (0.501853, 0.50038, -0.498173, 0.499588),
        (0.000234742, 0.00022804, 3.04183e-05),
    ),
    Body(
        "l_el_link",
        "l_sho_roll_link",
        (0, 0.0904, -0.0001),
        None,
        "l_el",
        _X,
        None,
        0.04127,
        (-0.019, 0.07033, 0.0038),
        (0.483289, 0.51617, -0.51617, 0.483289),
        (6.8785e-05, 6.196e-05, 1.2065e-05),
    ),
    Body(
        "r_sho_pitch_link",
        "body_link",
        (-0.001, -0.06, 0.111),
        None,
        "r_sho_pitch",
        _NY,
        None,
        0.01176,
        (0, -0.00823, -0.00233),
        (-0.244272, 0.663575, -0.244272, 0.663575),
        _SHO_PITCH,
    ),
    Body(
        "r_sho_roll_link",
        "r_sho_pitch_link",
        (0.019, -0.0285, -0.01),
        None,
        "r_sho_roll",
        _NX,
        None,
        0.17758,
        (-0.01844, -0.04514, 0.00028),
        (0.50038, 0.501853, -0.499588, 0.498173),
        (0.000234742, 0.00022804, 3.04183e-05),
    ),
    Body(
        "r_el_link",
        "r_sho_roll_link",
        (0, -0.0904, -0.0001),
        None,
        "r_el",
        _X,
        None,
        0.04127,
        (-0.019, -0.07033, 0.0038),
        (0.51617, 0.483289, -0.483289, 0.51617),
        (6.8785e-05, 6.196e-05, 1.2065e-05),
    ),
    Body(
        "l_hip_yaw_link",
        "body_link",
        (0, 0.035, 0),
        None,
        "l_hip_yaw",
        _NZ,
        None,
        0.01181,
        (-0.00157, 0, -0.00774),
        (0.499041, 0.500957, 0.500957, 0.499041),
        _HIP_YAW,
    ),
    Body(
        "l_hip_roll_link",
        "l_hip_yaw_link",
        (-0.024, 0, -0.0285),
        None,
        "l_hip_roll",
        _NX,
        None,
        0.17886,
        (0.00388, 0.00028, -0.01214),
        (0.502657, 0.490852, 0.498494, 0.507842),
        _HIP_ROLL,
    ),
    Body(
        "l_hip_pitch_link",
        "l_hip_roll_link",
        (0.0241, 0.019, 0),
        None,
        "l_hip_pitch",
        _Y,
        None,
        0.11543,
        (0.00059, -0.01901, -0.08408),
        (0.999682, 0.0246915, 0.00447825, -0.002482),
        (0.000104996, 9.63044e-05, 2.47492e-05),
    ),
    Body(
        "l_knee_link",
        "l_hip_pitch_link",
        (0, 0, -0.11015),
        None,
        "l_knee",
        _Y,
        None,
        0.04015,
        (0, -0.02151, -0.055),
        None,
        (3.715e-05, 2.751e-05, 1.511e-05),
    ),
    Body(
        "l_ank_pitch_link",
        "l_knee_link",
        (0, 0, -0.11),
        None,
        "l_ank_pitch",
        _NY,
        None,
        0.17886,
        (-0.02022, -0.01872, 0.01214),
        (0.490852, 0.502657, 0.507842, 0.498494),
        _HIP_ROLL,
    ),
    Body(
        "l_ank_roll_link",
        "l_ank_pitch_link",
        (-0.0241, -0.019, 0),
        None,
        "l_ank_roll",
        _X,
        None,
        0.06934,
        (0.02373, 0.01037, -0.0276),
        (0.0078515, 0.707601, 0.0113965, 0.706477),
        (0.000115818, 7.87135e-05, 4.03389e-05),
    ),
    Body(
        "r_hip_yaw_link",
        "body_link",
        (0, -0.035, 0),
        None,
        "r_hip_yaw",
        _NZ,
        None,
        0.01181,
        (-0.00157, 0, -0.00774),
        (0.499041, 0.500957, 0.500957, 0.499041),
        _HIP_YAW,
    ),
    Body(
        "r_hip_roll_link",
        "r_hip_yaw_link",
        (-0.024, 0, -0.0285),
        None,
        "r_hip_roll",
        _NX,
        None,
        0.17886,
        (0.00388, -0.00028, -0.01214),
        (0.507842, 0.498494, 0.490852, 0.502657),
        _HIP_ROLL,
    ),
    Body(
        "r_hip_pitch_link",
        "r_hip_roll_link",
        (0.0241, -0.019, 0),
        None,
        "r_hip_pitch",
        _NY,
        None,
        0.11543,
        (0.00059, 0.01901, -0.08408),
        (0.999682, -0.0246915, 0.00447825, 0.002482),
        (0.000104996, 9.63044e-05, 2.47492e-05),
    ),
    Body(
        "r_knee_link",
        "r_hip_pitch_link",
        (0, 0, -0.11015),
        None,
        "r_knee",
        _NY,
        None,
        0.04015,
        (0, 0.02151, -0.055),
        None,
        (3.715e-05, 2.751e-05, 1.511e-05),
    ),
    Body(
        "r_ank_pitch_link",
        "r_knee_link",
        (0, 0, -0.11),
        None,
        "r_ank_pitch",
        _Y,
        None,
        0.17886,
        (-0.02022, 0.01872, 0.01214),
        (0.498494, 0.507842, 0.502657, 0.490852),
        _HIP_ROLL,
    ),
    Body(
        "r_ank_roll_link",
        "r_ank_pitch_link",
        (-0.0241, 0.019, 0),
        None,
        "r_ank_roll",
        _X,
        None,
        0.06934,
        (0.02373, -0.01037, -0.0276),
        (-0.0078515, 0.707601, -0.0113965, 0.706477),
        (0.000115818, 7.87135e-05, 4.03389e-05),
    ),
)
#: op3.xml's foot geoms (class "foot": boxes, mass 0), two per foot; the only collision geometry kept.
OP3_FEET: tuple[Box, ...] = (
    Box("l_ank_roll_link", (0.024, 0.013, -0.0265), None, (0.0635, 0.028, 0.004)),
    Box("l_ank_roll_link", (0.024, 0.0125, -0.0265), None, (0.057, 0.039, 0.004)),
    Box("r_ank_roll_link", (0.024, -0.013, -0.0265), None, (0.0635, 0.028, 0.004)),
    Box("r_ank_roll_link", (0.024, -0.0125, -0.0265), None, (0.057, 0.039, 0.004)),
)
#: op3.xml gives no joint ranges; its position actuators' ctrlrange is ±3.141592 rad.
OP3_RANGE = (-3.141592, 3.141592)
#: ROBOTIS e-manual XM430-W350 at 12 V: stall torque 4.1 N·m, no-load speed 46 rpm.
XM430_LIMITS = dict(effort=4.1, velocity=round(46 * 2 * math.pi / 60, 4))
#: Sole frames (fixed, massless): the centre of the wider foot box's underside.
OP3_SOLES = (
    ("l_sole", "l_ank_roll_link", (0.024, 0.0125, -0.0305)),
    ("r_sole", "r_ank_roll_link", (0.024, -0.0125, -0.0305)),
)

SO101_SOURCE = (
    "google-deepmind/mujoco_menagerie robotstudio_so101/so101.xml, commit 191a7ba5e6d5ca0af05303bf725a644bcceffb0c "
    "(Apache-2.0; TheRobotStudio SO-101, 6 x Feetech STS3215)"
)
_ZZ = (0.0, 0.0, 1.0)
#: so101.xml's bodies in file order (fullinertia; every joint axis is the body's z).
SO101_BODIES: tuple[Body, ...] = (
    Body(
        "base",
        None,
        (0, 0, 0),
        (1, 0, 0, 0),
        None,
        _ZZ,
        None,
        0.147,
        (0.0137179, -5.19711e-05, 0.0334843),
        None,
        (0.000114686, 0.000136117, 0.000130364, -4.59787e-07, 4.97151e-06, 9.75275e-08),
    ),
    Body(
        "shoulder",
        "base",
        (0.0388353, 0, 0.0624),
        (0, 0, -1, 0),
        "shoulder_pan",
        _ZZ,
        (-1.91986, 1.91986),
        0.100006,
        (-0.0307604, -1.7e-05, -0.0252713),
        None,
        (8.3759e-05, 8.10403e-05, 2.39783e-05, 7.55525e-08, -1.16342e-06, 1.54663e-07),
    ),
    Body(
        "upper_arm",
        "shoulder",
        (-0.0303992, -0.0182778, -0.0542),
        (1, -1, -1, -1),
        "shoulder_lift",
        _ZZ,
        (-1.7453293, 1.7453293),
        0.103,
        (-0.089847, -0.008382, 0.018409),
        None,
        (4.08002e-05, 0.000147318, 0.000142487, -1.97819e-05, -4.03016e-08, 8.97326e-09),
    ),
    Body(
        "lower_arm",
        "upper_arm",
        (-0.11257, -0.028, 0),
        (1, 0, 0, 1),
        "elbow_flex",
        _ZZ,
        (-1.69, 1.69),
        0.104,
        (-0.098070, 0.0032438, 0.018283),
        None,
        (2.87438e-05, 0.000159844, 0.00014529, 7.41152e-06, 1.26409e-06, -4.90188e-08),
    ),
    Body(
        "wrist",
        "lower_arm",
        (-0.1349, 0.0052, 0),
        (1, 0, 0, -1),
        "wrist_flex",
        _ZZ,
        (-1.658063, 1.658063),
        0.079,
        (-0.000103312, -0.0386143, 0.0281156),
        None,
        (3.68263e-05, 2.5391e-05, 2.1e-05, 1.7893e-08, -5.28128e-08, 3.6412e-06),
    ),
    Body(
        "gripper",
        "wrist",
        (5.55112e-17, -0.0611, 0.0181),
        (0.0172091, -0.0172091, 0.706897, 0.706897),
        "wrist_roll",
        _ZZ,
        (-2.7438473, 2.7438473),
        0.087,
        (0.000214, 0.000245, -0.025187),
        None,
        (2.75087e-05, 4.33657e-05, 3.45059e-05, -3.35241e-07, -5.7352e-06, -5.17847e-08),
    ),
    Body(
        "moving_jaw_so101_v1",
        "gripper",
        (0.0202, 0.0188, -0.0234),
        (1, 1, 0, 0),
        "gripper",
        _ZZ,
        (-0.174533, 1.7453292),
        0.012,
        (-0.001575, -0.0300244, 0.0192755),
        None,
        (6.61427e-06, 1.89032e-06, 5.28738e-06, -3.19807e-07, -5.90717e-09, -1.09945e-07),
    ),
)
#: so101.xml's camera_mount body (welded to the gripper) has no <inertial>: its 0.012 kg comes from a mesh geom
#: (mass="0.012"), whose inertia the binary mesh holds. Here: 12 g as a uniform plate between the source's two camera
#: boxes (centre and size ours, from camera_box1/2: (-0.0025, 0.03, -0.03) 30x30x6 mm, (-0.001, 0.06, -0.04)
#: 42x42x6 mm); an estimate, not a source figure.
SO101_CAMERA_MOUNT_SIZE: Vec3 = (0.036, 0.06, 0.02)
_CAM_M, (_CA, _CB, _CC) = 0.012, SO101_CAMERA_MOUNT_SIZE
SO101_CAMERA_MOUNT = Body(
    "camera_mount",
    "gripper",
    (0, 0, 0),
    None,
    None,
    _ZZ,
    None,
    _CAM_M,
    (-0.002, 0.045, -0.035),
    None,
    (_CAM_M / 12 * (_CB**2 + _CC**2), _CAM_M / 12 * (_CA**2 + _CC**2), _CAM_M / 12 * (_CA**2 + _CB**2)),
)
#: so101.xml's boxes of class "collision" (the arm's structure; the gripper's fine jaw geoms are left out).
SO101_BOXES: tuple[Box, ...] = (
    Box("shoulder", (-0.030399, 0.000422, -0.0387), (1, 1, 1, -1), (0.023, 0.015, 0.01)),
    Box("shoulder", (-0.025, 0, 0.0), (1, 1, -1, 1), (0.038, 0.025, 0.02)),
    Box("upper_arm", (-0.06, 0, 0.02), (0, -1, 1, 0), (0.01, 0.07, 0.03)),
    Box("upper_arm", (-0.12, -0.014, 0.0182), (0, 1, 0, 0), (0.01, 0.02, 0.015)),
    Box("lower_arm", (-0.05, 0, 0.0182), (0, 1, 0, 0), (0.07, 0.01, 0.03)),
    Box("lower_arm", (-0.125, 0.005, 0.018), (0, -1, 0, 0), (0.023, 0.013, 0.018)),
    Box("wrist", (0, -0.0424, 0.0256), (1, 1, 1, -1), (0.029, 0.015, 0.018)),
    Box("wrist", (0, -0.02, 0.0191), (1, -1, -1, -1), (0.027, 0.01, 0.03)),
    Box("gripper", (0, -0.000218, 0.00095), (0, 1, 0, 0), (0.01, 0.01, 0.018)),
    Box("gripper", (-0.0025, 0, -0.022), None, (0.0325, 0.015, 0.015)),
    Box("moving_jaw_so101_v1", (-0.0, -0.013, 0.019), None, (0.01, 0.01, 0.015)),
)
#: The so101.xml gripper frame (site gripperframe, in the gripper body).
SO101_GRIPPER_FRAME: Vec3 = (0.012, -0.000218, -0.098127)
#: Feetech STS3215 at 7.4 V (datasheet): stall torque 19.5 kg·cm = 1.9 N·m, no-load 0.222 s/60° = 4.7 rad/s.
STS3215_LIMITS = dict(effort=1.9, velocity=4.7)


# ------------------------------------------------------------------------------------------------ maths
def quat_matrix(q: Quat | None) -> np.ndarray:
    """Rotation matrix of a MuJoCo quaternion (w, x, y, z), normalised first (None: identity)."""
    if q is None:
        return np.eye(3)
    w, x, y, z = np.asarray(q, dtype=float) / np.linalg.norm(q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def matrix_rpy(r: np.ndarray) -> Vec3:
    """URDF roll, pitch, yaw [rad] of a rotation matrix (R = Rz(yaw)·Ry(pitch)·Rx(roll))."""
    if abs(r[2, 0]) < 1 - 1e-12:
        return (math.atan2(r[2, 1], r[2, 2]), math.asin(-r[2, 0]), math.atan2(r[1, 0], r[0, 0]))
    pitch = -math.copysign(math.pi / 2, r[2, 0])
    return (0.0, pitch, math.atan2(-r[0, 1], r[1, 1]))


def rpy_matrix(rpy: Vec3) -> np.ndarray:
    """Rotation matrix of URDF roll, pitch, yaw [rad]."""
    (cr, cp, cy), (sr, sp, sy) = np.cos(rpy), np.sin(rpy)
    return np.array(
        [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ]
    )


def inertia_tensor(b: Body) -> np.ndarray:
    """The body's inertia about its centre of mass, in the body frame [kg·m²]."""
    if len(b.inertia) == 6:
        ixx, iyy, izz, ixy, ixz, iyz = b.inertia
        return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]], dtype=float)
    r = quat_matrix(b.iquat)
    return r @ np.diag(b.inertia) @ r.T


def equivalent_box(mass: float, inertia: np.ndarray) -> tuple[np.ndarray, Vec3]:
    """Principal axes (columns, a rotation) and sides [m] of the uniform box with this mass and inertia
    (a side whose square comes out below (2 mm)² is drawn 2 mm thick)."""
    values, axes = np.linalg.eigh(inertia)
    if np.linalg.det(axes) < 0:
        axes[:, 2] *= -1
    i1, i2, i3 = values
    sq = 6 / mass * np.array([i2 + i3 - i1, i1 + i3 - i2, i1 + i2 - i3])
    return axes, tuple(float(math.sqrt(max(s, 4e-6))) for s in sq)


# ------------------------------------------------------------------------------------------------ URDF text
def _g(v: float, digits: int = 9) -> str:
    """``digits`` significant digits; round-off below 1e-15 written as 0."""
    return f"{float(v):.{digits}g}" if abs(v) >= 1e-15 else "0"


def _f(values, digits: int = 9) -> str:
    return " ".join(_g(v, digits) for v in values)


def _rpy(r: np.ndarray) -> str:
    """URDF rpy of ``r`` at full double precision (9 digits of π would turn frames by 4e-9 rad)."""
    return _f(matrix_rpy(r), 17)


def _box(tag: str, pos, rot: np.ndarray, size) -> str:
    return f"""
    <{tag}><origin xyz="{_f(pos)}" rpy="{_rpy(rot)}"/><geometry><box size="{_f(size)}"/></geometry></{tag}>"""


def body_link(b: Body, boxes: tuple[Box, ...] = (), drawn: Vec3 | None = None) -> str:
    """A link with the body's inertial (full tensor in the link frame), its drawn box and its collision boxes."""
    i = inertia_tensor(b)
    if drawn is None:
        axes, size = equivalent_box(b.mass, i)
    else:
        axes, size = np.eye(3), drawn
    geoms = _box("visual", b.com, axes, size)
    for c in boxes:
        geoms += _box("visual", c.pos, quat_matrix(c.quat), [2 * h for h in c.half])
        geoms += _box("collision", c.pos, quat_matrix(c.quat), [2 * h for h in c.half])
    return f"""
  <link name="{b.name}">
    <inertial>
      <origin xyz="{_f(b.com)}" rpy="0 0 0"/>
      <mass value="{b.mass:.9g}"/>
      <inertia ixx="{_g(i[0, 0])}" ixy="{_g(i[0, 1])}" ixz="{_g(i[0, 2])}" iyy="{_g(i[1, 1])}" iyz="{
        _g(i[1, 2])
    }" izz="{_g(i[2, 2])}"/>
    </inertial>{geoms}
  </link>"""


def body_joint(b: Body, limits: dict, default_range: tuple[float, float] | None = None) -> str:
    """The joint that carries ``b`` in its parent: revolute about ``b.axis`` (fixed when it has no joint)."""
    origin = f'<origin xyz="{_f(b.pos)}" rpy="{_rpy(quat_matrix(b.quat))}"/>'
    if b.joint is None:
        return f"""
  <joint name="{b.name}_fixed" type="fixed">
    <parent link="{b.parent}"/><child link="{b.name}"/>{origin}
  </joint>"""
    lo, hi = b.range or default_range
    return f"""
  <joint name="{b.joint}" type="revolute">
    <parent link="{b.parent}"/><child link="{b.name}"/>
    {origin}<axis xyz="{_f(b.axis)}"/>
    <limit lower="{lo:.9g}" upper="{hi:.9g}" effort="{limits["effort"]}" velocity="{limits["velocity"]}"/>
  </joint>"""


def frame(name: str, parent: str, xyz: Vec3) -> str:
    """A massless frame fixed to ``parent``."""
    return f"""
  <joint name="{name}_joint" type="fixed">
    <parent link="{parent}"/><child link="{name}"/><origin xyz="{_f(xyz)}" rpy="0 0 0"/>
  </joint>
  <link name="{name}"/>"""


OP3_CITATION = f"""
  op3: ROBOTIS OP3 (20 x Dynamixel XM430-W350-R on Dynamixel 2.0), from
  {OP3_SOURCE}.
  Every body's mass, centre of mass and inertia (diaginertia rotated by its quat into the link frame, written as
  the full tensor), every joint's name, origin and axis are op3.xml's (table OP3_BODIES in urdf/menagerie_robots.py);
  link names are op3.xml's body names. Total mass {sum(b.mass for b in OP3_BODIES):.5f} kg (ROBOTIS: 3.5 kg with
  battery and cables).
  Collision geometry: op3.xml's foot boxes only (two per foot, as in its class "foot"); its other collision
  geometry is meshes, not used. Visuals: each link's uniform box of the same mass and principal inertias.
  Joint limits: op3.xml gives no range; +-3.141592 rad is its actuators' ctrlrange. Effort 4.1 N.m and velocity
  {XM430_LIMITS["velocity"]} rad/s (46 rpm): ROBOTIS e-manual XM430-W350 at 12 V (op3.xml's actuators use 5 N.m).
  Frames l_sole / r_sole: the centre of the wider foot box's underside (ours).
"""


def op3() -> str:
    """urdf/op3.urdf: op3.xml's bodies, joints and foot boxes as URDF."""
    parts = []
    for b in OP3_BODIES:
        if b.parent is not None:
            parts.append(body_joint(b, XM430_LIMITS, OP3_RANGE))
        parts.append(body_link(b, tuple(c for c in OP3_FEET if c.body == b.name)))
    parts += [frame(name, parent, xyz) for name, parent, xyz in OP3_SOLES]
    return '<?xml version="1.0"?>\n<!--' + OP3_CITATION + '-->\n<robot name="op3">' + "".join(parts) + "\n</robot>\n"


def _so101_total() -> float:
    return sum(b.mass for b in SO101_BODIES) + SO101_CAMERA_MOUNT.mass


SO101_CITATION = f"""
  so101: TheRobotStudio SO-101 arm (6 x Feetech STS3215), from
  {SO101_SOURCE}.
  Every body's mass, centre of mass and full inertia, every joint's name, origin (position and orientation in its
  parent), axis and range are so101.xml's (table SO101_BODIES in urdf/menagerie_robots.py); link names are its body
  names. Its camera_mount (welded to the gripper) has no <inertial> in the source: its 12 g mesh mass is here a
  uniform box placed between the source's camera boxes (our estimate).
  Total mass {_so101_total():.6f} kg (base {SO101_BODIES[0].mass} kg, fixed to the table).
  Collision (and visual) geometry: so101.xml's boxes of class "collision"; its meshes and the gripper's fine jaw
  geoms are not used. Other visuals: each link's uniform box of the same mass and principal inertias.
  Effort 1.9 N.m and velocity 4.7 rad/s: Feetech STS3215 datasheet at 7.4 V (19.5 kg.cm, 0.222 s/60 deg).
  Frame gripper_tip: so101.xml's site gripperframe.
"""


def so101() -> str:
    """urdf/so101.urdf: so101.xml's bodies, joints and collision boxes as URDF (fixed base)."""
    parts = []
    for b in SO101_BODIES:
        if b.parent is not None:
            parts.append(body_joint(b, STS3215_LIMITS))
        parts.append(body_link(b, tuple(c for c in SO101_BOXES if c.body == b.name)))
        if b.name == "gripper":
            cam = SO101_CAMERA_MOUNT
            parts += [body_joint(cam, STS3215_LIMITS), body_link(cam, drawn=SO101_CAMERA_MOUNT_SIZE)]
    parts.append(frame("gripper_tip", "gripper", SO101_GRIPPER_FRAME))
    return (
        '<?xml version="1.0"?>\n<!--' + SO101_CITATION + '-->\n<robot name="so101">' + "".join(parts) + "\n</robot>\n"
    )
