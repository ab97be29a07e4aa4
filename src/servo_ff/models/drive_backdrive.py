"""Drive / backdrive diagrams (Duclusaud et al. (Extended Friction Models) §II-C, Fig. 2 and 4).

With the motor torque τ_m and the external torque τ_e opposing each other, a joint at velocity θ̇ is
*static* when friction can cancel the net torque, |τ_m + τ_e| ≤ τ_f^m(τ_m, τ_e, θ̇); otherwise it moves in
the direction of τ_m (*drive*) or of τ_e (*backdrive*). Vectorised over grids; ``p`` is packed params.
"""

from __future__ import annotations

import numpy as np

from .friction import friction_budget

DRIVE, STATIC, BACKDRIVE = 1, 0, -1


def drive_backdrive_regions(p: np.ndarray, tau_m: np.ndarray, tau_e: np.ndarray, dtheta: float = 0.0) -> np.ndarray:
    """Region of each (τ_m, τ_e): DRIVE (+1), STATIC (0) or BACKDRIVE (−1), for τ_m ≥ 0 as in Fig. 2."""
    net = np.asarray(tau_m) + np.asarray(tau_e)
    budget = friction_budget(p, tau_m, tau_e, dtheta)
    moving = np.abs(net) > budget
    direction = np.sign(net) * np.sign(np.where(np.asarray(tau_m) == 0, 1.0, tau_m))
    return np.where(moving, np.where(direction > 0, DRIVE, BACKDRIVE), STATIC).astype(int)


def drive_backdrive_torques(
    p: np.ndarray, tau_m: np.ndarray, dtheta: float = 0.0, tau_e_max: float | None = None, resolution: int = 4001
) -> tuple[np.ndarray, np.ndarray]:
    """(τ_drive(τ_m), τ_backdrive(τ_m)) of §II-C for τ_m ≥ 0 and opposing τ_e ≤ 0.

    τ_drive: the highest-magnitude opposing τ_e that still leaves the joint in the drive area's boundary;
    τ_backdrive: the smallest-magnitude τ_e that backdrives it. Found on a dense τ_e grid (vectorised);
    NaN where the boundary lies beyond ``tau_e_max``.
    """
    tau_m = np.atleast_1d(np.asarray(tau_m, dtype=float))
    top = float(tau_e_max if tau_e_max is not None else 3 * max(tau_m.max(), 1e-3) + 1.0)
    tau_e = -np.linspace(0.0, top, resolution)
    tm, te = np.meshgrid(tau_m, tau_e, indexing="ij")
    regions = drive_backdrive_regions(p, tm, te, dtheta)
    drive_mask = regions == DRIVE
    back_mask = regions == BACKDRIVE
    idx = np.arange(resolution)
    last_drive = np.where(drive_mask.any(1), np.max(np.where(drive_mask, idx, -1), axis=1), -1)
    first_back = np.where(back_mask.any(1), np.min(np.where(back_mask, idx, resolution), axis=1), resolution)
    drive = np.where(last_drive >= 0, tau_e[np.clip(last_drive, 0, resolution - 1)], np.nan)
    back = np.where(first_back < resolution, tau_e[np.clip(first_back, 0, resolution - 1)], np.nan)
    return drive, back


def plot_drive_backdrive(
    params, path: str, tau_m_max: float = 3.0, velocities: tuple[float, ...] = (0.0, 1.0, 2.0), title: str | None = None
) -> None:
    """Draw the diagram of Fig. 2/4 (axes: τ_m, −τ_e) with the static area shaded; velocities in rad/s as
    fainter lines (Fig. 4's 1 rad/s steps). Writes a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    p = params.packed()
    tau_m = np.linspace(0.0, tau_m_max, 301)
    fig, ax = plt.subplots(figsize=(5.5, 5))
    for k, v in enumerate(velocities):
        drive, back = drive_backdrive_torques(p, tau_m, dtheta=v, tau_e_max=2 * tau_m_max + 1.0)
        alpha = 1.0 if k == 0 else 0.35
        ax.plot(tau_m, -drive, color="tab:blue", alpha=alpha, label="drive torque" if k == 0 else None)
        ax.plot(tau_m, -back, color="tab:red", alpha=alpha, label="backdrive torque" if k == 0 else None)
        if k == 0:
            ax.fill_between(tau_m, -drive, -back, color="0.8", label="static area")
    ax.plot(tau_m, tau_m, "k--", lw=0.8, label="τ_m = −τ_e")
    ax.set_xlabel("motor torque τ_m [N·m]")
    ax.set_ylabel("external torque −τ_e [N·m]")
    ax.set_title(
        title or f"{params.actuator} {params.model}: drive/backdrive (θ̇ = {', '.join(map(str, velocities))} rad/s)"
    )
    ax.set_xlim(0, tau_m_max)
    ax.set_ylim(0, None)
    ax.legend(loc="upper left")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
