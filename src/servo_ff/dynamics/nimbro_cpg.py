"""The NimbRo-OP's own open-loop gait, Missura & Behnke's central pattern generator, as a :class:`.WalkPlan` (ROS-free).

Re-expressed from its authors' code, NimbRo/nimbro-op-ros b1f777a (``src/nimbro/motion/gait/src/``):
``gaitcode/RobotControl/MotionLayer/DynamicGait.cpp`` (phase, leg lifting, leg swing, lateral hip swing, first step,
arm swing, support coefficient), ``…/MotionLayer/Halt.cpp`` (the halt pose), ``gaitcode/RobotModel/RobotModel.cpp``
(inverse → abstract → joint leg and arm interfaces; ``legLength`` 0.44 m, ``armLength`` 0.4 m),
``gaitcode/RobotControl/RobotControl.cpp`` (inverse pose set, abstract and joint poses added) and ``gait.cpp`` (the
joint pose is the URDF's joint positions; the support coefficients). Values: ``src/nimbro/launch/config/config.yaml``
(:class:`CpgConfig`); line numbers below: DynamicGait.cpp (DG), config.yaml (CY). The gait phase runs in (−π, π]
at ``gaitFrequency``·π rad/s: a cycle is 2/f, a step (one foot's lift) half of it, 1/f = 0.417 s. The right leg
lifts for phase in (0, π), the left for (−π, 0); the walk starts with the right foot.

Left out: their config enables two feedback terms, ``stableSagAngleFront`` 0 / ``stableSagAngleSlope`` 10 (at each
half cycle, a forward trunk pitch θ > 0 adds 10·θ to gcv.x) and ``balance_gain`` −0.099 (ankle pitch += −0.099·gyro_y
/ 100, gait.cpp); both need the robot's state, and a plan is open-loop. The command offset ``gait/gcv_offset/x``
(−0.23, a real robot's drift on the spot) is not added. Terms that are 0 in their config are left out:
``stepLengthXPushout``, ``rotationalHipSwingSlope``, ``lateralHipSwingSlope``, ``pushHeightSlope``,
``gaitFrequencySlopeX/Y``, ``footOffsetXAccSlope``, ``footShiftY``, foot angles.

Steering (gcv.y: lateral, +left; gcv.z: turning, +counter-clockwise; gcv.x < 0: backward), their terms
(:func:`leg_steer`): leg roll += swing·(−gcv.y)·``stepLengthYSlope`` − legSign·(|gcv.y|·``stepLengthYPushout`` +
|gcv.z|·``stepLengthZPushout``) − gcv.z·|gcv.x|·``tiltRotLean`` (DG 376–379, 404, 407); hip yaw = swing·(−gcv.z)·
``stepLengthZSlope`` − legSign·|gcv.z|·``stepLengthZVPushout`` (DG 385–386); the pitch swing's slope is
``stepLengthXSlopeBwd`` for gcv.x < 0 (DG 382); the foot x += max(−``tiltSpeedBwd``·gcv.x, 0) +
``tiltSpeedFwd``·|gcv.y| (DG 330–332); the step height's slope takes max(gcv.x, |gcv.y|) (DG 286). The command is
limited by their norm ‖gcv‖_p ≤ 1, p = ``GCVNormP`` (DG 53–57, :func:`limit_gcv`).

Speeds per gcv, from the gait's geometry (the stance leg moves linearly over its support phase,
T_support = (2π − ``swingStopTiming``)/(f·π) s, between its swing function's −1 and +1):
forward, the leg angle sweeps 2·``stepLengthXSlopeFwd``·gcv.x rad at the halt pose's hip-to-ankle distance l, so
v ≈ 2·A·l/T_support (:func:`speed_per_gcv`: 0.080 m/s at gcv.x = 1, the top speed their norm limit allows);
backward the same with ``stepLengthXSlopeBwd`` (:func:`backward_speed_per_gcv`: 0.234 m/s); lateral the leg roll
sweeps 2·``stepLengthYSlope`` rad at the foot's distance from the roll axis (:func:`lateral_speed_per_gcv`:
0.116 m/s); turning the hip yaw sweeps 2·``stepLengthZSlope`` rad (:func:`yaw_rate_per_gcv`: 0.386 rad/s). Their
real robot's odometry scales (gait.cpp 209–210, CY 147–148: y 0.11 m/s, z 0.35·0.9 = 0.315 rad/s per gcv) agree.
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
    # steering (DG 376–386, 330, 102–157, 53–57; values CY 86–124):
    step_length_x_bwd: float = 0.14  # stepLengthXSlopeBwd [rad of leg angle per gcv] (CY 111)
    step_length_y: float = 0.07  # stepLengthYSlope [rad of leg roll per gcv] (CY 114)
    step_length_y_pushout: float = 0.07  # stepLengthYPushout [rad of leg roll per |gcv.y|] (CY 113)
    step_length_z: float = 0.1  # stepLengthZSlope [rad of hip yaw per gcv] (CY 116)
    step_length_z_pushout: float = 0.01  # stepLengthZPushout [rad of leg roll per |gcv.z|] (CY 115)
    step_length_z_v_pushout: float = 0.05  # stepLengthZVPushout [rad of hip yaw per |gcv.z|] (CY 117)
    tilt_rot_lean: float = 0.07  # tiltRotLean [rad of leg roll per gcv.z·|gcv.x|] (CY 122)
    tilt_speed_bwd: float = 0.06  # tiltSpeedBwd [m of foot x per −gcv.x] (CY 123)
    tilt_speed_fwd: float = 0.01  # tiltSpeedFwd [m of foot x per |gcv.y|] (CY 124)
    acceleration_backward: float = 0.25  # accelerationBackward [gcv/s] (CY 87)
    acceleration_sideward: float = 0.3  # accelerationSideward [gcv/s] (CY 90)
    acceleration_rotational: float = 0.6  # accelerationRotational [gcv/s] (CY 89)
    gcv_norm_p: float = 2.4  # GCVNormP: the norm limit's exponent (CY 86)

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


def leg_lift(phase: float, gcv_x: float, cfg: CpgConfig, gcv_y: float = 0.0) -> float:
    """[m] the foot's rise above the halt pose at its leg ``phase``: a sine of height stepHeight + max(gcv.x, |gcv.y|)
    · slope over the swing half (0, π), pushHeight's dip over the support half (DynamicGait ``LEG LIFTING``, DG 286)."""
    if phase > 0:
        a = cfg.step_height + max(0.0, gcv_x, abs(gcv_y)) * cfg.step_height_slope
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


