"""The NimbRo-OP's own open-loop gait, Missura & Behnke's central pattern generator, as a :class:`.WalkPlan` (ROS-free).

Re-expressed from its authors' code, NimbRo/nimbro-op-ros b1f777a (``src/nimbro/motion/gait/src/``):
``gaitcode/RobotControl/MotionLayer/DynamicGait.cpp`` (phase, leg lifting, leg swing, lateral hip swing, first step,
arm swing, support coefficient), ``…/MotionLayer/Halt.cpp`` (the halt pose), ``gaitcode/RobotModel/RobotModel.cpp``
(inverse → abstract → joint leg and arm interfaces; ``legLength`` 0.44 m, ``armLength`` 0.4 m),
``gaitcode/RobotControl/RobotControl.cpp`` (inverse pose set, abstract and joint poses added) and ``gait.cpp`` (the
joint pose is the URDF's joint positions; the support coefficients). Values: ``src/nimbro/launch/config/config.yaml``
(:class:`CpgConfig`). The gait phase runs in (−π, π] at ``gaitFrequency``·π rad/s: a cycle is 2/f, a step (one
foot's lift) half of it, 1/f = 0.417 s. The right leg lifts for phase in (0, π), the left for (−π, 0); the walk starts
with the right foot.

Left out: their config enables two feedback terms, ``stableSagAngleFront`` 0 / ``stableSagAngleSlope`` 10 (at each
half cycle, a forward trunk pitch θ > 0 adds 10·θ to gcv.x) and ``balance_gain`` −0.099 (ankle pitch += −0.099·gyro_y
/ 100, gait.cpp); both need the robot's state, and a plan is open-loop. The command offset ``gait/gcv_offset/x``
(−0.23, a real robot's drift on the spot) is not added. Only forward walking: gcv.y = gcv.z = 0 (their y and z terms
vanish). Forward speed: the stance leg's angle sweeps 2·``stepLengthXSlopeFwd``·gcv.x rad in its linear support
phase, (2π − ``swingStopTiming``)/(f·π) s, so v ≈ 2·A·l/T_support with l the halt pose's hip-to-ankle distance
(:func:`speed_per_gcv`: 0.080 m/s at gcv.x = 1, the top speed their norm limit allows).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

LEGS = {"left": -1.0, "right": 1.0}  # their legSign / armSign
LEG_JOINTS = ("hip_yaw", "hip_roll", "hip_pitch", "knee_pitch", "ankle_pitch", "ankle_roll")
ARM_JOINTS = ("shoulder_pitch", "shoulder_roll", "elbow_pitch")


@dataclass(frozen=True)
class CpgConfig:
    """The gait's values [SI; phase in rad]: config.yaml ``gait/dynamicGait/<name>``, ``gait/haltPosition/<name>``,
    ``gait/systemIterationTime``; leg and arm lengths from RobotModel.cpp (all b1f777a)."""

    gait_frequency: float = 2.4  # gaitFrequency [1/s]: phase rate f·π
    swing_start: float = 0.0  # swingStartTiming [rad]
    swing_stop: float = 2.38  # swingStopTiming [rad]
    step_height: float = 0.025  # stepHeight [m]
    step_height_slope: float = 0.02  # stepHeightSlope [m per gcv]
    push_height: float = 0.0  # pushHeight [m]
    step_length_x: float = 0.048  # stepLengthXSlopeFwd [rad of leg angle per gcv]
    lateral_hip_swing: float = 0.011  # lateralHipSwing [m]
    first_step_duration: float = 0.5  # firstStepDuration [s]
    first_step_hip_swing: float = 0.01  # firstStepHipSwing [m]
    arm_swing: float = 0.0  # armSwing [rad]
    arm_swing_slope: float = 0.25  # armSwingSlope [rad per gcv]
    support_slope: float = 0.85  # supportSlope [1/rad]
    acceleration_forward: float = 0.18  # accelerationForward [gcv/s]
    deceleration_factor: float = 2.0  # decelerationFactor
    stopping_velocity: float = 0.1  # stoppingVelocity [gcv]
    foot_offset: tuple[float, float, float] = (-0.04, -0.02, 0.01)  # haltPosition footOffsetX/Y/Z [m]
    arm_offset: tuple[float, float, float] = (0.0, 0.19, 0.05)  # haltPosition armOffsetX/Y/Z [m; Y also rad]
    leg_length: float = 0.44  # RobotModel legLength [m]
    arm_length: float = 0.4  # RobotModel armLength [m]
    dt: float = 0.008  # systemIterationTime [s]

    @property
    def step_period(self) -> float:
        """[s] one foot's lift: half a cycle of the phase, π / (f·π)."""
        return 1.0 / self.gait_frequency


