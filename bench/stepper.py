"""Joint-steps per second of the Algorithm-1 stepper (Duclusaud et al. (Extended Friction Models)), M6 on the pendulum
bench.

Compares, in one run: the fused numba kernel (``rollout``), the numpy fallback, a plain per-step scalar
Python loop (one joint, one step at a time — the way reference implementations step), and the roofline: a
branch-free numba loop doing the same arithmetic (voltage law, M6 budget, pendulum) with libm's sin, exp and
pow, structure-of-arrays, over both cores — what plain numba code can reach on this machine.

    python bench/stepper.py [--steps 200] [--model m6] [--rounds 7]

Ratios (same run, the arms alternating A B A B …, median of the per-round ratios): ``fused_over_numpy_4096x20``
(fused kernel ÷ numpy-array path, 4096 × 20, both writing into the caller's output arrays, ``rollout(out=)``),
``fused_fresh_over_numpy_4096x20`` (both allocating fresh outputs each call: first touching 5 × 33 MB of new pages
is then a large share of the fused time), ``fused_over_roofline`` (fused ÷ roofline, 4096 × 20, reused outputs)
and ``fused_positions_over_numpy_4096x20`` (``positions_only=True``, identification's path, ÷ numpy),
``fused_1thread_over_numpy_4096x20`` (the fused kernel held to one thread ÷ numpy, which runs on one: the kernel's
own efficiency, which a loaded machine does not take away from it as it takes the second core) and
``one_joint_call_us`` (wall time of one 200-step rollout of 1 × 1, i.e. the call overhead, next to the roofline's).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numba
import numpy as np
from _anchor import batch_time, interleaved, paired_ratio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))  # this checkout's servo_ff, not the editable install's

from servo_ff.models.params import (  # noqa: E402
    P_ALPHA,
    P_ARM,
    P_EGAIN,
    P_KC,
    P_KCS,
    P_KE,
    P_KEQ,
    P_KES,
    P_KM,
    P_KMQ,
    P_KMS,
    P_KP,
    P_KT,
    P_KV,
    P_MAXPWM,
    P_QOFF,
    P_R,
    P_VIN,
    P_VMAX,
    P_VS,
)
from servo_ff.models.presets import preset  # noqa: E402
from servo_ff.models.scalar import step_1  # noqa: E402
from servo_ff.models.stepper import PARALLEL_MIN_ELEMENTS, PendulumLoad, StepResult, rollout  # noqa: E402


def timed(fn, min_time: float = 0.5) -> float:
    """Best-of wall time of fn() [s], repeating until min_time has elapsed (at least 3 runs)."""
    best, total, n = np.inf, 0.0, 0
    while total < min_time or n < 3:
        t0 = time.perf_counter()
        fn()
        dt = time.perf_counter() - t0
        best, total, n = min(best, dt), total + dt, n + 1
    return best


def scalar_loop_rate(params, steps: int, joints: int = 20) -> float:
    """Joint-steps/s of a plain Python loop over joints and steps (math on floats)."""
    p = [float(x) for x in params.packed()]
    rng = np.random.default_rng(0)
    goals = rng.uniform(-1, 1, (steps, joints)).tolist()
    grav, inertia = 1.0 * 9.80665 * 0.15, 1.0 * 0.15**2

    def run():
        th = [0.0] * joints
        dth = [0.0] * joints
        for k in range(steps):
            row = goals[k]
            for j in range(joints):
                th[j], dth[j], _, _, _ = step_1(p, th[j], dth[j], row[j], 0.005, grav, 0.0, inertia, 1.0)

    return steps * joints / timed(run)


def numpy_scalar_loop_rate(params, steps: int, joints: int = 20) -> float:
    """Joint-steps/s of a per-step loop that calls numpy on scalars, as bam's ``Simulator.step`` does
    (np.sign, np.min over a list, np.exp, ``**``), one joint at a time. Our own code, written in that style."""
    p = params.packed()
    kt, r, arm, kc, kv, kcs, km, ke, kms, kes, kmq, keq, vs, alpha, vin, kp, eg, maxpwm = p[:18]
    rng = np.random.default_rng(0)
    goals = rng.uniform(-1, 1, (steps, joints))
    grav, inertia, dt = 9.80665 * 0.15, 0.15**2 + arm, 0.005

    def one(q, dq, goal):
        volts = vin * np.clip(kp * eg * (goal - q), -maxpwm, maxpwm)
        tau_m = kt * volts / r - kt**2 * dq / r
        tau_e = -grav * np.sin(q)
        w = np.exp(-(np.abs(dq / vs) ** alpha))
        quad = 0.0
        if np.sign(tau_e) != np.sign(tau_m):
            quad = keq * np.abs(tau_e) ** 2 if np.abs(tau_e) < np.abs(tau_m) else kmq * np.abs(tau_m) ** 2
        budget = kc + np.abs(ke * tau_e - km * tau_m) + w * (kcs + np.abs(kes * tau_e - kms * tau_m) + quad)
        tau_stop = inertia / dt * dq + tau_m + tau_e
        tau_f = -np.sign(tau_stop) * np.min([np.abs(tau_stop), budget + kv * np.abs(dq)], axis=0)
        acc = (tau_m + tau_e + tau_f) / inertia
        return q + dq * dt + 0.5 * acc * dt**2, dq + acc * dt

    def run():
        th = np.zeros(joints)
        dth = np.zeros(joints)
        for k in range(steps):
            for j in range(joints):
                th[j], dth[j] = one(th[j], dth[j], goals[k, j])

    return steps * joints / timed(run)


@numba.njit(parallel=True, fastmath=False, error_model="numpy", cache=True)
def roofline_kernel(th_io, dth_io, goal, dt, P, gravity, inertia, o_theta, o_dtheta, o_tau_m, o_tau_f, o_volts):
    """The arithmetic of one Algorithm-1 step (voltage law, M6 budget, pendulum), branch-free, structure-of-arrays,
    libm sin / exp / pow, each element's whole time loop in registers, elements spread over the cores."""
    nt, n = goal.shape
    for i in numba.prange(n):
        kpe = P[P_KP, i] * P[P_EGAIN, i]
        maxpwm, vin, vmax = P[P_MAXPWM, i], P[P_VIN, i], P[P_VMAX, i]
        kt_r = P[P_KT, i] / P[P_R, i]
        kt2_r = P[P_KT, i] * kt_r
        j = inertia[i] + P[P_ARM, i]
        j_dt, inv_j = j / dt, 1.0 / j
        kc, kv, km, ke = P[P_KC, i], P[P_KV, i], P[P_KM, i], P[P_KE, i]
        kcs, kms, kes, kmq, keq = P[P_KCS, i], P[P_KMS, i], P[P_KES, i], P[P_KMQ, i], P[P_KEQ, i]
        inv_vs, alpha, q_off, grav = 1.0 / P[P_VS, i], P[P_ALPHA, i], P[P_QOFF, i], gravity[i]
        th, dth = th_io[i], dth_io[i]
        for t in range(nt):
            volts = vin * min(max(kpe * (goal[t, i] - th), -maxpwm), maxpwm)
            tm = kt_r * volts - kt2_r * dth
            te = -grav * math.sin(th + q_off)
            w = math.exp(-(abs(dth * inv_vs) ** alpha))
            am, ae = abs(tm), abs(te)
            q = keq * te * te if am > ae else kmq * tm * tm
            q = q if tm * te < 0.0 else 0.0
            budget = kc + kv * abs(dth) + abs(km * tm - ke * te) + w * (kcs + abs(kms * tm - kes * te) + q)
            tf = min(max(-(j_dt * dth + tm + te), -budget), budget)
            acc = (tm + te + tf) * inv_j
            o_theta[t, i] = th
            o_dtheta[t, i] = dth
            o_tau_m[t, i] = tm
            o_tau_f[t, i] = tf
            o_volts[t, i] = volts
            dth_next = min(max(dth + acc * dt, -vmax), vmax)
            th = th + dth_next * dt + 0.5 * acc * dt * dt
            dth = dth_next
        th_io[i], dth_io[i] = th, dth


