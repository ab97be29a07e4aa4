"""``servo-ff identify``: fit friction models M1–M6 (+ kt, R, armature, q_offset) to logs by simulation MAE
(CMA-ES with IPOP restarts; Duclusaud et al., Extended Friction Models for the Physics Simulation of Servo
Actuators, §V).

Every input is checked before anything is written: unreadable or degenerate logs (too short, no motion,
constant goal, torque never on), a split with fewer than 2 logs, an actuator without a firmware law or search
bounds all end with exit code 2, one line naming the file and the reason, and no output directory.
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..models.friction_models import MODEL_NAMES


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "identify",
        help="identify M1–M6 from bench logs (CMA-ES on simulation MAE, Duclusaud et al. §V)",
        description="Fit each friction model plus kt, R, armature and q_offset on 75%% of the logs, "
        "report train and validation MAE, and write bam JSON + ROS YAML per model and "
        "summary.json (split, seed, budget, firmware law, bounds, MAEs).",
    )
    p.add_argument("logs", nargs="+", help="log files or directories (bam .json, .csv, rosbag2)")
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
        help="candidate evaluations per model; all are used unless the search converged (see "
        "--stall-restarts) or --restarts ends it first",
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
    p.add_argument("--dt", type=float, default=0.005, help="resampling period [s]")
    p.add_argument("--seed", type=int, default=0, help="seed of the split and of CMA-ES")
    p.add_argument("--no-warm-start", action="store_true", help="start every model mid-box")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


@dataclass(frozen=True)
class Setup:
    """What the fit runs with, resolved (and checked) before anything is written."""

    actuator: str
    firmware: Any  # FirmwareLaw
    firmware_source: str
    reference: Any  # ActuatorParams | None
    bounds_source: str
    prior: Any = None  # DatasheetPrior | None


def prior_summary(setup: Setup, enabled: bool) -> dict[str, Any]:
    """summary.json's statement of the datasheet prior (or why there is none)."""
    if setup.prior is not None:
        return setup.prior.to_dict()
    reason = "--no-datasheet-prior" if not enabled else f"no datasheet row for {setup.actuator}"
    return {"kind": "none", "reason": reason}


def firmware_fit_summary(setup: Setup, enabled: bool) -> dict[str, Any]:
    """summary.json's statement of the firmware constants fitted (error gain, target-velocity clamp)."""
    from ..identification.search_space import FIRMWARE_KEY_FACTORS, FIRMWARE_KEYS_SOURCE, firmware_keys

    keys = firmware_keys(setup.firmware) if enabled else []
    if not keys:
        why = "--no-fit-firmware" if not enabled else "the firmware law has no target-velocity clamp"
        return {"keys": [], "reason": why}
    return {
        "keys": keys,
        "bounds_factor_of_law": {k: FIRMWARE_KEY_FACTORS[k] for k in keys},
        "source": FIRMWARE_KEYS_SOURCE,
    }


def _load_reference(path: str, firmware_spec: str | None):
    """The ``--params`` file; an unknown actuator without a firmware object needs ``--firmware``."""
    from ..models.firmware import firmware_from_spec
    from ..models.params import ActuatorParams, ParameterError, load_params

    try:
        return load_params(path)
    except ParameterError:
        if firmware_spec is None or Path(path).suffix.lower() in (".yaml", ".yml"):
            raise
        return ActuatorParams.load_json(path, firmware=firmware_from_spec(firmware_spec))


def resolve(args: argparse.Namespace, logs: list) -> Setup:
    """Actuator, firmware law (and its source) and search-box reference from the flags, the file and the logs."""
    from ..identification.simulation_fit import bounds_row
    from ..models.firmware import FIRMWARE_TABLE, firmware_from_spec
    from ..models.params import unknown_firmware_error

    ref = _load_reference(args.params, args.firmware) if args.params else None
    actuator = args.actuator or (ref.actuator if ref else "") or logs[0].motor
    if not actuator:
        raise ValueError(f"{logs[0].source}: the log has no 'motor' key; pass --servo or --params")
    row = FIRMWARE_TABLE.get(actuator)
    if args.firmware:
        base = ref.firmware if ref else (row.law if row else None)
        fw, source = firmware_from_spec(args.firmware, base), f"--firmware {args.firmware}"
    elif ref is not None:
        table = FIRMWARE_TABLE.get(ref.actuator)
        fw = ref.firmware
        source = (
            f"{args.params}: {ref.actuator} row, {table.source}"
            if table and table.law == fw
            else f"{args.params}: its firmware object"
        )
    elif row is not None:
        fw, source = row.law, f"{actuator} row: {row.source}"
    else:
        raise unknown_firmware_error(actuator, f"--servo {actuator}" if args.actuator else logs[0].source)
    from ..identification.datasheet_prior import datasheet_prior

    if not (args.prior_factor > 1 and math.isfinite(args.prior_factor)):
        raise ValueError(f"--prior-factor must be > 1, got {args.prior_factor}")
    prior = datasheet_prior(actuator, args.prior_factor) if args.datasheet_prior else None
    return Setup(actuator, fw, source, ref, bounds_row(actuator, ref).source, prior)


