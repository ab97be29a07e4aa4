"""ROBOTIS's own OP3 walking engine, an open-loop sinusoidal pattern, as a :class:`.WalkPlan` (ROS-free).

Re-expressed from ROBOTIS-GIT/ROBOTIS-OP3 ``op3_walking_module/src/op3_walking_module.cpp`` (commit 2081432):
``wSin``, ``updateTimeParam``, ``updateMovementParam``, ``processPhase`` (the 8 ms tick, its phase snapping and the
start/stop logic), ``computeLegAngle`` (the feet's end points, the pelvis roll offsets, the hip pitch offset),
``computeArmAngle`` (arm swing on ``init_position_`` 5°/−5°) and ``process`` (``time_`` wraps at period_time);
the leg IK is ROBOTIS's analytic one (:mod:`.op3_robotis_ik`: ``op3_kinematics_dynamics.cpp`` 7f5c08e,
``calcInverseKinematicsForLeg``) with its link lengths (thigh 0.110, calf 0.110, ankle 0.0305 m; our URDF's thigh is
0.11015: the sole lands within 0.2 mm of where ROBOTIS's model puts it) and joint directions. Values:
``op3_walking_module/config/param.yaml`` (7860777; :class:`RobotisConfig`). Joints the walking module leaves alone
(shoulder roll, elbows, head) are held at ``op3_base_module/data/ini_pose.yaml``'s ``tar_pose`` (f4a1254).

Left out: the gyro feedback (``balance_enable`` is off until a "balance on" command) and the per-phase P gains of
``setJointGains`` (the controllers set the gains here); sideways and turning (y_move = angle_move = 0). The left foot
swings first. On the 8 ms tick the phase snapping makes each quarter period 19 ticks: a step lasts 0.304 s, not
period_time/2 = 0.3 s (:func:`step_period`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .op3_robotis_ik import DIRECTION, LEG, leg_ik
from .open_loop_plan import ReadyWalk, open_loop_plan


@dataclass(frozen=True)
class RobotisConfig:
    """The walking module's values [SI]: param.yaml (7860777) unless noted; lengths op3_kinematics_dynamics.cpp."""

    x_offset: float = -0.02  # x_offset [m]
    y_offset: float = 0.015  # y_offset [m] (feet apart by this more than the hips)
    z_offset: float = 0.035  # z_offset [m] (legs shortened)
    hip_pitch_offset: float = math.radians(7.0)  # hip_pitch_offset 7.000000052497138° [rad]
    period_time: float = 0.6  # period_time 600 ms [s]: two steps
    dsp_ratio: float = 0.2  # dsp_ratio
    step_fb_ratio: float = 0.28  # step_forward_back_ratio
    foot_height: float = 0.06  # foot_height [m]
    y_swap: float = 0.02  # swing_right_left [m] (another stored version, 8f46de4, has 0.028)
    z_swap: float = 0.006  # swing_top_down [m]
    pelvis_offset: float = math.radians(0.4999999961268166)  # pelvis_offset [rad]
    arm_swing_gain: float = 0.2  # arm_swing_gain [deg per mm of x_move]
    arm_init: float = math.radians(5.0)  # init_position_ of the arm swing joints (cpp) [rad]
    thigh: float = 0.110  # thigh_length_m_ [m]
    calf: float = 0.110  # calf_length_m_ [m]
    ankle: float = 0.0305  # ankle_length_m_ [m]
    dt: float = 0.008  # control_cycle_msec 8 [s]
    hold: tuple[tuple[str, float], ...] = (
        ("r_sho_roll", -45.0), ("l_sho_roll", 45.0), ("r_el", 45.0), ("l_el", -45.0),
        ("head_pan", 0.0), ("head_tilt", -10.0),
    )  # fmt: skip  # ini_pose.yaml tar_pose [deg]

    @property
    def leg_length(self) -> float:
        return self.thigh + self.calf + self.ankle


def w_sin(t: float, period: float, shift: float, mag: float, mag_shift: float) -> float:
    """ROBOTIS's ``wSin``: mag·sin(2π t / period − shift) + mag_shift."""
    return mag * math.sin(2.0 * math.pi / period * t - shift) + mag_shift


def times(cfg: RobotisConfig) -> dict[str, float]:
    """``updateTimeParam``'s times [s]: each foot's single support (SSP) start/end and the three phase marks."""
    T, ssp = cfg.period_time, 1.0 - cfg.dsp_ratio
    return {"l_s": (1 - ssp) * T / 4, "l_e": (1 + ssp) * T / 4, "r_s": (3 - ssp) * T / 4, "r_e": (3 + ssp) * T / 4,
            "p1": T / 4, "p2": T / 2, "p3": 3 * T / 4}  # fmt: skip