def case(params, batch: int, joints: int, steps: int):
    """(goals (T, B, J), pendulum load, θ0) of the bench case."""
    rng = np.random.default_rng(1)
    goals = rng.uniform(-1, 1, (steps, batch, joints))
    load = PendulumLoad(mass=rng.choice([0.5, 1.0, 1.5], (batch, joints)), length=0.15, arm_mass=0.1)
    return goals, load, np.zeros((batch, joints))


def rollout_call(params, batch: int, joints: int, steps: int, backend: str, reuse: bool = False):
    """A function running one rollout of the case (compiled and warmed up); ``reuse``: into the same output
    arrays each call (``out=``), else fresh ones."""
    goals, load, th0 = case(params, batch, joints, steps)
    rollout(params, th0, th0, goals[:2], 0.005, load, backend=backend)  # compile / warm up
    out = StepResult(*(np.empty(goals.shape) for _ in range(5))) if reuse else None
    return lambda: rollout(params, th0, th0, goals, 0.005, load, backend=backend, out=out)


def positions_call(params, batch: int, joints: int, steps: int):
    """A fused rollout recording θ only (``positions_only``: what identification runs), into reused outputs."""
    goals, load, th0 = case(params, batch, joints, steps)
    rollout(params, th0, th0, goals[:2], 0.005, load, positions_only=True)
    out = StepResult(np.empty(goals.shape), None, None, None, None)
    return lambda: rollout(params, th0, th0, goals, 0.005, load, positions_only=True, out=out)


