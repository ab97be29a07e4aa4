"""Writer of urdf/nimbro_op.urdf (called by urdf/generate.py) from the source table urdf/nimbro_tables.py: the
NimbRo-OP's links and joints as its authors' nimbro_op.xml prints them, plus what that file lacks (stated in
the table): joint limits, foot collision boxes and sole frames. Figures are written with Python's shortest
round-trip repr, so the URDF reads back exactly the table's numbers.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np


def _load(name: str):
    """A sibling script loaded by path (these scripts run as files, not from a package)."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{name}.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


T = _load("nimbro_tables")
MR = _load("menagerie_robots")  # equivalent_box, rpy_matrix (the OP3 writer's maths)


def _v(values) -> str:
    return " ".join(repr(float(v)) for v in values)


def inertia_tensor(link) -> np.ndarray:
    """The link's inertia tensor [kg·m²] (the source's URDF order ixx ixy ixz iyy iyz izz)."""
    ixx, ixy, ixz, iyy, iyz, izz = link.inertia
    return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]], dtype=float)


def foot_box(side: float) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
    """(centre, size) [m] of a foot's collision box in its foot link (dimensions.h: the box its authors draw, from the
    ankle frame down to the sole; ``side`` +1 left, -1 right)."""
    centre = (T.FOOT_CENTER_OFFSET_X, side * T.FOOT_CENTER_OFFSET_Y_LEFT, -T.ANKLE_Z_HEIGHT / 2)
    return centre, (T.FOOT_LENGTH, T.FOOT_WIDTH, T.ANKLE_Z_HEIGHT)


def sole(side: float) -> tuple[float, float, float]:
    """[m] the sole frame in its foot link: the foot box's underside centre."""
    return (T.FOOT_CENTER_OFFSET_X, side * T.FOOT_CENTER_OFFSET_Y_LEFT, -T.ANKLE_Z_HEIGHT)


def link_text(link) -> str:
    axes, size = MR.equivalent_box(link.mass, inertia_tensor(link))
    geoms = MR._box("visual", link.com, axes, size)
    for foot, side, _ in T.FEET:
        if foot == link.name:
            centre, box = foot_box(side)
            for tag in ("visual", "collision"):
                geoms += f"""
    <{tag}><origin xyz="{_v(centre)}" rpy="0 0 0"/><geometry><box size="{_v(box)}"/></geometry></{tag}>"""
    ixx, ixy, ixz, iyy, iyz, izz = (repr(float(v)) for v in link.inertia)
    return f"""
  <link name="{link.name}">
    <inertial>
      <origin xyz="{_v(link.com)}" rpy="0 0 0"/>
      <mass value="{link.mass!r}"/>
      <inertia ixx="{ixx}" ixy="{ixy}" ixz="{ixz}" iyy="{iyy}" iyz="{iyz}" izz="{izz}"/>
    </inertial>{geoms}
  </link>"""


def joint_text(j) -> str:
    lo, hi = T.joint_range(j.name)
    lim = T.MX106_LIMITS if j.name in T.LEG_JOINTS else T.MX64_LIMITS
    return f"""
  <joint name="{j.name}" type="revolute">
    <parent link="{j.parent}"/><child link="{j.child}"/>
    <origin xyz="{_v(j.xyz)}" rpy="{_v(j.rpy)}"/><axis xyz="{_v(j.axis)}"/>
    <limit lower="{lo!r}" upper="{hi!r}" effort="{lim["effort"]}" velocity="{lim["velocity"]}"/>
  </joint>"""


def fixed_frame(joint: str, name: str, parent: str, xyz, rpy=(0.0, 0.0, 0.0)) -> str:
    """A massless frame ``name`` fixed to ``parent`` by the joint ``joint``."""
    return f"""
  <joint name="{joint}" type="fixed">
    <parent link="{parent}"/><child link="{name}"/><origin xyz="{_v(xyz)}" rpy="{_v(rpy)}"/>
  </joint>
  <link name="{name}"/>"""


def total_mass() -> float:
    return sum(link.mass for link in T.NIMBRO_LINKS)


CITATION = f"""
  nimbro_op: the NimbRo-OP humanoid TeenSize open platform (Schwarz et al. 2012), the robot of Schwarz & Behnke's
  experiments (seed 002 section 5), from its authors' own model
  {T.NIMBRO_SOURCE}.
  Every link's mass, centre of mass and inertia tensor and every joint's name, origin (xyz, rpy) and axis are that
  file's, as printed (table urdf/nimbro_tables.py); link and joint names are its own. Total mass
  {total_mass():.6f} kg (the platform is stated as 6.6 kg).
  Joint limits: the source's joints are continuous; these are the goals the authors' stack can send (the MX-106's
  0..4095 ticks through each joint's offset and inversion: robotcontrol/src/hw/robotinterface.cpp and the
  robot's offsets and inversions in src/nimbro/launch/config/config.yaml, same commit).
  Effort and velocity: ROBOTIS e-Manual, MX-106 (legs) 10 N.m, 4.7 rad/s; MX-64 (arms, neck) 6 N.m, 6.6 rad/s.
  Collision geometry: the source's meshes are binary STL, not used. Each foot is the box its authors draw
  (include/nimbro_op_model/dimensions.h, same commit): {T.FOOT_LENGTH} x {T.FOOT_WIDTH} m, from the ankle frame
  ({T.ANKLE_Z_HEIGHT} m above the sole) down to the sole, centred ({T.FOOT_CENTER_OFFSET_X:.4f},
  +-{T.FOOT_CENTER_OFFSET_Y_LEFT:.3f}) m in the foot link (outwards); frames l_sole / r_sole: its underside centre.
  Visuals: each link's uniform box of the same mass and principal inertias.
"""


def nimbro_op() -> str:
    """urdf/nimbro_op.urdf: nimbro_op.xml's links and joints, limits, foot boxes, camera and sole frames."""
    parts = [link_text(link) for link in T.NIMBRO_LINKS]
    parts += [joint_text(j) for j in T.NIMBRO_JOINTS]
    parts.append(fixed_frame(*T.NIMBRO_CAMERA))
    parts += [fixed_frame(f"{frame}_joint", frame, foot, sole(side)) for foot, side, frame in T.FEET]
    return '<?xml version="1.0"?>\n<!--' + CITATION + '-->\n<robot name="nimbro_op">' + "".join(parts) + "\n</robot>\n"
