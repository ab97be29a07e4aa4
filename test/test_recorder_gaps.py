"""Recorder gaps (io/sample_gaps.py): a stretch without measured samples is not interpolated as motion — the α fit
and identify use the stretches around it; a goal stream that is silent is held and said; jitter is no gap."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from servo_ff.identification.alpha_data import data_from_samples, fit_alpha_data, pendulum_torque
from servo_ff.identification.simulation_cost import evaluate
from servo_ff.io.bam_logs import read_csv, write_csv
from servo_ff.io.servo_log import ServoLog, stack_logs
from servo_ff.models.presets import preset
from servo_ff.models.stepper import PendulumLoad, rollout
from servo_ff.trajectories import schwarz_behnke_reference
from servo_ff.workflows.alpha import fit_alpha_source

KP, VIN, DT = 8.0, 15.0, 0.005
PARAMS = preset("mx64", "m2")
PARAMS = PARAMS.with_(firmware=PARAMS.firmware.with_(kp=KP, vin=VIN))
GAP_AT, GAP = 5.6, 0.3  # [s] a recorder stall in the fast part of the reference


def _motion() -> ServoLog:
    """pendulum_1 (mx64/m2, 0.5 kg at 0.15 m, kp 8, 15 V) under the Schwarz & Behnke reference: the clean log."""
    ref = schwarz_behnke_reference(dt=DT, offset=0.3)
    r = rollout(PARAMS, np.array([ref.q[0]]), np.array([0.0]), ref.q[:, None], DT, load=PendulumLoad(0.5, 0.15, 0.0))
    n = len(ref.q)
    return ServoLog(
        t=np.arange(n) * DT,
        position=r.theta[:, 0],
        speed=r.dtheta[:, 0],
        goal_position=ref.q,
        torque_enable=np.ones(n),
        input_volts=np.full(n, VIN),
        mass=0.5,
        length=0.15,
        kp=KP,
        vin=VIN,
        motor="mx64",
    )


CLEAN = _motion()


def _without(log: ServoLog, start: float, length: float) -> ServoLog:
    """``log`` with its samples in [start, start + length) [s] missing, as a stalled recorder leaves it."""
    keep = ~((log.t >= start - 1e-9) & (log.t < start + length - 1e-9))
    cols = ("t", "position", "speed", "goal_position", "torque_enable", "input_volts")
    return log.with_(**{k: getattr(log, k)[keep] for k in cols})


def _gap_lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if "recorder gap" in r.getMessage()]


def _alpha_of_what_was_measured(gap: float) -> np.ndarray:
    """α̂ of the clean samples on the two stretches around the gap: all the information a gapped log holds."""
    n, i0, i1 = len(CLEAN), int(round(GAP_AT / DT)), int(round((GAP_AT + gap) / DT))
    data = data_from_samples(CLEAN.goal_position, CLEAN.position, VIN, KP, DT, "clean", ((0, i0), (i1, n)))
    return fit_alpha_data(data, pendulum_torque(0.5, 0.15)).alpha


def _assert_close(a: np.ndarray, ref: np.ndarray) -> None:
    """α̂0, α̂1 within 1 % (the reliable figures), the Coulomb and static terms within 0.3 (before: 30 off)."""
    assert abs(a[0] / ref[0] - 1) < 0.01 and abs(a[1] / ref[1] - 1) < 0.01, (a, ref)
    assert abs(a[2] - ref[2]) < 0.3 and abs(a[3] - ref[3]) < 0.3, (a, ref)


def test_a_csv_with_rows_missing_is_fitted_on_the_stretches_around_the_gap(tmp_path, caplog):
    """Before: 0.3 s of rows missing gave α̂ = [13.27, 5.40, 30.95, 2.03] (clean [15.51, 10.08, 0, 1.58]), exit 0."""
    path = tmp_path / "gap.csv"
    write_csv(_without(CLEAN, GAP_AT, GAP), path)
    with caplog.at_level(logging.WARNING):
        res = fit_alpha_source(path)
    lines = _gap_lines(caplog)
    assert len(lines) == 1 and str(path) in lines[0] and "0.305 s at 5.595 s" in lines[0], lines
    assert "in 2 stretches" in res.data.source and len(res.data.segments) == 2
    _assert_close(res.fit.alpha, _alpha_of_what_was_measured(GAP))


@pytest.mark.parametrize("gap", [0.3, 1.0])
def test_a_bag_whose_topics_all_stalled_is_fitted_on_the_stretches_around_the_gap(tmp_path, caplog, gap):
    """Before: every topic dropped for 0.3 s at 5.6 s gave α̂2 = 32.4 (clean ≈ 0), for 1 s α̂3 = 11.4, exit 0."""
    pytest.importorskip("rosbags")
    from servo_ff.io.rosbag_write import write_rosbag

    bag = tmp_path / "bag"
    write_rosbag(_without(CLEAN, GAP_AT, gap), bag)
    with caplog.at_level(logging.WARNING):
        res = fit_alpha_source(bag)
    lines = _gap_lines(caplog)
    assert len(lines) == 1 and "topic /joint_states" in lines[0] and f"{gap + DT:.3f} s at 5.595 s" in lines[0]
    _assert_close(res.fit.alpha, _alpha_of_what_was_measured(gap))


def test_identify_simulates_each_stretch_from_its_own_first_sample(tmp_path):
    """The true parameters reproduce a gapped log: each stretch is a column of the batch, started from its measured
    state (before: one rollout through the interpolated gap, 0.3 s of goals that were never sent)."""
    path = tmp_path / "gap.csv"
    write_csv(_without(CLEAN, GAP_AT, GAP), path)
    log = read_csv(path)
    assert evaluate(PARAMS, [log]) < 1e-5  # [rad] before: 4.7e-3 rad
    batch = stack_logs([log])
    assert batch.mask.shape[1] == 2 and batch.mask.sum() == sum(b - a for a, b in log.spans())


def test_a_log_cut_by_a_gap_weighs_one_log_its_samples_alike():
    """identify's cost: a log with a recorder gap near its end is one log whose MAE is over all its samples, beside
    a log without gaps (before: each stretch weighed a whole log, the 0.5 s tail as much as the 8 s before it)."""
    wrong = PARAMS.with_(kt=PARAMS.kt * 0.7)
    n = len(CLEAN)
    cut = n - 100  # a 5-sample gap 0.5 s before the end
    gapped = CLEAN.with_(segments=((0, cut), (cut + 5, n)))
    head, tail = CLEAN.with_(segments=((0, cut),)), CLEAN.with_(segments=((cut + 5, n),))
    e_head, e_tail = evaluate(wrong, [head]), evaluate(wrong, [tail])
    assert abs(e_head - e_tail) > 0.2 * e_head  # the two stretches differ: the weighting shows
    per_sample = (e_head * cut + e_tail * (n - cut - 5)) / (n - 5)
    assert evaluate(wrong, [gapped]) == pytest.approx(per_sample, rel=1e-9)  # before: (e_head + e_tail) / 2
    other = CLEAN.with_(goal_position=CLEAN.goal_position * 0.5, segments=None)
    e_other = evaluate(wrong, [other])
    assert evaluate(wrong, [gapped, other]) == pytest.approx((per_sample + e_other) / 2, rel=1e-9)
    batch = stack_logs([gapped, other])
    np.testing.assert_allclose(batch.weight, [cut / (n - 5), (n - cut - 5) / (n - 5), 1.0])


def test_jitter_is_interpolated_not_a_gap(tmp_path, caplog):
    """A late tick (3 periods) stays interpolated: no gap, no line."""
    path = tmp_path / "late.csv"
    write_csv(_without(CLEAN, 4.0, 2 * DT), path)
    with caplog.at_level(logging.WARNING):
        log = read_csv(path)
    assert log.segments is None and not _gap_lines(caplog)


def test_a_silent_goal_stream_is_held_and_said(tmp_path, caplog):
    """Commands not sent for 0.3 s: the measurement has no gap (nothing left out), the last goal is held, in one
    line naming the topic (before: held without a word)."""
    pytest.importorskip("rosbags")
    from servo_ff.io.rosbag import read_rosbag
    from servo_ff.io.rosbag_write import write_rosbag

    full = tmp_path / "full"
    write_rosbag(CLEAN, full)
    bag = _without_messages(full, tmp_path / "bag", "/goal_position", GAP_AT, GAP_AT + GAP)
    with caplog.at_level(logging.WARNING):
        log = read_rosbag(bag)
    lines = [r.getMessage() for r in caplog.records if "no goal message" in r.getMessage()]
    assert log.segments is None and not _gap_lines(caplog)
    assert len(lines) == 1 and "/goal_position" in lines[0] and "the last goal is held" in lines[0], lines
    i0, i1 = int(round(GAP_AT / DT)), int(round((GAP_AT + GAP) / DT))
    assert (log.goal_position[i0:i1] == CLEAN.goal_position[i0 - 1]).all()


def _without_messages(bag, out, topic: str, t_from: float, t_to: float):
    """A copy of ``bag`` at ``out`` without the messages of ``topic`` received in [t_from, t_to) [s] after its
    first message."""
    from rosbags.rosbag2 import Reader, Writer

    from servo_ff.io.rosbag import _typestore

    ts = _typestore()
    with Reader(bag) as r, Writer(out, version=9) as w:
        conns = {c.id: w.add_connection(c.topic, c.msgtype, typestore=ts) for c in r.connections}
        for c, t, raw in r.messages():
            if c.topic == topic and t_from - 1e-6 <= (t - r.start_time) * 1e-9 < t_to - 1e-6:
                continue
            w.write(conns[c.id], t, raw)
    return out


def test_a_free_swing_is_not_timed_across_a_gap(tmp_path):
    """identify's armature from torque-off swings: a half-swing is timed within a stretch only (before: one timed
    across 0.3 s missing gave 0.0015 kg·m² for 0.0124)."""
    from servo_ff.identification.free_swing import half_swings

    n, load = 1200, PendulumLoad(0.5, 0.15, 0.0)
    r = rollout(PARAMS, np.array([1.2]), np.array([0.0]), np.zeros((n, 1)), DT, load=load, enable=np.zeros((n, 1)))
    swing = CLEAN.with_(
        t=np.arange(n) * DT,
        position=r.theta[:, 0],
        speed=r.dtheta[:, 0],
        goal_position=np.zeros(n),
        torque_enable=np.zeros(n),
        input_volts=np.full(n, VIN),
    )
    (clean,) = half_swings(swing, load)
    path = tmp_path / "swing.csv"
    write_csv(_without(swing, 0.45, GAP), path)  # across the first turning point
    got = half_swings(read_csv(path), load)
    assert all(abs(a / clean - 1) < 0.01 for a in got), (got, clean)
