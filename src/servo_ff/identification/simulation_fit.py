"""Simulation-MAE identification of the friction models M1–M6 plus kt, R and armature (seed 004 §V).

The cost of a parameter set is the mean absolute error between the simulated (Algorithm 1, firmware P law
driven by the logged goal and torque enable) and the recorded position, averaged per log and then over the
logs (as bam). CMA-ES (the ``cmaes`` library, ask/tell) searches the box of bam's bounds in normalised
coordinates; each generation — the whole population × every training log — is ONE batched
:func:`~servo_ff.models.stepper.rollout` call on a packed parameter array shaped (pop, logs, N_PACKED).
Logs of different lengths are padded and masked. A fit never returns a non-finite parameter.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import numpy as np

from ..models.params import (FIRMWARE_LAWS, MODEL_FRICTION_KEYS, MODEL_NAMES, P_ALPHA, P_ARM, P_KC, P_KCS, P_KE,
                             P_KEQ, P_KES, P_KM, P_KMQ, P_KMS, P_KP, P_KT, P_KV, P_R, P_VIN, P_VS, ActuatorParams,
                             FirmwareLaw, ParameterError)
from ..models.stepper import PendulumLoad, rollout
from .logs import LogBatch, ServoLog, stack_logs

#: Packed indices each bam key writes (M3/M4's symmetric load terms fill the motor and external slots).
KEY_INDICES: dict[str, tuple[int, ...]] = {
    "kt": (P_KT,), "R": (P_R,), "armature": (P_ARM,),
    "friction_base": (P_KC,), "friction_viscous": (P_KV,), "friction_stribeck": (P_KCS,),
    "load_friction_base": (P_KM, P_KE), "load_friction_stribeck": (P_KMS, P_KES),
    "load_friction_motor": (P_KM,), "load_friction_external": (P_KE,),
    "load_friction_motor_stribeck": (P_KMS,), "load_friction_external_stribeck": (P_KES,),
    "load_friction_motor_quad": (P_KMQ,), "load_friction_external_quad": (P_KEQ,),
    "dtheta_stribeck": (P_VS,), "alpha": (P_ALPHA,),
}

#: bam's search bounds for the friction keys (Rhoban/bam bam/model.py; notes/modelling-anchors.md).
FRICTION_BOUNDS: dict[str, tuple[float, float]] = {
    "friction_base": (0.0, 0.2), "friction_stribeck": (0.0, 0.2), "friction_viscous": (0.0, 1.0),
    "load_friction_base": (0.0, 0.5), "load_friction_motor": (0.0, 0.5), "load_friction_external": (0.0, 0.5),
    "load_friction_stribeck": (0.0, 1.0), "load_friction_motor_stribeck": (0.0, 1.0),
    "load_friction_external_stribeck": (0.0, 1.0),
    "load_friction_motor_quad": (0.0, 0.01), "load_friction_external_quad": (0.0, 0.01),
    "dtheta_stribeck": (0.01, 5.0), "alpha": (0.5, 10.0),
}

#: kt [N·m/A], R [Ω], armature [kg·m²] bounds per actuator (bam's actuator classes).
MOTOR_BOUNDS: dict[str, dict[str, tuple[float, float]]] = {
    "mx64": {"kt": (1.0, 3.0), "R": (1.0, 5.0), "armature": (0.001, 0.05)},
    "mx106": {"kt": (1.0, 3.0), "R": (1.0, 5.0), "armature": (0.001, 0.05)},
    "xl320": {"kt": (0.25, 1.5), "R": (3.0, 40.0), "armature": (0.0001, 0.01)},
    "xl330": {"kt": (0.25, 1.5), "R": (3.0, 40.0), "armature": (0.0001, 0.01)},
}


def search_space(model: str, actuator: str, reference: ActuatorParams | None = None
                 ) -> list[tuple[str, float, float]]:
    """(key, low, high) for kt, R, armature and the model's friction keys.

    Actuators without published bounds get [ref/4, 4·ref] around a ``reference`` parameter set (a preset).
    """
    if model not in MODEL_NAMES:
        raise ParameterError(f"unknown friction model {model!r}; valid models: {', '.join(MODEL_NAMES)}")
    if actuator in MOTOR_BOUNDS:
        motor = MOTOR_BOUNDS[actuator]
    elif reference is not None:
        motor = {k: (getattr(reference, k) / 4, getattr(reference, k) * 4) for k in ("kt", "R", "armature")}
    else:
        raise ParameterError(f"no kt/R/armature bounds for actuator {actuator!r} (known: "
                             f"{', '.join(MOTOR_BOUNDS)}); pass a reference parameter set")
    return [(k, *motor[k]) for k in ("kt", "R", "armature")] + \
           [(k, *FRICTION_BOUNDS[k]) for k in MODEL_FRICTION_KEYS[model]]


def params_from_vector(model: str, actuator: str, firmware: FirmwareLaw, keys: Sequence[str],
                       values: np.ndarray) -> ActuatorParams:
    """An :class:`ActuatorParams` from a vector of searched values (refuses non-finite values)."""
    values = np.asarray(values, float)
    if not np.isfinite(values).all():
        bad = [k for k, v in zip(keys, values) if not math.isfinite(v)]
        raise ParameterError(f"non-finite fitted parameter(s): {', '.join(bad)}")
    d = dict(zip(keys, map(float, values)))
    return ActuatorParams(actuator=actuator, model=model, kt=d.pop("kt"), R=d.pop("R"),
                          armature=d.pop("armature"), friction=d, firmware=firmware)


def pack_candidates(base: np.ndarray, keys: Sequence[str], values: np.ndarray, batch: LogBatch) -> np.ndarray:
    """Packed parameters (pop, logs, N_PACKED): copies of ``base`` with the candidate ``values`` (pop, k)
    written at their ``P_*`` indices and each log's firmware kp / supply voltage."""
    values = np.atleast_2d(values)
    n_pop, n_logs = values.shape[0], batch.kp.shape[0]
    p = np.broadcast_to(base, (n_pop, n_logs, base.shape[-1])).copy()
    for j, key in enumerate(keys):
        for idx in KEY_INDICES[key]:
            p[:, :, idx] = values[:, j, None]
    p[:, :, P_KP] = batch.kp
    p[:, :, P_VIN] = batch.vin
    return p


