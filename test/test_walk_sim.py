"""The ROS-free OP3 walk (dynamics/walk_sim.py): runs that do not depend on the runs before them, the feet's account
of a walk, the firmware option."""

from __future__ import annotations

import dataclasses
import logging
import math

import numpy as np
import pytest
import yaml

pytest.importorskip("placo")
pytest.importorskip("mujoco")


def test_foot_metrics_counts_swing_contact_stance_share_and_slip():
    from servo_ff.dynamics.walk_sim import foot_metrics

    t = np.array([-0.1, 0.0, 0.1, 0.2, 0.3, 0.4])
    c = np.array([0.5, 1.0, 1.0, 0.5, 0.0, 0.0])  # left single support, double, right single support
    force = np.array([[15, 15], [30, 0], [20, 10], [15, 15], [0.5, 29.5], [3, 27]], dtype=float)
    xy = np.zeros((6, 2, 2))
    xy[2:, 0, 0] = 0.01  # the left sole moves 1 cm between t = 0 and 0.1 s, loaded at both ends (30 N, 20 N)
    xy[5:, 1, 1] = 0.002  # the right one 2 mm while loaded (29.5 N, 27 N)
    xy[1, 1, 0] = 0.05  # the right sole 5 cm at t = 0 while unloaded: not slip
    swing, share, slip = foot_metrics(t, c, force, xy)
    assert swing == pytest.approx(2 / 4)  # swing foot above 1 N at t = 0.1 (10 N) and t = 0.4 (3 N)
    assert share == pytest.approx(np.median([1.0, 2 / 3, 29.5 / 30, 0.9]))
    assert slip == pytest.approx(0.012)


def test_a_walk_does_not_depend_on_the_walks_before_it():
    """placo's plan differs in its last bits (1e-13 rad) from one plan to the next in one process; plain P's rocking
    walk amplified that into millimetres (0.073 m, then 0.075 m for the same 12 steps), so a run depended on the
    runs before it (the full suite's ROS-free walks differed from a fresh interpreter's)."""
    from servo_ff.dynamics.walk_sim import simulate_walk

    first = simulate_walk("high", 4)
    simulate_walk("ff", 2)
    again = simulate_walk("high", 4)
    assert again.travel == first.travel
    assert np.array_equal(again.roll, first.roll) and np.array_equal(again.pitch, first.pitch)


def test_the_feet_s_account_of_the_walk_at_the_factory_gain():
    """On ROBOTIS's stance (test_walk_pattern) and op3.xml's contact (test_robot_models), (c) lifts its swing foot and
    walks upright, short of the plan; (a) plain P at k_P 800 falls on flat ground. Measured (8 steps, 0.336 m
    planned, plan grids 1e-9 … 1e-4): (c) 0.271-0.280 m, swing foot touching 0.12-0.13, stance share 1.00, roll
    ≤ 0.147 rad; (a) falls at 3.30-3.42 s. Before (knees 1.545 rad, MuJoCo's default contact): (a) walked 0.436 m,
    30 % beyond the plan, its soles sliding; (c) 0.339 m, roll 0.034."""
    from servo_ff.dynamics.walk_sim import simulate_walk

    high, ff = simulate_walk("high", 8), simulate_walk("ff", 8)
    assert not ff.fell and 0.6 * ff.planned < ff.travel < 1.05 * ff.planned and np.abs(ff.roll).max() < 0.25, ff
    assert ff.swing_contact < 0.3 and ff.stance_share > 0.95, ff
    assert high.fell and 2.5 < high.fell_at < 3.6, high


def test_firmware_option():
    from servo_ff.dynamics.alpha import load_alpha
    from servo_ff.dynamics.walk_sim import OP3_ALPHA, firmware_alpha, simulate_walk
    from servo_ff.models.errors import ParameterError
    from servo_ff.models.firmware import FIRMWARE_LAWS
    from servo_ff.models.presets import preset

    with pytest.raises(ParameterError, match=f"^unknown firmware row 'xm431'; valid rows: {', '.join(FIRMWARE_LAWS)}$"):
        simulate_walk("high", 1, firmware="xm431")  # models.firmware.firmware_row's one check
    params = preset("xm430", "m1")
    joints = list(yaml.safe_load(OP3_ALPHA.read_text())["joints"])
    shipped = load_alpha(OP3_ALPHA, joints)  # config/alpha_op3.yaml: the current law's α̂ (Operating Mode 5)
    assert np.allclose(firmware_alpha(params, joints, 12.0).alpha, shipped.alpha, rtol=1e-12)
    pwm = dataclasses.replace(params, firmware=FIRMWARE_LAWS["xm430_position"])
    a = firmware_alpha(pwm, ["l_knee"], 12.0).alpha[0]
    kv = params.friction[
        "friction_viscous"
    ]  # the voltage law's α̂1/α̂0 adds the back-EMF kt²/R (Eq. 19), not the current law's
    assert a[1] / a[0] == pytest.approx(params.kt**2 / params.R + kv)
    assert shipped.alpha[0][1] / shipped.alpha[0][0] == pytest.approx(kv)


