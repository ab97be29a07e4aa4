"""Our rollout equals bam's simulator on every parameter file bam publishes (dt 1 ms and 5 ms, ≤ 1e-9 rad).

The oracle is :mod:`bam_reference`, a transcription of bam's source that shares no code with servo_ff."""

import math

import numpy as np
import pytest
from bam_reference import BamActuator, bam_rollout

from servo_ff.models.presets import BAM_SERVOS, available_presets, preset
from servo_ff.models.stepper import PendulumLoad, rollout
from servo_ff.trajectories import trajectory

#: bench per servo (mass [kg], arm mass [kg], length [m], kp) as in bam's recordings, plus a second gain
BENCH = {
    "mx64": (1.0, 0.1, 0.15, (32, 12)),
    "mx106": (1.5, 0.1, 0.2, (32, 8)),
    "xl320": (0.2, 0.02, 0.1, (32, 16)),
    "xl330": (0.49, 0.0, 0.1, (400, 100)),
    "sts3215": (0.5, 0.05, 0.15, (32, 16)),
}
CASES = [(s, m, dt) for s, m in available_presets() if s in BAM_SERVOS for dt in (0.001, 0.005)]


def _bam_actuator(params, kp: float, vin: float) -> BamActuator:
    fw = params.firmware
    law = "sts" if math.isfinite(fw.goal_velocity_limit) else fw.control
    return BamActuator(
        law,
        params.kt,
        params.R,
        vin,
        kp,
        fw.error_gain,
        fw.max_pwm,
        max_current=fw.current_limit if math.isfinite(fw.current_limit) else None,
        current_limit=fw.current_limit,
        max_velocity=fw.goal_velocity_limit,
    )


@pytest.mark.parametrize("servo,model,dt", CASES)
def test_rollout_equals_bams_simulator_on_its_published_files(servo, model, dt):
    params = preset(servo, model)
    mass, arm_mass, length, gains = BENCH[servo]
    kp = gains[CASES.index((servo, model, dt)) % 2]  # alternate the two gains over the cases
    vin = params.firmware.vin - 0.1  # the supply of a log differs from the nominal one: both must use it
    tr = trajectory("lift_and_drop", dt=dt, amplitude=1.2)  # lift, hold, release the H-bridge, fall
    theta0, dtheta0 = 0.02, -0.1
    ours = rollout(
        params.with_(firmware=params.firmware.with_(kp=kp, vin=vin)),
        theta0,
        dtheta0,
        tr.q,
        dt,
        PendulumLoad(mass, length, arm_mass),
        enable=tr.torque_enable,
        goal_start=0.0,
    ).theta
    ref = bam_rollout(
        dict(params.friction),
        model,
        _bam_actuator(params, kp, vin),
        params.armature,
        params.q_offset,
        mass,
        arm_mass,
        length,
        tr.q,
        tr.torque_enable,
        theta0,
        dtheta0,
        dt,
    )
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
