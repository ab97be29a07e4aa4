"""The NimbRo-OP's CPG gait (:mod:`.nimbro_cpg`) run through its state machine into a :class:`.WalkPlan` (ROS-free):
the phase and the gait command's slopes at each ``systemIterationTime`` (DynamicGait ``update``), the start and stop of
the walk (``MotionLayer::update``: it halts only near a phase centre once |gcv| < stoppingVelocity), and the floating
base placed with the stance sole flat on the ground (pinocchio) for the plan's CoM.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .nimbro_cpg import CpgConfig, picut, pose, support_coefficient
from .open_loop_plan import ReadyWalk, open_loop_plan


class GaitStates(NamedTuple):
    """Per sample (T,): time [s], phase [rad], gcv.x, first-step timer [s], walking; steps: (t_start [s], side)."""

    t: np.ndarray
    phase: np.ndarray
    gcv: np.ndarray
    timer: np.ndarray
    walking: np.ndarray
    steps: list[tuple[float, str]]


def slope(gcv: float, target: float, cfg: CpgConfig) -> float:
    """gcv.x one tick towards ``target`` at accelerationForward (decelerationFactor × when slowing; gcv ≥ 0)."""
    up, down = cfg.acceleration_forward * cfg.dt, cfg.acceleration_forward * cfg.deceleration_factor * cfg.dt
    return gcv + up if target - gcv > up else gcv - down if target - gcv < -down else target


def near_centre(phase: float) -> bool:
    """The phase within 0.05 rad of 0 or ±π, where MotionLayer lets the walk halt."""
    return abs(phase) < 0.05 or abs(phase) >= math.pi - 0.05


class GaitState(NamedTuple):
    """The gait's state between ticks: phase and the previous tick's [rad], gcv.x and its latched target, the
    first-step timer [s], walking (False once halted)."""

    phase: float
    last: float
    gcv: float
    target: float
    timer: float
    walking: bool


def halt_state(cfg: CpgConfig) -> GaitState:
    """The state at the halt pose, about to walk (DynamicGait::reset)."""
    return GaitState(0.0, 0.0, 0.0, 0.0, cfg.first_step_duration, True)


def gait_tick(s: GaitState, command: float | None, cfg: CpgConfig) -> tuple[GaitState, tuple[float, str] | None]:
    """One ``systemIterationTime`` of the state machine with ``command`` = the commanded gcv.x (latched at each phase
    centre crossing; None: the walk withdrawn, it halts once gcv < stoppingVelocity near a phase centre). Returns the
    new state and the step begun in this tick, (how long before the tick's end [s], side), else None."""
    phase, last, gcv, target, timer, walking = s
    if walking and command is None and gcv < cfg.stopping_velocity and near_centre(phase):
        return GaitState(0.0, last, 0.0, target, cfg.first_step_duration, False), None  # DynamicGait::reset
    if not walking:
        return s, None
    rate = cfg.gait_frequency * math.pi  # [rad/s]
    if phase * last <= 0:
        target = 0.0 if command is None else command
    gcv = slope(gcv, target, cfg)
    last, phase = phase, picut(phase + rate * cfg.dt)
    if timer > 0.5 * cfg.first_step_duration:
        phase = 0.0
    timer = max(0.0, timer - cfg.dt)
    step = None
    if last <= 0.0 < phase:
        step = (phase / rate, "right")
    elif last > 0.0 > phase:
        step = ((phase + math.pi) / rate, "left")
    return GaitState(phase, last, gcv, target, timer, True), step


def gait_states(gcv_x: float, n_steps: int, cfg: CpgConfig, hold: float = 0.5) -> GaitStates:
    """The gait's state from the halt pose: ``n_steps`` steps commanded at ``gcv_x`` (gcv ramping at its slope), then
    the command withdrawn until it halts, then ``hold`` [s] in the halt pose (:func:`gait_tick` per tick)."""
    if n_steps < 1:
        raise ValueError(f"n_steps must be ≥ 1, got {n_steps}")
    s, k, t_stop = halt_state(cfg), 0, math.inf
    rows, steps = [(0.0, 0.0, 0.0, s.timer, True)], []
    while k * cfg.dt < t_stop + hold - 1e-9:
        k += 1
        t = k * cfg.dt
        was = s.walking
        s, step = gait_tick(s, gcv_x if len(steps) <= n_steps else None, cfg)
        if was and not s.walking:
            t_stop = t
        if step is not None:
            steps.append((t - step[0], step[1]))
        rows.append((t, s.phase if s.walking else 0.0, s.gcv, s.timer, s.walking))
    steps = [x for x in steps if x[0] < t_stop - 0.5 * cfg.step_period]
    t, ph, g, tm, w = (np.array(c) for c in zip(*rows))
    return GaitStates(t, ph, g, tm, w.astype(bool), steps)


def cpg_plan(
    urdf: str | Path, gcv_x: float, n_steps: int, cfg: CpgConfig | None = None, pose_of: Callable = pose
) -> ReadyWalk:
    """The CPG walk of ``n_steps`` steps at ``gcv_x`` on the grid ``cfg.dt``: q from the gait's equations, q̇ and q̈ by
    finite differences (np.gradient), c_left = the left leg's support coefficient, the CoM placed (:func:`.placed_com`);
    ``zmp`` NaN (the CPG plans none); ``support`` "left"/"right" where the coefficient is 1/0, else "both";
    ``pose_of``: the robot's joints of a gait state (as :func:`.nimbro_cpg.pose`; the OP3's: :func:`.op3_cpg.pose`)."""
    import pinocchio as pin  # noqa: PLC0415

    cfg = cfg or CpgConfig()
    joints = list(pin.buildModelFromUrdf(str(urdf)).names[1:])
    s = gait_states(gcv_x, n_steps, cfg)
    q = np.array([pose_of(joints, p, g, tm, cfg) for p, g, tm in zip(s.phase, s.gcv, s.timer)])
    c = np.array([support_coefficient(p, "left", cfg) if w else 0.5 for p, w in zip(s.phase, s.walking)])
    plan = open_loop_plan(urdf, joints, s.t, q, c, s.steps, "the CPG plan")
    return ReadyWalk(plan, pose_of(joints, 0.0, 0.0, cfg.first_step_duration, cfg), cfg.step_period)