def test_desired_motion_plan_and_walk_node():
    """desired_motion "plan": the samples and derivatives interpolated linearly (the ROS-free default, as before);
    "walk_node": the quintic through five-point derivatives (as the DDS mission's feed-forward node gets the walk):
    2 Hz sines of 0.3 rad on the 10 ms grid give their q, q̇, q̈ between the samples within 1e-6 rad, 1e-3 rad/s,
    0.05 rad/s² ("plan": q̈ off by up to 0.34 rad/s²). Before the walk: the first sample, at rest."""
    from servo_ff.dynamics.walk_pattern import WalkPlan
    from servo_ff.dynamics.walk_sim import desired_motion, simulate_walk

    w, phase, dt = 4.0 * math.pi, np.linspace(0.0, 2.0, 3), 0.01
    grid = dt * np.arange(200)
    q = 0.3 * np.sin(w * grid[:, None] + phase)
    dq = np.gradient(q, dt, axis=0)  # as WalkEngine.plan's
    plan = WalkPlan(["a", "b", "c"], grid, q, dq, np.gradient(dq, dt, axis=0), *[None] * 6)
    t = np.arange(-0.05, 1.8, 0.001)
    inside = t > 0.05  # past the walk start's held samples
    s = t[inside, None]
    want = (0.3 * np.sin(w * s + phase), 0.3 * w * np.cos(w * s + phase), -0.3 * w**2 * np.sin(w * s + phase))
    node = desired_motion(plan, t, dt, "walk_node")
    for got, ref, tol in zip(node, want, (1e-6, 1e-3, 0.05)):
        np.testing.assert_allclose(got[inside], ref, rtol=0, atol=tol)
    linear = desired_motion(plan, t, dt, "plan")
    np.testing.assert_array_equal(linear[0][:, 1], np.interp(np.clip(t, 0, None), grid, q[:, 1]))
    assert 0.2 < np.abs(linear[2][inside] - want[2]).max() < 0.5  # np.gradient's twice, interpolated linearly
    for q_, dq_, ddq in (node, linear):
        assert (q_[t < 0] == q[0]).all() and not dq_[t < 0].any() and not ddq[t < 0].any()
    with pytest.raises(ValueError, match="desired must be one of plan, walk_node, got 'spline'"):
        simulate_walk("ff", 1, desired="spline")


def test_walk_node_sampling_holds_velocity_as_the_walk_node(caplog):
    """desired_motion "walk_node" holds q̇ at the knots as servo_walk_node holds what it publishes (one function,
    interpolation.held_knot_derivatives): 5 rad/s peaks held at 4.7 rad/s where the limit is, counted per joint; a
    joint without a limit moving with them is scaled with them (a knot's q̇ scaled as a whole: the joints' relations
    kept; clipped alone it stayed at 5.0); simulate_walk gives it the URDF's limits in the plan's joint order (the
    NimbRo-OP's MX-106 legs 4.7 rad/s, MX-64 arms 6.6)."""
    from servo_ff.dynamics.feedforward import joint_motion_bounds
    from servo_ff.dynamics.nimbro_walk import NIMBRO_URDF
    from servo_ff.dynamics.walk_pattern import WalkPlan
    from servo_ff.dynamics.walk_sim import desired_motion
    from servo_ff.interpolation import held_knot_derivatives

    w, dt = 4.0 * math.pi, 0.01
    grid = dt * np.arange(200)
    q = np.repeat((5.0 / w) * np.sin(w * grid)[:, None], 3, axis=1)
    vmax = np.array([4.7, np.inf, 4.7])
    padded = np.concatenate([q[:1], q[:1], q, q[-1:], q[-1:]])
    dq, _, held, _ = held_knot_derivatives(padded, dt, vmax)
    assert np.abs(dq[5:-5]).max(axis=0).tolist() == pytest.approx([4.7, 4.7, 4.7], abs=0.01)  # (ends: padded)
    assert (dq[:, 1] == dq[:, 0]).all() and (dq[:, 2] == dq[:, 0]).all()  # equal joints stay equal
    assert held[0] == held[2] > 10 and held[1] == 0
    plan = WalkPlan(["a", "b", "c"], grid, q, *[None] * 8)
    with caplog.at_level(logging.INFO, logger="servo_ff.dynamics.walk_sim"):
        got = desired_motion(plan, grid[:-1], dt, "walk_node", vmax)[1]  # (after the last knot: at rest)
    np.testing.assert_allclose(got, dq[:-1], rtol=0, atol=1e-9)
    assert f"held (joint q̇/q̈ counts): a {held[0]}/0, c {held[2]}/0" in caplog.text  # said, b not named
    assert np.abs(desired_motion(plan, grid, dt, "walk_node")[1]).max() > 4.9  # None: not held
    vmax, _ = joint_motion_bounds(NIMBRO_URDF, ["left_elbow_pitch", "right_knee_pitch"])
    assert vmax.tolist() == pytest.approx([6.6, 4.7], abs=0.05)


