"""Simulation-MAE identification of the friction models M1–M6 plus kt, R, armature and q_offset (Duclusaud et
al., Extended Friction Models for the Physics Simulation of Servo Actuators, §V).

The cost of a parameter set is the mean absolute error between the simulated (Algorithm 1, firmware law
driven by the logged goal and torque enable) and the recorded position, averaged per log and then over the
logs (as bam). CMA-ES (the ``cmaes`` library, ask/tell) with IPOP restarts, several independent searches and a
polish (:mod:`~servo_ff.identification.cmaes_search`; the lowest training MAE kept) searches the box of
:data:`SEARCH_BOUNDS` / :data:`FRICTION_BOUNDS` (bam's bounds, each row citing its source) in normalised
coordinates (:class:`~servo_ff.identification.search_space.Box`: log(value) for keys whose bounds span a decade
or more, flagged beside their bounds); each generation — the whole population × every training log — is one batched
:func:`~servo_ff.models.stepper.rollout` call (chunked for large populations) on a packed parameter array
shaped (pop, logs, N_PACKED). Logs of different lengths are padded and masked. A fit never returns a
non-finite parameter, and a missing validation MAE is None, never NaN.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..io.servo_log import LogError, ServoLog, log_mean, stack_logs
from ..models.params import FIRMWARE_LAWS, MODEL_NAMES, ActuatorParams, FirmwareLaw, ParameterError
from .cmaes_search import DEFAULT_AGREE, DEFAULT_STARTS, Begin, multi_start
from .datasheet_prior import PENALTY as PRIOR_PENALTY
from .search_space import (
    FIRMWARE_KEY_FACTORS,
    FRICTION_BOUNDS,
    KEY_INDICES,
    SEARCH_BOUNDS,
    BoundsRow,
    Box,
    SearchKey,
    bounds_row,
    pack_candidates,
    params_from_vector,
    search_space,
)
from .simulation_cost import evaluate, mae_per_log, population_mae, simulate_batch
from .warm_start import warm_start, warm_starts


@dataclass
class FitResult:
    params: ActuatorParams
    train_mae: float  # [rad]
    validation_mae: float | None  # [rad]; None without validation logs (never NaN)
    evaluations: int
    generations: int
    seconds: float
    history: list[float] = field(default_factory=list)  # best training MAE [rad] per generation
    start_mae: float | None = None  # [rad] training MAE of the warm start (None: cold start)
    runs: list[dict] = field(default_factory=list)  # per CMA-ES run: population, evaluations, best_mae, stop
    stop: str = ""  # why the search ended: "budget", "restarts" or "converged" (restarts stopped improving)
    at_bound: list[str] = field(default_factory=list)  # "key (low|high)": searched keys within 0.1 % of an edge
    train_logs: list[str] = field(default_factory=list)
    validation_logs: list[str] = field(default_factory=list)
    log_keys: list[str] = field(default_factory=list)  # searched keys whose CMA-ES coordinate is log(value)


def split_logs(
    logs: Sequence[ServoLog], validation_fraction: float = 0.25, seed: int = 0
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


#: CMA-ES step sizes. The simulation MAE is sharp around its optimum (1 % of bam's viscous box doubles it), so a
#: warm start searches each key it sets within ~WARM_REL of its value (at least WARM_FLOOR of the box); the
#: extra terms of a nested model start just inside the box (EXTRA_START) with step EXTRA_STEP, not pinned at 0;
#: a cold start searches the whole box (SIGMA_COLD); restarts search around the incumbent with RESTART_REL.
SIGMA_COLD = 0.25  # normalised (box = [0, 1])
WARM_REL, WARM_FLOOR = 0.05, 0.002
RESTART_REL, RESTART_FLOOR = 0.2, 0.01
EXTRA_START, EXTRA_STEP = 0.05, 0.1  # normalised
FIRMWARE_STEP = 0.02  # normalised step of a firmware constant at the law's value (log box 0.1–10 ×: a factor 1.1)
_CENTRED = ("dtheta_stribeck", "alpha", "q_offset")  # no natural zero: without a warm value they start mid-box


def _start(box: Box, x0: Mapping[str, float] | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Normalised (warm-start point, CMA-ES mean, per-key step) for the keys of ``box``.

    Cold start: mid-box, step :data:`SIGMA_COLD`. Warm start: the keys ``x0`` gives start there with steps
    :meth:`Box.steps` (``WARM_REL``); the extra terms are evaluated at their lower bound (0: the nested model's
    optimum) in the warm-start point, but the search mean puts them at :data:`EXTRA_START` with step
    :data:`EXTRA_STEP`."""
    n = len(box.keys)
    if not x0:
        return np.full(n, 0.5), np.full(n, 0.5), np.full(n, SIGMA_COLD)
    point, mean, step = np.full(n, 0.5), np.full(n, 0.5), np.full(n, SIGMA_COLD)
    warm = np.zeros(n, bool)
    for j, k in enumerate(box.keys):
        if k in x0 and math.isfinite(x0[k]):
            warm[j] = True
        elif k not in _CENTRED:
            point[j], mean[j], step[j] = 0.0, EXTRA_START, EXTRA_STEP
    given = np.array([x0[k] if w else box.lo[j] for j, (k, w) in enumerate(zip(box.keys, warm))])
    point[warm] = mean[warm] = box.unit(given)[warm]
    step[warm] = box.steps(point, WARM_REL, WARM_FLOOR)[warm]
    return point, mean, step


