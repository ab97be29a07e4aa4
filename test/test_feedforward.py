"""FeedForwardController: Eq. 19 composition, limits/clamps, held sensor readings, bad files and names."""

import json
import logging
import math
from pathlib import Path

import numpy as np
import pytest

from servo_ff.dynamics import inverse_dynamics as idy
from servo_ff.dynamics.alpha import AlphaError, AlphaTable, alpha_table_from_actuator, load_alpha, save_alpha
from servo_ff.dynamics.feedforward import FeedForwardController
from servo_ff.dynamics.robot import RobotModelError, load_robot
from servo_ff.models.presets import preset
from servo_ff.models.schwarz_behnke import goal_position_from_torque

URDF = Path(__file__).resolve().parents[1] / "urdf"
ARM, HUMANOID = URDF / "arm2.urdf", URDF / "humanoid20.urdf"


def test_joint_names_and_limits_come_from_the_urdf():
    r = load_robot(HUMANOID)
    assert r.n_joints == 20 and len(set(r.joint_names)) == 20
    i = r.index(["l_knee", "r_hip_roll"])
    np.testing.assert_allclose(r.lower[i], [0.0, -0.8])
    np.testing.assert_allclose(r.upper[i], [2.4, 0.5])
    assert r.effort[i[0]] == 10.0
    with pytest.raises(RobotModelError, match="l_toe"):
        r.index(["l_toe"])


def test_missing_inertial_is_a_clear_error(tmp_path):
    text = ARM.read_text()
    start = text.index("<inertial>", text.index('<link name="forearm">'))
    end = text.index("</inertial>", start) + len("</inertial>")
    bad = tmp_path / "no_inertial.urdf"
    bad.write_text(text[:start] + text[end:])
    with pytest.raises(RobotModelError, match=r"elbow.*forearm"):
        load_robot(bad)
    (tmp_path / "broken.urdf").write_text("<robot><link")
    with pytest.raises(RobotModelError, match="malformed"):
        load_robot(tmp_path / "broken.urdf")


def test_alpha_files_yaml_json_defaults_and_bad_names(tmp_path):
    names = load_robot(ARM).joint_names
    table = alpha_table_from_actuator(preset("mx106", "m4"), names)
    for suffix in (".yaml", ".json"):
        save_alpha(table, tmp_path / f"a{suffix}")
        back = load_alpha(tmp_path / f"a{suffix}", names)
        np.testing.assert_allclose(back.alpha, table.alpha)
        np.testing.assert_allclose(back.dq_s, table.dq_s)
    (tmp_path / "d.json").write_text(
        json.dumps({"default": {"alpha": [1, 2, 3, 4]}, "joints": {"elbow": [5, 6, 7, 8, 9]}})
    )
    t = load_alpha(tmp_path / "d.json", names)
    np.testing.assert_allclose(t.alpha, [[1, 2, 3, 4, 0], [5, 6, 7, 8, 9]])
    (tmp_path / "u.yaml").write_text("joints:\n  shoulder: [1, 2, 3, 4]\n  wrist: [1, 2, 3, 4]\n")
    with pytest.raises(AlphaError, match="wrist"):
        load_alpha(tmp_path / "u.yaml", names)
    (tmp_path / "m.yaml").write_text("joints:\n  shoulder: [1, 2, 3, 4]\n")
    with pytest.raises(AlphaError, match="elbow"):
        load_alpha(tmp_path / "m.yaml", names)
    (tmp_path / "n.yaml").write_text("alpha: [1, .nan, 3, 4]\n")
    with pytest.raises(AlphaError, match=r"alpha\[1\]"):
        load_alpha(tmp_path / "n.yaml", names)


def _arm_controller(alpha=None, kp=11.2):
    r = load_robot(ARM)
    alpha = alpha or alpha_table_from_actuator(preset("mx106", "m4"), r.joint_names)
    return r, FeedForwardController(r, alpha, kp, mode="fixed")


