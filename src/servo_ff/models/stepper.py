"""The simulated servo: Algorithm 1 of Duclusaud et al. (Extended Friction Models) on arrays shaped (batch, joints).

``step`` advances one time step, ``rollout`` runs a whole goal sequence (T, batch, joints) inside one fused
kernel call. One servo and 4096×20 servos go through the same code; parameters may differ per element
(pass a packed array (batch, joints, N_PACKED)) or be shared (pass one :class:`ActuatorParams`).

Loads: :class:`PendulumLoad` (the 004 test bench: τ_e = −(m + m_arm/2)·g·l·sin θ, θ = 0 hanging down,
J = (m + m_arm/3)·l² + J_m; Duclusaud et al. writes τ_e = m·g·l·sin θ with the angle measured from the top) or
:class:`ExternalLoad` (a caller-supplied torque and inertia, e.g. from rigid-body dynamics).
"""

from __future__ import annotations

from typing import Literal, NamedTuple

import numpy as np

from . import kernels, slots
from .friction import applied_friction, friction_budget, stopping_torque
from .loads import GRAVITY, ExternalLoad, PendulumLoad  # noqa: F401 (re-exported)
from .motor import firmware_torque, goal_profile
from .params import N_PACKED
from .stability import max_stable_dt, step_stability_refusal  # noqa: F401 (re-exported)
from .step_inputs import (
    StaticInputs,
    broadcast_2d,
    check_dt,
    check_enable,
    check_inertia,
    finite_array,
    load_arrays,
    packed_rows,
    static_inputs,
)

Backend = Literal["auto", "numba", "numpy"]


class StepResult(NamedTuple):
    theta: np.ndarray  # [rad]
    dtheta: np.ndarray  # [rad/s]
    tau_m: np.ndarray  # motor torque [N·m]
    tau_f: np.ndarray  # applied friction [N·m]
    volts: np.ndarray  # motor voltage [V]


def _pick(backend: Backend) -> str:
    if backend == "auto":
        return "numba" if kernels.HAVE_NUMBA else "numpy"
    if backend not in ("numba", "numpy"):
        raise ValueError(f"backend must be 'auto', 'numba' or 'numpy', got {backend!r}")
    if backend == "numba" and not kernels.HAVE_NUMBA:
        raise RuntimeError("backend='numba' requested but numba is not installed")
    return backend


def step_numpy(p, theta, dtheta, goal, dt, gravity, tau_ext, inertia, enable) -> StepResult:
    """Algorithm 1, one step, as numpy array operations (the fallback and the cross-check of the kernel)."""
    tau_m, volts = firmware_torque(p, theta, dtheta, goal)  # line 1
    tau_m, volts = tau_m * enable, volts * enable
    tau_e = tau_ext - gravity * np.sin(theta + p[..., slots.QOFF])  # line 2
    j = inertia + p[..., slots.ARM]  # line 3
    budget = friction_budget(p, tau_m, tau_e, dtheta)  # line 4
    tau_f = applied_friction(stopping_torque(j, dt, dtheta, tau_m, tau_e), budget)  # lines 5–6
    ddtheta = (tau_m + tau_e + tau_f) / j  # line 7
    dtheta_next = np.clip(dtheta + ddtheta * dt, -p[..., slots.VMAX], p[..., slots.VMAX])  # line 8, bam's clamp
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
    shape, shape2 = broadcast_2d(theta=theta, dtheta=dtheta, goal=goal)
    th = finite_array("theta", theta, shape).reshape(shape2)
    dth = finite_array("dtheta", dtheta, shape).reshape(shape2)
    gl = finite_array("goal", goal, shape).reshape(shape2)
    en = check_enable(finite_array("enable", enable, shape2))
    dt = check_dt(dt)
    p = packed_rows(params, shape2)
    grav, tau_ext, inertia = load_arrays(load, shape, shape2, None)
    check_inertia(p, inertia)
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

    th = finite_array("theta", theta).reshape(-1)
    shape, shape2 = (th.size,), (1, th.size)
    dth = finite_array("dtheta", dtheta, shape).reshape(shape2)
    gl = finite_array("goal", goal, shape)
    tgt = gl.copy() if target is None else finite_array("target", target, shape).copy()
    en = check_enable(finite_array("enable", enable, shape2))
    dt = check_dt(dt)
    rate = None if goal_rate is None else np.broadcast_to(np.asarray(goal_rate, dtype=np.float64), shape)
    numpy_path = _pick(backend) == "numpy"
    if not numpy_path and load_of is None and int(n_steps) > 0:  # one compiled call for all the steps
        fixed = static_inputs(params, load, th.size)
        return _steps_compiled(fixed, th.reshape(shape2), dth, gl, tgt, en, dt, int(n_steps), rate)
    p = packed_rows(params, shape2)

    def load_at(th_now):
        arrays = load_arrays(load if load_of is None else load_of(th_now), shape, shape2, None)
        check_inertia(p, arrays[2])
        return arrays

    grav, tau_ext, inertia = load_at(th)
    th = th.reshape(shape2).copy()
    out = [np.empty(shape2) for _ in range(5)]
    looped = int(n_steps)
    if looped:  # a configuration-dependent load, or the numpy backend: step by step
        with _threads(th.size):
            for k in range(looped):
                if rate is not None:
                    tgt = goal_slew(tgt, gl, rate, dt)
                if load_of is not None and k:
                    grav, tau_ext, inertia = load_at(out[0].reshape(shape))
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
    check_enable(en)
    return _steps_compiled(fixed, th, dth, gl, tgt, en, check_dt(dt), int(n_steps), goal_rate)


