"""The demo's OP3 act (servo_ff.bringup.demo_op3, ``./run demo`` stage 5): the OP3 walks over DDS under low-gain P +
feed-forward at the XM430's factory-derived gain, and the act writes its plot (trunk pitch, knees desired vs
measured) and prints its figures."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("placo")
pytest.importorskip("mujoco")
pytest.importorskip("rclpy")


def test_op3_act_walks_and_writes_its_plot(tmp_path, compiled_mujoco_kernels):
    from servo_ff.bringup.demo_op3 import KNEES, knee_rms, run_op3_act

    res, table, plot = run_op3_act(tmp_path, n_steps=4, log=lambda *a: None)
    assert plot == tmp_path / "op3_walk.png" and plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert plot.stat().st_size > 20_000  # three panels of curves, not an empty figure
    assert "| (c) low-gain P + FF | 280 |" in table and f"{knee_rms(res):.4f} rad" in table
    assert res.kp == pytest.approx(280.0) and res.tracked == KNEES
    assert not res.fell, res.fell_at  # measured: stands through 8 steps (0.29 m), knee RMS 0.07 rad
    t = np.array([a for a, _, _ in res.tracking])
    desired = np.array([d for _, d, _ in res.tracking])
    assert len(t) > 150 and t[0] < 0.05 and t[-1] > 0.6 + 4 * 0.36 - 0.05  # the walk start to its 4th step
    assert np.ptp(desired, axis=0).min() > 0.2  # the knees flex in the swing: the walk's trajectory, not a pose
    assert 0.0 < knee_rms(res) < 0.15  # measured follows desired (measured: 0.07 rad)
    assert res.travel > 0.05 and len(res.pitch) > 150  # forward (4 × 36 mm planned), trunk pitch recorded
    # the bench's energy window: the energy at the end of each of the 4 steps, the last one the run's own figure
    assert res.step_energy.shape == (5, len(res.joints)) and not res.step_energy[0].any()
    assert np.array_equal(res.step_energy[-1], res.energy)
    assert (np.diff(res.step_energy.sum(axis=1)) > 0.5).all()  # every step costs energy (≈ 10 J a step measured)
