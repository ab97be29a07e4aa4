"""Source table of urdf/nimbro_op.urdf (written by urdf/generate.py through urdf/nimbro_robot.py): the NimbRo-OP,
the robot of Schwarz & Behnke's experiments (seed 002 §5), from its authors' own model.

Every number in NIMBRO_LINKS and NIMBRO_JOINTS is copied as printed from NIMBRO_SOURCE (a URDF: each link's mass,
centre of mass and inertia tensor in the link frame, URDF order ixx ixy ixz iyy iyz izz; each joint's origin xyz/rpy
in its parent and its axis), in file order. Its joints are all ``continuous`` (no limits) and its collision geometry
is binary STL meshes (not read). The other figures say where they come from where they are defined. Quirks of the
source kept as printed: ``left_hip_roll_link`` carries an ankle-like inertial (the right ankle's, mirrored), the left
leg's joint origins differ from the right's by 1.2 mm in y, the right elbow's axis is tilted by 0.04 rad.
"""

from __future__ import annotations

import math
from typing import NamedTuple

Vec3 = tuple[float, float, float]


class Link(NamedTuple):
    """One link as printed: mass [kg], centre of mass [m] and inertia about it [kg·m²] (ixx ixy ixz iyy iyz izz), all
    in the link frame (the source's inertial rpy is 0 everywhere)."""

    name: str
    mass: float
    com: Vec3
    inertia: tuple[float, float, float, float, float, float]


class Joint(NamedTuple):
    """One joint as printed: parent, child, origin xyz [m] and rpy [rad] in the parent, axis in the child frame."""

    name: str
    parent: str
    child: str
    xyz: Vec3
    rpy: Vec3
    axis: Vec3


_REPO = "NimbRo/nimbro-op-ros, commit b1f777a296f0e0e382e9942d02e2ac5cca8fcd31 (unchanged at a286de0, the latest)"
NIMBRO_SOURCE = f"{_REPO}, src/nimbro_robotcontrol/hardware/nimbro_op_model/robots/nimbro_op.xml"
#: ``include/nimbro_op_model/dimensions.h`` of the same package and commit ("extra dimensions not present in the robot
#: model"): ankle frame to sole, and the foot's size and centre in the ankle frame (left foot; the right mirrored in y
#: as its leg IK does, ``trajectory_editor/src/leg_ik.cpp``: m_sign = -1 for the right foot).
DIMENSIONS_SOURCE = f"{_REPO}, src/nimbro_robotcontrol/hardware/nimbro_op_model/include/nimbro_op_model/dimensions.h"
ANKLE_Z_HEIGHT = 0.039  # [m] ankle coordinate system to the bottom of the foot
FOOT_CENTER_OFFSET_X = 0.1049 - 0.208 / 2.0  # [m]
FOOT_CENTER_OFFSET_Y_LEFT = 0.077 - 0.132 / 2.0  # [m]
FOOT_WIDTH = 0.132  # [m]
FOOT_LENGTH = 0.208  # [m]
#: The foot links (the frame of dimensions.h's "ankle coordinate system": after the ankle roll) and their side sign.
FEET = (("left_foot_link", 1.0, "l_sole"), ("right_foot_link", -1.0, "r_sole"))

