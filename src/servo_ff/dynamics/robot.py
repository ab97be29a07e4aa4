"""Robot description for inverse dynamics: a URDF read into pinocchio models (ROS-free).

:func:`load_robot` builds two pinocchio models from one URDF:

* ``floating`` — the URDF root link on a free-flyer joint (7 configuration / 6 velocity coordinates first),
  used when a foot is the support (Schwarz & Behnke (Compliant Robot Behavior) §5.2, see :mod:`.inverse_dynamics`);
* ``fixed`` — the URDF root link welded to the world, for arms on a fixed base.

Actuated joint names, order and limits come from the URDF (revolute, continuous — no position limit — and
prismatic; q is one number per joint, :meth:`Robot.configuration` builds pinocchio's vector). Every actuated
joint's child link must carry an ``<inertial>``; otherwise :class:`RobotModelError` names the joint and link (a
massless link would give
silently wrong torques). Before pinocchio sees the file it is checked: size limit, no XML entity declarations,
every joint names its parent and child, origins, axes, limits, masses and inertias are finite, limits are not
inverted, masses and inertia diagonals are not negative — each refusal names the file and the joint or link.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pinocchio as pin

from ..errors import ServoFFError

ACTUATED_TYPES = ("revolute", "continuous", "prismatic")


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split()) or type(e).__name__


class RobotModelError(ServoFFError, ValueError):
    """The URDF cannot be used for inverse dynamics; the message names the file, joint or link."""


@dataclass(frozen=True)
class Robot:
    """pinocchio models built from one URDF, plus the actuated joints in model order."""

    path: Path
    fixed: pin.Model  # root welded to the world
    floating: pin.Model  # root on a free-flyer joint
    joint_names: tuple[str, ...]  # actuated joints, pinocchio order (= velocity order after the base)
    lower: np.ndarray  # position limits [rad] (−inf for continuous joints)
    upper: np.ndarray
    effort: np.ndarray  # [N·m]
    velocity: np.ndarray  # [rad/s]
    continuous: np.ndarray  # bool per joint: URDF "continuous" (pinocchio stores cos θ, sin θ)
    q_index: np.ndarray  # first configuration index of each joint in the fixed model

    def configuration(self, q: np.ndarray, floating: bool = False) -> np.ndarray:
        """Joint angles (one per joint, :attr:`joint_names` order) → pinocchio configuration vector; the
        floating model gets the base at the identity first (x y z qx qy qz qw = 0 0 0 0 0 0 1)."""
        off = 7 if floating else 0
        out = np.zeros(off + self.fixed.nq)
        if floating:
            out[6] = 1.0
        if not self.continuous.any():
            out[off:] = q
            return out
        rev = ~self.continuous
        out[off + self.q_index[rev]] = q[rev]
        out[off + self.q_index[self.continuous]] = np.cos(q[self.continuous])
        out[off + self.q_index[self.continuous] + 1] = np.sin(q[self.continuous])
        return out

    @property
    def n_joints(self) -> int:
        return len(self.joint_names)

    def index(self, names) -> np.ndarray:
        """Positions of ``names`` in :attr:`joint_names`; unknown names raise with the valid list."""
        pos = {n: i for i, n in enumerate(self.joint_names)}
        unknown = [n for n in names if n not in pos]
        if unknown:
            raise RobotModelError(
                f"unknown joint name(s) {unknown} for {self.path.name}; joints: {', '.join(self.joint_names)}"
            )
        return np.array([pos[n] for n in names], dtype=int)

    def frame_id(self, name: str, floating: bool = True) -> int:
        model = self.floating if floating else self.fixed
        if not model.existFrame(name):
            raise RobotModelError(f"{self.path.name} has no frame/link named {name!r}")
        return model.getFrameId(name)


MAX_URDF_BYTES = 64 * 2**20  # a URDF larger than this is refused before parsing


def _numbers(
    path: Path, where: str, el: ET.Element | None, attr: str, count: int, default: str | None = None
) -> list[float] | None:
    """``count`` finite numbers from attribute ``attr`` of ``el`` (None if absent and no default)."""
    if el is None:
        return None
    text = el.get(attr, default)
    if text is None:
        return None
    parts = text.split()
    try:
        vals = [float(x) for x in parts]
    except ValueError:
        raise RobotModelError(f"{path.name}: {where} {attr}={text!r} is not {count} number(s)") from None
    if len(vals) != count:
        raise RobotModelError(f"{path.name}: {where} {attr}={text!r} has {len(vals)} value(s), expected {count}")
    bad = [v for v in vals if not np.isfinite(v)]
    if bad:
        raise RobotModelError(f"{path.name}: {where} {attr}={text!r} is not finite")
    return vals


def _check_link(path: Path, link: ET.Element) -> None:
    """Finite origin, mass > 0 and finite, finite inertia with a non-negative diagonal, for a link's <inertial>."""
    name = link.get("name")
    inertial = link.find("inertial")
    if inertial is None:
        return
    where = f"link {name!r} <inertial>"
    origin = inertial.find("origin")
    _numbers(path, f"{where} <origin>", origin, "xyz", 3, "0 0 0")
    _numbers(path, f"{where} <origin>", origin, "rpy", 3, "0 0 0")
    mass = inertial.find("mass")
    if mass is not None:
        (m,) = _numbers(path, f"{where} <mass>", mass, "value", 1, "0")
        if m < 0:
            raise RobotModelError(f"{path.name}: {where} <mass> value={m:g} is negative")
    inertia = inertial.find("inertia")
    if inertia is not None:
        vals = {
            k: _numbers(path, f"{where} <inertia>", inertia, k, 1, "0")[0]
            for k in ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")
        }
        neg = [k for k in ("ixx", "iyy", "izz") if vals[k] < 0]
        if neg:
            raise RobotModelError(f"{path.name}: {where} <inertia> {neg[0]}={vals[neg[0]]:g} is negative")


