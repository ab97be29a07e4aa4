"""Any robot description → a MuJoCo model ready for the servo layer (ROS-free).

:func:`build_model` takes a URDF (a path, or the XML text as ROS's ``robot_description`` holds it) or an MJCF
(path or text) and returns a :class:`SimModel`:

* URDF, ``base="fixed"``: the root link welded to the world (arms, benches);
* URDF, ``base="floating"``: a free joint on the root link, a ground plane, and the URDF's ``<collision>``
  geometry (MuJoCo's URDF importer keeps it and drops visuals) — the feet stand on it;
* MJCF: used as written (its own base, ground and sensors);
* ``menagerie:<name>[/<entry>]``: a MuJoCo Menagerie robot's MJCF (:mod:`.menagerie`; the optional package
  ``mujoco-menagerie`` downloads and caches it), used as written.

Checked before MuJoCo compiles, each failure one :class:`SimModelError` line naming the joint or link:
a URDF joint that moves a link without a positive ``<inertial>`` mass (counting the links welded to it), and a
floating-base robot whose foot links carry no collision geometry. MuJoCo's own compile errors are re-raised as
one line too.
"""

from __future__ import annotations

import logging
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import mujoco
import numpy as np

from ..errors import ServoFFError
from .menagerie import MenagerieSourceError, is_menagerie, resolve_menagerie

log = logging.getLogger(__name__)

MOVING_TYPES = ("revolute", "continuous", "prismatic", "floating", "planar")
Base = Literal["fixed", "floating"]


class SimModelError(ServoFFError, ValueError):
    """The robot description cannot be simulated; the message names the file, joint or link."""


@dataclass
class SimModel:
    """A compiled model and what the servo layer needs to know about it."""

    model: mujoco.MjModel
    data: mujoco.MjData
    joint_names: tuple[str, ...]  # hinge joints, model order (the joints servos can drive)
    floating: bool  # the root body has a free joint
    root_body: int  # body id of the trunk (floating) or of the first moving body's parent chain root
    feet: tuple[int, ...]  # body ids of the foot links (floating base), in the order given
    source: str  # file name or "<string>", for messages


def _is_text(source: str | Path) -> bool:
    return isinstance(source, str) and source.lstrip().startswith("<")


def _read(source: str | Path) -> tuple[str, str, Path | None]:
    """(XML text, name for messages, directory for relative mesh paths)."""
    if _is_text(source):
        return str(source), "<string>", None
    path = Path(source)
    if not path.is_file():
        raise SimModelError(f"{path}: no such robot description file")
    return path.read_text(encoding="utf-8"), path.name, path.parent


def _links_welded(root: ET.Element) -> dict[str, list[str]]:
    """link → links attached to it by fixed joints (MuJoCo fuses them into one body)."""
    out: dict[str, list[str]] = {}
    for j in root.findall("joint"):
        if j.get("type") == "fixed":
            out.setdefault(j.find("parent").get("link"), []).append(j.find("child").get("link"))
    return out


def _welded_group(link: str, welded: dict[str, list[str]]) -> list[str]:
    group, todo = [], [link]
    while todo:
        cur = todo.pop()
        group.append(cur)
        todo += welded.get(cur, [])
    return group


def _mass(link: ET.Element | None) -> float:
    inertial = link.find("inertial") if link is not None else None
    mass = inertial.find("mass") if inertial is not None else None
    try:
        return float(mass.get("value", "0")) if mass is not None else 0.0
    except ValueError:
        return 0.0


