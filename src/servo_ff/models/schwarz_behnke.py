"""The linear motor + Stribeck friction model of Schwarz & Behnke, vectorised.

U = α0·τ_o + α1·q̇ + α2·sgn(q̇)(1 − β) + α3·sgn(q̇)β [+ α4·q̈]            (Eq. 13, 14)
β = exp(−|q̇ / q̇_s|^δ)                                                   (Eq. 9)
q_d = q + (α̂0·τ_o + α̂1·q̇ + α̂2·sgn(q̇)(1 − β) + α̂3·sgn(q̇)β [+ α̂4·q̈]) / (k_P·U_bat)   (Eq. 19)

τ_o is the output torque the load needs [N·m] (inverse dynamics), q̇ [rad/s], q̈ [rad/s²], U [V], k_P the
servo's P gain in register units, U_bat the measured supply voltage [V]. ``alpha`` is an array (..., 4) or
(..., 5) broadcasting against the joint arrays.
"""

from __future__ import annotations

import numpy as np

from .friction_models import MODELS
from .params import ActuatorParams, ParameterError

#: Defaults when q̇_s and δ are not identified: NimbRo-OP's q̇_s = 0.1 rad/s, δ = 1 (Schwarz & Behnke §3.2).
DEFAULT_DQ_S = 0.1
DEFAULT_DELTA = 1.0


def stribeck_beta(
    dq: np.ndarray, dq_s: float | np.ndarray = DEFAULT_DQ_S, delta: float | np.ndarray = DEFAULT_DELTA
) -> np.ndarray:
    """β = exp(−|q̇/q̇_s|^δ) (Eq. 9): 1 at rest (static friction), → 0 when moving (Coulomb)."""
    if not (np.all(np.asarray(dq_s) > 0) and np.all(np.asarray(delta) > 0)):
        raise ValueError(f"stribeck_beta: dq_s and delta must be > 0, got dq_s={dq_s}, delta={delta}")
    return np.exp(-(np.abs(np.asarray(dq, dtype=float) / dq_s) ** delta))


def motor_regressors(
    tau: np.ndarray,
    dq: np.ndarray,
    ddq: np.ndarray | None = None,
    dq_s: float | np.ndarray = DEFAULT_DQ_S,
    delta: float | np.ndarray = DEFAULT_DELTA,
    with_inertia: bool = False,
) -> np.ndarray:
    """Rows of A in Eq. 27: [τ_o, q̇, sgn(q̇)(1−β), sgn(q̇)β (, q̈ for Eq. 14)] stacked on a last axis."""
    tau, dq = np.broadcast_arrays(np.asarray(tau, dtype=float), np.asarray(dq, dtype=float))
    beta = stribeck_beta(dq, dq_s, delta)
    s = np.sign(dq)
    cols = [tau, dq, s * (1.0 - beta), s * beta]
    if with_inertia:
        if ddq is None:
            raise ValueError("ddq is required when with_inertia=True (α4 term of Eq. 14)")
        cols.append(np.broadcast_to(np.asarray(ddq, dtype=float), tau.shape))
    return np.stack(cols, axis=-1)


def motor_voltage(
    alpha: np.ndarray,
    tau: np.ndarray,
    dq: np.ndarray,
    ddq: np.ndarray | None = None,
    dq_s: float | np.ndarray = DEFAULT_DQ_S,
    delta: float | np.ndarray = DEFAULT_DELTA,
) -> np.ndarray:
    """U from α (Eq. 13; Eq. 14 when ``alpha`` has 5 entries) [V, or register-scaled with α̂]."""
    alpha = np.asarray(alpha, dtype=float)
    if alpha.shape[-1] not in (4, 5):
        raise ValueError(f"alpha must end with 4 (α0..α3) or 5 (α0..α4) coefficients, got shape {alpha.shape}")
    x = motor_regressors(tau, dq, ddq, dq_s, delta, with_inertia=alpha.shape[-1] == 5)
    return np.einsum("...k,...k->...", x, alpha)


