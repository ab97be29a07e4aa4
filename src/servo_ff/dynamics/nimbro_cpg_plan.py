"""The NimbRo-OP's CPG gait (:mod:`.nimbro_cpg`) run through its state machine into a :class:`.WalkPlan` (ROS-free):
the phase and the gait command's slopes at each ``systemIterationTime`` (DynamicGait ``update``), the start and stop of
the walk (``MotionLayer::update``: it halts only near a phase centre once |gcv| < stoppingVelocity, the 3-vector's
Euclidean norm, MotionLayer.cpp 38–39), and the floating base placed with the stance sole flat on the ground
(pinocchio) for the plan's CoM. Steering: gcv.y and gcv.z are latched with gcv.x, the three limited by their norm
(:func:`.limit_gcv`), and each slopes at its own acceleration (DynamicGait.cpp 102–157: :func:`slope_backward`,
:func:`slope_axis`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ..interpolation import JointSpline
from .nimbro_cpg import CpgConfig, limit_gcv, picut, pose, support_coefficient
from .open_loop_plan import ReadyWalk, open_loop_plan, placed_bases


class GaitStates(NamedTuple):
    """Per sample (T,): time [s], phase [rad], gcv.x, first-step timer [s], walking; steps: (t_start [s], side)."""

    t: np.ndarray
    phase: np.ndarray
    gcv: np.ndarray
    timer: np.ndarray
    walking: np.ndarray
    steps: list[tuple[float, str]]
    gcv_y: np.ndarray | None = None
    gcv_z: np.ndarray | None = None


def slope(gcv: float, target: float, cfg: CpgConfig) -> float:
    """gcv.x one tick towards ``target`` at accelerationForward (decelerationFactor × when slowing; gcv ≥ 0)."""
    up, down = cfg.acceleration_forward * cfg.dt, cfg.acceleration_forward * cfg.deceleration_factor * cfg.dt
    return gcv + up if target - gcv > up else gcv - down if target - gcv < -down else target


def slope_backward(gcv: float, target: float, cfg: CpgConfig) -> float:
    """gcv.x < 0 one tick towards ``target``: up at min(accelerationForward, accelerationBackward·decelerationFactor),
    down at accelerationBackward (DynamicGait.cpp 111–119)."""
    up = min(cfg.acceleration_forward, cfg.acceleration_backward * cfg.deceleration_factor) * cfg.dt
    down = cfg.acceleration_backward * cfg.dt
    return gcv + up if target - gcv > up else gcv - down if target - gcv < -down else target


def slope_axis(v: float, target: float, acceleration: float, cfg: CpgConfig) -> float:
    """gcv.y or gcv.z one tick towards ``target`` at ``acceleration`` [gcv/s] away from 0, decelerationFactor × that
    towards 0 (DynamicGait.cpp 121–157)."""
    fast, slow = acceleration * cfg.deceleration_factor * cfg.dt, acceleration * cfg.dt
    up, down = (slow, fast) if v >= 0 else (fast, slow)
    return v + up if target - v > up else v - down if target - v < -down else target


def near_centre(phase: float) -> bool:
    """The phase within 0.05 rad of 0 or ±π, where MotionLayer lets the walk halt."""
    return abs(phase) < 0.05 or abs(phase) >= math.pi - 0.05


class GaitState(NamedTuple):
    """The gait's state between ticks: phase and the previous tick's [rad], gcv.x and its latched target, the
    first-step timer [s], walking (False once halted); gcv.y, gcv.z and their latched targets."""

    phase: float
    last: float
    gcv: float
    target: float
    timer: float
    walking: bool
    gcv_y: float = 0.0
    gcv_z: float = 0.0
    target_y: float = 0.0
    target_z: float = 0.0


def gcv_norm(s: GaitState) -> float:
    """|gcv| of ``s``, the 3-vector's Euclidean norm (MotionLayer.cpp 38: ``effectiveGCV.norm()``)."""
    return math.sqrt(s.gcv * s.gcv + s.gcv_y * s.gcv_y + s.gcv_z * s.gcv_z) if s.gcv_y or s.gcv_z else abs(s.gcv)


def halt_blend_duration(cfg: CpgConfig) -> float:
    """[s] how long the walk takes from its last walking pose to the halt pose (:func:`halt_blend`): half a step
    period, in the double support where the gait halts (0.1475 s on the OP3, 0.208 s on the NimbRo-OP)."""
    return 0.5 * cfg.step_period


