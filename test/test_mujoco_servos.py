"""MuJoCo servo layer: agreement with the core stepper, options, sensors, divergence, the documented RL loop."""

import math
import os
import re
from pathlib import Path

import mujoco
import numpy as np
import pytest

from servo_ff.dynamics.arm2r import make_arm
from servo_ff.dynamics.mujoco_model import build_model, place_on_ground
from servo_ff.dynamics.mujoco_sensors import foot_forces_py
from servo_ff.dynamics.mujoco_servos import MujocoServos, PhysicsDiverged, ServoOptions
from servo_ff.dynamics.servo_map import load_servo_map
from servo_ff.models.presets import preset
from servo_ff.models.stepper import PendulumLoad, rollout

ROOT = Path(__file__).resolve().parents[1]
M, L, DT = 0.5, 0.15, 0.001
PENDULUM = f"""<mujoco><option timestep="{DT}" gravity="0 0 -9.80665"/><compiler inertiafromgeom="false"/>
<worldbody><body name="arm"><joint name="pendulum" type="hinge" axis="1 0 0"/>
<inertial pos="0 0 -{L}" mass="{M}" diaginertia="1e-9 1e-9 1e-9"/></body></worldbody></mujoco>"""
GOALS = np.concatenate([np.full(800, 1.2), np.full(800, -0.4), np.full(800, 0.0), np.linspace(0, 1.5, 600)])


def pendulum(model="m4", kp=32.0, options=ServoOptions(), backend="auto"):
    sim = build_model(PENDULUM, dt=DT)
    smap = load_servo_map({"servos": {"pendulum": {"preset": f"mx64/{model}", "kp": kp}}}, sim.joint_names)
    return MujocoServos(sim, smap, options, backend=backend)


def run_pendulum(servos, goals=GOALS):
    q = np.zeros(len(goals))
    for k, g in enumerate(goals):
        q[k] = servos.data.qpos[0]
        servos.command([g])
        servos.step()
    return q


def test_single_pendulum_joint_agrees_with_the_core_stepper():
    """Same servo, same pendulum (bam's bench geometry): MuJoCo + layer vs stepper.rollout. Measured 7.8 mrad max,
    2.4 mrad RMS; differences come from MuJoCo's semi-implicit Euler (no ½θ̈Δt² term, implicit damping), its
    soft friction-loss constraint (slight creep where Algorithm 1 clips exactly) and the budget's one-step-old
    external torque. M1 vs M4 of the same servo differ by 51 / 15 mrad, so the bounds separate models."""
    q = run_pendulum(pendulum("m4"))
    p = preset("mx64", "m4")
    ref = rollout(p, 0.0, 0.0, GOALS, DT, PendulumLoad(M, L)).theta
    err = np.abs(q - ref)
    assert err.max() < 0.015 and np.sqrt(np.mean(err**2)) < 0.004
    other = rollout(preset("mx64", "m1"), 0.0, 0.0, GOALS, DT, PendulumLoad(M, L)).theta
    assert np.abs(q - other).max() > 0.03  # the tolerance would catch a wrong friction model
    slow = rollout(p.with_(firmware=p.firmware.with_(kp=16.0)), 0.0, 0.0, GOALS, DT, PendulumLoad(M, L)).theta
    assert np.abs(q - slow).max() > 0.03  # ... or a wrong P gain


def test_numba_and_numpy_paths_agree():
    a = run_pendulum(pendulum("m6", backend="numba"), GOALS[:900])
    b = run_pendulum(pendulum("m6", backend="numpy"), GOALS[:900])
    np.testing.assert_allclose(a, b, atol=1e-9)


def test_quantisation_counts_and_firmware_dead_band():
    res = 2 * math.pi / 4096
    s = pendulum(options=ServoOptions(counts_per_rev=4096))
    s.command([0.3])
    s.step(400)
    pos = s.joint_state().position
    np.testing.assert_allclose(pos / res, np.round(pos / res), atol=1e-9)
    assert abs(s.goal[0] / res - round(s.goal[0] / res)) < 1e-9  # goal register: whole counts
    # a goal within half a count of the (quantised) position: the firmware sees no error, no torque
    s.reset()
    s.command([0.4 * res])
    s.before_step()
    assert s.tau_m[0] == 0.0
    plain = pendulum()
    plain.command([0.4 * res])
    plain.before_step()
    assert plain.tau_m[0] != 0.0


