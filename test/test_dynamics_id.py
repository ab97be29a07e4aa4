"""Inverse dynamics: fixed-base arm vs analytic 2-link, support-foot torques vs statics and the KKT equations."""

from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from servo_ff.dynamics import inverse_dynamics as idy
from servo_ff.dynamics.robot import load_robot

URDF = Path(__file__).resolve().parents[1] / "urdf"
G = idy.STANDARD_GRAVITY


@pytest.fixture(scope="module")
def arm():
    return load_robot(URDF / "arm2.urdf")


@pytest.fixture(scope="module")
def humanoid():
    return load_robot(URDF / "humanoid20.urdf")


def analytic_2link(q, dq, ddq, g=G):
    """Planar 2R about y, links hanging along −z at q = 0 (arm2.urdf numbers: uniform boxes)."""
    m1, m2, l1, lc1, lc2 = 0.35, 0.25, 0.20, 0.10, 0.10
    I1 = m1 / 12 * (0.04**2 + 0.20**2)
    I2 = m2 / 12 * (0.04**2 + 0.20**2)
    c2, s2 = np.cos(q[1]), np.sin(q[1])
    M = np.array(
        [
            [I1 + I2 + m1 * lc1**2 + m2 * (l1**2 + lc2**2 + 2 * l1 * lc2 * c2), I2 + m2 * (lc2**2 + l1 * lc2 * c2)],
            [I2 + m2 * (lc2**2 + l1 * lc2 * c2), I2 + m2 * lc2**2],
        ]
    )
    h = m2 * l1 * lc2 * s2
    C = np.array([-h * (2 * dq[0] * dq[1] + dq[1] ** 2), h * dq[0] ** 2])
    Gv = np.array(
        [
            m1 * g * lc1 * np.sin(q[0]) + m2 * g * (l1 * np.sin(q[0]) + lc2 * np.sin(q[0] + q[1])),
            m2 * g * lc2 * np.sin(q[0] + q[1]),
        ]
    )
    return M @ ddq + C + Gv


def test_fixed_base_arm_matches_analytic_two_link_and_rnea(arm):
    m = arm.fixed.copy()
    d = m.createData()
    idy.set_gravity(m, idy.gravity_from_imu([0, 0, 0, 1]))
    rng = np.random.default_rng(1)
    for _ in range(5):
        q, dq, ddq = rng.uniform(-2, 2, (3, 2))
        tau = idy.fixed_base_torques(m, d, q, dq, ddq)
        np.testing.assert_allclose(tau, analytic_2link(q, dq, ddq), atol=1e-10)
        np.testing.assert_allclose(tau, pin.rnea(m, m.createData(), q, dq, ddq), atol=1e-12)


def test_imu_pitch_equals_rotating_the_first_joint(arm):
    """Tilting the base by θ about y (the shoulder axis) is, statically, the shoulder turned by θ."""
    m = arm.fixed.copy()
    d = m.createData()
    theta, q = 0.4, np.array([0.3, -0.7])
    idy.set_gravity(m, idy.gravity_from_imu([0.0, np.sin(theta / 2), 0.0, np.cos(theta / 2)]))
    tilted = idy.fixed_base_torques(m, d, q, np.zeros(2), np.zeros(2))
    np.testing.assert_allclose(tilted, analytic_2link(q + [theta, 0.0], np.zeros(2), np.zeros(2)), atol=1e-10)
    assert abs(tilted[0] - analytic_2link(q, np.zeros(2), np.zeros(2))[0]) > 0.1  # the tilt matters


def test_gravity_from_imu_convention():
    np.testing.assert_allclose(idy.gravity_from_imu([0, 0, 0, 1]), [0, 0, -G])
    np.testing.assert_allclose(idy.gravity_from_imu([0, 0, 0, 2.0]), [0, 0, -G])  # normalised
    # roll +90° about x: world −z seen in the body frame is body −y... R_x(90)ᵀ(0,0,−g) = (0, −g, 0)
    s = np.sqrt(0.5)
    np.testing.assert_allclose(idy.gravity_from_imu([s, 0, 0, s]), [0, -G, 0], atol=1e-12)
    np.testing.assert_allclose(idy.gravity_from_imu([0, 0, s, s]), [0, 0, -G], atol=1e-12)  # yaw: no effect
    for bad in ([np.nan, 0, 0, 1], [0, 0, 0, 0], [0, 0, np.inf, 1]):
        with pytest.raises(ValueError, match="quaternion"):
            idy.gravity_from_imu(bad)


def _static_expectation(model, data, q, gravity, foot):
    """τ_j from moments of gravity: support-chain joints hold everything on the trunk side, other joints hold
    their own subtree (what a model rooted at the foot computes)."""
    qf = idy.floating_configuration(q)
    pin.forwardKinematics(model, data, qf)
    chain, j = set(), model.frames[foot].parentJoint
    while j > 1:
        chain.add(j)
        j = model.parents[j]
    out = np.zeros(len(q))
    for jid in range(2, model.njoints):
        ax = data.oMi[jid].rotation[:, "XYZ".index(model.joints[jid].shortname()[-1])]
        sub = set(model.subtrees[jid])
        bodies = [b for b in range(1, model.njoints) if b not in sub] if jid in chain else sorted(sub)
        mom = sum(
            np.cross(
                data.oMi[b].act(model.inertias[b].lever) - data.oMi[jid].translation, model.inertias[b].mass * gravity
            )
            for b in bodies
        )
        out[jid - 2] = ax @ mom if jid in chain else -ax @ mom
    return out