def picut(x: float) -> float:
    """The angle ``x`` [rad] wrapped to (−π, π] (their ``picut``)."""
    return math.pi - (math.pi - x) % (2.0 * math.pi)


def swing_angle(phase: float, start: float, stop: float, inclusive: bool = False) -> float:
    """Leg (or arm) swing in [−1, 1] at its ``phase``: a cosine from +1 (back) to −1 (front) over [start, stop), then
    linearly back to +1 over the rest of the cycle (DynamicGait ``abstractLegFunction``; arms ``inclusive`` of stop)."""
    if start <= phase < stop or (inclusive and phase == stop):
        return math.cos((phase - start) * math.pi / (stop - start))
    rest = 2.0 * math.pi - stop + start
    return -1.0 + ((phase - stop) if phase >= stop else (phase + 2.0 * math.pi - stop)) * 2.0 / rest


def leg_lift(phase: float, gcv_x: float, cfg: CpgConfig) -> float:
    """[m] the foot's rise above the halt pose at its leg ``phase``: a sine of height stepHeight + gcv·slope over the
    swing half (0, π), pushHeight's dip over the support half (DynamicGait ``LEG LIFTING``)."""
    if phase > 0:
        a = cfg.step_height + max(0.0, gcv_x) * cfg.step_height_slope
        return math.sin(2.0 * phase - math.pi / 2) * a / 2 + a / 2
    a = cfg.push_height
    return math.sin(2.0 * phase + math.pi / 2) * a / 2 - a / 2


def lateral_hip_swing(phase: float, cfg: CpgConfig) -> float:
    """[m] the feet's lateral shift (both feet, +y: the hip moves right) from the two half-sine hip swings that
    start at each foot's landing (DynamicGait ``LATERAL HIP SWING``; gcv slope 0 in their config)."""
    dur = 2.0 * math.pi - cfg.swing_stop + cfg.swing_start
    total = 0.0
    for start, stop, sign in ((cfg.swing_stop, cfg.swing_start, 1.0),
                              (cfg.swing_stop - math.pi, cfg.swing_start - math.pi, -1.0)):  # fmt: skip
        if phase <= stop or phase >= start:
            p = phase + 2.0 * math.pi - start if phase < start else phase - start
            total += sign * math.sin(p * math.pi / dur)
    return total * cfg.lateral_hip_swing


def support_coefficient(phase: float, leg: str, cfg: CpgConfig) -> float:
    """The share of the weight on ``leg`` ("left"/"right") in [0, 1]: 1 − 0.5 … ramps of slope supportSlope around the
    phase centres 0 and π (DynamicGait ``supportCoefficient``; the left leg's phase shifted by π)."""
    p = phase + (math.pi if leg == "left" else 0.0)
    p = picut(p - 0.5 / cfg.support_slope)
    if p < 0:
        return min(1.0, max(0.0, -cfg.support_slope * p))
    return min(1.0, max(0.0, cfg.support_slope * picut(p - math.pi) + 1.0))


def inverse_to_abstract(foot: tuple[float, float, float], leg_length: float) -> tuple[float, float, float]:
    """(extension [0..1], leg roll, leg pitch [rad]) of a foot at ``foot`` [m] from the hip's zero pose, foot angles
    and yaw zero (RobotModel ``legInterfaceInverseToAbstract``)."""
    x, y, z = foot[0], foot[1], foot[2] - leg_length
    n = math.sqrt(x * x + y * y + z * z)
    return min(1.0, max(0.0, 1.0 - n / leg_length)), math.atan2(y, -z), -math.asin(x / n) if n > 0 else 0.0


def abstract_to_joints(extension: float, roll: float, pitch: float) -> tuple[float, ...]:
    """(hip yaw, hip roll, hip pitch, knee, ankle pitch, ankle roll) [rad] of an abstract leg pose, foot angles zero:
    the sole stays parallel to the trunk (RobotModel ``legInterfaceAbstractToJoint``)."""
    a = math.acos(min(1.0, max(0.0, 1.0 - extension)))
    return 0.0, roll, pitch - a, 2.0 * a, -pitch - a, -roll