def _finite_or_none(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def _summary(args: argparse.Namespace, setup: Setup, results: dict) -> dict[str, Any]:
    first = next(iter(results.values()))
    fw = {k: _finite_or_none(v) if isinstance(v, float) else v for k, v in asdict(setup.firmware).items()}
    notes = ["kp and vin of the firmware law are taken from each log"]
    if not first.validation_logs:
        notes.append("validation_mae is null: no validation logs (--validation 0)")
    models = {}
    for m, r in results.items():
        models[m] = {
            "train_mae": _finite_or_none(r.train_mae),
            "validation_mae": _finite_or_none(r.validation_mae),
            "start_mae": _finite_or_none(r.start_mae),
            "evaluations": r.evaluations,
            "generations": r.generations,
            "stop": r.stop,
            "runs": r.runs,
            "at_bound": r.at_bound,
            "seconds": r.seconds,
            "params": r.params.to_bam_dict(),
        }
        if r.train_mae is not None and not math.isfinite(r.train_mae):
            notes.append(f"{m}: train_mae is null: the fitted model diverged on a training log")
    return {
        "actuator": setup.actuator,
        "firmware": {"law": fw, "source": setup.firmware_source},
        "bounds": setup.bounds_source,
        "datasheet_prior": prior_summary(setup, args.datasheet_prior),
        "firmware_fit": firmware_fit_summary(setup, args.fit_firmware),
        "split": {
            "validation_fraction": args.validation,
            "seed": args.seed,
            "train": first.train_logs,
            "validation": first.validation_logs,
        },
        "seed": args.seed,
        "budget": {
            "max_evals": args.max_evals,
            "patience": args.patience,
            "restarts": args.restarts,
            "stall_restarts": args.stall_restarts,
            "population": args.population,
            "tol": 1e-3,
        },
        "fit_q_offset": args.fit_q_offset,
        "warm_start": not args.no_warm_start,
        "dt": args.dt,
        "models": models,
        "notes": notes,
    }


def _mrad(x: float | None) -> str:
    return "-" if x is None or not math.isfinite(x) else f"{x * 1e3:.3f}"


def run(args: argparse.Namespace) -> int:
    from ..identification.plots import plot_model_mae
    from ..identification.servo_log import check_identifiable
    from ..identification.simulation_fit import check_split, identify_models
    from ..io.atomic import atomic_path, atomic_write_text
    from ..io.logs import read_logs

    for flag, v, least in (
        ("--max-evals", args.max_evals, 1),
        ("--patience", args.patience, 1),
        ("--restarts", args.restarts, 0),
        ("--population", args.population, 2),
        ("--stall-restarts", args.stall_restarts, 0),
    ):
        if v is not None and v < least:
            raise ValueError(f"{flag} must be >= {least}, got {v}")
    if not 0.0 <= args.validation < 1.0:
        raise ValueError(f"--validation must be in [0, 1), got {args.validation}")
    unknown = [m for m in args.models if m not in MODEL_NAMES]
    if unknown:
        raise ValueError(f"unknown model(s) {', '.join(unknown)}; valid models: {', '.join(MODEL_NAMES)}")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"{out}: exists and is not a directory")
    logs = read_logs(args.logs, dt=args.dt)
    check_identifiable(logs)
    check_split(logs, args.validation)
    setup = resolve(args, logs)
    print(
        f"{len(logs)} logs; actuator {setup.actuator}; models {' '.join(args.models)}; firmware {setup.firmware_source}"
    )
    stated = setup.prior.describe() if setup.prior else prior_summary(setup, args.datasheet_prior)["reason"]
    print(f"datasheet prior: {stated}")
    out.mkdir(parents=True, exist_ok=True)

    def done(model, r):
        r.params.save_json(out / f"{model}.json")
        r.params.save_yaml(out / f"{model}.yaml")
        start = f" (warm start {_mrad(r.start_mae)})" if r.start_mae is not None else ""
        print(
            f"{model}: train MAE {_mrad(r.train_mae)} mrad{start}, validation MAE {_mrad(r.validation_mae)} "
            f"mrad, {r.evaluations} evals in {len(r.runs)} run(s), {r.seconds:.1f} s -> {out / (model + '.json')}"
        )

    results = identify_models(
        logs,
        args.models,
        actuator=setup.actuator,
        firmware=setup.firmware,
        validation_fraction=args.validation,
        seed=args.seed,
        max_evals=args.max_evals,
        warm=not args.no_warm_start,
        progress=not args.quiet,
        reference=setup.reference,
        callback=done,
        patience=args.patience,
        restarts=args.restarts,
        population=args.population,
        fit_q_offset=args.fit_q_offset,
        stall_restarts=args.stall_restarts,
        prior=setup.prior,
        fit_firmware=args.fit_firmware,
    )
    summary = _summary(args, setup, results)
    atomic_write_text(out / "summary.json", json.dumps(summary, indent=2, allow_nan=False))
    with atomic_path(out / "validation_mae.png") as tmp:
        plot_model_mae(results, tmp)
    print(f"{'model':6} {'train MAE [mrad]':>17} {'validation MAE [mrad]':>22}")
    for m, r in results.items():
        print(f"{m:6} {_mrad(r.train_mae):>17} {_mrad(r.validation_mae):>22}")
    if not results[args.models[0]].validation_logs:
        print("no validation logs (--validation 0): validation MAE not available")
    return 0