def abstract_to_joints(extension: float, roll: float, pitch: float, yaw: float = 0.0) -> tuple[float, ...]:
    """(hip yaw, hip roll, hip pitch, knee, ankle pitch, ankle roll) [rad] of an abstract leg pose, foot angles zero:
    the sole stays parallel to the trunk in roll and pitch, turned by the hip yaw (RobotModel
    ``legInterfaceAbstractToJoint``, RobotModel.cpp 548–556)."""
    a = math.acos(min(1.0, max(0.0, 1.0 - extension)))
    return yaw, roll, pitch - a, 2.0 * a, -pitch - a, -roll


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


def leg_joints(
    phase: float,
    sign: float,
    gcv_x: float,
    first: tuple[float, float],
    cfg: CpgConfig,
    gcv_y: float = 0.0,
    gcv_z: float = 0.0,
) -> tuple:
    """The leg of ``sign`` (+1 right) at gait ``phase`` [rad] and gcv (``gcv_x``, ``gcv_y``, ``gcv_z``); ``first`` =
    (hip swing [m], fade) of the first step (:func:`first_step`): the inverse pose (halt + lean + lift + hip swing)
    to abstract, plus the leg swing (pitch; roll and hip yaw when steering, :func:`leg_steer`)."""
    fx, fy, fz = cfg.foot_offset
    leg_phase = picut(phase + math.pi) if sign == -1 else phase
    hip, fade = first
    y = sign * fy + fade * hip + (1.0 - fade) * lateral_hip_swing(phase, cfg)
    if gcv_x < 0 or gcv_y:
        fx += lean_offset_x(gcv_x, gcv_y, cfg)
    ext, roll, pitch = inverse_to_abstract((fx, y, fz + leg_lift(leg_phase, gcv_x, cfg, gcv_y)), cfg.leg_length)
    swing = swing_angle(leg_phase, cfg.swing_start, cfg.swing_stop)
    pitch += swing * gcv_x * (cfg.step_length_x if gcv_x >= 0 else cfg.step_length_x_bwd)
    if not (gcv_y or gcv_z):
        return abstract_to_joints(ext, roll, pitch)
    d_roll, yaw = leg_steer(swing, sign, gcv_x, gcv_y, gcv_z, cfg)
    return abstract_to_joints(ext, roll + d_roll, pitch, yaw)


def leg_steer(swing: float, sign: float, gcv_x: float, gcv_y: float, gcv_z: float, cfg: CpgConfig) -> tuple:
    """(leg roll added [rad], hip yaw [rad]) of the leg of ``sign`` (+1 right) at its ``swing`` (:func:`swing_angle`):
    roll swing·(−gcv.y)·stepLengthYSlope − sign·(|gcv.y|·stepLengthYPushout + |gcv.z|·stepLengthZPushout) −
    gcv.z·|gcv.x|·tiltRotLean (DG 376–379, 404, 407; stepLengthXPushout 0); yaw swing·(−gcv.z)·stepLengthZSlope −
    sign·|gcv.z|·stepLengthZVPushout (DG 385–386; rotationalHipSwingSlope 0). gcv.y > 0 swings the foot to +y (left),
    gcv.z > 0 lands it turned counter-clockwise."""
    roll = swing * -gcv_y * cfg.step_length_y
    roll += -sign * abs(gcv_y) * cfg.step_length_y_pushout
    roll += -sign * abs(gcv_z) * cfg.step_length_z_pushout
    roll -= gcv_z * abs(gcv_x) * cfg.tilt_rot_lean
    yaw = swing * -gcv_z * cfg.step_length_z - sign * abs(gcv_z) * cfg.step_length_z_v_pushout
    return roll, yaw


