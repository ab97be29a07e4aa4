"""What changes with the gain? Candidate servo laws tested against the real XL330 recordings, across gains.

Each candidate adds to M4 (fitted first by ``identify`` in the same cross-gain protocol as bench/real_logs.py, under
the datasheet prior) what the recordings suggest may differ between kp 100 and kp 400, and is fitted again from
that M4 by CMA-ES on the training gain's logs (M4's keys searched around their values, the candidate's extra keys
from their neutral value), then judged on the other gain. The baseline gets the same extra budget with no extra
term, so an improvement is the candidate's, not the budget's. The candidates run in a per-step harness (the
stepper's Algorithm 1 step, with the candidate changing the packed row before each step) checked against the
batched rollout on the baseline.

Before any fit, two checks on the recordings themselves (Present PWM against the firmware law on the same sample):
the register scaling (gain of PWM on kp·error_gain·(θd − θ)) and a D term (coefficient on θ̇) per log.

Candidates (bench/_candidates.py): ``measured_supply`` (the servo's own Present Input Voltage instead of the
nominal supply), ``supply_sag`` (V = V0 − R_s·duty·I, a supply with internal resistance R_s), ``command_friction``
(Coulomb friction + K_d·|duty|: friction set by the command, not the motion), ``goal_speed_friction`` (Coulomb
friction + K_g·|θ̇d|: set by the commanded goal speed), ``hot_winding`` (R at the logged Present Temperature,
copper's 0.393 %/K), ``current_limit`` (the stall law: a driver current limit in position mode that the Present
PWM register does not show), ``stick_band`` (a stick budget s·|τ_m − τ_e| at rest on top of the model's: the stall
as the recordings show it), ``backlash_compliance`` (a gap and a spring-damper between the motor side and the
output, a second state), ``pwm_deadband`` (the H-bridge's dead time: duty sign(d)·max(|d| − d0, 0)),
``torque_saturation`` (τ_s·tanh(τ_law/τ_s), searched from an active 0.35 N·m) and ``load_scale`` (the pendulum's
m·l, gravity torque and inertia, ×0.8–1.25); and time (servo_ff.identification.time_shift, the batched rollout,
0–20 ms): ``command_delay`` (the goal reaches the firmware's loop late), ``measurement_delay`` (the logged position is
older than its stamp), ``both_delays``, ``firmware_1ms`` (the law evaluated every 1 ms, not every 5 ms log sample)
and ``firmware_1ms_delays``. The recordings' stalls are listed first (where the servo holds still while the duty
ramps), with the torque the datasheet's motor law gives there against the gravity torque held.

Run: python bench/candidate_laws.py [--max-evals 2000] [--extra-evals 400] [--seeds 0,1] [--jobs 2] [--candidates a,b]
     python bench/candidate_laws.py --combine out_seed0.txt out_seed1.txt   # the table from saved outputs
     python bench/candidate_laws.py --profile --seeds 0 --candidates a,b     # MAE across each term's range, M4 held
     python bench/candidate_laws.py --joint --seeds 0,1,2,3 --jobs 1   # all logs at once against each gain alone
     python bench/candidate_laws.py --folds --candidates a,b  # 2-fold by trajectory within the joint fit (_joint.py)
Last line: RESULT baseline_cross_gain=<rad> best_candidate=<name> best_cross_gain=<rad> seed_spread=<rad>
validated=<names or none> (validated: better than its baseline in every seed × direction, by more than the
baseline's own seed-to-seed spread); --folds: the same with baseline_heldout_fold, best_heldout_fold; --joint:
RESULT joint_over_alone_baseline=<x> ratio_seed_spread=<x> best_joint_candidate=<name> best_joint_over_alone=<x>
best_lower_in=<n>/<seeds> (bench/_joint.py)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from _paths import no_data  # noqa: E402

from servo_ff.identification.datasheet_prior import datasheet_prior  # noqa: E402
from servo_ff.identification.search_space import search_space  # noqa: E402
from servo_ff.identification.simulation_fit import SEARCH_BOUNDS, identify_nested, pack_candidates  # noqa: E402
from servo_ff.identification.swing_armature import swing_armature  # noqa: E402
from servo_ff.io.logs import read_logs  # noqa: E402
from servo_ff.io.servo_log import log_mean, stack_logs  # noqa: E402
from servo_ff.models.firmware import FIRMWARE_LAWS  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from _candidates import CANDIDATES, Candidate, harness_mae, raw_column  # noqa: E402
from _cases import CASE, ROW, parse_cases, seed_workers, summarize  # noqa: E402
from _joint import FOLDS, JOINT_CASE, JOINT_ROW, fold_cases, joint_row, parse_joint, summarize_joint  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "xl330"
FW = FIRMWARE_LAWS["xl330"]


def law_checks(logs) -> None:
    print("Present PWM vs the firmware law on the same sample (unsaturated samples, torque on):")
    for lg in logs:
        entries = json.loads(Path(lg.source).read_text())["entries"]
        g = np.array([e["goal_position"] for e in entries])
        q = np.array([e["position"] for e in entries])
        v = np.array([e["speed"] for e in entries])
        on = np.array([e["torque_enable"] for e in entries], bool)
        pwm = np.array([e["load"] for e in entries], float)
        pwm = np.where(pwm > 32767, pwm - 65536, pwm) / 885.0
        law = lg.kp * FW.error_gain * (g - q)
        m = on & (np.abs(law) < 0.95)
        A = np.c_[law[m], v[m], np.ones(m.sum())]
        c, *_ = np.linalg.lstsq(A, pwm[m], rcond=None)
        r = pwm[m] - A @ c
        print(
            f"  kp {lg.kp:3g} {lg.trajectory:16} gain {c[0]:.3f}, θ̇ coefficient {c[1]:+.4f} duty/(rad/s), "
            f"offset {c[2]:+.4f}, residual RMS {r.std():.4f} duty"
        )


def refit(start, train, cand: Candidate, evals: int, seed: int, prior, fixed=()):
    """CMA-ES from ``start`` (M4 params) over M4's keys (±20 % steps; the ``fixed`` ones held at ``start``'s
    value) and the candidate's keys; returns the best (packed row, extra values) and its training MAE."""
    from cmaes import CMA

    space = [s for s in search_space(start.model, "xl330", fit_q_offset=True, prior=prior) if s[0] not in fixed]
    keys = [s[0] for s in space] + [k[0] for k in cand.keys]
    lo = np.array([s[1] for s in space] + [k[1] for k in cand.keys])
    hi = np.array([s[2] for s in space] + [k[2] for k in cand.keys])
    vals = {"kt": start.kt, "R": start.R, "armature": start.armature, "q_offset": start.q_offset, **start.friction}
    x0 = np.array([vals[k] for k, *_ in space] + [k[3] for k in cand.keys])
    u0 = np.clip((x0 - lo) / (hi - lo), 0, 1)
    step0 = np.r_[np.clip(0.2 * np.abs(x0[: len(space)]) / (hi - lo)[: len(space)], 0.005, 0.2), [0.1] * len(cand.keys)]
    batch = stack_logs(train)
    cand.prepare(batch, train)
    base = start.packed()
    nm = len(space)

    def cost(us):
        x = lo + us * (hi - lo)
        packed = pack_candidates(base, keys[:nm], x[:, :nm], batch)
        f = log_mean(harness_mae(packed, batch, cand, x[:, nm:]), batch)
        if prior is not None:
            f = f + prior.excess(x[:, keys.index("kt")], x[:, keys.index("R")])
        return np.where(np.isfinite(f), f, 1e3)

    best_u, best_f = u0, float(cost(u0[None])[0])
    sigma = float(step0.max())
    opt = CMA(
        mean=u0, sigma=sigma, cov=np.diag((step0 / sigma) ** 2), bounds=np.tile([0.0, 1.0], (len(keys), 1)), seed=seed
    )
    used = 0
    while used + opt.population_size <= evals:
        us = np.array([opt.ask() for _ in range(opt.population_size)])
        f = cost(us)
        opt.tell(list(zip(us, f)))
        used += len(us)
        i = int(np.argmin(f))
        if f[i] < best_f:
            best_f, best_u = float(f[i]), us[i].copy()
    x = lo + best_u * (hi - lo)
    return keys, x, nm, base, best_f


