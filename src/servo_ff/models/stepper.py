"""The simulated servo: Algorithm 1 of seed 004 on arrays shaped (batch, joints).

``step`` advances one time step, ``rollout`` runs a whole goal sequence (T, batch, joints) inside one fused
kernel call. One servo and 4096×20 servos go through the same code; parameters may differ per element
(pass a packed array (batch, joints, N_PACKED)) or be shared (pass one :class:`ActuatorParams`).

Loads: :class:`PendulumLoad` (the 004 test bench: τ_e = −(m + m_arm/2)·g·l·sin θ, θ = 0 hanging down,
J = (m + m_arm/3)·l² + J_m; seed 004 writes τ_e = m·g·l·sin θ with the angle measured from the top) or
:class:`ExternalLoad` (a caller-supplied torque and inertia, e.g. from rigid-body dynamics).
"""

from __future__ import annotations

from typing import Literal, NamedTuple

import numpy as np

from . import kernels
from .friction import applied_friction, friction_budget, stopping_torque
from .loads import GRAVITY, ExternalLoad, PendulumLoad  # noqa: F401 (re-exported)
from .motor import firmware_torque, goal_profile
from .params import N_PACKED, P_ALPHA, P_ARM, P_GVMAX, P_IMAX, P_KT, P_LAW, P_QOFF, P_R, P_VIN, P_VMAX, P_VS, pack
from .stability import max_stable_dt, step_stability_refusal  # noqa: F401 (re-exported)

Backend = Literal["auto", "numba", "numpy"]


class StepResult(NamedTuple):
    theta: np.ndarray  # [rad]
    dtheta: np.ndarray  # [rad/s]
    tau_m: np.ndarray  # motor torque [N·m]
    tau_f: np.ndarray  # applied friction [N·m]
    volts: np.ndarray  # motor voltage [V]


def _finite(name: str, x, shape=None) -> np.ndarray:
    a = np.asarray(x, dtype=np.float64)
    if not np.isfinite(a).all():
        bad = np.argwhere(~np.isfinite(a))
        where = tuple(int(i) for i in bad[0]) if a.ndim else ()
        raise ValueError(f"{name} contains non-finite values (first at index {where}: {a[where] if where else a})")
    if shape is not None:
        try:
            a = np.broadcast_to(a, shape)
        except ValueError:
            raise ValueError(f"{name} has shape {np.shape(x)}, which does not broadcast to {shape}") from None
    return a


def _as_2d_shape(**arrays) -> tuple[tuple[int, ...], tuple[int, int]]:
    try:
        shape = np.broadcast_shapes(*(np.shape(a) for a in arrays.values()))
    except ValueError:
        shapes = ", ".join(f"{k} {np.shape(v)}" for k, v in arrays.items())
        raise ValueError(f"shapes do not broadcast together: {shapes}") from None
    if len(shape) > 2:
        raise ValueError(f"state arrays must be shaped (batch, joints), (joints,) or scalar; got {shape}")
    two = (1,) * (2 - len(shape)) + tuple(shape)
    return shape, (two[0], two[1])


def _load_arrays(load, shape, shape2, n_steps: int | None):
    """gravity amplitude (B,J), tau_ext (B,J) or (T,B,J), load inertia (B,J)."""
    if load is None:
        load = ExternalLoad(inertia=0.0)
    if isinstance(load, PendulumLoad):
        if (
            (np.asarray(load.length) < 0).any()
            or (np.asarray(load.mass) < 0).any()
            or (np.asarray(load.arm_mass) < 0).any()
        ):
            raise ValueError("PendulumLoad: mass, arm_mass and length must be >= 0")
        grav = _finite("load.gravity", load.gravity_torque_amplitude(), shape2)
        inertia = _finite("load.inertia", load.inertia(), shape2)
        tau_ext = np.broadcast_to(0.0, shape2 if n_steps is None else (n_steps, *shape2))
    elif isinstance(load, ExternalLoad):
        grav = np.zeros(shape2)
        inertia = _finite("load.inertia", load.inertia, shape2)
        if n_steps is None:
            tau_ext = _finite("load.tau_ext", load.tau_ext, shape).reshape(shape2)
        else:
            tau_ext = _finite("load.tau_ext", load.tau_ext, (n_steps, *shape)).reshape(n_steps, *shape2)
    else:
        raise TypeError(f"load must be PendulumLoad or ExternalLoad, got {type(load).__name__}")
    if (inertia < 0).any():
        raise ValueError("load.inertia must be >= 0")
    return grav, tau_ext, inertia


