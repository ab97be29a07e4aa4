"""The placo walk core (servo_ff.dynamics.walk_pattern) on the OP3: a dynamic gait (step period ≤ 0.5 s), feet
alternating, the planned ZMP inside placo's support polygon, the whole-body IK reaching the planned feet and CoM,
cmd_vel followed on-line."""

from __future__ import annotations

import dataclasses
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

placo = pytest.importorskip("placo")

from servo_ff.dynamics.walk_pattern import WalkEngine, WalkParams, placo_urdf_text  # noqa: E402

URDF = Path(__file__).resolve().parents[1] / "urdf" / "op3.urdf"


@pytest.fixture(scope="module")
def plan():
    return WalkEngine(URDF).plan((0.1, 0.0, 0.0), 12)


def _inside(p: np.ndarray, poly: np.ndarray, tol: float) -> bool:
    """``p`` (2,) inside the convex polygon ``poly`` (N, 2) (either winding) within ``tol`` [m]."""
    c = poly.mean(axis=0)
    for a, b in zip(poly, np.roll(poly, -1, axis=0)):
        n = np.array([b[1] - a[1], a[0] - b[0]])
        n /= np.linalg.norm(n)
        if np.dot(c - a, n) > 0:
            n = -n  # outward
        if np.dot(p - a, n) > tol:
            return False
    return True


def test_step_period_and_alternating_feet(plan):
    starts = [t for t, _ in plan.steps]
    sides = [s for _, s in plan.steps]
    assert len(plan.steps) == 12
    assert max(np.diff(starts)) <= 0.5 + 1e-9
    assert np.allclose(np.diff(starts), WalkParams().step_period)
    assert all(a != b for a, b in zip(sides, sides[1:]))
    # the support coefficient: 1 over the left foot's single supports, 0 over the right's, between in double
    assert np.all(plan.c_left[plan.support == "left"] == 1.0)
    assert np.all(plan.c_left[plan.support == "right"] == 0.0)
    both = plan.c_left[plan.support == "both"]
    assert both.min() >= 0.0 and both.max() <= 1.0 and np.ptp(both) > 0.5


def test_zmp_inside_support_polygon(plan):
    outside = [k for k, (z, poly) in enumerate(zip(plan.zmp, plan.polygons)) if not _inside(z, poly, 1e-3)]
    assert not outside, f"ZMP outside the support polygon at t = {plan.t[outside[0]]:.2f} s"


def test_walks_forward_at_cmd_speed_and_ik_tracks(plan):
    walked = plan.com[-1, 0] - plan.com[0, 0]  # the last of the 12 steps closes the feet: 11 strides
    assert walked == pytest.approx(11 * 0.1 * WalkParams().step_period, rel=0.02)
    assert np.all(np.isfinite(plan.q)) and np.abs(plan.q).max() < 3.14
    knees = [plan.joints.index(j) for j in ("l_knee", "r_knee")]
    assert np.abs(plan.q[:, knees]).min() > 0.5  # bent knees throughout: the LIPM's constant CoM height


def test_ik_reaches_planned_com_and_feet():
    e = WalkEngine(URDF)
    e.start()
    e.set_cmd(0.1, 0.0, 0.0)
    worst_com = worst_foot = 0.0
    for _ in range(400):  # 4 s: 8 steps of 0.48 s after the start
        s = e.tick()
        worst_com = max(worst_com, float(np.linalg.norm(e.robot.com_world() - s.com)))
        for side in ("left", "right"):
            planned = np.asarray(getattr(e.trajectory, f"get_T_world_{side}")(s.t))[:3, 3]
            reached = np.asarray(getattr(e.robot, f"get_T_world_{side}")())[:3, 3]
            worst_foot = max(worst_foot, float(np.linalg.norm(planned - reached)))
    assert worst_com < 3e-3 and worst_foot < 6e-3  # soft tasks under the joint velocity limits: mm
    assert e.robot.com_world()[0] > 0.15  # walked on under the on-line re-planning


def test_online_cmd_turns_and_stops():
    e = WalkEngine(URDF)
    e.start()
    e.set_cmd(0.0, 0.0, 0.4)
    for _ in range(400):
        e.tick()
    yaw = np.arctan2(*np.asarray(e.robot.get_T_world_left())[[1, 0], 0])
    assert yaw > 0.3  # turned left (REP-103: +z)
    with pytest.raises(ValueError, match="linear.x"):
        e.set_cmd(float("nan"), 0.0, 0.0)


def test_missing_frame_link_named(tmp_path):
    from servo_ff.dynamics.walk_pattern import WalkFrames

    with pytest.raises(ValueError, match="no link 'torso'"):
        placo_urdf_text(URDF, WalkFrames(trunk="torso"))


def test_cmd_beyond_the_gaits_reach_is_said_and_clipped_by_placo():
    """placo clips a footstep to the gait's maxima (silently): 0.2 m/s forward on the OP3's 0.48 s step walks at
    0.06 m per step (0.125 m/s), 0.2 m/s backwards at 0.03 m; beyond_reach says which component is beyond, for the
    walk node's log line, and nothing within."""
    e = WalkEngine(URDF)
    for vx, per_step in ((0.2, 0.06), (-0.2, -0.03)):
        e.planner.configure(*e.step_of(vx, 0.0, 0.0), 6)
        left = placo.flatten_on_floor(e.robot.get_T_world_left())
        right = placo.flatten_on_floor(e.robot.get_T_world_right())
        frames = [np.asarray(s.frame) for s in e.planner.plan(placo.HumanoidRobot_Side.left, left, right)]
        d = np.linalg.inv(frames[3]) @ frames[5]  # the same foot two steps later, in its own frame
        assert d[0, 3] == pytest.approx(2 * per_step, abs=1e-9)
    assert e.beyond_reach(0.2, 0.0, 0.0) == ["linear.x 0.2 m/s beyond 0.125 m/s"]
    assert e.beyond_reach(-0.2, 0.1, 1.0) == [
        "linear.x -0.2 m/s beyond 0.0625 m/s",
        "linear.y 0.1 m/s beyond 0.0625 m/s",
        "angular.z 1 rad/s beyond 0.8333 rad/s",
    ]
    assert e.beyond_reach(0.125, -0.0625, -0.8) == []


