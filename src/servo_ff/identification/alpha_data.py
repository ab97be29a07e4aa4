"""What the α̂ least squares is fitted on, assembled one way per kind of data (Schwarz & Behnke, Compliant Robot
Behavior using Servo Actuator Models identified by Iterative Learning Control, §4.2, Eq. 19, 22–27).

Every source is assembled the same way: the goals sent and the measured position, smoothed and differentiated
by a Savitzky–Golay filter (order 3, 11 samples) — :func:`data_from_samples`; an ILC trial
(:func:`data_from_ilc`), a log or bag (:func:`data_from_log`) and live topics (:func:`data_from_streams`) only
pick those samples. A log with recorder gaps, or live joint_states with a pause, gives its stretches between them
(``segments``): the filter, and the fit's pairing of a goal with the reaction t_d later, stay within each.

The torque τ_o along q comes from a callable (:func:`pendulum_torque` for the bench, a URDF for a robot joint).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from ..io.sample_gaps import Spans, measured_spans, runs
from ..io.servo_log import LogError, ServoLog
from ..models.schema import SUPPLY_RANGE, implausible_supply
from ..models.stepper import PendulumLoad
from .alpha_fit import AlphaFit, fit_alpha
from .delay_bounds import ReactionTimeError
from .pendulum import output_torque

SG_WINDOW, SG_ORDER = 11, 3  # Savitzky–Golay smoothing of measured positions (samples, polynomial order)
TorqueFn = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]  # (q, q̇, q̈) → τ_o [N·m]


@dataclass(frozen=True)
class AlphaData:
    command: np.ndarray  # goal positions sent [rad] (T,)
    q: np.ndarray  # trajectory τ_o is evaluated along [rad]
    dq: np.ndarray  # [rad/s]
    ddq: np.ndarray  # [rad/s²]
    measured: np.ndarray  # measured position [rad] (reaction time)
    u_bat: np.ndarray  # supply [V] (T,)
    kp: float  # firmware P gain during the data
    dt: float  # [s]
    source: str  # what the data is, for messages
    segments: Spans = ()  # [start, stop) contiguous stretches of the arrays (): one, the whole data
    t: np.ndarray | None = None  # times of the samples [s] on the streams' clock (live topics; None: a dt grid)


def _supply(u_bat, n: int, source: str) -> np.ndarray:
    """``u_bat`` [V] per sample; ValueError naming the first implausible one (Eq. 19 scales α̂ by it: before, any
    value > 0 was fitted, 150 decivolts as 150 V)."""
    u = np.broadcast_to(np.asarray(u_bat, float), (n,)).copy()
    lo, hi = SUPPLY_RANGE
    bad = ~np.isfinite(u) | (u < lo) | (u > hi)
    if bad.any():
        k = int(np.argmax(bad))
        raise ValueError(f"{source}: supply voltage at sample {k}: {implausible_supply(float(u[k]))}; not fitted")
    return u


def data_from_ilc(
    commands: np.ndarray,
    measured: np.ndarray,
    errors: np.ndarray,
    supply,
    kp: float,
    dt: float,
    iteration: int = -1,
    source: str = "ILC",
) -> AlphaData:
    """Trial ``iteration`` of an ILC run (−1: the trial with the lowest windowed error): its command and the
    motion it produced."""
    errors = np.asarray(errors, float)
    k = int(np.argmin(errors)) if iteration < 0 else int(iteration)
    if k >= len(commands):
        raise ValueError(f"{source}: iteration {k} asked, the run has {len(commands)} trial(s)")
    supply = np.asarray(supply, float)
    u = supply[k] if supply.ndim else supply
    return data_from_samples(commands[k], measured[k], u, kp, dt, f"{source} trial {k}")


def data_from_samples(
    goal: np.ndarray, position: np.ndarray, u_bat, kp: float, dt: float, source: str, spans: Spans | None = None
) -> AlphaData:
    """Goals and measured positions on one uniform grid (``dt`` [s]): Savitzky–Golay q, q̇, q̈ of the measurement.
    ``spans``: the [start, stop) stretches of the samples to use, each filtered on its own (None: all, one stretch);
    the data holds them end to end, their bounds in ``segments``."""
    from scipy.signal import savgol_filter

    position = np.asarray(position, float)
    n = len(position)
    spans = ((0, n),) if spans is None else tuple(spans)
    short = [b - a for a, b in spans if b - a < SG_WINDOW]
    if not spans or short:
        got = f"{short[0] if short else 0} sample(s)" + (" in a stretch" if len(spans) > 1 else "")
        raise LogError(f"{source}: {got}; the fit needs at least {SG_WINDOW}")

    def per_span(deriv: int) -> np.ndarray:
        return np.concatenate(
            [savgol_filter(position[a:b], SG_WINDOW, SG_ORDER, deriv=deriv, delta=dt) for a, b in spans]
        )

    def pick(x: np.ndarray) -> np.ndarray:
        return np.concatenate([x[a:b] for a, b in spans])

    bounds = np.cumsum([0] + [b - a for a, b in spans])
    return AlphaData(
        pick(np.asarray(goal, float)),
        per_span(0),
        per_span(1),
        per_span(2),
        pick(position),
        _supply(pick(np.broadcast_to(np.asarray(u_bat, float), (n,))), int(bounds[-1]), source),
        float(kp),
        float(dt),
        source,
        tuple((int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])),
    )


def powered_stretches(log: ServoLog) -> Spans:
    """[start, stop) sample ranges where the torque is on, within the stretches between recorder gaps (the firmware
    law drives only those)."""
    on = np.asarray(log.torque_enable) > 0.5
    return tuple((a + s, a + e) for a, b in log.spans() for s, e in runs(on[a:b]))


def data_from_log(log: ServoLog, kp: float | None = None) -> AlphaData:
    """A bench log / bag: its powered stretches (torque on, no recorder gap) of at least ``SG_WINDOW`` samples, and
    what is left out in its source (before: only the samples before the torque was first off — none when a log
    starts unpowered); ``kp`` overrides the log's gain."""
    stretches = powered_stretches(log)
    spans = tuple((a, b) for a, b in stretches if b - a >= SG_WINDOW)
    n_on = int((np.asarray(log.torque_enable) > 0.5).sum())
    used = sum(b - a for a, b in spans)
    short = sum(b - a for a, b in stretches) - used
    gaps = " between recorder gaps" if log.segments is not None else ""
    if not spans:
        raise LogError(
            f"{log.source}: no powered stretch{gaps} of {SG_WINDOW} samples ({n_on} powered samples of {len(log)}); "
            f"the fit needs at least {SG_WINDOW}"
        )
    said = [
        f"{used} powered samples"
        + (f" in {len(spans)} stretches{gaps or ' (torque off between)'}" if len(spans) > 1 else "")
    ]
    if len(log) - n_on:
        said.append(f"{len(log) - n_on} unpowered not used")
    if short:
        said.append(f"{short} in powered stretches shorter than {SG_WINDOW} samples not used")
    return data_from_samples(
        log.goal_position,
        log.position,
        log.input_volts,
        log.kp if kp is None else kp,
        log.dt,
        f"{log.source} ({', '.join(said)})",
        spans,
    )


