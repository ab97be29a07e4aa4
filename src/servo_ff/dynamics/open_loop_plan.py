"""What an open-loop gait's joint positions become for the simulator (ROS-free): a :class:`.WalkPlan` with q̇, q̈ by
finite differences, the support coefficient, and the CoM with the floating base placed so that the stance sole lies
flat where it landed (pinocchio); the URDF's joint limits checked. Shared by the NimbRo-OP's CPG
(:mod:`.nimbro_cpg_plan`) and ROBOTIS's OP3 walk (:mod:`.op3_robotis_walk`).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .walk_pattern import WalkPlan


class ReadyWalk(NamedTuple):
    """An open-loop walk for ``simulate_walk(ready=…)``: the plan, the halt pose (``plan.joints`` order) and the step
    period [s] (one foot's lift)."""

    plan: WalkPlan
    q_stand: np.ndarray
    step_period: float


def _flat(m) -> object:
    """``m`` (pinocchio SE3) on the ground: its x, y and yaw, z = 0, roll = pitch = 0."""
    import pinocchio as pin  # noqa: PLC0415

    yaw = math.atan2(m.rotation[1, 0], m.rotation[0, 0])
    c, s = math.cos(yaw), math.sin(yaw)
    return pin.SE3(np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]), np.array([*m.translation[:2], 0.0]))


def placed_bases(urdf: str | Path, joints: list[str], q: np.ndarray, c_left: np.ndarray, soles=("l_sole", "r_sole")):
    """(T,) pinocchio SE3, the floating base in the world at each tick with the stance sole (left while ``c_left`` >
    0.5, right while < 0.5, kept at 0.5) held flat where it landed; the walk starts with the left sole at the origin's
    height. The stance changes over the tick k−1 → k: the new stance sole is put flat (x, y, yaw kept; z, roll,
    pitch 0) where tick k−1 has it, world_new = flat(base_{k−1} · oMf[new](q_{k−1})) (both from q_{k−1}), and tick
    k's motion counts from it: base_k = world_new · oMf[new](q_k)⁻¹. Over whole cycles the CoM so placed advances at
    the gait's own step length (test_open_loop_plan: the OP3's CPG 0.993–0.996 of speed_per_gcv, ROBOTIS's walk
    0.999 of 2·x_move a step; test_cpg_steer: the yaw rate exact)."""
    import pinocchio as pin  # noqa: PLC0415 (optional dependency)

    model = pin.buildModelFromUrdf(str(urdf))
    data = model.createData()
    idx = [joints.index(n) for n in model.names[1:]]
    fid = [model.getFrameId(s) for s in soles]
    stance, world, bases, before = 0, None, [], None
    for k in range(len(q)):
        pin.framesForwardKinematics(model, data, q[k, idx])
        now = [data.oMf[f].copy() for f in fid]
        new = 0 if c_left[k] > 0.5 else 1 if c_left[k] < 0.5 else stance
        if world is None or new != stance:
            stance, world = new, _flat(now[new] if world is None else bases[-1] * before[new])
        bases.append(world * now[stance].inverse())
        before = now
    return bases


def placed_com(urdf: str | Path, joints: list[str], q: np.ndarray, c_left: np.ndarray, soles=("l_sole", "r_sole")):
    """(T, 3) [m] the CoM in the world with the trunk placed by :func:`placed_bases` (the stance sole flat where it
    landed)."""
    import pinocchio as pin  # noqa: PLC0415 (optional dependency)

    model = pin.buildModelFromUrdf(str(urdf))
    data = model.createData()
    idx = [joints.index(n) for n in model.names[1:]]
    bases = placed_bases(urdf, joints, q, c_left, soles)
    return np.array([b.act(pin.centerOfMass(model, data, q[k, idx])) for k, b in enumerate(bases)]).reshape(-1, 3)


def joint_limits(urdf: str | Path, joints: list[str], q: np.ndarray, plan: str = "the CPG plan") -> None:
    """A ValueError naming the first joint of ``joints`` whose positions ``q`` (T, J) leave its URDF limits (and
    ``plan``, the words for what asked for them)."""
    import pinocchio as pin  # noqa: PLC0415

    model = pin.buildModelFromUrdf(str(urdf))
    for n, lo, hi in zip(model.names[1:], model.lowerPositionLimit, model.upperPositionLimit):
        x = q[:, joints.index(n)]
        if x.min() < lo or x.max() > hi:
            bad = x.min() if x.min() < lo else x.max()
            raise ValueError(f"{Path(urdf).name}: {plan} takes {n} to {bad:.3f} rad, outside [{lo:.3f}, {hi:.3f}]")


def open_loop_plan(
    urdf: str | Path, joints: list[str], t: np.ndarray, q: np.ndarray, c_left: np.ndarray, steps: list, what: str
) -> WalkPlan:
    """The :class:`.WalkPlan` of an open-loop gait's positions ``q`` (T, J) [rad] at the times ``t`` [s, a uniform
    grid]: a joint outside its URDF limits is a ValueError naming it and ``what`` (:func:`joint_limits`); q̇, q̈ by
    finite differences (np.gradient); ``c_left`` the left leg's support coefficient, ``support`` "left"/"right" where
    it is 1/0, else "both"; the CoM placed (:func:`placed_com`); ``zmp`` NaN and no polygons (none planned);
    ``steps`` (start [s], swinging foot)."""
    joint_limits(urdf, joints, q, what)
    dt = float(t[1] - t[0])
    dq = np.gradient(q, dt, axis=0)
    support = np.where(c_left >= 1.0, "left", np.where(c_left <= 0.0, "right", "both"))
    return WalkPlan(
        joints, t, q, dq, np.gradient(dq, dt, axis=0), c_left, np.full((len(c_left), 2), np.nan),
        placed_com(urdf, joints, q, c_left), support, [np.zeros((0, 2))] * len(c_left), steps,
    )  # fmt: skip
