"""``servo-ff ilc``: learn a goal-position command curve by Arimoto ILC (Schwarz & Behnke Eq. 20–21) on the
simulated servo + pendulum; writes the ILC record (every iteration) and the convergence plot."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ..identification.ilc import DIVERGE_FACTOR, DIVERGE_GROWTH, ILCStop
from ._params import add_preset_arguments

PRESET_KP = 4.0  # [register units] the default gain on a preset (a low gain leaves the command something to learn)


def check_out_dir(out: Path) -> None:
    """Create ``--out`` and check it is a writable directory before any learning (before: checked after it)."""
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out}: exists and is not a directory")
    out.mkdir(parents=True, exist_ok=True)
    if not os.access(out, os.W_OK | os.X_OK):
        raise ValueError(f"--out {out}: directory is not writable")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "ilc",
        help="iterative learning control of a command curve on the simulated servo",
        description="Run Arimoto ILC (Schwarz & Behnke Eq. 20-21) on the simulated servo driving a pendulum; "
        "stop at the windowed error threshold (Eq. 28) or the iteration cap.",
    )
    add_preset_arguments(p, "preset servo", "preset friction model m1..m6")
    p.add_argument("--params", help="parameter file instead of the preset")
    p.add_argument(
        "--kp",
        type=float,
        default=None,
        help=f"firmware P gain (register units); default: the --params file's, else {PRESET_KP:g}",
    )
    p.add_argument("--mass", type=float, default=1.0, help="pendulum mass [kg]")
    p.add_argument("--length", type=float, default=0.15, help="pendulum length [m]")
    p.add_argument("--trajectory", default="schwarz_behnke_reference", help="reference trajectory name")
    p.add_argument("--dt", type=float, default=0.005, help="time step [s], in [1e-4, 1]")
    p.add_argument("--gain", type=float, default=1.0, help="learning gain λ")
    p.add_argument("--delay", default="auto", help="learning shift t_d [s] or 'auto' (command/reaction lag)")
    p.add_argument(
        "--initial",
        default="reference",
        help="zero | reference | model:<servo>/<model> (Eq. 19 curve from that preset's α̂)",
    )
    p.add_argument("--threshold", type=float, default=0.02, help="windowed error threshold [rad]")
    p.add_argument("--window", type=float, default=0.025, help="window D [s] (Eq. 28)")
    p.add_argument("--max-iterations", type=int, default=30, help="iteration cap")
    p.add_argument(
        "--diverge-factor",
        type=float,
        default=DIVERGE_FACTOR,
        help="stop as diverged when the windowed error exceeds this × the first's (0: off; as servo_ilc_node)",
    )
    p.add_argument(
        "--diverge-growth",
        type=int,
        default=DIVERGE_GROWTH,
        help="stop as diverged when the error grows this many iterations in a row, to over twice its lowest (0: off)",
    )
    p.add_argument("--joint", default="pendulum", help="joint name written into the ILC record")
    p.add_argument("--out", default="ilc_out", help="output directory (ilc.npz, ilc.png)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..identification.alpha_fit import command_reaction_lag
    from ..identification.pendulum import output_torque, simulated_servo
    from ..identification.plots import plot_ilc
    from ..io.ilc_record import save_ilc_record
    from ..io.servo_log import check_dt
    from ..models.presets import preset
    from ..models.schwarz_behnke import alpha_hat_from_actuator, goal_position_from_torque
    from ..models.stepper import PendulumLoad
    from ..trajectories import trajectory
    from ..workflows.ilc import ilc_on_pendulum
    from ._params import preset_of, resolve_params

    check_dt(args.dt, "--dt")  # before: no lower bound (--dt 1e-7 ran for minutes); fit/identify bound it
    params = resolve_params(args.params, preset_of(args), None)
    out = Path(args.out)
    check_out_dir(out)
    kp = args.kp if args.kp is not None else (params.firmware.kp if args.params else PRESET_KP)
    if args.kp is None:
        print(f"kp {kp:g}: {'from ' + args.params if args.params else 'the preset default (--kp to change)'}")
    params = params.with_(firmware=params.firmware.with_(kp=kp))
    tr = trajectory(args.trajectory, dt=args.dt)
    load = PendulumLoad(args.mass, args.length)
    if args.delay == "auto":
        delay = command_reaction_lag(tr.q, simulated_servo(params, load, args.dt, float(tr.q[0]))(tr.q), args.dt)
    else:
        try:
            delay = float(args.delay)
        except ValueError:
            raise ValueError(f"--delay must be seconds or 'auto', got {args.delay!r}") from None
    initial = args.initial
    if initial.startswith("model:"):
        servo, _, model = initial[len("model:") :].partition("/")
        alpha = alpha_hat_from_actuator(preset(servo, model or "m1"), with_inertia=True)
        tau = output_torque(load, tr.q, tr.ddq)
        initial = goal_position_from_torque(tr.q, tau, tr.dq, tr.ddq, alpha, kp, params.firmware.vin)
    try:
        rec, res = ilc_on_pendulum(
            params,
            load,
            tr,
            kp,
            dt=args.dt,
            gain=args.gain,
            delay=delay,
            initial=initial,
            threshold=args.threshold,
            window=args.window,
            max_iterations=args.max_iterations,
            joint=args.joint,
            progress=True,
            diverge_factor=args.diverge_factor,
            diverge_growth=args.diverge_growth,
        )
    except ILCStop as e:
        if e.kind == "interrupted":  # Ctrl-C before any trial ended: nothing to write
            print("interrupted before the first trial ended: nothing written")
            raise KeyboardInterrupt from None
        raise
    path = save_ilc_record(rec, out / "ilc.npz")
    plot_ilc(
        res,
        out / "ilc.png",
        title=f"ILC on {params.actuator}/{params.model}, kp {kp:g}, λ {args.gain:g}, t_d {delay * 1e3:.0f} ms",
    )
    for k, e in enumerate(rec.errors):
        print(f"iteration {k:2d}: windowed error {float(e):.4f} rad")
    it = rec.converged_iteration
    if res.stopped:
        print(f"stopped: {res.stopped}; the {len(rec.errors)} trials done are written")
    print(
        f"converged after {it} iterations"
        if it >= 0
        else f"not converged to {args.threshold} rad in {args.max_iterations} iterations"
    )
    print(f"wrote {path} (the ILC record servo-ff fit and servo_fit_node read) and {out / 'ilc.png'}")
    if res.stop_kind == "interrupted":
        return 130
    return 0 if it >= 0 else 1