def simulate_batch(packed: np.ndarray, batch: LogBatch) -> np.ndarray:
    """Simulated θ (T, pop, logs) for every candidate on every log, in one batched rollout."""
    n_pop = packed.shape[0]
    load = PendulumLoad(mass=batch.mass, length=batch.length, arm_mass=batch.arm_mass)
    theta0 = np.broadcast_to(batch.position[0], (n_pop, batch.position.shape[1]))
    dtheta0 = np.broadcast_to(batch.speed[0], theta0.shape)
    res = rollout(packed, theta0, dtheta0, batch.goal_position[:, None, :], batch.dt, load,
                  enable=batch.torque_enable[:, None, :], positions_only=True)
    return res.theta


def mae_per_log(theta: np.ndarray, batch: LogBatch) -> np.ndarray:
    """Masked MAE [rad] (pop, logs) between simulated θ (T, pop, logs) and the recorded position.

    Diverged simulations (non-finite θ) score +inf."""
    err = np.abs(theta - batch.position[:, None, :]) * batch.mask[:, None, :]
    mae = err.sum(axis=0) / batch.mask.sum(axis=0)
    return np.where(np.isfinite(mae), mae, np.inf)


def population_mae(packed: np.ndarray, batch: LogBatch, engine: str = "rollout") -> np.ndarray:
    """MAE (pop, logs) of packed candidates (pop, logs, N_PACKED): ``engine="rollout"`` = one batched
    :func:`rollout` call; ``"fused"`` = :func:`.mae_kernel.mae_fused` (same step, errors summed in-kernel)."""
    if engine == "rollout":
        return mae_per_log(simulate_batch(packed, batch), batch)
    if engine == "fused":
        from .mae_kernel import mae_fused

        return mae_fused(packed, batch)
    raise ValueError(f"engine must be 'rollout' or 'fused', got {engine!r}")


def evaluate(params: ActuatorParams | np.ndarray, logs: Sequence[ServoLog] | LogBatch) -> float:
    """Mean over logs of the per-log MAE [rad] of one parameter set."""
    batch = logs if isinstance(logs, LogBatch) else stack_logs(logs)
    base = params.packed() if isinstance(params, ActuatorParams) else np.asarray(params)
    packed = pack_candidates(base, [], np.zeros((1, 0)), batch)
    return float(mae_per_log(simulate_batch(packed, batch), batch).mean())


