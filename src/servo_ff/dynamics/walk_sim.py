"""The placo walk on a MuJoCo humanoid without ROS (ROS-free): quick, deterministic checks of a gait under the three
controllers of Schwarz & Behnke (the DDS mission is :mod:`servo_ff.nodes.op3_mission`).

The whole walk is planned first (:meth:`.WalkEngine.plan`, standing to standing); the robot is placed on the ground in
the walk's stance, holds it for ``hold`` seconds, then walks. Goals at ``control_dt`` (the plan interpolated), physics
1 ms, the servo layer with encoder quantisation and ``latency`` periods of bus delay. (a) "high": goal = plan at
``kp_high``; (b) "low": the same at ``ratio``·``kp_high``; (c) "ff": (b) + the feed-forward controller
(:class:`.FeedForwardController`, IMU = the true trunk orientation, support coefficient from the plan).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .mujoco_humanoid import GAIN_RATIO
from .mujoco_model import place_obstacle, place_on_ground
from .mujoco_servos import MujocoServos, PhysicsDiverged, ServoOptions
from .walk_balance import trunk_pitch_roll
from .walk_pattern import WalkEngine, WalkParams, WalkPlan

REPO = Path(__file__).resolve().parents[3]
OP3_URDF = REPO / "urdf" / "op3.urdf"
OP3_SERVOS = REPO / "config" / "servos_op3.yaml"
OP3_ALPHA = REPO / "config" / "alpha_op3.yaml"
FALL_TILT = 0.6  # [rad] trunk tilt counted as a fall (as the DDS missions)


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

    @property
    def fell(self) -> bool:
        return not math.isnan(self.fell_at)


def armature_torque(plan: WalkPlan, armature: float, percentile: float = 99.0) -> dict[str, float]:
    """[N·m] the ``percentile`` of |armature·q̈| per joint over the plan: the torque the servos' reflected rotor
    inertia alone asks for, before gravity (compare with the stall torque)."""
    a = np.percentile(np.abs(armature * plan.ddq), percentile, axis=0)
    return dict(zip(plan.joints, map(float, a)))


def simulate_walk(
    controller: str,
    n_steps: int,
    vx: float = 0.1,
    kp_high: float = 800.0,
    ratio: float = GAIN_RATIO,
    params: WalkParams | None = None,
    urdf: str | Path = OP3_URDF,
    servos: str | Path = OP3_SERVOS,
    alpha: str | Path = OP3_ALPHA,
    control_dt: float = 0.008,
    hold: float = 0.48,
    latency: int = 1,
    obstacle: float = 0.0,
    obstacle_step: int = 5,
) -> WalkRun:
    """One walk of ``n_steps`` steps at ``vx`` [m/s] under ``controller`` ("high", "low", "ff"); ``obstacle`` [m]: a box
    that high under the second foot at the middle of its ``obstacle_step``-th swing (as the DDS mission)."""
    if controller not in ("high", "low", "ff"):
        raise ValueError(f"controller must be 'high', 'low' or 'ff', got {controller!r}")
    engine = WalkEngine(urdf, params)
    q_stand = engine.q_stand.copy()
    plan = engine.plan((vx, 0.0, 0.0), n_steps)
    sv = MujocoServos.from_description(
        urdf, servos, base="floating", options=ServoOptions(4096, latency=latency), obstacle_slot=obstacle > 0
    )
    p = engine.params
    t_obstacle = p.single_support * p.startend_double_support_ratio + obstacle_step * p.step_period
    t_obstacle += 0.5 * p.single_support if obstacle > 0 else math.inf
    data = sv.data
    perm = [plan.joints.index(j) for j in sv.joint_names]
    place_on_ground(sv.sim, sv.qadr, q_stand[perm])
    sv.set_initial_state()
    sv.reset()
    kp = kp_high if controller == "high" else ratio * kp_high
    sv.set_kp(kp)
    t = np.arange(-hold, plan.t[-1] + 1e-9, control_dt)
    tc = np.clip(t, 0.0, None)

    def grid(x: np.ndarray) -> np.ndarray:
        return np.stack([np.interp(tc, plan.t, x[:, i]) for i in range(x.shape[1])], axis=1)

    q = grid(plan.q)
    ff = None
    u_bat = float(sv.params[sv.joint_names[0]].firmware.vin)  # [V] the servos' supply, read exactly
    if controller == "ff":
        from .feedforward import FeedForwardController  # noqa: PLC0415 (pinocchio: the ff run only)

        ff = FeedForwardController(urdf, alpha, kp, u_nominal=u_bat)
        fperm = [plan.joints.index(j) for j in ff.robot.joint_names]
        f2s = [ff.robot.joint_names.index(j) for j in sv.joint_names]
        dq, ddq = grid(plan.dq), grid(plan.ddq)
        dq[t < 0], ddq[t < 0] = 0.0, 0.0
        c_left = np.interp(tc, plan.t, plan.c_left)
    steps = int(round(control_dt / sv.model.opt.timestep))
    trunk = sv.sim.root_body
    x0, k0 = float(data.qpos[0]), int(np.searchsorted(t, 0.0))
    pitch, roll = np.full(len(t), np.nan), np.full(len(t), np.nan)
    fell_at, last = math.nan, len(t) - 1
    for k in range(len(t)):
        if k == k0:
            x0 = float(data.qpos[0])
        if t[k] >= t_obstacle:
            place_obstacle(sv.model, data, int(sv.model.geom("obstacle").id), sv.sim.feet, "", obstacle)
            t_obstacle = math.inf
        goal = q[k, perm]
        if ff is not None:
            w, x, y, z = data.xquat[trunk]
            goal = np.asarray(
                ff.tick(q[k, fperm], dq[k, fperm], ddq[k, fperm], imu_quat=(x, y, z, w), u_bat=u_bat,
                        c_left=float(c_left[k]))
            )[f2s]  # fmt: skip
        sv.command(goal)
        try:
            sv.step(steps)
        except PhysicsDiverged:
            fell_at, last = t[k], k
            break
        w, x, y, z = data.xquat[trunk]
        pitch[k], roll[k] = trunk_pitch_roll((x, y, z, w))
        if data.xmat[trunk][8] < math.cos(FALL_TILT):
            fell_at, last = t[k], k
            break
    walk = slice(k0, last + 1)
    planned = float(np.interp(t[last], plan.t, plan.com[:, 0]) - plan.com[0, 0]) if last >= k0 else 0.0
    return WalkRun(controller, kp, fell_at, float(data.qpos[0]) - x0, planned, t[walk], pitch[walk], roll[walk])