def roofline_call(params, batch: int, joints: int, steps: int, reuse: bool = True):
    """A function running the roofline kernel on the case (the same outputs as a full rollout; ``reuse``: the
    same output arrays each call, else fresh ones)."""
    goals, load, _ = case(params, batch, joints, steps)
    n = batch * joints
    P = np.ascontiguousarray(np.tile(params.packed()[:, None], (1, n)))
    g = np.ascontiguousarray(goals.reshape(steps, n))
    grav = np.ascontiguousarray(np.broadcast_to(load.gravity_torque_amplitude(), (batch, joints)).reshape(n))
    inertia = np.ascontiguousarray(np.broadcast_to(load.inertia(), (batch, joints)).reshape(n))
    kept = [np.empty((steps, n)) for _ in range(5)]

    def run():
        outs = kept if reuse else [np.empty((steps, n)) for _ in range(5)]
        threads = numba.get_num_threads()
        numba.set_num_threads(threads if n >= PARALLEL_MIN_ELEMENTS else 1)  # as rollout: no pool wake for 1 x 1
        try:
            roofline_kernel(np.zeros(n), np.zeros(n), g, 0.005, P, grav, inertia, *outs)
        finally:
            numba.set_num_threads(threads)

    run()
    return run


def one_thread(fn):
    """``fn`` run with numba's pool held to one thread (rollout then keeps that count)."""

    def run():
        threads = numba.get_num_threads()
        numba.set_num_threads(1)
        try:
            return fn()
        finally:
            numba.set_num_threads(threads)

    return run