def first_step_back(t: np.ndarray) -> int | None:
    """Index of the first time in ``t`` [s] earlier than the one before it (a clock that jumped back), or None."""
    back = np.flatnonzero(np.diff(t) < 0)
    return int(back[0]) + 1 if back.size else None


def data_from_streams(
    t_goal: np.ndarray,
    goal: np.ndarray,
    t_state: np.ndarray,
    position: np.ndarray,
    u_bat,
    kp: float,
    dt: float,
    source: str,
    say: Callable[[str], object] | None = None,
) -> AlphaData:
    """Live topics: goals and states at their own stamps, interpolated on their overlap at ``dt``, within the
    stretches between pauses of the states (:func:`~servo_ff.io.sample_gaps.measured_spans`, the bound of a log's
    recorder gaps; before: interpolated across a pause, e.g. a lost bus). ValueError when a stream's times go back
    (a clock that jumped back: a bag played in a loop, a restarted simulation): interpolated across the jump, the
    samples would pair goals and states of different moments. ``say``: where the pause line goes (None: logged)."""
    for name, t in (("goal", t_goal), ("joint_states", t_state)):
        k = first_step_back(t)
        if k is not None:
            raise ValueError(
                f"{source}: the {name} times go back at sample {k} ({t[k]:.3f} s after {t[k - 1]:.3f} s): the clock "
                "jumped back (a bag played in a loop, a restarted simulation?); not fitted across it"
            )
    t0, t1 = max(t_goal[0], t_state[0]), min(t_goal[-1], t_state[-1])
    grid = np.arange(t0, t1, dt)
    if grid.size < SG_WINDOW:
        raise ValueError(f"{source}: the goal and state streams overlap for {max(t1 - t0, 0.0):.3f} s only")
    spans = measured_spans(source, "joint_states", np.asarray(t_state, float), grid, dt, float(grid[0]), say)
    said = f"{grid.size} samples"
    if spans is not None:
        used = sum(b - a for a, b in spans)
        said = f"{used} of {grid.size} samples, in {len(spans)} stretch(es) between joint_states pauses"
    data = data_from_samples(
        np.interp(grid, t_goal, goal),
        np.interp(grid, t_state, position),
        u_bat,
        kp,
        dt,
        f"{source} ({said})",
        spans,
    )
    return replace(data, t=np.concatenate([grid[a:b] for a, b in (spans or ((0, grid.size),))]))


def pendulum_torque(mass: float, length: float, arm_mass: float = 0.0) -> TorqueFn:
    """τ_o of the pendulum bench (:func:`~servo_ff.identification.pendulum.output_torque`)."""
    load = PendulumLoad(mass, length, arm_mass)
    return lambda q, dq, ddq: output_torque(load, q, ddq)


def fit_alpha_data(data: AlphaData, torque: TorqueFn | np.ndarray, **options) -> AlphaFit:
    """α̂ of ``data`` (:func:`~servo_ff.identification.alpha_fit.fit_alpha`; ``options``: delay, with_inertia,
    dq_s, delta, nonnegative, …). ``torque``: τ_o along ``data.q`` (an array) or a callable giving it."""
    tau = np.asarray(torque if not callable(torque) else torque(data.q, data.dq, data.ddq), float)
    if tau.shape != data.q.shape or not np.isfinite(tau).all():
        raise ValueError(f"{data.source}: τ_o must be {data.q.shape} finite values, got shape {tau.shape}")
    if not math.isfinite(data.kp) or data.kp <= 0:
        raise ValueError(f"{data.source}: the servo gain kp must be > 0, got {data.kp}")
    try:
        return fit_alpha(
            data.command,
            data.q,
            data.dq,
            data.ddq,
            tau,
            data.kp,
            data.u_bat,
            data.dt,
            measured=data.measured,
            segments=data.segments or None,
            **options,
        )
    except ReactionTimeError as e:  # goals timed late: the line names the data
        raise ReactionTimeError(f"{data.source}: {e}") from None


__all__ = [
    "AlphaData",
    "TorqueFn",
    "data_from_ilc",
    "data_from_samples",
    "data_from_log",
    "data_from_streams",
    "first_step_back",
    "powered_stretches",
    "pendulum_torque",
    "fit_alpha_data",
]
