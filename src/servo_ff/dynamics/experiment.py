"""The seed 002 §5.2 comparison, packaged: run (a)/(b)/(c), tabulate tracking and energy, plot the knee (Fig. 5),
and time the feed-forward tick."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from ..models.presets import preset
from .feedforward import FeedForwardController
from .gait import stepping_in_place
from .inverse_dynamics import double_support_torques, set_gravity, support_foot_torques
from .mujoco_humanoid import CONTROLLERS, GAIN_RATIO, HUMANOID_URDF, KP_HIGH, SimResult, default_alpha, simulate
from .robot import load_robot

KNEE = "l_knee"  # 002 reports the left knee


def run_experiment(n_steps: int = 40, kp_high: float = KP_HIGH, progress: bool = False,
                   controllers=("high", "low", "ff")) -> dict[str, SimResult]:
    robot = load_robot(HUMANOID_URDF)
    return {c: simulate(c, n_steps=n_steps, kp_high=kp_high, robot=robot, progress=progress) for c in controllers}


def summary_rows(results: dict[str, SimResult]) -> list[dict]:
    """One row per controller: gain, steps done, tracking RMS/max (all joints, knee), energy (all, knee)."""
    rows = []
    for c, r in results.items():
        k = r.joint_names.index(KNEE)
        rows.append({"controller": CONTROLLERS[c], "key": c, "fell": r.fell, "t_end": float(r.t[-1]) if len(r.t) else 0.0,
                     "rms": r.rms(), "max": r.max_error(), "knee_rms": r.rms([k]), "knee_max": r.max_error([k]),
                     "energy": float(r.energy.sum()), "knee_energy": float(r.energy[k]),
                     "clamps": int(r.clamp_counts.sum())})
    return rows


def format_table(results: dict[str, SimResult], kp_high: float) -> str:
    head = ("| controller | k_P | stood all steps | RMS [rad] | max [rad] | knee RMS [rad] | knee max [rad] | "
            "E all [J] | E knee [J] | clamps |")
    lines = [head, "|" + "---|" * 10]
    for row in summary_rows(results):
        kp = kp_high if row["key"] == "high" else GAIN_RATIO * kp_high
        stood = "no, fell at %.1f s" % row["t_end"] if row["fell"] else "yes"
        lines.append(f"| {row['controller']} | {kp:.2f} | {stood} | {row['rms']:.4f} | {row['max']:.4f} | "
                     f"{row['knee_rms']:.4f} | {row['knee_max']:.4f} | {row['energy']:.0f} | "
                     f"{row['knee_energy']:.0f} | {row['clamps']} |")
    return "\n".join(lines)


def plot_knee(results: dict[str, SimResult], path: str | Path, window: tuple[float, float] = (0.0, 16.0)) -> Path:
    """Left-knee target vs measured for (a), (b), (c) — like 002 Fig. 5 (leg contracts with positive angle)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(len(results), 1, figsize=(8, 2.3 * len(results)), sharex=True)
    for ax, (c, r) in zip(np.atleast_1d(axes), results.items()):
        k = r.joint_names.index(KNEE)
        m = (r.t >= window[0]) & (r.t <= window[1])
        ax.plot(r.t[m], r.q_des[m, k], "k--", lw=1.2, label="target")
        ax.plot(r.t[m], r.q[m, k], "C0", lw=1.2, label="measured")
        if c == "ff":
            ax.plot(r.t[m], r.goal[m, k], "C3:", lw=1.0, label="goal sent (Eq. 19)")
        title = CONTROLLERS[c] + (f" — fell at {r.t[-1]:.1f} s" if r.fell else "")
        if not m.any():
            title += " (nothing in the plotted window)"
        ax.set_title(title, fontsize=9)
        ax.set_ylabel("left knee [rad]")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="upper right")
    np.atleast_1d(axes)[-1].set_xlabel("time [s]")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def time_tick(n: int = 3000, c_left: float = 0.5) -> dict[str, float]:
    """Wall time [µs] of one 20-joint tick (best of three medians over ``n`` ticks): inverse dynamics alone, ID + Eq. 19 (the whole
    :meth:`FeedForwardController.tick`, incl. input checks and clamping). ``c_left`` = 0.5 is the worst case
    (double support: two support-foot solutions)."""
    robot = load_robot(HUMANOID_URDF)
    ff = FeedForwardController(robot, default_alpha(robot, preset("mx106", "m4")), GAIN_RATIO * KP_HIGH)
    g = stepping_in_place(robot.joint_names, n_steps=4, dt=0.008)  # realistic states (inside the limits)
    idx = np.resize(np.arange(len(g.t)), n)
    qs, dqs, ddqs = g.q[idx], g.dq[idx], g.ddq[idx]
    lf, rf = robot.frame_id("l_sole"), robot.frame_id("r_sole")
    model, data = ff.model, ff.data
    set_gravity(model, ff.gravity)

    def bench(fn) -> float:  # best of 3 medians: the machine is shared, other load only adds time
        best = np.inf
        for _ in range(3):
            ts = np.empty(n)
            for i in range(n):
                t0 = time.perf_counter()
                fn(i)
                ts[i] = time.perf_counter() - t0
            best = min(best, float(np.median(ts)))
        return best * 1e6

    quat = (0.01, -0.02, 0.0, 1.0)
    return {
        "id_single_us": bench(lambda i: support_foot_torques(model, data, qs[i], dqs[i], ddqs[i], lf)),
        "id_double_us": bench(lambda i: double_support_torques(model, data, qs[i], dqs[i], ddqs[i], lf, rf, c_left)),
        "tick_single_us": bench(lambda i: ff.tick(qs[i], dqs[i], ddqs[i], imu_quat=quat, u_bat=14.8, c_left=1.0)),
        "tick_double_us": bench(lambda i: ff.tick(qs[i], dqs[i], ddqs[i], imu_quat=quat, u_bat=14.8, c_left=c_left)),
    }
