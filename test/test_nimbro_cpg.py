"""The NimbRo-OP's CPG gait (dynamics.nimbro_cpg, nimbro_cpg_plan) against its authors' equations and config values
(NimbRo/nimbro-op-ros b1f777a), checked through pinocchio's forward kinematics on urdf/nimbro_op.urdf; and a short
walk of the plan in the simulator."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from servo_ff.dynamics.nimbro_cpg import (
    CpgConfig,
    abstract_to_joints,
    gcv_for_speed,
    inverse_to_abstract,
    leg_lift,
    picut,
    pose,
    speed_per_gcv,
    support_coefficient,
)
from servo_ff.dynamics.nimbro_cpg_plan import cpg_plan, gait_states

ROOT = Path(__file__).resolve().parents[1]
URDF = ROOT / "urdf" / "nimbro_op.urdf"
CFG = CpgConfig()


def _soles(joints: list[str], q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(T, 3) left and right sole positions [m] in the trunk frame."""
    model = pin.buildModelFromUrdf(str(URDF))
    data = model.createData()
    idx = [joints.index(n) for n in model.names[1:]]
    fl, fr = model.getFrameId("l_sole"), model.getFrameId("r_sole")
    out = []
    for qk in q:
        pin.framesForwardKinematics(model, data, qk[idx])
        out.append((data.oMf[fl].translation.copy(), data.oMf[fr].translation.copy()))
    left, right = (np.array(x) for x in zip(*out))
    return left, right


def test_phase_advances_at_f_pi_and_a_step_is_half_a_cycle():
    s = gait_states(0.3, 6, CFG)
    walking = (s.t > CFG.first_step_duration) & s.walking
    rate = np.diff(np.unwrap(s.phase[walking])) / CFG.dt
    assert rate == pytest.approx(2.4 * math.pi, rel=1e-12)  # gaitPhase += gaitFrequency·π·dt
    starts = np.array([t for t, _ in s.steps])
    assert np.diff(starts) == pytest.approx(1 / 2.4, abs=1e-12)  # 1/f = 0.417 s per step, not 1/(2f)
    assert CFG.step_period == pytest.approx(1 / 2.4)
    assert [side for _, side in s.steps[:3]] == [
        "right",
        "left",
        "right",
    ]  # "the gait always starts with the right leg"
    assert starts[0] == pytest.approx(0.25, abs=CFG.dt)  # the phase is held at 0 for half of firstStepDuration


def test_halt_pose_is_their_halt_position():
    """haltPosition: each ankle 0.04 m behind, 0.02 m outside and 0.43 m (legLength − footOffsetZ) below its hip
    (RobotModel's leg: thigh and shank 0.22 m), the soles parallel to the trunk; arms: shoulder roll ±armOffsetY."""
    walk = cpg_plan(URDF, 0.0, 1)
    q = walk.q_stand
    j = walk.plan.joints
    assert np.allclose(walk.plan.q[0], q) and np.allclose(walk.plan.q[-1], q)
    ext, roll, pitch = inverse_to_abstract((-0.04, 0.02, 0.01), 0.44)
    length = math.sqrt(0.04**2 + 0.02**2 + 0.43**2)
    assert ext == pytest.approx(1 - length / 0.44)
    hip_yaw, hip_roll, hip_pitch, knee, ankle_pitch, ankle_roll = abstract_to_joints(ext, roll, pitch)
    assert 2 * 0.22 * math.cos(knee / 2) == pytest.approx(length)  # hip-to-ankle distance from the knee
    assert hip_pitch + knee + ankle_pitch == pytest.approx(0.0) and hip_roll + ankle_roll == pytest.approx(0.0)
    assert q[j.index("left_knee_pitch")] == pytest.approx(knee) and q[j.index("left_hip_roll")] == pytest.approx(roll)
    assert q[j.index("right_hip_roll")] == pytest.approx(-roll)
    assert q[j.index("left_shoulder_roll")] == pytest.approx(0.19) and q[j.index("right_shoulder_roll")] == -0.19
    model = pin.buildModelFromUrdf(str(URDF))
    data = model.createData()
    pin.framesForwardKinematics(model, data, q[[j.index(n) for n in model.names[1:]]])
    for foot, hip, side in (("left_foot_link", "left_hip_pitch", 1), ("right_foot_link", "right_hip_pitch", -1)):
        d = data.oMf[model.getFrameId(foot)].translation - data.oMi[model.getJointId(hip)].translation
        assert d == pytest.approx([-0.04, side * 0.02, -0.43], abs=2.5e-3)  # the URDF's joints are 1–2 mm off axis
        assert np.allclose(data.oMf[model.getFrameId(foot)].rotation, np.eye(3), atol=0.02)