def test_command_quantises_as_quantize_in_place_of_a_copy():
    """The per-period command path (rounded in place) sets the goal register quantize() gives, bit for bit, and
    leaves the caller's array as it was."""
    from servo_ff.dynamics.mujoco_servos import quantize

    res = 2 * math.pi / 4096
    s = pendulum(options=ServoOptions(counts_per_rev=4096))
    for g in np.random.default_rng(3).uniform(-3.0, 3.0, (200, 1)):
        sent = g.copy()
        s.command(sent)
        assert s.goal[0] == quantize(g, res)[0]
        assert sent[0] == g[0]


def test_latency_delays_goals_by_whole_control_periods():
    goals = np.concatenate([np.zeros(5), np.full(40, 0.5)])

    def run(latency):
        s = pendulum(options=ServoOptions(latency=latency))
        out = []
        for g in goals:
            out.append(s.data.qpos[0])
            s.command([g])
            s.step(10)
        return np.array(out)

    q0, q2 = run(0), run(2)
    np.testing.assert_array_equal(q2[2:], q0[:-2])  # exactly two control periods late
    assert np.abs(q0[6:] - q0[5]).max() > 0.1  # and the goal step did move the joint
    s = pendulum(options=ServoOptions(latency=2))
    seen = []
    for g in (0.1, 0.2, 0.3):
        s.command([g])
        seen.append(s.goal[0])
    assert seen == [0.0, 0.0, 0.1]


def test_noise_is_seeded_sized_and_only_in_readings():
    opts = ServoOptions(position_noise=0.01, velocity_noise=0.02, seed=7)
    a, b, c = (
        pendulum(options=opts),
        pendulum(options=opts),
        pendulum(options=ServoOptions(seed=8, position_noise=0.01)),
    )
    ra = np.array([a.joint_state().position[0] for _ in range(2000)])
    rb = np.array([b.joint_state().position[0] for _ in range(2000)])
    rc = np.array([c.joint_state().position[0] for _ in range(2000)])
    np.testing.assert_array_equal(ra, rb)
    assert not np.array_equal(ra, rc)
    assert 0.009 < ra.std() < 0.011 and abs(ra.mean()) < 0.002
    quiet = pendulum()
    for s in (a, quiet):
        s.command([0.5])
        s.step(300)
    assert a.data.qpos[0] == quiet.data.qpos[0]  # the physics never sees the noise