def test_nimbro_plan_knots_held_within_the_feedforward_nodes_bounds():
    """placo's NimbRo-OP plan with the URDF's knee range (before WalkParams.ik_ranges) bent its right knee backwards
    in the first step: through straight, where the knee alternates between two values (0.0275, -0.0195 rad) from one
    10 ms sample to the next, a q̈ up to 1253 rad/s² in five-point differences (1175 at the first; np.gradient twice,
    the plan's ddq, is blind to it: 256); the feed-forward node (max_acceleration 1000 rad/s², the URDF's 4.7 rad/s)
    refused the walk node's trajectory there. Held (one function for the walk node and desired_motion "walk_node"),
    no knot is refused, and only the knots with a value beyond the bounds moved. With the gait's knee range (bent
    forward) the knee stays ≥ 0.05 rad and no q̈ is held; its knee runs at its 4.7 rad/s limit (five-point q̇ a little
    beyond, held), and the held q̇, q̈ keep what placo keeps: each leg's hip + knee + ankle pitch (the trunk's pitch
    less the foot's) constant, so their q̈ summing to ≈ 0 between the knots too (the knee's q̇ clipped alone: a sum
    of 94 rad/s² on the 40-step walk, an ankle τ of 91 N·m in the feed-forward's inverse dynamics; issue 21)."""
    from servo_ff.dynamics.feedforward import check_desired_motion, desired_motion_bounds
    from servo_ff.dynamics.nimbro_walk import NIMBRO_FRAMES, NIMBRO_URDF, nimbro_walk_params
    from servo_ff.dynamics.robot import load_robot
    from servo_ff.dynamics.walk_pattern import WalkEngine
    from servo_ff.dynamics.walk_sim import desired_motion
    from servo_ff.interpolation import held_knot_derivatives, knot_derivatives
    from servo_ff.models.schema import MAX_ACCELERATION, MAX_VELOCITY

    urdf_range = dataclasses.replace(nimbro_walk_params(), ik_ranges={})
    plan = WalkEngine(NIMBRO_URDF, urdf_range, NIMBRO_FRAMES).plan((0.05, 0.0, 0.0), 3)
    robot = load_robot(NIMBRO_URDF)
    vmax, amax, src = desired_motion_bounds(robot, MAX_VELOCITY, MAX_ACCELERATION)  # the feed-forward node's defaults
    cols = [robot.joint_names.index(j) for j in plan.joints]
    vmax, amax, src = vmax[cols], amax[cols], [src[c] for c in cols]
    knee = plan.joints.index("right_knee_pitch")
    assert plan.q[:, knee].min() < -0.5 < 0.1 < plan.q[0, knee]  # bent forward at the start, backwards after
    assert np.abs(plan.ddq).max() < 300  # the plan's own (np.gradient twice): the alternation unseen
    dt = plan.t[1] - plan.t[0]
    padded = np.concatenate([plan.q[:1], plan.q[:1], plan.q, plan.q[-1:], plan.q[-1:]])
    dq0, ddq0 = knot_derivatives(padded, dt)
    refused = check_desired_motion(0 * dq0, ddq0, vmax, amax, plan.joints, src)  # (q̇ held as before)
    assert "acceleration of right_knee_pitch is 1175 rad/s²" in refused, refused  # the DDS run's refusal
    dq, ddq, v_held, a_held = held_knot_derivatives(padded, dt, vmax, amax)
    assert check_desired_motion(dq, ddq, vmax, amax, plan.joints, src) is None
    assert a_held[knee] > 0 and v_held[knee] > 0
    inside = ((np.abs(dq0) <= vmax) & (np.abs(ddq0) <= amax)).all(axis=1)
    assert (dq[inside] == dq0[inside]).all() and (ddq[inside] == ddq0[inside]).all()
    fixed = WalkEngine(NIMBRO_URDF, nimbro_walk_params(), NIMBRO_FRAMES).plan((0.05, 0.0, 0.0), 3)
    assert fixed.q[:, knee].min() >= 0.05 - 1e-9
    padded = np.concatenate([fixed.q[:1], fixed.q[:1], fixed.q, fixed.q[-1:], fixed.q[-1:]])
    _, _, v_held, a_held = held_knot_derivatives(padded, dt, vmax, amax)
    assert a_held.sum() == 0 and v_held[knee] > 0  # no q̈ held: nothing goes through straight; the knee's q̇ held
    _, dq_des, ddq_des = desired_motion(fixed, np.arange(0.0, fixed.t[-1], 0.002), dt, "walk_node", vmax, amax)
    for side in ("left", "right"):
        leg = [fixed.joints.index(f"{side}_{j}_pitch") for j in ("hip", "knee", "ankle")]
        assert np.ptp(fixed.q[:, leg].sum(axis=1)) < 0.005  # placo keeps it (within 5 mrad)
        assert np.abs(dq_des[:, leg].sum(axis=1)).max() < 0.1 and np.abs(ddq_des[:, leg].sum(axis=1)).max() < 5.0