def fit_model(
    train: Sequence[ServoLog],
    model: str,
    actuator: str,
    firmware: FirmwareLaw | None = None,
    validation: Sequence[ServoLog] = (),
    max_evals: int = 4000,
    population: int | None = None,
    seed: int = 0,
    x0: Mapping[str, float] | Sequence[Mapping[str, float]] | None = None,
    reference: ActuatorParams | None = None,
    patience: int = 30,
    tol: float = 1e-3,
    restarts: int | None = None,
    stall_restarts: int = 2,
    starts: int = DEFAULT_STARTS,
    polish: bool = True,
    agree: float | None = DEFAULT_AGREE,
    fit_q_offset: bool = True,
    progress: bool = True,
    fixed: Mapping[str, float] | None = None,
    prior=None,
    fit_firmware: bool = True,
) -> FitResult:
    """Fit ``model`` (+ kt, R, armature, and q_offset when ``fit_q_offset``) to ``train`` by CMA-ES on the
    simulation MAE (Duclusaud et al., Extended Friction Models for the Physics Simulation of Servo Actuators,
    §V), with IPOP restarts (Auger and Hansen, A Restart CMA Evolution Strategy With Increasing Population Size).

    ``x0``: a warm start (values for any searched key), or several (e.g. one per nested model already fitted):
    each is evaluated and the best one starts the search (:func:`_start`); without one the search starts
    mid-box. ``starts`` independent IPOP searches run from that start with different seeds, each with the full
    ``max_evals``, and the one of lowest training MAE is kept, then (``polish``) one more search from it
    (:func:`~servo_ff.identification.cmaes_search.multi_start`); once two searches agree within ``agree``
    (relative training MAE) no further search or polish runs. In a search, a run ends when CMA-ES reports
    convergence or when its best MAE improved by less than ``tol`` (relative) over ``patience`` generations; the
    next run restarts from the best point so far with a population twice as large and per-key steps
    :data:`RESTART_REL` of the values. A search ends when ``max_evals`` candidate evaluations are spent (the last
    run shrinks its population to the budget left), after ``restarts`` restarts (None: no limit), or when
    converged: ``stall_restarts`` restarts in a row improved the best MAE by less than ``tol`` (relative; 0:
    never stop before the budget). The warm starts are evaluated first
    (outside the budget), so the result is never worse than them. ``fixed``: keys held constant.
    ``prior``: a :class:`~servo_ff.identification.datasheet_prior.DatasheetPrior` (kt/R box, τ_s penalty);
    ``fit_firmware``: fit the error gain and target-velocity clamp of a law that has a clamp
    (:func:`~servo_ff.identification.search_space.firmware_keys`), starting at the law's values.
    """
    from tqdm.auto import tqdm

    if not train:
        raise ValueError("no training logs")
    if patience < 1:
        raise ValueError(f"patience must be >= 1 generation, got {patience}")
    if restarts is not None and restarts < 0:
        raise ValueError(f"restarts must be >= 0, got {restarts}")
    if stall_restarts < 0:
        raise ValueError(f"stall_restarts must be >= 0, got {stall_restarts}")
    if starts < 1:
        raise ValueError(f"starts must be >= 1, got {starts}")
    fw = firmware or FIRMWARE_LAWS.get(actuator)
    if fw is None:
        raise ParameterError(f"no firmware law for actuator {actuator!r}; pass firmware=")
    fixed = dict(fixed or {})
    full = search_space(model, actuator, reference, fit_q_offset, prior, fw if fit_firmware else None)
    if not fit_q_offset:
        full.append(SearchKey("q_offset", fixed.get("q_offset", 0.0), fixed.get("q_offset", 0.0)))
        fixed.setdefault("q_offset", 0.0)
    space = [s for s in full if s.key not in fixed]
    box = Box(space)
    keys = box.keys
    batch = stack_logs(train)
    mid = {s.key: (s.lo + s.hi) / 2 for s in full}
    mid.update(fixed)
    base = params_from_vector(model, actuator, fw, list(mid), np.array(list(mid.values()))).packed()
    pop0 = population or 4 + int(3 * math.log(max(len(keys), 1)))
    if max_evals < pop0:
        raise ValueError(f"max_evals={max_evals} is below one CMA-ES generation ({pop0} candidates)")

    def cost(u: np.ndarray) -> np.ndarray:
        x = box.values(u)
        f = log_mean(population_mae(pack_candidates(base, keys, x, batch), batch), batch)
        if prior is not None:
            kt = x[:, keys.index("kt")] if "kt" in keys else fixed["kt"]
            r = x[:, keys.index("R")] if "R" in keys else fixed["R"]
            f = f + PRIOR_PENALTY * prior.excess(kt, r)
        return np.where(np.isfinite(f), f, np.inf)

    warm = [x0] if isinstance(x0, Mapping) else [x for x in (x0 or ()) if x]
    candidates = [_start(box, x) for x in warm] or [_start(box, None)]
    for point, mean, step in candidates:  # firmware constants not given by a warm start: the law's value
        for j, k in enumerate(keys):
            if k in FIRMWARE_KEY_FACTORS and not any(k in x for x in warm):
                point[j] = mean[j] = box.unit(np.full(len(keys), getattr(fw, k)))[j]
                step[j] = FIRMWARE_STEP
    f0 = cost(np.array([c[0] for c in candidates]))
    i0 = int(np.argmin(f0))
    start_mae = float(f0[i0]) if warm else None
    t0 = time.perf_counter()
    searches = starts + (polish and starts > 1)
    bar = tqdm(total=searches * max_evals, desc=f"identify {model}", unit="eval", disable=not progress, leave=False)

    def on_generation(pop: int, best: float) -> None:
        bar.update(pop)
        bar.set_postfix(best_mae=f"{best:.5f}")

    try:
        point, mean, step = candidates[i0]
        begins = [Begin(mean, step, (float(f0[i0]), point.copy()))]
        found = multi_start(
            cost,
            starts,
            seed,
            begins,
            polish,
            agree,
            restart_step=lambda u: box.steps(u, RESTART_REL, RESTART_FLOOR),
            max_evals=max_evals,
            pop0=pop0,
            patience=patience,
            tol=tol,
            restarts=restarts,
            stall_restarts=stall_restarts,
            on_generation=on_generation,
        )
    finally:
        bar.close()
    best_u = found.u
    values = dict(zip(keys, box.values(best_u)))
    values.update(fixed)
    order = [s.key for s in full]
    params = params_from_vector(model, actuator, fw, order, np.array([values[k] for k in order]))
    edge = [f"{k} ({'low' if u < 0.5 else 'high'})" for k, u in zip(keys, best_u) if min(u, 1 - u) < 1e-3]
    train_mae = evaluate(params, batch)
    val = evaluate(params, validation) if validation else None
    return FitResult(
        params,
        train_mae,
        val,
        found.evaluations,
        found.generations,
        time.perf_counter() - t0,
        found.history,
        start_mae,
        found.runs,
        found.stop,
        edge,
        [lg.source for lg in train],
        [lg.source for lg in validation],
        box.log_keys,
    )


