"""``servo-ff tf …``: datasheet servo models and continuous-time identification (Maximo et al., Santana
et al., Wada et al.; see docs/references.md).

    servo-ff tf mx28   [--P 32 --I 0 --D 0 --vs 12 --inductance H --plot DIR]
    servo-ff tf mg995  [--den A1 A0 | --csv FILE] [--load-mass KG --load-radius M --load-distance M] [--plot DIR]
    servo-ff tf srivc  --csv FILE [--n N --m M | --structure auto|PID|PI|PD|D-P|P] [--lam RAD_S] [--ls]
    servo-ff tf prbs   --out FILE --samples N --dt S --amplitude RAD --clock S
    servo-ff tf pot    --csv FILE   (columns: theta [rad], volts [V])
    servo-ff tf torque --den1 1 A2 A1 A0 --den2 1 A2 A1 A0 --delta-j KGM2 [--csv FILE --out FILE]

CSV files have a header row; time series use columns ``u`` (input/reference, rad) and ``y`` (output, rad) and
either a ``t`` column [s] or ``--dt``.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ..workflows.tf_study import _fmt_poly, mx28_report, plot_bode, plot_steps, print_step_table, read_series
from . import lazy_import

tfm = lazy_import("servo_ff.models.transfer_functions")
_study = lazy_import("servo_ff.models.step_study")


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "tf",
        help="datasheet transfer functions and SRIVC identification (Maximo et al., Santana et al., Wada et al.)",
        description=__doc__,
    )
    sub = p.add_subparsers(dest="tf_command", required=True, metavar="TF_COMMAND")

    q = sub.add_parser("mx28", help="MX-28AT datasheet model: poles, closed loop, frequency and step responses")
    q.add_argument("--P", type=float, default=32.0, help="control-table P (K_p^c = P/8; default 32)")
    q.add_argument("--I", type=float, default=0.0, help="control-table I (K_i^c = 1000 I/2048)")
    q.add_argument("--D", type=float, default=0.0, help="control-table D (K_d^c = 4 D/1000)")
    q.add_argument("--vs", type=float, default=12.0, help="supply voltage V_s [V] (default 12)")
    q.add_argument(
        "--inductance",
        type=float,
        default=None,
        help="override L [H] (Table 1: 2.03e-3; the paper's stated poles need 2.03e-4)",
    )
    q.add_argument("--load-inertia", type=float, default=0.0, help="J_l [kg m^2] (default 0)")
    q.add_argument("--dt", type=float, default=1e-3, help="controller period of the nonlinear simulation [s]")
    q.add_argument("--plot", type=Path, default=None, help="directory for PNG plots")
    q.set_defaults(func=cmd_mx28)

    q = sub.add_parser("mg995", help="MG995 hobby servo: physical parameters from an identified TF (Santana et al.)")
    q.add_argument(
        "--den",
        type=float,
        nargs=2,
        metavar=("A1", "A0"),
        default=None,
        help="identified denominator s^2 + A1 s + A0 (default: Santana et al. Eq. 5)",
    )
    q.add_argument("--csv", type=Path, default=None, help="PRBS experiment (u, y [, t]); identified by SRIVC n=2, m=0")
    q.add_argument("--dt", type=float, default=None, help="sample time [s] if the CSV has no t column")
    q.add_argument(
        "--load-mass", type=float, default=0.1, help="validation cylinder mass [kg] (Santana et al. §5.7: 0.1)"
    )
    q.add_argument("--load-radius", type=float, default=0.022, help="cylinder radius [m] (0.022)")
    q.add_argument("--load-distance", type=float, default=0.05, help="cylinder offset from the axis [m] (0.05)")
    q.add_argument("--vs", type=float, default=5.0, help="supply voltage / saturation [V] (default 5)")
    q.add_argument("--plot", type=Path, default=None, help="directory for PNG plots")
    q.set_defaults(func=cmd_mg995)

    q = sub.add_parser("srivc", help="identify a continuous-time TF from sampled u/y data (Wada et al.)")
    q.add_argument("--csv", type=Path, required=True, help="CSV with columns u, y and t (or give --dt)")
    q.add_argument("--dt", type=float, default=None, help="sample time [s] if the CSV has no t column")
    q.add_argument("--n", type=int, default=None, help="denominator order")
    q.add_argument("--m", type=int, default=None, help="numerator order")
    q.add_argument(
        "--structure", default=None, help="auto (select over PID, PI, PD, D-P by YIC and R2_T) or one structure name"
    )
    q.add_argument("--lam", type=float, default=None, help="initial SVF cut-off [rad/s]")
    q.add_argument("--ls", action="store_true", help="also print the plain least-squares (equation-error) fit")
    q.set_defaults(func=cmd_srivc)

    q = sub.add_parser("prbs", help="write a PRBS excitation to CSV (columns t, u)")
    q.add_argument("--out", type=Path, required=True, help="CSV file to write (t [s], u [rad])")
    q.add_argument("--samples", type=int, default=2000, help="number of samples")
    q.add_argument("--dt", type=float, default=0.01, help="sample time [s]")
    q.add_argument("--amplitude", type=float, default=math.radians(10), help="amplitude [rad] (default 10 deg)")
    q.add_argument("--clock", type=float, default=0.07, help="bit duration [s] (001: 0.07)")
    q.add_argument("--nbits", type=int, default=9, help="shift-register length (period 2^nbits - 1 bits)")
    q.add_argument("--seed", type=int, default=None, help="seed of the register's start state")
    q.set_defaults(func=cmd_prbs)

    q = sub.add_parser("pot", help="potentiometer calibration v = alpha*theta + beta (Santana et al. Eq. 1-4)")
    q.add_argument("--csv", type=Path, required=True, help="CSV with columns theta [rad] and volts [V]")
    q.set_defaults(func=cmd_pot)

    q = sub.add_parser("torque", help="reference-to-torque model from two inertia experiments (Wada et al. Eq. 9-10)")
    for k in (1, 2):
        q.add_argument(
            f"--den{k}",
            type=float,
            nargs=4,
            required=True,
            metavar=("1", "A2", "A1", "A0"),
            help=f"denominator of experiment {k}'s identified transfer function, p^3 + A2 p^2 + A1 p + A0",
        )
    q.add_argument("--delta-j", type=float, required=True, help="inertia of experiment 2 minus experiment 1 [kg m^2]")
    q.add_argument("--csv", type=Path, default=None, help="optional u, y(=phi) [, t] data to estimate torque on")
    q.add_argument("--dt", type=float, default=None, help="sample time [s] (default: from the CSV's t column)")
    q.add_argument("--out", type=Path, default=None, help="CSV to write t [s], tau [N m]")
    q.set_defaults(func=cmd_torque)


def cmd_mx28(args) -> int:
    r = mx28_report(args.P, args.I, args.D, args.vs, args.inductance, args.load_inertia, args.dt)
    ds = r["ds"]
    print(
        f"MX-28AT datasheet (Maximo et al. Table 1): R={ds.R} L={ds.L} Kt={ds.Kt} Kw={ds.Kw} Jm={ds.Jm} N={ds.N} "
        f"eta={ds.eta} bm={ds.bm}"
    )
    print(
        f"eta from stall torques (Eq. 13): {tfm.gearbox_efficiency(2.5, 0.0155, 193):.4f}; "
        f"bm from no-load data (Eq. 17): {tfm.motor_viscous_friction(0.0107, 0.0092, tfm.rpm_to_rad_s(10600)):.4g}"
    )
    Kp, Ki, Kd = r["gains"]
    print(
        f"gains P={args.P} I={args.I} D={args.D} at Vs={args.vs} V -> Kp={Kp:.4g} V/rad Ki={Ki:.4g} V/(rad·s) "
        f"Kd={Kd:.4g} V·s/rad"
    )
    print("open-loop poles U->theta (Eq. 28) [rad/s]: " + ", ".join(f"{p.real:.4g}" for p in r["poles"]))
    print("closed loop (Eq. 30): num " + _fmt_poly(r["closed"].num[0][0]) + " den " + _fmt_poly(r["closed"].den[0][0]))
    print(
        "reduced, L=0 (Eq. 31): num " + _fmt_poly(r["reduced"].num[0][0]) + " den " + _fmt_poly(r["reduced"].den[0][0])
    )
    print(f"closed-loop DC gain: {float(np.real(__import__('control').dcgain(r['closed']))):.6f}")
    w, mag, ph = r["bode"]
    print(f"{'ω [rad/s]':>9} {'mag [dB]':>9} {'phase [deg]':>11}")
    for k in range(w.size):
        print(f"{w[k]:9.0f} {mag[k]:9.2f} {ph[k]:11.1f}")
    labels = [f"{c} cnt" for c in tfm.VALIDATION_STEPS_COUNTS]
    print_step_table(r["steps"], labels)
    if args.plot:
        plot_bode(r["closed"], args.plot / "tf_mx28_bode.png", "MX-28AT closed loop (Eq. 30)", r["bode"])
        plot_steps(
            r["steps"],
            labels,
            args.plot / "tf_mx28_steps.png",
            "MX-28AT steps, Vs = %g V" % args.vs,
            unit_scale=4096 / (2 * math.pi),
            unit="counts",
        )
        print(f"plots written to {args.plot}/tf_mx28_bode.png, tf_mx28_steps.png")
    return 0


def cmd_mg995(args) -> int:
    from ..identification.hobby_servo import MG995_IDENTIFIED_DEN, physical_parameters_from_tf
    from ..identification.srivc import srivc
    from ..models.servo_nonlinear import cylinder_load_inertia

    if args.csv is not None:
        cols, dt = read_series(args.csv, args.dt)
        mod = srivc(cols["u"], cols["y"], dt, 2, 0)
        den = mod.den
        print(
            f"SRIVC (n=2, m=0) on {args.csv}: num {_fmt_poly(mod.num)} den {_fmt_poly(den)} "
            f"R2_T={mod.r2t:.4f} YIC={mod.yic:.2f}"
        )
    else:
        den = [1.0, *args.den] if args.den else list(MG995_IDENTIFIED_DEN)
        print(f"identified TF denominator {_fmt_poly(den)} ({'--den' if args.den else 'Santana et al. Eq. 5'})")
    hm = physical_parameters_from_tf(den)
    ds = hm.datasheet
    print("physical parameters (Santana et al. Eq. 24-29, Table 3):")
    for k, v in (
        ("N", ds.N),
        ("Kt [Nm/A]", ds.Kt),
        ("Kw [rad/(V s)]", ds.Kw),
        ("eta", ds.eta),
        ("bm [Nms]", ds.bm),
        ("Jm [kg m^2]", ds.Jm),
        ("R [ohm]", ds.R),
        ("KP [V/rad]", hm.KP),
    ):
        print(f"  {k:>15} = {v:.6g}")
    J_l = cylinder_load_inertia(args.load_mass, args.load_radius, args.load_distance)
    loaded = tfm.closed_loop_tf(ds, hm.KP, J_l=J_l, include_inductance=False)
    print(f"load validation (Santana et al. §5.7): J_l = {J_l:.4g} kg m^2 -> Eq. 23 den {_fmt_poly(loaded.den[0][0])}")
    amps = np.radians([10.0, 20.0, 40.0, 60.0])
    st = _study.step_study(
        ds, amps, Kp=hm.KP, Vs=args.vs, dt=1e-3, duration=1.0, counts_per_rev=None, include_inductance=False
    )
    print_step_table(st, [f"{a:.0f} deg" for a in np.degrees(amps)])
    if args.plot:
        plot_steps(
            st,
            [f"{a:.0f} deg" for a in np.degrees(amps)],
            args.plot / "tf_mg995_steps.png",
            f"MG995 steps, {args.vs:g} V saturation",
            unit_scale=180 / math.pi,
            unit="deg",
        )
        print(f"plot written to {args.plot}/tf_mg995_steps.png")
    return 0


def _print_model(label: str, mod) -> None:
    print(f"{label}: n={mod.n} m={mod.m}  num {_fmt_poly(mod.num)}  den {_fmt_poly(mod.den)}")
    print(
        f"   std(theta) {_fmt_poly(mod.std)}  R2_T={mod.r2t:.5f}  YIC={mod.yic:.3f}  iterations={mod.iterations}"
        f"{'' if mod.converged else ' (not converged)'}"
    )
    print("   poles " + ", ".join(f"{p:.4g}" for p in mod.poles()))


def cmd_srivc(args) -> int:
    from ..identification.controller_structure import orders_for, select_controller_structure
    from ..identification.srivc import srivc
    from ..identification.tf_fit import fit_tf_ls

    cols, dt = read_series(args.csv, args.dt)
    u, y = cols["u"], cols["y"]
    if args.structure is not None and (args.n is not None or args.m is not None):
        raise ValueError("give either --structure or --n/--m, not both")
    if args.structure == "auto":
        sel = select_controller_structure(u, y, dt, lam=args.lam)
        print(f"{'structure':>9} {'n':>2} {'m':>2} {'YIC':>9} {'R2_T':>8}")
        for name, n, m, yic, r2, note in sel.table():
            print(f"{name:>9} {n:2d} {m:2d} {yic:9.3f} {r2:8.5f}  {note[:70]}")
        print(
            f"selected embedded controller: {sel.structure}"
            + (" (or P: same orders)" if sel.structure == "D-P" else "")
        )
        mod = sel.model
        n, m = mod.n, mod.m
    else:
        if args.structure is not None:
            n, m = orders_for(args.structure)
        elif args.n is not None and args.m is not None:
            n, m = args.n, args.m
        else:
            raise ValueError("give --n and --m, or --structure (auto or a controller name)")
        mod = srivc(u, y, dt, n, m, lam=args.lam)
    _print_model("SRIVC", mod)
    if args.ls:
        _print_model("LS (equation error)", fit_tf_ls(u, y, dt, n, m, lam=args.lam, require_stable=False))
    return 0


def _write_csv(path: Path, header: str, rows: np.ndarray) -> None:
    """``rows`` under ``header`` to the CSV ``path``, atomically (io/atomic.py: an error or Ctrl-C leaves no
    temporary behind; before, ``<out>.tmp`` stayed); a directory ``path`` is refused in one line."""
    from ..io.atomic import atomic_path

    if path.is_dir():  # before: "[Errno 21] Is a directory: 'out.tmp' -> 'out'" and out.tmp left
        raise IsADirectoryError(f"--out {path}: is a directory; give a CSV file name")
    with atomic_path(path) as tmp:
        np.savetxt(tmp, rows, delimiter=",", header=header, comments="", fmt="%.9g")


def cmd_prbs(args) -> int:
    from ..identification.prbs import prbs

    u = prbs(args.samples, args.dt, amplitude=args.amplitude, clock=args.clock, nbits=args.nbits, seed=args.seed)
    t = np.arange(u.size) * args.dt
    _write_csv(args.out, "t,u", np.column_stack([t, u]))
    print(f"wrote {u.size} PRBS samples to {args.out}")
    return 0


def cmd_pot(args) -> int:
    from ..identification.potentiometer import calibrate_potentiometer

    cols, _ = read_series(args.csv, 1.0, columns=("theta", "volts"))
    cal = calibrate_potentiometer(cols["theta"], cols["volts"])
    print(
        f"v = {cal.alpha:.6g} V/rad * theta + {cal.beta:.6g} V   ({cal.alpha * math.pi / 180:.6g} V/deg; "
        f"rms residual {cal.rms_residual:.3g} V)"
    )
    return 0


def cmd_torque(args) -> int:
    from ..identification.reference_torque import estimate_torque, two_inertia_parameters

    tm = two_inertia_parameters(args.den1, args.den2, args.delta_j)
    print(
        f"J = {tm.J:.5g} kg m^2, D = {tm.D:.5g} N m s/rad, R/L = {tm.R_over_L:.5g} 1/s, "
        f"KP kt/L = {tm.c0:.5g}, (ke+KD) kt/L = {tm.c1:.5g}  (a1' misfit {100 * tm.consistency:.1f} %)"
    )
    print(f"tau = -({tm.c1:.4g} p + {tm.c0:.4g})/(p + {tm.R_over_L:.4g}) phi + {tm.c0:.4g}/(p + {tm.R_over_L:.4g}) u")
    if args.csv is not None:
        cols, dt = read_series(args.csv, args.dt)
        tau = estimate_torque(tm, cols["u"], cols["y"], dt)
        print(f"torque over {tau.size} samples: min {tau.min():.4g}, max {tau.max():.4g} N m")
        if args.out:
            _write_csv(args.out, "t,tau", np.column_stack([np.arange(tau.size) * dt, tau]))
            print(f"wrote {args.out}")
    return 0