def lean_offset_x(gcv_x: float, gcv_y: float, cfg: CpgConfig) -> float:
    """[m] the feet's forward shift: max(−tiltSpeedBwd·gcv.x, 0) + tiltSpeedFwd·|gcv.y| (DG 330–332; 0 forward)."""
    return max(-cfg.tilt_speed_bwd * gcv_x, 0.0) + cfg.tilt_speed_fwd * abs(gcv_y)


def first_step(timer: float, cfg: CpgConfig) -> tuple[float, float]:
    """(hip swing [m], fade [0..1]) with ``timer`` [s] left of the first step: the feet shift right (the hip over the
    left foot) while the phase is held at 0, then fade into the lateral hip swing (DynamicGait ``FIRST STEP``)."""
    d = cfg.first_step_duration
    hip = -cfg.first_step_hip_swing * 0.5 * (1.0 - math.cos(math.pi * min(1.0, 2.0 * (d - timer) / d)))
    return hip, min(1.0, 2.0 * timer / d)


def pose(
    joints: list[str], phase: float, gcv_x: float, timer: float, cfg: CpgConfig, gcv_y: float = 0.0, gcv_z: float = 0.0
) -> np.ndarray:
    """[rad] every joint of ``joints`` (URDF names ``left_hip_pitch``…; others 0) at the gait state."""
    q = dict.fromkeys(joints, 0.0)
    first = first_step(timer, cfg)
    for side, s in LEGS.items():
        q.update(zip((f"{side}_{j}" for j in LEG_JOINTS), leg_joints(phase, s, gcv_x, first, cfg, gcv_y, gcv_z)))
        q.update(zip((f"{side}_{j}" for j in ARM_JOINTS), arm_joints(phase, s, gcv_x, cfg)))
    return np.array([q[j] for j in joints])


def speed_per_gcv(cfg: CpgConfig) -> float:
    """[m/s per gcv.x] the stance ankle's speed under the hip: its leg angle sweeps 2·stepLengthXSlopeFwd rad over
    the linear support phase at the halt pose's hip-to-ankle distance (module docstring)."""
    fx, fy, fz = cfg.foot_offset
    length = math.sqrt(fx * fx + fy * fy + (fz - cfg.leg_length) ** 2)
    return 2.0 * cfg.step_length_x * length / support_time(cfg)


def support_time(cfg: CpgConfig) -> float:
    """[s] a leg's linear support phase: (2π − swingStopTiming + swingStartTiming) / (f·π)."""
    return (2.0 * math.pi - cfg.swing_stop + cfg.swing_start) / (cfg.gait_frequency * math.pi)


def backward_speed_per_gcv(cfg: CpgConfig) -> float:
    """[m/s per −gcv.x] walking backward: :func:`speed_per_gcv` with stepLengthXSlopeBwd (DG 382)."""
    return speed_per_gcv(cfg) * cfg.step_length_x_bwd / cfg.step_length_x


def lateral_speed_per_gcv(cfg: CpgConfig) -> float:
    """[m/s per gcv.y] the hip's lateral speed over the stance foot: its leg roll sweeps 2·stepLengthYSlope rad over
    the linear support phase (DG 376) at the halt foot's distance from the roll axis, √(y² + (z − legLength)²)
    (the abstract roll turns the leg about the hip's x axis, RobotModel.cpp 488)."""
    _, fy, fz = cfg.foot_offset
    return 2.0 * cfg.step_length_y * math.hypot(fy, fz - cfg.leg_length) / support_time(cfg)


def yaw_rate_per_gcv(cfg: CpgConfig) -> float:
    """[rad/s per gcv.z] the trunk's yaw rate over the stance foot: its hip yaw sweeps 2·stepLengthZSlope rad over
    the linear support phase (DG 385; the pushout is constant while gcv.z is)."""
    return 2.0 * cfg.step_length_z / support_time(cfg)


def limit_gcv(x: float, y: float, z: float, cfg: CpgConfig) -> tuple[float, float, float]:
    """gcv scaled into their norm limit ‖gcv‖_p ≤ 1, p = GCVNormP (DG 53–57): divided by the norm when it is > 1
    (gcv.y = gcv.z = 0: gcv.x limited to [−1, 1], the same figure exactly)."""
    if not (y or z):
        return max(-1.0, min(1.0, x)), y, z
    p = cfg.gcv_norm_p
    n = (abs(x) ** p + abs(y) ** p + abs(z) ** p) ** (1.0 / p)
    return (x / n, y / n, z / n) if n > 1.0 else (x, y, z)


def gcv_for_speed(vx: float, cfg: CpgConfig) -> float:
    """gcv.x for ``vx`` [m/s] (:func:`speed_per_gcv`); above 1 (their norm limit) a ValueError naming the top speed."""
    g = vx / speed_per_gcv(cfg)
    if not 0.0 <= g <= 1.0:
        raise ValueError(
            f"cpg: vx {vx:g} m/s needs gcv.x {g:.3f}, outside 0…1 (top speed {speed_per_gcv(cfg):.3f} m/s)"
        )
    return g
