"""The fit node's online RLS (LiveAlphaRefiner) holds α̂ while the joint does not move: the batch fit's excitation
minima (alpha_gate: min_range, min_speed) over the new samples of each update; a still joint's noise velocities
drive the sgn(q̇) friction columns at random (before: 8 s still moved a trusted α̂ [12.40, 2.35, 9.33, 0.36] →
[9.10, 1.93, 10.65, 1.13], pushed to the feed-forward node; /tmp/audit_19d/p05_fit_rls.py case c)."""

from __future__ import annotations

import numpy as np

from servo_ff.identification.alpha_data import data_from_streams, fit_alpha_data, pendulum_torque
from servo_ff.identification.alpha_rls import LiveAlphaRefiner, RLSOptions
from servo_ff.models.presets import preset
from servo_ff.models.stepper import PendulumLoad, rollout
from servo_ff.trajectories import schwarz_behnke_reference

KP, VIN, DT = 8.0, 15.0, 0.005
TORQUE = pendulum_torque(0.5, 0.15)


def _streams(goal: np.ndarray, noise: float = 0.0, seed: int = 0):
    """pendulum_1 (mx64/m2, 0.5 kg at 0.15 m, kp 8, 15 V) under ``goal``: times, goals, positions (+ noise [rad])."""
    p = preset("mx64", "m2")
    p = p.with_(firmware=p.firmware.with_(kp=KP, vin=VIN))
    r = rollout(p, np.array([goal[0]]), np.array([0.0]), goal[:, None], DT, load=PendulumLoad(0.5, 0.15, 0.0))
    q = r.theta[:, 0] + noise * np.random.default_rng(seed).standard_normal(len(goal))
    return np.arange(len(goal)) * DT, goal, q


def _data(t, goal, q):
    return data_from_streams(t, goal, t, q, VIN, KP, DT, "RLS")


def _moving_fit():
    ref = schwarz_behnke_reference(dt=DT, offset=0.3)
    return fit_alpha_data(_data(*_streams(ref.q)), TORQUE)


def test_a_still_joint_holds_the_rls_estimate():
    """4 s still (the goal constant, 1e-10 rad of noise on the position): no sample is used, α̂ and its trust are
    those of the start, and the refiner says why (the gate's figure and threshold)."""
    fit = _moving_fit()
    refiner = LiveAlphaRefiner(fit, TORQUE, RLSOptions(forgetting=0.99, min_samples=50))  # the default gate
    t, goal, q = _streams(np.full(800, 0.3), noise=1e-10)
    used = sum(refiner.feed(_data(t[: k + 200], goal[: k + 200], q[: k + 200]), 0.0) for k in range(0, 601, 100))
    assert used == 0 and refiner.rls.samples == 0
    np.testing.assert_array_equal(refiner.rls.alpha, refiner.rls.reference)
    assert "not enough excitation: motion range" in refiner.held and "min_range 0.05 rad" in refiner.held


def test_moving_samples_still_update_it():
    """The same refiner on a moving window is fed every new sample (the gate does not hold real motion)."""
    ref = schwarz_behnke_reference(dt=DT, offset=0.3)
    refiner = LiveAlphaRefiner(_moving_fit(), TORQUE)
    assert refiner.feed(_data(*_streams(ref.q)), 0.0) > 0.9 * len(ref.q) and refiner.held == ""
