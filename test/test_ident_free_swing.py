"""The armature from a pendulum's free swing (identification/free_swing.py) on simulated bench logs."""

import numpy as np
import pytest

from servo_ff.identification.free_swing import armature_from_swings, extrema
from servo_ff.identification.synthetic import bench_grid, simulate_logs
from servo_ff.models.presets import preset


def _drops(params, kps=(100, 400), trajectory="lift_and_drop"):
    grid = bench_grid(masses=(0.49,), lengths=(0.1,), kps=kps, trajectories=(trajectory,))
    return simulate_logs(params, grid, substeps=10, counts_per_rev=4096, vin=7.4)


@pytest.mark.parametrize("armature", [0.001, 0.0025])
def test_the_free_swing_gives_the_armature(armature):
    """M1 (Coulomb and viscous friction, which barely move a half-period), encoder-quantised: within 1e-4 kg·m²,
    1.4 % of the swinging inertia (m·l² 0.0049 kg·m² + armature)."""
    est = armature_from_swings(_drops(preset("xl330", "m1").with_(armature=armature)))
    assert est is not None and est.n >= 6 and est.logs == 2
    assert est.armature == pytest.approx(armature, abs=1e-4)
    assert min(est.per_swing) < est.armature < max(est.per_swing)


def test_no_torque_off_swing_gives_none():
    logs = _drops(preset("xl330", "m1"), kps=(100,), trajectory="accelerated_oscillations")
    assert np.all(logs[0].torque_enable > 0.5)
    assert armature_from_swings(logs) is None
    assert armature_from_swings([lg.with_(length=0.0) for lg in _drops(preset("xl330", "m1"))]) is None


def test_extrema_are_the_middles_of_flat_tops_and_ignore_small_wiggles():
    t = np.arange(0, 2.0, 0.005)
    theta = np.round(0.5 * np.cos(2 * np.pi * t) / 0.01) * 0.01  # quantised: flat tops at t = 0.5, 1.0, 1.5
    theta = theta + 0.004 * np.sin(2 * np.pi * 20 * t)  # wiggles smaller than the hysteresis
    idx = extrema(theta, hysteresis=0.02)
    assert t[idx] == pytest.approx([0.5, 1.0, 1.5], abs=0.02)
    assert extrema(np.zeros(50), 0.01) == []


def test_friction_proportional_to_the_gravity_torque_reads_high_and_is_bounded():
    """M3's load friction (∝ |τ_e|) stiffens one quarter-swing and softens the other: the half-period grows at second
    order, so the estimate reads high — by less than 3e-4 kg·m² with the preset's coefficient (0.12)."""
    truth = 0.0025
    est = armature_from_swings(_drops(preset("xl330", "m3").with_(armature=truth)))
    assert 0 < est.armature - truth < 3e-4
