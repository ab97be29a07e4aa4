"""Source tables of urdf/op3.urdf, urdf/so101.urdf and urdf/so_arm100.urdf (written by urdf/generate.py through
urdf/menagerie_robots.py).

Every number in the *_BODIES tables is copied as printed from MuJoCo Menagerie (google-deepmind/mujoco_menagerie,
Apache-2.0; file and commit in each *_SOURCE): body position and orientation in its parent, joint name, axis and
range, mass, centre of mass and inertia (MuJoCo's ``diaginertia`` with its principal axes ``quat``, or
``fullinertia`` in MuJoCo's order ixx iyy izz ixy ixz iyz). Figures that are not the source's say so where they
are defined.
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
# fmt: off
OP3_BODIES: tuple[Body, ...] = (
    Body("body_link", None, (0, 0, 0.3), None, None, _Z, None, 1.34928, (-0.01501, 0.00013, 0.06582),
         (0.704708, 0.704003, 0.0667707, -0.0575246), (0.00341264, 0.00316574, 0.00296931)),
    Body("head_pan_link", "body_link", (-0.001, 0, 0.1365), None, "head_pan", _Z, None, 0.01176, (0.00233, 0, 0.00823),
         (0.663575, 0.663575, 0.244272, -0.244272), _SHO_PITCH),
    Body("head_tilt_link", "head_pan_link", (0.01, 0.019, 0.0285), None, "head_tilt", _NY, None, 0.13631,
         (0.0023, -0.01863, 0.0277), (0.997312, 0.00973825, 0.0726131, -0.00102702),
         (0.000107452, 8.72266e-05, 4.39413e-05)),
    Body("l_sho_pitch_link", "body_link", (-0.001, 0.06, 0.111), None, "l_sho_pitch", _Y, None, 0.01176,
         (0, 0.00823, -0.00233), (0.244272, 0.663575, 0.244272, 0.663575), _SHO_PITCH),
    Body("l_sho_roll_link", "l_sho_pitch_link", (0.019, 0.0285, -0.01), None, "l_sho_roll", _NX, None, 0.17758,
         (-0.01844, 0.04514, 0.00028), (0.501853, 0.50038, -0.498173, 0.499588),
         (0.000234742, 0.00022804, 3.04183e-05)),
    Body("l_el_link", "l_sho_roll_link", (0, 0.0904, -0.0001), None, "l_el", _X, None, 0.04127,
         (-0.019, 0.07033, 0.0038), (0.483289, 0.51617, -0.51617, 0.483289), (6.8785e-05, 6.196e-05, 1.2065e-05)),
    Body("r_sho_pitch_link", "body_link", (-0.001, -0.06, 0.111), None, "r_sho_pitch", _NY, None, 0.01176,
         (0, -0.00823, -0.00233), (-0.244272, 0.663575, -0.244272, 0.663575), _SHO_PITCH),
    Body("r_sho_roll_link", "r_sho_pitch_link", (0.019, -0.0285, -0.01), None, "r_sho_roll", _NX, None, 0.17758,
         (-0.01844, -0.04514, 0.00028), (0.50038, 0.501853, -0.499588, 0.498173),
         (0.000234742, 0.00022804, 3.04183e-05)),
    Body("r_el_link", "r_sho_roll_link", (0, -0.0904, -0.0001), None, "r_el", _X, None, 0.04127,
         (-0.019, -0.07033, 0.0038), (0.51617, 0.483289, -0.483289, 0.51617), (6.8785e-05, 6.196e-05, 1.2065e-05)),
    Body("l_hip_yaw_link", "body_link", (0, 0.035, 0), None, "l_hip_yaw", _NZ, None, 0.01181, (-0.00157, 0, -0.00774),
         (0.499041, 0.500957, 0.500957, 0.499041), _HIP_YAW),
    Body("l_hip_roll_link", "l_hip_yaw_link", (-0.024, 0, -0.0285), None, "l_hip_roll", _NX, None, 0.17886,
         (0.00388, 0.00028, -0.01214), (0.502657, 0.490852, 0.498494, 0.507842), _HIP_ROLL),
    Body("l_hip_pitch_link", "l_hip_roll_link", (0.0241, 0.019, 0), None, "l_hip_pitch", _Y, None, 0.11543,
         (0.00059, -0.01901, -0.08408), (0.999682, 0.0246915, 0.00447825, -0.002482),
         (0.000104996, 9.63044e-05, 2.47492e-05)),
    Body("l_knee_link", "l_hip_pitch_link", (0, 0, -0.11015), None, "l_knee", _Y, None, 0.04015, (0, -0.02151, -0.055),
         None, (3.715e-05, 2.751e-05, 1.511e-05)),
    Body("l_ank_pitch_link", "l_knee_link", (0, 0, -0.11), None, "l_ank_pitch", _NY, None, 0.17886,
         (-0.02022, -0.01872, 0.01214), (0.490852, 0.502657, 0.507842, 0.498494), _HIP_ROLL),
    Body("l_ank_roll_link", "l_ank_pitch_link", (-0.0241, -0.019, 0), None, "l_ank_roll", _X, None, 0.06934,
         (0.02373, 0.01037, -0.0276), (0.0078515, 0.707601, 0.0113965, 0.706477),
         (0.000115818, 7.87135e-05, 4.03389e-05)),
    Body("r_hip_yaw_link", "body_link", (0, -0.035, 0), None, "r_hip_yaw", _NZ, None, 0.01181, (-0.00157, 0, -0.00774),
         (0.499041, 0.500957, 0.500957, 0.499041), _HIP_YAW),
    Body("r_hip_roll_link", "r_hip_yaw_link", (-0.024, 0, -0.0285), None, "r_hip_roll", _NX, None, 0.17886,
         (0.00388, -0.00028, -0.01214), (0.507842, 0.498494, 0.490852, 0.502657), _HIP_ROLL),
    Body("r_hip_pitch_link", "r_hip_roll_link", (0.0241, -0.019, 0), None, "r_hip_pitch", _NY, None, 0.11543,
         (0.00059, 0.01901, -0.08408), (0.999682, -0.0246915, 0.00447825, 0.002482),
         (0.000104996, 9.63044e-05, 2.47492e-05)),
    Body("r_knee_link", "r_hip_pitch_link", (0, 0, -0.11015), None, "r_knee", _NY, None, 0.04015, (0, 0.02151, -0.055),
         None, (3.715e-05, 2.751e-05, 1.511e-05)),
    Body("r_ank_pitch_link", "r_knee_link", (0, 0, -0.11), None, "r_ank_pitch", _Y, None, 0.17886,
         (-0.02022, 0.01872, 0.01214), (0.498494, 0.507842, 0.502657, 0.490852), _HIP_ROLL),
    Body("r_ank_roll_link", "r_ank_pitch_link", (-0.0241, 0.019, 0), None, "r_ank_roll", _X, None, 0.06934,
         (0.02373, -0.01037, -0.0276), (-0.0078515, 0.707601, -0.0113965, 0.706477),
         (0.000115818, 7.87135e-05, 4.03389e-05)),
)
# fmt: on
#: op3.xml's foot geoms (class "foot": boxes, mass 0), two per foot; the only collision geometry kept.
OP3_FEET: tuple[Box, ...] = (
    Box("l_ank_roll_link", (0.024, 0.013, -0.0265), None, (0.0635, 0.028, 0.004)),
    Box("l_ank_roll_link", (0.024, 0.0125, -0.0265), None, (0.057, 0.039, 0.004)),
    Box("r_ank_roll_link", (0.024, -0.013, -0.0265), None, (0.0635, 0.028, 0.004)),
    Box("r_ank_roll_link", (0.024, -0.0125, -0.0265), None, (0.057, 0.039, 0.004)),
)
#: op3.xml gives no joint ranges; its position actuators' ctrlrange is ±3.141592 rad.
OP3_RANGE = (-3.141592, 3.141592)
#: The OP3's joint ranges [rad] as ROBOTIS's own kinematics states them (not op3.xml's: it gives none), in units of
#: π: ROBOTIS-GIT/ROBOTIS-OP3 op3_kinematics_dynamics/src/op3_kinematics_dynamics.cpp (master, commit 3bc2bd5),
#: joint_limit_min_/joint_limit_max_ per joint, same joint axes as op3.xml. The knees bend one way only.
OP3_ROBOTIS_RANGE_PI: dict[str, tuple[float, float]] = {
    "head_pan": (-0.5, 0.5),
    "head_tilt": (-0.5, 0.5),
    "l_sho_pitch": (-0.5, 0.5),
    "l_sho_roll": (-0.3, 0.5),
    "l_el": (-0.5, 0.5),
    "r_sho_pitch": (-0.5, 0.5),
    "r_sho_roll": (-0.5, 0.3),
    "r_el": (-0.5, 0.5),
    "l_hip_yaw": (-0.45, 0.45),
    "l_hip_roll": (-0.3, 0.3),
    "l_hip_pitch": (-0.4, 0.4),
    "l_knee": (-0.1, 0.7),
    "l_ank_pitch": (-0.45, 0.45),
    "l_ank_roll": (-0.45, 0.45),
    "r_hip_yaw": (-0.45, 0.45),
    "r_hip_roll": (-0.3, 0.3),
    "r_hip_pitch": (-0.4, 0.4),
    "r_knee": (-0.7, 0.1),
    "r_ank_pitch": (-0.45, 0.45),
    "r_ank_roll": (-0.45, 0.45),
}
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
# fmt: off
SO101_BODIES: tuple[Body, ...] = (
    Body("base", None, (0, 0, 0), (1, 0, 0, 0), None, _ZZ, None, 0.147, (0.0137179, -5.19711e-05, 0.0334843), None,
         (0.000114686, 0.000136117, 0.000130364, -4.59787e-07, 4.97151e-06, 9.75275e-08)),
    Body("shoulder", "base", (0.0388353, 0, 0.0624), (0, 0, -1, 0), "shoulder_pan", _ZZ, (-1.91986, 1.91986), 0.100006,
         (-0.0307604, -1.7e-05, -0.0252713), None,
         (8.3759e-05, 8.10403e-05, 2.39783e-05, 7.55525e-08, -1.16342e-06, 1.54663e-07)),
    Body("upper_arm", "shoulder", (-0.0303992, -0.0182778, -0.0542), (1, -1, -1, -1), "shoulder_lift", _ZZ,
         (-1.7453293, 1.7453293), 0.103, (-0.089847, -0.008382, 0.018409), None,
         (4.08002e-05, 0.000147318, 0.000142487, -1.97819e-05, -4.03016e-08, 8.97326e-09)),
    Body("lower_arm", "upper_arm", (-0.11257, -0.028, 0), (1, 0, 0, 1), "elbow_flex", _ZZ, (-1.69, 1.69), 0.104,
         (-0.09807, 0.0032438, 0.018283), None,
         (2.87438e-05, 0.000159844, 0.00014529, 7.41152e-06, 1.26409e-06, -4.90188e-08)),
    Body("wrist", "lower_arm", (-0.1349, 0.0052, 0), (1, 0, 0, -1), "wrist_flex", _ZZ, (-1.658063, 1.658063), 0.079,
         (-0.000103312, -0.0386143, 0.0281156), None,
         (3.68263e-05, 2.5391e-05, 2.1e-05, 1.7893e-08, -5.28128e-08, 3.6412e-06)),
    Body("gripper", "wrist", (5.55112e-17, -0.0611, 0.0181), (0.0172091, -0.0172091, 0.706897, 0.706897), "wrist_roll",
         _ZZ, (-2.7438473, 2.7438473), 0.087, (0.000214, 0.000245, -0.025187), None,
         (2.75087e-05, 4.33657e-05, 3.45059e-05, -3.35241e-07, -5.7352e-06, -5.17847e-08)),
    Body("moving_jaw_so101_v1", "gripper", (0.0202, 0.0188, -0.0234), (1, 1, 0, 0), "gripper", _ZZ,
         (-0.174533, 1.7453292), 0.012, (-0.001575, -0.0300244, 0.0192755), None,
         (6.61427e-06, 1.89032e-06, 5.28738e-06, -3.19807e-07, -5.90717e-09, -1.09945e-07)),
)
# fmt: on
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
SO_ARM100_SOURCE = (
    "google-deepmind/mujoco_menagerie trs_so_arm100/so_arm100.xml, commit 13d6c48b8f59d2c4badee7756b4ea3532613cddf "
    "(Apache-2.0; TheRobotStudio SO-ARM100 v1.3, 6 x Feetech STS3215)"
)
#: so_arm100.xml writes some body frames as ``euler`` (radian, MuJoCo's default sequence xyz); as printed.
SO_ARM100_EULER: dict[str, Vec3] = {
    "Upper_Arm": (1.57079, 0, 0),
    "Lower_Arm": (-1.57079, 0, 0),
    "Wrist_Pitch_Roll": (-1.57079, 0, 0),
    "Fixed_Jaw": (0, 1.57079, 0),
}


def euler_quat(euler: Vec3) -> Quat:
    """MuJoCo ``euler`` with sequence xyz (rotations about the moving frame's x, then y, then z) → (w, x, y, z)."""
    out = np.array([1.0, 0.0, 0.0, 0.0])
    for k, angle in enumerate(euler):
        axis = np.zeros(3)
        axis[k] = math.sin(angle / 2)
        w1, v1, w2, v2 = out[0], out[1:], math.cos(angle / 2), axis
        out = np.concatenate([[w1 * w2 - v1 @ v2], w1 * v2 + w2 * v1 + np.cross(v1, v2)])
    return tuple(float(v) for v in out)


_E = {k: euler_quat(v) for k, v in SO_ARM100_EULER.items()}
_AY, _AX = (0.0, 1.0, 0.0), (1.0, 0.0, 0.0)
#: so_arm100.xml's bodies in file order. Its Base has no <inertial> (mesh geoms only): mass 0 here, no inertial in the
#: URDF (the base is fixed to the table). Joint axes and ranges are its default classes' (Rotation, Pitch, …).
# fmt: off
SO_ARM100_BODIES: tuple[Body, ...] = (
    Body("Base", None, (0, 0, 0), None, None, _AY, None, 0.0, (0, 0, 0), None, (0, 0, 0)),
    Body("Rotation_Pitch", "Base", (0, -0.0452, 0.0165), (0.707105, 0.707108, 0, 0), "Rotation", _AY, (-2.2, 2.2),
         0.119226, (-9.07886e-05, 0.0590972, 0.031089), (0.363978, 0.441169, -0.623108, 0.533504),
         (5.94278e-05, 5.89975e-05, 3.13712e-05)),
    Body("Upper_Arm", "Rotation_Pitch", (0, 0.1025, 0.0306), _E["Upper_Arm"], "Pitch", _AX, (-3.14158, 0.2),
         0.162409, (-1.72052e-05, 0.0701802, 0.00310545), (0.50104, 0.498994, -0.493562, 0.50632),
         (0.000213312, 0.000167164, 7.01522e-05)),
    Body("Lower_Arm", "Upper_Arm", (0, 0.11257, 0.028), _E["Lower_Arm"], "Elbow", _AX, (0, 3.14158),
         0.147968, (-0.00339604, 0.00137796, 0.0768007), (0.701995, 0.0787996, 0.0645626, 0.704859),
         (0.000138803, 0.000107748, 4.84242e-05)),
    Body("Wrist_Pitch_Roll", "Lower_Arm", (0, 0.0052, 0.1349), _E["Wrist_Pitch_Roll"], "Wrist_Pitch", _AX, (-2.0, 1.8),
         0.0661321, (-0.00852653, -0.0352279, -2.34622e-05), (-0.0522806, 0.705235, 0.0549524, 0.704905),
         (3.45403e-05, 2.39041e-05, 1.94704e-05)),
    Body("Fixed_Jaw", "Wrist_Pitch_Roll", (0, -0.0601, 0), _E["Fixed_Jaw"], "Wrist_Roll", _AY, (-3.14158, 3.14158),
         0.0929859, (0.00552377, -0.0280167, 0.000483583), (0.41836, 0.620891, -0.350644, 0.562599),
         (5.03136e-05, 4.64098e-05, 2.72961e-05)),
    Body("Moving_Jaw", "Fixed_Jaw", (-0.0202, -0.0244, 0), (1.34924e-11, -3.67321e-06, 1, -3.67321e-06), "Jaw",
         (0.0, 0.0, 1.0), (-0.2, 2.0), 0.0202444, (-0.00161745, -0.0303473, 0.000449646),
         (0.696562, 0.716737, -0.0239844, -0.0227026), (1.11265e-05, 8.99651e-06, 2.99548e-06)),
)
#: so_arm100.xml's jaw pads (class finger_collision, boxes); its other collision geometry is meshes.
SO_ARM100_BOXES: tuple[Box, ...] = (
    Box("Fixed_Jaw", (0.0089, -0.1014, 0), None, (0.001, 0.005, 0.004)),
    Box("Fixed_Jaw", (0.0109, -0.0914, 0), None, (0.001, 0.005, 0.006)),
    Box("Fixed_Jaw", (0.0126, -0.0768, 0), None, (0.001, 0.01, 0.007)),
    Box("Fixed_Jaw", (0.0143, -0.0572, 0), None, (0.001, 0.01, 0.008)),
    Box("Moving_Jaw", (-0.0113, -0.077, 0), None, (0.001, 0.005, 0.004)),
    Box("Moving_Jaw", (-0.0093, -0.067, 0), None, (0.001, 0.005, 0.006)),
    Box("Moving_Jaw", (-0.0073, -0.055, 0), None, (0.001, 0.01, 0.006)),
    Box("Moving_Jaw", (-0.0073, -0.035, 0), None, (0.001, 0.01, 0.008)),
)
# fmt: on
#: Feetech STS3215 at 7.4 V (datasheet): stall torque 19.5 kg·cm = 1.9 N·m, no-load 0.222 s/60° = 4.7 rad/s.
STS3215_LIMITS = dict(effort=1.9, velocity=4.7)