def check_split(logs: Sequence[ServoLog], validation_fraction: float) -> None:
    """A train/validation split needs at least 2 logs (LogError naming the one log otherwise)."""
    if not logs:
        raise LogError("no logs given")
    if validation_fraction > 0 and len(logs) < 2:
        raise LogError(
            f"{logs[0].source}: a train/validation split needs at least 2 logs, got 1 "
            "(validation fraction 0 fits on this log alone)"
        )


def identify_models(
    logs: Sequence[ServoLog],
    models: Sequence[str] = MODEL_NAMES,
    actuator: str | None = None,
    firmware: FirmwareLaw | None = None,
    validation_fraction: float = 0.25,
    seed: int = 0,
    max_evals: int = 4000,
    warm: bool = True,
    progress: bool = True,
    reference: ActuatorParams | None = None,
    callback: Callable[[str, FitResult], None] | None = None,
    **fit_options,
) -> dict[str, FitResult]:
    """Fit every model in ``models`` on a 75/25 split of ``logs``; returns model → :class:`FitResult`.

    Nested models start from the best of the nested fits (:func:`warm_starts`); ``fit_options`` go to
    :func:`fit_model`."""
    check_split(logs, validation_fraction)
    actuator = actuator or logs[0].motor
    if not actuator:
        raise ValueError("actuator unknown: the logs carry no 'motor' key; pass actuator=")
    for m in models:
        if m not in MODEL_NAMES:
            raise ParameterError(f"unknown friction model {m!r}; valid models: {', '.join(MODEL_NAMES)}")
    train, val = split_logs(logs, validation_fraction, seed)
    return identify_nested(
        train,
        val,
        models,
        actuator,
        firmware,
        seed=seed,
        max_evals=max_evals,
        warm=warm,
        progress=progress,
        reference=reference,
        callback=callback,
        **fit_options,
    )


