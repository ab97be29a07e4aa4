"""Why a fit on the slow trajectories misses the fastest one (issue 23): the held-out fit taken apart.

On the real XL330 recordings (../shared/data/xl330, bench/real_logs.py), M1 → M5 are identified as
bench/real_logs.py does (``identify``'s search, datasheet prior, q_offset fitted, seed 0) twice: on the slow
trajectories (``sin_sin``, ``lift_and_drop``, ``up_and_down`` at kp 100 and kp 400; the fastest-out split) and on
all eight logs (in sample). For each model shown (M3, M5):

1. both fits' parameters, with what they imply: the back-EMF no-load speed V/kt, the damping kt²/R, the stall
   torque kt·V/R and the model's own no-load speed (back-EMF and friction, identification/param_swap.py) at the
   logs' supply and at the datasheet's voltage, against the datasheet (identification/datasheet_prior.py);
2. the held-out error on the fastest trajectory by phase (identification/error_budget.py) for both fits;
3. the slow fit with one group of parameters (motor kt/R, kt or R alone, friction, armature, q_offset) taken from
   the in-sample fit, and the in-sample fit with one group from the slow fit: held-out MAE overall and by phase,
   and the swap's cost on the slow logs (what the slow fit was trained on);
4. the measured speed range of the slow and the fast logs against the datasheet's no-load speed at the logs'
   supply.

Nothing is fitted or chosen on the held-out logs: they are only judged. The models have no delay term (the delays
of bench/candidate_laws.py never validated): the groups are the model's.

Run: python bench/fastest_out_diagnosis.py [--data DIR] [--max-evals N] [--seed S] [--models m3,m5]
Last line: RESULT model=<best held-out> out_mae=<rad> in_sample_mae=<rad> swap_motor=<rad> swap_kt=<rad>
swap_R=<rad> swap_friction=<rad> swap_armature=<rad> swap_q_offset=<rad> (the slow fit with that group from the
in-sample fit, held-out MAE) slow_max_speed=<rad/s> fast_max_speed=<rad/s> datasheet_no_load=<rad/s at the logs'
supply> slow_fit_no_load=<rad/s> in_sample_no_load=<rad/s> (the model's no-load speed at the logs' supply)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import NamedTuple

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from _paths import NO_DATA  # noqa: E402
from real_logs import DATA, fastest_trajectory, log_error, log_params, real_recordings  # noqa: E402

from servo_ff.identification.datasheet_prior import DatasheetPrior, datasheet_prior  # noqa: E402
from servo_ff.identification.error_budget import PHASES, error_budget, phase_labels  # noqa: E402
from servo_ff.identification.param_swap import no_load_speed, swap_group, swap_keys  # noqa: E402
from servo_ff.identification.simulation_fit import evaluate, fit_model, identify_nested  # noqa: E402
from servo_ff.models.firmware import FIRMWARE_LAWS, FirmwareLaw  # noqa: E402

#: real_logs.py's nested order (M4's warm starts include M2; M6 equals M5 on these logs)
CHAIN = ("m1", "m2", "m3", "m4", "m5")
#: swap name → keys or group
SWAPS: dict[str, tuple[str, ...] | str] = {
    "motor": "motor",
    "kt": ("kt",),
    "R": ("R",),
    "friction": "friction",
    "armature": "armature",
    "q_offset": "q_offset",
}


class DiagnosisInputs(NamedTuple):
    """What the real-log diagnoses start from: the recordings, the models shown (``--models``), the nested chain up
    to the last of them, the XL330 firmware law and datasheet prior."""

    logs: list
    shown: list[str]
    chain: list[str]
    firmware: FirmwareLaw
    prior: DatasheetPrior | None


def diagnosis_parser(doc: str) -> argparse.ArgumentParser:
    """The options the real-log diagnoses share (--data, --max-evals, --seed, --models); ``doc``: the bench's
    module docstring (its first line describes it)."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--max-evals", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--models", default="m3,m5", help="models to take apart (of M1–M5)")
    return ap


def diagnosis_inputs(args: argparse.Namespace) -> DiagnosisInputs | None:
    """The inputs named by ``args`` (from :func:`diagnosis_parser`); None when the recordings are absent (skip)."""
    logs = real_recordings(args.data)
    if logs is None:
        return None
    shown = [m.strip() for m in args.models.split(",") if m.strip()]
    chain = [m for m in CHAIN if m <= max(shown)]
    return DiagnosisInputs(logs, shown, chain, FIRMWARE_LAWS["xl330"], datasheet_prior("xl330"))


def swapped(params, donor, swap: str):
    what = SWAPS[swap]
    return swap_group(params, donor, what) if isinstance(what, str) else swap_keys(params, donor, what)


