"""A pendulum bench log for the fit tests: 0.5 kg at 0.15 m on an MX-64, kp 8, moving both ways under a varying
load (two sines), its goal what Schwarz & Behnke Eq. 19 sends for the position 2 samples (10 ms) later."""

from __future__ import annotations

import numpy as np

from servo_ff.identification.pendulum import output_torque
from servo_ff.io.servo_log import ServoLog
from servo_ff.models.schwarz_behnke import motor_voltage
from servo_ff.models.stepper import PendulumLoad

ALPHA = [13.3, 9.7, 2.6, 0.0]  # α̂ of Eq. 19 (an MX-64 at kp 8, 15 V: test_replay_robot_bags' clean fit)


def pendulum_log(n: int, dt: float, enable=None, volts: float = 15.0, **fields) -> ServoLog:
    """``n`` samples every ``dt`` [s]; torque ``enable`` per sample (default on), supply ``volts`` [V]; ``fields``
    set further ServoLog fields (``extra`` columns, …)."""
    t = np.arange(n) * dt
    q = 0.6 * np.sin(2.0 * t) + 0.2 * np.sin(5.3 * t)
    dq = 0.6 * 2.0 * np.cos(2.0 * t) + 0.2 * 5.3 * np.cos(5.3 * t)
    ddq = -0.6 * 2.0**2 * np.sin(2.0 * t) - 0.2 * 5.3**2 * np.sin(5.3 * t)
    u = motor_voltage(np.array(ALPHA), output_torque(PendulumLoad(0.5, 0.15, 0.0), q, ddq), dq, None, 0.1, 1.0)
    goal = q + u / (8.0 * volts)  # the goal that drives q (Eq. 19) …
    values = dict(
        t=t,
        position=q,
        speed=dq,
        goal_position=np.concatenate([goal[2:], goal[-1:], goal[-1:]]),  # … sent 2 samples before (t_d 10 ms)
        torque_enable=np.ones(n) if enable is None else enable,
        input_volts=np.full(n, volts),
        mass=0.5,
        length=0.15,
        kp=8.0,
        vin=15.0,
        motor="mx64",
    )
    return ServoLog(**{**values, **fields})