def goal_position_from_torque(
    q: np.ndarray,
    tau: np.ndarray,
    dq: np.ndarray,
    ddq: np.ndarray | None,
    alpha: np.ndarray,
    kp: float | np.ndarray,
    u_bat: float | np.ndarray,
    dq_s: float | np.ndarray = DEFAULT_DQ_S,
    delta: float | np.ndarray = DEFAULT_DELTA,
) -> np.ndarray:
    """Feed-forward goal position q_d [rad] for a P-controlled servo (Eq. 19).

    The friction terms carry sgn(q̇) as in Eq. 13; the printed Eq. 18–19 drop it, which would apply
    Coulomb compensation against the motion half of the time.

    ``q`` is the desired position, ``tau`` the torque the desired motion needs, ``dq``/``ddq`` from the
    desired trajectory. Raises ``ValueError`` naming the argument on non-finite input or k_P·U_bat ≤ 0.
    """
    alpha = np.asarray(alpha, dtype=float)
    n_alpha = alpha.shape[-1] if alpha.ndim else 0
    if n_alpha not in (4, 5):
        raise ValueError(f"alpha must end with 4 (α0..α3) or 5 (α0..α4) coefficients, got shape {alpha.shape}")
    gain = np.asarray(kp, dtype=float) * u_bat
    dq = np.asarray(dq, dtype=float)
    s = np.sign(dq)
    beta = np.exp(-(np.abs(dq / dq_s) ** delta))  # Eq. 9
    u = alpha[..., 0] * tau + alpha[..., 1] * dq + s * (alpha[..., 2] * (1.0 - beta) + alpha[..., 3] * beta)
    if n_alpha == 5:
        if ddq is None:
            raise ValueError("goal_position_from_torque: ddq is required with 5 coefficients (α4 of Eq. 14)")
        u = u + alpha[..., 4] * ddq
    qd = q + u / gain
    if not np.isfinite(qd).all() or not (np.asarray(gain) > 0).all():  # diagnose only on the slow path
        _explain_bad_input(q=q, tau=tau, dq=dq, ddq=ddq, alpha=alpha, kp=kp, u_bat=u_bat, dq_s=dq_s, delta=delta)
    return qd


def _explain_bad_input(**args) -> None:
    for name, v in args.items():
        if v is not None and not np.isfinite(np.asarray(v, dtype=float)).all():
            raise ValueError(f"goal_position_from_torque: {name} contains non-finite values")
    if not (np.asarray(args["kp"], dtype=float) * np.asarray(args["u_bat"], dtype=float) > 0).all():
        raise ValueError("goal_position_from_torque: kp·u_bat must be > 0")
    if not (np.all(np.asarray(args["dq_s"]) > 0) and np.all(np.asarray(args["delta"]) > 0)):
        raise ValueError("goal_position_from_torque: dq_s and delta must be > 0")
    raise ValueError("goal_position_from_torque: non-finite result")


def alpha_hat_from_actuator(params: ActuatorParams, with_inertia: bool = False) -> np.ndarray:
    """α̂ of Eq. 19 implied by a Duclusaud et al. parameter set under its firmware voltage law.

    From τ_m = kt/R·U − kt²/R·q̇ (Duclusaud et al. Eq. 13) and τ_m = τ_o + friction: U = R/kt·τ_o + (kt + R/kt·K_v)·q̇
    + R/kt·K_c·sgn(q̇)(1−β) + R/kt·(K_c + K_c^s)·sgn(q̇)β; the firmware maps U = U_bat·error_gain·k_P·(q_d − q),
    so k_ctrl = error_gain and α̂ = α / error_gain (Eq. 16–19). Load-dependent friction (M3–M6) has no term in
    the 002 model and is left out (a warning says so); the armature gives α4 = R/kt·J_m. Use these α̂ with
    the Stribeck shape of the same parameter set, :func:`stribeck_shape_from_actuator`.
    """
    if params.firmware.control != "voltage":
        raise ParameterError(
            f"{params.actuator}: the α̂ of Schwarz & Behnke Eq. 19 assumes a voltage firmware law "
            f"(U = U_bat·error_gain·k_P·(q_d − q)); this one is {params.firmware.control}-based: give alpha.<joint> "
            "yourself or a voltage law (firmware)"
        )
    if MODELS[params.model].load_dependent:
        import warnings

        warnings.warn(
            f"alpha_hat_from_actuator: model {params.model}'s load-dependent friction has no term in "
            "Schwarz & Behnke's model and is left out",
            stacklevel=2,
        )
    f = params.friction
    r_kt = params.R / params.kt
    kc = f["friction_base"]
    alpha = [r_kt, params.kt + r_kt * f["friction_viscous"], r_kt * kc, r_kt * (kc + f.get("friction_stribeck", 0.0))]
    if with_inertia:
        alpha.append(r_kt * params.armature)
    return np.asarray(alpha) / params.firmware.error_gain


def stribeck_shape_from_actuator(params: ActuatorParams) -> tuple[float, float]:
    """(q̇_s, δ) of Eq. 9 matching a Duclusaud et al. parameter set: its ``dtheta_stribeck`` and ``alpha`` (M2, M4–M6),
    or Schwarz & Behnke's defaults for models without a Stribeck term."""
    f = params.friction
    return float(f.get("dtheta_stribeck", DEFAULT_DQ_S)), float(f.get("alpha", DEFAULT_DELTA))
