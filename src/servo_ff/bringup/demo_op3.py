"""The demo's OP3 act (issue 21 item 6): a few seconds of the ROBOTIS OP3 walking over DDS under low-gain P +
feed-forward — ``servo_walk_node`` (placo, cmd_vel 0.1 m/s) → ``servo_feedforward_node`` → MuJoCo
``servo_sim_node`` (20 × XM430, lockstep), the run of :func:`servo_ff.nodes.op3_mission.run_op3` — and a plot of
the trunk pitch (``imu/data``) and the knees' desired (walk node) vs measured (``/joint_states``) positions."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .op3_mission import KP_HIGH, Op3Result, run_op3
from .op3_report import format_table

KNEES = ("l_knee", "r_knee")


def knee_rms(res: Op3Result) -> float:
    """RMS [rad] of measured − desired over both knees and the recorded samples (NaN without samples)."""
    if not res.tracking:
        return float("nan")
    err = np.array([m - d for _, d, m in res.tracking])
    return float(np.sqrt(np.mean(err**2)))


def run_op3_act(
    out_dir: str | Path = "demo_out", n_steps: int = 8, vx: float = 0.1, kp_high: float = KP_HIGH, log=print
) -> tuple[Op3Result, str, Path]:
    """(c) low-gain P (0.35 × ``kp_high``, the XM430's factory gain by default) + feed-forward for ``n_steps``
    steps at ``vx``; returns (result, table, plot path ``out_dir/op3_walk.png``)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    res = run_op3("ff", n_steps=n_steps, vx=vx, kp_high=kp_high, salt=47, log=log, track=KNEES)
    table = format_table([res]) + f"\nknee tracking RMS (both knees, from the walk start): {knee_rms(res):.4f} rad"
    return res, table, plot_op3_act(res, out / "op3_walk.png")


def plot_op3_act(res: Op3Result, path: Path) -> Path:
    """Trunk pitch (top) and the knees desired vs measured (bottom) against the time from the walk start."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = len(res.tracked)
    fig, axes = plt.subplots(1 + n, 1, figsize=(10, 2.6 * (1 + n)), sharex=True)
    ax1 = axes[0]
    t, pitch = np.array([a for a, _ in res.pitch]), np.array([b for _, b in res.pitch])
    ax1.plot(t, pitch, lw=1.0, color="C0")
    ax1.set_ylabel("trunk pitch [rad]")
    tt = np.array([a for a, _, _ in res.tracking])
    des = np.array([d for _, d, _ in res.tracking]).reshape(len(tt), n)
    mea = np.array([m for _, _, m in res.tracking]).reshape(len(tt), n)
    for k, (ax, name) in enumerate(zip(axes[1:], res.tracked)):
        ax.plot(tt, des[:, k], "k--", lw=1.2, label="desired (walk node)")
        ax.plot(tt, mea[:, k], lw=1.0, color=f"C{k + 1}", label="measured (joint_states)")
        ax.set_ylabel(f"{name} [rad]")
        ax.legend(loc="upper right", fontsize=8)
    if res.fell:
        for ax in axes:
            ax.axvline(res.fell_at, color="r", ls=":", lw=1.0)
    axes[-1].set_xlabel("time from the walk start [s]")
    state = f"fell at {res.fell_at:.1f} s" if res.fell else "stood"
    ax1.set_title(
        f"OP3 over DDS: placo walk (0.1 m/s) → low-gain P k_P {res.kp:.0f} + feed-forward → MuJoCo; {state}, "
        f"{res.travel:.2f} m, knee RMS {knee_rms(res):.3f} rad",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


__all__ = ["KNEES", "knee_rms", "plot_op3_act", "run_op3_act"]