def test_swing_foot_rises_step_height_at_mid_swing():
    """Stepping in place (gcv 0): at each mid-swing the swing sole is stepHeight above the stance sole."""
    walk = cpg_plan(URDF, 0.0, 6)
    p = walk.plan
    left, right = _soles(p.joints, p.q)
    for t0, side in p.steps[1:5]:
        k = int(np.argmin(np.abs(p.t - (t0 + 0.5 * walk.step_period))))
        swing, stance = (left[k], right[k]) if side == "left" else (right[k], left[k])
        assert swing[2] - stance[2] == pytest.approx(CFG.step_height, abs=1.5e-3)
    assert leg_lift(math.pi / 2, 0.5, CFG) == pytest.approx(0.025 + 0.5 * 0.02)  # stepHeightSlope


def test_left_and_right_mirror_half_a_cycle_apart():
    joints = ["left_hip_roll", "left_hip_pitch", "left_knee_pitch", "left_ankle_pitch", "left_ankle_roll"]
    joints += [j.replace("left", "right") for j in joints]
    sign = np.array([-1, 1, 1, 1, -1])  # roll mirrors, pitch equals
    for phase in np.linspace(-3.0, 3.0, 13):
        a = pose(joints, phase, 0.6, 0.0, CFG)
        b = pose(joints, picut(phase + math.pi), 0.6, 0.0, CFG)
        assert a[:5] == pytest.approx(sign * b[5:], abs=1e-12)
        assert support_coefficient(phase, "left", CFG) == pytest.approx(
            support_coefficient(picut(phase + math.pi), "right", CFG)
        )
        assert support_coefficient(phase, "left", CFG) + support_coefficient(phase, "right", CFG) == pytest.approx(1.0)


def test_plan_support_speed_and_limits():
    walk = cpg_plan(URDF, gcv_for_speed(0.05, CFG), 20)  # gcv reaches its target by step 8 (0.18 /s)
    p = walk.plan
    assert p.q.shape == p.dq.shape == p.ddq.shape == (len(p.t), 20) and np.allclose(np.diff(p.t), CFG.dt)
    for t0, side in p.steps:  # the swing foot's leg carries no weight in mid-swing
        k = int(np.argmin(np.abs(p.t - (t0 + 0.5 * walk.step_period))))
        assert p.c_left[k] == (0.0 if side == "left" else 1.0) and p.support[k] == (
            "right" if side == "left" else "left"
        )
    t4, t12 = p.steps[10][0], p.steps[18][0]
    x4, x12 = np.interp([t4, t12], p.t, p.com[:, 0])
    assert (x12 - x4) / (t12 - t4) == pytest.approx(0.05, rel=0.05)  # gcv_for_speed's map, in the placed CoM
    assert speed_per_gcv(CFG) == pytest.approx(0.0802, abs=5e-4)
    with pytest.raises(ValueError, match="top speed 0.080"):
        gcv_for_speed(0.095, CFG)
    with pytest.raises(ValueError, match=r"nimbro_op.urdf: .* left_hip_pitch to -3\.\d+ rad, outside \[-3.131"):
        cpg_plan(URDF, 1.0, 2, dataclasses.replace(CFG, step_length_x=3.5, acceleration_forward=100.0))  # ±3.5 rad


def test_ready_plan_walks_in_the_simulator():
    """simulate_walk(ready=…): the CPG plan under (c), 3 steps nearly in place: stands; energy rows per step."""
    from servo_ff.dynamics.nimbro_walk import NIMBRO_SERVOS
    from servo_ff.dynamics.walk_sim import simulate_walk

    walk = cpg_plan(URDF, 0.1, 3)
    r = simulate_walk("ff", 3, kp_high=53.125, urdf=URDF, servos=NIMBRO_SERVOS, alpha=None, ready=walk)
    assert not r.fell and np.nanmax(np.abs(r.pitch)) < 0.1
    assert len(r.step_energy) == len(walk.plan.steps) + 1
    assert np.all(np.diff(r.step_energy.sum(axis=1)) > 0)  # every step costs energy
