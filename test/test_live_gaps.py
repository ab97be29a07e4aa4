"""Live topics with a /joint_states pause (the hardware node publishes nothing while its bus is lost), goals
continuing: the fit node's data (data_from_streams) and its online RLS use the stretches around the pause, as a
bag's or a log's recorder gaps are (io/sample_gaps.py), never a straight line across it."""

from __future__ import annotations

import logging

import numpy as np

from servo_ff.identification.alpha_data import data_from_streams, fit_alpha_data, pendulum_torque
from servo_ff.identification.alpha_rls import LiveAlphaRefiner, RLSOptions
from servo_ff.models.presets import preset
from servo_ff.models.stepper import PendulumLoad, rollout
from servo_ff.trajectories import schwarz_behnke_reference

KP, VIN, DT = 8.0, 15.0, 0.005
GAP_AT, GAP = 5.6, 0.3  # [s] a pause of /joint_states in the fast part of the reference
TORQUE = pendulum_torque(0.5, 0.15)


def _streams(gap: float):
    """pendulum_1 (mx64/m2, 0.5 kg at 0.15 m, kp 8, 15 V) under the Schwarz & Behnke reference: goal times and
    goals, state times and positions (none in [GAP_AT, GAP_AT + gap))."""
    p = preset("mx64", "m2")
    p = p.with_(firmware=p.firmware.with_(kp=KP, vin=VIN))
    ref = schwarz_behnke_reference(dt=DT, offset=0.3)
    r = rollout(p, np.array([ref.q[0]]), np.array([0.0]), ref.q[:, None], DT, load=PendulumLoad(0.5, 0.15, 0.0))
    t = np.arange(len(ref.q)) * DT
    keep = ~((t >= GAP_AT - 1e-9) & (t < GAP_AT + gap - 1e-9))
    return t, ref.q, t[keep], r.theta[keep, 0]


def _data(gap: float):
    t_goal, goal, t_state, position = _streams(gap)
    return data_from_streams(t_goal, goal, t_state, position, VIN, KP, DT, "live topics")


def test_a_joint_states_pause_is_not_interpolated_across(caplog):
    """Before: 0.3 s without /joint_states gave α̂ = [15.89, 8.91, 1.82, 0] (clean [15.51, 10.08, 0, 1.58]), rms
    27 mrad, passing the gate; now [15.50, 10.08, 0, 1.585], as the CLI on a bag with that gap."""
    clean = fit_alpha_data(_data(0.0), TORQUE).alpha
    with caplog.at_level(logging.WARNING):
        data = _data(GAP)
    gapped = fit_alpha_data(data, TORQUE).alpha
    assert abs(gapped[0] / clean[0] - 1) < 0.02 and abs(gapped[1] / clean[1] - 1) < 0.10, (gapped, clean)
    assert len(data.segments) == 2 and "between joint_states pauses" in data.source
    lines = [r.getMessage() for r in caplog.records if "not interpolated across" in r.getMessage()]
    assert len(lines) == 1 and "live topics: joint_states" in lines[0] and "0.305 s at 5.595 s" in lines[0], lines


def test_the_rls_pairs_within_the_stretches_around_a_pause():
    """The online RLS (started from the clean fit) fed the window with the pause ends where it ends fed the clean
    window, within 2 % (before: it took the straight line across the pause as motion; since the RLS judges each
    sample's excitation over the 4 s around it within its stretch, a few samples beside the pause are judged on
    the stretch's own spans and differ from the clean window's: 1.2 % on α̂1)."""
    fit = fit_alpha_data(_data(0.0), TORQUE)
    ends = []
    for gap in (0.0, GAP):
        refiner = LiveAlphaRefiner(fit, TORQUE, RLSOptions(forgetting=0.99))
        data = _data(gap)
        assert refiner.feed(data, 0.0) > 0
        ends.append(refiner.rls.alpha)
    clean, gapped = ends
    assert abs(gapped[0] / clean[0] - 1) < 0.02 and abs(gapped[1] / clean[1] - 1) < 0.02, (gapped, clean)


def test_overlapping_windows_with_a_pause_feed_each_sample_once():
    """The fit node feeds the RLS overlapping windows (10 s every rls_period): each sample is used once, by its own
    time (before: times counted on a grid from the window's start ran 0.3 s early after the pause, re-feeding
    samples). Windows here overlap by 8 s, twice the 4 s excitation span judged on each side of a sample, as the
    node's (window 10 s, rls_period 1 s) do: a sample is judged in the first window holding both its spans."""
    t_goal, goal, t_state, position = _streams(GAP)
    fit = fit_alpha_data(_data(0.0), TORQUE)

    def fed(windows) -> int:
        refiner, n = LiveAlphaRefiner(fit, TORQUE), 0
        for a, b in windows:
            g, s = (t_goal >= a) & (t_goal <= b), (t_state >= a) & (t_state <= b)
            data = data_from_streams(t_goal[g], goal[g], t_state[s], position[s], VIN, KP, DT, "RLS")
            n += refiner.feed(data, max(t_goal[g][0], t_state[s][0]))  # t0 as the fit node gives it
        return n

    whole = fed([(0.0, 10.0)])
    assert whole > 1000 and fed([(0.0, 9.5), (0.5, 10.0)]) == whole
    # windows from 1 s: the window's grid from t0 = 1 s puts 5.99 s at 5.98999999999989 s, before the last sample
    # used (5.99 s): one sample fewer until a sample is new only more than half a period after it (1136 of 1137)
    assert fed([(0.0, 9.0), (1.0, 10.0)]) == whole
    # 8 s windows every 0.1 s, each on its own grid: before, the first sample after the pause was lost on one grid
    # (above) and two samples were fed twice (a later grid put a used sample 1e-13 s after the last one used): 1139
    windows = [(max(0.0, end - 8.0), end) for end in 6.5 + 0.1 * np.arange(36)]
    assert fed(windows) == whole
