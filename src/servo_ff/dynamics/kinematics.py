"""Forward kinematics for ``/tf``: each URDF joint's child link pose in its parent link, from the joint positions
(ROS-free, pinocchio) — what ``robot_state_publisher`` computes.

:func:`link_tree` reads a URDF (XML text) into a :class:`LinkTree`: its pinocchio model and one edge per URDF
joint (parent link → child link), moving (revolute, continuous, prismatic: ``/tf``) or fixed (``/tf_static``), and
the ``<mimic>`` relations of its moving joints (pinocchio builds a mimic joint as an ordinary one: its position is
:meth:`LinkTree.mimic_positions`).
:func:`link_poses` is a pure function over (model, data): the pose of each edge's child in its parent for a
configuration; :func:`configuration` builds that configuration from joint positions by name (rad, m).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

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

    q_slots: dict  # moving joint → (first configuration index, nq: 1, or 2 for continuous as cos, sin)
    # mimic joint → (the joint it mimics, multiplier, offset): position = multiplier × that joint's + offset;
    # dependency order (a joint mimicking a mimic joint after it)
    mimic: dict[str, tuple[str, float, float]] = field(default_factory=dict)

    @property
    def moving_joints(self) -> tuple[str, ...]:
        return tuple(j for j, m in zip(self.joints, self.moving) if m)

    def configuration(self, positions: Mapping[str, float]) -> np.ndarray:
        """:func:`configuration` through the indices found once (joints not in the URDF: KeyError)."""
        q = self._neutral.copy()
        for joint, value in positions.items():
            i, nq = self.q_slots[joint]
            if nq == 1:
                q[i] = value
            else:
                q[i], q[i + 1] = np.cos(value), np.sin(value)
        return q

    def mimic_positions(self, positions: Mapping[str, float]) -> dict[str, float]:
        """The positions of the mimic joints whose mimicked joint is in ``positions`` (directly or through another
        mimic joint), multiplier × its position + offset; a mimic joint already in ``positions`` keeps its value
        (as robot_state_publisher)."""
        out: dict[str, float] = {}
        for joint, (of, multiplier, offset) in self.mimic.items():
            value = positions.get(of, out.get(of))
            if value is not None and joint not in positions:
                out[joint] = multiplier * value + offset
        return out

    @property
    def _neutral(self) -> np.ndarray:
        return pin.neutral(self.model)


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
    joints, parents, children, moving, mimic = [], [], [], [], {}
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
        if kind in MOVING and (m := j.find("mimic")) is not None:
            mimic[j.get("name")] = _mimic(m, j.get("name"), name)
    try:
        model = pin.buildModelFromXML(urdf)
    except (RuntimeError, ValueError) as e:
        raise RobotModelError(f"{name}: pinocchio cannot build a model ({' '.join(str(e).split())})") from None

    def frame(link: str) -> int:
        if not model.existFrame(link, pin.BODY):
            raise RobotModelError(f"{name}: link {link!r} is not in the model")
        return model.getFrameId(link, pin.BODY)

    slots = {}
    mimic = _mimic_order(mimic, {j for j, m in zip(joints, moving) if m}, name)
    for j, m in zip(joints, moving):
        if m:
            jm = model.joints[model.getJointId(j)]
            slots[j] = (int(jm.idx_q), int(jm.nq))
    return LinkTree(
        model,
        tuple(joints),
        tuple(parents),
        tuple(children),
        np.array(moving, dtype=bool),
        np.array([frame(p) for p in parents], dtype=int),
        np.array([frame(c) for c in children], dtype=int),
        slots,
        mimic,
    )


def _mimic(element: ET.Element, joint: str, name: str) -> tuple[str, float, float]:
    """``<mimic joint= multiplier= offset=>`` → (joint, multiplier, offset), URDF defaults 1 and 0."""
    of = element.get("joint")
    if not of:
        raise RobotModelError(f"{name}: joint {joint!r} has a <mimic> without joint=")
    try:
        multiplier, offset = float(element.get("multiplier", 1.0)), float(element.get("offset", 0.0))
    except ValueError:
        raise RobotModelError(f"{name}: joint {joint!r}: <mimic> multiplier / offset not numbers") from None
    if not (np.isfinite(multiplier) and np.isfinite(offset)):
        raise RobotModelError(f"{name}: joint {joint!r}: <mimic> multiplier / offset not finite")
    return of, multiplier, offset


def _mimic_order(mimic: dict, moving: set, name: str) -> dict[str, tuple[str, float, float]]:
    """``mimic`` with each joint after the mimic joint it mimics (if it does); RobotModelError for a mimicked
    joint that is not a moving joint of the URDF, or a cycle."""
    out: dict[str, tuple[str, float, float]] = {}
    for joint in mimic:
        chain = []
        while joint in mimic and joint not in out:
            if joint in chain:
                raise RobotModelError(f"{name}: <mimic> joints mimic each other in a cycle ({', '.join(chain)})")
            chain.append(joint)
            joint = mimic[joint][0]
        for j in reversed(chain):
            if mimic[j][0] not in moving:
                raise RobotModelError(f"{name}: joint {j!r} mimics {mimic[j][0]!r}, not a moving joint of the URDF")
            out[j] = mimic[j]
    return out


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
    translation x y z [m] and unit quaternion x y z w, w >= 0 (geometry_msgs/Transform order)."""
    pin.framesForwardKinematics(model, data, q)
    ids = np.union1d(parent_frames, child_frames)
    h = np.array([data.oMf[int(i)].homogeneous for i in ids])
    p, c = h[np.searchsorted(ids, parent_frames)], h[np.searchsorted(ids, child_frames)]
    rp = p[:, :3, :3]
    out = np.empty((len(child_frames), 7))
    out[:, :3] = np.einsum("nji,nj->ni", rp, c[:, :3, 3] - p[:, :3, 3])
    out[:, 3:] = quaternions(np.einsum("nji,njk->nik", rp, c[:, :3, :3]))
    return out