def _check_enable(en: np.ndarray) -> np.ndarray:
    if ((en < 0) | (en > 1)).any():
        raise ValueError("enable must be in [0, 1] (1 powered, 0 H-bridge released)")
    return en


def _check_inertia(p: np.ndarray, inertia: np.ndarray) -> None:
    if not (inertia + p[..., P_ARM] > 0).all():
        raise ValueError("load.inertia + armature must be > 0 for every joint (a massless joint has no dynamics)")


def _packed(params, shape2) -> np.ndarray:
    p = pack(params)
    if p.shape[-1] != N_PACKED:
        raise ValueError(f"params: expected packed length {N_PACKED}, got {p.shape}")
    limits = [P_IMAX, P_GVMAX]  # +inf allowed: "no limit"
    finite = np.delete(p, limits, axis=-1) if p.ndim else p
    if not np.isfinite(finite).all() or np.isnan(p[..., limits]).any():
        raise ValueError("params contains non-finite values")
    if (np.delete(p, P_QOFF, axis=-1) < 0).any() or not (p[..., [P_KT, P_R, P_VS, P_ALPHA, P_VIN, P_VMAX]] > 0).all():
        raise ValueError(
            "params: packed coefficients must be >= 0 (q_offset excepted) and kt, R, "
            "dtheta_stribeck, alpha, vin, dtheta_max > 0"
        )
    if not np.isin(p[..., P_LAW], (0.0, 1.0)).all():
        raise ValueError("params: the control-law slot must be 0 (voltage) or 1 (current)")
    try:
        return np.broadcast_to(p, (*shape2, N_PACKED))
    except ValueError:
        raise ValueError(f"params shape {p.shape} does not broadcast to {(*shape2, N_PACKED)}") from None


def _pick(backend: Backend) -> str:
    if backend == "auto":
        return "numba" if kernels.HAVE_NUMBA else "numpy"
    if backend not in ("numba", "numpy"):
        raise ValueError(f"backend must be 'auto', 'numba' or 'numpy', got {backend!r}")
    if backend == "numba" and not kernels.HAVE_NUMBA:
        raise RuntimeError("backend='numba' requested but numba is not installed")
    return backend


def _check_dt(dt: float) -> float:
    dt = float(dt)
    if not np.isfinite(dt) or dt <= 0:
        raise ValueError(f"dt must be a positive finite time step in seconds, got {dt}")
    return dt


def step_numpy(p, theta, dtheta, goal, dt, gravity, tau_ext, inertia, enable) -> StepResult:
    """Algorithm 1, one step, as numpy array operations (the fallback and the cross-check of the kernel)."""
    tau_m, volts = firmware_torque(p, theta, dtheta, goal)  # line 1
    tau_m, volts = tau_m * enable, volts * enable
    tau_e = tau_ext - gravity * np.sin(theta + p[..., P_QOFF])  # line 2
    j = inertia + p[..., P_ARM]  # line 3
    budget = friction_budget(p, tau_m, tau_e, dtheta)  # line 4
    tau_f = applied_friction(stopping_torque(j, dt, dtheta, tau_m, tau_e), budget)  # lines 5–6
    ddtheta = (tau_m + tau_e + tau_f) / j  # line 7
    dtheta_next = np.clip(dtheta + ddtheta * dt, -p[..., P_VMAX], p[..., P_VMAX])  # line 8, bam's clamp
    return StepResult(theta + dtheta_next * dt + 0.5 * ddtheta * dt**2, dtheta_next, tau_m, tau_f, volts)  # 9


def step(
    params,
    theta,
    dtheta,
    goal,
    dt: float,
    load: PendulumLoad | ExternalLoad | None = None,
    enable=1.0,
    backend: Backend = "auto",
) -> StepResult:
    """Advance every joint by one step of ``dt`` seconds toward ``goal`` [rad] (Algorithm 1).

    Shapes: ``theta``, ``dtheta``, ``goal`` broadcast to (batch, joints), (joints,) or (); outputs have that
    shape. Non-finite input raises ``ValueError`` naming the argument.
    """
    shape, shape2 = _as_2d_shape(theta=theta, dtheta=dtheta, goal=goal)
    th = _finite("theta", theta, shape).reshape(shape2)
    dth = _finite("dtheta", dtheta, shape).reshape(shape2)
    gl = _finite("goal", goal, shape).reshape(shape2)
    en = _check_enable(_finite("enable", enable, shape2))
    dt = _check_dt(dt)
    p = _packed(params, shape2)
    grav, tau_ext, inertia = _load_arrays(load, shape, shape2, None)
    _check_inertia(p, inertia)
    if _pick(backend) == "numpy":
        res = step_numpy(p, th, dth, gl, dt, grav, tau_ext, inertia, en)
    else:
        out = [np.empty(shape2) for _ in range(5)]
        with _threads(th.size):
            kernels.step_batch(th, dth, gl, dt, p, grav, tau_ext, inertia, en, *out)
        res = StepResult(*out)
    return StepResult(*(np.asarray(a).reshape(shape) for a in res))


