"""``servo-ff fit``: least-squares fit of α̂ (Schwarz & Behnke Eq. 22–27) from an ILC record or a log."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "fit",
        help="fit the linear motor model α̂ (Schwarz & Behnke) from an ILC record or a log",
        description="Least-squares fit of α0..α3 (+α4) with reaction-time compensation and an outer "
        "search over the Stribeck q̇_s, δ (Schwarz & Behnke Eq. 13-27). Writes an α file "
        "the feed-forward node reads (alpha_file).",
    )
    p.add_argument(
        "source", help="ILC record (.npz, from 'servo-ff ilc' or servo_ilc_node), or a log (.json/.csv/rosbag2)"
    )
    p.add_argument(
        "--urdf",
        help="URDF giving τ_o of the joint by inverse dynamics (needed for a record of "
        "servo_ilc_node; default: the record's τ or the log's pendulum)",
    )
    p.add_argument("--joint", help="joint (a bag's joint; must match an ILC record's)")
    p.add_argument(
        "--as-default",
        action="store_true",
        help="write α̂ as the α file's 'default' entry, read by every joint of the robot (the feed-forward node's "
        "alpha_file), not under the fitted joint's name; implied when the source names no joint (a bench log)",
    )
    p.add_argument("--iteration", type=int, default=-1, help="ILC trial to fit (-1: lowest windowed error)")
    p.add_argument("--kp", type=float, help="servo gain during the data (default: from the record/log)")
    p.add_argument(
        "--vin",
        type=float,
        help="servo supply voltage [V] during the data; given, it wins over a recorded supply (a bag's "
        "servo_supply, else its one BatteryState; a difference over 10%% is said)",
    )
    p.add_argument(
        "--mass",
        type=float,
        help="pendulum mass [kg] (τ_o of a bench without a URDF; for a log or an ILC record)",
    )
    p.add_argument("--length", type=float, help="pendulum length [m]")
    p.add_argument("--arm-mass", type=float, help="pendulum arm mass [kg]")
    p.add_argument("--inertia", action="store_true", help="include α4·q̈ (Eq. 14)")
    p.add_argument("--delay", type=float, default=None, help="reaction time t_d [s] (default: estimate)")
    p.add_argument("--dq-s", type=float, default=None, help="fix the Stribeck velocity [rad/s]")
    p.add_argument("--delta", type=float, default=None, help="fix the Stribeck exponent")
    p.add_argument(
        "--unconstrained",
        action="store_true",
        help="plain SVD least squares, without α̂ >= 0: an α̂ < 0 it finds is not written but refused by the quality "
        "gate (exit 2, naming it), where the default holds it at 0",
    )
    p.add_argument("--dt", type=float, default=0.005, help="log resampling period [s]")
    p.add_argument("--out", default="alpha_fit", help="output directory (alpha.yaml, residuals.png)")
    _add_options(p)
    p.set_defaults(func=run)


def add_topic_flags(p: argparse.ArgumentParser) -> None:
    """A bag's topics (a flag per row of the table the fit node declares its parameters from) and ``--joints``:
    ``servo-ff fit`` and ``servo-ff identify`` read bags alike."""
    from ..workflows.fit_options import TOPIC_OPTIONS

    topics = p.add_argument_group("bag topics (relative names are resolved under --namespace)")
    topics.add_argument(
        "--joints",
        help="comma-separated order of a bag's Float64MultiArray goals and gains (a forward command "
        "controller's joints; needed when they carry more than one value: they name no joints)",
    )
    for o in TOPIC_OPTIONS:
        topics.add_argument(
            o.flag, dest=o.name, default=None, help=o.description + (f" (default {o.default})" if o.default else "")
        )


def joints_flag(args: argparse.Namespace) -> list[str] | None:
    """``--joints a,b``: the names, or None."""
    return [j.strip() for j in args.joints.split(",")] if args.joints else None


def _add_options(p: argparse.ArgumentParser) -> None:
    """Bag topics and the quality gate: one flag per row of the table the fit node declares its parameters from."""
    from ..workflows.fit_options import GATE_OPTIONS

    add_topic_flags(p)
    gate = p.add_argument_group("quality gate (a fit failing it is refused: exit 2, nothing written)")
    for o in GATE_OPTIONS:
        gate.add_argument(
            o.flag, dest=o.name, type=float, default=None, help=f"{o.description} [{o.unit}] (default {o.default:g})"
        )


def check_flags(args: argparse.Namespace) -> None:
    """One ValueError line naming the first bad period or time flag (before: ``--dt 0`` an OverflowError traceback,
    ``--dt 1e-5`` minutes of resampling, ``--delay 20`` an IndexError traceback)."""
    from ..io.servo_log import check_dt

    check_dt(args.dt, "--dt")
    if args.delay is not None and not (math.isfinite(args.delay) and args.delay >= 0):
        raise ValueError(f"--delay must be a finite reaction time >= 0 s, got {args.delay}")


def unused_flags(args: argparse.Namespace) -> list[str]:
    """The flags given that the source's kind does not use (before: accepted, no effect, nothing said): trials and
    a dt for an ILC record only/not, the bag's topics for a rosbag2 only, a pendulum beside a URDF."""
    from ..io.logs import is_rosbag, lone_bag_file
    from ..workflows.alpha import is_ilc_record
    from ..workflows.fit_options import TOPIC_OPTIONS

    path = Path(args.source)  # a bag directory without metadata.yaml is read as its storage file: a bag too
    record, bag = is_ilc_record(path), is_rosbag(path) or lone_bag_file(path, say=False) is not None
    out = []
    if args.iteration >= 0 and not record:  # (< -1: refused as no trial, fit_alpha_source)
        out.append("--iteration (a trial of an ILC record .npz)")
    if record and args.vin is not None:
        out.append("--vin (an ILC record's supply is recorded per trial)")
    if record and args.dt != 0.005:
        out.append("--dt (an ILC record keeps its own period)")
    if not bag:
        given = [o.flag for o in TOPIC_OPTIONS if getattr(args, o.name, None)] + (["--joints"] if args.joints else [])
        out += [f"{flag} (a rosbag2's)" for flag in given]
    if args.urdf and any(v is not None for v in (args.mass, args.length, args.arm_mass)):
        out.append("--mass/--length/--arm-mass (the URDF gives τ_o)")
    return out


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from ..identification.plots import plot_alpha_residuals
    from ..workflows.alpha import fit_alpha_source, save_alpha_result
    from ..workflows.fit_options import gate_from, topic_values

    check_flags(args)
    if unused := unused_flags(args):
        raise ValueError(f"{args.source}: not used for this source, drop them: {'; '.join(unused)}")
    res = fit_alpha_source(
        args.source,
        joint=args.joint,
        urdf=args.urdf,
        iteration=args.iteration,
        kp=args.kp,
        dt=args.dt,
        vin=args.vin,
        topics=topic_values(vars(args)),
        gate=gate_from(vars(args)),
        joints=joints_flag(args),
        mass=args.mass,
        length=args.length,
        arm_mass=args.arm_mass,
        delay=args.delay,
        with_inertia=args.inertia,
        dq_s=args.dq_s,
        delta=args.delta,
        nonnegative=not args.unconstrained,
    )
    fit, data = res.fit, res.data
    if res.stopped_line():
        print(f"warning: {res.stopped_line()}", file=sys.stderr)
    out = Path(args.out)
    as_default = args.as_default or res.joint == "joint"  # "joint": a bench log's placeholder, no robot's joint
    path = save_alpha_result(res, out / "alpha.yaml", as_default=as_default)
    if as_default:
        print(f"alpha written as the 'default' entry (every joint; fitted on {res.joint!r})")
    gain = data.kp * data.u_bat[: fit.n_samples]
    plot_alpha_residuals(fit, data.dt, out / "residuals.png", gain)
    print(
        f"{data.source}: alpha = {np.array2string(fit.alpha, precision=5)}  dq_s = {fit.dq_s:.4g} rad/s  "
        f"delta = {fit.delta:.3g}  t_d = {fit.delay * 1e3:.0f} ms  kp = {data.kp:g} ({res.kp_source})  "
        f"U_bat = {np.mean(data.u_bat):.4g} V ({res.supply_source})"
    )
    print(
        f"rms residual {fit.rms:.4g} rad (goal-position equivalent), condition number {fit.condition_number:.3g}, "
        f"{fit.n_samples} samples -> {path}"
    )
    return 0
