"""``servo-ff fit``: least-squares fit of α̂ (seed 002 Eq. 22–27) from an ILC result or a bench log."""
from __future__ import annotations

import argparse
import json
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("fit", help="fit the linear motor model α (seed 002) from an ILC run or a log",
                       description="Least-squares fit of α0..α3 (+α4) with reaction-time compensation and an outer "
                                   "search over the Stribeck q̇_s, δ (seed 002 Eq. 13-27).")
    p.add_argument("source", help="ilc.npz from 'servo-ff ilc', or a bench log (.json/.csv/rosbag2)")
    p.add_argument("--inertia", action="store_true", help="include α4·q̈ (Eq. 14)")
    p.add_argument("--delay", type=float, default=None, help="reaction time t_d [s] (default: estimate)")
    p.add_argument("--dq-s", type=float, default=None, help="fix the Stribeck velocity [rad/s]")
    p.add_argument("--delta", type=float, default=None, help="fix the Stribeck exponent")
    p.add_argument("--unconstrained", action="store_true", help="plain SVD least squares (allow α̂ < 0)")
    p.add_argument("--dt", type=float, default=0.005, help="log resampling period [s]")
    p.add_argument("--out", default="alpha_fit", help="output directory (alpha.json, residuals.png)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from ..identification.alpha_fit import fit_alpha
    from ..identification.pendulum import output_torque
    from ..identification.plots import plot_alpha_residuals
    from ..models.stepper import PendulumLoad

    src = Path(args.source)
    if src.suffix == ".npz":
        d = np.load(src)
        for key in ("commands", "measured", "reference", "dq", "ddq", "tau", "dt", "kp", "u_bat"):
            if key not in d:
                raise KeyError(f"{src}: missing array {key!r} (not written by 'servo-ff ilc'?)")
        k = int(np.argmin(d["errors"]))
        command, measured, q = d["commands"][k], d["measured"][k], d["reference"]
        dq, ddq, tau, dt = d["dq"], d["ddq"], d["tau"], float(d["dt"])
        kp, u_bat = float(d["kp"]), float(d["u_bat"])
    else:
        from scipy.signal import savgol_filter

        from ..identification.logs import read_log

        log = read_log(src, dt=args.dt)
        if log.torque_enable.min() < 0.5:
            keep = log.torque_enable > 0.5
            n = int(np.argmin(keep)) if not keep.all() else len(keep)
            print(f"{src}: using the first {n} powered samples (torque disabled afterwards)")
        else:
            n = len(log)
        dt = log.dt
        q = savgol_filter(log.position[:n], 11, 3)
        dq = savgol_filter(log.position[:n], 11, 3, deriv=1, delta=dt)
        ddq = savgol_filter(log.position[:n], 11, 3, deriv=2, delta=dt)
        tau = output_torque(PendulumLoad(log.mass, log.length, log.arm_mass), q, ddq)
        command, measured, kp, u_bat = log.goal_position[:n], log.position[:n], log.kp, log.input_volts[:n]
    fit = fit_alpha(command, q, dq, ddq, tau, kp, u_bat, dt, delay=args.delay, with_inertia=args.inertia,
                    dq_s=args.dq_s, delta=args.delta, measured=measured, nonnegative=not args.unconstrained)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "alpha.json").write_text(json.dumps({**fit.as_dict(), "kp": kp}, indent=2))
    gain = kp * np.broadcast_to(np.asarray(u_bat, float), (len(command),))[: fit.n_samples]
    plot_alpha_residuals(fit, dt, out / "residuals.png", gain)
    print(f"alpha = {np.array2string(fit.alpha, precision=5)}  dq_s = {fit.dq_s:.4g} rad/s  delta = {fit.delta:.3g}  "
          f"t_d = {fit.delay * 1e3:.0f} ms")
    print(f"rms residual {fit.rms:.4g} rad (goal-position equivalent), condition number {fit.condition_number:.3g}, "
          f"{fit.n_samples} samples -> {out / 'alpha.json'}")
    return 0
