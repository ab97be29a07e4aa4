"""Where a foot meets an obstacle box, from MuJoCo's contact list and geometry (ROS-free): which face of the box a
contact is on (from its normal), and how high a foot's colliding geometry passes over a vertical line such as the
box's near edge. Used by ``bench/board_contact.py`` (issue 21: why (c) stands short of the 15 mm board).

Faces are named in the world frame for a box whose near face looks towards −x (the walk goes +x): ``top`` (the
normal out of the box within ``tol`` of +z), ``front`` (−x: the face the walker meets), ``back`` (+x), ``side``
(±y), ``edge`` (none of them: MuJoCo's normal for an edge or corner contact, between two faces).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import product
from typing import NamedTuple

import mujoco
import numpy as np

EDGE_TOL = 0.001  # [m] a contact point this close to the near top edge line is on it (a sole resting on the edge)
FACE_TOL = math.radians(30.0)  # [rad] the contact normal within this of a face's normal names that face
_SIGNS = np.array(list(product((-1, 1), repeat=3)), dtype=float)  # the 8 corners of a unit box
_EDGES = [(i, j) for i in range(8) for j in range(i + 1, 8) if np.sum(_SIGNS[i] != _SIGNS[j]) == 1]  # its 12 edges


@dataclass(frozen=True)
class BoxContact:
    """One contact between the obstacle box and a body."""

    body: int  # body id of the other geom
    face: str  # top, front, back, side, edge (module docstring)
    pos: np.ndarray  # [m] world position of the contact point
    normal: np.ndarray  # unit normal pointing out of the obstacle (world)
    depth: float  # [m] penetration (MuJoCo's dist, negated: positive when the geoms overlap)
    near_edge: bool = False  # the point lies on the box's near top edge line (−x face meets +z face), within EDGE_TOL


def contact_face(normal_out: np.ndarray, tol: float = FACE_TOL) -> str:
    """The face of an axis-aligned box a contact normal (pointing out of the box, world) names (module docstring)."""
    n = np.asarray(normal_out, dtype=float)
    n = n / np.linalg.norm(n)
    c = math.cos(tol)
    if n[2] >= c:
        return "top"
    if n[0] <= -c:
        return "front"
    if n[0] >= c:
        return "back"
    if abs(n[1]) >= c:
        return "side"
    return "edge"


def box_contacts(model: mujoco.MjModel, data: mujoco.MjData, box: int, bodies) -> list[BoxContact]:
    """The contacts in ``data`` between geom ``box`` and any geom of ``bodies`` (body ids), face named by
    :func:`contact_face`, and whether the point is on its near top edge line (``near_edge``: e.g. a tilted sole resting
    on the edge, whose normal is the sole's). MuJoCo's normal (``contact.frame[:3]``) points from geom1 to geom2; it
    is turned to point out of the box."""
    out = []
    want = set(int(b) for b in bodies)
    for i in range(data.ncon):
        c = data.contact[i]
        g1, g2 = int(c.geom1), int(c.geom2)
        if box not in (g1, g2):
            continue
        other = g2 if g1 == box else g1
        body = int(model.geom_bodyid[other])
        if body not in want:
            continue
        n = np.array(c.frame[:3]) * (1.0 if g1 == box else -1.0)
        local = data.geom_xmat[box].reshape(3, 3).T @ (np.array(c.pos) - data.geom_xpos[box])
        half = model.geom_size[box]
        edge = abs(local[0] + half[0]) < EDGE_TOL and abs(local[2] - half[2]) < EDGE_TOL
        out.append(BoxContact(body, contact_face(n), np.array(c.pos), n, -float(c.dist), bool(edge)))
    return out


def geom_corners(model: mujoco.MjModel, data: mujoco.MjData, geom: int) -> np.ndarray:
    """(8, 3) [m] world corners of ``geom``'s bounding box (a box geom: the box itself), in :data:`_SIGNS` order."""
    center, half = model.geom_aabb[geom, :3], model.geom_aabb[geom, 3:]
    return data.geom_xpos[geom] + (center + _SIGNS * half) @ data.geom_xmat[geom].reshape(3, 3).T


def section_zmin(corners: np.ndarray, x: float) -> float:
    """[m] the lowest z of a box (its 8 corners, :func:`geom_corners`' order) on the vertical plane at ``x`` [m]: the
    lowest point of the box straight over that line; nan if the box does not reach ``x``."""
    zs = []
    for i, j in _EDGES:
        a, b = corners[i], corners[j]
        if (a[0] - x) * (b[0] - x) > 0:
            continue
        if a[0] == b[0]:
            zs += [a[2], b[2]]
        else:
            s = (x - a[0]) / (b[0] - a[0])
            zs.append(a[2] + s * (b[2] - a[2]))
    return min(zs) if zs else math.nan


def colliding_geoms(model: mujoco.MjModel, body: int) -> list[int]:
    """The geoms of ``body`` that take part in contacts."""
    hits = (model.geom_bodyid == body) & ((model.geom_contype != 0) | (model.geom_conaffinity != 0))
    return [int(g) for g in np.flatnonzero(hits)]


class Over(NamedTuple):
    """A body's colliding geoms against a vertical line at x (:func:`body_over`), all [m] (world)."""

    z_over: float  # the lowest z straight over the line (nan: the body does not reach it)
    z_low: float  # the lowest z of any corner (a sole's height above z = 0)
    front: float  # the largest x (a toe)
    rear: float  # the smallest x (a heel)


def body_over(model: mujoco.MjModel, data: mujoco.MjData, body: int, x: float) -> Over:
    """How ``body``'s colliding geoms (bounding boxes) stand against the vertical line at ``x`` [m]: e.g. how high a
    foot passes over an edge at ``x``, its sole's height, its toe and heel."""
    cs = [geom_corners(model, data, g) for g in colliding_geoms(model, body)]
    if not cs:
        raise ValueError(f"body {model.body(body).name!r} has no colliding geom to measure")
    over = [z for z in (section_zmin(c, x) for c in cs) if not math.isnan(z)]
    return Over(
        min(over) if over else math.nan,
        float(min(c[:, 2].min() for c in cs)),
        float(max(c[:, 0].max() for c in cs)),
        float(min(c[:, 0].min() for c in cs)),
    )
