"""CLI: ``ff-alpha`` (write physics-derived α̂ for a URDF's joints) and ``ff-sim`` (the Schwarz & Behnke §5.2 MuJoCo
run)."""

from __future__ import annotations

import argparse


def _alpha(args: argparse.Namespace) -> int:
    from ..dynamics.alpha import alpha_table_from_actuator, save_alpha
    from ..dynamics.robot import load_robot
    from ..models.presets import preset

    servo, _, model = args.preset.partition("/")
    robot = load_robot(args.urdf)
    table = alpha_table_from_actuator(preset(servo, model or "m4"), robot.joint_names)
    save_alpha(table, args.output)
    print(
        f"wrote α̂ for {robot.n_joints} joints of {robot.path.name} from preset {servo}/{model or 'm4'} to {args.output}"
    )
    return 0


def _sim(args: argparse.Namespace) -> int:
    from ..dynamics.mujoco_humanoid import KP_HIGH
    from ..workflows.feedforward_experiment import format_table, plot_knee, run_experiment

    if args.steps < 1:
        raise ValueError(f"--steps must be >= 1, got {args.steps}")
    kp_high = KP_HIGH if args.kp_high is None else args.kp_high
    res = run_experiment(args.steps, kp_high, progress=True)
    print(format_table(res, kp_high))
    a, c = res["high"], res["ff"]
    print(f"energy_reduction={1 - c.energy.sum() / a.energy.sum():.4f} tracking_rms_ratio={c.rms() / a.rms():.4f}")
    if args.plot:
        print("plot:", plot_knee(res, args.plot))
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "ff-alpha", help="write α̂ (Schwarz & Behnke Eq. 19) for every joint of a URDF from a servo preset"
    )
    p.add_argument("--urdf", required=True, help="robot URDF (joint names are read from it)")
    p.add_argument("--preset", default="mx106/m4", help="servo/model, e.g. mx106/m4 (default)")
    p.add_argument("-o", "--output", required=True, help="output .yaml or .json")
    p.set_defaults(func=_alpha)

    s = subparsers.add_parser(
        "ff-sim",
        help="simulate the humanoid stepping in place under (a) high-gain P, "
        "(b) low-gain P, (c) low-gain P + feed-forward (MuJoCo)",
    )
    s.add_argument("--steps", type=int, default=40)
    s.add_argument(
        "--kp-high",
        type=float,
        default=None,
        help="register P gain of (a) (default: the humanoid's high gain, mujoco_humanoid.KP_HIGH); (b)/(c) use 0.35×",
    )
    s.add_argument("--plot", default=None, help="write the knee tracking plot (PNG) here")
    s.set_defaults(func=_sim)
