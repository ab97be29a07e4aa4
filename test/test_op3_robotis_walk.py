"""ROBOTIS's OP3 walking engine (dynamics.op3_robotis_walk) against its own equations and param.yaml's values
(ROBOTIS-GIT/ROBOTIS-OP3 op3_walking_module), checked through pinocchio's forward kinematics on urdf/op3.urdf; and a
short walk of the plan in the simulator."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from servo_ff.dynamics.op3_robotis_ik import DIRECTION, LEG
from servo_ff.dynamics.op3_robotis_walk import (
    RobotisConfig,
    end_points,
    pattern_states,
    pose,
    robotis_plan,
    step_period,
    support,
    x_move_for_speed,
)

ROOT = Path(__file__).resolve().parents[1]
URDF = ROOT / "urdf" / "op3.urdf"
CFG = RobotisConfig()
MODEL = pin.buildModelFromUrdf(str(URDF))
JOINTS = list(MODEL.names[1:])
LEGS = [j for j in JOINTS if j[2:] in ("hip_yaw", "hip_roll", "hip_pitch", "knee", "ank_pitch", "ank_roll")]


def _frames(q: np.ndarray) -> pin.Data:
    data = MODEL.createData()
    pin.framesForwardKinematics(MODEL, data, q)
    return data


def _leg_end(data: pin.Data, side: str) -> np.ndarray:
    """[m] ROBOTIS's leg end (ankle axes' crossing, ``ankle`` below) from its hip (hip yaw axis, hip roll height)."""
    joint = {n: data.oMi[MODEL.getJointId(f"{side}_{n}")] for n in ("hip_yaw", "hip_roll", "hip_pitch", "ank_roll")}
    hip = np.array(
        [joint["hip_pitch"].translation[0], joint["hip_yaw"].translation[1], joint["hip_roll"].translation[2]]
    )
    return joint["ank_roll"].act(np.array([0.0241, 0.0, -CFG.ankle])) - hip  # op3.urdf: ankle roll 24.1 mm behind


def test_a_step_is_half_the_period_on_the_8_ms_tick_and_the_plan_steps_at_it():
    assert step_period(CFG) == pytest.approx(38 * 0.008)  # 19 ticks a quarter: the phase snapping of processPhase
    assert abs(step_period(CFG) - CFG.period_time / 2) <= CFG.dt
    w = robotis_plan(URDF, 0.05, 6)
    starts = np.array([s for s, _ in w.plan.steps])
    assert np.diff(starts) == pytest.approx(w.step_period, abs=1e-9)
    assert [s for _, s in w.plan.steps[:3]] == ["left", "right", "left"]
    assert starts[0] == pytest.approx(0.03, abs=1e-9)  # l_ssp_start = dsp_ratio · period / 4


def test_the_stance_is_param_yaml_offsets_through_the_ik():
    flat = dataclasses.replace(CFG, hip_pitch_offset=0.0)
    data = _frames(pose(JOINTS, 0.0, 0.0, 0.0, flat))
    # time_ 0: swap.z = 2·swing_top_down, each foot's z move −foot_height/4
    z = CFG.z_offset - CFG.leg_length + 2 * CFG.z_swap - CFG.foot_height / 4
    for side, y in (("l", CFG.y_offset / 2), ("r", -CFG.y_offset / 2)):
        assert _leg_end(data, side) == pytest.approx([CFG.x_offset, y, z], abs=3e-4)  # thigh 0.11015 vs 0.110
    q0, q = pose(JOINTS, 0.0, 0.0, 0.0, flat), pose(JOINTS, 0.0, 0.0, 0.0, CFG)
    hp = [JOINTS.index(j) for j in ("l_hip_pitch", "r_hip_pitch")]
    assert q[hp] - q0[hp] == pytest.approx([-math.radians(7.0), math.radians(7.0)], abs=1e-12)
    sole = _frames(q).oMf[MODEL.getFrameId("l_sole")].rotation.T  # the trunk in the sole's frame
    assert math.atan2(sole[0, 2], sole[2, 2]) == pytest.approx(math.radians(7.0), abs=2e-4)  # leans 7° forward
    assert q[JOINTS.index("head_tilt")] == pytest.approx(math.radians(-10.0))  # ini_pose tar_pose
    assert q[JOINTS.index("r_sho_pitch")] == pytest.approx(math.radians(5.0))  # init_position_


def test_the_joint_directions_are_the_urdf_axes_summed():
    urdf = URDF.read_text()  # op3.urdf's axes are op3.xml's; ROBOTIS's model has the same
    for side, signs in DIRECTION.items():
        for joint, sign in zip(LEG, signs):
            tail = urdf.split(f'<joint name="{side}_{joint}"')[1].split("</joint>")[0]
            axis = [float(x) for x in tail.split('<axis xyz="')[1].split('"')[0].split()]
            assert sum(axis) == sign, f"{side}_{joint}"


def test_the_leg_ends_follow_the_end_points_at_every_phase():
    flat = dataclasses.replace(CFG, hip_pitch_offset=0.0, pelvis_offset=0.0)
    for time in np.linspace(0.0, CFG.period_time, 25, endpoint=False):
        data = _frames(pose(JOINTS, time, 0.01, 0.0028, flat))
        right, left, _ = end_points(time, 0.01, 0.0028, flat)
        assert _leg_end(data, "r") == pytest.approx(right, abs=3e-4)
        assert _leg_end(data, "l") == pytest.approx(left, abs=3e-4)


def test_the_swing_foot_lifts_foot_height_at_mid_swing():
    right_frame = MODEL.getFrameId("r_sole")
    no_roll = dataclasses.replace(CFG, pelvis_offset=0.0)  # the stance hip's 0.5° roll adds 1.2 mm
    for cfg, tol in ((no_roll, 5e-4), (CFG, 2e-3)):
        for time, lift in ((0.0, 0.0), (CFG.period_time / 4, CFG.foot_height)):
            data = _frames(pose(JOINTS, time, 0.0, 0.0, cfg))
            left = data.oMf[right_frame].actInv(data.oMf[MODEL.getFrameId("l_sole")].translation)
            assert left[2] == pytest.approx(lift, abs=tol)  # above the stance sole's plane


def test_left_and_right_mirror_half_a_period_apart():
    legs = [JOINTS.index(j) for j in LEGS if j.startswith("l_")] + [JOINTS.index("l_sho_pitch")]
    mirror = [JOINTS.index("r" + JOINTS[i][1:]) for i in legs]
    for time in np.linspace(0.0, CFG.period_time / 2, 19, endpoint=False):
        q, later = pose(JOINTS, time, 0.01, 0.0028, CFG), pose(JOINTS, time + CFG.period_time / 2, 0.01, 0.0028, CFG)
        assert later[legs] == pytest.approx(-q[mirror], abs=1e-12)
    assert support(0.1, CFG) == 0.0 and support(0.4, CFG) == 1.0  # the left swings first: right support


def test_the_walk_starts_at_half_amplitude_halts_by_itself_and_advances_two_x_moves_a_step():
    x = x_move_for_speed(0.05, CFG)
    assert x == pytest.approx(0.05 * 0.304 / 2)
    rows, steps = pattern_states(x, 8, CFG)
    assert sorted(set(rows[:, 1])) == pytest.approx([0.0, x / 2, x])  # updateMovementParam halves the first
    w = robotis_plan(URDF, 0.05, 8)
    assert w.plan.q[-1] == pytest.approx(w.q_stand, abs=1e-12) and w.plan.c_left[-1] == pytest.approx(0.5)
    cycle = int(round(2 * w.step_period / CFG.dt))
    k = int(round(steps[3][0] / CFG.dt))  # full amplitude from the third swing on
    assert w.plan.com[k + cycle, 0] - w.plan.com[k, 0] == pytest.approx(4 * x, rel=0.03)  # 7° lean


def test_knees_bend_forward_and_the_plan_keeps_to_the_urdf_limits():
    w = robotis_plan(URDF, 0.08, 4)
    lk, rk = (w.plan.joints.index(j) for j in ("l_knee", "r_knee"))
    assert (w.plan.q[:, lk] > 0.5).all() and (w.plan.q[:, rk] < -0.5).all()
    assert np.isfinite(w.plan.com).all()
    with pytest.raises(ValueError, match=r"op3.urdf: ROBOTIS's walk takes l_hip_pitch to .* outside") as e:
        robotis_plan(URDF, 0.05, 2, dataclasses.replace(CFG, hip_pitch_offset=math.radians(60.0)))
    assert "\n" not in str(e.value)
    with pytest.raises(ValueError, match="out of the leg's reach"):
        robotis_plan(URDF, 0.05, 2, dataclasses.replace(CFG, z_offset=-0.1))
    with pytest.raises(ValueError, match="vx must be finite"):
        x_move_for_speed(math.nan, CFG)


def test_a_short_walk_of_the_plan_under_feed_forward():
    from servo_ff.dynamics.walk_sim import simulate_walk

    w = robotis_plan(URDF, 0.05, 3)
    r = simulate_walk("ff", 3, ready=(w.plan, w.q_stand, w.step_period))
    assert not r.fell
    assert r.travel > 0.01  # [m] it walked forward (plan: ≈ 0.03)