# fmt: off
NIMBRO_LINKS: tuple[Link, ...] = (
    Link("trunk_link", 1.8051, (-0.016856, -0.00019822, 0.019225),
         (0.016444, 1.4574E-05, 0.00048254, 0.013972, 5.0355E-06, 0.0064508)),
    Link("right_hip_yaw_link", 0.073374, (4.7878E-16, 2.8449E-16, -0.013803),
         (2.6774E-05, 1.5536E-19, -9.0622E-19, 0.00011478, -2.2736E-19, 0.00010743)),
    Link("right_hip_roll_link", 0.35903, (0.010896, 0.00023756, -0.014538),
         (0.00015503, 1.738E-06, 8.5148E-06, 0.0003299, 2.4403E-07, 0.0002782)),
    Link("right_thigh_link", 0.38276, (0.0038549, 0.00023828, -0.1495),
         (0.0020951, 1.8755E-07, -0.00017816, 0.0020043, -5.4867E-06, 0.00027919)),
    Link("right_shank_link", 0.20549, (-0.0033779, 6.578E-10, -0.10469),
         (0.0011378, -2.8771E-12, 9.7123E-05, 0.0010393, -1.4479E-11, 0.00019656)),
    Link("right_ankle_link", 0.35844, (-0.019434, 0.00024988, 0.014536),
         (0.00015501, 1.7299E-06, -8.5156E-06, 0.00032958, -2.4435E-07, 0.00027786)),
    Link("right_foot_link", 0.1488, (0.003669, -0.0081165, -0.030903),
         (0.00018527, -1.1504E-05, -7.2667E-06, 0.00060485, 5.8883E-06, 0.00075217)),
    Link("left_hip_yaw_link", 0.073374, (4.996E-16, 2.5674E-16, -0.013803),
         (2.6774E-05, 1.9727E-19, -8.7961E-19, 0.00011478, -2.3128E-19, 0.00010743)),
    Link("left_hip_roll_link", 0.35844, (-0.019434, -0.0014499, -0.014536),
         (0.00015501, -1.7299E-06, 8.5156E-06, 0.00032958, -2.4435E-07, 0.00027786)),
    Link("left_thigh_link", 0.38276, (0.0038576, -0.0014383, -0.1495),
         (0.0020952, -1.9541E-07, -0.00017822, 0.0020044, 5.4912E-06, 0.00027919)),
    Link("left_shank_link", 0.20549, (-0.0033779, -0.0012, -0.10469),
         (0.0011378, -2.8771E-12, 9.7123E-05, 0.0010393, -1.4479E-11, 0.00019656)),
    Link("left_ankle_link", 0.35903, (-0.019418, -0.0014376, 0.014538),
         (0.00015503, -1.738E-06, -8.5148E-06, 0.0003299, 2.4403E-07, 0.0002782)),
    Link("left_foot_link", 0.1488, (0.0036084, 0.0081189, -0.03091),
         (0.0001853, 1.1466E-05, -8.3793E-06, 0.00060485, -5.9046E-06, 0.00075213)),
    Link("right_shoulder_pitch_link", 0.025434, (1.7347E-17, -0.014621, 1.6653E-16),
         (6.7511E-06, 1.5595E-20, -5.4198E-21, 1.2425E-05, -2.4006E-20, 1.4317E-05)),
    Link("right_shoulder_arm_link", 0.2575, (0.0013671, 0.00022653, -0.049517),
         (0.00081539, 1.1134E-07, -5.114E-05, 0.0007994, -2.4756E-06, 0.00012883)),
    Link("right_lower_arm_link", 0.23502, (0.0018497, -0.00091671, -0.059095),
         (0.0011613, -5.8221E-07, -7.4224E-05, 0.0011747, 2.0082E-05, 0.00010273)),
    Link("left_shoulder_pitch_link", 0.025434, (-4.1633E-17, 0.014621, -1.3878E-17),
         (6.7511E-06, 6.4644E-21, -3.365E-21, 1.2425E-05, -4.6109E-22, 1.4317E-05)),
    Link("left_upper_arm_link", 0.2575, (0.0013671, 0.00022653, -0.049517),
         (0.00081539, 1.1134E-07, -5.114E-05, 0.0007994, -2.4756E-06, 0.00012883)),
    Link("left_lower_arm_link", 0.23502, (0.001742, -6.4508E-05, -0.059095),
         (0.0011616, -2.6303E-07, -7.2367E-05, 0.0011751, 9.5624E-06, 0.00010214)),
    Link("neck_link", 0.15587, (2.1595E-05, 0.00064781, 0.033208),
         (7.5209E-05, -1.8422E-06, -4.9817E-07, 6.2999E-05, -9.9088E-08, 3.826E-05)),
    Link("head_link", 0.40746, (0.014358, 0.0005519, 0.069919),
         (0.0014813, 3.1631E-07, -4.1003E-05, 0.0016361, 6.7483E-07, 0.0017353)),
)
NIMBRO_JOINTS: tuple[Joint, ...] = (
    Joint("right_hip_yaw", "trunk_link", "right_hip_yaw_link",
          (-0.0189999999999999, -0.0550000000000002, -0.0936),
          (0, 6.12303176911189E-17, 0),
          (0, 0, 1)),
    Joint("right_hip_roll", "right_hip_yaw_link", "right_hip_roll_link",
          (-0.00721428464376577, 0, -0.0438),
          (0, 0, 0),
          (1, 0, 0)),
    Joint("right_hip_pitch", "right_hip_roll_link", "right_thigh_link",
          (0.0303142846437658, 0, 0),
          (5.55111512312578E-15, -2.66741297297632E-29, 4.80518402845576E-15),
          (0, 1, 0)),
    Joint("right_knee_pitch", "right_thigh_link", "right_shank_link",
          (0, 0, -0.220000000000023),
          (0, -0.0084770792, -1.90819582357449E-16),
          (0, 1, 0)),
    Joint("right_ankle_pitch", "right_shank_link", "right_ankle_link",
          (-0.0018649350879188, 0, -0.219992095351442),
          (-3.33066907387547E-15, 0.0084770792, -3.18321757841744E-15),
          (0, 1, 0)),
    Joint("right_ankle_roll", "right_ankle_link", "right_foot_link",
          (0, 0, 0),
          (-8.88178419700117E-15, 6.66133814775094E-15, -8.67361737996134E-18),
          (1, 0, 0)),
    Joint("left_hip_yaw", "trunk_link", "left_hip_yaw_link",
          (-0.0189999999999999, 0.0549999999999997, -0.0936),
          (0, 6.12303176911189E-17, 0),
          (0, 0, 1)),
    Joint("left_hip_roll", "left_hip_yaw_link", "left_hip_roll_link",
          (0.0230999999999998, 0.00120000000000001, -0.0438000000000001),
          (-2.22044604925031E-15, 4.12149008098868E-30, 1.85615411929518E-15),
          (1, 0, 0)),
    Joint("left_hip_pitch", "left_hip_roll_link", "left_thigh_link",
          (0, 0, 0),
          (0, 0, 0),
          (0, 1, 0)),
    Joint("left_knee_pitch", "left_thigh_link", "left_shank_link",
          (0, 0, -0.220000000000022),
          (0, -0.0084770792, 1.21430643318377E-16),
          (0, 1, 0)),
    Joint("left_ankle_pitch", "left_shank_link", "left_ankle_link",
          (-0.00186493508791841, 0, -0.219992095351442),
          (-3.94430452610506E-31, 0.0084770792, 1.99493199737333E-16),
          (0, 1, 0)),
    Joint("left_ankle_roll", "left_ankle_link", "left_foot_link",
          (0, -0.0011999999999997, 0),
          (5.20418045061929E-17, -0.00196259661281924, -5.95977312188106E-17),
          (0.999998074107886, 0, -0.00196259535290042)),
    Joint("right_shoulder_pitch", "trunk_link", "right_shoulder_pitch_link",
          (-0.0205, -0.0744999999999992, 0.1075),
          (5.55111512312579E-15, 6.12303176911189E-17, 0),
          (0, 1, 0)),
    Joint("right_shoulder_roll", "right_shoulder_pitch_link", "right_shoulder_arm_link",
          (0, -0.0380000000000002, 0),
          (-1.11022302462516E-14, 3.08148791101957E-29, 2.77555756156289E-15),
          (1, 0, 0)),
    Joint("right_elbow_pitch", "right_shoulder_arm_link", "right_lower_arm_link",
          (0.0269999999999999, 0, -0.17349723754798),
          (0.0402061998890168, 0.00160692168991438, 0.0100341647618143),
          (0.0100339834270393, 0.99914218660165, -0.0401772339697495)),
    Joint("left_shoulder_pitch", "trunk_link", "left_shoulder_pitch_link",
          (-0.0204999999999999, 0.0745000000000003, 0.1075),
          (-5.55111512312579E-15, 6.12303176911189E-17, 0),
          (0, 1, 0)),
    Joint("left_shoulder_roll", "left_shoulder_pitch_link", "left_upper_arm_link",
          (0, 0.0380000000000002, 0),
          (-2.3129646346366E-16, 3.34362837567357E-31, 1.44560289664736E-15),
          (1, 0, 0)),
    Joint("left_elbow_pitch", "left_upper_arm_link", "left_lower_arm_link",
          (0.0269999999999999, 0, -0.17349723754798),
          (1.61907524424511E-15, -1.17961196366425E-15, 4.62592926927126E-16),
          (0, 1, 0)),
    Joint("neck_yaw", "trunk_link", "neck_link",
          (-0.0284999999999998, 0, 0.1365),
          (-5.56000081322023E-15, 6.05821451922983E-17, -0.145633370434016),
          (0, 0, 1)),
    Joint("head_pitch", "neck_link", "head_link",
          (0, 0, 0.0504999999999999),
          (-5.87630490298277E-17, -6.63424384579142E-15, 0.145633370434016),
          (0, 1, 0)),
)
#: The source's one fixed frame (no inertial): joint, frame, parent, xyz, rpy, as printed.
NIMBRO_CAMERA = ("camera_joint", "camera_optical", "head_link",
                 (0.0735836299363487, -0.0320999963345818, 0.070595781755363),
                 (-1.60399263964928, 1.80630901483938E-16, -1.57079632679489))