def test_fixed_base_tick_is_eq19_of_the_inverse_dynamics_torque():
    r, ff = _arm_controller()
    q, dq, ddq = np.array([0.4, -0.6]), np.array([0.5, -1.0]), np.array([2.0, 1.0])
    quat = [0.0, np.sin(0.1), 0.0, np.cos(0.1)]
    goal = ff.tick(q, dq, ddq, imu_quat=quat, u_bat=14.2)
    m = r.fixed.copy()
    idy.set_gravity(m, idy.gravity_from_imu(quat))
    tau = idy.fixed_base_torques(m, m.createData(), q, dq, ddq)
    a = ff.alpha
    np.testing.assert_allclose(goal, goal_position_from_torque(q, tau, dq, ddq, a.alpha, 11.2, 14.2, a.dq_s, a.delta))
    # at rest the offset is α̂0·τ/(k_P·U): the motor torque the firmware then produces is exactly τ
    goal0 = ff.tick(q, np.zeros(2), np.zeros(2))
    p = preset("mx106", "m4")
    tau0 = idy.fixed_base_torques(m, m.createData(), q, np.zeros(2), np.zeros(2))
    tau_motor = p.kt / p.R * 14.2 * 11.2 * p.firmware.error_gain * (goal0 - q)
    np.testing.assert_allclose(tau_motor, tau0, rtol=1e-12)


def _clamping_arm():
    """(robot, controller, q): the 2R arm with a large α̂0 near its limits, gravity torques pushing beyond them."""
    r = load_robot(ARM)
    big = AlphaTable(r.joint_names, np.tile([500.0, 0, 0, 0, 0], (2, 1)), np.full(2, 0.1), np.ones(2))
    _, ff = _arm_controller(big)
    return r, ff, np.array([2.9, -2.4])


def test_goals_clamped_to_limits_and_counted(caplog):
    r, ff, q = _clamping_arm()
    with caplog.at_level(logging.WARNING):
        for _ in range(3):
            goal = ff.tick(q, np.zeros(2), np.zeros(2), imu_quat=[0, 0, 0, 1], u_bat=15.0)
    assert np.all(goal >= r.lower) and np.all(goal <= r.upper) and np.isfinite(goal).all()
    assert ff.clamp_counts.sum() >= 3 and "clamped" in caplog.text
    assert set(ff.clamp_report()) <= set(r.joint_names)


@pytest.mark.parametrize("compiled", [True, False])
def test_every_clamp_counted_and_logged_at_counts_1_2_4_8(caplog, monkeypatch, compiled):
    """Joints clamped on 20 ticks count 20 and are logged at their counts 1, 2, 4, 8, 16 only (each line naming
    the joint and its count), by the compiled tick (which counts in its loop) as by the numpy path."""
    import servo_ff.dynamics.feedforward as ffm

    if not compiled:
        monkeypatch.setattr(ffm, "eq19_clamped", None)
    elif ffm.eq19_clamped is None:
        pytest.skip("no numba")
    r, ff, q = _clamping_arm()
    with caplog.at_level(logging.WARNING):
        for _ in range(20):
            ff.tick(q, np.zeros(2), np.zeros(2), imu_quat=[0, 0, 0, 1], u_bat=15.0)
    hit = [j for j, c in zip(r.joint_names, ff.clamp_counts) if c]
    assert hit and ff.clamp_counts[ff.clamp_counts > 0].tolist() == [20] * len(hit)
    lines = [rec.getMessage() for rec in caplog.records if "clamped" in rec.getMessage()]
    for j in hit:
        mine = [ln.split("; ")[1] for ln in lines if ln.startswith(f"goal for {j} ")]
        assert mine == [f"{c} clamp(s) so far" for c in (1, 2, 4, 8, 16)], lines
    assert len(lines) == 5 * len(hit)


def test_non_finite_imu_and_voltage_hold_last_good_value(caplog):
    _, ff = _arm_controller()
    q, z = np.array([0.5, 0.3]), np.zeros(2)
    quat = [0.0, np.sin(0.2), 0.0, np.cos(0.2)]
    good = ff.tick(q, z, z, imu_quat=quat, u_bat=13.0)
    with caplog.at_level(logging.WARNING):
        held = ff.tick(q, z, z, imu_quat=[np.nan, 0, 0, 1], u_bat=math.inf)
        held2 = ff.tick(q, z, z, imu_quat=[0, 0, 0, 0], u_bat=float("nan"))
    np.testing.assert_allclose(held, good)
    np.testing.assert_allclose(held2, good)
    assert ff.bad_imu == 2 and ff.bad_voltage == 2 and ff.u_bat == 13.0
    assert "IMU" in caplog.text and "voltage" in caplog.text
    assert np.abs(ff.tick(q, z, z, u_bat=15.0) - good).max() > 1e-4  # a new good reading is used


