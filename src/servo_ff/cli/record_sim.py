"""``servo-ff record-sim``: synthetic bench logs (004 trajectories × Table I grid) from a preset or params file."""

from __future__ import annotations

import argparse
from pathlib import Path

from ._params import add_preset_arguments, preset_of


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "record-sim",
        help="write synthetic pendulum-bench logs simulated with a parameter set",
        description="Simulate the four Duclusaud et al. identification trajectories over a grid of masses, "
        "lengths and P gains (Duclusaud et al. Table I) and write one log per run.",
    )
    add_preset_arguments(
        p,
        "preset servo (mx64, mx106, xl320, xl330, sts3215, mx28, mg995)",
        "preset friction model m1..m6 (sts3215, mx28, mg995: m1 only)",
    )
    p.add_argument("--params", help="bam JSON / ROS YAML parameter file (instead of --servo/--model)")
    p.add_argument("--out", required=True, help="output directory (created)")
    p.add_argument(
        "--format",
        choices=("json", "csv", "mcap", "sqlite3"),
        default="json",
        help="bam JSON, CSV, or a rosbag2 (mcap, sqlite3) per log (default json)",
    )
    p.add_argument("--masses", type=float, nargs="+", default=None, help="pendulum masses [kg] (0.5 1 1.5)")
    p.add_argument("--lengths", type=float, nargs="+", default=None, help="pendulum lengths [m] (0.1 0.15 0.2)")
    p.add_argument(
        "--kps",
        type=float,
        nargs="+",
        default=None,
        help="firmware P gains, register units (default: Table I's 1/8, 1/4, 1/2, 1 of the servo's default kp: "
        "4 8 16 32 for an MX, 50 100 200 400 for an XL330)",
    )
    p.add_argument("--trajectories", nargs="+", default=None, help="subset of the four 004 trajectories")
    p.add_argument("--arm-mass", type=float, default=0.0, help="pendulum arm mass [kg]")
    p.add_argument("--duration", type=float, default=6.0, help="log duration [s]")
    p.add_argument("--dt", type=float, default=0.005, help="log period [s], in [1e-4, 1]")
    p.add_argument("--substeps", type=int, default=1, help="integrate at dt/substeps")
    p.add_argument("--noise", type=float, default=0.0, help="position noise std [rad]")
    p.add_argument("--speed-noise", type=float, default=0.0, help="speed noise std [rad/s]")
    p.add_argument("--quantize", type=int, default=0, help="encoder counts per revolution (e.g. 4096; 0 = off)")
    p.add_argument("--seed", type=int, default=0, help="seed of the noise")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..identification.synthetic import (
        TABLE1_LENGTHS,
        TABLE1_MASSES,
        bench_grid,
        log_filename,
        simulate_logs,
        table1_kps,
    )
    from ..io.bam_logs import write_bam_json, write_csv
    from ..io.servo_log import check_dt
    from ..models.params import load_params
    from ..trajectories import IDENTIFICATION_TRAJECTORIES

    if args.quantize < 0:  # before: -5 wrote 1.2566 rad position steps, exit 0
        raise ValueError(f"--quantize must be encoder counts per revolution > 0 (0: off), got {args.quantize}")
    check_dt(args.dt, "--dt")  # before: --dt 1e-7 ran for minutes without a word (fit/identify bound it)
    params = preset_of(args) or load_params(args.params)
    grid = bench_grid(
        args.masses or TABLE1_MASSES,
        args.lengths or TABLE1_LENGTHS,
        args.kps or table1_kps(params.firmware.kp),  # before: 4…32 for every servo (an XL330's 400: no motion)
        args.trajectories or tuple(IDENTIFICATION_TRAJECTORIES),
    )
    logs = simulate_logs(
        params,
        grid,
        dt=args.dt,
        duration=args.duration,
        arm_mass=args.arm_mass,
        noise=args.noise,
        speed_noise=args.speed_noise,
        counts_per_rev=args.quantize or None,
        substeps=args.substeps,
        seed=args.seed,
    )
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for i, lg in enumerate(logs):
        name = out / log_filename(lg, i)
        if args.format == "json":
            write_bam_json(lg, f"{name}.json")
        elif args.format == "csv":
            write_csv(lg, f"{name}.csv")
        else:
            from ..io.rosbag_write import write_rosbag

            if name.exists():
                raise FileExistsError(f"{name} exists; rosbag2 writers never overwrite")
            write_rosbag(lg, name, storage=args.format)
    kps = " ".join(f"{k:g}" for k in sorted({g["kp"] for g in grid}))
    print(f"wrote {len(logs)} {args.format} logs of {params.actuator}/{params.model} (kp {kps}) to {out}")
    return 0