def _steps_compiled(fixed: StaticInputs, th, dth, gl, tgt, en, dt: float, n_steps: int, goal_rate):
    """The fused kernel call behind :func:`steps` and :func:`steps_static`, on checked (1, J) state / enable and
    (J,) goal / target arrays (``tgt``, the caller's own copy, is written)."""
    n = fixed.packed.shape[1]
    gl = np.ascontiguousarray(gl, dtype=np.float64).reshape(n)
    tgt = np.ascontiguousarray(tgt, dtype=np.float64).reshape(n)
    if goal_rate is None:
        rates, toward = np.full(n, np.inf), tgt.copy()  # no slew: the target holds
    else:
        rates, toward = np.ascontiguousarray(goal_rate, dtype=np.float64).reshape(n), gl
    out = [np.empty((1, n)) for _ in range(5)]
    kernels.steps_joints(n_steps, th, dth, toward, tgt, rates, dt, fixed.packed, *fixed[1:], en, *out)
    res = StepResult(*(a.reshape(n) for a in out))
    if not (np.isfinite(res.theta).all() and np.isfinite(res.dtheta).all()):
        raise ValueError(f"the state went non-finite within {n_steps} steps of {dt:g} s (theta {res.theta})")
    return res, tgt


SIMD_CHUNK = kernels.SIMD_CHUNK  # elements per vectorised block (its rows fit L1/L2)
PARALLEL_MIN_ELEMENTS = 2048  # below this a thread hand-off costs more than it saves
#: outputs at least this large (all five, bytes) are written by streaming stores, past the caches (twice the 32 MiB
#: last-level cache of the development machine: smaller ones are left in it for the caller)
STREAM_MIN_BYTES = 64 << 20


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