def halt_blend(q_walk: np.ndarray, q_halt: np.ndarray, dt: float, duration: float) -> np.ndarray:
    """The poses [rad] (n − 1, J) at dt, 2·dt, … (n − 1)·dt after the last walking sample, n = round(duration / dt),
    that carry the walk into the halt pose ``q_halt`` (J,) instead of the authors' jump (DynamicGait::reset puts the
    phase at 0 from a phase centre: 0.0136 rad of ankle and hip roll in one 8 ms tick on the OP3, which the walk
    node's five-point differences turn into ±300 rad/s² and the feed-forward into ±6 rad goal offsets).

    A quintic (:class:`servo_ff.interpolation.JointSpline`) from the last walking pose ``q_walk[-1]`` with its
    velocity (``q_walk`` (≤ 3, J), the last samples on the grid ``dt`` [s]: (3q₋₁ − 4q₋₂ + q₋₃)/(2·dt), the first
    difference with two, 0 with one) and zero acceleration to ``q_halt`` at rest ``duration`` [s] later. The sample
    at n·dt is ``q_halt`` itself, the gait's own halt pose, so it is not among the rows."""
    q_walk = np.atleast_2d(np.asarray(q_walk, dtype=np.float64))
    q_halt = np.asarray(q_halt, dtype=np.float64)
    if len(q_walk) >= 3:
        v0 = (3.0 * q_walk[-1] - 4.0 * q_walk[-2] + q_walk[-3]) / (2.0 * dt)
    elif len(q_walk) == 2:
        v0 = (q_walk[-1] - q_walk[-2]) / dt
    else:
        v0 = np.zeros_like(q_halt)
    n = int(round(duration / dt))
    if n < 2:
        return np.zeros((0, len(q_halt)))
    zero = np.zeros_like(q_halt)
    spline = JointSpline([0.0, n * dt], [q_walk[-1], q_halt], [v0, zero], [zero, zero])
    return spline.positions(dt * np.arange(1, n))


def halt_state(cfg: CpgConfig) -> GaitState:
    """The state at the halt pose, about to walk (DynamicGait::reset)."""
    return GaitState(0.0, 0.0, 0.0, 0.0, cfg.first_step_duration, True)


def gait_tick(
    s: GaitState, command: float | None, cfg: CpgConfig, yz: tuple[float, float] = (0.0, 0.0)
) -> tuple[GaitState, tuple[float, str] | None]:
    """One ``systemIterationTime`` of the state machine with ``command`` = the commanded gcv.x and ``yz`` its gcv.y,
    gcv.z (latched at each phase centre crossing, limited by :func:`.limit_gcv`; None: the walk withdrawn, it halts
    once |gcv| < stoppingVelocity near a phase centre). Returns the new state and the step begun in this tick, (how
    long before the tick's end [s], side), else None."""
    phase, last, gcv, target, timer, walking = s[:6]
    gy, gz, ty, tz = s[6:]
    if walking and command is None and gcv_norm(s) < cfg.stopping_velocity and near_centre(phase):
        return GaitState(0.0, last, 0.0, target, cfg.first_step_duration, False), None  # DynamicGait::reset
    if not walking:
        return s, None
    rate = cfg.gait_frequency * math.pi  # [rad/s]
    if phase * last <= 0:
        target, ty, tz = (0.0, 0.0, 0.0) if command is None else limit_gcv(command, *yz, cfg)
    gcv = slope(gcv, target, cfg) if gcv >= 0 else slope_backward(gcv, target, cfg)
    gy, gz = slope_axis(gy, ty, cfg.acceleration_sideward, cfg), slope_axis(gz, tz, cfg.acceleration_rotational, cfg)
    last, phase = phase, picut(phase + rate * cfg.dt)
    if timer > 0.5 * cfg.first_step_duration:
        phase = 0.0
    timer = max(0.0, timer - cfg.dt)
    step = None
    if last <= 0.0 < phase:
        step = (phase / rate, "right")
    elif last > 0.0 > phase:
        step = ((phase + math.pi) / rate, "left")
    return GaitState(phase, last, gcv, target, timer, True, gy, gz, ty, tz), step