def arm_joints(phase: float, sign: float, gcv_x: float, cfg: CpgConfig) -> tuple[float, float, float]:
    """(shoulder pitch, shoulder roll, elbow) [rad] of the arm of ``sign`` (+1 right): the hand at armOffset below the
    shoulder, swung opposite to its leg, the shoulder rolled out by armOffsetY (DynamicGait, RobotModel's arm)."""
    x, _, z = cfg.arm_offset
    tx, tz = x, z - cfg.arm_length
    ext = min(1.0, max(0.0, 1.0 - math.hypot(tx, tz) / cfg.arm_length))
    angle = -math.atan2(tx, -tz) + arm_swing(phase, sign, gcv_x, cfg)
    a = math.acos(1.0 - ext)
    return angle + a, -sign * cfg.arm_offset[1], -2.0 * a


def arm_swing(phase: float, sign: float, gcv_x: float, cfg: CpgConfig) -> float:
    """[rad] the shoulder pitch's swing of the arm of ``sign`` (+1 right), opposite to its leg: armSwing + gcv.x ·
    armSwingSlope times the swing function (DynamicGait ``ARM SWING``; positive swings the hand back)."""
    arm_phase = picut(phase + math.pi) if sign == 1 else phase
    swing = swing_angle(arm_phase, cfg.swing_start, cfg.swing_stop, inclusive=True)
    return swing * (cfg.arm_swing + gcv_x * cfg.arm_swing_slope)


def leg_joints(phase: float, sign: float, gcv_x: float, first: tuple[float, float], cfg: CpgConfig) -> tuple:
    """The leg of ``sign`` (+1 right) at gait ``phase`` [rad] and ``gcv_x``; ``first`` = (hip swing [m], fade) of the
    first step (:func:`first_step`): the inverse pose (halt + lift + hip swing) to abstract, plus the leg swing."""
    fx, fy, fz = cfg.foot_offset
    leg_phase = picut(phase + math.pi) if sign == -1 else phase
    hip, fade = first
    y = sign * fy + fade * hip + (1.0 - fade) * lateral_hip_swing(phase, cfg)
    ext, roll, pitch = inverse_to_abstract((fx, y, fz + leg_lift(leg_phase, gcv_x, cfg)), cfg.leg_length)
    pitch += swing_angle(leg_phase, cfg.swing_start, cfg.swing_stop) * gcv_x * cfg.step_length_x
    return abstract_to_joints(ext, roll, pitch)


def first_step(timer: float, cfg: CpgConfig) -> tuple[float, float]:
    """(hip swing [m], fade [0..1]) with ``timer`` [s] left of the first step: the feet shift right (the hip over the
    left foot) while the phase is held at 0, then fade into the lateral hip swing (DynamicGait ``FIRST STEP``)."""
    d = cfg.first_step_duration
    hip = -cfg.first_step_hip_swing * 0.5 * (1.0 - math.cos(math.pi * min(1.0, 2.0 * (d - timer) / d)))
    return hip, min(1.0, 2.0 * timer / d)


def pose(joints: list[str], phase: float, gcv_x: float, timer: float, cfg: CpgConfig) -> np.ndarray:
    """[rad] every joint of ``joints`` (URDF names ``left_hip_pitch``…; others 0) at the gait state."""
    q = dict.fromkeys(joints, 0.0)
    first = first_step(timer, cfg)
    for side, s in LEGS.items():
        q.update(zip((f"{side}_{j}" for j in LEG_JOINTS), leg_joints(phase, s, gcv_x, first, cfg)))
        q.update(zip((f"{side}_{j}" for j in ARM_JOINTS), arm_joints(phase, s, gcv_x, cfg)))
    return np.array([q[j] for j in joints])


def speed_per_gcv(cfg: CpgConfig) -> float:
    """[m/s per gcv.x] the stance ankle's speed under the hip: its leg angle sweeps 2·stepLengthXSlopeFwd rad over
    the linear support phase at the halt pose's hip-to-ankle distance (module docstring)."""
    fx, fy, fz = cfg.foot_offset
    length = math.sqrt(fx * fx + fy * fy + (fz - cfg.leg_length) ** 2)
    support = (2.0 * math.pi - cfg.swing_stop + cfg.swing_start) / (cfg.gait_frequency * math.pi)
    return 2.0 * cfg.step_length_x * length / support


def gcv_for_speed(vx: float, cfg: CpgConfig) -> float:
    """gcv.x for ``vx`` [m/s] (:func:`speed_per_gcv`); above 1 (their norm limit) a ValueError naming the top speed."""
    g = vx / speed_per_gcv(cfg)
    if not 0.0 <= g <= 1.0:
        raise ValueError(
            f"cpg: vx {vx:g} m/s needs gcv.x {g:.3f}, outside 0…1 (top speed {speed_per_gcv(cfg):.3f} m/s)"
        )
    return g
