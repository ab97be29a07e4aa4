"""Current-law α̂ (dynamics/alpha_current.py): the goal offset the feed-forward node computes from it makes the
XM430's current-based firmware law (I = error_gain·k_P·(q_d − q), torque kt·I) deliver the requested torque plus
friction; the shipped config/alpha_op3.yaml is that α̂ for every OP3 joint."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from servo_ff.dynamics.alpha import load_alpha
from servo_ff.dynamics.alpha_current import alpha_hat_current_law
from servo_ff.models.params import ParameterError
from servo_ff.models.presets import preset
from servo_ff.models.schwarz_behnke import goal_position_from_torque

ROOT = Path(__file__).resolve().parents[1]


def test_goal_offset_delivers_torque_under_the_current_law():
    p = preset("xm430", "m1")
    a = alpha_hat_current_law(p, 12.0)
    kp, tau, dq = 280.0, 0.8, 0.5  # register units, N·m, rad/s (far above the Stribeck velocity)
    qd = goal_position_from_torque(0.0, tau, dq, None, a[None, :4], kp, 12.0)
    current = p.firmware.error_gain * kp * float(np.squeeze(qd))
    f = p.friction
    assert p.kt * current == pytest.approx(tau + f["friction_viscous"] * dq + f["friction_base"], rel=1e-6)


def test_refuses_voltage_law_and_bad_supply():
    with pytest.raises(ParameterError, match="voltage-based"):
        alpha_hat_current_law(preset("mx106", "m4"), 12.0)
    with pytest.raises(ValueError, match="u_nominal"):
        alpha_hat_current_law(preset("xm430", "m1"), 0.0)


def test_shipped_op3_alpha_file_is_the_current_law():
    from servo_ff.dynamics.robot import load_robot

    joints = list(load_robot(ROOT / "urdf" / "op3.urdf").joint_names)
    table = load_alpha(ROOT / "config" / "alpha_op3.yaml", joints)
    assert len(joints) == 20
    assert np.allclose(table.alpha, alpha_hat_current_law(preset("xm430", "m1"), 12.0))
