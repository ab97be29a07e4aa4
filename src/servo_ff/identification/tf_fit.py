"""Continuous-time transfer functions from sampled data: the model container, state-variable filtering and the
plain least-squares (equation-error, LSSVF) estimate.

Model (Wada et al. (R/C Servo Motors) §III): x(t) = B(p)/A(p) u(t), y(t_k) = x(t_k) + w(t_k), with
A(p) = pⁿ + a_{n−1}pⁿ⁻¹ + … + a_0 and B(p) = b_m pᵐ + … + b_0, parameters θ = [a_{n−1} … a_0, b_m … b_0].

State-variable filters F_i(p) = pⁱ / A_f(p) give the filtered time derivatives without differentiating
noisy data; they are applied by exact discretisation (python-control/scipy ``cont2discrete``) and
``scipy.signal.lfilter``: zero-order hold for the input (piecewise constant: PRBS, steps, servo commands)
and first-order hold for the measured output. Data must start at rest (zero initial conditions).

The least-squares estimate (Wada et al. STEP 1; 001 fits Eq. 5 this way with the IV refinement of ``srivc``) solves
y_f⁽ⁿ⁾ = φ_fᵀθ with φ_f = [−y_f⁽ⁿ⁻¹⁾ … −y_f⁽⁰⁾, u_f⁽ᵐ⁾ … u_f⁽⁰⁾]. Its regressor contains the noisy output,
so it is biased when the output is noisy: that is the bias SRIVC removes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import control
import numpy as np
from scipy.signal import cont2discrete, lfilter, ss2tf

from ..errors import ServoFFError


class UnstableModelError(ServoFFError, ValueError):
    """The identified continuous-time model has a pole with non-negative real part."""


@dataclass(frozen=True)
class CTModel:
    """An identified continuous-time transfer function B(s)/A(s) (A monic) with fit statistics.

    ``cov`` is the estimated covariance of θ = [a_{n−1} … a_0, b_m … b_0]; ``noise_var`` σ̃² the variance of
    the simulation residual y − x̂; ``r2t`` = 1 − σ̃²/σ_y² and ``yic`` (Wada et al. STEP 3)."""

    num: np.ndarray  # [b_m … b_0]
    den: np.ndarray  # [1, a_{n−1} … a_0]
    cov: np.ndarray
    noise_var: float
    r2t: float
    yic: float
    method: str
    iterations: int = 1
    converged: bool = True

    @property
    def n(self) -> int:
        return len(self.den) - 1

    @property
    def m(self) -> int:
        return len(self.num) - 1

    @property
    def theta(self) -> np.ndarray:
        return np.concatenate([self.den[1:], self.num])

    @property
    def std(self) -> np.ndarray:
        return np.sqrt(np.clip(np.diag(self.cov), 0, None))

    def tf(self) -> control.TransferFunction:
        return control.tf(self.num, self.den)

    def poles(self) -> np.ndarray:
        return np.roots(self.den)

    def dc_gain(self) -> float:
        return float(self.num[-1] / self.den[-1])

    def simulate(self, u, dt: float) -> np.ndarray:
        """Noise-free output x̂ for input ``u`` held constant between samples."""
        return simulate_ct(self.num, self.den, u, dt)


# --------------------------------------------------------------------------------------------------
# Input checks and filtering
# --------------------------------------------------------------------------------------------------
def min_samples(n: int, m: int) -> int:
    """Minimum record length accepted for orders n/m: 10 samples per estimated parameter, at least 50."""
    return max(50, 10 * (n + m + 1))


def check_io(u, y, dt: float, n: int, m: int) -> tuple[np.ndarray, np.ndarray, float]:
    """Validate sampled input/output data and orders; returns float arrays. Raises ValueError naming the item."""
    if not (isinstance(n, (int, np.integer)) and isinstance(m, (int, np.integer))) or n < 1 or m < 0 or m > n:
        raise ValueError(f"orders must satisfy n >= 1 and 0 <= m <= n, got n={n}, m={m}")
    u = np.asarray(u, dtype=float).reshape(-1)
    y = np.asarray(y, dtype=float).reshape(-1)
    if u.shape != y.shape:
        raise ValueError(f"input u and output y must have the same length, got {u.size} and {y.size}")
    need = min_samples(n, m)
    if u.size < need:
        raise ValueError(f"data too short for orders n={n}, m={m}: {u.size} samples, need at least {need}")
    for name, a in (("input u", u), ("output y", y)):
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{name} contains NaN/inf")
        if np.ptp(a) == 0:
            raise ValueError(f"{name} is constant: no excitation to identify from")
    dt = float(dt)
    if not math.isfinite(dt) or dt <= 0:
        raise ValueError(f"sample time dt must be positive and finite, got {dt}")
    return u, y, dt


def _discretise(num, den, dt: float, hold: str):
    numd, dend, _ = cont2discrete((np.atleast_1d(num).astype(float), np.atleast_1d(den).astype(float)), dt, method=hold)
    return np.asarray(numd).reshape(-1), np.asarray(dend).reshape(-1)


def simulate_ct(num, den, u, dt: float) -> np.ndarray:
    """Output of B(s)/A(s) for an input held constant over each sample (exact ZOH), zero initial state."""
    bd, ad = _discretise(num, den, dt, "zoh")
    return lfilter(bd, ad, np.asarray(u, dtype=float))


@lru_cache(maxsize=64)
def _derivative_filter_bank(den: tuple, order: int, dt: float, hold: str) -> tuple[np.ndarray, np.ndarray]:
    """Discrete numerators (order+1, ·) and common denominator of pⁱ/A_f(p), i = 0..order, from one exact
    discretisation of the controllable-canonical state space of 1/A_f (states x, px, …, pⁿ⁻¹x)."""
    a = np.asarray(den, dtype=float)
    a = a / a[0]
    n = a.size - 1
    A = np.zeros((n, n))
    A[:-1, 1:] = np.eye(n - 1)
    A[-1] = -a[:0:-1]
    B = np.zeros((n, 1))
    B[-1, 0] = 1.0
    C = np.zeros((order + 1, n))
    D = np.zeros((order + 1, 1))
    for i in range(order + 1):
        if i < n:
            C[i, i] = 1.0
        else:  # pⁿx = input − Σ a_j p^j x
            C[i] = A[-1]
            D[i, 0] = 1.0
    Ad, Bd, Cd, Dd, _ = cont2discrete((A, B, C, D), dt, method=hold)
    nums, dend = ss2tf(Ad, Bd, Cd, Dd)
    return np.atleast_2d(nums), np.asarray(dend).reshape(-1)


def filtered_derivatives(x, den, order: int, dt: float, hold: str) -> np.ndarray:
    """Rows i = 0..order of F_i(p)x = pⁱ/A_f(p) x (state-variable filter); A_f = ``den`` of degree ≥ order."""
    den = np.asarray(den, dtype=float)
    if order > den.size - 1:
        raise ValueError("filter order exceeds the denominator degree")
    nums, dend = _derivative_filter_bank(tuple(den.tolist()), den.size - 1, float(dt), hold)
    x = np.asarray(x, dtype=float)
    return np.stack([lfilter(b, dend, x) for b in nums[: order + 1]])


def svf_denominator(n: int, lam: float) -> np.ndarray:
    """(p + λ)ⁿ, the initial state-variable filter (Wada et al. STEP 0)."""
    return np.poly(-lam * np.ones(n))


def default_svf_cutoff(dt: float) -> float:
    """Default SVF cut-off λ [rad/s] when none is given: 5 % of the Nyquist frequency."""
    return 0.05 * math.pi / dt


def stabilise(den: np.ndarray) -> np.ndarray:
    """Reflect right-half-plane roots of a monic polynomial into the left half-plane (keeps filters stable)."""
    r = np.roots(den)
    if np.all(r.real < 0):
        return den
    r = np.where(r.real >= 0, -np.abs(r.real) - 1e-6 + 1j * r.imag, r)
    return np.real(np.poly(r))


def solve_scaled(lhs_rows: np.ndarray, rhs_rows: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """θ from Σ z φᵀ θ = Σ z y (rows = regressors over time) with column scaling; returns (θ, (Σ z φᵀ)⁻¹)."""
    scale = np.sqrt(np.sum(rhs_rows**2, axis=1))
    if np.any(scale == 0):
        raise ValueError("degenerate data: a regressor is identically zero")
    Z = lhs_rows / scale[:, None]
    P = rhs_rows / scale[:, None]
    M = Z @ P.T
    if not np.all(np.isfinite(M)) or np.linalg.cond(M) > 1e14:
        raise ValueError("degenerate data: the regression is singular (input not exciting enough for the orders)")
    th = np.linalg.solve(M, Z @ target)
    Minv = np.linalg.inv(M)
    return th / scale, Minv / np.outer(scale, scale)


def fit_statistics(num, den, u, y, dt: float, cov_unit: np.ndarray) -> tuple[float, float, float, np.ndarray]:
    """σ̃², R²_T, YIC and covariance σ̃²·P for a model B/A on data (Wada et al. STEP 3)."""
    xhat = simulate_ct(num, den, u, dt)
    noise_var = float(np.var(y - xhat))
    var_y = float(np.var(y))
    cov = noise_var * cov_unit
    theta = np.concatenate([np.asarray(den)[1:], np.asarray(num)])
    r2t = 1.0 - noise_var / var_y
    with np.errstate(divide="ignore"):
        rel = np.diag(cov) / np.maximum(theta**2, 1e-300)
        yic = float(np.log(max(noise_var, 1e-300) / var_y) + np.log(np.mean(rel)))
    return noise_var, r2t, yic, cov


def check_stable(num: np.ndarray, den: np.ndarray, method: str) -> None:
    poles = np.roots(den)
    if not np.all(np.isfinite(poles)) or np.any(poles.real >= 0):
        raise UnstableModelError(
            f"{method}: identified model (n={len(den) - 1}, m={len(num) - 1}) is unstable, "
            f"poles {np.array2string(poles, precision=4)}; check the orders, the data or λ"
        )


# --------------------------------------------------------------------------------------------------
# Least squares (equation error)
# --------------------------------------------------------------------------------------------------
def regressors(yf: np.ndarray, uf: np.ndarray, n: int, m: int) -> np.ndarray:
    """φ_f rows [−y_f⁽ⁿ⁻¹⁾ … −y_f⁽⁰⁾, u_f⁽ᵐ⁾ … u_f⁽⁰⁾] (shape (n+m+1, N)) from filtered derivative stacks."""
    return np.vstack([-yf[n - 1 :: -1], uf[m::-1]])


def svf_least_squares(u, y, dt: float, n: int, m: int, lam: float | None = None):
    """Checked (u, y, dt) and the equation-error estimate θ̂ with its scaled inverse information matrix, from
    state-variable filters A_f = (p+λ)ⁿ (Wada et al. STEP 0–1; shared by LS and the SRIVC start)."""
    u, y, dt = check_io(u, y, dt, n, m)
    lam = default_svf_cutoff(dt) if lam is None else float(lam)
    if not math.isfinite(lam) or lam <= 0:
        raise ValueError(f"SVF cut-off lam must be positive, got {lam}")
    Af = svf_denominator(n, lam)
    yf = filtered_derivatives(y, Af, n, dt, "foh")
    uf = filtered_derivatives(u, Af, m, dt, "zoh")
    phi = regressors(yf, uf, n, m)
    th, Pinv = solve_scaled(phi, phi, yf[n])
    return u, y, dt, th, Pinv


def fit_tf_ls(u, y, dt: float, n: int, m: int, lam: float | None = None, *, require_stable: bool = True) -> CTModel:
    """Least-squares state-variable-filter estimate of B(s)/A(s) (equation error; Wada et al. STEP 1).

    ``lam`` is the SVF cut-off [rad/s] of A_f = (p+λ)ⁿ (default :func:`default_svf_cutoff`)."""
    u, y, dt, th, Pinv = svf_least_squares(u, y, dt, n, m, lam)
    den, num = np.concatenate([[1.0], th[:n]]), th[n:]
    if require_stable:
        check_stable(num, den, "least squares")
    noise_var, r2t, yic, cov = fit_statistics(num, den, u, y, dt, Pinv)
    return CTModel(num=num, den=den, cov=cov, noise_var=noise_var, r2t=r2t, yic=yic, method="ls")