def errors_and_labels(params, logs, firmware) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Simulated − measured θ [rad] and phase labels of every log in ``logs`` under ``params``."""
    errs, labs = [], []
    for lg in logs:
        errs.append(log_error(log_params(params, lg), lg))
        labs.append(phase_labels(lg, firmware))
    return errs, labs


def phase_cells(params, logs, firmware) -> str:
    b = error_budget(*errors_and_labels(params, logs, firmware))
    return " | ".join(f"{(b.mae[ph] or 0) * 1e3:6.1f} ({b.error_share[ph] * 100:4.1f} %)" for ph in PHASES)


def derived(p, vin: float, vds: float) -> dict[str, float]:
    """What a parameter set implies at supply ``vin`` and at the datasheet's voltage ``vds`` [V]."""
    return {
        "V/kt [rad/s]": vin / p.kt,
        "kt²/R [N·m·s/rad]": p.kt**2 / p.R,
        "stall kt·V/R [N·m]": p.kt * vin / p.R,
        "no-load, model [rad/s]": no_load_speed(p, vin),
        f"no-load at {vds:g} V [rad/s]": no_load_speed(p, vds),
    }


def armature_profile(model: str, fit_slow, fit_in, slow, fast, grid, firmware, prior, args) -> None:
    """``model`` refitted with the armature held at each value of ``grid`` [kg·m²] (every other key free, warm from
    the fit of the same logs), on the slow logs and on all eight: the training MAE says how well each set of logs
    pins the armature; the held-out MAE is printed beside it, not used to choose."""
    print(
        f"\n## {model.upper()} refitted with the armature held ({args.profile_evals} evaluations per search): training "
        "MAE [mrad] per slow log and mean; the held-out MAE of the slow refit; the in-sample refit's MAE on all 8 logs"
    )
    names = [f"{lg.trajectory}@{lg.kp:g}" for lg in slow]
    print(
        "| armature [kg·m²] | "
        + " | ".join(names)
        + " | slow mean | held out | kt | R | V/kt [rad/s] | all 8 (in-sample refit) |\n|---|"
        + "---|" * (len(names) + 6)
    )
    for a in grid:
        row = []
        for logs_, ref, val in ((slow, fit_slow[model], fast), (slow + fast, fit_in[model], [])):
            p = ref.params
            x0 = {"kt": p.kt, "R": p.R, "q_offset": p.q_offset, **p.friction}
            r = fit_model(
                logs_,
                model,
                "xl330",
                firmware,
                val,
                max_evals=args.profile_evals,
                seed=args.seed,
                x0=x0,
                progress=False,
                fixed={"armature": a},
                prior=prior,
            )
            row.append(r)
        rs, ri = row
        per = [evaluate(rs.params, [lg]) * 1e3 for lg in slow]
        vin = float(np.mean([lg.vin for lg in slow]))
        print(
            f"| {a:g} | "
            + " | ".join(f"{v:.2f}" for v in per)
            + f" | {rs.train_mae * 1e3:.2f} | {rs.validation_mae * 1e3:.2f} | {rs.params.kt:.3f} | "
            f"{rs.params.R:.2f} | {vin / rs.params.kt:.2f} | {ri.train_mae * 1e3:.2f} |"
        )


