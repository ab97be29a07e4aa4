"""SRIVC: simplified refined instrumental-variable identification of continuous-time transfer functions
(Wada et al. (R/C Servo Motors) §III, after Young & Jakeman / Garnier's CONTSID).

STEP 0–1  least-squares SVF estimate with A_f = (p+λ)ⁿ (:func:`~.tf_fit.fit_tf_ls`);
STEP 2b   instrument x̂ = B̂/Â u (noise-free model output), prefilters updated to F_i = pⁱ/Â(p), then
          θ̂_{l+1} = [Σ φ̂_f φ_fᵀ]⁻¹ Σ φ̂_f y_f⁽ⁿ⁾ with φ̂_f = [−x̂_f⁽ⁿ⁻¹⁾ … −x̂_f⁽⁰⁾, u_f⁽ᵐ⁾ … u_f⁽⁰⁾];
STEP 2c   repeat until θ̂ stops changing;
STEP 3    R²_T and YIC (:func:`~.tf_fit.fit_statistics`).

With white output noise the estimate is consistent (unbiased for long records) where least squares is not.
Intermediate unstable Â are reflected into the left half-plane so the filters stay stable; an unstable final
estimate raises :class:`~.tf_fit.UnstableModelError`.
"""

from __future__ import annotations

import numpy as np

from .tf_fit import (
    CTModel,
    check_stable,
    filtered_derivatives,
    fit_statistics,
    regressors,
    solve_scaled,
    stabilise,
    svf_least_squares,
)


def srivc(
    u,
    y,
    dt: float,
    n: int,
    m: int,
    lam: float | None = None,
    *,
    max_iter: int = 50,
    tol: float = 1e-7,
    require_stable: bool = True,
) -> CTModel:
    """Identify B(s)/A(s) of orders n (denominator, monic) and m (numerator) from input ``u`` and output ``y``
    sampled every ``dt`` [s], starting at rest. ``lam`` [rad/s] is only the initial SVF cut-off (STEP 0)."""
    u, y, dt, th, _ = svf_least_squares(u, y, dt, n, m, lam)  # STEP 0–1: least squares with (p+λ)ⁿ
    converged, it = False, 0
    Pinv = None
    for it in range(1, max_iter + 1):
        den = stabilise(np.concatenate([[1.0], th[:n]]))
        num = th[n:]
        yf = filtered_derivatives(y, den, n, dt, "foh")
        uf = filtered_derivatives(u, den, m, dt, "zoh")
        xhat = num[::-1] @ uf  # x̂ = B̂/Â u = Σ b_j (pʲ/Â) u, exact for a held input
        xf = filtered_derivatives(xhat, den, n - 1, dt, "zoh")
        phi = regressors(yf, uf, n, m)
        zeta = np.vstack([-xf[::-1], uf[m::-1]])
        th_new, Pinv = solve_scaled(zeta, phi, yf[n])
        change = np.max(np.abs(th_new - th) / np.maximum(np.abs(th_new), 1e-12))
        th = th_new
        if change < tol:
            converged = True
            break
    den, num = np.concatenate([[1.0], th[:n]]), th[n:]
    if require_stable:
        check_stable(num, den, "SRIVC")
    # covariance σ̃²[Σ φ̂_f φ̂_fᵀ]⁻¹ at the final filter (Young's SRIVC estimate)
    dstab = stabilise(den)
    uf = filtered_derivatives(u, dstab, m, dt, "zoh")
    xhat = num[::-1] @ uf
    xf = filtered_derivatives(xhat, dstab, n - 1, dt, "zoh")
    zeta = np.vstack([-xf[::-1], uf[m::-1]])
    _, Pzz = solve_scaled(zeta, zeta, np.zeros(u.size))
    noise_var, r2t, yic, cov = fit_statistics(num, den, u, y, dt, Pzz)
    return CTModel(
        num=num,
        den=den,
        cov=cov,
        noise_var=noise_var,
        r2t=r2t,
        yic=yic,
        method="srivc",
        iterations=it,
        converged=converged,
    )