def steps(
    params,
    theta,
    dtheta,
    goal,
    dt: float,
    n_steps: int,
    load: PendulumLoad | ExternalLoad | None = None,
    enable=1.0,
    backend: Backend = "auto",
    goal_rate=None,
    target=None,
    load_of=None,
) -> tuple[StepResult, np.ndarray]:
    """``n_steps`` calls of :func:`step` with the inputs checked once: (the last step's result, the internal
    target). Joints (J,) only. ``goal_rate`` [rad/s] slews an internal ``target`` toward ``goal`` each step
    (the firmware's goal-velocity limit, ``motor.goal_slew``); ``load_of(theta)`` re-evaluates a
    configuration-dependent load before each step (else ``load`` holds). A state going non-finite raises
    ``ValueError`` after the batch (no step checks its input)."""
    from .motor import goal_slew

    th = _finite("theta", theta).reshape(-1)
    shape, shape2 = (th.size,), (1, th.size)
    dth = _finite("dtheta", dtheta, shape).reshape(shape2)
    gl = _finite("goal", goal, shape)
    tgt = gl.copy() if target is None else _finite("target", target, shape).copy()
    en = _check_enable(_finite("enable", enable, shape2))
    dt = _check_dt(dt)
    p = _packed(params, shape2)
    rate = None if goal_rate is None else np.broadcast_to(np.asarray(goal_rate, dtype=np.float64), shape)

    def load_arrays(th_now):
        arrays = _load_arrays(load if load_of is None else load_of(th_now), shape, shape2, None)
        _check_inertia(p, arrays[2])
        return arrays

    grav, tau_ext, inertia = load_arrays(th)
    numpy_path = _pick(backend) == "numpy"
    if not numpy_path and load_of is None and int(n_steps) > 0:  # one compiled call for all the steps
        fixed = StaticInputs(*(np.ascontiguousarray(a, dtype=np.float64) for a in (p, grav, tau_ext, inertia)))
        return steps_static(fixed, th, dth.reshape(shape), gl, tgt, en.reshape(shape), dt, int(n_steps), rate)
    th = th.reshape(shape2).copy()
    out = [np.empty(shape2) for _ in range(5)]
    looped = int(n_steps)
    if looped:  # a configuration-dependent load, or the numpy backend: step by step
        with _threads(th.size):
            for k in range(looped):
                if rate is not None:
                    tgt = goal_slew(tgt, gl, rate, dt)
                if load_of is not None and k:
                    grav, tau_ext, inertia = load_arrays(out[0].reshape(shape))
                if numpy_path:
                    res = step_numpy(p, th, dth, tgt.reshape(shape2), dt, grav, tau_ext, inertia, en)
                    out = [np.asarray(a, dtype=np.float64).reshape(shape2) for a in res]
                else:
                    kernels.step_batch(th, dth, tgt.reshape(shape2), dt, p, grav, tau_ext, inertia, en, *out)
                th, dth = out[0].copy(), out[1].copy()
    res = StepResult(*(np.asarray(a).reshape(shape) for a in out))
    if not (np.isfinite(res.theta).all() and np.isfinite(res.dtheta).all()):
        raise ValueError(f"the state went non-finite within {n_steps} steps of {dt:g} s (theta {res.theta})")
    return res, tgt


class StaticInputs(NamedTuple):
    """What :func:`steps` checks once per call, checked once for many calls (:func:`static_inputs`): the packed
    parameter rows (1, J, N_PACKED) and a static load's gravity amplitude, external torque and inertia (1, J)."""

    packed: np.ndarray
    gravity: np.ndarray
    tau_ext: np.ndarray
    inertia: np.ndarray


