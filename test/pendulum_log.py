"""A pendulum bench log for the fit tests: 0.5 kg at 0.15 m on an MX-64, kp 8, moving both ways under a varying
load (two sines), its goal a little ahead of the position."""

from __future__ import annotations

import numpy as np

from servo_ff.io.servo_log import ServoLog


def pendulum_log(n: int, dt: float, enable=None, volts: float = 15.0, **fields) -> ServoLog:
    """``n`` samples every ``dt`` [s]; torque ``enable`` per sample (default on), supply ``volts`` [V]; ``fields``
    set further ServoLog fields (``extra`` columns, …)."""
    t = np.arange(n) * dt
    q = 0.6 * np.sin(2.0 * t) + 0.2 * np.sin(5.3 * t)
    values = dict(
        t=t,
        position=q,
        speed=np.gradient(q, dt),
        goal_position=np.concatenate([q[2:], q[-1:], q[-1:]]) + 0.02 * np.sin(q),
        torque_enable=np.ones(n) if enable is None else enable,
        input_volts=np.full(n, volts),
        mass=0.5,
        length=0.15,
        kp=8.0,
        vin=15.0,
        motor="mx64",
    )
    return ServoLog(**{**values, **fields})