@dataclass
class FitResult:
    params: ActuatorParams
    train_mae: float  # [rad]
    validation_mae: float  # [rad], nan without validation logs
    evaluations: int
    generations: int
    seconds: float
    history: list[float] = field(default_factory=list)  # best training MAE per generation


def split_logs(logs: Sequence[ServoLog], validation_fraction: float = 0.25, seed: int = 0
               ) -> tuple[list[ServoLog], list[ServoLog]]:
    """Random train/validation split (75/25 by default; at least one validation log when there are ≥ 2 logs
    and the fraction is > 0). Deterministic for a given ``seed``."""
    if not 0.0 <= validation_fraction < 1.0:
        raise ValueError(f"validation_fraction must be in [0, 1), got {validation_fraction}")
    n = len(logs)
    n_val = int(round(validation_fraction * n))
    if validation_fraction > 0 and n >= 2:
        n_val = min(max(n_val, 1), n - 1)
    order = np.random.default_rng(seed).permutation(n)
    val_idx = set(order[:n_val].tolist())
    return [lg for i, lg in enumerate(logs) if i not in val_idx], [logs[i] for i in sorted(val_idx)]


def fit_model(train: Sequence[ServoLog], model: str, actuator: str, firmware: FirmwareLaw | None = None,
              validation: Sequence[ServoLog] = (), max_evals: int = 4000, population: int | None = None,
              sigma: float | None = None, seed: int = 0, x0: Mapping[str, float] | None = None,
              reference: ActuatorParams | None = None, patience: int = 30, tol: float = 1e-3,
              min_generations: int = 100,
              progress: bool = True, fixed: Mapping[str, float] | None = None, engine: str = "rollout"
              ) -> FitResult:
    """Fit ``model`` (+ kt, R, armature) to ``train`` logs by CMA-ES on the simulation MAE.

    ``x0``: starting values for any searched key (others start mid-box, or at 0 for a warm start, whose
    ``sigma`` defaults to 0.1 instead of 0.25 of the normalised box); ``fixed``: keys held constant.
    Stops after ``max_evals`` candidate evaluations, when CMA-ES reports convergence, or when the best MAE
    improved by less than ``tol`` (relative) over ``patience`` generations (after ``min_generations``).
    ``engine``: see :func:`population_mae` (both evaluate the whole population × all logs in one call).
    """
    from cmaes import CMA
    from tqdm.auto import tqdm

    if not train:
        raise ValueError("no training logs")
    fw = firmware or FIRMWARE_LAWS.get(actuator)
    if fw is None:
        raise ParameterError(f"no firmware law for actuator {actuator!r}; pass firmware=")
    fixed = dict(fixed or {})
    space = [s for s in search_space(model, actuator, reference) if s[0] not in fixed]
    keys = [s[0] for s in space]
    lo = np.array([s[1] for s in space])
    hi = np.array([s[2] for s in space])
    span = hi - lo
    batch = stack_logs(train)
    # base packed vector: a valid parameter set of this model (mid-box), fixed keys applied
    mid = {k: (a + b) / 2 for k, a, b in search_space(model, actuator, reference)}
    mid.update(fixed)
    base_params = params_from_vector(model, actuator, fw, list(mid), np.array(list(mid.values())))
    base = base_params.packed()
    start = np.full(len(keys), 0.5)
    for j, k in enumerate(keys):
        if x0 and k in x0 and math.isfinite(x0[k]):
            start[j] = np.clip((x0[k] - lo[j]) / span[j], 1e-9, 1 - 1e-9)
        elif x0 and k not in ("dtheta_stribeck", "alpha"):  # warm start: the extra terms start at 0
            start[j] = 1e-9
    if x0 and sigma is None:
        sigma = 0.1  # a warm start sits near the optimum: search locally first
    sigma = 0.25 if sigma is None else sigma
    opt = CMA(mean=start, sigma=sigma, bounds=np.tile([0.0, 1.0], (len(keys), 1)), seed=seed,
              population_size=population)
    if max_evals < opt.population_size:
        raise ValueError(f"max_evals={max_evals} is below one CMA-ES generation ({opt.population_size} candidates)")
    best_x, best_f = lo + start * span, math.inf
    history: list[float] = []
    evals = gens = 0
    t0 = time.perf_counter()
    bar = tqdm(total=max_evals, desc=f"identify {model}", unit="eval", disable=not progress, leave=False)
    try:
        while evals + opt.population_size <= max_evals:
            xs = np.array([opt.ask() for _ in range(opt.population_size)])
            values = lo + xs * span
            if gens == 0:  # the starting point rides along in the first batch (never worse than a warm start)
                values = np.vstack([values, lo + start * span])
            f = population_mae(pack_candidates(base, keys, values, batch), batch, engine).mean(axis=1)
            f_tell = np.where(np.isfinite(f), f, 1e3)
            opt.tell(list(zip(xs, f_tell[: len(xs)])))
            i = int(np.argmin(f))
            if f[i] < best_f and np.isfinite(values[i]).all():
                best_f, best_x = float(f[i]), values[i].copy()
            evals += len(xs)
            gens += 1
            history.append(best_f)
            bar.update(len(xs))
            bar.set_postfix(best_mae=f"{best_f:.5f}")
            if opt.should_stop():
                break
            if gens > max(patience, min_generations) and history[-patience - 1] - best_f <= tol * best_f:
                break
    finally:
        bar.close()
    values = dict(zip(keys, best_x))
    values.update(fixed)
    order = [k for k, *_ in search_space(model, actuator, reference)]
    params = params_from_vector(model, actuator, fw, order, np.array([values[k] for k in order]))
    val = evaluate(params, validation) if validation else math.nan
    train_mae = evaluate(params, batch)
    return FitResult(params, train_mae, val, evals, gens, time.perf_counter() - t0, history)