def static_inputs(params, load: PendulumLoad | ExternalLoad | None, n: int) -> StaticInputs:
    """The parameter rows and a static (θ-independent) load of ``n`` joints, checked as :func:`steps` checks
    them (ValueError naming what is wrong), for :func:`steps_static`."""
    shape, shape2 = (n,), (1, n)
    p = np.ascontiguousarray(_packed(params, shape2))
    grav, tau_ext, inertia = _load_arrays(load, shape, shape2, None)
    _check_inertia(p, inertia)
    return StaticInputs(p, *(np.ascontiguousarray(a, dtype=np.float64) for a in (grav, tau_ext, inertia)))


def steps_static(
    fixed: StaticInputs,
    theta: np.ndarray,
    dtheta: np.ndarray,
    goal: np.ndarray,
    target: np.ndarray,
    enable: np.ndarray,
    dt: float,
    n_steps: int,
    goal_rate: np.ndarray | None = None,
) -> tuple[StepResult, np.ndarray]:
    """:func:`steps` with a static load on the compiled kernel, the parameter rows and load checked beforehand
    (:func:`static_inputs`): one fused call of ``n_steps`` steps; only the state, goal and enable (J,) are
    checked here (a sim period costs the kernel, not the checks). Returns (the last step, the internal target)."""
    n = fixed.packed.shape[1]
    th = np.array(theta, dtype=np.float64).reshape(1, n)
    dth = np.array(dtheta, dtype=np.float64).reshape(1, n)
    gl = np.ascontiguousarray(goal, dtype=np.float64).reshape(n)
    tgt = np.array(target, dtype=np.float64).reshape(n)
    en = np.ascontiguousarray(enable, dtype=np.float64).reshape(1, n)
    if not (np.isfinite(th).all() and np.isfinite(dth).all() and np.isfinite(gl).all() and np.isfinite(tgt).all()):
        raise ValueError(f"theta, dtheta, goal and target must be finite (theta {th[0]}, goal {gl})")
    _check_enable(en)
    dt = _check_dt(dt)
    if goal_rate is None:
        rates, toward = np.full(n, np.inf), tgt.copy()  # no slew: the target holds
    else:
        rates, toward = np.ascontiguousarray(goal_rate, dtype=np.float64).reshape(n), gl
    out = [np.empty((1, n)) for _ in range(5)]
    kernels.steps_joints(int(n_steps), th, dth, toward, tgt, rates, dt, fixed.packed, *fixed[1:], en, *out)
    res = StepResult(*(a.reshape(n) for a in out))
    if not (np.isfinite(res.theta).all() and np.isfinite(res.dtheta).all()):
        raise ValueError(f"the state went non-finite within {n_steps} steps of {dt:g} s (theta {res.theta})")
    return res, tgt


SIMD_CHUNK = 1024  # elements per vectorised block (fits L1/L2 with its scratch arrays)
PARALLEL_MIN_ELEMENTS = 2 * SIMD_CHUNK  # below this a thread hand-off costs more than it saves


class _threads:
    """Run a kernel on one thread for small problems (waking the pool costs ~0.1–4 ms on a busy machine) and
    with dynamic scheduling otherwise (a core shared with another process does not stall the other)."""

    def __init__(self, elements: int):
        self.serial = elements < PARALLEL_MIN_ELEMENTS

    def __enter__(self):
        import numba

        self.saved = numba.get_num_threads(), numba.get_parallel_chunksize()
        if self.serial:
            numba.set_num_threads(1)
        else:
            numba.set_parallel_chunksize(1)
        return self

    def __exit__(self, *exc):
        import numba

        numba.set_num_threads(self.saved[0])
        numba.set_parallel_chunksize(self.saved[1])
        return False


def _time_rows(a: np.ndarray, n: int) -> tuple[np.ndarray, int]:
    """(T, B, J) array → ((T or 1), N) C-contiguous rows and the row step (0 if constant in time)."""
    if a.strides[0] == 0:
        return np.ascontiguousarray(a[:1].reshape(1, n)), 0
    return np.ascontiguousarray(a.reshape(a.shape[0], n)), 1


def _rollout_simd(p, th, dth, gl, dt, grav, tau_ext, inertia, en, out) -> None:
    n_steps, nb, nj = gl.shape
    n = nb * nj
    soa = np.ascontiguousarray(np.moveaxis(p, -1, 0).reshape(N_PACKED, n))
    ext, ext_step = _time_rows(tau_ext, n)
    ena, en_step = _time_rows(en, n)
    th_io = np.array(th, dtype=np.float64).reshape(n)
    dth_io = np.array(dth, dtype=np.float64).reshape(n)
    flat = [o.reshape(o.shape[0], n) if o.size else np.empty((0, 0)) for o in out]
    with _threads(n):
        kernels.rollout_simd(
            th_io,
            dth_io,
            np.ascontiguousarray(gl.reshape(n_steps, n)),
            dt,
            soa,
            np.ascontiguousarray(grav.reshape(n)),
            ext,
            ext_step,
            np.ascontiguousarray(inertia.reshape(n)),
            ena,
            en_step,
            *flat,
            SIMD_CHUNK,
        )