def end_points(time: float, x_amp: float, x_swap: float, cfg: RobotisConfig) -> tuple:
    """``computeLegAngle``'s end points at the pattern's ``time`` [s] with the x move and swap amplitudes [m]:
    (right (x, y, z), left (x, y, z)) [m] from each hip, and the pelvis roll offsets (right, left) [rad]."""
    T, tm = cfg.period_time, times(cfg)
    ssp = 1.0 - cfg.dsp_ratio
    xp, zp = T * ssp, T * ssp / 2  # x_move and z_move periods
    za = cfg.foot_height / 2
    po, ps = cfg.pelvis_offset, 0.35 * cfg.pelvis_offset

    def mx(t: float, base: float, amp: float, extra: float = 0.0) -> float:
        return w_sin(t, xp, math.pi / 2 + 2 * math.pi / xp * base + extra, amp, 0.0)

    def mz(t: float, base: float) -> float:
        return w_sin(t, zp, math.pi / 2 + 2 * math.pi / zp * base, za, za / 2)

    def bump(t: float, base: float, amp: float) -> float:
        return w_sin(t, zp, math.pi / 2 + 2 * math.pi / zp * base, amp / 2, amp / 2)

    ls, le, rs, re = tm["l_s"], tm["l_e"], tm["r_s"], tm["r_e"]
    pel = (0.0, 0.0)
    if time <= ls:  # double support (start of a cycle)
        lx, rx, lz, rz = mx(ls, ls, x_amp), mx(ls, ls, -x_amp), mz(ls, ls), mz(rs, rs)
    elif time <= le:  # left swing
        lx, rx, lz, rz = mx(time, ls, x_amp), mx(time, ls, -x_amp), mz(time, ls), mz(rs, rs)
        pel = (bump(time, ls, -po), bump(time, ls, ps))
    elif time <= rs:  # double support
        lx, rx, lz, rz = mx(le, ls, x_amp), mx(le, ls, -x_amp), mz(le, ls), mz(rs, rs)
    elif time <= re:  # right swing
        lx, rx = mx(time, rs, x_amp, math.pi), mx(time, rs, -x_amp, math.pi)
        lz, rz = mz(le, ls), mz(time, rs)
        pel = (bump(time, rs, -ps), bump(time, rs, po))
    else:  # double support (end of a cycle)
        lx, rx, lz, rz = mx(re, rs, x_amp, math.pi), mx(re, rs, -x_amp, math.pi), mz(le, ls), mz(re, rs)
    sx = w_sin(time, T / 2, math.pi, x_swap, 0.0)
    sy = w_sin(time, T, 0.0, cfg.y_swap, 0.0)
    sz = w_sin(time, T / 2, 1.5 * math.pi, cfg.z_swap, cfg.z_swap)
    z0 = cfg.z_offset - cfg.leg_length
    right = (sx + rx + cfg.x_offset, sy - cfg.y_offset / 2, sz + rz + z0)
    left = (sx + lx + cfg.x_offset, sy + cfg.y_offset / 2, sz + lz + z0)
    return right, left, pel


def pose(joints: list[str], time: float, x_amp: float, x_swap: float, cfg: RobotisConfig) -> np.ndarray:
    """[rad] every joint of ``joints`` (URDF names) at the pattern's ``time`` [s] and amplitudes [m]: the legs by the
    IK with the joint directions, pelvis and hip pitch offsets; the arm swing; the rest held (``cfg.hold``)."""
    q = {n: math.radians(v) for n, v in cfg.hold}
    right, left, pel = end_points(time, x_amp, x_swap, cfg)
    for side, ep, p in (("r", right, pel[0]), ("l", left, pel[1])):
        d = DIRECTION[side]
        angles = [a * s for a, s in zip(leg_ik(ep, (cfg.thigh, cfg.calf, cfg.ankle)), d)]
        angles[1] += d[1] * p  # hip roll: the pelvis offset
        angles[2] -= d[2] * cfg.hip_pitch_offset
        q.update(zip((f"{side}_{j}" for j in LEG), angles))
    swing = 0.0 if x_amp == 0 else w_sin(time, cfg.period_time, 1.5 * math.pi, x_amp * cfg.arm_swing_gain * 1000, 0.0)
    q["r_sho_pitch"] = cfg.arm_init + math.radians(swing)  # −swing × direction −1
    q["l_sho_pitch"] = -cfg.arm_init + math.radians(swing)
    return np.array([q.get(j, 0.0) for j in joints])


def support(time: float, cfg: RobotisConfig) -> float:
    """The left foot's share of the weight: 0 in the left swing, 1 in the right, linear across each double support
    (0.5 at its middle, where the walk starts and halts)."""
    tm, dsp = times(cfg), cfg.period_time - times(cfg)["r_e"] + times(cfg)["l_s"]
    if tm["l_s"] < time <= tm["l_e"]:
        return 0.0
    if tm["r_s"] < time <= tm["r_e"]:
        return 1.0
    if tm["l_e"] < time <= tm["r_s"]:
        return (time - tm["l_e"]) / (tm["r_s"] - tm["l_e"])
    return 1.0 - ((time - tm["r_e"]) if time > tm["r_e"] else time + cfg.period_time - tm["r_e"]) / dsp


