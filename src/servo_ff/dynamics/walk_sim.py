"""The placo walk on a MuJoCo humanoid without ROS (ROS-free): quick, deterministic checks of a gait under the three
controllers of Schwarz & Behnke (the DDS mission is :mod:`servo_ff.nodes.op3_mission`).

The whole walk is planned first (:meth:`.WalkEngine.plan`, standing to standing); the robot is placed on the ground in
the walk's stance, holds it for ``hold`` seconds, then walks. Goals at ``control_dt`` (the plan interpolated), physics
1 ms, the servo layer with encoder quantisation and ``latency`` periods of bus delay. (a) "high": goal = plan at
``kp_high``; (b) "low": the same at ``ratio``·``kp_high``; (c) "ff": (b) + the feed-forward controller
(:class:`.FeedForwardController`, IMU = the true trunk orientation, support coefficient from the plan).

Each run also reports how the feet took the plan (:class:`WalkRun`): how often the planned swing foot still touched
the ground, the planned stance foot's share of the weight in single support, and how far the loaded soles moved.
``firmware`` swaps every servo's firmware law for a row of :data:`~servo_ff.models.firmware.FIRMWARE_TABLE` (e.g.
``xm430_position``, the XM430's factory position mode, which ROBOTIS's OP3 configuration uses) for all three
controllers; (c)'s α̂ then follows that law.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..interpolation import JointSpline, held_knot_derivatives
from ..models.firmware import FirmwareLaw, firmware_row
from ..models.schema import MAX_ACCELERATION, MAX_VELOCITY
from .alpha import AlphaTable, alpha_table_from_actuator
from .alpha_current import alpha_table_current_law
from .mujoco_humanoid import GAIN_RATIO
from .mujoco_model import OBSTACLE_SHAPES, place_board, place_obstacle, place_on_ground
from .mujoco_servos import MujocoServos, PhysicsDiverged, ServoOptions
from .walk_balance import BalanceFeedback, BalanceGains, trunk_pitch_roll
from .walk_pattern import WalkEngine, WalkFrames, WalkParams, WalkPlan

REPO = Path(__file__).resolve().parents[3]
CONTROLLERS = ("high", "low", "ff")  # (a) high-gain P, (b) low-gain P, (c) low-gain P + feed-forward
OP3_URDF = REPO / "urdf" / "op3.urdf"
OP3_SERVOS = REPO / "config" / "servos_op3.yaml"
OP3_ALPHA = REPO / "config" / "alpha_op3.yaml"
FALL_TILT = 0.6  # [rad] trunk tilt counted as a fall (as the DDS missions)
PLAN_GRID = 1e-6  # [rad, rad/s, rad/s², m, -] the plan's values are rounded to this (see ``settled_plan``)
TOUCH = 1.0  # [N] normal force above which a foot counts as touching the ground
LOADED = 5.0  # [N] normal force above which a foot counts as carrying weight (for its slip)
DESIRED = ("plan", "walk_node")  # how the goals and (c)'s q̇, q̈ are sampled from the plan (desired_motion)


@dataclass
class WalkRun:
    controller: str
    kp: float
    fell_at: float  # [s from the walk start] nan: did not fall
    travel: float  # [m] trunk x from the walk start to the end (or the fall)
    planned: float  # [m] the plan's CoM x over the same time
    t: np.ndarray  # [s] control periods from the walk start
    pitch: np.ndarray  # [rad] trunk pitch, forward positive
    roll: np.ndarray  # [rad]
    swing_contact: float = math.nan  # share of planned single-support periods with the swing foot touching [0..1]
    stance_share: float = math.nan  # median share of the feet's normal force on the planned stance foot [0..1]
    slip: float = math.nan  # [m] horizontal travel of the soles' centres while loaded (sliding or rocking; both feet)
    t_touch: float = math.nan  # [s from the walk start] a foot's first contact with the obstacle (nan: none)
    joints: list[str] = dataclasses.field(default_factory=list)  # the servos' order (step_energy's columns)
    #: (steps + 1, J) [J] each joint's ∫U·I dt from the walk start to the end of each step completed (row 0: zeros;
    #: row k: the first double support + k step periods, bringup.op3_energy's rule, read at the first control period
    #: at or after it: up to one period late for a step that ends between two)
    step_energy: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 0)))

    @property
    def fell(self) -> bool:
        return not math.isnan(self.fell_at)


def armature_torque(plan: WalkPlan, armature: float, percentile: float = 99.0) -> dict[str, float]:
    """[N·m] the ``percentile`` of |armature·q̈| per joint over the plan: the torque the servos' reflected rotor
    inertia alone asks for, before gravity (compare with the stall torque)."""
    a = np.percentile(np.abs(armature * plan.ddq), percentile, axis=0)
    return dict(zip(plan.joints, map(float, a)))


def settled_plan(plan: WalkPlan, q_stand: np.ndarray, grid: float = PLAN_GRID) -> tuple[WalkPlan, np.ndarray]:
    """The plan and stance rounded to ``grid``: placo's solution differs in its last bits (1e-13 rad) from one plan to
    the next in the same process, and a walk that rocks (plain P) amplifies that into millimetres, so a run would
    depend on the runs before it; 1e-6 is far below the encoder's 1.5e-3 rad."""
    r = {k: np.round(getattr(plan, k) / grid) * grid for k in ("q", "dq", "ddq", "c_left", "com")}
    return plan._replace(**r), np.round(q_stand / grid) * grid