def identify_nested(
    train: Sequence[ServoLog],
    validation: Sequence[ServoLog],
    models: Sequence[str],
    actuator: str,
    firmware: FirmwareLaw | None = None,
    seed: int = 0,
    max_evals: int = 4000,
    warm: bool = True,
    progress: bool = True,
    reference: ActuatorParams | None = None,
    callback: Callable[[str, FitResult], None] | None = None,
    **fit_options,
) -> dict[str, FitResult]:
    """Fit ``models`` in order on a given train/validation split, each warm-started from the best nested fit
    before it (:func:`warm_starts`; M1 → M2/M3 → M4 → M5 → M6)."""
    results: dict[str, FitResult] = {}
    for m in models:
        x0 = warm_starts(m, {k: r.params for k, r in results.items()}) if warm else None
        results[m] = fit_model(
            train,
            m,
            actuator,
            firmware,
            validation,
            max_evals=max_evals,
            seed=seed,
            x0=x0,
            progress=progress,
            reference=reference,
            **fit_options,
        )
        if callback:
            callback(m, results[m])
    return results


__all__ = [
    "KEY_INDICES",
    "FRICTION_BOUNDS",
    "SEARCH_BOUNDS",
    "BoundsRow",
    "bounds_row",
    "search_space",
    "pack_candidates",
    "simulate_batch",
    "mae_per_log",
    "population_mae",
    "evaluate",
    "FitResult",
    "split_logs",
    "fit_model",
    "identify_models",
    "identify_nested",
    "warm_start",
    "warm_starts",
    "params_from_vector",
    "check_split",
]
