"""The pendulum run on which our rollout is compared with bam's simulator (:mod:`bam_reference`): every parameter
file bam publishes × dt 1 ms and 5 ms. Shared by test_models_bam_equality.py and bench/bam_agreement.py.

Kept apart from bam_reference.py, which shares no code with servo_ff."""

from __future__ import annotations

import math

import numpy as np
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
DTS = (0.001, 0.005)
CASES = [(s, m, dt) for s, m in available_presets() if s in BAM_SERVOS for dt in DTS]


def bam_actuator(params, kp: float, vin: float) -> BamActuator:
    """bam's actuator for our parameter set: the STS law when a goal-velocity limit is set, else its control."""
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


def case_gain(servo: str, model: str, dt: float) -> float:
    """The kp of a case: the bench's two gains alternate over CASES."""
    return BENCH[servo][3][CASES.index((servo, model, dt)) % 2]


def pendulum_run(servo: str, model: str, dt: float) -> tuple[np.ndarray, np.ndarray]:
    """θ [rad] of our ``stepper.rollout`` and of bam's simulator for preset (servo, model) at time step dt, on
    the 6 s lift-and-drop run (lift, hold, H-bridge released, fall) at the case's gain and an off-nominal
    supply, from θ0 = 0.02 rad, θ̇0 = −0.1 rad/s."""
    params = preset(servo, model)
    mass, arm_mass, length, _ = BENCH[servo]
    kp = case_gain(servo, model, dt)
    vin = params.firmware.vin - 0.1  # the supply of a log differs from the nominal one: both must use it
    tr = trajectory("lift_and_drop", dt=dt, amplitude=1.2)
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
        bam_actuator(params, kp, vin),
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
    return ours, ref
