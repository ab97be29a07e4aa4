"""Nonlinear datasheet-servo simulation: PID + voltage saturation + encoder quantisation (Maximo et al. §2.4, Santana et
al. §6).

The plant is the linear motor + gearbox of Maximo et al. Eq. 1–8 (b_l = 0) in physical states x = [θ_l, θ̇_l, i]
(or [θ_l, θ̇_l] when L = 0):

    J_eq θ̈_l = NηK_t i − b_m N²η θ̇_l,   L di/dt = u − R i − N θ̇_l / K_ω,

discretised exactly (zero-order hold) at the controller period. The embedded controller runs every period
on the quantised angle Q(θ_l) (``counts_per_rev`` counts/rev, None = ideal sensor) and its voltage is
saturated to ±V_s (000: V_s = 12 V; 001: 5 V). A numba kernel runs the time loop for a batch of references.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy.signal import cont2discrete

from .. import numba_cache
from .datasheet import MotorDatasheet
from .transfer_functions import _nonneg, _positive, equivalent_damping, equivalent_inertia

try:
    import numba

    numba_cache.install()
except ImportError:  # pragma: no cover - numba is a hard dependency of servo_ff, fallback kept for safety
    numba = None


class ServoSimResult(NamedTuple):
    t: np.ndarray  # (T,) [s]
    theta: np.ndarray  # (B, T) output angle [rad] (true, not quantised)
    volts: np.ndarray  # (B, T) motor voltage after saturation [V]
    current: np.ndarray  # (B, T) motor current [A]
    saturated: np.ndarray  # (B, T) bool, voltage limited at this step


def plant_state_space(ds: MotorDatasheet, J_l: float = 0.0, include_inductance: bool = True):
    """(A, B) of the motor + gearbox, input u [V], states [θ_l, θ̇_l, i] (L > 0) or [θ_l, θ̇_l] (L = 0)."""
    Jeq, beq = equivalent_inertia(ds, J_l), equivalent_damping(ds)
    kt_out = ds.N * ds.eta * ds.Kt  # output torque per amp
    emf = ds.N / ds.Kw  # volts per rad/s of the output
    if include_inductance and ds.L > 0:
        A = np.array([[0, 1, 0], [0, -beq / Jeq, kt_out / Jeq], [0, -emf / ds.L, -ds.R / ds.L]])
        B = np.array([0.0, 0.0, 1 / ds.L])
    else:
        A = np.array([[0, 1], [0, -beq / Jeq - kt_out * emf / (ds.R * Jeq)]])
        B = np.array([0.0, kt_out / (ds.R * Jeq)])
    return A, B


def _kernel_py(Ad, Bd, cur_row, cur_u, ref, kp, ki, kd, dt, vs, q, out_theta, out_u, out_i, out_sat):
    nb, nt = ref.shape
    nx = Ad.shape[0]
    for b in range(nb):
        x = np.zeros(nx)
        integ = 0.0
        e_prev = 0.0
        for k in range(nt):
            th = x[0]
            meas = th if q <= 0 else q * math.floor(th / q + 0.5)
            e = ref[b, k] - meas
            if k == 0:
                e_prev = e
            integ += e * dt
            u = kp * e + ki * integ + kd * (e - e_prev) / dt
            e_prev = e
            sat = False
            if u > vs:
                u, sat = vs, True
            elif u < -vs:
                u, sat = -vs, True
            i_now = 0.0
            for j in range(nx):
                i_now += cur_row[j] * x[j]
            i_now += cur_u * u
            out_theta[b, k] = th
            out_u[b, k] = u
            out_i[b, k] = i_now
            out_sat[b, k] = sat
            xn = np.empty(nx)
            for r in range(nx):
                s = Bd[r] * u
                for c in range(nx):
                    s += Ad[r, c] * x[c]
                xn[r] = s
            x = xn


_kernel = numba.njit(cache=True, nogil=True)(_kernel_py) if numba is not None else _kernel_py


def simulate_servo(
    ds: MotorDatasheet,
    reference,
    dt: float,
    *,
    Kp: float,
    Ki: float = 0.0,
    Kd: float = 0.0,
    Vs: float = 12.0,
    J_l: float = 0.0,
    counts_per_rev: int | None = 4096,
    include_inductance: bool = True,
    saturate: bool = True,
) -> ServoSimResult:
    """Simulate the closed-loop servo for reference angles ``reference`` [rad], shape (T,) or (B, T), sampled
    at the controller period ``dt`` [s]; PID gains in SI (V/rad, see ``transfer_functions.mx28_si_gains``).

    ``saturate=False`` and ``counts_per_rev=None`` give the linear model (for comparison with Eq. 30)."""
    ref = np.asarray(reference, dtype=float)
    if ref.ndim == 1:
        ref = ref[None, :]
    if ref.ndim != 2 or ref.shape[1] < 2:
        raise ValueError(f"reference must have shape (T,) or (B, T) with T >= 2, got {np.shape(reference)}")
    if not np.all(np.isfinite(ref)):
        raise ValueError("reference contains NaN/inf")
    dt = _positive("dt", dt)
    Vs = _positive("Vs", Vs)
    kp, ki, kd = _nonneg("Kp", Kp), _nonneg("Ki", Ki), _nonneg("Kd", Kd)
    q = 0.0
    if counts_per_rev is not None:
        q = 2 * math.pi / _positive("counts_per_rev", counts_per_rev)
    A, B = plant_state_space(ds, J_l, include_inductance)
    nx = A.shape[0]
    Ad, Bd, *_ = cont2discrete((A, B[:, None], np.eye(nx), np.zeros((nx, 1))), dt, method="zoh")
    if nx == 3:  # current is a state
        cur_row, cur_u = np.array([0.0, 0.0, 1.0]), 0.0
    else:  # i = (u − N θ̇/K_ω)/R
        cur_row, cur_u = np.array([0.0, -ds.N / (ds.Kw * ds.R)]), 1.0 / ds.R
    nb, nt = ref.shape
    theta, volts, cur = (np.empty((nb, nt)) for _ in range(3))
    sat = np.zeros((nb, nt), dtype=np.bool_)
    _kernel(
        np.ascontiguousarray(Ad),
        np.ascontiguousarray(Bd[:, 0]),
        cur_row,
        cur_u,
        np.ascontiguousarray(ref),
        kp,
        ki,
        kd,
        dt,
        Vs if saturate else np.inf,
        q,
        theta,
        volts,
        cur,
        sat,
    )
    return ServoSimResult(np.arange(nt) * dt, theta, volts, cur, sat)


def cylinder_load_inertia(mass: float, radius: float, distance: float) -> float:
    """J_l = m r²/2 + m d² [kg·m²]: a cylinder on its own axis, offset ``distance`` from the servo axis by
    Steiner's theorem (Santana et al. Eq. 30)."""
    m, r = _positive("mass", mass), _positive("radius", radius)
    return m * r**2 / 2 + m * _nonneg("distance", distance) ** 2