def judge(keys, x, nm, base, val, cand: Candidate) -> float:
    batch = stack_logs(val)
    cand.prepare(batch, val)
    packed = pack_candidates(base, keys[:nm], x[None, :nm], batch)
    return float(harness_mae(packed, batch, cand, x[None, nm:]).mean())


def stuck_windows(logs, min_samples: int = 20) -> None:
    """The stalls in the recordings: torque on, the position not moving by more than one encoder count while the
    law's duty grows for ``min_samples`` samples or more. Prints the duty range, the gravity torque held, the
    supply, and the motor torque the datasheet's kt/R give at that duty and supply."""
    prior = datasheet_prior("xl330")
    per_volt = prior.figures.stall_torque / prior.figures.voltage  # stall torque per volt [N·m/V] = kt/R
    count = 2 * np.pi / 4096
    print("\nStalls (torque on, position within one count, |law duty| > 0.1, ≥ 20 samples):")
    for lg in logs:
        duty = raw_column(lg, "load")
        volts = raw_column(lg, "input_volts")
        grav = (lg.mass + lg.arm_mass / 2) * 9.81 * lg.length * np.abs(np.sin(lg.position))
        still = np.r_[False, np.abs(np.diff(lg.position)) < 0.5 * count] & (lg.torque_enable > 0) & (np.abs(duty) > 0.1)
        edges = np.flatnonzero(np.diff(np.r_[0, still.astype(int), 0]))
        for a, b in zip(edges[::2], edges[1::2]):
            if b - a < min_samples:
                continue
            d = np.abs(duty[a:b])
            law = per_volt * d * volts[a:b]
            print(
                f"  kp {lg.kp:3g} {lg.trajectory:16} t {lg.t[a]:.2f}–{lg.t[b - 1]:.2f} s, θ {lg.position[a]:+.3f} rad: "
                f"duty {d.min():.2f}→{d.max():.2f}, supply {volts[a:b].mean():.2f} V, gravity holds "
                f"{grav[a:b].mean():.3f} N·m, datasheet motor torque {law.min():.3f}→{law.max():.3f} N·m "
                f"(×{law.min() / grav[a:b].mean():.2f}→×{law.max() / grav[a:b].mean():.2f})"
            )