def main() -> int:
    ap = diagnosis_parser(__doc__)
    ap.add_argument(
        "--profile",
        default="0.0005,0.00075,0.001,0.0015,0.002,0.0025,0.003",
        help="armature values [kg·m²] at which the first model is refitted with the armature held ('' skips)",
    )
    ap.add_argument("--profile-evals", type=int, default=2000)
    args = ap.parse_args()
    inputs = diagnosis_inputs(args)
    if inputs is None:
        return NO_DATA
    logs, shown, chain, firmware, prior = inputs
    fast_name = fastest_trajectory(logs)
    slow = [lg for lg in logs if lg.trajectory != fast_name]
    fast = [lg for lg in logs if lg.trajectory == fast_name]
    vin = float(np.mean([lg.vin for lg in logs]))
    ds = prior.figures
    ds_no_load = ds.no_load_speed * vin / ds.voltage  # V/kt scales with the supply
    print(f"held out: {fast_name} at kp {', '.join(f'{lg.kp:g}' for lg in fast)}; prior: {prior.describe()}")

    print("\n## speed range (measured |θ̇| [rad/s]: max, 99th percentile; goal max; share of samples above 5 rad/s)")
    print("| log | kp | max | p99 | goal max | > 5 rad/s |\n|---|---|---|---|---|---|")
    for lg in logs:
        s = np.abs(lg.speed)
        g = np.abs(np.gradient(lg.goal_position, lg.dt))
        print(
            f"| {lg.trajectory} | {lg.kp:g} | {s.max():.2f} | {np.percentile(s, 99):.2f} | {g.max():.2f} | "
            f"{(s > 5).mean() * 100:.1f} % |"
        )
    slow_max = max(float(np.abs(lg.speed).max()) for lg in slow)
    fast_max = max(float(np.abs(lg.speed).max()) for lg in fast)
    print(
        f"datasheet no-load speed {ds.no_load_speed:.2f} rad/s at {ds.voltage:g} V → {ds_no_load:.2f} rad/s at the "
        f"logs' {vin:g} V (V/kt); slow logs reach {slow_max:.2f} rad/s ({slow_max / ds_no_load * 100:.0f} %), the "
        f"fast one {fast_max:.2f} ({fast_max / ds_no_load * 100:.0f} %)"
    )

    kw = dict(seed=args.seed, max_evals=args.max_evals, progress=False, prior=prior)
    fit_slow = identify_nested(slow, fast, chain, "xl330", firmware, **kw)
    fit_in = identify_nested(logs, [], chain, "xl330", firmware, **kw)

    result: dict[str, dict] = {}
    for m in shown:
        ps, pi = fit_slow[m].params, fit_in[m].params
        out_mae, in_mae = evaluate(ps, fast), evaluate(pi, fast)
        per_log = [(evaluate(ps, [lg]), evaluate(pi, [lg])) for lg in fast]
        print(
            f"\n## {m.upper()}: slow fit (train {fit_slow[m].train_mae * 1e3:.2f} mrad) → held out "
            f"{out_mae * 1e3:.2f} mrad; in-sample fit (all 8 logs, {fit_in[m].train_mae * 1e3:.2f} mrad) on "
            f"{fast_name} {in_mae * 1e3:.2f} mrad, on the slow logs {evaluate(pi, slow) * 1e3:.2f} mrad; per "
            "held-out log (slow fit / in-sample): "
            + ", ".join(f"kp {lg.kp:g} {a * 1e3:.2f} / {b * 1e3:.2f}" for lg, (a, b) in zip(fast, per_log))
        )
        print("\n| parameter | slow fit | in-sample fit | ratio |\n|---|---|---|---|")
        rows = {"kt [N·m/A]": (ps.kt, pi.kt), "R [Ω]": (ps.R, pi.R), "armature [kg·m²]": (ps.armature, pi.armature)}
        rows["q_offset [rad]"] = (ps.q_offset, pi.q_offset)
        rows.update({k: (ps.friction[k], pi.friction[k]) for k in ps.friction})
        ds_s, ds_i = derived(ps, vin, ds.voltage), derived(pi, vin, ds.voltage)
        rows.update({k: (ds_s[k], ds_i[k]) for k in ds_s})
        for k, (a, b) in rows.items():
            ratio = f"{b / a:.2f}" if a else "—"
            print(f"| {k} | {a:.4g} | {b:.4g} | {ratio} |")
        print(
            f"datasheet: kt {prior.kt:.3f} N·m/A (box {prior.kt_range()[0]:.3f}–{prior.kt_range()[1]:.3f}), stall "
            f"{ds.stall_torque * vin / ds.voltage:.3f} N·m and no-load {ds_no_load:.2f} rad/s at {vin:g} V, "
            f"{ds.no_load_speed:.2f} rad/s at {ds.voltage:g} V"
        )

        print(
            f"\n### held-out {fast_name}, MAE [mrad] (share of error) by phase\n| fit | mean | "
            + " | ".join(PHASES)
            + " |\n|---|---|"
            + "---|" * len(PHASES)
        )
        print(f"| slow fit | {out_mae * 1e3:.2f} | {phase_cells(ps, fast, firmware)} |")
        print(f"| in-sample fit | {in_mae * 1e3:.2f} | {phase_cells(pi, fast, firmware)} |")
        print("\n### one group swapped: held-out MAE [mrad], by phase, and on the slow (training) logs")
        print(
            "| fit ← group | held out | "
            + " | ".join(PHASES)
            + " | slow logs |\n|---|---|"
            + "---|" * len(PHASES)
            + "---|"
        )
        swaps = {}
        for name in SWAPS:
            q = swapped(ps, pi, name)
            swaps[name] = evaluate(q, fast)
            print(
                f"| slow ← in-sample {name} | {swaps[name] * 1e3:.2f} | {phase_cells(q, fast, firmware)} | "
                f"{evaluate(q, slow) * 1e3:.2f} |"
            )
        for name in SWAPS:
            q = swapped(pi, ps, name)
            print(
                f"| in-sample ← slow {name} | {evaluate(q, fast) * 1e3:.2f} | {phase_cells(q, fast, firmware)} | "
                f"{evaluate(q, slow) * 1e3:.2f} |"
            )
        result[m] = {"out": out_mae, "in": in_mae, "swaps": swaps, "ns": ds_s, "ni": ds_i}

    grid = [float(a) for a in args.profile.split(",") if a.strip()]
    if grid:
        armature_profile(shown[0], fit_slow, fit_in, slow, fast, grid, firmware, prior, args)

    best = min(result, key=lambda k: result[k]["out"])
    r = result[best]
    print(
        f"RESULT model={best} out_mae={r['out']:.5f} in_sample_mae={r['in']:.5f} "
        + " ".join(f"swap_{k}={v:.5f}" for k, v in r["swaps"].items())
        + f" slow_max_speed={slow_max:.2f} fast_max_speed={fast_max:.2f} datasheet_no_load={ds_no_load:.2f} "
        f"slow_fit_no_load={r['ns']['no-load, model [rad/s]']:.2f} "
        f"in_sample_no_load={r['ni']['no-load, model [rad/s]']:.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