@pytest.mark.parametrize("foot", ["l_sole", "r_sole"])
def test_support_foot_static_torques_match_moments_and_wrench_carries_weight(humanoid, foot):
    m = humanoid.floating.copy()
    d = m.createData()
    rng = np.random.default_rng(7)
    fid = humanoid.frame_id(foot)
    quat = np.array([0.05, -0.08, 0.3, 1.0])
    gravity = idy.gravity_from_imu(quat)
    idy.set_gravity(m, gravity)
    mass = sum(i.mass for i in m.inertias)
    for _ in range(3):
        q = rng.uniform(-0.4, 0.4, humanoid.n_joints)
        tau, f = idy.support_foot_torques(m, d, q, np.zeros_like(q), np.zeros_like(q), fid)
        np.testing.assert_allclose(tau, _static_expectation(m, m.createData(), q, gravity, fid), atol=1e-9)
        pin.framesForwardKinematics(m, d, idy.floating_configuration(q))
        oMf = d.oMf[fid]
        np.testing.assert_allclose(oMf.rotation @ f[:3], -mass * gravity, atol=1e-9)  # ground carries weight
        com = pin.centerOfMass(m, d, idy.floating_configuration(q))
        np.testing.assert_allclose(oMf.rotation @ f[3:], -np.cross(com - oMf.translation, mass * gravity), atol=1e-9)


def test_support_foot_dynamics_satisfy_constrained_equations_of_motion(humanoid):
    """Independent check by the KKT system: with τ = [0; τ_a] and the foot as a 6-D contact, pinocchio's
    dynamics give back the desired q̈ and keep the foot still."""
    m = humanoid.floating.copy()
    d = m.createData()
    idy.set_gravity(m, idy.gravity_from_imu([0.1, 0.0, 0.0, 1.0]))
    rng = np.random.default_rng(3)
    fid = humanoid.frame_id("l_sole")
    q, dq, ddq = rng.uniform(-0.5, 0.5, (3, humanoid.n_joints))
    tau_a, _ = idy.support_foot_torques(m, d, q, dq, ddq, fid)
    qf = idy.floating_configuration(q)
    J = pin.computeFrameJacobian(m, d, qf, fid, pin.LOCAL)
    v = np.concatenate([-np.linalg.lstsq(J[:, :6], J[:, 6:] @ dq, rcond=None)[0], dq])  # foot still
    M = pin.crba(m, d, qf)
    M = np.triu(M) + np.triu(M, 1).T
    h = pin.nonLinearEffects(m, d, qf, v)
    pin.forwardKinematics(m, d, qf, v, np.zeros(m.nv))
    gamma = pin.getFrameAcceleration(m, d, fid, pin.LOCAL).vector
    kkt = np.block([[M, J.T], [J, np.zeros((6, 6))]])
    rhs = np.concatenate([np.concatenate([np.zeros(6), tau_a]) - h, -gamma])
    acc = np.linalg.solve(kkt, rhs)[: m.nv]
    np.testing.assert_allclose(acc[6:], ddq, atol=1e-8)
    assert np.abs(dq).max() > 0.1 and np.abs(tau_a).max() > 0.5  # a real dynamic case


def test_double_support_blend_and_fade(humanoid):
    m = humanoid.floating.copy()
    d = m.createData()
    idy.set_gravity(m, idy.gravity_from_imu([0, 0, 0, 1]))
    q = np.random.default_rng(0).uniform(-0.3, 0.3, humanoid.n_joints)
    z = np.zeros_like(q)
    lf, rf = humanoid.frame_id("l_sole"), humanoid.frame_id("r_sole")
    tl = idy.support_foot_torques(m, d, q, z, z, lf)[0]
    tr = idy.support_foot_torques(m, d, q, z, z, rf)[0]
    assert np.abs(tl - tr).max() > 0.5  # the support foot matters
    np.testing.assert_allclose(idy.double_support_torques(m, d, q, z, z, lf, rf, 1.0), tl, atol=1e-12)
    np.testing.assert_allclose(idy.double_support_torques(m, d, q, z, z, lf, rf, 0.0), tr, atol=1e-12)
    np.testing.assert_allclose(
        idy.double_support_torques(m, d, q, z, z, lf, rf, 0.25), 0.25 * tl + 0.75 * tr, atol=1e-12
    )
    c = idy.support_coefficient(np.array([0.0, 1.0, 1.5, 2.0, 3.0]), 1.0, 2.0, 0.0, 1.0)
    np.testing.assert_allclose(c, [0.0, 0.0, 0.5, 1.0, 1.0])
    with pytest.raises(ValueError, match="c_left"):
        idy.blend_support(tl, tr, 1.2)
