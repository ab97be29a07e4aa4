"""Missura & Behnke's CPG carried to the OP3 (dynamics.op3_cpg): the dynamic-similarity scaling, the joint map from
the NimbRo-OP's URDF convention onto urdf/op3.urdf's axes, the halt pose through pinocchio's forward kinematics."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from servo_ff.dynamics.nimbro_cpg import CpgConfig, speed_per_gcv
from servo_ff.dynamics.op3_cpg import joint_signs, leg_links, op3_config, op3_cpg_plan, pose, scaled_config, similarity

ROOT = Path(__file__).resolve().parents[1]
URDF = ROOT / "urdf" / "op3.urdf"
MODEL = pin.buildModelFromUrdf(str(URDF))
JOINTS = list(MODEL.names[1:])
CFG = op3_config(URDF)


def _frames(q: np.ndarray) -> pin.Data:
    data = MODEL.createData()
    pin.framesForwardKinematics(MODEL, data, q)
    return data


def _at(data: pin.Data, joint: str) -> np.ndarray:
    return data.oMi[MODEL.getJointId(joint)].translation


def test_scaled_config_scales_lengths_by_s_times_by_root_s():
    base = CpgConfig()
    for s in (0.25, 0.5, 2.0):
        c = scaled_config(base, s)
        assert speed_per_gcv(c) == pytest.approx(speed_per_gcv(base) * math.sqrt(s), rel=1e-12)
        assert c.step_period == pytest.approx(base.step_period * math.sqrt(s), rel=1e-12)
        assert c.first_step_duration == pytest.approx(base.first_step_duration * math.sqrt(s))
        assert c.acceleration_forward == pytest.approx(base.acceleration_forward / math.sqrt(s))
        assert c.leg_length == pytest.approx(base.leg_length * s) and c.step_height == pytest.approx(0.025 * s)
        assert c.foot_offset == pytest.approx(tuple(v * s for v in base.foot_offset))
        assert c.arm_offset == pytest.approx((0.0, 0.19, 0.05 * s))  # armOffsetY is an angle
        same = ("swing_stop", "step_length_x", "arm_swing_slope", "support_slope", "stopping_velocity", "dt")
        assert all(getattr(c, n) == getattr(base, n) for n in same)
    assert scaled_config(base, 1.0) == base
    for bad in (0.0, -1.0, math.nan, math.inf):
        with pytest.raises(ValueError, match="scale s must be a finite number > 0"):
            scaled_config(base, bad)


def test_every_cpg_field_has_its_scaling():
    """SCALE_POWER names every CpgConfig field, a tuple field per component, and nothing else: a field added to the
    gait without a scaling would keep the NimbRo-OP's value on the OP3 unseen."""
    from dataclasses import fields

    from servo_ff.dynamics.op3_cpg import SCALE_POWER

    base = CpgConfig()
    assert set(SCALE_POWER) == {f.name for f in fields(CpgConfig)}
    for name, power in SCALE_POWER.items():
        value = getattr(base, name)
        assert isinstance(power, tuple) == isinstance(value, tuple), name
        assert not isinstance(power, tuple) or len(power) == len(value), name


def test_the_op3_scale_is_thigh_plus_shank_over_the_gaits_leg_length():
    assert leg_links(URDF, "l") == pytest.approx((0.11015, 0.110)) and leg_links(URDF, "r") == leg_links(URDF, "l")
    assert similarity(URDF) == pytest.approx(0.22015 / 0.44)
    assert CFG.step_period == pytest.approx(0.41667 * math.sqrt(0.22015 / 0.44), rel=1e-4)  # 0.295 s
    assert speed_per_gcv(CFG) == pytest.approx(0.0567, abs=1e-4)


def test_joint_signs_follow_the_op3_urdf_axes():
    s = joint_signs(URDF)
    assert s["left_knee_pitch"] == ("l_knee", 1.0) and s["right_knee_pitch"] == ("r_knee", -1.0)
    assert s["left_hip_pitch"] == ("l_hip_pitch", 1.0) and s["right_hip_pitch"] == ("r_hip_pitch", -1.0)
    assert s["left_ankle_pitch"] == ("l_ank_pitch", -1.0) and s["right_ankle_pitch"] == ("r_ank_pitch", 1.0)
    assert s["left_hip_roll"] == ("l_hip_roll", -1.0) and s["right_ankle_roll"] == ("r_ank_roll", 1.0)
    assert s["left_shoulder_pitch"] == ("l_sho_pitch", 1.0) and s["right_shoulder_pitch"] == ("r_sho_pitch", -1.0)


