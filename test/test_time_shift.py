"""Command delay, measurement delay and firmware period in the batched rollout (identification/time_shift.py)."""

import numpy as np
import pytest

from servo_ff.identification.search_space import pack_candidates
from servo_ff.identification.simulation_cost import simulate_batch
from servo_ff.identification.synthetic import bench_grid, simulate_logs
from servo_ff.identification.time_shift import shift, shift_log, simulate_timed
from servo_ff.io.servo_log import stack_logs
from servo_ff.models.presets import preset

TRUTH = preset("mx64", "m4")
DT = 0.005


def _batch(substeps: int = 1):
    logs = simulate_logs(
        TRUTH, bench_grid(masses=(0.5,), lengths=(0.15,), kps=(8, 32)), duration=3.0, substeps=substeps
    )
    return logs, stack_logs(logs)


def _packed(batch, pop: int = 1):
    return np.repeat(pack_candidates(TRUTH.packed(), [], np.zeros((1, 0)), batch), pop, axis=0)


def test_shift_by_whole_samples_is_the_series_shifted_and_held_at_the_ends():
    x = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    np.testing.assert_array_equal(shift(x, 0.0, DT), x)
    np.testing.assert_array_equal(shift(x, 2 * DT, DT), [1.0, 1.0, 1.0, 2.0, 4.0])
    np.testing.assert_array_equal(shift(x, -DT, DT), [2.0, 4.0, 8.0, 16.0, 16.0])
    np.testing.assert_allclose(shift(x, 0.5 * DT, DT), [1.0, 1.5, 3.0, 6.0, 12.0], rtol=1e-15)
    np.testing.assert_array_equal(shift(x, 3 * 0.1, 0.1), [1.0, 1.0, 1.0, 1.0, 2.0])  # 0.3 / 0.1 is 3 + 1 ulp


def test_shift_takes_one_delay_per_candidate():
    x = np.arange(6.0)[:, None, None] * np.array([1.0, 10.0])  # (T, 1, logs)
    x = np.broadcast_to(x, (6, 2, 2))
    got = shift(x, np.array([[0.0], [3 * DT]]), DT)
    np.testing.assert_array_equal(got[:, 0], x[:, 0])
    np.testing.assert_array_equal(got[:, 1, 0], [0.0, 0.0, 0.0, 0.0, 1.0, 2.0])


def test_shift_refuses_a_non_finite_delay():
    with pytest.raises(ValueError, match="delay must be finite"):
        shift(np.zeros(4), np.nan, DT)


def test_no_delay_equals_the_plain_rollout_bit_for_bit():
    _, batch = _batch()
    packed = _packed(batch, 2)
    np.testing.assert_array_equal(simulate_timed(packed, batch), simulate_batch(packed, batch))


@pytest.mark.parametrize("k", [1, 3])
def test_a_command_delay_of_k_samples_is_the_rollout_on_the_goal_shifted_by_k(k):
    _, batch = _batch()
    packed = _packed(batch, 2)
    g = batch.goal_position
    moved = batch._replace(goal_position=np.concatenate([np.repeat(g[:1], k, axis=0), g[:-k]]))
    got = simulate_timed(packed, batch, command_delay=np.array([0.0, k * DT]))
    np.testing.assert_array_equal(got[:, 0], simulate_batch(packed[:1], batch)[:, 0])
    np.testing.assert_array_equal(got[:, 1], simulate_batch(packed[:1], moved)[:, 0])
    assert np.abs(got[:, 1] - got[:, 0]).max() > 1e-3  # the delay changed the motion


def test_a_measurement_delay_of_k_samples_is_the_simulated_position_shifted_by_k():
    _, batch = _batch()
    packed = _packed(batch)
    plain = simulate_batch(packed, batch)
    got = simulate_timed(packed, batch, measurement_delay=2 * DT)
    np.testing.assert_array_equal(got[2:], plain[:-2])
    np.testing.assert_array_equal(got[:2], np.broadcast_to(plain[0], got[:2].shape))


def test_substeps_reproduce_a_log_simulated_at_the_finer_period():
    _, batch = _batch(substeps=5)
    packed = _packed(batch)
    fine = simulate_timed(packed, batch, substeps=5)
    coarse = simulate_timed(packed, batch)
    np.testing.assert_allclose(fine[:, 0], batch.position, atol=1e-12)
    assert np.abs(coarse[:, 0] - batch.position).max() > 1e-4  # the period is visible at these gains


def test_a_log_recorded_with_a_late_goal_is_explained_by_the_delay_that_made_it():
    """The logger stamps goal(t + d) at t when the goal reaches the firmware d late: simulate_timed with the same
    d reproduces the recorded position; no delay does not."""
    logs, batch = _batch()
    d = 0.5 * DT + 2 * DT
    early = batch._replace(goal_position=shift(batch.goal_position, -d, DT))  # what the logger stamped
    packed = _packed(batch)
    want = simulate_batch(packed, batch)[:, 0]
    late = simulate_timed(packed, early, command_delay=d)[:, 0]
    body = slice(0, -4)  # the last samples read past the log's end
    off = np.abs(simulate_batch(packed, early)[:, 0] - want)[body].mean()
    assert np.abs(late - want)[body].mean() < 0.03 * off  # not exact: a step goal is interpolated twice


def test_shift_log_folds_fixed_delays_into_the_data():
    logs, batch = _batch()
    folded = stack_logs([shift_log(lg, command_delay=0.004, measurement_delay=2 * DT) for lg in logs])
    np.testing.assert_array_equal(folded.goal_position, shift(batch.goal_position, 0.004, DT))
    np.testing.assert_array_equal(folded.position[:-2], batch.position[2:])
    np.testing.assert_array_equal(folded.speed[:-2], batch.speed[2:])
