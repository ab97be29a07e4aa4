"""The NimbRo-OP (urdf/nimbro_op.urdf, its authors' model) walking with placo (ROS-free): its files, placo's frames
and the gait, for :func:`~servo_ff.dynamics.walk_sim.simulate_walk` (``bench/nimbro_obstacle.py``).

Gait choices (each chosen from flat-ground runs only: all three controllers went through 20 steps without a fall at
0.025, 0.05 and 0.095 m/s; re-checked after the knee fix below, the same: none fell at CoM heights 0.41, 0.44 or
0.465 m, and at 0.465 m (b) now advances 0.06 / 0.08 / 0.19 m of the plan's 0.20 / 0.40 / 0.76 m, where it had not
advanced; docs/paper_robot.md):

* step period 0.42 s: single support 0.35 s + 0.2 × 0.35 s double support; the NimbRo-OP's own gait steps every
  1/gaitFrequency = 1/2.4 Hz = 0.417 s (``gaitPhase += gaitFrequency·π·dt``, a step is half a cycle:
  ``DynamicGait.cpp`` and ``config.yaml`` ``gait/dynamicGait/gaitFrequency``, NimbRo/nimbro-op-ros b1f777a);
* swing-foot clearance 0.025 m: the same config's ``dynamicGait/stepHeight``;
* CoM height 0.465 m above the soles (stance knees 0.177 rad, hip pitch to ankle 0.438 m of the straight 0.440 m;
  this docstring said 0.62 rad and 0.419 m, which placo's stance never had): ours, the highest of 0.41, 0.44 and
  0.465 m tried (none fell, with either knee range), nearest the NimbRo-OP's halt pose (ankle 0.44 − footOffsetZ
  0.01 = 0.43 m below the hip, ``config.yaml`` ``gait/haltPosition``, ``Gait::publishTransforms``);
* support polygon 0.20 × 0.12 m: dimensions.h's 0.208 × 0.132 m foot less a margin (ours); soles 0.14 m apart (ours:
  placo needs more than the polygon's width + 0.01 m; the hips are 0.110 m apart, the feet 0.132 m wide);
* trunk pitch 0.1 rad forward (ours); arms hanging, elbows 0.4 rad bent forward (ours);
* knees bent forward only, 0.05…π rad, in placo's IK (``WalkParams.ik_ranges``; the URDF keeps the −1.8…4.5 rad
  goals the authors' stack can send): a knee is one-sided, and with the URDF's range the IK bent the nearly straight
  right knee backwards (to −0.735 rad) for the whole walk. 0.05 rad (≈ 3°) is ours: the stance knee reaches it at
  the end of the longest strides, with the IK's CoM and feet as close to placo's plan as without it (≤ 6 mm).
"""

from __future__ import annotations

import math

from .walk_pattern import WalkFrames, WalkParams
from .walk_sim import REPO

NIMBRO_URDF = REPO / "urdf" / "nimbro_op.urdf"
NIMBRO_SERVOS = REPO / "config" / "servos_nimbro_op.yaml"
NIMBRO_FRAMES = WalkFrames(trunk="trunk_link", left_foot="l_sole", right_foot="r_sole")
NIMBRO_KNEES = ("left_knee_pitch", "right_knee_pitch")
NIMBRO_KNEE_RANGE = (0.05, math.pi)  # [rad] the IK's knee range: bent forward (module docstring)
NIMBRO_POSTURE = {
    "left_shoulder_pitch": 0.0,
    "right_shoulder_pitch": 0.0,
    "left_shoulder_roll": 0.1,
    "right_shoulder_roll": -0.1,
    "left_elbow_pitch": -0.4,
    "right_elbow_pitch": -0.4,
    "neck_yaw": 0.0,
    "head_pitch": 0.0,
}  # [rad]


def nimbro_walk_params() -> WalkParams:
    """The NimbRo-OP's gait (module docstring); the rest is :class:`WalkParams`' (placo's dt, LIPM horizon, limits)."""
    return WalkParams(
        single_support=0.35,
        double_support_ratio=0.2,
        com_height=0.465,
        foot_height=0.025,
        trunk_pitch=0.1,
        foot_length=0.20,
        foot_width=0.12,
        feet_spacing=0.14,
        max_dx_forward=0.08,
        posture=dict(NIMBRO_POSTURE),
        ik_ranges={knee: NIMBRO_KNEE_RANGE for knee in NIMBRO_KNEES},
    )


__all__ = ["NIMBRO_FRAMES", "NIMBRO_KNEE_RANGE", "NIMBRO_KNEES", "NIMBRO_SERVOS", "NIMBRO_URDF", "nimbro_walk_params"]
