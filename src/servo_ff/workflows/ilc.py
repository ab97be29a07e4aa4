"""ILC on the simulated pendulum bench (Schwarz & Behnke, Compliant Robot Behavior using Servo Actuator Models
identified by Iterative Learning Control, Eq. 16–21, 28): the learned command curve of every trial as one
:class:`~servo_ff.io.ilc_record.ILCRecord`, with the bench it drove, so a fit needs nothing else.
``servo-ff ilc`` calls it; ``servo_ilc_node`` runs the same ILC through ROS topics and writes the same record."""

from __future__ import annotations

import numpy as np

from ..identification.alpha_fit import command_reaction_lag
from ..identification.ilc import ILCResult, ILCStop, run_ilc
from ..identification.pendulum import simulated_servo
from ..io.ilc_record import ILCRecord
from ..models.params import ActuatorParams
from ..models.stepper import PendulumLoad
from ..trajectories import Trajectory


def ilc_record(
    res: ILCResult,
    ref: Trajectory,
    joint: str,
    kp: float,
    dt: float,
    delay: float,
    supply,
    pendulum: PendulumLoad | None = None,
) -> ILCRecord:
    """The record of an ILC run (``supply`` [V]: one value, or one per trial)."""
    k = len(res.commands)
    return ILCRecord(
        joint=joint,
        t=ref.t,
        reference_q=ref.q,
        reference_dq=ref.dq,
        reference_ddq=ref.ddq,
        commands=res.commands,
        measured=res.measured,
        errors=np.asarray(res.errors, float),
        supply=np.broadcast_to(np.asarray(supply, float), (k,)).copy(),
        kp=float(kp),
        dt=float(dt),
        delay=float(delay),
        converged_iteration=int(res.iterations),
        pendulum=None if pendulum is None else _one_pendulum(pendulum),
        stopped=res.stopped,
    )


def supply_per_trial(readings: list[float], topic: str) -> tuple[np.ndarray, str]:
    """The mean supply [V] of each trial from ``readings`` (NaN: none during that trial): a trial without one gets
    the mean of the others, returned with the line that says so ('' when every trial had one); ValueError when no
    trial had one (the record needs the supply; ``topic`` names where it comes from)."""
    v = np.asarray(readings, dtype=float)
    if not np.isfinite(v).any():  # before: 0 V written, a record the fit then refused
        raise ValueError(f"no {topic} during the trials: the record needs the supply voltage")
    missing = np.flatnonzero(~np.isfinite(v))
    if not missing.size:
        return v, ""
    mean = float(np.nanmean(v))
    trials = ", ".join(str(int(k)) for k in missing)
    return np.where(
        np.isfinite(v), v, mean
    ), f"no {topic} during trial(s) {trials}: their supply is the mean of the others, {mean:.2f} V"


def _one_pendulum(load: PendulumLoad) -> np.ndarray:
    """(mass [kg], length [m], arm mass [kg]) of the one pendulum an ILC record describes (scalars or 1-element
    arrays, as a one-joint bench gives them)."""
    values = [np.asarray(v, dtype=float).reshape(-1) for v in (load.mass, load.length, load.arm_mass)]
    if any(v.size != 1 for v in values):
        raise ValueError("an ILC record describes one pendulum: mass, length and arm_mass must be single values")
    return np.array([float(v[0]) for v in values])


def ilc_on_pendulum(
    params: ActuatorParams,
    load: PendulumLoad,
    ref: Trajectory,
    kp: float,
    *,
    dt: float,
    gain: float = 1.0,
    delay: float | None = None,
    initial="reference",
    threshold: float = 0.02,
    window: float = 0.025,
    max_iterations: int = 30,
    filter_hz: float | None = None,
    joint: str = "pendulum",
    progress: bool = False,
    diverge_factor: float = 0.0,
    diverge_growth: int = 0,
) -> tuple[ILCRecord, ILCResult]:
    """Arimoto ILC of the goal curve that makes the simulated servo (``params`` at gain ``kp``) on ``load`` track
    ``ref``. ``delay`` t_d [s]: None = the command-to-reaction lag of a plain P run. Returns the record and the
    run (threshold, window, for plots). ``diverge_factor``/``diverge_growth``: :func:`run_ilc`'s divergence stop
    (0: off). A Ctrl-C during a trial stops learning as ``interrupted`` with the trials done (none: re-raised)."""
    servo = params.with_(firmware=params.firmware.with_(kp=kp))
    simulate = simulated_servo(servo, load, dt, theta0=float(ref.q[0]))

    def execute(u: np.ndarray) -> np.ndarray:
        try:
            return simulate(u)
        except KeyboardInterrupt:
            raise ILCStop("interrupted (Ctrl-C)", "interrupted") from None

    if delay is None:
        delay = command_reaction_lag(ref.q, execute(ref.q), dt)
    options = {} if filter_hz is None else {"filter_hz": filter_hz}
    res = run_ilc(
        execute,
        ref.q,
        dt,
        gain=gain,
        delay=delay,
        initial=initial,
        threshold=threshold,
        window=window,
        max_iterations=max_iterations,
        progress=progress,
        diverge_factor=diverge_factor,
        diverge_growth=diverge_growth,
        **options,
    )
    return ilc_record(res, ref, joint, kp, dt, delay, servo.firmware.vin, load), res


__all__ = ["ilc_record", "supply_per_trial", "ilc_on_pendulum"]
