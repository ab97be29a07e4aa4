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