def _snap(time: float, cfg: RobotisConfig) -> tuple[float, str]:
    """``processPhase``'s mark at ``time`` ("", "p0", "p1", "p2", "p3") and the time snapped to it."""
    if time == 0.0:
        return time, "p0"
    for mark in ("p1", "p2", "p3"):
        at = times(cfg)[mark]
        if at - cfg.dt / 2 <= time < at + cfg.dt / 2:
            return at, mark
    return time, ""


def step_period(cfg: RobotisConfig) -> float:
    """[s] one step (half a cycle) on the module's tick: the ticks from ``time_`` 0 to its wrap, halved."""
    time, n = 0.0, 0
    while True:
        time, _ = _snap(time, cfg)
        n, time = n + 1, time + cfg.dt
        if time >= cfg.period_time:
            return n * cfg.dt / 2


def x_move_for_speed(vx: float, cfg: RobotisConfig) -> float:
    """x_move_amplitude [m] for ``vx`` [m/s]: the stance foot sweeps 2·x_move under the hip per step."""
    if not (math.isfinite(vx) and vx >= 0.0):
        raise ValueError(f"robotis walk: vx must be finite and ≥ 0 m/s, got {vx}")
    return vx * step_period(cfg) / 2


def pattern_states(x_move: float, n_steps: int, cfg: RobotisConfig, hold: float = 0.5):
    """Per tick from ``startWalking`` with x_move_amplitude ``x_move`` [m]: (time_ [s], x_move_amplitude_ [m],
    x_swap_amplitude_ [m]) rows, and the swings' (start [s], swinging foot); ``stop`` is called when ``n_steps``
    swings have ended, then the module slows to a halt by itself; ``hold`` [s] halted after."""
    if n_steps < 1:
        raise ValueError(f"n_steps must be ≥ 1, got {n_steps}")
    tm = times(cfg)
    time, wp, xa, xs, prev, ctrl, real = 0.0, x_move, 0.0, 0.0, 0.0, True, True
    rows, steps, swing, halted = [], [], "", None
    while halted is None or len(rows) * cfg.dt < halted + hold - 1e-9:
        time, mark = _snap(time, cfg)
        if mark in ("p1", "p3"):  # updateMovementParam
            xa, xs = wp, wp * cfg.step_fb_ratio
            if prev == 0.0:
                xa, xs = 0.5 * xa, 0.5 * xs
        elif mark in ("p0", "p2") and not ctrl:
            if xa == 0.0:
                real = False
            else:
                wp = 0.0 if mark == "p0" else prev
                prev = 0.0 if mark == "p0" else prev
        now = len(rows) * cfg.dt
        rows.append((time, xa, xs))
        side = "left" if tm["l_s"] < time <= tm["l_e"] else "right" if tm["r_s"] < time <= tm["r_e"] else ""
        if side and side != swing and real:
            steps.append((now - (time - tm["l_s" if side == "left" else "r_s"]), side))
        elif swing and not side and len(steps) >= n_steps:
            ctrl = False  # stop()
        swing = side
        if real:
            time += cfg.dt
            if time >= cfg.period_time:
                time, prev = 0.0, 0.5 * wp
        elif halted is None:
            halted = now
    return np.array(rows), steps


def robotis_plan(urdf: str | Path, vx: float, n_steps: int, cfg: RobotisConfig | None = None) -> ReadyWalk:
    """ROBOTIS's walk of ``n_steps`` steps at ``vx`` [m/s] (:func:`x_move_for_speed`) on the 8 ms tick: q from the
    pattern, q̇ and q̈ by finite differences, c_left = :func:`support`, the CoM placed with the stance sole flat
    (:func:`.placed_com`); the halt pose (time_ 0, amplitudes 0) and the step period; a joint outside its URDF
    limits is a ValueError naming it."""
    import pinocchio as pin  # noqa: PLC0415

    cfg = cfg or RobotisConfig()
    joints = list(pin.buildModelFromUrdf(str(urdf)).names[1:])
    rows, steps = pattern_states(x_move_for_speed(vx, cfg), n_steps, cfg)
    q = np.array([pose(joints, *r, cfg) for r in rows])
    c = np.array([support(r[0], cfg) for r in rows])
    plan = open_loop_plan(urdf, joints, np.arange(len(rows)) * cfg.dt, q, c, steps, "ROBOTIS's walk")
    return ReadyWalk(plan, pose(joints, 0.0, 0.0, 0.0, cfg), step_period(cfg))
