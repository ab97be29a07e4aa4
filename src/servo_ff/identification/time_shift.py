"""Time in simulation-MAE identification: a command delay, a measurement delay and the firmware's loop period.

A servo log stamps the goal it sent and the position it read with one timestamp, but the goal reaches the
firmware's loop ``command_delay`` [s] later (bus latency + firmware cycle) and the position read is
``measurement_delay`` [s] older than its stamp; the firmware evaluates its law every ``dt / substeps`` [s], not
every log sample. All three are applied to a whole batch at once (one delay per candidate, linear interpolation in
time, no per-sample Python loop): the delayed goal feeds the batched :func:`~servo_ff.models.stepper.rollout`,
and the simulated θ is delayed before it is compared with the log.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..io.servo_log import LogBatch, ServoLog
from ..models.stepper import PendulumLoad, rollout

MAX_DELAY = 0.02  # [s] the search bound of either delay


def shift(x: np.ndarray, delay, dt: float) -> np.ndarray:
    """``x`` (T, …) sampled every ``dt`` [s], read at t − ``delay`` [s] (linear interpolation; held at the ends).

    ``delay`` broadcasts to ``x.shape[1:]`` (a per-candidate delay: shape (pop, 1) against x (T, pop, logs));
    a negative delay reads ahead. A delay of k·dt is x shifted by k samples, bit for bit; 0 returns x's values."""
    x = np.asarray(x, dtype=np.float64)
    d = np.broadcast_to(np.asarray(delay, dtype=np.float64) / dt, x.shape[1:])
    if not np.isfinite(d).all():
        raise ValueError(f"delay must be finite, got {delay!r}")
    d = np.where(np.abs(d - np.round(d)) < 1e-9, np.round(d), d)  # k·dt / dt is k, not k ± 1 ulp
    pos = np.arange(x.shape[0], dtype=np.float64).reshape(-1, *[1] * d.ndim) - d  # fractional sample index
    pos = np.clip(pos, 0.0, x.shape[0] - 1)
    i0 = np.floor(pos).astype(np.intp)
    frac = pos - i0
    i1 = np.minimum(i0 + 1, x.shape[0] - 1)
    a = np.take_along_axis(x, i0, axis=0) if d.ndim else x[i0]
    b = np.take_along_axis(x, i1, axis=0) if d.ndim else x[i1]
    return np.where(frac == 0.0, a, a + (b - a) * frac)


def simulate_timed(
    packed: np.ndarray,
    batch: LogBatch,
    command_delay=0.0,
    measurement_delay=0.0,
    substeps: int = 1,
) -> np.ndarray:
    """Simulated θ [rad] (T, pop, logs) on the log's grid as the log would record it.

    ``packed`` (pop, logs, N_PACKED); ``command_delay``, ``measurement_delay`` [s] scalars or (pop,) arrays;
    ``substeps``: the law evaluated (and held) every ``batch.dt / substeps`` [s]."""
    if substeps < 1:
        raise ValueError(f"substeps must be >= 1, got {substeps}")
    n_pop = packed.shape[0]
    cd = np.broadcast_to(np.asarray(command_delay, dtype=np.float64), (n_pop,))[:, None]
    md = np.broadcast_to(np.asarray(measurement_delay, dtype=np.float64), (n_pop,))[:, None]
    goal = np.broadcast_to(batch.goal_position[:, None, :], (batch.goal_position.shape[0], *packed.shape[:2]))
    if np.any(cd != 0.0):
        goal = shift(goal, cd, batch.dt)
    enable = batch.torque_enable[:, None, :]
    if substeps > 1:
        goal = np.repeat(goal, substeps, axis=0)
        enable = np.repeat(enable, substeps, axis=0)
    load = PendulumLoad(mass=batch.mass, length=batch.length, arm_mass=batch.arm_mass)
    theta0 = np.broadcast_to(batch.position[0], packed.shape[:2])
    dtheta0 = np.broadcast_to(batch.speed[0], theta0.shape)
    res = rollout(packed, theta0, dtheta0, goal, batch.dt / substeps, load, enable=enable, positions_only=True)
    theta = res.theta[::substeps]
    return shift(theta, md, batch.dt) if np.any(md != 0.0) else theta


def shift_log(log: ServoLog, command_delay: float = 0.0, measurement_delay: float = 0.0) -> ServoLog:
    """The log with fixed delays folded into its data (one delay for every candidate): the goal read
    ``command_delay`` [s] late, the position and speed ``measurement_delay`` [s] early (the sample stamped
    t + d_m shows the state at t). Identification on the shifted log fits a model with these delays."""
    return replace(
        log,
        goal_position=shift(log.goal_position, command_delay, log.dt),
        position=shift(log.position, -measurement_delay, log.dt),
        speed=shift(log.speed, -measurement_delay, log.dt),
    )
