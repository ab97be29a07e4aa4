"""Missura & Behnke's CPG gait (:mod:`.nimbro_cpg`, the NimbRo-OP's) on the ROBOTIS OP3 (ROS-free, issue 21).

Dynamic similarity (the rule, pre-registered in ``bench/op3_cpg_obstacle.py``): with s = L_op3 / L_nimbro, L the
hip-to-ankle leg length (thigh + shank; the NimbRo-OP's ``legLength`` 0.44 m), every length of :class:`.CpgConfig`
is × s, every time × √s (``dt`` stays the 8 ms tick), accelerations in gcv/s × 1/√s; angles, phases, gcv values and
the slopes per gcv of angles stay. So a gcv.x walks at the same Froude number: v × √s (:func:`scaled_config`).

Joints: the CPG gives each leg's (hip yaw, hip roll, hip pitch, knee, ankle pitch, ankle roll) in the NimbRo-OP's
URDF convention (every yaw axis +z, roll +x, pitch +y); the OP3's joint of the same name gets it times the sign of
its own URDF axis along that one (:func:`joint_signs`: e.g. ``r_knee`` −y → −1). The OP3's arms are built unlike the
NimbRo-OP's (zero pose sideways, elbow axis x): shoulder roll, elbows and head are held at ROBOTIS's ``ini_pose``
(as :mod:`.op3_robotis_walk` holds them), the shoulder pitch carries the CPG's arm swing alone (:func:`.arm_swing`).
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from dataclasses import replace
from functools import cache
from pathlib import Path

import numpy as np

from .nimbro_cpg import LEG_JOINTS, LEGS, CpgConfig, arm_swing, first_step, leg_joints
from .op3_robotis_walk import RobotisConfig

#: the OP3's name of each CPG leg joint (``urdf/op3.urdf``: ``l_knee``, ``r_ank_pitch``…)
OP3_LEG = dict(zip(LEG_JOINTS, ("hip_yaw", "hip_roll", "hip_pitch", "knee", "ank_pitch", "ank_roll")))
SIDE = {"left": "l", "right": "r"}
#: the NimbRo-OP's joint axis per CPG joint kind (its URDF: yaw +z, roll +x, pitch +y on both sides)
NIMBRO_AXIS = {"yaw": (0.0, 0.0, 1.0), "roll": (1.0, 0.0, 0.0), "pitch": (0.0, 1.0, 0.0), "knee": (0.0, 1.0, 0.0)}


def kind(joint: str) -> str:
    """The axis kind of a CPG joint name (``hip_yaw`` → yaw, ``knee_pitch`` → pitch, ``shoulder_pitch`` → pitch)."""
    return joint.rsplit("_", 1)[-1]


def leg_links(urdf: str | Path, side: str = "l") -> tuple[float, float]:
    """(thigh, shank) [m] of the OP3's ``side`` leg: hip pitch to knee and knee to ankle pitch (joint origins)."""
    import pinocchio as pin  # noqa: PLC0415

    m = pin.buildModelFromUrdf(str(urdf))
    knee, ankle = (m.jointPlacements[m.getJointId(f"{side}_{j}")].translation for j in ("knee", "ank_pitch"))
    return float(np.linalg.norm(knee)), float(np.linalg.norm(ankle))


def similarity(urdf: str | Path, cfg: CpgConfig | None = None) -> float:
    """s = the OP3's thigh + shank / the CPG's ``leg_length`` (0.44 m); a ValueError when the legs differ."""
    legs = [sum(leg_links(urdf, side)) for side in "lr"]
    if not math.isclose(legs[0], legs[1], abs_tol=1e-9):
        raise ValueError(f"{Path(urdf).name}: the legs differ ({legs[0]:.5f} / {legs[1]:.5f} m thigh + shank)")
    return legs[0] / (cfg or CpgConfig()).leg_length


#: each :class:`.CpgConfig` field's power of s under dynamic similarity (a tuple field: per component): lengths 1,
#: times ½, frequencies and accelerations in gcv/s −½, angles, phases, gcv values and per-gcv angle slopes 0; ``dt``
#: stays the 8 ms tick. Every field is listed (test), so a new one cannot silently keep the NimbRo-OP's value.
SCALE_POWER: dict[str, float | tuple[float, ...]] = {
    "gait_frequency": -0.5,
    "swing_start": 0.0,
    "swing_stop": 0.0,
    "step_height": 1.0,
    "step_height_slope": 1.0,
    "push_height": 1.0,
    "step_length_x": 0.0,
    "lateral_hip_swing": 1.0,
    "first_step_duration": 0.5,
    "first_step_hip_swing": 1.0,
    "arm_swing": 0.0,
    "arm_swing_slope": 0.0,
    "support_slope": 0.0,
    "acceleration_forward": -0.5,
    "deceleration_factor": 0.0,
    "stopping_velocity": 0.0,
    "foot_offset": (1.0, 1.0, 1.0),
    "arm_offset": (1.0, 0.0, 1.0),  # armOffsetY is the shoulder roll [rad]
    "leg_length": 1.0,
    "arm_length": 1.0,
    "dt": 0.0,
    "step_length_x_bwd": 0.0,
    "step_length_y": 0.0,
    "step_length_y_pushout": 0.0,
    "step_length_z": 0.0,
    "step_length_z_pushout": 0.0,
    "step_length_z_v_pushout": 0.0,
    "tilt_rot_lean": 0.0,
    "tilt_speed_bwd": 1.0,  # [m of foot x per gcv]
    "tilt_speed_fwd": 1.0,
    "acceleration_backward": -0.5,
    "acceleration_sideward": -0.5,
    "acceleration_rotational": -0.5,
    "gcv_norm_p": 0.0,
}


