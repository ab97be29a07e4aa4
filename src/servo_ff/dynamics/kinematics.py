"""Forward kinematics for ``/tf``: each URDF joint's child link pose in its parent link, from the joint positions
(ROS-free, pinocchio) — what ``robot_state_publisher`` computes.

:func:`link_tree` reads a URDF (XML text) into a :class:`LinkTree`: its pinocchio model and one edge per URDF
joint (parent link → child link), moving (revolute, continuous, prismatic: ``/tf``) or fixed (``/tf_static``).
:func:`link_poses` is a pure function over (model, data): the pose of each edge's child in its parent for a
configuration; :func:`configuration` builds that configuration from joint positions by name (rad, m).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from .robot import MAX_URDF_BYTES, RobotModelError

MOVING = ("revolute", "continuous", "prismatic")


@dataclass(frozen=True)
class LinkTree:
    """The URDF's joints as edges of the link tree, URDF order; ``moving`` True for the ones that move."""

    model: pin.Model
    joints: tuple[str, ...]
    parents: tuple[str, ...]  # parent link per joint
    children: tuple[str, ...]  # child link per joint
    moving: np.ndarray  # bool per joint
    parent_frames: np.ndarray  # pinocchio BODY frame id of each parent link
    child_frames: np.ndarray  # ... of each child link

    @property
    def moving_joints(self) -> tuple[str, ...]:
        return tuple(j for j, m in zip(self.joints, self.moving) if m)


def link_tree(urdf: str, name: str = "robot_description") -> LinkTree:
    """URDF XML text → :class:`LinkTree`; RobotModelError naming ``name`` and the joint for what cannot be used
    (too large, entity declarations, malformed XML, a floating or planar joint, pinocchio's refusal)."""
    if len(urdf.encode()) > MAX_URDF_BYTES:
        raise RobotModelError(f"{name}: larger than the {MAX_URDF_BYTES} byte limit for a URDF")
    if "<!ENTITY" in urdf:
        raise RobotModelError(f"{name}: XML entity declarations (<!ENTITY) are not accepted in a URDF")
    try:
        root = ET.fromstring(urdf)
    except ET.ParseError as e:
        raise RobotModelError(f"{name}: malformed URDF XML ({e})") from None
    if root.tag != "robot":
        raise RobotModelError(f"{name}: root element is <{root.tag}>, expected <robot>")
    joints, parents, children, moving = [], [], [], []
    for j in root.findall("joint"):
        kind = j.get("type")
        if kind not in (*MOVING, "fixed"):
            raise RobotModelError(
                f"{name}: joint {j.get('name')!r} of type {kind!r} is not supported (fixed, {MOVING})"
            )
        p, c = j.find("parent"), j.find("child")
        if p is None or c is None or not p.get("link") or not c.get("link"):
            raise RobotModelError(f"{name}: joint {j.get('name')!r} has no <parent link> / <child link>")
        joints.append(j.get("name"))
        parents.append(p.get("link"))
        children.append(c.get("link"))
        moving.append(kind in MOVING)
    try:
        model = pin.buildModelFromXML(urdf)
    except (RuntimeError, ValueError) as e:
        raise RobotModelError(f"{name}: pinocchio cannot build a model ({' '.join(str(e).split())})") from None

    def frame(link: str) -> int:
        if not model.existFrame(link, pin.BODY):
            raise RobotModelError(f"{name}: link {link!r} is not in the model")
        return model.getFrameId(link, pin.BODY)

    return LinkTree(
        model,
        tuple(joints),
        tuple(parents),
        tuple(children),
        np.array(moving, dtype=bool),
        np.array([frame(p) for p in parents], dtype=int),
        np.array([frame(c) for c in children], dtype=int),
    )


def configuration(model: pin.Model, positions: Mapping[str, float] | Sequence[tuple[str, float]]) -> np.ndarray:
    """pinocchio configuration with the named joints at their positions [rad or m] (continuous joints as
    cos, sin), the others at zero; unknown names raise KeyError naming them."""
    q = pin.neutral(model)
    for joint, value in dict(positions).items():
        if not model.existJointName(joint):
            raise KeyError(f"joint {joint!r} is not in the model")
        jm = model.joints[model.getJointId(joint)]
        if jm.nq == 1:
            q[jm.idx_q] = value
        else:  # continuous: (cos θ, sin θ)
            q[jm.idx_q : jm.idx_q + 2] = np.cos(value), np.sin(value)
    return q


def link_poses(
    model: pin.Model, data: pin.Data, q: np.ndarray, parent_frames: np.ndarray, child_frames: np.ndarray
) -> np.ndarray:
    """(n, 7): for each (parent, child) frame pair, the child's pose in the parent at configuration ``q``:
    translation x y z [m] and unit quaternion x y z w (geometry_msgs/Transform order)."""
    pin.framesForwardKinematics(model, data, q)
    out = np.empty((len(child_frames), 7))
    for k, (p, c) in enumerate(zip(parent_frames, child_frames)):
        rel = data.oMf[int(p)].actInv(data.oMf[int(c)])
        out[k, :3] = rel.translation
        out[k, 3:] = pin.Quaternion(rel.rotation).coeffs()  # x y z w
    return out


__all__ = ["LinkTree", "configuration", "link_poses", "link_tree"]