def warm_start(model: str, previous: Mapping[str, ActuatorParams]) -> dict[str, float]:
    """Starting values for ``model`` from already-fitted nested models (M1 ⊂ M2, M3 ⊂ M4 ⊂ M5 ⊂ M6)."""
    nest = {"m2": ("m1",), "m3": ("m1",), "m4": ("m3", "m2", "m1"), "m5": ("m4", "m3", "m2", "m1"),
            "m6": ("m5", "m4", "m3", "m2", "m1")}
    x0: dict[str, float] = {}
    for prev in nest.get(model, ()):
        if prev in previous:
            p = previous[prev]
            x0.update({"kt": p.kt, "R": p.R, "armature": p.armature})
            for k, v in p.friction.items():
                x0.setdefault(k, v)
            f = p.friction
            if model in ("m5", "m6") and "load_friction_base" in f:  # symmetric load terms → directional ones
                x0.update(load_friction_motor=f["load_friction_base"], load_friction_external=f["load_friction_base"])
                if "load_friction_stribeck" in f:
                    x0.update(load_friction_motor_stribeck=f["load_friction_stribeck"],
                              load_friction_external_stribeck=f["load_friction_stribeck"])
            break
    return x0


def identify_models(logs: Sequence[ServoLog], models: Sequence[str] = MODEL_NAMES, actuator: str | None = None,
                    firmware: FirmwareLaw | None = None, validation_fraction: float = 0.25, seed: int = 0,
                    max_evals: int = 4000, warm: bool = True, progress: bool = True,
                    reference: ActuatorParams | None = None,
                    callback: Callable[[str, FitResult], None] | None = None, **fit_options) -> dict[str, FitResult]:
    """Fit every model in ``models`` on a 75/25 split of ``logs``; returns model → :class:`FitResult`."""
    if not logs:
        raise ValueError("no logs given")
    actuator = actuator or logs[0].motor
    if not actuator:
        raise ValueError("actuator unknown: the logs carry no 'motor' key; pass actuator=")
    for m in models:
        if m not in MODEL_NAMES:
            raise ParameterError(f"unknown friction model {m!r}; valid models: {', '.join(MODEL_NAMES)}")
    train, val = split_logs(logs, validation_fraction, seed)
    results: dict[str, FitResult] = {}
    for m in models:
        x0 = warm_start(m, {k: r.params for k, r in results.items()}) if warm else None
        results[m] = fit_model(train, m, actuator, firmware, val, max_evals=max_evals, seed=seed, x0=x0,
                               progress=progress, reference=reference, **fit_options)
        if callback:
            callback(m, results[m])
    return results


__all__ = ["KEY_INDICES", "FRICTION_BOUNDS", "MOTOR_BOUNDS", "search_space", "pack_candidates", "simulate_batch",
           "mae_per_log", "population_mae", "evaluate", "FitResult", "split_logs", "fit_model", "identify_models", "warm_start",
           "params_from_vector"]