def test_bad_desired_state_and_gains_raise():
    r, ff = _arm_controller()
    with pytest.raises(ValueError, match="dq_des.*elbow"):
        ff.tick(np.zeros(2), np.array([0.0, np.nan]), np.zeros(2))
    with pytest.raises(ValueError, match="q_des.*shape"):
        ff.tick(np.zeros(3), np.zeros(2), np.zeros(2))
    with pytest.raises(ValueError, match="kp"):
        FeedForwardController(r, ff.alpha, 0.0, mode="fixed")
    hum = load_robot(HUMANOID)
    ffh = FeedForwardController(hum, alpha_table_from_actuator(preset("mx106", "m4"), hum.joint_names), 18.6)
    with pytest.raises(ValueError, match="c_left"):
        ffh.tick(np.zeros(20), np.zeros(20), np.zeros(20), c_left=1.5)
    with pytest.raises(ValueError, match=r"^c_left .* is required with a floating base$"):  # no silent single support
        ffh.tick(np.zeros(20), np.zeros(20), np.zeros(20))
    assert ffh.n_ticks == 0
    with pytest.raises(RobotModelError, match="foot"):
        FeedForwardController(hum, ffh.alpha, 18.6, left_foot="foot")


def test_continuous_joint_urdf_gives_the_same_torques_and_no_limit(tmp_path):
    text = ARM.read_text()
    start = text.index('<joint name="elbow" type="revolute">')
    cont = text[:start] + text[start:].replace('type="revolute"', 'type="continuous"', 1)
    (tmp_path / "cont.urdf").write_text(cont)
    r_rev, r_cont = load_robot(ARM), load_robot(tmp_path / "cont.urdf")
    assert r_cont.continuous.tolist() == [False, True] and np.isinf(r_cont.upper[1])
    alpha = alpha_table_from_actuator(preset("mx106", "m4"), r_rev.joint_names)
    q, dq, ddq = np.array([0.4, 2.9]), np.array([0.5, -1.0]), np.array([2.0, 1.0])
    g_rev = FeedForwardController(r_rev, alpha, 11.2, mode="fixed").tick(q, dq, ddq)
    g_cont = FeedForwardController(r_cont, alpha, 11.2, mode="fixed").tick(q, dq, ddq)
    np.testing.assert_allclose(g_cont[0], g_rev[0])
    assert g_cont[1] > r_rev.upper[1] and g_rev[1] == r_rev.upper[1]  # only the revolute elbow is clamped


def test_unsupported_joint_type_is_a_clear_error(tmp_path):
    text = ARM.read_text().replace('<joint name="elbow" type="revolute">', '<joint name="elbow" type="planar">')
    (tmp_path / "planar.urdf").write_text(text)
    with pytest.raises(RobotModelError, match="elbow"):
        load_robot(tmp_path / "planar.urdf")


def test_compiled_eq19_equals_the_numpy_path(monkeypatch, caplog):
    """The tick's compiled Eq. 19 + clamp (``eq19_kernel``) gives the goals and clamp counts of the numpy path
    (``goal_position_from_torque`` + ``_clamp``) on a walking trajectory whose elbows hit their limits."""
    from servo_ff.dynamics import feedforward as ffm
    from servo_ff.dynamics.gait import stepping_in_place

    r = load_robot(HUMANOID)
    table = alpha_table_from_actuator(preset("mx106", "m4"), r.joint_names)
    g = stepping_in_place(r.joint_names, n_steps=2, dt=0.008)
    fast, slow = (FeedForwardController(r, table, 0.5) for _ in range(2))  # a low gain: large offsets, clamps
    assert ffm.eq19_clamped is not None
    goals_fast = [fast.tick(q, dq, ddq, c_left=0.5) for q, dq, ddq in zip(g.q, g.dq, g.ddq)]
    monkeypatch.setattr(ffm, "eq19_clamped", None)
    goals_slow = [slow.tick(q, dq, ddq, c_left=0.5) for q, dq, ddq in zip(g.q, g.dq, g.ddq)]
    np.testing.assert_allclose(goals_fast, goals_slow, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(fast.clamp_counts, slow.clamp_counts)
    assert fast.clamp_counts.sum() > 0  # the clamp path was exercised