def case_m4(train, val, seed: int, max_evals: int, prior, fixed=None):
    """M4 by ``identify`` (M1 → M3 → M4) on ``train`` (``fixed`` keys held), ``val`` only reported: the protocol's
    baseline."""
    return identify_nested(
        train,
        val,
        ["m1", "m3", "m4"],
        "xl330",
        FW,
        seed=seed,
        max_evals=max_evals,
        progress=False,
        prior=prior,
        fixed=fixed,
    )["m4"]


def fit_case(train, val, names: list[str], seed: int, max_evals: int, extra_evals: int, prior, fixed=None):
    """M4 by ``identify`` on ``train`` (``val`` only reported), then each candidate refitted from it on ``train``,
    the ``fixed`` keys [SI] held in both: (M4 FitResult, {name: (keys, x, nm, base, training cost)})."""
    m4 = case_m4(train, val, seed, max_evals, prior, fixed)
    return m4, {n: refit(m4.params, train, CANDIDATES[n](), extra_evals, seed, prior, fixed or ()) for n in names}


def extras(name: str, fit) -> str:
    """A refit's candidate values as ``key value, …``."""
    keys, x, nm = fit[:3]
    return ", ".join(f"{k} {v:.4g}" for k, v in zip(keys[nm:], x[nm:]))


def gain_cases(logs) -> list[tuple[str, list, str, list]]:
    """The cross-gain cases (train label, train logs, validation label, validation logs), both directions."""
    gains = sorted({lg.kp for lg in logs})
    by_gain = {g: [lg for lg in logs if lg.kp == g] for g in gains}
    a, b = gains[0], gains[-1]
    return [(f"kp{a:g}", by_gain[a], f"kp{b:g}", by_gain[b]), (f"kp{b:g}", by_gain[b], f"kp{a:g}", by_gain[a])]