def batched_rate(params, batch: int, joints: int, steps: int, backend: str) -> float:
    return steps * batch * joints / timed(rollout_call(params, batch, joints, steps, backend))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--model", default="m6")
    ap.add_argument("--rounds", type=int, default=7, help="alternating rounds of the ratios")
    args = ap.parse_args()
    params = preset("mx106", args.model)
    scalar = scalar_loop_rate(params, steps=max(args.steps // 4, 20))
    numpy_scalar = numpy_scalar_loop_rate(params, steps=max(args.steps // 20, 5))
    rows = []
    for batch, joints in [(1, 1), (1, 20), (256, 20), (4096, 20)]:
        fused = batched_rate(params, batch, joints, args.steps, "numba")
        numpy_steps = args.steps if batch * joints >= 256 else args.steps // 4
        npy = batched_rate(params, batch, joints, max(numpy_steps, 10), "numpy")
        rows.append((f"{batch}x{joints}", fused, npy))
    print(
        f"model {args.model} (MX-106 preset), pendulum bench, dt 5 ms, {args.steps} steps per rollout, "
        f"{numba.get_num_threads()} threads, SVML {'in use' if numba.config.USING_SVML else 'not in use'}"
    )
    print(
        f"{'batch':>9} | {'fused numba':>12} | {'numpy arrays':>12} | {'scalar math':>12} | {'scalar np':>12} "
        f"| {'fused/math':>10} | {'fused/np':>9}"
    )
    print("-" * 96)
    for name, fused, npy in rows:
        print(
            f"{name:>9} | {fused:12.3e} | {npy:12.3e} | {scalar:12.3e} | {numpy_scalar:12.3e} "
            f"| {fused / scalar:9.0f}x | {fused / numpy_scalar:8.0f}x"
        )
    print(
        "(joint-steps per second; 'scalar math' = per-step loop on Python floats with the math module, "
        "'scalar np' = per-step loop calling numpy on scalars as bam's Simulator.step does)"
    )
    # the ratios: arms alternating, each round's figures under the same load
    n_big = 4096 * 20 * 50
    arms = {
        "fused": rollout_call(params, 4096, 20, 50, "numba", reuse=True),
        "fused_1thread": one_thread(rollout_call(params, 4096, 20, 50, "numba", reuse=True)),
        "fused_positions": positions_call(params, 4096, 20, 50),
        "numpy": rollout_call(params, 4096, 20, 50, "numpy", reuse=True),
        "roofline": roofline_call(params, 4096, 20, 50),
        "fused_fresh": rollout_call(params, 4096, 20, 50, "numba"),
        "numpy_fresh": rollout_call(params, 4096, 20, 50, "numpy"),
        "write_outputs": (lambda o=np.empty((50, 4096 * 20)): [o.fill(1.0) for _ in range(5)]),  # 5 outputs' bytes
    }
    big = interleaved({k: (lambda f=f: n_big / batch_time(f)) for k, f in arms.items()}, args.rounds)
    one = {
        "fused": rollout_call(params, 1, 1, args.steps, "numba"),
        "roofline": roofline_call(params, 1, 1, args.steps),
    }
    small = interleaved({k: (lambda f=f: min(batch_time(f) for _ in range(20))) for k, f in one.items()}, args.rounds)
    f_np, f_roof = paired_ratio(big["fused"], big["numpy"]), paired_ratio(big["fused"], big["roofline"])
    f_pos = paired_ratio(big["fused_positions"], big["numpy"])
    f_one = paired_ratio(big["fused_1thread"], big["numpy"])
    f_fresh = paired_ratio(big["fused_fresh"], big["numpy_fresh"])
    write_share = paired_ratio(big["fused"], big["write_outputs"])
    print(
        f"\nSame-run ratios, 4096 x 20 x 50 steps, {args.rounds} rounds fused / numpy / roofline alternating "
        "(joint-steps/s, median [min-max] of the rounds; absolute figures are this machine's at this load):"
    )
    for k, v in big.items():
        print(f"  {k:>9}: {np.median(v):.3e} [{v.min():.3e} - {v.max():.3e}]")
    print(
        f"  fused / numpy = {f_np:.2f}, fused / roofline = {f_roof:.2f}, fused positions-only / numpy = {f_pos:.2f} "
        "(median of the per-round ratios; these arms write into the same output arrays each call, out=)"
    )
    print(
        f"  fused on one thread / numpy = {f_one:.2f} (numpy runs on one; the two-thread figure over this one is "
        f"{paired_ratio(big['fused'], big['fused_1thread']):.2f}, the parallel launch's yield on this machine now)"
    )
    print(
        f"  fresh outputs each call (both arms allocate): fused / numpy = {f_fresh:.2f}; writing the five outputs "
        f"alone (fill) takes {write_share:.2f} of the fused rollout's time: the rest is the arithmetic"
    )
    print(
        f"1 x 1, {args.steps} steps, one call (best of 20 per round, median over rounds): fused "
        f"{np.median(small['fused']) * 1e6:.1f} us, roofline kernel {np.median(small['roofline']) * 1e6:.1f} us"
    )
    print(
        f"RESULT fused_over_numpy_4096x20={f_np:.3g} fused_over_roofline={f_roof:.3g} "
        f"fused_fresh_over_numpy_4096x20={f_fresh:.3g} output_writes_share={write_share:.3g} "
        f"fused_positions_over_numpy_4096x20={f_pos:.3g} fused_1thread_over_numpy_4096x20={f_one:.3g} "
        f"one_joint_call_us={np.median(small['fused']) * 1e6:.1f} "
        f"one_joint_roofline_us={np.median(small['roofline']) * 1e6:.1f} "
        f"joint_steps_per_s_4096x20={np.median(big['fused']):.4g} speedup_vs_scalar={rows[-1][1] / numpy_scalar:.4g} "
        f"speedup_vs_math_scalar={rows[-1][1] / scalar:.4g}"
    )


if __name__ == "__main__":
    main()
