"""The scaled obstacle of ``op3_obstacle_sweep.py`` (issue 21): h*, the paper's 15 mm on the NimbRo-OP carried to
the OP3 by leg length (the rule is in that bench's docstring), and Schwarz & Behnke's Fig. 6b at h*: the sagittal
trunk pitch of (a) and (c) over time, the first touch of the obstacle marked as the paper's purple line."""

from __future__ import annotations

import math
from pathlib import Path

PAPER_HEIGHT = 0.015  # [m] seed 002 Fig. 6: "The obstacle has a height of 15 mm" (NimbRo-OP)
PAPER_PURPLE = "#8e44ad"  # Fig. 6b: "The purple line denotes the time of impact of the first step on the obstacle"


def h_star_mm() -> float:
    """h* [mm, rounded to 0.01]: 15 mm × OP3 leg / NimbRo-OP leg, each from the hip-pitch axis to the sole."""
    from servo_ff.dynamics.robot_scale import NIMBRO_OP_LEG, hip_to_sole, scaled_height  # noqa: PLC0415
    from servo_ff.dynamics.walk_sim import OP3_URDF  # noqa: PLC0415

    legs = [hip_to_sole(OP3_URDF, f"{s}_hip_pitch", f"{s}_sole") for s in "lr"]
    if not math.isclose(legs[0], legs[1], abs_tol=1e-9):
        raise ValueError(f"{OP3_URDF.name}: the legs differ ({legs[0]:.5f} / {legs[1]:.5f} m hip pitch to sole)")
    return round(1000 * scaled_height(PAPER_HEIGHT, NIMBRO_OP_LEG, legs[0]), 2)


def fig6b(height_mm: float, vx: float, n_steps: int, path: str, gait: str = "placo") -> tuple[str, dict]:
    """(a) and (c) on the board ``height_mm`` high at ``vx`` [m/s], ``n_steps`` steps (``simulate_walk``, as the
    sweep's cells; ``gait`` as ``op3_obstacle_sweep.run_cell``'s): trunk pitch over time, each run's first touch of
    the board marked; → (path, runs by controller)."""
    from op3_obstacle_sweep import robotis_ready  # noqa: PLC0415

    from servo_ff.dynamics.walk_sim import simulate_walk  # noqa: PLC0415

    more = robotis_ready(vx, n_steps, gait)
    runs = {
        c: simulate_walk(c, n_steps, vx=vx, obstacle=height_mm / 1000, obstacle_shape="board", **more)
        for c in ("high", "ff")
    }
    what = "(the paper's 15 mm scaled by leg length) " if gait == "placo" else ""
    how = {"placo": "placo walk", "robotis": "ROBOTIS's own walk", "cpg": "Missura & Behnke's CPG scaled"}[gait]
    title = f"OP3 onto a {height_mm:g} mm board {what}at {vx:.4g} m/s, ROS-free ({how}, MuJoCo)"
    plot_fig6b(runs, ("(a) k_P 800", "(c) 280 + FF"), title, path)
    return path, runs


def plot_fig6b(runs: dict, labels: tuple[str, str], title: str, path: str) -> None:
    """Fig. 6b to ``path``: trunk pitch [rad] over time [s] of ``runs`` ((a) then (c): WalkRun), each labelled, each
    run's first touch of the obstacle as the paper's purple line."""
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    fig, ax = plt.subplots(figsize=(9, 4))
    for r, label, col, ls in zip(runs.values(), labels, ("C3", "C0"), ("--", ":")):
        end = f"fell at {r.fell_at:.2f} s" if r.fell else f"stood, {r.travel:.3f} m"
        ax.plot(r.t, r.pitch, color=col, lw=1.2, label=f"{label}: {end}")
        if not math.isnan(r.t_touch):
            ax.axvline(r.t_touch, color=PAPER_PURPLE, ls=ls, lw=1.0, label=f"{label}: first touch {r.t_touch:.2f} s")
    ax.axhline(0.0, color="k", lw=0.5)
    ax.set_xlabel("time from the walk start (board placed, both feet down) [s]")
    ax.set_ylabel("trunk pitch [rad] (forward positive)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