def test_halt_pose_stands_with_knees_forward_and_soles_flat():
    """The halt pose through FK: each knee ahead of its hip-to-ankle line, each sole flat within 1°, each ankle at
    the scaled foot offset from its hip (the OP3's 0.15 mm longer thigh: within 0.5 mm)."""
    q = pose(JOINTS, 0.0, 0.0, CFG.first_step_duration, CFG, URDF)
    data = _frames(q)
    fx, fy, fz = CFG.foot_offset
    for side, sign in (("l", 1.0), ("r", -1.0)):
        hip, knee, ankle = (_at(data, f"{side}_{j}") for j in ("hip_pitch", "knee", "ank_pitch"))
        line_x = hip[0] + (ankle[0] - hip[0]) * (knee[2] - hip[2]) / (ankle[2] - hip[2])
        assert knee[0] - line_x > 0.015  # [m] bent forward
        sole = data.oMf[MODEL.getFrameId(f"{side}_sole")].rotation
        assert math.degrees(math.acos(min(1.0, sole[2, 2]))) < 1.0
        assert ankle - hip == pytest.approx([fx, -sign * fy, fz - CFG.leg_length], abs=5e-4)
    assert q[JOINTS.index("l_knee")] > 0.3 and q[JOINTS.index("r_knee")] < -0.3  # the URDF's knee limits' sides
    assert q[JOINTS.index("l_sho_roll")] == pytest.approx(math.radians(45)) and q[JOINTS.index("l_sho_pitch")] == 0


def test_the_walk_mirrors_the_legs_and_swings_the_arms():
    """Commanded gcv 1: half a cycle apart the left leg repeats the right's, mirrored by the OP3's axes; the shoulder
    pitch swings both ways up to armSwingSlope · gcv."""
    from servo_ff.dynamics.nimbro_cpg_plan import gait_states

    w = op3_cpg_plan(URDF, 1.0, 8)
    p = w.plan
    half = int(round(w.step_period / CFG.dt))
    k = int(round(p.steps[4][0] / CFG.dt)) + 5
    for j in ("knee", "hip_pitch", "hip_roll", "ank_pitch"):
        li, ri = p.joints.index(f"l_{j}"), p.joints.index(f"r_{j}")
        assert p.q[k + half, li] == pytest.approx(-p.q[k, ri], abs=0.02)  # pitch axes mirrored; the rolls' motion
    top = gait_states(1.0, 8, CFG).gcv.max()
    arm = p.q[:, p.joints.index("r_sho_pitch")]
    assert np.abs(arm).max() == pytest.approx(0.25 * top, rel=0.06) and arm.min() < -0.1 < 0.1 < arm.max()


def test_a_joint_beyond_its_limit_is_refused_by_name():
    bad = dataclasses.replace(CFG, step_length_x=3.0, acceleration_forward=100.0)  # ±3 rad of leg swing
    with pytest.raises(ValueError, match=r"op3.urdf: the CPG plan takes \w+ to .* outside"):
        op3_cpg_plan(URDF, 1.0, 2, bad)


def test_a_short_flat_walk_under_feed_forward_stands_and_advances():
    """simulate_walk(ready=…): 4 steps of the scaled CPG at gcv 1 under (c) on flat ground: no fall, the trunk
    nearly upright, forward travel; energy rows per step, each step costing energy."""
    from servo_ff.dynamics.walk_sim import simulate_walk

    walk = op3_cpg_plan(URDF, 1.0, 4)
    r = simulate_walk("ff", 4, ready=walk)
    assert not r.fell and np.nanmax(np.abs(r.pitch)) < 0.15
    assert r.travel > 0.01  # [m] plan: the CoM 0.019 m (gcv ramps from 0 at 0.25 gcv/s); 0.029 m walked
    assert len(r.step_energy) == len(walk.plan.steps) + 1
    assert np.all(np.diff(r.step_energy.sum(axis=1)) > 0)