def quaternions(r: np.ndarray) -> np.ndarray:
    """(n, 3, 3) rotation matrices → (n, 4) unit quaternions x y z w with w >= 0 (Shepperd's method: the
    largest of w, x, y, z computed from the diagonal, the others from the off-diagonal terms)."""
    d0, d1, d2 = r[:, 0, 0], r[:, 1, 1], r[:, 2, 2]
    case = np.argmax(np.stack([d0 + d1 + d2, d0, d1, d2], axis=1), axis=1)
    big = np.sqrt(np.maximum(1.0 + np.choose(case, [d0 + d1 + d2, d0 - d1 - d2, d1 - d0 - d2, d2 - d0 - d1]), 0.0))
    s = 0.5 / big
    a, b = r[:, 2, 1] - r[:, 1, 2], r[:, 0, 2] - r[:, 2, 0]  # 4ws·x, 4ws·y ...
    cz = r[:, 1, 0] - r[:, 0, 1]
    xy, xz, yz = r[:, 0, 1] + r[:, 1, 0], r[:, 0, 2] + r[:, 2, 0], r[:, 1, 2] + r[:, 2, 1]
    half = 0.5 * big
    q = np.choose(
        case[:, None],
        [
            np.stack([a * s, b * s, cz * s, half], axis=1),
            np.stack([half, xy * s, xz * s, a * s], axis=1),
            np.stack([xy * s, half, yz * s, b * s], axis=1),
            np.stack([xz * s, yz * s, half, cz * s], axis=1),
        ],
    )
    q *= np.where(q[:, 3:] < 0, -1.0, 1.0)
    return q / np.linalg.norm(q, axis=1, keepdims=True)


__all__ = ["LinkTree", "configuration", "link_poses", "link_tree", "quaternions"]
