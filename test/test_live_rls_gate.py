"""The fit node's online RLS (LiveAlphaRefiner) holds α̂ while the joint does not move: the batch fit's excitation
minima (alpha_gate: min_range, min_speed) over the span before and after each new sample; a still joint's noise
velocities drive the sgn(q̇) friction columns at random (before: 8 s still moved a trusted α̂ [12.40, 2.35, 9.33, 0.36] →
[9.10, 1.93, 10.65, 1.13], pushed to the feed-forward node; /tmp/audit_19d/p05_fit_rls.py case c)."""

from __future__ import annotations

import numpy as np

from servo_ff.identification.alpha_data import data_from_streams, fit_alpha_data, pendulum_torque
from servo_ff.identification.alpha_rls import EXCITATION_SPAN, LiveAlphaRefiner, RLSOptions
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
    """8 s still (the goal constant, 1e-10 rad of noise on the position): no sample is used, α̂ and its trust are
    those of the start, and the refiner says why (the gate's figure and threshold)."""
    fit = _moving_fit()
    refiner = LiveAlphaRefiner(fit, TORQUE, RLSOptions(forgetting=0.99, min_samples=50))  # the default gate
    t, goal, q = _streams(np.full(1600, 0.3), noise=1e-10)
    used = sum(refiner.feed(_data(t[: k + 200], goal[: k + 200], q[: k + 200]), 0.0) for k in range(0, 1401, 100))
    assert used == 0 and refiner.rls.samples == 0 and refiner.still > 0
    np.testing.assert_array_equal(refiner.rls.alpha, refiner.rls.reference)
    assert "not enough excitation: motion range" in refiner.held and "min_range 0.05 rad" in refiner.held


def test_moving_samples_still_update_it():
    """The same refiner on a moving window is fed every new sample whose span ahead is in the data (the gate does not
    hold real motion; the last EXCITATION_SPAN s wait for the next window)."""
    ref = schwarz_behnke_reference(dt=DT, offset=0.3)
    refiner = LiveAlphaRefiner(_moving_fit(), TORQUE)
    judged = len(ref.q) - EXCITATION_SPAN / DT
    assert refiner.feed(_data(*_streams(ref.q)), 0.0) > 0.9 * judged and refiner.held == ""


def test_slow_motion_is_used_whatever_the_update_period():
    """A sine of 0.5 rad / 8 s (the batch gate passes every 10 s window: range 0.885 rad, speed 0.358 rad/s) fed every
    0.1 s from a 10 s window: every sample judged is used, none held (before: the minima were applied to the 20 new
    samples of each update, 400 of 400 updates held, 0 of 8000 samples used; /tmp/review_19c/rls_gate_chunks.py)."""
    t = np.arange(int(16 / DT)) * DT
    t, goal, q = _streams(0.5 * np.sin(2 * np.pi * t / 8.0))
    refiner = LiveAlphaRefiner(_moving_fit(), TORQUE)
    used = held = 0
    for end in range(2000, len(t) + 1, 20):
        used += refiner.feed(_data(t[end - 2000 : end], goal[end - 2000 : end], q[end - 2000 : end]), t[end - 2000])
        held += bool(refiner.held)
    assert held == 0 and refiner.still == 0
    assert used >= 0.95 * (len(t) - EXCITATION_SPAN / DT - 20)


def test_stillness_after_motion_does_not_move_it():
    """20 s of motion, then the goal held 8 s: the samples of the stillness are skipped (their span ahead is still),
    α̂ stays where the motion left it."""
    ref = schwarz_behnke_reference(dt=DT, offset=0.3).q
    t, goal, q = _streams(np.concatenate([ref, ref, np.full(1600, ref[-1])]), noise=1e-10)
    refiner, stop, at_stop = LiveAlphaRefiner(_moving_fit(), TORQUE), 2 * len(ref), None
    for end in range(200, len(t) + 1, 200):
        a = max(0, end - 2000)
        refiner.feed(_data(t[a:end], goal[a:end], q[a:end]), t[a])
        if at_stop is None and refiner.last_time >= t[stop]:  # the update that judged the stop
            at_stop, used = refiner.rls.alpha.copy(), refiner.rls.samples
    assert refiner.still > 700 and refiner.held  # the last 4 s of the stillness wait for a later window
    assert refiner.rls.samples == used  # (a span of 4 s up to each sample alone: 730 still ones used, α̂3 1.66 → 0.5)
    np.testing.assert_array_equal(refiner.rls.alpha, at_stop)


def test_trust_does_not_flip_on_a_ratio_near_its_threshold():
    """Plant 0.525 kg against a fit at 0.5 kg: the refined α̂'s error ratio hovers at 0.9 (0.77–0.93); trust is gained
    below trust_ratio 0.9 and lost only above distrust_ratio 1.0, so it changes once (before: one threshold, 99 flips
    in 290 updates, each a set_parameters on the feed-forward node and an alpha.yaml rewrite;
    /tmp/review_19c/rls_trust_flips.py)."""
    ref = schwarz_behnke_reference(dt=DT, offset=0.3).q
    p = preset("mx64", "m2")
    p = p.with_(firmware=p.firmware.with_(kp=KP, vin=VIN))
    goal = np.concatenate([ref] * 12)
    r = rollout(p, goal[:1], np.array([0.0]), goal[:, None], DT, load=PendulumLoad(0.525, 0.15, 0.0))
    t, q = np.arange(len(goal)) * DT, r.theta[:, 0] + 0.0005 * np.random.default_rng(1).standard_normal(len(goal))
    fit = fit_alpha_data(_data(*_streams(ref, noise=0.0005, seed=2)), TORQUE)
    refiner, states = LiveAlphaRefiner(fit, TORQUE, RLSOptions(forgetting=0.999)), []
    for end in range(2200, len(t) + 1, 200):
        refiner.feed(_data(t[end - 2000 : end], goal[end - 2000 : end], q[end - 2000 : end]), t[end - 2000])
        states.append(refiner.rls.trusted)
    assert any(states) and sum(a != b for a, b in zip(states, states[1:])) <= 1