def run_seed(args, seed: int, names: list[str], cases) -> None:
    """Every case (train label, logs, validation label, logs) of one seed: M4 by ``identify``, then every candidate
    refitted and judged (printed). ``args.swing_armature`` (if set): ``identify``'s default, the armature held at the
    case's training logs' free-swing estimate in M4's chain and every refit (searched where they have no swing)."""
    prior = datasheet_prior("xl330")
    swing = getattr(args, "swing_armature", False)
    for la, train, lb, val in cases:
        hold = swing_armature(train, SEARCH_BOUNDS["xl330"].armature, swing)
        m4, fits = fit_case(train, val, names, seed, args.max_evals, args.extra_evals, prior, hold.fixed)
        check = judge(*refit_identity(m4.params), val, Candidate())
        print(
            f"  seed {seed}, train {la} → val {lb}: M4 {m4.train_mae * 1e3:.2f} → {m4.validation_mae * 1e3:.2f} "
            f"mrad (harness {check * 1e3:.2f} mrad)",
            flush=True,
        )
        if swing:
            print(f"    armature {hold.describe()}")
        for name in names:
            v = judge(*fits[name][:4], val, CANDIDATES[name]())
            print(
                f"    {name:20} train {fits[name][4] * 1e3:7.2f}  val {v * 1e3:7.2f} mrad  {extras(name, fits[name])}"
            )


def joint_seed(args, seed: int, names: list[str], logs) -> None:
    """One seed of ``--joint``: every candidate fitted by the protocol on each gain alone and on all logs at once,
    each fit's training MAE per gain (printed rows of bench/_joint.py)."""
    prior = datasheet_prior("xl330")
    alone: dict[str, tuple[list, dict]] = {}
    for la, train, _, _ in gain_cases(logs):
        alone[la] = (train, fit_case(train, [], names, seed, args.max_evals, args.extra_evals, prior)[1])
    m4, fits = fit_case(logs, [], names, seed, args.max_evals, args.extra_evals, prior)
    print(f"  seed {seed}, joint fit on {len(logs)} logs: M4 training {m4.train_mae * 1e3:.2f} mrad", flush=True)
    for name in names:
        per_gain = {
            g: (judge(*fits[name][:4], lgs, CANDIDATES[name]()), judge(*f[name][:4], lgs, CANDIDATES[name]()))
            for g, (lgs, f) in alone.items()
        }
        alone_x = {g: extras(name, f[name]) for g, (_, f) in alone.items()}
        print(joint_row(name, per_gain, extras(name, fits[name]), alone_x), flush=True)