def test_non_finite_state_is_detected_refused_and_reset(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # MuJoCo appends its warnings to ./MUJOCO_LOG.TXT
    arm = make_arm("m4", 32.0)
    arm.command([0.2, -0.3])
    arm.step(50)
    arm.data.qvel[1] = np.nan
    with pytest.raises(PhysicsDiverged, match="elbow"):
        arm.step(1)
    for read in (arm.joint_state, arm.imu, lambda: arm.step(1)):
        with pytest.raises(PhysicsDiverged):
            read()
    arm.reset()
    arm.command([0.2, -0.3])
    arm.step(100)
    assert np.isfinite(arm.joint_state().position).all()
    arm.data.qpos[0] = np.inf  # corrupted between steps in a user's own loop
    with pytest.raises(PhysicsDiverged, match="shoulder"):
        arm.after_step()
    arm.reset()
    arm.data.qvel[0] = 1e300  # blows up inside MuJoCo, which resets the state itself
    with pytest.raises(PhysicsDiverged, match="MuJoCo"):
        arm.step(3)


def test_torque_enable_and_kp_act_on_the_firmware_law():
    pose = [1.2, 0.3]  # arm well off the vertical: gravity pulls it down unless the servos hold it
    arm = make_arm("m4", 32.0)
    arm.reset(qpos=pose)
    arm.command(pose)
    arm.step(300)
    held = arm.joint_state().position.copy()
    assert np.abs(held - pose).max() < 0.2
    arm.set_enable([0.0, 1.0])  # shoulder released: no motor torque, it swings down
    arm.step(300)
    assert arm.tau_m[0] == 0.0 and arm.joint_state().position[0] < held[0] - 0.3
    arm.reset(qpos=pose)
    arm.set_enable(1.0)
    arm.command([1.15, 0.3])  # small error: the duty stays below its limit
    arm.before_step()
    tau32 = arm.tau_m.copy()
    arm.set_kp(16.0)
    arm.before_step()
    assert arm.tau_m[0] == pytest.approx(tau32[0] / 2)  # voltage law, no back-EMF at rest: τ ∝ k_P·error


def test_bad_commands_name_the_joint():
    arm = make_arm("m4", 32.0)
    with pytest.raises(ValueError, match="elbow"):
        arm.command([0.0, np.nan])
    with pytest.raises(ValueError, match="elbow"):
        arm.command(np.array([0.0, -np.inf]))
    with pytest.raises(ValueError):
        ServoOptions(latency=-1)
    with pytest.raises(ValueError):
        ServoOptions(counts_per_rev=0)


def test_humanoid_sensors_standing():
    s = MujocoServos.from_description(
        ROOT / "urdf" / "humanoid20.urdf", ROOT / "config" / "servos_humanoid.yaml", base="floating"
    )
    q0 = np.zeros(len(s.joint_names))
    for name, v in (("knee", 0.8), ("hip_pitch", -0.4), ("ankle_pitch", -0.4)):
        q0[[s.joint_names.index(f"{side}_{name}") for side in "lr"]] = v
    place_on_ground(s.sim, s.qadr, q0)
    s.set_initial_state()
    s.reset()
    s.command(q0)
    s.step(500)
    mass = float(s.model.body_subtreemass[s.sim.root_body])
    forces = s.foot_forces()
    # the compiled one-pass kernel equals mj_contactForce contact by contact (standing here, on one foot below)
    assert np.allclose(forces, foot_forces_py(s.model, s.data, s.sim.feet), rtol=1e-12, atol=1e-9)
    assert abs(forces.sum() - mass * 9.80665) < 0.05 * mass * 9.80665  # standing still: weight on the feet
    assert abs(s.support_coefficient() - 0.5) < 0.05
    imu = s.imu()
    assert abs(np.linalg.norm(imu.orientation) - 1) < 1e-9
    assert abs(imu.linear_acceleration[2] - 9.80665) < 0.3 and np.abs(imu.angular_velocity).max() < 0.05
    s.data.qpos[2] += 0.5  # lift the robot (free joint: x y z first): no contact, c = 0.5, free fall
    mujoco.mj_forward(s.model, s.data)
    s.step(5)
    assert s.foot_forces().sum() == 0.0 and s.support_coefficient() == 0.5
    assert np.abs(s.imu().linear_acceleration).max() < 1.5  # free fall: ~0 (legs still move) instead of g
    s.reset()
    lifted = q0.copy()
    lifted[[s.joint_names.index("r_hip_pitch"), s.joint_names.index("r_knee")]] = (-0.8, 1.4)
    one_foot = 0
    for _ in range(40):
        s.command(lifted)
        s.step(5)
        f = s.foot_forces()
        one_foot += int(f[1] == 0.0 < f[0])
        assert np.allclose(f, foot_forces_py(s.model, s.data, s.sim.feet), rtol=1e-12, atol=1e-9)
    assert one_foot > 0  # the comparison covered single support


def test_the_documented_rl_loop_runs_and_equals_step():
    text = (ROOT / "docs" / "simulation.md").read_text()
    code = re.search(r"<!-- example:rl-loop -->\n```python\n(.*?)```", text, re.S).group(1)
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        ns: dict = {}
        exec(compile(code, "docs/simulation.md", "exec"), ns)
        obs = ns["obs"]
        ref = MujocoServos.from_description(
            "urdf/arm2r.urdf", "config/servos_arm2r.yaml", options=ServoOptions(counts_per_rev=4096, latency=1)
        )
    finally:
        os.chdir(cwd)
    for _ in range(100):
        ref.command([0.3, -0.6])
        ref.step(10)
    np.testing.assert_array_equal(obs.position, ref.joint_state().position)
    assert np.abs(obs.position - [0.3, -0.6]).max() < 0.05  # the arm got there
    assert ns["servos"].joint_state().position.tolist() == [0.0, 0.0]  # reset() at the end of the example
