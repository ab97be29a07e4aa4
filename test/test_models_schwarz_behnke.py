"""Schwarz & Behnke motor model (Eq. 9, 13, 14, 19) and its link to the Duclusaud et al. firmware law."""

import numpy as np
import pytest

from servo_ff.models.motor import firmware_torque
from servo_ff.models.presets import preset
from servo_ff.models.schwarz_behnke import (
    alpha_hat_from_actuator,
    goal_position_from_torque,
    motor_voltage,
    stribeck_beta,
)


def test_beta_limits():
    assert stribeck_beta(0.0) == 1.0
    assert stribeck_beta(10.0, 0.1, 1.0) == pytest.approx(np.exp(-100))
    assert stribeck_beta(-0.2, 0.1, 2.0) == pytest.approx(np.exp(-4))


def test_motor_voltage_is_linear_in_alpha():
    rng = np.random.default_rng(0)
    tau, dq, ddq = rng.normal(size=(3, 50))
    a = np.array([1.0, 2.0, 0.3, 0.5, 0.05])
    b = np.array([0.2, -1.0, 0.1, 0.0, 0.01])
    np.testing.assert_allclose(
        motor_voltage(a + b, tau, dq, ddq), motor_voltage(a, tau, dq, ddq) + motor_voltage(b, tau, dq, ddq)
    )
    u4 = motor_voltage(a[:4], tau, dq)
    np.testing.assert_allclose(motor_voltage(a, tau, dq, ddq) - u4, a[4] * ddq)


@pytest.mark.parametrize("tau,dq", [(0.8, 0.0), (-1.5, 0.7), (0.3, -2.0), (2.0, 1.5)])
def test_eq19_goal_makes_the_firmware_produce_the_torque(tau, dq):
    """With α̂ from a frictionless M1 servo, Eq. 19's q_d makes the 004 voltage law deliver exactly τ."""
    params = preset("mx106", "m1").with_(friction_base=0.0, friction_viscous=0.0)
    alpha = alpha_hat_from_actuator(params)
    q = 0.4
    qd = goal_position_from_torque(q, tau, dq, None, alpha, params.firmware.kp, params.firmware.vin)
    tau_m, _ = firmware_torque(params.packed(), q, dq, qd)
    assert tau_m == pytest.approx(tau, rel=1e-12, abs=1e-12)


def test_eq19_adds_friction_compensation_in_the_motion_direction():
    params = preset("mx106", "m1")
    alpha = alpha_hat_from_actuator(params)
    moving = goal_position_from_torque(0.0, 0.0, 1.0, None, alpha, 32, 15.0)
    resting = goal_position_from_torque(0.0, 0.0, 0.0, None, alpha, 32, 15.0)
    backwards = goal_position_from_torque(0.0, 0.0, -1.0, None, alpha, 32, 15.0)
    assert resting == 0.0 and moving > 0 and backwards == pytest.approx(-moving)


def test_eq19_vectorised_and_bad_input():
    alpha = np.tile([0.3, 4.0, 0.1, 0.2], (20, 1))
    qd = goal_position_from_torque(np.zeros(20), np.ones(20), np.zeros(20), None, alpha, 32.0, np.full(20, 14.8))
    assert qd.shape == (20,)
    with pytest.raises(ValueError, match="u_bat"):
        goal_position_from_torque(0.0, 1.0, 0.0, None, alpha[0], 32.0, float("nan"))
    with pytest.raises(ValueError, match="kp"):
        goal_position_from_torque(0.0, 1.0, 0.0, None, alpha[0], 0.0, 15.0)
    with pytest.raises(ValueError, match="alpha"):
        motor_voltage(np.ones(3), 1.0, 0.0)


def test_eq19_with_m2_friction_and_matching_stribeck_shape():
    """M2: with the parameter set's own Stribeck shape, q_d makes the motor deliver τ plus exactly the friction
    budget in the direction of motion; with Schwarz & Behnke's default shape it does not."""
    from servo_ff.models.friction import friction_budget
    from servo_ff.models.schwarz_behnke import stribeck_shape_from_actuator

    params = preset("mx106", "m2")
    alpha = alpha_hat_from_actuator(params)
    dq_s, delta = stribeck_shape_from_actuator(params)
    assert (dq_s, delta) == (params.friction["dtheta_stribeck"], params.friction["alpha"])
    tau, dq, q = 0.5, 0.5, 0.1
    qd = goal_position_from_torque(q, tau, dq, None, alpha, 32.0, 15.0, dq_s, delta)
    tau_m, _ = firmware_torque(params.packed(), q, dq, qd)
    assert tau_m == pytest.approx(tau + friction_budget(params.packed(), 0.0, 0.0, dq), rel=1e-12)
    qd_default = goal_position_from_torque(q, tau, dq, None, alpha, 32.0, 15.0)
    assert abs(firmware_torque(params.packed(), q, dq, qd_default)[0] - tau_m) > 0.05


def test_alpha_from_load_dependent_model_warns():
    with pytest.warns(UserWarning, match="load-dependent"):
        alpha_hat_from_actuator(preset("mx106", "m4"))
    with pytest.raises(ValueError, match="dq_s"):
        stribeck_beta(1.0, 0.0, 1.0)