def foot_metrics(t: np.ndarray, c_left: np.ndarray, force: np.ndarray, xy: np.ndarray) -> tuple[float, float, float]:
    """(swing_contact, stance_share, slip [m]) of :class:`WalkRun` from per-period samples from the walk start: ``t``
    [s], the plan's support coefficient (1: all on the left foot), the feet's normal forces [N] (left, right) and
    their soles' horizontal positions [m] (periods × 2 × 2)."""
    single = (t >= 0) & ((c_left > 0.99) | (c_left < 0.01))
    stance = np.where(c_left > 0.5, 0, 1)
    swing_f = force[np.arange(len(t)), 1 - stance][single]
    stance_f = force[np.arange(len(t)), stance][single]
    total = swing_f + stance_f
    share = stance_f[total > TOUCH] / total[total > TOUCH]
    loaded = (force[1:] > LOADED) & (force[:-1] > LOADED) & (t[1:, None] >= 0)
    step = np.linalg.norm(np.diff(xy, axis=0), axis=2)
    return (
        float(np.mean(swing_f > TOUCH)) if single.any() else math.nan,
        float(np.median(share)) if share.size else math.nan,
        float(step[loaded].sum()),
    )


def simulate_walk(
    controller: str,
    n_steps: int,
    vx: float = 0.1,
    kp_high: float = 800.0,
    ratio: float = GAIN_RATIO,
    params: WalkParams | None = None,
    urdf: str | Path = OP3_URDF,
    servos: str | Path = OP3_SERVOS,
    alpha: str | Path | AlphaTable | None = OP3_ALPHA,
    control_dt: float = 0.008,
    hold: float = 0.48,
    latency: int = 1,
    obstacle: float = 0.0,
    obstacle_step: int = 5,
    obstacle_shape: str = "foot_box",
    firmware: str | FirmwareLaw | None = None,
    plan_grid: float = PLAN_GRID,
    imu_roll: bool = True,
    desired: str = "plan",
    frames: WalkFrames | None = None,
    ready: tuple[WalkPlan, np.ndarray, float] | None = None,
    probe: Callable[[float, MujocoServos], None] | None = None,
    balance: BalanceGains | None = None,
    balance_period: float = 0.1,
) -> WalkRun:
    """One walk of ``n_steps`` steps at ``vx`` [m/s] under ``controller`` ("high", "low", "ff"); ``obstacle`` [m]: a box
    that high under the second foot at the middle of its ``obstacle_step``-th swing (as the DDS mission);
    ``obstacle_shape`` "board": instead a board that high across the path (:func:`.place_board`), placed at the walk
    start (both feet on the ground), its near edge 5 mm ahead of the feet;
    ``firmware``: a firmware row (its name, or a law such as a row's ``with_(vin=…)``) for every servo instead of the
    servo file's (module docstring); ``plan_grid``: see
    :func:`settled_plan` (another grid: a perturbation of the plan); ``imu_roll`` False: (c)'s gravity from the trunk's
    pitch alone (a diagnostic: Schwarz & Behnke take the whole IMU orientation); ``desired``: how the goals and
    (c)'s q̇, q̈ are sampled from the plan (:func:`desired_motion`; "walk_node": as the DDS mission's feed-forward
    node, with the walk node's hold at the URDF's velocity limits and its default max_acceleration); ``alpha``
    None: (c)'s α̂ per joint from the servo file's own laws (:func:`servo_alpha`); ``frames``: the links placo walks
    with (:class:`.WalkFrames`; default the OP3's); ``ready``: (plan, stance, step period [s]) walked instead of
    placo's (e.g. :func:`.nimbro_cpg_plan.cpg_plan`; ``vx``, ``n_steps``, ``params``, ``frames`` unused): its
    ``steps`` give the obstacle's time (step ``obstacle_step``'s start + half a period: the CPG's swing lasts the whole
    step) and the energy rows' (each step's start + one period); ``probe``: called after each control period's physics
    with (t [s from the walk start], the servo layer), to read the sim (it must not change it); ``balance``: the walk
    node's balance feedback (:class:`.BalanceFeedback`) on the trunk IMU from the walk start, its offsets updated
    every ``balance_period`` [s] (rounded to control periods; the walk node's: each trajectory message, 0.1 s) and
    added to the desired positions (placo plans only: the offsets are about its ``trunk_pitch``)."""
    if controller not in CONTROLLERS:
        raise ValueError(f"controller must be 'high', 'low' or 'ff', got {controller!r}")
    law = firmware_row(firmware) if isinstance(firmware, str) else firmware  # an unknown row: one line naming the rows
    if desired not in DESIRED:
        raise ValueError(f"desired must be one of {', '.join(DESIRED)}, got {desired!r}")
    if obstacle_shape not in OBSTACLE_SHAPES:
        raise ValueError(f"obstacle_shape must be one of {', '.join(OBSTACLE_SHAPES)}, got {obstacle_shape!r}")
    if balance is not None and ready is not None:
        raise ValueError("balance: the feedback is about placo's trunk_pitch; a ready plan has none")
    if ready is None:
        engine = WalkEngine(urdf, params, frames)
        plan, q_stand = settled_plan(engine.plan((vx, 0.0, 0.0), n_steps), engine.q_stand, plan_grid)
        p = engine.params
        step_ends, t_obstacle = p.step_windows(n_steps, obstacle_step)
        t_obstacle = t_obstacle if obstacle > 0 else math.inf
        dt = p.dt
    else:
        plan, q_stand = settled_plan(ready[0], ready[1], plan_grid)
        starts = np.array([s for s, _ in plan.steps])
        if obstacle > 0 and not 0 <= obstacle_step < len(starts):
            raise ValueError(f"obstacle_step {obstacle_step}: the ready plan has {len(starts)} steps")
        t_obstacle = starts[obstacle_step] + 0.5 * ready[2] if obstacle > 0 else math.inf
        step_ends, dt = starts + ready[2], float(plan.t[1] - plan.t[0])
    sv = MujocoServos.from_description(
        urdf, servos, base="floating", options=ServoOptions(4096, latency=latency), obstacle_slot=obstacle > 0
    )
    board = obstacle_shape == "board"
    if board and obstacle > 0:
        t_obstacle = 0.0  # the board: at the walk start, both feet on the ground
    data = sv.data
    perm = [plan.joints.index(j) for j in sv.joint_names]
    place_on_ground(sv.sim, sv.qadr, q_stand[perm])
    sv.set_initial_state()
    sv.reset()
    if law is not None:
        sv.params = {n: dataclasses.replace(sv.params[n], firmware=law) for n in sv.joint_names}
        sv.p[:] = np.array([sv.params[n].packed() for n in sv.joint_names])
    kp = kp_high if controller == "high" else ratio * kp_high
    sv.set_kp(kp)
    t = np.arange(-hold, plan.t[-1] + 1e-9, control_dt)
    tc = np.clip(t, 0.0, None)
    bounds = (None, None)
    if desired == "walk_node":  # the walk node's hold (at its defaults: the feed-forward node's)
        from .feedforward import joint_motion_bounds  # noqa: PLC0415 (pinocchio: this sampling only)

        bounds = joint_motion_bounds(urdf, plan.joints, MAX_VELOCITY, MAX_ACCELERATION)
    q, dq, ddq = desired_motion(plan, t, dt, desired, *bounds)
    ff = None
    supplies = sorted({float(sv.params[n].firmware.vin) for n in sv.joint_names})
    if controller == "ff" and len(supplies) > 1:  # else (c)'s α̂ and u_bat would be the first servo's supply's
        volts = ", ".join(f"{v:g}" for v in supplies)
        raise ValueError(f"{Path(servos).name}: the servos' laws run on different supplies ({volts} V); (c)'s "
                         "feed-forward has one u_bat: give every servo a law of one supply")  # fmt: skip
    u_bat = supplies[0]  # [V] the servos' one supply, read exactly
    if controller == "ff":
        from .feedforward import FeedForwardController  # noqa: PLC0415 (pinocchio: the ff run only)

        if firmware is not None:
            alpha = firmware_alpha(sv.params[sv.joint_names[0]], plan.joints, u_bat)
        elif alpha is None:
            alpha = servo_alpha(sv.params, plan.joints, u_bat)
        ff = FeedForwardController(urdf, alpha, kp, u_nominal=u_bat)
        fperm = [plan.joints.index(j) for j in ff.robot.joint_names]
        f2s = [ff.robot.joint_names.index(j) for j in sv.joint_names]
    c_plan = np.interp(tc, plan.t, plan.c_left)
    feedback = BalanceFeedback(urdf, plan.joints, balance) if balance is not None else None
    every, offset = max(1, round(balance_period / control_dt)), np.zeros(len(plan.joints))
    force, xy = np.zeros((len(t), 2)), np.zeros((len(t), 2, 2))
    m = sv.model
    soles = [next(g for g in range(m.ngeom) if m.geom_bodyid[g] == b and m.geom_contype[g]) for b in sv.sim.feet[:2]]
    steps = int(round(control_dt / sv.model.opt.timestep))
    trunk = sv.sim.root_body
    x0, k0 = float(data.qpos[0]), int(np.searchsorted(t, 0.0))
    pitch, roll = np.full(len(t), np.nan), np.full(len(t), np.nan)
    fell_at, last, t_touch = math.nan, len(t) - 1, math.nan
    ends = iter(step_ends)
    t_end, e0, step_energy = next(ends), np.zeros(len(sv.joint_names)), []
    for k in range(len(t)):
        if k == k0:
            x0, e0 = float(data.qpos[0]), sv.energy.copy()
            step_energy.append(np.zeros_like(e0))
        if t[k] >= t_end - 1e-9:
            step_energy.append(sv.energy - e0)
            t_end = next(ends, math.inf)
        if t[k] >= t_obstacle:
            geom = int(sv.model.geom("obstacle").id)
            if board:
                place_board(sv.model, data, geom, sv.sim.feet, obstacle)
            else:
                place_obstacle(sv.model, data, geom, sv.sim.feet, "", obstacle)
            t_obstacle = math.inf
        if feedback is not None and k >= k0 and (k - k0) % every == 0:
            imu = sv.imu()
            offset = feedback.offsets(imu.orientation, imu.angular_velocity, engine.params.trunk_pitch)
        qk = q[k] + offset  # a constant offset between updates: q̇, q̈ unchanged
        goal = qk[perm]
        if ff is not None:
            w, x, y, z = data.xquat[trunk] if imu_roll else pitch_only(data.xquat[trunk])
            goal = np.asarray(
                ff.tick(qk[fperm], dq[k, fperm], ddq[k, fperm], imu_quat=(x, y, z, w), u_bat=u_bat,
                        c_left=float(c_plan[k]))
            )[f2s]  # fmt: skip
        sv.command(goal)
        try:
            sv.step(steps)
        except PhysicsDiverged:
            fell_at, last = t[k], k
            break
        if probe is not None:
            probe(float(t[k]), sv)
        w, x, y, z = data.xquat[trunk]
        pitch[k], roll[k] = trunk_pitch_roll((x, y, z, w))
        force[k], xy[k] = sv.foot_forces()[:2], data.geom_xpos[soles, :2]
        if obstacle > 0 and math.isnan(t_touch) and touches(m, data, int(m.geom("obstacle").id), sv.sim.feet):
            t_touch = float(t[k])
        if data.xmat[trunk][8] < math.cos(FALL_TILT):
            fell_at, last = t[k], k
            break
    walk = slice(k0, last + 1)
    planned = float(np.interp(t[last], plan.t, plan.com[:, 0]) - plan.com[0, 0]) if last >= k0 else 0.0
    metrics = foot_metrics(t[: last + 1], c_plan[: last + 1], force[: last + 1], xy[: last + 1])
    return WalkRun(
        controller, kp, fell_at, float(data.qpos[0]) - x0, planned, t[walk], pitch[walk], roll[walk], *metrics, t_touch,
        list(sv.joint_names), np.array(step_energy),
    )  # fmt: skip