def test_pitch_only_keeps_the_trunk_pitch_and_drops_roll_and_yaw():
    from servo_ff.dynamics.walk_balance import trunk_pitch_roll
    from servo_ff.dynamics.walk_sim import pitch_only

    # pitch 0.2 rad forward, then roll 0.15 and yaw 0.3: q = yaw ⊗ pitch ⊗ roll (w, x, y, z)
    def about(axis, a):
        q = [math.cos(a / 2), 0.0, 0.0, 0.0]
        q[1 + axis] = math.sin(a / 2)
        return np.array(q)

    def mul(p, q):
        w1, x1, y1, z1 = p
        w2, x2, y2, z2 = q
        return np.array([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                         w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2])  # fmt: skip

    q = mul(about(2, 0.3), mul(about(1, 0.2), about(0, 0.15)))
    w, x, y, z = pitch_only(q)
    assert (x, z) == (0.0, 0.0)
    assert trunk_pitch_roll((x, y, z, w)) == pytest.approx((trunk_pitch_roll((*q[1:], q[0]))[0], 0.0))
    assert trunk_pitch_roll((x, y, z, w))[0] == pytest.approx(0.2)


def test_balance_feedback_offsets_the_goals_by_the_trunk_imus_offsets():
    """``balance``: the walk node's offsets from the trunk IMU added to the goals. Updated once (a period longer than
    the run) at the walk start, every goal after it is the plan's plus the offsets of the trunk orientation there
    (to one encoder count), on the ankles alone (the gains' joints); a ready plan has no trunk-pitch reference."""
    from servo_ff.dynamics.walk_balance import BalanceFeedback, BalanceGains
    from servo_ff.dynamics.walk_pattern import WalkEngine
    from servo_ff.dynamics.walk_sim import OP3_URDF, simulate_walk

    gains = BalanceGains(ankle_pitch=0.8, ankle_roll=0.8)
    seen: dict[str, list] = {"plain": [], "fed": []}

    def probe(key: str):
        return lambda t, sv: seen[key].append((t, sv.goal.copy(), sv.data.xquat[sv.sim.root_body].copy()))

    simulate_walk("high", 2, probe=probe("plain"))
    run = simulate_walk("high", 2, probe=probe("fed"), balance=gains, balance_period=100.0)
    names = run.joints
    t = np.array([s[0] for s in seen["fed"]])
    k0 = int(np.searchsorted(t, -1e-9))  # the first period of the walk: its offsets read the state probed before it
    w, x, y, z = seen["fed"][k0 - 1][2]
    fb = BalanceFeedback(OP3_URDF, names, gains)
    expected = fb.offsets((x, y, z, w), (0.0, 0.0, 0.0), WalkEngine(OP3_URDF).params.trunk_pitch)
    assert np.count_nonzero(expected) == 4 and np.abs(expected).max() > 2e-3  # four ankle joints, beyond a count
    n = min(len(seen["plain"]), len(seen["fed"]))
    diff = np.array([seen["fed"][k][1] - seen["plain"][k][1] for k in range(n)])
    count = 2 * math.pi / 4096
    assert np.abs(diff[: k0 - 1]).max() == 0.0  # before the walk: no feedback
    np.testing.assert_allclose(diff[k0 + 1 :], np.broadcast_to(expected, diff[k0 + 1 :].shape), rtol=0, atol=count)
    with pytest.raises(ValueError, match="trunk_pitch"):
        simulate_walk("high", 1, balance=gains, ready=(None, None, 0.5))