def _rollout_simd(p, th, dth, gl, dt, grav, tau_ext, inertia, en, out) -> bool:
    """The fused kernel over (T, B, J) into ``out``; True if a goal was not finite (checked as the kernel reads
    them)."""
    n_steps, nb, nj = gl.shape
    n = nb * nj
    shared = p.strides[0] == 0 and p.strides[1] == 0  # one parameter row for every element
    soa = np.ascontiguousarray(p[0, 0][:, None]) if shared else np.ascontiguousarray(p.reshape(n, N_PACKED).T)
    ext, ext_step = _time_rows(tau_ext, n)
    nonfinite = np.zeros((n + SIMD_CHUNK - 1) // SIMD_CHUNK, dtype=np.bool_)  # per chunk: a goal was not finite
    ena, en_step = _time_rows(en, n)
    args = (
        np.array(th, dtype=np.float64).reshape(n),
        np.array(dth, dtype=np.float64).reshape(n),
        np.ascontiguousarray(gl.reshape(n_steps, n)),
        dt,
        soa,
        np.ascontiguousarray(grav.reshape(n)),
        ext,
        ext_step,
        np.ascontiguousarray(inertia.reshape(n)),
        ena,
        en_step,
        *(o.reshape(o.shape[0], n) if o.size else np.empty((0, 0)) for o in out),
        SIMD_CHUNK,
        sum(o.nbytes for o in out) >= STREAM_MIN_BYTES,
        nonfinite,
    )
    if n < PARALLEL_MIN_ELEMENTS:  # on this thread: no pool hand-off, no thread-count switching
        kernels.rollout_serial(*args)
    else:
        with _threads(n):
            kernels.rollout_simd(*args)
    return bool(nonfinite.any())


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
    out: StepResult | None = None,
) -> StepResult:
    """Run Algorithm 1 over a goal sequence ``goals`` shaped (T, batch, joints) / (T, joints) / (T,).

    Returns arrays shaped like ``goals``: ``theta[k]``, ``dtheta[k]`` are the state *before* goal k is applied
    (bam's log convention: recorded position k vs goal k), ``tau_m[k]``, ``tau_f[k]``, ``volts[k]`` the
    torques/voltage during step k. ``enable`` broadcasts to (T, batch, joints); 0 releases the H-bridge.
    ``positions_only=True`` records θ only (the other fields are empty arrays): what identification needs,
    with a fifth of the memory traffic. A firmware goal-velocity limit (Feetech STS) moves the internal
    target from ``goal_start`` (default ``theta0``; bam starts it at 0) toward the goals
    (:func:`~servo_ff.models.motor.goal_profile`). ``out``: the arrays to write into (a StepResult of C-contiguous
    float64 arrays shaped like ``goals``; with ``positions_only`` only ``theta`` is used), returned; a caller
    rolling out many times saves allocating and first touching fresh outputs (up to half of a 4096 × 20 rollout's
    time on a loaded machine). A non-finite goal raises ValueError naming its index; the compiled path finds it as
    the kernel reads the goals, so ``out`` has then been written.
    """
    g = np.asarray(goals, dtype=np.float64)
    if g.ndim < 1 or g.shape[0] == 0:
        raise ValueError(f"goals must have a leading time axis with at least one step, got shape {g.shape}")
    n_steps = g.shape[0]
    shape, shape2 = broadcast_2d(theta0=theta0, dtheta0=dtheta0, goals=g[0])
    fused = _pick(backend) == "numba"  # the kernel checks the goals as it reads them (one pass over them less)
    gl = (np.broadcast_to(g, (n_steps, *shape)) if fused else finite_array("goals", g, (n_steps, *shape))).reshape(
        n_steps, *shape2
    )
    th = finite_array("theta0", theta0, shape).reshape(shape2)
    dth = finite_array("dtheta0", dtheta0, shape).reshape(shape2)
    en_in = check_enable(np.asarray(enable, dtype=np.float64))  # on the input, not its broadcast
    if en_in.ndim >= 1 and en_in.shape[0] == n_steps and en_in.ndim == len(shape) + 1:
        en = finite_array("enable", en_in, (n_steps, *shape)).reshape(n_steps, *shape2)
    else:
        en = finite_array("enable", en_in, (n_steps, *shape2))
    dt = check_dt(dt)
    p = packed_rows(params, shape2)
    grav, tau_ext, inertia = load_arrays(load, shape, shape2, n_steps)
    check_inertia(p, inertia)
    if fused and np.isfinite(p[..., slots.GVMAX]).any():  # a slewed target is computed from them here: check first
        finite_array("goals", g)
    gl = goal_profile(
        gl,
        p[..., slots.GVMAX],
        dt,
        th if goal_start is None else finite_array("goal_start", goal_start, shape).reshape(shape2),
    )
    given = _outputs(out, (n_steps, *shape), positions_only)
    out = [np.empty((n_steps, *shape2)) if a is None else a.reshape(n_steps, *shape2) for a in given]
    if not fused:
        if positions_only:
            out += [np.empty((n_steps, *shape2)) for _ in range(4)]
        for k in range(n_steps):
            out[0][k], out[1][k] = th, dth
            th, dth, out[2][k], out[3][k], out[4][k] = step_numpy(
                p, th, dth, gl[k], dt, grav, tau_ext[k], inertia, en[k]
            )
    else:
        if _rollout_simd(p, th, dth, gl, dt, grav, tau_ext, inertia, en, out + [np.empty((0, 0, 0))] * (5 - len(out))):
            finite_array("goals", g)  # raises, naming the first non-finite goal
    if positions_only:
        return StepResult(out[0].reshape(n_steps, *shape), *(np.empty((0,)) for _ in range(4)))
    return StepResult(*(a.reshape(n_steps, *shape) for a in out))


def _outputs(out: StepResult | None, shape: tuple[int, ...], positions_only: bool) -> list[np.ndarray | None]:
    """The output arrays of a rollout (five; positions_only: θ alone): the caller's, checked (C-contiguous writable
    float64 of ``shape``, none overlapping another; ValueError naming the field), or None (allocate)."""
    if out is None:
        return [None] * (1 if positions_only else 5)
    given = list(out[:1] if positions_only else out)
    for name, a in zip(StepResult._fields, given):
        if not (isinstance(a, np.ndarray) and a.dtype == np.float64 and a.flags.c_contiguous and a.flags.writeable):
            raise ValueError(f"out.{name} must be a writable C-contiguous float64 array")
        if a.shape != shape:
            raise ValueError(f"out.{name} has shape {a.shape}, the rollout's outputs are {shape}")
    if any(np.may_share_memory(a, b) for k, a in enumerate(given) for b in given[k + 1 :]):
        raise ValueError("out: the output arrays must not overlap")
    return given


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
