"""Short closed-loop MuJoCo run: low-gain P + feed-forward (c) tracks better than low-gain P alone (b)."""

import numpy as np

from servo_ff.dynamics.gait import stepping_in_place
from servo_ff.dynamics.mujoco_humanoid import HUMANOID_URDF, simulate
from servo_ff.dynamics.robot import load_robot


def test_gait_schedule_support_coefficient_and_swing():
    names = load_robot(HUMANOID_URDF).joint_names
    g = stepping_in_place(names, n_steps=2, dt=0.01)
    assert g.c_left[0] == 0.5 and g.c_left[-1] == 0.5
    assert np.all(g.c_left[g.right_swing] == 1.0) and np.all(g.c_left[g.left_swing] == 0.0)
    assert g.right_swing.any() and g.left_swing.any() and not (g.right_swing & g.left_swing).any()
    knee = names.index("r_knee")
    assert g.q[g.right_swing, knee].max() > g.q[0, knee] + 0.4  # the swing knee flexes
    np.testing.assert_allclose(np.gradient(g.q[:, knee], 0.01), g.dq[:, knee], atol=0.02)  # analytic q̇


def test_forward_gait_places_each_swing_foot_one_stride_ahead():
    from servo_ff.dynamics.gait import SteppingParams, sagittal_leg

    names = load_robot(HUMANOID_URDF).joint_names
    d, link, dt = 0.03, 0.21, 0.005
    g = stepping_in_place(names, n_steps=3, dt=dt, p=SteppingParams(stride=d, leg_link=link))
    flat = stepping_in_place(names, n_steps=3, dt=dt)
    hip, knee, ankle = (names.index(f"r_{j}") for j in ("hip_pitch", "knee", "ankle_pitch"))
    # forward kinematics of the sagittal chain: the foot ahead of the hip, level with the trunk
    x = -link * np.sin(g.q[:, hip]) - link * np.sin(g.q[:, hip] + g.q[:, knee])
    z = link * np.cos(g.q[:, hip]) + link * np.cos(g.q[:, hip] + g.q[:, knee])
    z_flat = link * np.cos(flat.q[:, hip]) + link * np.cos(flat.q[:, hip] + flat.q[:, knee])
    np.testing.assert_allclose(g.q[:, hip] + g.q[:, knee] + g.q[:, ankle], 0.0, atol=1e-12)
    np.testing.assert_allclose(z, z_flat, atol=1e-9)  # same foot heights as in place
    assert abs(x.max() - d) < 1e-9 and abs(x.min() + d) < 1e-9  # lands d ahead; pushed back to −d under the trunk
    assert abs(x[g.right_swing].max() - d) < 1e-9  # forward while in the air
    np.testing.assert_allclose(np.gradient(g.q[:, knee], dt), g.dq[:, knee], atol=0.02)
    # stride 0 is the analytic in-place gait, and the IK agrees with it
    h, k, a = sagittal_leg(np.zeros(1), np.array([0.5]), link)
    assert np.allclose([h[0], k[0], a[0]], [-0.5, 1.0, -0.5])


def test_feedforward_tracks_better_than_low_gain_p():
    robot = load_robot(HUMANOID_URDF)
    b = simulate("low", n_steps=1, robot=robot)
    c = simulate("ff", n_steps=1, robot=robot)
    assert not c.fell
    knee = [robot.joint_names.index("l_knee"), robot.joint_names.index("r_knee")]
    n = min(len(b.t), len(c.t))  # (b) may fall: compare over the time both were up
    rms = lambda r, j=None: float(np.sqrt(np.mean((r.q[:n] - r.q_des[:n])[:, j if j else slice(None)] ** 2)))
    assert rms(c) < 0.6 * rms(b)
    assert rms(c, knee) < 0.3 * rms(b, knee)
    assert np.isfinite(c.energy).all() and c.energy.sum() > 0
    assert (c.foot_force[c.swing[:, 1], 1] < 0.5).mean() > 0.5  # (c) really lifts the swing foot
