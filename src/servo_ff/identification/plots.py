"""Figures for identification (matplotlib, Agg backend): ILC convergence, α-fit residuals, and the
validation MAE per friction model (like Duclusaud et al. (Extended Friction Models) Fig. 5)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

import numpy as np


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_ilc(result, path: str | Path, problem: tuple = (), title: str = "ILC") -> Path:
    """Windowed error q_max per iteration (Eq. 28) and command curves vs the reference and the last run."""
    plt = _plt()
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4.2), gridspec_kw={"width_ratios": [1, 2]})
    err = result.errors[(slice(None), *problem)]
    a1.semilogy(np.arange(len(err)), err, "o-")
    a1.axhline(result.threshold, color="k", ls="--", lw=0.8, label=f"threshold {result.threshold} rad")
    a1.set_xlabel("iteration k")
    a1.set_ylabel(f"windowed error q_max [rad] (D = {result.window * 1e3:.0f} ms)")
    a1.legend()
    a1.grid(True, which="both", alpha=0.3)
    t = np.arange(result.reference.shape[0]) * result.dt
    ref = result.reference[(slice(None), *problem)]
    cmap = plt.get_cmap("viridis")
    K = len(result.commands)
    for k in range(K):
        a2.plot(
            t,
            result.commands[(k, slice(None), *problem)],
            color=cmap(k / max(K - 1, 1)),
            lw=0.8,
            alpha=0.8,
            label=f"command k={k}" if k in (0, K - 1) else None,
        )
    a2.plot(t, ref, "k--", lw=1.2, label="reference q_ref")
    a2.plot(t, result.measured[(-1, slice(None), *problem)], "r", lw=1.0, label=f"measured k={K - 1}")
    a2.set_xlabel("t [s]")
    a2.set_ylabel("angle [rad]")
    a2.legend(loc="upper right", fontsize=8)
    a2.grid(True, alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return Path(path)


def plot_alpha_residuals(
    fit, dt: float, path: str | Path, kp_ubat: float | np.ndarray = 1.0, title: str = "α least-squares fit residuals"
) -> Path:
    """Residual of Eq. 26 over time (as an equivalent goal-position error) and its histogram."""
    plt = _plt()
    r = fit.residuals / np.broadcast_to(kp_ubat, fit.residuals.shape) if np.ndim(kp_ubat) else fit.residuals / kp_ubat
    t = (np.arange(len(r)) + fit.delay_steps) * dt
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 3.8), gridspec_kw={"width_ratios": [3, 1]})
    a1.plot(t, r, lw=0.8)
    a1.set_xlabel("t [s]")
    a1.set_ylabel("residual / (k_P·U_bat) [rad]")
    a1.grid(True, alpha=0.3)
    a1.set_title(
        f"α̂ = {np.array2string(fit.alpha, precision=3)}, q̇_s = {fit.dq_s:.3g} rad/s, δ = {fit.delta:.3g}, "
        f"t_d = {fit.delay * 1e3:.0f} ms, cond = {fit.condition_number:.3g}",
        fontsize=8,
    )
    a2.hist(r, bins=50, orientation="horizontal")
    a2.set_xlabel("samples")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return Path(path)


def plot_model_mae(results: Mapping[str, object], path: str | Path, title: str = "Validation MAE per model") -> Path:
    """Bar chart of train and validation MAE [mrad] per model (Duclusaud et al. Fig. 5)."""
    plt = _plt()
    models = list(results)

    def mrad(m: str, key: str) -> float:  # None (no validation logs) → not drawn
        v = getattr(results[m], key)
        return math.nan if v is None else float(v) * 1e3

    val = np.array([mrad(m, "validation_mae") for m in models])
    train = np.array([mrad(m, "train_mae") for m in models])
    x = np.arange(len(models))
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.bar(x - 0.2, train, 0.4, label="train", color="0.7")
    bars = ax.bar(x + 0.2, val, 0.4, label="validation", color="tab:blue")
    for b, v in zip(bars, val):
        if np.isfinite(v):
            ax.text(b.get_x() + b.get_width() / 2, v, f"{v:.2f}", ha="center", va="bottom", fontsize=8)
    ax.set_xticks(x, [m.upper() for m in models])
    ax.set_ylabel("MAE [mrad]")
    ax.set_title(title)
    ax.legend()
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return Path(path)


__all__ = ["plot_ilc", "plot_alpha_residuals", "plot_model_mae"]