# fmt: on

#: Joint ranges: the source gives none. These are the goals the authors' stack can send: it caps every goal to the
#: MX-106's 0…4095 ticks (one turn) after ``goal = 2048/π · cmd + tickOffset`` (cmd negated when ``invert``),
#: ``robotcontrol/src/hw/robotinterface.cpp`` (same commit); tickOffset and invert per joint are the robot's in
#: ``src/nimbro/launch/config/config.yaml`` (same commit), copied here as (offset [ticks], invert).
CONFIG_SOURCE = f"{_REPO}, src/nimbro/launch/config/config.yaml (robotcontrol/offsets, robotcontrol/joints/*/invert)"
NIMBRO_OFFSETS: dict[str, tuple[int, bool]] = {
    "head_pitch": (2048, True), "left_ankle_pitch": (2051, True), "left_ankle_roll": (2304, True),
    "left_elbow_pitch": (1526, True), "left_hip_pitch": (2041, False), "left_hip_roll": (1785, False),
    "left_hip_yaw": (2054, True), "left_knee_pitch": (1200, False), "left_shoulder_pitch": (2035, False),
    "left_shoulder_roll": (2540, True), "neck_yaw": (2048, False), "right_ankle_pitch": (1759, False),
    "right_ankle_roll": (1785, True), "right_elbow_pitch": (2550, False), "right_hip_pitch": (2030, True),
    "right_hip_roll": (2300, False), "right_hip_yaw": (2054, True), "right_knee_pitch": (2907, True),
    "right_shoulder_pitch": (2049, True), "right_shoulder_roll": (1576, True),
}  # fmt: skip
TICKS = 4096  # MX-106 position range 0…4095 = one turn (ROBOTIS e-Manual)


