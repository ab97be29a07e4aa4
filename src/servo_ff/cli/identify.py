"""``servo-ff identify``: fit friction models M1–M6 (+ kt, R, armature, q_offset) to logs by simulation MAE
(CMA-ES with IPOP restarts; Duclusaud et al., Extended Friction Models for the Physics Simulation of Servo
Actuators, §V).

The set-up, the checks and the summary are :mod:`servo_ff.workflows.identify`; this module parses the flags and
prints. Every input is checked before anything is written: unreadable or degenerate logs (too short, no motion,
constant goal, torque never on), a split with fewer than 2 logs, an actuator without a firmware law or search
bounds all end with exit code 2, one line naming the file and the reason, and no output directory.
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..workflows.identify import IdentifyOptions

from ..identification.cmaes_search import DEFAULT_STARTS
from ..models.friction_models import MODEL_NAMES
from .fit import add_topic_flags, joints_flag


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "identify",
        help="identify M1–M6 from bench logs (CMA-ES on simulation MAE, Duclusaud et al. §V)",
        description="Fit each friction model plus kt, R, armature and q_offset on 75%% of the logs, "
        "report train and validation MAE, and write bam JSON + ROS YAML per model and "
        "summary.json (split, seed, budget, firmware law, bounds, MAEs).",
    )
    p.add_argument(
        "logs",
        nargs="+",
        help="log files or folders of them (bam .json, .csv, rosbag2 directories/.mcap/.db3); a folder's sub-folders "
        "are not searched (give each), every entry not read is named in one line with why",
    )
    p.add_argument("--out", required=True, help="output directory for <model>.json/.yaml, summary.json, plot")
    p.add_argument("--models", nargs="+", default=list(MODEL_NAMES), help="friction models to fit (default: all)")
    p.add_argument(
        "--servo",
        dest="actuator",
        default=None,
        help="servo type (default: the --params file's actuator, else the logs' 'motor')",
    )
    p.add_argument(
        "--params",
        default=None,
        metavar="FILE",
        help="a parameter file (bam JSON or ROS YAML): its firmware law is used, and for an actuator "
        "without a bounds row its kt/R/armature are the reference of the search box",
    )
    p.add_argument(
        "--firmware",
        default=None,
        metavar="SPEC",
        help="firmware law: a law name (e.g. sts3215), a JSON/YAML file with a firmware object, or "
        "key=value,... over the actuator's law (kp and vin always come from each log)",
    )
    p.add_argument("--validation", type=float, default=0.25, help="validation fraction (0: fit on every log)")
    p.add_argument(
        "--max-evals",
        type=int,
        default=4000,
        help="candidate evaluations per model and independent search; all are used unless the search converged "
        "(see --stall-restarts) or --restarts ends it first",
    )
    p.add_argument(
        "--starts",
        type=int,
        default=DEFAULT_STARTS,
        help=f"independent IPOP-CMA-ES searches per model (seeds derived from --seed); the one of lowest training "
        f"MAE is kept (default {DEFAULT_STARTS})",
    )
    p.add_argument(
        "--patience", type=int, default=30, help="generations without a 0.1%% improvement before a CMA-ES run restarts"
    )
    p.add_argument(
        "--restarts",
        type=int,
        default=None,
        help="IPOP restarts per model (population doubled each; default: until the budget is spent)",
    )
    p.add_argument(
        "--stall-restarts",
        type=int,
        default=2,
        help="converged when this many restarts in a row improve the best MAE by < 0.1%% (0: always spend --max-evals)",
    )
    p.add_argument("--population", type=int, default=None, help="first CMA-ES population (default 4 + 3 ln n)")
    p.add_argument(
        "--fit-q-offset",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="fit q_offset [rad] (default: yes, as bam fits it for every model)",
    )
    p.add_argument(
        "--datasheet-prior",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="bound kt and R by the servo's datasheet stall torque and no-load speed (default: yes, for every "
        "servo with a datasheet row; stated in summary.json)",
    )
    p.add_argument(
        "--prior-factor", type=float, default=1.25, help="datasheet box: ×/÷ this factor (Maximo et al.: 1.25)"
    )
    p.add_argument(
        "--fit-firmware",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="fit the error gain and the target-velocity clamp where the firmware law has a clamp (Feetech STS, as "
        "bam does; default: yes)",
    )
    p.add_argument(
        "--swing-armature",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="hold the armature at the estimate from the training logs' torque-off swings (half-swings >= 0.1 rad; "
        "J = m·g·l·(Δt/2K)²) where they have one, else search it (default: yes; stated in summary.json)",
    )
    p.add_argument("--dt", type=float, default=0.005, help="resampling period [s]")
    p.add_argument(
        "--joint", default=None, help="joint of rosbag2 logs whose joint_states name several (default: their one joint)"
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the split and of CMA-ES")
    p.add_argument("--no-warm-start", action="store_true", help="start every model mid-box")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    add_topic_flags(p)
    p.set_defaults(func=run)


def _mrad(x: float | None) -> str:
    return "-" if x is None or not math.isfinite(x) else f"{x * 1e3:.3f}"


def options(args: argparse.Namespace) -> IdentifyOptions:
    """The workflow's options from the parsed flags (one field per flag)."""
    from ..workflows.fit_options import topic_values
    from ..workflows.identify import IdentifyOptions

    values = {f.name: getattr(args, f.name) for f in fields(IdentifyOptions) if hasattr(args, f.name)}
    bag = {
        "joints": tuple(joints_flag(args) or ()),
        "topics": tuple((k, v) for k, v in topic_values(vars(args)).items() if v),
    }
    return IdentifyOptions(**{**values, **bag, "models": tuple(args.models), "warm_start": not args.no_warm_start})