def check_urdf(text: str, name: str, floating: bool, feet: Sequence[str] | None) -> tuple[str, ...]:
    """Inertials on moving links and (floating base) collision geometry on the feet; returns the foot links."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        raise SimModelError(f"{name}: malformed URDF XML ({e})") from None
    links = {ln.get("name"): ln for ln in root.findall("link")}
    welded = _links_welded(root)
    for j in root.findall("joint"):
        if j.get("type") not in MOVING_TYPES:
            continue
        child = j.find("child").get("link")
        if not any(_mass(links.get(lk)) > 0.0 for lk in _welded_group(child, welded)):
            raise SimModelError(
                f"{name}: joint {j.get('name')!r} moves link {child!r}, which has no <inertial> "
                "with a positive <mass> (nor does any link welded to it)"
            )
    if not floating:
        return ()
    if feet is None:
        feet = tuple(n for n in links if "foot" in n.lower())
        if not feet:
            raise SimModelError(f"{name}: floating base but no link named *foot*; name the foot links (feet=...)")
    for foot in feet:
        if foot not in links:
            raise SimModelError(f"{name}: foot link {foot!r} does not exist; links: {', '.join(links)}")
        if not any(links[lk].find("collision") is not None for lk in _welded_group(foot, welded)):
            raise SimModelError(
                f"{name}: foot link {foot!r} has no <collision> geometry; a floating-base robot "
                "stands on its feet's collision geometry"
            )
    return tuple(feet)


def _compile(spec: mujoco.MjSpec, name: str) -> mujoco.MjModel:
    try:
        return spec.compile()
    except ValueError as e:
        raise SimModelError(f"{name}: MuJoCo cannot compile it: {' '.join(str(e).split())}") from None


def build_model(
    source: str | Path,
    base: Base | None = None,
    feet: Sequence[str] | None = None,
    dt: float = 0.001,
    ground: bool | None = None,
    obstacle_slot: bool = False,
    solref: tuple[float, float] | None = None,
) -> SimModel:
    """Compile ``source`` (URDF or MJCF, path or XML text) with physics step ``dt`` [s].

    URDF: ``base`` "fixed" (default) or "floating"; ``ground`` (default: floating) adds a plane at z = 0;
    ``feet`` names the foot links (default: the links whose name contains "foot"). MJCF: ``base`` must be None
    or match the file (a free joint on the first body = floating); ``feet`` names bodies. ``obstacle_slot``
    (URDF with ground): a world box geom named ``obstacle`` parked 10 m below the ground, to be moved (and sized)
    under a foot by setting ``model.geom_pos``/``geom_size`` (Schwarz & Behnke's obstacle experiment).
    ``solref`` (URDF): (time constant [s], damping ratio) of every geom, the ground and obstacle included (a URDF
    cannot carry it; op3.xml's is (0.004, 1)); None: MuJoCo's default (0.02, 1). The time constant must be at least
    2·``dt`` (MuJoCo's rule for a stable contact). An MJCF keeps its own (Menagerie's op3.xml: the same 0.004).
    """
    if is_menagerie(source):
        try:
            source = resolve_menagerie(str(source))
        except MenagerieSourceError as e:
            raise SimModelError(str(e)) from None
    text, name, folder = _read(source)
    try:
        tag = ET.fromstring(text).tag
    except ET.ParseError as e:
        raise SimModelError(f"{name}: malformed XML ({e})") from None
    if tag not in ("robot", "mujoco"):
        raise SimModelError(f"{name}: root element <{tag}> is neither URDF <robot> nor MJCF <mujoco>")
    if not np.isfinite(dt) or dt <= 0:
        raise SimModelError(f"dt must be a positive time step [s], got {dt}")
    urdf = tag == "robot"
    if solref is not None and urdf:
        if not (np.isfinite(solref).all() and solref[0] >= 2 * dt and solref[1] > 0):
            raise SimModelError(f"{name}: contact solref {tuple(solref)} needs a time constant >= 2·dt = {2 * dt} s")
    elif solref is not None:
        log.warning("%s: contact_solref %s not applied: an MJCF keeps its own contact parameters", name, tuple(solref))
    if urdf:
        floating = base == "floating"
        if base not in (None, "fixed", "floating"):
            raise SimModelError(f"base must be 'fixed' or 'floating', got {base!r}")
        foot_links = check_urdf(text, name, floating, feet)
    try:
        spec = mujoco.MjSpec.from_file(str(source)) if folder is not None else mujoco.MjSpec.from_string(text)
    except ValueError as e:
        raise SimModelError(f"{name}: MuJoCo cannot read it: {' '.join(str(e).split())}") from None
    if urdf:
        if floating:
            spec.worldbody.first_body().add_freejoint()
        if ground if ground is not None else floating:
            spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[5.0, 5.0, 0.1], friction=[1.0, 0.005, 1e-4])
            if obstacle_slot:
                spec.worldbody.add_geom(
                    name="obstacle",
                    type=mujoco.mjtGeom.mjGEOM_BOX,
                    size=[0.12, 0.08, 0.0075],
                    pos=[0.0, 0.0, -10.0],
                    friction=[1.0, 0.005, 1e-4],
                )
    spec.option.timestep = dt
    if solref is not None and urdf:
        for geom in spec.geoms:
            geom.solref = list(solref)
    if urdf and obstacle_slot and (ground if ground is not None else floating):
        # the world body's bounding-volume tree is built at compile time around the parked box (10 m down): with the
        # midphase on, the box moved under a foot never collides (no contact at all, measured)
        spec.option.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_MIDPHASE)
    model = _compile(spec, name)
    if urdf:
        root = int(model.body(spec.worldbody.first_body().name).id) if model.nbody > 1 else 0
    else:
        floating = model.njnt > 0 and model.jnt_type[0] == mujoco.mjtJoint.mjJNT_FREE
        if base is not None and (base == "floating") != floating:
            raise SimModelError(
                f"{name}: base={base!r} but the MJCF's first body {'has' if floating else 'has no'} free joint"
            )
        root = int(model.jnt_bodyid[0]) if floating else (1 if model.nbody > 1 else 0)
        foot_links = tuple(feet or ())
    feet_ids = []
    for foot in foot_links:
        body = _foot_body(model, foot, name)
        feet_ids.append(body)
    hinges = tuple(model.joint(j).name for j in range(model.njnt) if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE)
    return SimModel(model, mujoco.MjData(model), hinges, floating, root, tuple(feet_ids), name)


def _foot_body(model: mujoco.MjModel, foot: str, name: str) -> int:
    body = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, foot)
    if body < 0:
        raise SimModelError(f"{name}: no body named {foot!r} after compiling (feet must be moving links)")
    if not any(
        model.geom_bodyid[g] == body and (model.geom_contype[g] or model.geom_conaffinity[g])
        for g in range(model.ngeom)
    ):
        raise SimModelError(f"{name}: foot {foot!r} has no colliding geometry")
    return int(body)


def place_on_ground(sim: SimModel, qadr: np.ndarray, q0: np.ndarray, clearance: float = 1e-4) -> float:
    """Floating base: joints at ``q0``, trunk upright at the origin, lowest corner of any colliding geom's
    bounding box ``clearance`` above the ground (world geoms do not count); returns the trunk height."""
    model, data = sim.model, sim.data
    mujoco.mj_resetData(model, data)
    free = model.jnt_qposadr[model.body_jntadr[sim.root_body]]
    data.qpos[free + 3 : free + 7] = [1.0, 0.0, 0.0, 0.0]
    data.qpos[qadr] = q0
    data.qpos[free + 2] = 1.0
    mujoco.mj_kinematics(model, data)
    corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float)
    lowest = np.inf
    for g in range(model.ngeom):
        if model.geom_bodyid[g] == 0 or not (model.geom_contype[g] or model.geom_conaffinity[g]):
            continue
        center, half = model.geom_aabb[g, :3], model.geom_aabb[g, 3:]
        z = (data.geom_xpos[g] + (center + corners * half) @ data.geom_xmat[g].reshape(3, 3).T)[:, 2]
        lowest = min(lowest, z.min())
    data.qpos[free + 2] = 1.0 - lowest + clearance
    mujoco.mj_forward(model, data)
    return float(data.qpos[free + 2])


__all__ = ["SimModel", "SimModelError", "build_model", "check_urdf", "place_board", "place_obstacle", "place_on_ground"]


def place_obstacle(
    model: mujoco.MjModel, data: mujoco.MjData, geom: int, feet: Sequence[int], foot_name: str, height: float
) -> None:
    """Box ``geom`` ``height`` [m] high under the present footprint of the foot ``foot_name`` (empty: the second of
    ``feet``, body ids), its top at ``height``: the foot's collision box in x, in y 5 mm narrower on the side of
    the other foot (the feet may stand edge to edge); ``height`` ≤ 0 moves it out of the way."""
    m, d = model, data
    foot = int(m.body(foot_name).id) if foot_name else feet[1 if len(feet) > 1 else 0]
    if height <= 0:
        m.geom_pos[geom] = [0.0, 0.0, -10.0]
    else:
        fg = next(i for i in range(m.ngeom) if m.geom_bodyid[i] == foot and m.geom_contype[i])
        x, y = d.geom_xpos[fg][:2]
        hx, hy = m.geom_size[fg][:2] if m.geom_type[fg] == mujoco.mjtGeom.mjGEOM_BOX else m.geom_aabb[fg][3:5]
        other = [f for f in feet if f != foot]
        out = float(np.sign(y - d.xpos[other[0]][1])) if other else 0.0
        size = [hx, hy - 0.0025 * abs(out), height / 2]
        _resize_box(m, geom, size, [x, y + 0.0025 * out, height / 2])
    mujoco.mj_forward(m, d)


OBSTACLE_SHAPES = ("foot_box", "board")  # place_obstacle, place_board
BOARD_GAP = 0.005  # [m] the board's near edge ahead of the front of the feet when it is placed
BOARD_WIDTH = 0.4  # [m] across the path (y): under both feet's tracks
BOARD_LENGTH = 1.0  # [m] along the path (x)


def _resize_box(m: mujoco.MjModel, geom: int, half: Sequence[float], pos: Sequence[float]) -> None:
    """Box ``geom`` with half-sizes ``half`` [m] at ``pos`` [m]; its bounding box and sphere follow (the broad phase
    tests them: with the compile-time ones of the parked slot the box collides with nothing)."""
    m.geom_size[geom] = half
    m.geom_aabb[geom] = [0.0, 0.0, 0.0, *half]
    m.geom_rbound[geom] = float(np.linalg.norm(half))
    m.geom_pos[geom] = pos


def sole_front(model: mujoco.MjModel, data: mujoco.MjData, feet: Sequence[int]) -> float:
    """[m] the largest world x of any colliding geom of the bodies ``feet`` (bounding-box corners)."""
    corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float)
    front = -np.inf
    for g in range(model.ngeom):
        if model.geom_bodyid[g] in feet and (model.geom_contype[g] or model.geom_conaffinity[g]):
            center, half = model.geom_aabb[g, :3], model.geom_aabb[g, 3:]
            x = (data.geom_xpos[g] + (center + corners * half) @ data.geom_xmat[g].reshape(3, 3).T)[:, 0]
            front = max(front, float(x.max()))
    return front


def place_board(
    model: mujoco.MjModel,
    data: mujoco.MjData,
    geom: int,
    feet: Sequence[int],
    height: float,
    gap: float = BOARD_GAP,
    width: float = BOARD_WIDTH,
    length: float = BOARD_LENGTH,
) -> None:
    """Box ``geom`` as a board ``height`` [m] high across the path (Schwarz & Behnke's "rectangular obstacles" walked
    onto): ``length`` [m] along x, ``width`` [m] in y centred between the feet (body ids ``feet``), its near edge
    ``gap`` [m] ahead of the front of the feet as they are now; ``height`` ≤ 0 moves it out of the way."""
    m, d = model, data
    if height <= 0:
        m.geom_pos[geom] = [0.0, 0.0, -10.0]
    else:
        x0 = sole_front(m, d, feet) + gap
        y = float(np.mean([d.xpos[f][1] for f in feet]))
        _resize_box(m, geom, [length / 2, width / 2, height / 2], [x0 + length / 2, y, height / 2])
    mujoco.mj_forward(m, d)