def joint_range(name: str) -> tuple[float, float]:
    """[rad] the goals the authors' stack can send to joint ``name`` (ticks 0…4095 through its offset and invert)."""
    offset, invert = NIMBRO_OFFSETS[name]
    lo, hi = -offset * math.pi / 2048, (TICKS - 1 - offset) * math.pi / 2048
    return (-hi, -lo) if invert else (lo, hi)


#: Servos: seed 002 §5: "NimbRo-OP primarily uses Dynamixel MX-106 [...] in its legs"; the arms and neck MX-64 as
#: urdf/humanoid20.urdf's NimbRo-OP figures (Schwarz et al. 2012) and config/servos_humanoid.yaml. (The authors'
#: config.yaml types all 20 joints MX-106, its only servo model; not followed: the papers name MX-64s.)
_LEG = ("hip_yaw", "hip_roll", "hip_pitch", "knee_pitch", "ankle_pitch", "ankle_roll")
LEG_JOINTS = tuple(f"{side}_{j}" for side in ("left", "right") for j in _LEG)
#: ROBOTIS e-Manual: MX-106 stall torque 10.0 N·m at 14.8 V, no-load 45 rpm at 12 V; MX-64 6.0 N·m, 63 rpm at 12 V
#: (the figures of urdf/generate.py's MX106 / MX64).
MX106_LIMITS = dict(effort=10.0, velocity=4.7)
MX64_LIMITS = dict(effort=6.0, velocity=6.6)