def run(args: argparse.Namespace) -> int:
    from ..identification.plots import plot_model_mae
    from ..io.atomic import atomic_path, atomic_write_text
    from ..io.servo_log import check_dt
    from ..workflows.identify import identify, prepare, prior_summary, summary

    check_dt(args.dt, "--dt")  # before: --dt 0 on bags an OverflowError traceback
    opts = options(args)
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"{out}: exists and is not a directory")
    logs, setup = prepare(args.logs, opts)
    print(
        f"{len(logs)} logs; actuator {setup.actuator}; models {' '.join(opts.models)}; firmware {setup.firmware_source}"
    )
    stated = setup.prior.describe() if setup.prior else prior_summary(setup, opts.datasheet_prior)["reason"]
    print(f"datasheet prior: {stated}")
    print(f"armature: {setup.swing.describe()}")
    out.mkdir(parents=True, exist_ok=True)

    def done(model, r):
        r.params.save_json(out / f"{model}.json")
        r.params.save_yaml(out / f"{model}.yaml")
        start = f" (warm start {_mrad(r.start_mae)})" if r.start_mae is not None else ""
        print(
            f"{model}: train MAE {_mrad(r.train_mae)} mrad{start}, validation MAE {_mrad(r.validation_mae)} "
            f"mrad, {r.evaluations} evals in {len(r.runs)} run(s), {r.seconds:.1f} s -> {out / (model + '.json')}"
        )

    results = identify(logs, setup, opts, progress=not args.quiet, callback=done)
    atomic_write_text(out / "summary.json", json.dumps(summary(opts, setup, results), indent=2, allow_nan=False))
    with atomic_path(out / "validation_mae.png") as tmp:
        plot_model_mae(results, tmp)
    print(f"{'model':6} {'train MAE [mrad]':>17} {'validation MAE [mrad]':>22}")
    for m, r in results.items():
        print(f"{m:6} {_mrad(r.train_mae):>17} {_mrad(r.validation_mae):>22}")
    if not results[opts.models[0]].validation_logs:
        print("no validation logs (--validation 0): validation MAE not available")
    return 0
