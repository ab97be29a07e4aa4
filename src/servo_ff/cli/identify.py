"""``servo-ff identify``: fit friction models M1–M6 (+ kt, R, armature) to logs by simulation MAE (CMA-ES)."""
from __future__ import annotations

import argparse
import json
import math
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("identify", help="identify M1–M6 from bench logs (CMA-ES on simulation MAE, seed 004 §V)",
                       description="Fit each friction model plus kt, R and armature on 75%% of the logs, report "
                                   "train and validation MAE, and write bam JSON + ROS YAML per model.")
    p.add_argument("logs", nargs="+", help="log files or directories (bam .json, .csv, rosbag2)")
    p.add_argument("--out", required=True, help="output directory for <model>.json/.yaml, summary.json, plot")
    p.add_argument("--models", nargs="+", default=["m1", "m2", "m3", "m4", "m5", "m6"])
    p.add_argument("--actuator", default=None, help="actuator name (default: the logs' 'motor')")
    p.add_argument("--validation", type=float, default=0.25, help="validation fraction")
    p.add_argument("--max-evals", type=int, default=4000, help="candidate evaluations per model")
    p.add_argument("--dt", type=float, default=0.005, help="resampling period [s]")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--engine", choices=("rollout", "fused"), default="rollout",
                   help="population evaluation: one batched rollout call, or the fused MAE kernel (faster)")
    p.add_argument("--no-warm-start", action="store_true", help="start every model mid-box")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..identification.logs import read_logs
    from ..identification.plots import plot_model_mae
    from ..identification.simulation_fit import identify_models

    logs = read_logs(args.logs, dt=args.dt)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    print(f"{len(logs)} logs; models {' '.join(args.models)}")

    def done(model, r):
        if not all(math.isfinite(v) for v in r.params.packed()[:14]):
            raise ValueError(f"model {model}: non-finite fitted parameter, nothing written")
        r.params.save_json(out / f"{model}.json")
        r.params.save_yaml(out / f"{model}.yaml")
        print(f"{model}: train MAE {r.train_mae * 1e3:.3f} mrad, validation MAE {r.validation_mae * 1e3:.3f} mrad, "
              f"{r.evaluations} evals, {r.seconds:.1f} s -> {out / (model + '.json')}")

    results = identify_models(logs, args.models, actuator=args.actuator, validation_fraction=args.validation,
                              seed=args.seed, max_evals=args.max_evals, warm=not args.no_warm_start,
                              progress=not args.quiet, callback=done, engine=args.engine)
    summary = {m: {"train_mae": r.train_mae, "validation_mae": r.validation_mae, "evaluations": r.evaluations,
                   "seconds": r.seconds, "params": r.params.to_bam_dict()} for m, r in results.items()}
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    plot_model_mae(results, out / "validation_mae.png")
    print(f"{'model':6} {'train MAE [mrad]':>17} {'validation MAE [mrad]':>22}")
    for m, r in results.items():
        print(f"{m:6} {r.train_mae * 1e3:17.3f} {r.validation_mae * 1e3:22.3f}")
    return 0
