"""Writers of urdf/op3.urdf, urdf/so101.urdf and urdf/so_arm100.urdf (called by urdf/generate.py) from the source
tables of urdf/menagerie_tables.py (MuJoCo Menagerie's figures, re-exported here). The meshes are not used (binary):
collision geometry is the source's own primitives (the OP3's foot boxes, the SO-101's boxes) and every link is
drawn as the uniform box with its mass and principal inertias (I1 = m/12·(b² + c²) …).
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import numpy as np


def _load_tables():
    """urdf/menagerie_tables.py, loaded by path (these scripts run as files, not from a package)."""
    if "menagerie_tables" not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            "menagerie_tables", Path(__file__).with_name("menagerie_tables.py")
        )
        module = importlib.util.module_from_spec(spec)
        sys.modules["menagerie_tables"] = module
        spec.loader.exec_module(module)
    return sys.modules["menagerie_tables"]


T = _load_tables()
Body, Box, Vec3, Quat = T.Body, T.Box, T.Vec3, T.Quat
OP3_SOURCE, OP3_BODIES, OP3_FEET, OP3_RANGE, OP3_SOLES, OP3_ROBOTIS_RANGE_PI = (
    T.OP3_SOURCE,
    T.OP3_BODIES,
    T.OP3_FEET,
    T.OP3_RANGE,
    T.OP3_SOLES,
    T.OP3_ROBOTIS_RANGE_PI,
)
SO101_SOURCE, SO101_BODIES, SO101_BOXES = T.SO101_SOURCE, T.SO101_BODIES, T.SO101_BOXES
SO101_CAMERA_MOUNT, SO101_CAMERA_MOUNT_SIZE, SO101_GRIPPER_FRAME = (
    T.SO101_CAMERA_MOUNT,
    T.SO101_CAMERA_MOUNT_SIZE,
    T.SO101_GRIPPER_FRAME,
)
XM430_LIMITS, STS3215_LIMITS = T.XM430_LIMITS, T.STS3215_LIMITS
SO_ARM100_SOURCE, SO_ARM100_BODIES, SO_ARM100_BOXES = T.SO_ARM100_SOURCE, T.SO_ARM100_BODIES, T.SO_ARM100_BOXES
SO_ARM100_EULER, euler_quat = T.SO_ARM100_EULER, T.euler_quat


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
    (a side whose square comes out below (2 mm)² is drawn 2 mm thick). Each axis points where its largest
    component is positive (then the third is flipped if needed for a rotation): ``eigh`` leaves an eigenvector's
    sign to rounding, and a LAPACK that rounds one ulp otherwise turned a box by π in the written rpy."""
    values, axes = np.linalg.eigh(inertia)
    largest = np.abs(axes).argmax(axis=0)
    axes = axes * np.sign(axes[largest, np.arange(3)])
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
    """A link with the body's inertial (full tensor in the link frame), its drawn box and its collision boxes
    (mass 0: no inertial, the source gives none)."""
    if b.mass == 0:
        return f'''
  <link name="{b.name}"/>'''
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
  the full tensor), every joint's name, origin and axis are op3.xml's (table OP3_BODIES in urdf/menagerie_tables.py);
  link names are op3.xml's body names. Total mass {sum(b.mass for b in OP3_BODIES):.5f} kg (ROBOTIS: 3.5 kg with
  battery and cables).
  Collision geometry: op3.xml's foot boxes only (two per foot, as in its class "foot"); its other collision
  geometry is meshes, not used. Visuals: each link's uniform box of the same mass and principal inertias.
  Joint limits: op3.xml gives none; these are ROBOTIS's (ROBOTIS-GIT/ROBOTIS-OP3 op3_kinematics_dynamics.cpp,
  commit 3bc2bd5; table OP3_ROBOTIS_RANGE_PI): the knees bend forward only. Effort 4.1 N.m and velocity
  {XM430_LIMITS["velocity"]} rad/s (46 rpm): ROBOTIS e-manual XM430-W350 at 12 V (op3.xml's actuators use 5 N.m).
  Frames l_sole / r_sole: the centre of the wider foot box's underside (ours).
"""


def op3() -> str:
    """urdf/op3.urdf: op3.xml's bodies, joints and foot boxes as URDF."""
    parts = []
    for b in OP3_BODIES:
        if b.parent is not None:
            lo, hi = OP3_ROBOTIS_RANGE_PI[b.joint]
            parts.append(body_joint(b, XM430_LIMITS, (round(lo * math.pi, 6), round(hi * math.pi, 6))))
        parts.append(body_link(b, tuple(c for c in OP3_FEET if c.body == b.name)))
    parts += [frame(name, parent, xyz) for name, parent, xyz in OP3_SOLES]
    return '<?xml version="1.0"?>\n<!--' + OP3_CITATION + '-->\n<robot name="op3">' + "".join(parts) + "\n</robot>\n"


def _so101_total() -> float:
    return sum(b.mass for b in SO101_BODIES) + SO101_CAMERA_MOUNT.mass


SO101_CITATION = f"""
  so101: TheRobotStudio SO-101 arm (6 x Feetech STS3215), from
  {SO101_SOURCE}.
  Every body's mass, centre of mass and full inertia, every joint's name, origin (position and orientation in its
  parent), axis and range are so101.xml's (table SO101_BODIES in urdf/menagerie_tables.py); link names are its body
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


SO_ARM100_CITATION = f"""
  so_arm100: TheRobotStudio SO-ARM100 v1.3 arm (6 x Feetech STS3215), from
  {SO_ARM100_SOURCE}.
  Every body's mass, centre of mass and inertia (diaginertia turned by its quat, written as the full tensor), every
  joint's name, origin (position and orientation: quat, or euler as printed), axis and range are so_arm100.xml's
  (table SO_ARM100_BODIES in urdf/menagerie_tables.py); link names are its body names. Its Base has no <inertial>
  (mesh geoms only) and none here: it is fixed to the table. Total moving mass
  {sum(b.mass for b in SO_ARM100_BODIES):.7f} kg.
  Collision (and visual) geometry: its jaw pads (boxes); its meshes are not used. Other visuals: each link's uniform
  box of the same mass and principal inertias.
  Effort 1.9 N.m and velocity 4.7 rad/s: Feetech STS3215 datasheet at 7.4 V (19.5 kg.cm, 0.222 s/60 deg).
"""


def so_arm100() -> str:
    """urdf/so_arm100.urdf: so_arm100.xml's bodies, joints and jaw pads as URDF (fixed base)."""
    parts = []
    for b in SO_ARM100_BODIES:
        if b.parent is not None:
            parts.append(body_joint(b, STS3215_LIMITS))
        parts.append(body_link(b, tuple(c for c in SO_ARM100_BOXES if c.body == b.name)))
    return (
        '<?xml version="1.0"?>\n<!--'
        + SO_ARM100_CITATION
        + '-->\n<robot name="so_arm100">'
        + "".join(parts)
        + "\n</robot>\n"
    )