def _check_joint(path: Path, j: ET.Element) -> None:
    """A joint names a parent and a child link; origin, axis and limits are finite; lower <= upper."""
    name, kind = j.get("name"), j.get("type")
    where = f"joint {name!r}"
    if not name:
        raise RobotModelError(f"{path.name}: a <joint> has no name")
    for tag in ("parent", "child"):
        el = j.find(tag)
        if el is None or not el.get("link"):
            raise RobotModelError(f"{path.name}: {where} has no <{tag} link=...>")
    _numbers(path, f"{where} <origin>", j.find("origin"), "xyz", 3, "0 0 0")
    _numbers(path, f"{where} <origin>", j.find("origin"), "rpy", 3, "0 0 0")
    axis = _numbers(path, f"{where} <axis>", j.find("axis"), "xyz", 3, "1 0 0")
    if axis is not None and kind in ACTUATED_TYPES and not any(axis):
        raise RobotModelError(f"{path.name}: {where} <axis xyz> is the zero vector")
    limit = j.find("limit")
    if limit is None or kind not in ACTUATED_TYPES:
        return
    vals = {
        k: _numbers(path, f"{where} <limit>", limit, k, 1, "0")[0] for k in ("lower", "upper", "effort", "velocity")
    }
    if kind != "continuous" and vals["lower"] > vals["upper"]:
        raise RobotModelError(
            f"{path.name}: {where} <limit> is inverted: lower={vals['lower']:g} > upper={vals['upper']:g}"
        )
    for k in ("effort", "velocity"):
        if vals[k] < 0:
            raise RobotModelError(f"{path.name}: {where} <limit> {k}={vals[k]:g} is negative")


def _check_urdf(path: Path) -> dict[str, ET.Element]:
    try:
        size = path.stat().st_size
        text = path.read_bytes() if size <= MAX_URDF_BYTES else None
    except OSError as e:
        raise RobotModelError(f"{path}: cannot read ({e.strerror or e})") from None
    if text is None:
        raise RobotModelError(f"{path}: {size} bytes, larger than the {MAX_URDF_BYTES} byte limit for a URDF")
    if b"<!ENTITY" in text:  # entity expansion ("billion laughs") is never needed in a URDF
        raise RobotModelError(f"{path}: XML entity declarations (<!ENTITY) are not accepted in a URDF")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        raise RobotModelError(f"{path}: malformed URDF XML ({e})") from None
    if root.tag != "robot":
        raise RobotModelError(f"{path}: root element is <{root.tag}>, expected <robot>")
    links = {ln.get("name"): ln for ln in root.findall("link")}
    for ln in root.findall("link"):
        _check_link(path, ln)
    actuated = {}
    for j in root.findall("joint"):
        _check_joint(path, j)
        if j.get("type") not in ACTUATED_TYPES:
            continue
        name = j.get("name")
        child = j.find("child").get("link")
        inertial = links.get(child).find("inertial") if child in links else None
        mass = inertial.find("mass") if inertial is not None else None
        if mass is None or not float(mass.get("value", "0")) > 0.0:
            raise RobotModelError(
                f"{path.name}: actuated joint {name!r} moves link {child!r}, which has no "
                "<inertial> with a positive <mass>; inverse dynamics needs one"
            )
        actuated[name] = j
    if not actuated:
        raise RobotModelError(f"{path.name}: no actuated (revolute/continuous/prismatic) joints")
    return actuated


def load_robot(path: str | Path) -> Robot:
    """Read ``path`` (URDF) → :class:`Robot`; raises :class:`RobotModelError` / FileNotFoundError."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"URDF not found: {path}")
    _check_urdf(path)
    try:
        fixed = pin.buildModelFromUrdf(str(path))
        floating = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    except (RuntimeError, ValueError) as e:  # pinocchio's URDF parser (C++ exceptions)
        raise RobotModelError(f"{path}: pinocchio cannot build a model ({_one_line(e)})") from None
    names = tuple(fixed.names[1:])
    for jid in range(1, fixed.njoints):
        if fixed.joints[jid].nv != 1:
            raise RobotModelError(
                f"{path.name}: joint {fixed.names[jid]!r} has {fixed.joints[jid].nv} DoF; "
                "only 1-DoF actuated joints are supported"
            )
    q_index = np.array([fixed.joints[j].idx_q for j in range(1, fixed.njoints)], dtype=int)
    v_index = np.array([fixed.joints[j].idx_v for j in range(1, fixed.njoints)], dtype=int)
    continuous = np.array([fixed.joints[j].nq == 2 for j in range(1, fixed.njoints)])
    if not np.array_equal(v_index, np.arange(len(names))):
        raise RobotModelError(f"{path.name}: unexpected velocity layout {v_index.tolist()}")
    lower = np.array(fixed.lowerPositionLimit, dtype=float)[q_index]
    upper = np.array(fixed.upperPositionLimit, dtype=float)[q_index]
    lower[continuous], upper[continuous] = -np.inf, np.inf  # a continuous joint has no position limit
    return Robot(
        path=path,
        fixed=fixed,
        floating=floating,
        joint_names=names,
        lower=lower,
        upper=upper,
        effort=np.array(fixed.effortLimit, dtype=float),
        velocity=np.array(fixed.velocityLimit, dtype=float),
        continuous=continuous,
        q_index=q_index,
    )
