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

Candidates: ``measured_supply`` (the servo's own Present Input Voltage instead of the nominal supply),
``supply_sag`` (V = V0 − R_s·duty·I, a supply with internal resistance R_s), ``command_friction`` (Coulomb
friction + K_d·|duty|: friction set by the command, not the motion), ``hot_winding`` (R at the logged Present
Temperature, copper's 0.393 %/K).

Run: python bench/candidate_laws.py [--max-evals 2000] [--extra-evals 400] [--seed 0]
Last line: RESULT baseline_cross_gain=<rad> best_candidate=<name> best_cross_gain=<rad>
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from servo_ff.identification.datasheet_prior import datasheet_prior  # noqa: E402
from servo_ff.identification.search_space import search_space  # noqa: E402
from servo_ff.identification.simulation_fit import identify_nested, pack_candidates  # noqa: E402
from servo_ff.io.logs import read_logs  # noqa: E402
from servo_ff.io.servo_log import stack_logs  # noqa: E402
from servo_ff.models.firmware import FIRMWARE_LAWS  # noqa: E402
from servo_ff.models.params import P_KC, P_KT, P_R, P_VIN  # noqa: E402
from servo_ff.models.stepper import PendulumLoad, step  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "xl330"
FW = FIRMWARE_LAWS["xl330"]
CU = 0.00393  # [1/K]


def raw_column(log, key: str) -> np.ndarray:
    """A raw recording's column on the log's grid (Present PWM signed and scaled to duty)."""
    entries = json.loads(Path(log.source).read_text())["entries"]
    t = np.array([e["timestamp"] for e in entries], float)
    v = np.array([e[key] for e in entries], float)
    if key == "load":
        v = np.where(v > 32767, v - 65536, v) / 885.0
    return np.interp(log.t, t, v)


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


class Candidate:
    """Extra keys (name, low, high, neutral) and a per-step change of the packed rows."""

    keys: tuple[tuple[str, float, float, float], ...] = ()

    def prepare(self, batch, logs) -> None:
        pass

    def rows(self, p: np.ndarray, k: int, extra: np.ndarray, state: dict) -> np.ndarray:
        return p


class MeasuredSupply(Candidate):
    def prepare(self, batch, logs):
        self.volts = np.stack(
            [np.pad(raw_column(lg, "input_volts"), (0, batch.position.shape[0] - len(lg)), "edge") for lg in logs],
            axis=1,
        )

    def rows(self, p, k, extra, state):
        q = p.copy()
        q[:, :, P_VIN] = self.volts[k]
        return q


class SupplySag(Candidate):
    keys = (("supply_resistance", 0.0, 3.0, 0.0),)

    def rows(self, p, k, extra, state):
        if "volts" not in state:
            return p
        q = p.copy()
        duty = state["volts"] / p[:, :, P_VIN]
        amps = state["tau_m"] / p[:, :, P_KT]
        q[:, :, P_VIN] = np.maximum(p[:, :, P_VIN] - extra[:, 0:1] * duty * amps, 0.5)
        return q


class CommandFriction(Candidate):
    keys = (("friction_per_duty", 0.0, 0.3, 0.0),)

    def rows(self, p, k, extra, state):
        if "volts" not in state:
            return p
        q = p.copy()
        q[:, :, P_KC] = p[:, :, P_KC] + extra[:, 0:1] * np.abs(state["volts"] / p[:, :, P_VIN])
        return q


class HotWinding(Candidate):
    def prepare(self, batch, logs):
        self.temp = np.stack(
            [np.pad(raw_column(lg, "temp"), (0, batch.position.shape[0] - len(lg)), "edge") for lg in logs], axis=1
        )

    def rows(self, p, k, extra, state):
        q = p.copy()
        q[:, :, P_R] = p[:, :, P_R] * (1 + CU * (self.temp[k] - 25.0))
        return q


CANDIDATES = {
    "baseline": Candidate,
    "measured_supply": MeasuredSupply,
    "supply_sag": SupplySag,
    "command_friction": CommandFriction,
    "hot_winding": HotWinding,
}


def harness_mae(packed: np.ndarray, batch, cand: Candidate, extra: np.ndarray) -> np.ndarray:
    """MAE (pop, logs) of Algorithm 1 stepped one sample at a time, the candidate changing the rows each step."""
    load = PendulumLoad(mass=batch.mass, length=batch.length, arm_mass=batch.arm_mass)
    th = np.broadcast_to(batch.position[0], packed.shape[:2]).copy()
    dth = np.broadcast_to(batch.speed[0], packed.shape[:2]).copy()
    err = np.zeros(packed.shape[:2])
    state: dict = {}
    for k in range(batch.position.shape[0]):
        err += np.abs(th - batch.position[k]) * batch.mask[k]
        p = cand.rows(packed, k, extra, state)
        r = step(
            p,
            th,
            dth,
            np.broadcast_to(batch.goal_position[k], th.shape),
            batch.dt,
            load,
            enable=np.broadcast_to(batch.torque_enable[k], th.shape),
        )
        th, dth = r.theta, r.dtheta
        state["volts"], state["tau_m"] = r.volts, r.tau_m
        if not np.isfinite(th).all():
            bad = ~np.isfinite(th)
            th, dth = np.where(bad, 0.0, th), np.where(bad, 0.0, dth)
            err[bad] = np.inf
    return err / batch.mask.sum(axis=0)


def refit(start, train, cand: Candidate, evals: int, seed: int, prior):
    """CMA-ES from ``start`` (M4 params) over M4's keys (±20 % steps) and the candidate's keys; returns the best
    (packed row, extra values) and its training MAE."""
    from cmaes import CMA

    space = search_space(start.model, "xl330", fit_q_offset=True, prior=prior)
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
        f = harness_mae(packed, batch, cand, x[:, nm:]).mean(axis=1)
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--max-evals", type=int, default=2000, help="identify budget per model for the M1→M4 chain")
    ap.add_argument("--extra-evals", type=int, default=400, help="CMA-ES budget of each candidate refit")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if not (args.data / "raw").is_dir():
        print(f"no real recordings at {args.data / 'raw'}: nothing to do")
        return 0
    logs = read_logs([args.data / "raw"])
    law_checks(logs)
    prior = datasheet_prior("xl330")
    gains = sorted({lg.kp for lg in logs})
    by_gain = {g: [lg for lg in logs if lg.kp == g] for g in gains}
    out: dict[str, list[float]] = {c: [] for c in CANDIDATES}
    train_out: dict[str, list[float]] = {c: [] for c in CANDIDATES}
    print(
        f"\ncross-gain, M4 under the datasheet prior ({args.max_evals} evals per model), then each candidate "
        f"refitted with {args.extra_evals} evals:"
    )
    for a, b in ((gains[0], gains[-1]), (gains[-1], gains[0])):
        m4 = identify_nested(
            by_gain[a],
            by_gain[b],
            ["m1", "m3", "m4"],
            "xl330",
            FW,
            seed=args.seed,
            max_evals=args.max_evals,
            progress=False,
            prior=prior,
        )["m4"]
        check = judge(*refit_identity(m4.params), by_gain[b], Candidate())
        print(
            f"  train kp{a:g} → val kp{b:g}: M4 {m4.train_mae * 1e3:.2f} → {m4.validation_mae * 1e3:.2f} mrad "
            f"(harness {check * 1e3:.2f} mrad)"
        )
        for name, cls in CANDIDATES.items():
            cand = cls()
            keys, x, nm, base, f = refit(m4.params, by_gain[a], cand, args.extra_evals, args.seed, prior)
            v = judge(keys, x, nm, base, by_gain[b], cls())
            out[name].append(v)
            train_out[name].append(f)
            extra = ", ".join(f"{k[0]} {xv:.4g}" for k, xv in zip(cand.keys, x[nm:]))
            print(f"    {name:16} train {f * 1e3:7.2f}  val {v * 1e3:7.2f} mrad  {extra}")
    print("\ncandidate          | mean train [mrad] | cross-gain MAE [mrad] | vs baseline")
    base_v = float(np.mean(out["baseline"]))
    for name in CANDIDATES:
        v = float(np.mean(out[name]))
        print(f"{name:18} | {np.mean(train_out[name]) * 1e3:17.2f} | {v * 1e3:21.2f} | {v / base_v:.3f}")
    best = min(out, key=lambda n: np.mean(out[n]))
    print(f"RESULT baseline_cross_gain={base_v:.5f} best_candidate={best} best_cross_gain={np.mean(out[best]):.5f}")
    return 0


def refit_identity(params):
    """(keys, x, nm, base) evaluating ``params`` as they are in the harness (the harness check)."""
    space = search_space(params.model, "xl330", fit_q_offset=True)
    keys = [s[0] for s in space]
    vals = {"kt": params.kt, "R": params.R, "armature": params.armature, "q_offset": params.q_offset, **params.friction}
    return keys, np.array([vals[k] for k in keys]), len(keys), params.packed()


if __name__ == "__main__":
    sys.exit(main())