def profile(args, seed: int, names: list[str], logs) -> None:
    """Each one-key candidate's MAE on the training gain and on the other one at its neutral value and five values
    across its range, M4 of ``seed`` held (no search): what the recordings say about the term, apart from where the
    search starts."""
    prior = datasheet_prior("xl330")
    print(f"\nprofiles (M4 of seed {seed} held; MAE [mrad] on the training gain / the other gain):")
    for la, train, _, val in gain_cases(logs):
        m4 = case_m4(train, val, seed, args.max_evals, prior)
        keys, x, nm, base = refit_identity(m4.params)
        for name in [n for n in names if len(CANDIDATES[n].keys) == 1]:
            cand = CANDIDATES[name]()
            _, lo, hi, _ = cand.keys[0]
            values = np.r_[cand.neutral(), np.linspace(lo, hi, 5)]
            maes = []
            for logs_ in (train, val):
                batch = stack_logs(logs_)
                cand.prepare(batch, logs_)
                packed = np.repeat(pack_candidates(base, keys, x[None], batch), len(values), axis=0)
                maes.append(log_mean(harness_mae(packed, batch, cand, values[:, None]), batch))
            cells = ", ".join(f"{v:.3g}: {t * 1e3:.2f} / {o * 1e3:.2f}" for v, t, o in zip(values, *maes))
            print(f"  from {la} {name:18} {cells}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--max-evals", type=int, default=2000, help="identify budget per model for the M1→M4 chain")
    ap.add_argument("--extra-evals", type=int, default=400, help="CMA-ES budget of each candidate refit")
    ap.add_argument("--seeds", default="0,1", help="comma-separated seeds (M4 fit and CMA-ES draws)")
    ap.add_argument("--candidates", default=",".join(CANDIDATES), help="comma-separated (baseline always runs)")
    ap.add_argument("--jobs", type=int, default=2, help="seeds run in parallel processes")
    ap.add_argument("--cases-only", action="store_true", help=argparse.SUPPRESS)  # a --jobs worker
    ap.add_argument("--profile", action="store_true", help="the one-key candidates' MAE across their range, M4 held")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--joint", action="store_true", help="fit on both gains at once against each gain alone")
    mode.add_argument("--folds", action="store_true", help="2-fold split by trajectory within the joint fit")
    ap.add_argument("--combine", nargs="+", type=Path, help="summarize saved outputs of this script (no fitting)")
    args = ap.parse_args()
    if args.combine:
        text = "\n".join(f.read_text() for f in args.combine)
        report(text, echo=True)
        return 0
    if not (args.data / "raw").is_dir():
        return no_data(args.data / "raw")
    names = ["baseline"] + [c for c in args.candidates.split(",") if c and c != "baseline"]
    unknown = [c for c in names if c not in CANDIDATES]
    if unknown:
        print(f"--candidates: unknown {', '.join(unknown)} (known: {', '.join(CANDIDATES)})")
        return 2
    seeds = [int(s) for s in args.seeds.split(",")]
    logs = read_logs([args.data / "raw"])
    if args.cases_only:
        if args.joint:
            joint_seed(args, seeds[0], names, logs)
        else:
            run_seed(args, seeds[0], names, fold_cases(logs) if args.folds else gain_cases(logs))
        return 0
    if args.profile:
        profile(args, seeds[0], names[1:], logs)
        return 0
    if args.joint or args.folds:
        what = "joint fit on all logs against each gain alone" if args.joint else "2-fold split by trajectory"
        print(f"{what}, M4 under the datasheet prior ({args.max_evals} evals per model), each candidate +", end="")
        if args.folds:
            what = ", ".join(f"fold {n} {{{', '.join(f)}}}" for n, f in zip("AB", FOLDS))
            print(f"{args.extra_evals} evals; {what} at every gain; seeds {seeds}:", flush=True)
        else:
            print(f"{args.extra_evals} evals; seeds {seeds}:", flush=True)
    else:
        law_checks(logs)
        stuck_windows(logs)
        print(
            f"\ncross-gain, M4 under the datasheet prior ({args.max_evals} evals per model), then each candidate "
            f"refitted with {args.extra_evals} evals; seeds {seeds} ({min(args.jobs, len(seeds))} processes):",
            flush=True,
        )
    argv = [sys.executable, __file__, "--data", str(args.data), "--max-evals", str(args.max_evals)]
    argv += ["--extra-evals", str(args.extra_evals), "--candidates", ",".join(names), "--cases-only"]
    argv += ["--joint"] * args.joint + ["--folds"] * args.folds
    text = seed_workers(argv, seeds, args.jobs)
    if text is None:
        return 1
    report(text)
    return 0


def report(text: str, echo: bool = False) -> None:
    """The summary of saved or fresh output: the joint fit's rows if there are any, else the cases (cross-gain, or
    the 2-fold split when its cases train on a fold)."""
    joint = parse_joint(text)
    if echo:
        keep = (CASE, ROW, JOINT_CASE, JOINT_ROW)
        print("\n".join(ln for ln in text.splitlines() if any(r.match(ln) for r in keep)))
    if joint:
        summarize_joint(joint)
        return
    cases = parse_cases(text)
    summarize(cases, "heldout_fold" if cases and cases[0][0][1].startswith("fold") else "cross_gain")


def refit_identity(params):
    """(keys, x, nm, base) evaluating ``params`` as they are in the harness (the harness check)."""
    space = search_space(params.model, "xl330", fit_q_offset=True)
    keys = [s[0] for s in space]
    vals = {"kt": params.kt, "R": params.R, "armature": params.armature, "q_offset": params.q_offset, **params.friction}
    return keys, np.array([vals[k] for k in keys]), len(keys), params.packed()


if __name__ == "__main__":
    sys.exit(main())
