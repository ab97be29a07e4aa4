"""``servo-ff plot drive-backdrive``: the drive/backdrive diagram of Duclusaud et al. (Extended Friction Models) Fig.
2/4 for any parameter set."""

from __future__ import annotations

import argparse
from pathlib import Path

from servo_ff.cli._params import add_preset_arguments, preset_of
from servo_ff.models.drive_backdrive import plot_drive_backdrive
from servo_ff.models.params import MODEL_NAMES, load_params
from servo_ff.models.presets import SERVO_NAMES


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("plot", help="plots of a parameter set")
    kinds = p.add_subparsers(dest="kind", required=True, metavar="KIND")
    d = kinds.add_parser("drive-backdrive", help="drive/backdrive diagram (Duclusaud et al. Fig. 2, 4)")
    add_preset_arguments(d, f"preset: {', '.join(SERVO_NAMES)}", f"friction model: {', '.join(MODEL_NAMES)}")
    d.add_argument("--params", help="bam JSON or ROS YAML parameter file (instead of --servo/--model)")
    d.add_argument("--tau-max", type=float, default=3.0, help="largest motor torque on the axis [N·m]")
    d.add_argument("--velocities", default="0,1,2", help="comma-separated velocities [rad/s]")
    d.add_argument("--out", default=None, help="PNG path (default out/drive_backdrive_<servo>_<model>.png)")
    d.set_defaults(func=run_drive_backdrive)


def run_drive_backdrive(args: argparse.Namespace) -> int:
    params = preset_of(args) or load_params(args.params)
    try:
        velocities = tuple(float(v) for v in args.velocities.split(","))
    except ValueError:
        raise ValueError(f"--velocities must be comma-separated numbers [rad/s], got {args.velocities!r}") from None
    out = Path(args.out or f"out/drive_backdrive_{params.actuator}_{params.model}.png")
    if out.is_dir() or out.suffix.lower() != ".png":  # before: 'wrote X' while matplotlib wrote X.png
        raise ValueError(f"--out {out}: give a FILE.png path")
    out.parent.mkdir(parents=True, exist_ok=True)
    plot_drive_backdrive(params, str(out), tau_m_max=args.tau_max, velocities=velocities)
    print(f"wrote {out}")
    return 0
