"""The OP3 mission's results (:class:`.op3_mission.Op3Result`) as a person reads them: a Markdown table per run and
the sagittal trunk pitch per controller around the obstacle (Schwarz & Behnke Fig. 6b)."""

from __future__ import annotations

import math

import numpy as np

from .op3_mission import Op3Result


def format_table(results: list[Op3Result]) -> str:
    lines = [
        "| controller | k_P | obstacle [mm] | box placed at [s] | stood | travel [m] | E all [J] | E knees [J] | "
        "sim s / wall s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r.label} | {r.kp:.0f} | {1000 * r.obstacle:.0f} | "
            f"{'–' if math.isnan(r.t_obstacle) else '%.2f' % r.t_obstacle} | "
            f"{'no, fell at %.1f s' % r.fell_at if r.fell else 'yes'} | {r.travel:.3f} | {r.energy.sum():.1f} | "
            f"{r.knee_energy():.1f} | {r.sim_s:.0f} / {r.wall_s:.0f} |"
        )
    return "\n".join(lines)


def plot_pitch(
    results: list[Op3Result], path, before: float = 1.0, after: float = 4.0, board: bool = False, gait: str = "placo"
):
    """Sagittal trunk pitch per controller around the obstacle (Schwarz & Behnke Fig. 6b); ``board``: the runs'
    obstacle is the board, placed at the walk start (the time axis from there); ``gait``: the title's walk."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 4))
    for r in results:
        t = np.array([a for a, _ in r.pitch]) - r.t_obstacle_planned
        y = np.array([b for _, b in r.pitch])
        sel = (t >= -before) & (t <= after)
        fell = f", fell at {r.fell_at - r.t_obstacle_planned:+.2f} s" if r.fell else ""
        fell += " (before the box)" if r.fell and math.isnan(r.t_obstacle) else ""
        ax.plot(t[sel], y[sel], lw=1.0, label=f"{r.label} (k_P {r.kp:.0f}), {1000 * r.obstacle:.0f} mm{fell}")
    ax.axvline(0.0, color="k", ls=":", lw=0.8)
    ax.set_xlabel(
        "time from the walk start (board placed, both feet down) [s]"
        if board
        else "time from the box's placement under the swing foot (mid-swing) [s]"
    )
    ax.set_ylabel("trunk pitch [rad]")
    what = "a board across the path" if board else "an obstacle"
    walk = "placo walk" if gait == "placo" else "the authors' CPG scaled"
    ax.set_title(f"OP3 walking onto {what} over DDS ({walk} → feed-forward → MuJoCo)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


__all__ = ["format_table", "plot_pitch"]
