"""The CMA-ES search of :func:`~servo_ff.identification.simulation_fit.fit_model`, on a batched cost over the
normalised box [0, 1]^n: one IPOP search (Auger and Hansen, A Restart CMA Evolution Strategy With Increasing
Population Size: restarts from the incumbent with a population twice as large), and several independent IPOP
searches from the same start with different seeds, keeping the lowest cost (multi-start: one IPOP search lands in
a basin chosen by its seed, several seeds find the lower ones).

The cost maps candidates (pop, n) to costs (pop,) (``inf`` where not finite); it is the TRAINING cost: the
selection between searches never sees a validation log.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

#: Independent IPOP searches per model by default: on the real XL330 logs one search's M4 training MAE spreads
#: 3–6 mrad over the seeds (docs/real_logs.md, 'Does the optimiser converge?'); the best of 4 lowers it to < 1 mrad.
DEFAULT_STARTS = 4

Cost = Callable[[np.ndarray], np.ndarray]


@dataclass
class Search:
    """Outcome of a search: best normalised point and cost, evaluations spent, per-run records."""

    u: np.ndarray
    f: float
    evaluations: int = 0
    generations: int = 0
    history: list[float] = field(default_factory=list)  # best cost of the search so far, per generation
    runs: list[dict] = field(default_factory=list)  # per CMA-ES run: start, population, evaluations, best_mae, stop
    stop: str = "budget"


def start_seed(seed: int, start: int) -> int:
    """CMA-ES seed of independent search ``start`` (start 0: ``seed`` itself, so one start is the plain search)."""
    return seed if start == 0 else int(np.random.SeedSequence([seed, start]).generate_state(1)[0])


def ipop(
    cost: Cost,
    mean: np.ndarray,
    step: np.ndarray,
    incumbent: tuple[float, np.ndarray],
    restart_step: Callable[[np.ndarray], np.ndarray],
    max_evals: int,
    pop0: int,
    seed: int,
    patience: int = 30,
    tol: float = 1e-3,
    restarts: int | None = None,
    stall_restarts: int = 2,
    on_generation: Callable[[int, float], None] | None = None,
) -> Search:
    """One IPOP-CMA-ES search from ``mean`` with per-key steps ``step`` (normalised), never worse than
    ``incumbent`` (cost, point). A run ends when CMA-ES reports convergence or its best improved by less than
    ``tol`` (relative) over ``patience`` generations; the next run restarts at the best point with steps
    ``restart_step(best)`` and twice the population. Ends when ``max_evals`` is spent, after ``restarts``
    restarts (None: no limit), or when ``stall_restarts`` restarts in a row improved by less than ``tol``
    (0: never). ``on_generation(evaluations, best)`` after every generation."""
    from cmaes import CMA

    out = Search(incumbent[1].copy(), float(incumbent[0]))
    stalls = 0
    n = len(mean)
    while True:
        k = len(out.runs)
        pop = min(pop0 * 2**k, max_evals - out.evaluations)
        if pop < max(pop0, 2):
            break  # budget spent
        if restarts is not None and k > restarts:
            out.stop = "restarts"
            break
        if stall_restarts and stalls >= stall_restarts:
            out.stop = "converged"
            break
        before = out.f
        if k:
            mean, step = out.u.copy(), restart_step(out.u)
        sigma = float(step.max())
        opt = CMA(
            mean=mean,
            sigma=sigma,
            cov=np.diag((step / sigma) ** 2),
            bounds=np.tile([0.0, 1.0], (n, 1)),
            seed=seed + k,
            population_size=pop,
        )
        run_best, run_hist, reason = math.inf, [], "budget"
        while out.evaluations + pop <= max_evals:
            us = np.array([opt.ask() for _ in range(pop)])
            f = cost(us)
            opt.tell(list(zip(us, np.where(np.isfinite(f), f, 1e3))))
            i = int(np.argmin(f))
            run_best = min(run_best, float(f[i]))
            if f[i] < out.f:
                out.f, out.u = float(f[i]), us[i].copy()
            out.evaluations += pop
            out.generations += 1
            out.history.append(out.f)
            run_hist.append(run_best)
            if on_generation:
                on_generation(pop, out.f)
            if opt.should_stop():
                reason = "converged"
                break
            if len(run_hist) > patience and run_hist[-patience - 1] - run_best <= tol * run_best:
                reason = "patience"
                break
        out.runs.append(
            {
                "population": pop,
                "generations": len(run_hist),
                "evaluations": pop * len(run_hist),
                "best_mae": run_best if math.isfinite(run_best) else None,
                "stop": reason,
            }
        )
        if k:  # a restart that did not improve the best by tol counts towards convergence
            stalls = stalls + 1 if before - out.f <= tol * out.f else 0
    return out


@dataclass(frozen=True)
class Begin:
    """Where a search begins: CMA-ES mean and per-key steps (normalised), and the point it must beat (cost, u)."""

    mean: np.ndarray
    step: np.ndarray
    incumbent: tuple[float, np.ndarray]


#: Two searches whose training costs agree within this (relative) have found the same basin: no further start and
#: no polish (``multi_start(agree=)``; None: always all ``starts``).
DEFAULT_AGREE = 1e-3


def agreed(costs: Sequence[float], agree: float | None) -> bool:
    """True when the two lowest of ``costs`` (one per search so far) differ by at most ``agree`` × the lowest."""
    if agree is None or len(costs) < 2:
        return False
    a, b = sorted(costs)[:2]
    return math.isfinite(b) and b - a <= agree * a


def multi_start(
    cost: Cost,
    starts: int,
    seed: int,
    begins: Sequence[Begin],
    polish: bool = True,
    agree: float | None = DEFAULT_AGREE,
    **kw,
) -> Search:
    """``starts`` independent :func:`ipop` searches, search ``s`` from ``begins[s % len(begins)]`` with seed
    :func:`start_seed` ``(seed, s)``, each with the full ``max_evals`` of ``kw``; the one of lowest cost is kept
    (the first on a tie). With ``polish`` and more than one start, one more :func:`ipop` search (seed
    ``start_seed(seed, starts)``, the same budget) starts at the kept point with steps ``restart_step`` of it and
    keeps its result if lower: the kept search is often still descending a narrow basin when its restarts stop.
    Returns the best point with every search's evaluations, generations and runs (each run tagged with its
    ``start``; the polish's with ``starts``); ``stop`` is the kept search's. ``agree``: once two searches that
    each improved on their begin point agree within it (:func:`agreed`), no further search and no polish run (the
    basin is confirmed; ``stop`` then reads ``agreed after N searches``)."""
    if starts < 1:
        raise ValueError(f"starts must be >= 1, got {starts}")
    if not begins:
        raise ValueError("no begin point")
    best: Search | None = None
    evals = gens = 0
    runs: list[dict] = []
    found: list[float] = []  # the cost of each search that improved on its begin point
    ran = 0
    for s in range(starts):
        b = begins[s % len(begins)]
        r = ipop(cost, b.mean.copy(), b.step, b.incumbent, seed=start_seed(seed, s), **kw)
        evals, gens, ran = evals + r.evaluations, gens + r.generations, s + 1
        runs += [{"start": s, **run} for run in r.runs]
        if best is None or r.f < best.f:
            best = r
        if r.f < b.incumbent[0]:  # two searches stuck at the begin point agree, and confirm nothing
            found.append(r.f)
        if ran < starts and agreed(found, agree):
            break
    assert best is not None
    confirmed = agreed(found, agree)
    if confirmed:
        best.stop = f"agreed after {ran} searches"
    if polish and starts > 1 and not confirmed:
        step = kw["restart_step"](best.u)
        r = ipop(cost, best.u.copy(), step, (best.f, best.u), seed=start_seed(seed, starts), **kw)
        evals, gens = evals + r.evaluations, gens + r.generations
        runs += [{"start": starts, **run} for run in r.runs]
        if r.f < best.f:
            best.u, best.f, best.history = r.u, r.f, best.history + r.history
    best.evaluations, best.generations, best.runs = evals, gens, runs
    return best