def gait_states(
    gcv_x: float, n_steps: int, cfg: CpgConfig, hold: float = 0.5, gcv_y: float = 0.0, gcv_z: float = 0.0
) -> GaitStates:
    """The gait's state from the halt pose: ``n_steps`` steps commanded at (``gcv_x``, ``gcv_y``, ``gcv_z``) (gcv
    ramping at its slopes), then the command withdrawn until it halts, then ``hold`` [s] in the halt pose
    (:func:`gait_tick` per tick)."""
    if n_steps < 1:
        raise ValueError(f"n_steps must be ≥ 1, got {n_steps}")
    s, k, t_stop = halt_state(cfg), 0, math.inf
    rows, steps = [(0.0, 0.0, 0.0, s.timer, True, 0.0, 0.0)], []
    while k * cfg.dt < t_stop + hold - 1e-9:
        k += 1
        t = k * cfg.dt
        was = s.walking
        s, step = gait_tick(s, gcv_x if len(steps) <= n_steps else None, cfg, (gcv_y, gcv_z))
        if was and not s.walking:
            t_stop = t
        if step is not None:
            steps.append((t - step[0], step[1]))
        rows.append((t, s.phase if s.walking else 0.0, s.gcv, s.timer, s.walking, s.gcv_y, s.gcv_z))
    steps = [x for x in steps if x[0] < t_stop - 0.5 * cfg.step_period]
    t, ph, g, tm, w, gy, gz = (np.array(c) for c in zip(*rows))
    return GaitStates(t, ph, g, tm, w.astype(bool), steps, gy, gz)


def cpg_plan(
    urdf: str | Path,
    gcv_x: float,
    n_steps: int,
    cfg: CpgConfig | None = None,
    pose_of: Callable = pose,
    gcv_y: float = 0.0,
    gcv_z: float = 0.0,
) -> ReadyWalk:
    """The CPG walk of ``n_steps`` steps at ``gcv_x`` on the grid ``cfg.dt``: q from the gait's equations (its halt
    reached by :func:`halt_blend`, as :class:`.CpgEngine` does), q̇ and q̈ by finite differences (np.gradient), c_left =
    the left leg's support coefficient, the CoM placed (:func:`.placed_com`); ``zmp`` NaN (the CPG plans none);
    ``support`` "left"/"right" where the coefficient is 1/0, else "both"; ``pose_of``: the robot's joints of a gait
    state (as :func:`.nimbro_cpg.pose`; the OP3's: :func:`.op3_cpg.pose`); ``gcv_y``, ``gcv_z``: steering (lateral,
    turning; passed to ``pose_of`` as keywords only when not both 0)."""
    import pinocchio as pin  # noqa: PLC0415

    cfg = cfg or CpgConfig()
    joints = list(pin.buildModelFromUrdf(str(urdf)).names[1:])
    s = gait_states(gcv_x, n_steps, cfg, gcv_y=gcv_y, gcv_z=gcv_z)
    if gcv_y or gcv_z:
        rows = zip(s.phase, s.gcv, s.timer, s.gcv_y, s.gcv_z)
        q = np.array([pose_of(joints, p, g, tm, cfg, gcv_y=y, gcv_z=z) for p, g, tm, y, z in rows])
    else:
        q = np.array([pose_of(joints, p, g, tm, cfg) for p, g, tm in zip(s.phase, s.gcv, s.timer)])
    c = np.array([support_coefficient(p, "left", cfg) if w else 0.5 for p, w in zip(s.phase, s.walking)])
    q_stand = pose_of(joints, 0.0, 0.0, cfg.first_step_duration, cfg)
    halts = np.flatnonzero(s.walking[:-1] & ~s.walking[1:])
    if len(halts):  # into the halt pose as the engine goes (CpgEngine.tick): halt_blend
        h = int(halts[0]) + 1
        rows = halt_blend(q[max(0, h - 3) : h], q_stand, cfg.dt, halt_blend_duration(cfg))[: len(q) - h]
        q[h : h + len(rows)] = rows
    plan = open_loop_plan(urdf, joints, s.t, q, c, s.steps, "the CPG plan")
    return ReadyWalk(plan, q_stand, cfg.step_period)


def trunk_path(urdf: str | Path, plan) -> np.ndarray:
    """(T, 3) the planned trunk on the ground, x, y [m] and yaw [rad]: the base of
    :func:`.open_loop_plan.placed_bases` (pinocchio's forward kinematics of the plan's q, the stance sole held flat
    where it landed), yaw unwrapped."""
    bases = placed_bases(urdf, plan.joints, plan.q, plan.c_left)
    return _unwrap_yaw(np.array([(*b.translation[:2], math.atan2(b.rotation[1, 0], b.rotation[0, 0])) for b in bases]))


def _unwrap_yaw(path: np.ndarray) -> np.ndarray:
    """``path`` with its yaw column unwrapped (a turn past ±π continues)."""
    path[:, 2] = np.unwrap(path[:, 2])
    return path
