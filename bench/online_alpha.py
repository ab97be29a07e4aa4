"""Online refinement of α̂ by recursive least squares (Schwarz & Behnke's stated future work) in simulation.

A simulated MX-106 (bam's M2 file: viscous + Stribeck friction) drives a 1 kg pendulum at 0.15 m under low-gain P
control (k_P 4) with the Eq. 19 feed-forward, tracking a two-sine trajectory for 60 s. From t = 10 s to the end
the servo drifts: the supply falls 15 → 12.5 V (a discharging battery; the feed-forward reads it, as the node
reads ``servo_supply``), and the servo warms: winding resistance +16 % (copper, +40 K), Coulomb friction
0 → 0.05 N·m, Stribeck friction ×2, viscous ×1.5. Both runs start from the α̂ the nominal servo implies exactly
(``alpha_hat_from_actuator``: the best an α̂ fitted once can be); one keeps it, the other refines it by RLS
(``identification/alpha_rls.py``; forgetting 0.999, i.e. a 5 s memory; α̂ used only once trusted) from the
measured motion, 50 ms at a time.

Run: python bench/online_alpha.py [--duration 60]
Last line: RESULT rms_ratio_rls_over_fixed=<RMS with RLS / RMS with α̂ fixed>
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from servo_ff.identification.alpha_rls import AlphaRLS, RLSOptions, regression_rows  # noqa: E402
from servo_ff.identification.pendulum import output_torque  # noqa: E402
from servo_ff.models.presets import preset  # noqa: E402
from servo_ff.models.schwarz_behnke import (  # noqa: E402
    alpha_hat_from_actuator,
    goal_position_from_torque,
    stribeck_shape_from_actuator,
)
from servo_ff.models.stepper import PendulumLoad, rollout  # noqa: E402

DT, CHUNK, KP = 0.005, 10, 4.0
LOAD = PendulumLoad(1.0, 0.15)


def desired(t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """q, q̇, q̈ of the two-sine trajectory [rad, rad/s, rad/s²]."""
    w1, w2 = 2 * np.pi * 0.5, 2 * np.pi * 1.3
    q = 0.6 * np.sin(w1 * t) + 0.25 * np.sin(w2 * t)
    dq = 0.6 * w1 * np.cos(w1 * t) + 0.25 * w2 * np.cos(w2 * t)
    ddq = -0.6 * w1**2 * np.sin(w1 * t) - 0.25 * w2**2 * np.sin(w2 * t)
    return q, dq, ddq


def drifted(base, t: float, t0: float, t1: float):
    """The servo at time t: nominal before t0, drifted linearly to the end values at t1. Returns (params, supply)."""
    s = float(np.clip((t - t0) / (t1 - t0), 0.0, 1.0))
    f = base.friction
    p = base.with_(
        R=base.R * (1 + 0.16 * s),
        friction_base=f["friction_base"] + 0.05 * s,
        friction_stribeck=f["friction_stribeck"] * (1 + s),
        friction_viscous=f["friction_viscous"] * (1 + 0.5 * s),
    )
    vin = 15.0 - 2.5 * s
    return p.with_(firmware=p.firmware.with_(kp=KP, vin=vin)), vin


def run(base, duration: float, use_rls: bool, drift_start: float = 10.0) -> tuple[float, AlphaRLS]:
    """Tracking RMS [rad] after the first second, and the RLS state (unused when ``use_rls`` is False)."""
    alpha0 = alpha_hat_from_actuator(base, with_inertia=True)
    dq_s, delta = stribeck_shape_from_actuator(base)
    rls = AlphaRLS(alpha0, RLSOptions(forgetting=0.999, min_samples=400))
    n = int(round(duration / DT))
    t = np.arange(n + 1) * DT
    qd, dqd, ddqd = desired(t)
    tau_d = output_torque(LOAD, qd, ddqd)
    theta, dtheta = float(qd[0]), float(dqd[0])
    err = np.zeros(n)
    for k0 in range(0, n, CHUNK):
        k1 = min(k0 + CHUNK, n)
        params, vin = drifted(base, t[k0], drift_start, duration)
        alpha = rls.current() if use_rls else alpha0
        sl = slice(k0, k1 + 1)
        goals = goal_position_from_torque(qd[sl], tau_d[sl], dqd[sl], ddqd[sl], alpha, KP, vin, dq_s, delta)
        res = rollout(params, theta, dtheta, goals, DT, LOAD)
        th, dth = res.theta, res.dtheta
        err[k0:k1] = th[:-1] - qd[k0:k1]
        if use_rls:
            ddth = np.diff(dth) / DT
            tau = output_torque(LOAD, th[:-1], ddth)
            A, y = regression_rows(goals[:-1], th[:-1], tau, dth[:-1], ddth, KP, vin, 0, dq_s, delta)
            rls.update_batch(A, y)
        theta, dtheta = float(th[-1]), float(dth[-1])
    skip = int(1.0 / DT)
    return float(np.sqrt(np.mean(err[skip:] ** 2))), rls


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=60.0)
    args = ap.parse_args()
    base = preset("mx106", "m2")
    rms_fixed, _ = run(base, args.duration, use_rls=False)
    rms_rls, rls = run(base, args.duration, use_rls=True)
    end, _ = drifted(base, args.duration, 10.0, args.duration)
    truth_end = alpha_hat_from_actuator(end, with_inertia=True)
    np.set_printoptions(precision=3, suppress=True)
    print(f"α̂ at start (nominal servo):  {rls.reference}")
    print(f"α̂ the drifted servo implies: {truth_end}")
    print(
        f"α̂ refined by RLS at the end: {rls.alpha} (trusted {rls.trusted}, {rls.samples} samples, "
        f"{rls.skipped} skipped; a-priori RMS {np.sqrt(rls.mse_rls):.3f} vs reference {np.sqrt(rls.mse_ref):.3f})"
    )
    print(f"tracking RMS after 1 s: α̂ fixed {rms_fixed * 1e3:.2f} mrad, RLS {rms_rls * 1e3:.2f} mrad")
    print(f"RESULT rms_ratio_rls_over_fixed={rms_rls / rms_fixed:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