def rollout(
    params,
    theta0,
    dtheta0,
    goals,
    dt: float,
    load: PendulumLoad | ExternalLoad | None = None,
    enable=1.0,
    backend: Backend = "auto",
    positions_only: bool = False,
    goal_start=None,
) -> StepResult:
    """Run Algorithm 1 over a goal sequence ``goals`` shaped (T, batch, joints) / (T, joints) / (T,).

    Returns arrays shaped like ``goals``: ``theta[k]``, ``dtheta[k]`` are the state *before* goal k is applied
    (bam's log convention: recorded position k vs goal k), ``tau_m[k]``, ``tau_f[k]``, ``volts[k]`` the
    torques/voltage during step k. ``enable`` broadcasts to (T, batch, joints); 0 releases the H-bridge.
    ``positions_only=True`` records θ only (the other fields are empty arrays): what identification needs,
    with a fifth of the memory traffic. A firmware goal-velocity limit (Feetech STS) moves the internal
    target from ``goal_start`` (default ``theta0``; bam starts it at 0) toward the goals
    (:func:`~servo_ff.models.motor.goal_profile`).
    """
    g = np.asarray(goals, dtype=np.float64)
    if g.ndim < 1 or g.shape[0] == 0:
        raise ValueError(f"goals must have a leading time axis with at least one step, got shape {g.shape}")
    n_steps = g.shape[0]
    shape, shape2 = _as_2d_shape(theta0=theta0, dtheta0=dtheta0, goals=g[0])
    gl = _finite("goals", g, (n_steps, *shape)).reshape(n_steps, *shape2)
    th = _finite("theta0", theta0, shape).reshape(shape2)
    dth = _finite("dtheta0", dtheta0, shape).reshape(shape2)
    en_in = _check_enable(np.asarray(enable, dtype=np.float64))  # on the input, not its broadcast
    if en_in.ndim >= 1 and en_in.shape[0] == n_steps and en_in.ndim == len(shape) + 1:
        en = _finite("enable", en_in, (n_steps, *shape)).reshape(n_steps, *shape2)
    else:
        en = _finite("enable", en_in, (n_steps, *shape2))
    dt = _check_dt(dt)
    p = _packed(params, shape2)
    grav, tau_ext, inertia = _load_arrays(load, shape, shape2, n_steps)
    _check_inertia(p, inertia)
    gl = goal_profile(
        gl, p[..., P_GVMAX], dt, th if goal_start is None else _finite("goal_start", goal_start, shape).reshape(shape2)
    )
    out = [np.empty((n_steps, *shape2))] + [
        np.empty((0, 0, 0) if positions_only else (n_steps, *shape2)) for _ in range(4)
    ]
    if _pick(backend) == "numpy":
        if positions_only:
            out = [np.empty((n_steps, *shape2)) for _ in range(5)]
        for k in range(n_steps):
            out[0][k], out[1][k] = th, dth
            th, dth, out[2][k], out[3][k], out[4][k] = step_numpy(
                p, th, dth, gl[k], dt, grav, tau_ext[k], inertia, en[k]
            )
    else:
        _rollout_simd(p, th, dth, gl, dt, grav, tau_ext, inertia, en, out)
    if positions_only:
        return StepResult(out[0].reshape(n_steps, *shape), *(np.empty((0,)) for _ in range(4)))
    return StepResult(*(a.reshape(n_steps, *shape) for a in out))


def final_state(
    params, result: StepResult, goal_last, dt: float, load=None, enable=1.0, backend: Backend = "auto"
) -> StepResult:
    """State after the last goal of a rollout (one more step from ``result[-1]``)."""
    return step(params, result.theta[-1], result.dtheta[-1], goal_last, dt, load=load, enable=enable, backend=backend)


__all__ = [
    "GRAVITY",
    "PendulumLoad",
    "ExternalLoad",
    "StepResult",
    "step",
    "rollout",
    "step_numpy",
    "final_state",
    "max_stable_dt",
    "step_stability_refusal",
]
