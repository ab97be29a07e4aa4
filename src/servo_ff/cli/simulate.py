"""``servo-ff simulate``: one preset + friction model + trajectory on the pendulum bench → CSV + PNG."""

from __future__ import annotations

import argparse
import csv
import logging
from pathlib import Path

import numpy as np

from servo_ff.cli._params import add_firmware_argument, add_preset_arguments, preset_of, resolve_params
from servo_ff.io.atomic import atomic_path
from servo_ff.io.servo_log import check_dt
from servo_ff.models.params import MODEL_NAMES
from servo_ff.models.presets import SERVO_NAMES
from servo_ff.trajectories import TRAJECTORIES, trajectory

log = logging.getLogger(__name__)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "simulate",
        help="simulate a servo on the pendulum bench (Duclusaud et al. (Extended Friction Models) Algorithm 1)",
        description="Writes <out>/<name>.csv (t, θd, θ, θ̇, τ_m, τ_f, U) and <out>/<name>.png.",
    )
    add_preset_arguments(p, f"preset: {', '.join(SERVO_NAMES)}", f"friction model: {', '.join(MODEL_NAMES)}")
    p.add_argument("--params", help="bam JSON or ROS YAML parameter file (instead of --servo/--model)")
    add_firmware_argument(p)
    p.add_argument("--trajectory", default="accelerated_oscillations", help=", ".join(TRAJECTORIES))
    p.add_argument("--mass", type=float, default=1.0, help="pendulum mass [kg]")
    p.add_argument("--length", type=float, default=0.15, help="pendulum length [m]")
    p.add_argument("--arm-mass", type=float, default=0.0, help="arm mass [kg]")
    p.add_argument("--kp", type=float, help="firmware P gain (register units); default: the preset's")
    p.add_argument("--dt", type=float, default=0.005, help="time step [s], in [1e-4, 1]")
    p.add_argument("--out", default="out/simulate", help="output folder")
    p.set_defaults(func=run)


def simulate_bench(params, traj, mass: float, length: float, arm_mass: float = 0.0, dt: float = 0.005):
    """What ``servo-ff simulate`` computes: ``params`` (its own firmware kp) on the pendulum bench (mass [kg] at
    length [m], arm mass [kg]) following ``traj`` from rest at its first point, one step of ``dt`` [s] per goal
    (:func:`servo_ff.models.stepper.rollout`: ``theta[k]`` is the state before goal k)."""
    from servo_ff.models.stepper import PendulumLoad, rollout  # numba: imported when a simulation runs

    load = PendulumLoad(mass=mass, length=length, arm_mass=arm_mass)
    return rollout(params, traj.q[0], 0.0, traj.q, dt, load, enable=traj.torque_enable)


def run(args: argparse.Namespace) -> int:
    check_dt(args.dt, "--dt")  # before: --dt 1e-7 ran for minutes unsaid, --dt 2 wrote a 213 rad tracking error
    keys = {part.split("=")[0].strip() for part in (args.firmware or "").split(",") if "=" in part}
    if args.kp is not None and "kp" in keys:  # before: --kp won over --firmware kp=…, unsaid
        raise ValueError(f"--kp {args.kp:g} and --firmware {args.firmware}: give the gain once")
    params = resolve_params(args.params, preset_of(args), args.firmware)
    if args.kp is not None:
        params = params.with_(firmware=params.firmware.with_(kp=args.kp))
    traj = trajectory(args.trajectory, dt=args.dt)
    res = simulate_bench(params, traj, args.mass, args.length, args.arm_mass, args.dt)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    name = "".join(c if c.isalnum() or c in "-_" else "_" for c in f"{params.actuator}_{params.model}_{traj.name}")
    csv_path, png_path = out / f"{name}.csv", out / f"{name}.png"
    with atomic_path(csv_path) as tmp, tmp.open("w", newline="") as f:  # interrupted: no cut-off file
        w = csv.writer(f)
        w.writerow(["t_s", "goal_rad", "theta_rad", "dtheta_rad_s", "tau_m_Nm", "tau_f_Nm", "volts_V", "torque_enable"])
        for row in zip(traj.t, traj.q, res.theta, res.dtheta, res.tau_m, res.tau_f, res.volts, traj.torque_enable):
            w.writerow([f"{v:.6g}" for v in row])
    plot_simulation(
        traj,
        res,
        png_path,
        title=f"{params.actuator} {params.model} — {traj.name} "
        f"(m={args.mass} kg, l={args.length} m, kp={params.firmware.kp:g})",
    )
    mae = float(np.mean(np.abs(res.theta - traj.q)))
    print(f"wrote {csv_path} and {png_path}  (tracking MAE {mae:.4f} rad over {traj.t[-1] + args.dt:.2f} s)")
    return 0


def plot_simulation(traj, res, path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a1, a2) = plt.subplots(2, 1, sharex=True, figsize=(9, 6))
    a1.plot(traj.t, traj.q, "k--", lw=1, label="θd (goal)")
    a1.plot(traj.t, res.theta, "tab:blue", label="θ (simulated)")
    a1.set_ylabel("angle [rad]")
    a1.legend(loc="upper right")
    a1.set_title(title, fontsize=10)
    a2.plot(traj.t, res.tau_m, "tab:orange", label="τ_m motor")
    a2.plot(traj.t, res.tau_f, "tab:green", label="τ_f friction")
    if (traj.torque_enable == 0).any():
        a2.fill_between(traj.t, *a2.get_ylim(), where=traj.torque_enable == 0, color="0.9", label="torque off")
    a2.set_ylabel("torque [N·m]")
    a2.set_xlabel("time [s]")
    a2.legend(loc="upper right")
    for a in (a1, a2):
        a.grid(alpha=0.3)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=100)
    plt.close(fig)
