"""The CPG's steering (dynamics.nimbro_cpg leg_steer, nimbro_cpg_plan's gcv.y/gcv.z state, the engine's cmd_vel):
the authors' terms at a few phases computed here from DynamicGait.cpp's expressions and config.yaml's values; the
forward walk the one before steering existed (to its last digits; the halt blend's rows put back); REP-103 signs
on the plan's forward kinematics (pinocchio) on both robots; the engine under set_cmd(0, vy, wz) is the steering
plan sample for sample."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")

from cpg_forward_reference import ENGINE_BEFORE, PLAN_BEFORE, STAND_BEFORE  # noqa: E402

from servo_ff.dynamics.nimbro_cpg import (  # noqa: E402
    CpgConfig,
    backward_speed_per_gcv,
    lateral_hip_swing,
    lateral_speed_per_gcv,
    leg_joints,
    limit_gcv,
    picut,
    speed_per_gcv,
    yaw_rate_per_gcv,
)
from servo_ff.dynamics.nimbro_cpg_engine import CpgEngine, op3_cpg_engine  # noqa: E402
from servo_ff.dynamics.nimbro_cpg_plan import (  # noqa: E402
    GaitState,
    cpg_plan,
    gait_states,
    gait_tick,
    halt_blend,
    halt_blend_duration,
    halt_state,
    trunk_path,
)
from servo_ff.dynamics.op3_cpg import op3_config, op3_cpg_plan  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
NIMBRO = ROOT / "urdf" / "nimbro_op.urdf"
OP3 = ROOT / "urdf" / "op3.urdf"
CFG = CpgConfig()


def _fingerprint(a) -> np.ndarray:
    """(Σ|a|, Σa², Σ cos(0.37·(m+1)·i + m)·a_i for m = 0..3) of ``a`` flattened (cpg_forward_reference's rows)."""
    a = np.ascontiguousarray(np.asarray(a, dtype=float)).ravel()
    i = np.arange(a.size)
    w = np.cos(0.37 * (np.arange(4)[:, None] + 1) * i + np.arange(4)[:, None])
    return np.array([np.abs(a).sum(), a @ a, *(w @ a)])


def _assert_same_walk(arrays, rows) -> None:
    """Each array's fingerprint within 1e-10 of its Σ|a| (Σa² within 1e-10 relative): the last digits a LAPACK, a
    SIMD libm or a BLAS summation order move pass (≤ 1e-12 of Σ|a|); one sample moved by 1e-10·Σ|a| or more shows in
    some weighted sum (q of a plan: Σ|q| ≈ 3000 rad, so 0.3 µrad)."""
    assert len(arrays) == len(rows)
    for k, (a, row) in enumerate(zip(arrays, rows)):
        got, ref = _fingerprint(a), np.array(row)
        tol = 1e-10 * max(ref[0], 1e-300)
        assert abs(got[0] - ref[0]) <= tol and abs(got[1] - ref[1]) <= 1e-10 * ref[1], (k, got, ref)
        np.testing.assert_allclose(got[2:], ref[2:], rtol=0, atol=tol, err_msg=f"array {k}")


def _forward_plan(robot: str, g: float):
    """The 8-step forward plan at gcv ``g``, and the plan as it was before the halt blend (2026-11-27): the blend's
    rows (from the first tick not walking, :func:`halt_blend`) put back to the halt pose and q̇, q̈ taken again by
    np.gradient as open_loop_plan does; after checking that those rows are halt_blend's from the last three walking
    samples."""
    cfg = CFG if robot == "nimbro" else op3_config(OP3)
    w = cpg_plan(NIMBRO, g, 8) if robot == "nimbro" else op3_cpg_plan(OP3, g, 8)
    p, dt = w.plan, cfg.dt
    h = int(np.argmin(gait_states(g, 8, cfg).walking))  # the first tick not walking
    rows = halt_blend(p.q[h - 3 : h], w.q_stand, dt, halt_blend_duration(cfg))
    np.testing.assert_array_equal(p.q[h : h + len(rows)], rows)
    np.testing.assert_array_equal(p.q[h + len(rows) :], np.broadcast_to(w.q_stand, p.q[h + len(rows) :].shape))
    q = p.q.copy()
    q[h : h + len(rows)] = w.q_stand
    dq = np.gradient(q, dt, axis=0)
    return w, q, dq, np.gradient(dq, dt, axis=0)


@pytest.mark.parametrize("robot,g", sorted(PLAN_BEFORE))
def test_forward_plan_is_the_walk_before_steering(robot, g):
    w, q, dq, ddq = _forward_plan(robot, g)
    _assert_same_walk((w.plan.t, q, dq, ddq, w.plan.c_left), PLAN_BEFORE[(robot, g)])
    _assert_same_walk((w.q_stand,), (STAND_BEFORE[robot],))


@pytest.mark.parametrize("robot", sorted(ENGINE_BEFORE))
def test_forward_engine_is_the_walk_before_steering(robot):
    engine = CpgEngine(NIMBRO) if robot == "nimbro" else op3_cpg_engine(OP3)
    engine.start()
    out = []
    for vx in (0.0, 0.03, 0.2, 0.01):
        engine.set_cmd(vx, 0.0, 0.0)
        out += [engine.tick() for _ in range(150)]
    _assert_same_walk(([x.t for x in out], [x.q for x in out], [x.c_left for x in out]), ENGINE_BEFORE[robot])


def test_the_walk_fingerprint_sees_a_sample_moved_by_a_microradian():
    w, q0, _, _ = _forward_plan("op3", 0.15)
    rows = PLAN_BEFORE[("op3", 0.15)]
    q = q0.copy()
    q[len(q) // 2, 3] += 1e-6
    with pytest.raises(AssertionError):
        _assert_same_walk((w.plan.t, q), rows[:2])
    noisy = q0 * (1 + 1e-15 * np.cos(np.arange(q0.size)).reshape(q0.shape))  # last-digit noise
    _assert_same_walk((w.plan.t, noisy), rows[:2])
    with pytest.raises(AssertionError):  # the plan with its halt blend is not the plan before it
        _assert_same_walk((w.plan.t, w.plan.q), rows[:2])


def _theirs(phase: float, sign: float, gx: float, gy: float, gz: float) -> tuple[float, ...]:
    """One leg's six joints, written out from DynamicGait.cpp b1f777a (inverseLegFunction 259–332,
    abstractLegFunction 346–407), RobotModel.cpp 475–489, 545–556, with config.yaml's values (first step over)."""
    start, stop, length = 0.0, 2.38, 0.44
    leg_phase = picut(phase + math.pi) if sign == -1 else phase
    x = -0.04 + max(-0.06 * gx, 0.0) + 0.01 * abs(gy)  # footOffsetX + leanOffsetX (tiltSpeedBwd, tiltSpeedFwd)
    y = sign * -0.02 + lateral_hip_swing(phase, CFG)  # footOffsetY; the hip swing is unchanged by steering
    z = 0.01  # footOffsetZ
    if leg_phase > 0:
        a = 0.025 + max(0.0, max(gx, abs(gy))) * 0.02  # stepHeight + max(gcv.x, |gcv.y|)·stepHeightSlope
        z += math.sin(leg_phase * 2.0 - math.pi / 2) * a / 2.0 + a / 2.0
    tx, ty, tz = x, y, z - length
    n = math.sqrt(tx * tx + ty * ty + tz * tz)
    ext = min(1.0, max(0.0, 1.0 - n / length))
    roll, pitch, yaw = math.atan2(ty, -tz), -math.asin(tx / n), 0.0
    if start <= leg_phase < stop:
        swing = math.cos((leg_phase - start) * math.pi / (stop - start))
    elif leg_phase >= stop:
        swing = -1 + (leg_phase - stop) * 2 / (2 * math.pi - stop + start)
    else:
        swing = -1 + (leg_phase + 2 * math.pi - stop) * 2 / (2 * math.pi - stop + start)
    roll += swing * -gy * 0.07  # stepLengthYSlope
    roll += -sign * abs(gy) * 0.07  # stepLengthYPushout
    roll += -sign * abs(gz) * 0.01  # stepLengthZPushout
    pitch += swing * gx * (0.048 if gx >= 0 else 0.14)  # stepLengthXSlopeFwd / Bwd
    yaw += swing * -gz * 0.1  # stepLengthZSlope
    yaw += -sign * abs(gz) * 0.05  # stepLengthZVPushout
    roll -= gz * abs(gx) * 0.07  # tiltRotLean
    alpha = math.acos(min(1.0, max(0.0, 1.0 - ext)))
    return yaw, roll, pitch - alpha, 2 * alpha, -pitch - alpha, -roll


@pytest.mark.parametrize("gcv", [(0.0, 0.6, 0.0), (0.0, 0.0, -0.7), (-0.5, 0.0, 0.0), (0.3, -0.4, 0.5)])
@pytest.mark.parametrize("phase", [-2.9, -1.0, 0.4, 1.7, 2.6])
def test_leg_steering_terms_are_the_authors(gcv, phase):
    for sign in (1.0, -1.0):
        got = leg_joints(phase, sign, gcv[0], (0.0, 0.0), CFG, gcv[1], gcv[2])
        assert got == pytest.approx(_theirs(phase, sign, *gcv), abs=1e-12)
    # the steering really moves the legs: not the forward pose at the same gcv.x
    assert leg_joints(phase, 1.0, gcv[0], (0.0, 0.0), CFG) != pytest.approx(got, abs=1e-6)


def test_speeds_per_gcv_from_the_geometry():
    """Per axis: 2·slope over T_support = (2π − 2.38)/(2.4π) s, at the leg's lever for x and y (module docstring)."""
    t_support = (2 * math.pi - 2.38) / (2.4 * math.pi)
    lever = math.sqrt(0.04**2 + 0.02**2 + 0.43**2)
    assert speed_per_gcv(CFG) == pytest.approx(2 * 0.048 * lever / t_support, rel=1e-12)
    assert backward_speed_per_gcv(CFG) == pytest.approx(2 * 0.14 * lever / t_support, rel=1e-12)
    assert lateral_speed_per_gcv(CFG) == pytest.approx(2 * 0.07 * math.hypot(0.02, 0.43) / t_support, rel=1e-12)
    assert yaw_rate_per_gcv(CFG) == pytest.approx(2 * 0.1 / t_support, rel=1e-12)


def test_gcv_norm_limit_slopes_and_halt_are_the_authors():
    """The latched target limited by ‖·‖_2.4 (DynamicGait.cpp 53–57); gcv.y, gcv.z slope at accelerationSideward 0.3,
    accelerationRotational 0.6 gcv/s; backward at accelerationBackward 0.25 (102–157); no halt while the 3-vector's
    Euclidean norm ≥ stoppingVelocity (MotionLayer.cpp 38)."""
    k = 2.0 ** (1 / 2.4)
    assert limit_gcv(1.0, 1.0, 0.0, CFG) == pytest.approx((1 / k, 1 / k, 0.0))
    assert limit_gcv(0.3, -0.2, 0.1, CFG) == (0.3, -0.2, 0.1) and limit_gcv(-1.5, 0.0, 0.0, CFG) == (-1.0, 0.0, 0.0)
    assert halt_state(CFG)[6:] == (0.0, 0.0, 0.0, 0.0)
    s, _ = gait_tick(GaitState(-0.01, 0.01, 0.0, 0.0, 0.0, True), -0.5, CFG, (1.0, 1.0))  # a centre crossed
    n = (0.5**2.4 + 2.0) ** (1 / 2.4)
    assert (s.target, s.target_y, s.target_z) == pytest.approx((-0.5 / n, 1 / n, 1 / n), rel=1e-12)
    assert s.gcv == pytest.approx(-0.18 * 2 * 0.008)  # from 0: the gcv ≥ 0 branch (decelerating)
    assert (s.gcv_y, s.gcv_z) == pytest.approx((0.3 * 0.008, 0.6 * 0.008))
    g = s.gcv
    s, _ = gait_tick(s, -0.5, CFG, (1.0, 1.0))
    assert s.gcv == pytest.approx(g - 0.25 * 0.008) and s.gcv_y == pytest.approx(2 * 0.3 * 0.008)
    # gcv.y 0.2 alone keeps the walk going near a centre with the command withdrawn (|gcv| ≥ 0.1); 0.05 halts it
    for gy, walking in ((0.2, True), (0.05, False)):
        s, _ = gait_tick(GaitState(0.01, 0.0, 0.0, 0.0, 0.0, True, gy, 0.0), None, CFG)
        assert s.walking is walking


@pytest.mark.parametrize("robot", ["nimbro", "op3"])
@pytest.mark.parametrize("gcv", [(0.0, 0.0, 0.5), (0.0, 0.0, -0.5), (0.0, 0.5, 0.0), (0.0, -0.5, 0.0), (-0.5, 0, 0)])
def test_rep103_signs_on_the_plans_forward_kinematics(robot, gcv):
    """On :func:`trunk_path` (the plan's forward kinematics, stance sole held): gcv.z > 0 turns the trunk
    counter-clockwise seen from above, gcv.y > 0 moves it left (+y), gcv.x < 0 back:
    over the whole 12-step walk in that sense, and over whole gait cycles at the steady gcv by the per-axis speed
    (:func:`yaw_rate_per_gcv` …) × time within 1 %, the other axes still."""
    urdf, cfg = (NIMBRO, CFG) if robot == "nimbro" else (OP3, op3_config(OP3))
    plan_of = cpg_plan if robot == "nimbro" else op3_cpg_plan
    w = plan_of(urdf, gcv[0], 12, gcv_y=gcv[1], gcv_z=gcv[2]).plan
    s = gait_states(gcv[0], 12, cfg, gcv_y=gcv[1], gcv_z=gcv[2])
    path = trunk_path(urdf, w)
    axis = int(np.argmax(np.abs(gcv)))
    assert math.copysign(1, path[-1, axis]) == math.copysign(1, gcv[axis]) and abs(path[-1, axis]) > 0.05
    steady = np.flatnonzero((s.gcv, s.gcv_y, s.gcv_z)[axis] == gcv[axis])
    cycle = 2.0 * cfg.step_period
    k0 = steady[0]
    k1 = k0 + round(math.floor((steady[-1] - k0) * cfg.dt / cycle) * cycle / cfg.dt)
    assert (k1 - k0) * cfg.dt > 1.5  # ≥ 2 whole cycles at the steady gcv
    per_gcv = (backward_speed_per_gcv(cfg), lateral_speed_per_gcv(cfg), yaw_rate_per_gcv(cfg))[axis]
    planned = per_gcv * gcv[axis] * (k1 - k0) * cfg.dt
    d = path[k1] - path[k0]
    assert d[axis] == pytest.approx(planned, rel=0.01)
    if axis < 2:
        assert abs(d[1 - axis]) < 0.01 * abs(planned) and abs(d[2]) < 1e-6


@pytest.mark.parametrize("robot", ["nimbro", "op3"])
def test_engine_set_cmd_steers_as_the_plan(robot):
    """set_cmd(−vx, 0, 0), set_cmd(0, vy, 0) and set_cmd(0, 0, wz) at half each axis's top: the engine's samples are
    the steering plan's (cpg_plan at gcv −0.5 / gcv.y / gcv.z 0.5) sample for sample until the plan withdraws its
    command, and not the zero command's (the legs swing back, roll, the hips yaw)."""
    urdf = NIMBRO if robot == "nimbro" else OP3
    plan_of = cpg_plan if robot == "nimbro" else op3_cpg_plan
    for axis in (0, 1, 2):
        engine = CpgEngine(urdf) if robot == "nimbro" else op3_cpg_engine(urdf)
        cmd = [0.0, 0.0, 0.0]
        cmd[axis] = (-0.5 if axis == 0 else 0.5) * engine.tops(-1.0)[axis]
        g = engine.gcv3(*cmd)
        assert g[axis] == pytest.approx(cmd[axis] / abs(cmd[axis]) * 0.5) and engine.beyond_reach(*cmd) == []
        walk = plan_of(urdf, g[0], 8, gcv_y=g[1], gcv_z=g[2]).plan
        s = gait_states(g[0], 8, engine.params, gcv_y=g[1], gcv_z=g[2])
        end = int(np.argmax(np.diff(np.abs((s.gcv, s.gcv_y, s.gcv_z)[axis])) < 0)) + 1
        assert end > 300
        engine.set_cmd(*cmd)
        engine.start()
        got = np.array([engine.tick().q for _ in range(end)])
        np.testing.assert_array_equal(got, walk.q[:end])
        still = CpgEngine(urdf) if robot == "nimbro" else op3_cpg_engine(urdf)
        still.start()
        q0 = np.array([still.tick().q for _ in range(end)])
        yaw_joints = [i for i, n in enumerate(engine.joints) if "yaw" in n]
        assert np.abs(got - q0).max() > 0.02
        if axis == 2:
            assert np.abs(got[:, yaw_joints]).max() > 0.05 > np.abs(q0[:, yaw_joints]).max()