def desired_motion(
    plan: WalkPlan,
    t: np.ndarray,
    dt: float,
    how: str = "plan",
    vmax: np.ndarray | None = None,
    amax: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(q [rad], q̇ [rad/s], q̈ [rad/s²]), each (len(t), J), of ``plan`` (samples every ``dt`` [s]) at the times ``t``
    [s from the walk start; before it the first sample, at rest]. "plan": its samples and np.gradient derivatives,
    interpolated linearly; "walk_node": as the DDS mission's feed-forward node samples servo_walk_node's points
    (:func:`~servo_ff.interpolation.held_knot_derivatives`, q̇ held at ``vmax`` [rad/s] and q̈ at ``amax`` [rad/s²]
    per joint (None: not held; the held counts in one INFO line), the quintic between the points; the plan held at
    its ends)."""
    tc = np.clip(t, 0.0, None)
    if how == "plan":
        q, dq, ddq = (np.stack([np.interp(tc, plan.t, x[:, i]) for i in range(x.shape[1])], axis=1)
                      for x in (plan.q, plan.dq, plan.ddq))  # fmt: skip
    else:
        padded = np.concatenate([plan.q[:1], plan.q[:1], plan.q, plan.q[-1:], plan.q[-1:]])
        dq, ddq, *held = held_knot_derivatives(padded, dt, *(np.inf if b is None else b for b in (vmax, amax)))
        said = [f"{j} {n}/{m}" for j, n, m in zip(plan.joints, *held) if n or m]
        if said:  # as the walk node's throttled warnings: nothing held unsaid
            logging.getLogger(__name__).info("desired q̇/q̈ knots held (joint q̇/q̈ counts): %s", ", ".join(said))
        spline = JointSpline(plan.t, plan.q, dq, ddq)
        q, dq, ddq = (np.array(x) for x in zip(*(spline.sample(s) for s in tc)))
    dq[t < 0], ddq[t < 0] = 0.0, 0.0
    return q, dq, ddq


def touches(model, data, geom: int, bodies) -> bool:
    """A contact between ``geom`` and a geom of one of ``bodies`` (body ids) in ``data``."""
    g1, g2 = data.contact.geom1[: data.ncon], data.contact.geom2[: data.ncon]
    other = np.where(g1 == geom, g2, np.where(g2 == geom, g1, -1))
    return bool(np.isin(model.geom_bodyid[other[other >= 0]], list(bodies)).any())


def pitch_only(quat_wxyz) -> tuple[float, float, float, float]:
    """(w, x, y, z) of the rotation about y by the trunk pitch of ``quat_wxyz`` (no roll, no yaw)."""
    w, x, y, z = (float(v) for v in quat_wxyz)
    half = 0.5 * trunk_pitch_roll((x, y, z, w))[0]
    return math.cos(half), 0.0, math.sin(half), 0.0


def servo_alpha(params: dict, joints: list[str], u_nominal: float) -> AlphaTable:
    """(c)'s α̂ with each joint's own parameter set and law (``params``: joint → ActuatorParams), ``joints`` order."""
    rows = [firmware_alpha(params[j], [j], u_nominal) for j in joints]
    return AlphaTable(
        tuple(joints), *(np.concatenate([getattr(r, k) for r in rows]) for k in ("alpha", "dq_s", "delta"))
    )


def firmware_alpha(params, joints: list[str], u_nominal: float) -> AlphaTable:
    """(c)'s α̂ for every joint under ``params``' firmware law: Eq. 19 (voltage law) or the current law's α̂."""
    if params.firmware.control == "current":
        return alpha_table_current_law(params, joints, u_nominal)
    return alpha_table_from_actuator(params, joints)
