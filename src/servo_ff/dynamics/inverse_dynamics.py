"""Inverse dynamics for the feed-forward torques of Schwarz & Behnke (Compliant Robot Behavior) §5.2, pure functions
over pinocchio (model, data).

Support foot fixed — which formulation, and why
------------------------------------------------
Schwarz & Behnke (and its NimbRo-OP code) moves the origin of the RNEA to the support foot by keeping one reversed
kinematic tree per foot. Pinocchio cannot re-root a tree (its issues #31, #1308), and hand-building reversed
URDFs per foot would duplicate the robot description and break "any URDF with inertials works". We therefore
use the equivalent **floating-base formulation**: the URDF root (trunk) sits on a free-flyer joint and the
support foot frame F is held still by a contact wrench f (expressed in F):

* velocity: J_F(q)·v = 0 with v = [v_b; q̇] → v_b = −J_F,b⁻¹ J_F,a q̇ (J_F,b, the 6×6 base block, is the
  adjoint Ad(ᵒM_F)⁻¹ when the base sits at the identity, so J_F,b⁻¹ = Ad(ᵒM_F): no linear solve);
* acceleration: J_F·v̇ + J̇_F·v = 0 → v̇_b = −J_F,b⁻¹ (J_F,a q̈ + J̇_F v);
* dynamics: M v̇ + h = [0; τ_a] + J_Fᵀ f. The six base rows give f = J_F,b⁻ᵀ (M v̇ + h)_b, and
  τ_a = (M v̇ + h)_a − J_F,aᵀ f (the brief's τ_a = M_a q̈ + h_a − J_aᵀ f).

With the base velocity and acceleration consistent with a stationary foot this is exactly the reversed-tree
RNEA of 002 (same rigid bodies, same constraint), and f is the ground wrench the foot needs — it does not
depend on measured contact forces. The base pose is put at the identity: the computation frame is an inertial
frame momentarily aligned with the trunk, so gravity enters as the world gravity rotated into the trunk frame
by the IMU orientation (:func:`gravity_from_imu`).

Double support (Schwarz & Behnke §5.2): τ = c·τ_left + (1 − c)·τ_right, c faded linearly through the transition
(:func:`support_coefficient`, :func:`blend_support`).

Fixed base (arms): plain RNEA τ = M(q)q̈ + h(q, q̇) with gravity rotated into the base frame.

Units: rad, rad/s, rad/s², N·m, m/s². Quaternions in the ``sensor_msgs/Imu`` order (x, y, z, w), no ROS import.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from .imu_reading import quaternion_norm2

STANDARD_GRAVITY = 9.80665  # m/s²
_LOCAL = pin.ReferenceFrame.LOCAL


def gravity_from_imu(quat_xyzw, g: float = STANDARD_GRAVITY) -> np.ndarray:
    """Gravity [m/s²] in the base (IMU/trunk) frame: R_wbᵀ·(0, 0, −g), R_wb the IMU orientation (REP-103:
    world z up). An upright robot (identity quaternion) gives (0, 0, −g). Only the third row of R_wb is
    needed: −g·(2(xz − yw), 2(yz + xw), 1 − 2(x² + y²)) for the normalised quaternion.

    Raises ValueError for a non-finite or zero-norm quaternion (:func:`.imu_reading.quaternion_norm2`)."""
    x, y, z, w, n2 = quaternion_norm2(quat_xyzw)
    k = -g / n2  # normalisation folded in (every term is quadratic in the quaternion)
    return np.array([2 * (x * z - y * w) * k, 2 * (y * z + x * w) * k, (n2 - 2 * (x * x + y * y)) * k])


def set_gravity(model: pin.Model, gravity_base: np.ndarray) -> None:
    """Put the gravity vector (base frame) into ``model.gravity`` (pinocchio's RNEA reads it)."""
    model.gravity.linear = np.asarray(gravity_base, dtype=float)


def fixed_base_torques(model: pin.Model, data: pin.Data, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray) -> np.ndarray:
    """τ = M(q)q̈ + h(q, q̇) for a fixed-base model (RNEA, Featherstone 2008; Schwarz & Behnke §5) [N·m]. ``q`` is
    pinocchio's configuration (= the joint angles unless the URDF has continuous joints: ``Robot.configuration``)."""
    return pin.rnea(model, data, q, dq, ddq).copy()


def floating_configuration(q: np.ndarray) -> np.ndarray:
    """[base at identity (x y z qx qy qz qw = 0 0 0 0 0 0 1); q] for a free-flyer model."""
    out = np.zeros(7 + len(q))
    out[6] = 1.0
    out[7:] = q
    return out


def support_foot_torques(
    model: pin.Model,
    data: pin.Data,
    q: np.ndarray,
    dq: np.ndarray,
    ddq: np.ndarray,
    foot_frame: int,
    *,
    jacobians_ready: bool = False,
    q_full: np.ndarray | None = None,
    with_force: bool = True,
) -> tuple[np.ndarray, np.ndarray | None]:
    """Actuated torques τ_a [N·m] and ground wrench f (6, in the foot frame: force [N], moment [N·m]) with the
    frame ``foot_frame`` of the free-flyer ``model`` held still (see module docstring).

    ``q, dq, ddq`` are the actuated joints (length nv − 6). ``jacobians_ready`` skips
    ``computeJointJacobians`` when the caller already ran it at ``q_full`` (double support, two feet);
    ``with_force=False`` returns None for f (the torques do not need it).
    """
    if q_full is None:
        q_full = floating_configuration(q)
    if not jacobians_ready:
        pin.computeJointJacobians(model, data, q_full)
    Ja = pin.getFrameJacobian(model, data, foot_frame, _LOCAL)[:, 6:]
    # With the base at the identity, J_F,b = Ad(oMf)⁻¹, so J_F,b⁻¹ = Ad(oMf) (no 6×6 solve needed).
    ad = pin.updateFramePlacement(model, data, foot_frame).action
    ad_ja = ad @ Ja  # J_F,b⁻¹ J_F,a, used twice
    v = np.empty(model.nv)
    v[6:] = dq
    v[:6] = -(ad_ja @ dq)
    a = np.zeros(model.nv)
    a[6:] = ddq
    pin.forwardKinematics(model, data, q_full, v, a)
    drift = pin.getFrameAcceleration(model, data, foot_frame, _LOCAL).vector  # J_a q̈ + J̇ v with v̇_b = 0
    a[:6] = -ad @ drift
    tau = pin.rnea(model, data, q_full, v, a)
    tau_b = tau[:6]
    # f = J_F,b⁻ᵀ τ_b and τ_a − J_F,aᵀ f = τ_a − (J_F,b⁻¹ J_F,a)ᵀ τ_b
    return tau[6:] - ad_ja.T @ tau_b, (ad.T @ tau_b if with_force else None)


def support_coefficient(t, t_start, t_end, c_start, c_end):
    """Linear fade of the support coefficient c from ``c_start`` (t ≤ t_start) to ``c_end`` (t ≥ t_end)
    (Schwarz & Behnke §5.2: "faded in a linear fashion"). Vectorised over ``t``."""
    t = np.asarray(t, dtype=float)
    span = np.maximum(np.asarray(t_end, float) - np.asarray(t_start, float), 1e-12)
    s = np.clip((t - t_start) / span, 0.0, 1.0)
    return c_start + (np.asarray(c_end, float) - c_start) * s


def blend_support(tau_left: np.ndarray, tau_right: np.ndarray, c_left) -> np.ndarray:
    """Double support: τ = c·τ_left + (1 − c)·τ_right, c ∈ [0, 1] the left foot's support coefficient."""
    c = np.asarray(c_left, dtype=float)
    if np.any((c < 0) | (c > 1)) or not np.all(np.isfinite(c)):
        raise ValueError(f"support coefficient c_left must be in [0, 1], got {c_left}")
    return c * np.asarray(tau_left) + (1.0 - c) * np.asarray(tau_right)


def double_support_torques(
    model: pin.Model,
    data: pin.Data,
    q: np.ndarray,
    dq: np.ndarray,
    ddq: np.ndarray,
    left_frame: int,
    right_frame: int,
    c_left: float,
    q_full: np.ndarray | None = None,
) -> np.ndarray:
    """τ_a with the left foot fixed, with the right foot fixed, blended by ``c_left`` (only the model(s) with a
    non-zero weight are evaluated). ``q_full``: the configuration vector when it is not [identity base; q]
    (continuous joints, see :meth:`~servo_ff.dynamics.robot.Robot.configuration`)."""
    if c_left >= 1.0:
        return support_foot_torques(model, data, q, dq, ddq, left_frame, q_full=q_full, with_force=False)[0]
    if c_left <= 0.0:
        return support_foot_torques(model, data, q, dq, ddq, right_frame, q_full=q_full, with_force=False)[0]
    if q_full is None:
        q_full = floating_configuration(q)
    pin.computeJointJacobians(model, data, q_full)
    both = {"jacobians_ready": True, "q_full": q_full, "with_force": False}
    tau_l = support_foot_torques(model, data, q, dq, ddq, left_frame, **both)[0]
    tau_r = support_foot_torques(model, data, q, dq, ddq, right_frame, **both)[0]
    return c_left * tau_l + (1.0 - c_left) * tau_r  # blend_support without re-validating c
