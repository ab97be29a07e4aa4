"""The cost of a parameter set in simulation-MAE identification (Duclusaud et al., Extended Friction Models for
the Physics Simulation of Servo Actuators, §V): every log re-simulated by Algorithm 1 under the logged goal and
torque enable, the mean absolute position error per log, then over the logs (as bam) — batched over optimiser
candidates × logs in one :func:`~servo_ff.models.stepper.rollout` call (chunked for large populations)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..io.servo_log import LogBatch, ServoLog, log_mean, stack_logs
from ..models.params import ActuatorParams
from ..models.stepper import PendulumLoad, rollout
from .search_space import pack_candidates


def simulate_batch(packed: np.ndarray, batch: LogBatch) -> np.ndarray:
    """Simulated θ [rad] (T, pop, logs) for every candidate on every log, in one batched rollout."""
    n_pop = packed.shape[0]
    load = PendulumLoad(mass=batch.mass, length=batch.length, arm_mass=batch.arm_mass)
    theta0 = np.broadcast_to(batch.position[0], (n_pop, batch.position.shape[1]))
    dtheta0 = np.broadcast_to(batch.speed[0], theta0.shape)
    res = rollout(
        packed,
        theta0,
        dtheta0,
        batch.goal_position[:, None, :],
        batch.dt,
        load,
        enable=batch.torque_enable[:, None, :],
        positions_only=True,
    )
    return res.theta


def mae_per_log(theta: np.ndarray, batch: LogBatch) -> np.ndarray:
    """Masked MAE [rad] (pop, columns) between simulated θ (T, pop, columns) and the recorded position: a column
    per log, or per stretch of a log with recorder gaps (their mean over the logs: ``log_mean``).

    Diverged simulations (non-finite θ) score +inf."""
    err = np.abs(theta - batch.position[:, None, :]) * batch.mask[:, None, :]
    mae = err.sum(axis=0) / batch.mask.sum(axis=0)
    return np.where(np.isfinite(mae), mae, np.inf)


#: Largest simulated-θ array (T × candidates × logs values) one rollout call produces; larger populations
#: are evaluated in chunks (IPOP restarts grow the population).
MAX_CHUNK_VALUES = 4_000_000


def population_mae(packed: np.ndarray, batch: LogBatch) -> np.ndarray:
    """MAE [rad] (pop, logs) of packed candidates (pop, logs, N_PACKED): batched :func:`rollout` calls of
    at most :data:`MAX_CHUNK_VALUES` simulated samples each."""
    n_pop = packed.shape[0]
    per = max(1, MAX_CHUNK_VALUES // max(1, batch.position.size))
    return np.concatenate(
        [mae_per_log(simulate_batch(packed[i : i + per], batch), batch) for i in range(0, n_pop, per)]
    )


def evaluate(params: ActuatorParams | np.ndarray, logs: Sequence[ServoLog] | LogBatch) -> float:
    """Mean over logs of the per-log MAE [rad] of one parameter set (a log's stretches between recorder gaps: one
    log, :func:`~servo_ff.io.servo_log.log_mean`)."""
    batch = logs if isinstance(logs, LogBatch) else stack_logs(logs)
    base = params.packed() if isinstance(params, ActuatorParams) else np.asarray(params)
    packed = pack_candidates(base, [], np.zeros((1, 0)), batch)
    return float(log_mean(mae_per_log(simulate_batch(packed, batch), batch), batch)[0])
