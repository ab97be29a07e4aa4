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


class ILCArchiveError(ValueError):
    """An ``ilc.npz`` of ``servo-ff ilc`` is unreadable or malformed; the message names the file and the key."""


def read_ilc_npz(src: Path):
    """(command, measured, q, dq, ddq, τ, dt, kp, u_bat) of the trial with the lowest windowed error of an
    ``ilc.npz`` written by ``servo-ff ilc``; every defect raises :class:`ILCArchiveError` naming file and key."""
    import numpy as np

    from ..safe_parse import finite_scalar, load_npz

    d = load_npz(src, ILCArchiveError)
    for key in ("commands", "measured", "errors", "reference", "dq", "ddq", "tau", "dt", "kp", "u_bat"):
        if key not in d:
            raise ILCArchiveError(f"{src}: missing array {key!r} (not written by 'servo-ff ilc'?)")
        if d[key].dtype.kind not in "iuf":
            raise ILCArchiveError(f"{src}: {key} must hold numbers, got dtype {d[key].dtype}")
        if not np.isfinite(d[key]).all():
            raise ILCArchiveError(f"{src}: {key} contains non-finite values")
    n = d["reference"].shape[0] if d["reference"].ndim == 1 else -1
    if n < 2:
        raise ILCArchiveError(f"{src}: reference has shape {d['reference'].shape}, expected (samples,), >= 2 samples")
    for key in ("dq", "ddq", "tau"):
        if d[key].shape != (n,):
            raise ILCArchiveError(f"{src}: {key} has shape {d[key].shape}, expected ({n},)")
    for key in ("commands", "measured"):
        if d[key].ndim != 2 or d[key].shape[1] != n or d[key].shape[0] < 1:
            raise ILCArchiveError(f"{src}: {key} has shape {d[key].shape}, expected (iterations, {n})")
    k_it = d["commands"].shape[0]
    if d["measured"].shape[0] != k_it or d["errors"].shape != (k_it,):
        raise ILCArchiveError(f"{src}: commands, measured and errors disagree on the number of iterations "
                              f"({k_it}, {d['measured'].shape[0]}, {d['errors'].shape})")
    dt, kp, u_bat = (finite_scalar(d, key, str(src), ILCArchiveError) for key in ("dt", "kp", "u_bat"))
    if dt <= 0 or kp <= 0 or u_bat <= 0:
        raise ILCArchiveError(f"{src}: dt, kp and u_bat must be > 0, got {dt}, {kp}, {u_bat}")
    k = int(np.argmin(d["errors"]))
    return d["commands"][k], d["measured"][k], d["reference"], d["dq"], d["ddq"], d["tau"], dt, kp, u_bat


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from ..identification.alpha_fit import fit_alpha
    from ..identification.pendulum import output_torque
    from ..identification.plots import plot_alpha_residuals
    from ..models.stepper import PendulumLoad

    src = Path(args.source)
    if src.suffix == ".npz":
        command, measured, q, dq, ddq, tau, dt, kp, u_bat = read_ilc_npz(src)
    else:
        from scipy.signal import savgol_filter

        from ..identification.servo_log import LogError
        from ..io.logs import read_log

        log = read_log(src, dt=args.dt)
        if log.torque_enable.min() < 0.5:
            keep = log.torque_enable > 0.5
            n = int(np.argmin(keep)) if not keep.all() else len(keep)
            print(f"{src}: using the first {n} powered samples (torque disabled afterwards)")
        else:
            n = len(log)
        if n < 11:  # the Savitzky-Golay window below
            raise LogError(f"{src}: {n} powered sample(s) after resampling to {args.dt} s; the fit needs at least 11")
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