def test_the_op3_walks_with_its_knees_bent_forward(plan):
    """op3.urdf's knees bend one way (ROBOTIS's ranges: l_knee −0.1π…0.7π about +y, r_knee mirrored): the stance IK
    starts from the middle of the ranges, so it bends them forward, whatever placo's last bits do. Before, from the
    straight-knee zero pose with ±π ranges, the stance came out bent backward (knee 0.075 m behind the hip) in most
    processes and forward (0.085 m ahead) in some: the same walk with knees either way."""
    for _ in range(2):  # a second engine in the same process: the same branch
        e = WalkEngine(URDF)
        q = dict(zip(e.joints, e.q_stand))
        assert q["l_knee"] > 1.0 and q["r_knee"] < -1.0, q  # measured ±1.141 (ROBOTIS's stance)
        assert q["l_hip_pitch"] < -0.5 and q["r_hip_pitch"] > 0.5, q  # thighs forward: measured ∓0.701
    lk, rk = plan.joints.index("l_knee"), plan.joints.index("r_knee")
    assert plan.q[:, lk].min() > 0.5 and plan.q[:, rk].max() < -0.5  # the whole walk on that branch


def test_the_op3_stands_as_robotis_walks_it():
    """ROBOTIS's OP3 walk (ROBOTIS-GIT/ROBOTIS-OP3 3bc2bd5, op3_walking_module/config/param.yaml): z_offset 0.035 m
    below the straight leg (thigh 0.11015 + calf 0.11 + ankle 0.0305, op3_kinematics_dynamics.cpp), so 0.18515 m
    from the hip pitch axis to the ankle, knee 1.143 rad; hip_pitch_offset 7°: the trunk leans 0.122 rad forward.
    The default stance is that one (before: com_height 0.22 gave 0.1576 m and knees 1.545 rad, a deeper crouch)."""
    e = WalkEngine(URDF)
    q = dict(zip(e.joints, e.q_stand))
    hip, ankle = (e.robot.get_T_world_frame(f)[:3, 3] for f in ("l_hip_pitch_link", "l_ank_pitch_link"))
    assert np.linalg.norm(hip - ankle) == pytest.approx(0.18515, abs=1.5e-3)
    assert q["l_knee"] == pytest.approx(1.143, abs=0.03) and q["r_knee"] == pytest.approx(-1.143, abs=0.03)
    assert e.params.trunk_pitch == pytest.approx(np.radians(7.0), abs=1e-3)


_OP3_PLAN = """
import io, json, sys
import numpy as np
from servo_ff.dynamics.walk_pattern import WalkEngine, WalkParams
p = WalkParams(ik_ranges={k: tuple(v) for k, v in json.loads(sys.argv[2]).items()}) if sys.argv[2] else WalkParams()
plan = WalkEngine(sys.argv[1], p).plan((0.1, 0.0, 0.0), 12)
np.save(buf := io.BytesIO(), np.c_[plan.q, plan.c_left])
sys.stdout.buffer.write(buf.getvalue())  # (np.save on a buffered pipe: 'obtaining file position failed')
"""


def _op3_plan(ranges: str) -> np.ndarray:
    """The OP3's plan by the first engine of a fresh interpreter (placo's state left by an earlier engine in a process
    changes a plan's last bits, test_walk_worker.py), with ``ranges`` (JSON) as ``ik_ranges``, or none ("")."""
    env = {**os.environ, "PYTHONPATH": str(URDF.parents[1] / "src")}
    out = subprocess.run([sys.executable, "-c", _OP3_PLAN, str(URDF), ranges], env=env, capture_output=True, check=True)
    return np.load(io.BytesIO(out.stdout))


def test_ik_ranges_narrow_the_urdf_s_and_leave_the_op3_plan_bit_identical():
    """``WalkParams.ik_ranges`` narrows placo's joint limits (the IK's bounds) within the URDF's. The OP3's default
    gait gives none, and its own URDF knee ranges given as IK ranges change no bit of its plan (the mechanism touches
    nothing else); a range naming no joint, reversed, or outside the URDF's, is one line naming the joint."""
    assert WalkParams().ik_ranges == {}
    own = '{"l_knee": [-0.314159, 2.199115], "r_knee": [-2.199115, 0.314159]}'  # op3.urdf's
    assert np.array_equal(_op3_plan(""), _op3_plan(own))
    narrowed = WalkEngine(URDF, dataclasses.replace(WalkParams(), ik_ranges={"l_knee": (1.0, 9.0)}))
    assert tuple(narrowed.robot.get_joint_limits("l_knee")) == pytest.approx((1.0, 2.199115))
    for bad, line in (
        ({"knee": (0.0, 1.0)}, "ik_ranges: 'knee' is not a joint"),
        ({"r_knee": (0.5, 1.0)}, "ik_ranges: 'r_knee' (0.5, 1.0) does not overlap its URDF range"),
        ({"l_knee": (1.0, 0.5)}, "ik_ranges: 'l_knee' (1.0, 0.5): the lower bound must be below the upper one"),
    ):
        with pytest.raises(ValueError, match=re.escape(line)):
            WalkEngine(URDF, dataclasses.replace(WalkParams(), ik_ranges=bad))
