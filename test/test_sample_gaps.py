"""measured_spans: a grid sample within float noise of a measured sample beside a gap is at that sample, not inside
the gap (a grid t0 + k·dt lands ±1e-13 s off the recorder's k·dt stamps)."""

import numpy as np

from servo_ff.io.sample_gaps import measured_spans


def test_a_grid_sample_at_the_first_state_after_a_gap_is_kept_on_any_grid():
    dt = 0.005
    t_state = np.arange(2000) * dt
    t_state = t_state[(t_state < 5.6 - 1e-9) | (t_state >= 5.9 - 1e-9)]  # none in [5.6, 5.9)
    for t0 in (0.0, 0.35, 1.0, 2.0):
        grid = np.arange(t0, t_state[-1], dt)
        spans = measured_spans("test", "joint_states", t_state, grid, dt, t0, say=lambda _: None)
        used = np.concatenate([grid[a:b] for a, b in spans])
        # every grid sample at a measured time is used: 5.585 … 5.595 before the pause, 5.9 after it
        assert np.isclose(used, 5.595).any() and np.isclose(used, 5.9).any(), t0
        # and none strictly inside the pause
        assert not ((used > 5.595 + 1e-6) & (used < 5.9 - 1e-6)).any(), t0
        assert len(used) == len(grid) - 60, (t0, len(grid) - len(used))
