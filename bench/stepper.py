"""Joint-steps per second of the Algorithm-1 stepper (Duclusaud et al. (Extended Friction Models)), M6 on the pendulum
bench.

Compares, in one run: the fused numba kernel (``rollout``), the numpy fallback, and a plain per-step scalar
Python loop (one joint, one step at a time — the way reference implementations step).

    python bench/stepper.py [--steps 200] [--model m6]
"""

from __future__ import annotations

import argparse
import time

import numba
import numpy as np

from servo_ff.models.presets import preset
from servo_ff.models.scalar import step_1
from servo_ff.models.stepper import PendulumLoad, rollout


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


def batched_rate(params, batch: int, joints: int, steps: int, backend: str) -> float:
    rng = np.random.default_rng(1)
    goals = rng.uniform(-1, 1, (steps, batch, joints))
    load = PendulumLoad(mass=rng.choice([0.5, 1.0, 1.5], (batch, joints)), length=0.15, arm_mass=0.1)
    th0 = np.zeros((batch, joints))
    rollout(params, th0, th0, goals[:2], 0.005, load, backend=backend)  # compile / warm up
    return steps * batch * joints / timed(lambda: rollout(params, th0, th0, goals, 0.005, load, backend=backend))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--model", default="m6")
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
        f"{numba.get_num_threads()} threads"
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
    big = rows[-1]
    print(
        f"RESULT joint_steps_per_s_4096x20={big[1]:.4g} speedup_vs_scalar={big[1] / numpy_scalar:.4g} "
        f"speedup_vs_math_scalar={big[1] / scalar:.4g}"
    )


if __name__ == "__main__":
    main()
