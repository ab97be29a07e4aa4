"""Our rollout equals bam's simulator on every parameter file bam publishes (dt 1 ms and 5 ms, ≤ 1e-9 rad).

The oracle is :mod:`bam_reference`, a transcription of bam's source that shares no code with servo_ff."""

import math

import numpy as np
import pytest
from bam_cases import CASES, pendulum_run
from bam_reference import BamActuator, bam_rollout

from servo_ff.models.presets import preset
from servo_ff.models.stepper import PendulumLoad, rollout


@pytest.mark.parametrize("servo,model,dt", CASES)
def test_rollout_equals_bams_simulator_on_its_published_files(servo, model, dt):
    ours, ref = pendulum_run(servo, model, dt)  # the run is in bam_cases.py (bench/bam_agreement.py prints it)
    assert np.ptp(ref) > 0.5  # the pendulum really moved
    assert np.max(np.abs(ours - ref)) <= 1e-9


def test_velocity_clamp_and_current_window_match_bam():
    """bam clamps θ̇ to ±100 rad/s and (voltage law with max_current) holds the duty in the current window:
    a light, free pendulum hits the clamp; a current-limited MX stalls where the window says."""
    params = preset("mx106", "m1")
    fw = params.firmware.with_(current_limit=0.4)
    dt = 0.001
    goals = np.full(800, 2.5)
    for p, mass, length in (
        (params.with_(armature=1e-5, dtheta_max=100.0), 1e-4, 0.01),
        (params.with_(firmware=fw), 1.5, 0.2),
    ):
        ours = rollout(p, 0.0, 0.0, goals, dt, PendulumLoad(mass, length)).theta
        act = BamActuator(
            "voltage",
            p.kt,
            p.R,
            fw.vin,
            fw.kp,
            fw.error_gain,
            fw.max_pwm,
            max_current=p.firmware.current_limit if math.isfinite(p.firmware.current_limit) else None,
        )
        ref = bam_rollout(
            dict(p.friction), "m1", act, p.armature, 0.0, mass, 0.0, length, goals, np.ones(800), 0.0, 0.0, dt
        )
        assert np.max(np.abs(ours - ref)) <= 1e-9
    fast = rollout(params.with_(armature=1e-5), 0.0, 0.0, goals, dt, PendulumLoad(1e-4, 0.01))
    assert np.max(np.abs(fast.dtheta)) == pytest.approx(100.0)  # the clamp was reached, not exceeded
    limited = rollout(params.with_(firmware=fw), 0.0, 0.0, goals, dt, PendulumLoad(1.5, 0.2))
    free = rollout(params, 0.0, 0.0, goals, dt, PendulumLoad(1.5, 0.2))
    assert limited.theta[-1] < free.theta[-1] - 0.3  # the current limit holds the heavy pendulum back
    current = (limited.volts - params.kt * limited.dtheta) / params.R
    assert np.max(np.abs(current)) <= 0.4 + 1e-9