def scaled_config(cfg: CpgConfig, s: float) -> CpgConfig:
    """``cfg`` for a robot ``s`` times as long (dynamic similarity, module docstring): each field × s^p with p from
    :data:`SCALE_POWER` (lengths × s, times × √s, accelerations [gcv/s] × 1/√s, the rest unchanged)."""
    if not (math.isfinite(s) and s > 0.0):
        raise ValueError(f"scale s must be a finite number > 0, got {s!r}")

    r = math.sqrt(s)

    def one(v: float, p: float) -> float:
        return {0.0: v, 1.0: v * s, 0.5: v * r, -0.5: v / r}[p]

    def scaled(value, power):
        return tuple(one(v, p) for v, p in zip(value, power)) if isinstance(power, tuple) else one(value, power)

    return replace(cfg, **{n: scaled(getattr(cfg, n), p) for n, p in SCALE_POWER.items()})


def op3_config(urdf: str | Path) -> CpgConfig:
    """The NimbRo-OP's :class:`.CpgConfig` scaled to the OP3 of ``urdf`` (:func:`similarity`)."""
    return scaled_config(CpgConfig(), similarity(urdf))


@cache
def _axes(urdf: str) -> dict[str, tuple[float, float, float]]:
    """Joint name → its URDF axis (x, y, z); a joint with a rotated origin is a ValueError naming it."""
    root = ET.parse(urdf).getroot()
    out = {}
    for j in root.iter("joint"):
        axis = j.find("axis")
        rpy = (j.find("origin").get("rpy", "0 0 0") if j.find("origin") is not None else "0 0 0").split()
        if axis is not None:
            if any(float(a) != 0.0 for a in rpy):
                raise ValueError(f"{Path(urdf).name}: joint {j.get('name')} has a rotated origin (rpy {rpy})")
            out[j.get("name")] = tuple(float(v) for v in axis.get("xyz").split())
    return out


def joint_signs(urdf: str | Path) -> dict[str, tuple[str, float]]:
    """CPG joint name (``left_knee_pitch``…, ``left_shoulder_pitch``) → (the OP3's joint, ±1): the sign of the OP3
    joint's axis along the NimbRo-OP's (every origin unrotated, so the axes are the trunk's at zero); an axis not
    along the NimbRo-OP's is a ValueError naming it."""
    return dict(_signs(str(urdf)))


@cache
def _signs(urdf: str) -> dict[str, tuple[str, float]]:
    """:func:`joint_signs` of one URDF file, computed once (:func:`pose` reads it every 8 ms tick)."""
    axes, out = _axes(urdf), {}
    pairs = [(f"{side}_{j}", f"{SIDE[side]}_{OP3_LEG[j]}") for side in LEGS for j in LEG_JOINTS]
    pairs += [(f"{side}_shoulder_pitch", f"{SIDE[side]}_sho_pitch") for side in LEGS]
    for cpg, op3 in pairs:
        dot = float(np.dot(axes[op3], NIMBRO_AXIS[kind(cpg)]))
        if abs(abs(dot) - 1.0) > 1e-9:
            raise ValueError(f"{Path(urdf).name}: {op3}'s axis {axes[op3]} is not along the CPG's {kind(cpg)} axis")
        out[cpg] = (op3, math.copysign(1.0, dot))
    return out


@cache
def _held() -> dict[str, float]:
    """ROBOTIS's ini_pose of the joints the CPG does not move [rad], converted once (:func:`pose` copies it every
    8 ms tick)."""
    return {n: math.radians(v) for n, v in RobotisConfig().hold}


def pose(
    joints: list[str],
    phase: float,
    gcv_x: float,
    timer: float,
    cfg: CpgConfig,
    urdf: str | Path,
    gcv_y: float = 0.0,
    gcv_z: float = 0.0,
) -> np.ndarray:
    """[rad] every OP3 joint of ``joints`` at the gait state: the legs (:func:`.nimbro_cpg.leg_joints`, with the
    steering gcv.y, gcv.z) and the arm swing on the shoulder pitch mapped by :func:`joint_signs`; shoulder roll,
    elbows, head at ROBOTIS's ini_pose."""
    q = dict(_held())
    signs, first = _signs(str(urdf)), first_step(timer, cfg)
    for side, s in LEGS.items():
        for j, v in zip(LEG_JOINTS, leg_joints(phase, s, gcv_x, first, cfg, gcv_y, gcv_z)):
            name, sign = signs[f"{side}_{j}"]
            q[name] = sign * v
        name, sign = signs[f"{side}_shoulder_pitch"]
        q[name] = sign * arm_swing(phase, s, gcv_x, cfg)
    return np.array([q.get(j, 0.0) for j in joints])


def op3_cpg_plan(
    urdf: str | Path, gcv_x: float, n_steps: int, cfg: CpgConfig | None = None, gcv_y: float = 0.0, gcv_z: float = 0.0
):
    """The CPG walk on the OP3 (:func:`.nimbro_cpg_plan.cpg_plan` with :func:`pose`), ``cfg`` default
    :func:`op3_config`, steering ``gcv_y``, ``gcv_z``: a :class:`.ReadyWalk`."""
    from functools import partial  # noqa: PLC0415

    from .nimbro_cpg_plan import cpg_plan  # noqa: PLC0415 (pinocchio)

    return cpg_plan(urdf, gcv_x, n_steps, cfg or op3_config(urdf), partial(pose, urdf=urdf), gcv_y, gcv_z)
