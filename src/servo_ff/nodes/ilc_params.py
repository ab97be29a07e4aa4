"""The parameters of ``servo_ilc_node`` (:func:`ilc_specs`, their one description) and its reference trajectory."""

from __future__ import annotations

import inspect

from servo_ff import trajectories
from servo_ff.identification.ilc import DIVERGE_FACTOR, DIVERGE_GROWTH
from servo_ff.ros.common import ParamSpec

from .ilc_trials import EXECUTIONS
from .servo_base import KP_MAX, KP_UNIT


def reference_trajectory(
    name: str, dt: float, duration: float = 0.0, amplitude: float = 0.0, offset: float = 0.0
) -> trajectories.Trajectory:
    """``servo_ff.trajectories.trajectory(name)`` with the keyword arguments that function accepts
    (0 = its default)."""
    fn = trajectories.TRAJECTORIES.get(name)
    if fn is None:
        raise ValueError(f"reference {name!r} unknown; valid: {', '.join(trajectories.TRAJECTORIES)}")
    accepted = inspect.signature(fn).parameters
    kwargs: dict[str, float] = {"dt": dt}
    for key, value in (("duration", duration), ("amplitude", amplitude), ("offset", offset)):
        if value:
            if key not in accepted:
                raise ValueError(f"reference {name!r} takes no {key}; its parameters: {', '.join(accepted)}")
            kwargs[key] = value
    return fn(**kwargs)


def ilc_specs() -> list[ParamSpec]:
    """The parameters of ``servo_ilc_node``: their one description (docs/nodes.md is generated from it)."""
    return [
        ParamSpec("joints", [""], "joints of the servo interface (servo/p_gains order)"),
        ParamSpec("joint", "joint_1", "joint to learn"),
        ParamSpec(
            "reference",
            "schwarz_behnke_reference",
            "reference trajectory (servo_ff.trajectories)",
            choices=tuple(trajectories.TRAJECTORIES),
        ),
        ParamSpec("reference_duration", 0.0, "reference duration (0: its default)", "s", lo=0.0, hi=600.0),
        ParamSpec("reference_amplitude", 0.0, "reference amplitude (0: its default)", "rad", lo=0.0, hi=10.0),
        ParamSpec("reference_offset", 0.0, "reference offset (schwarz_behnke_reference)", "rad", lo=-10.0, hi=10.0),
        ParamSpec("rate_hz", 200.0, "command / sample rate of a trial", "Hz", lo=1.0, hi=2000.0),
        ParamSpec(
            "kp",
            8.0,
            "P gain set on every joint during the trials (0: leave the gains)",
            KP_UNIT,
            lo=0.0,
            hi=KP_MAX,
        ),
        ParamSpec("gain", 0.8, "ILC learning gain λ (Eq. 21)", lo=1e-6, hi=10.0),
        ParamSpec("delay", 0.01, "reaction time t_d (Eq. 21)", "s", lo=0.0, hi=1.0),
        ParamSpec("threshold", 0.01, "windowed error q_max that ends learning (Eq. 28)", "rad", lo=0.0, hi=10.0),
        ParamSpec(
            "window",
            0.025,
            "window D of Eq. 28; a trial with a stream goal sent later than D + one sample, or a gap in its states "
            "longer than that beyond their period, is run again",
            "s",
            lo=0.0,
            hi=1.0,
        ),
        ParamSpec("max_iterations", 15, "iteration cap", lo=0, hi=1000),
        ParamSpec(
            "diverge_factor",
            DIVERGE_FACTOR,
            "stop as diverged when q_max exceeds this × the first trial's (0: off)",
            lo=0.0,
            hi=1e3,
        ),
        ParamSpec(
            "diverge_growth",
            DIVERGE_GROWTH,
            "stop as diverged when q_max grows this many iterations in a row, to over twice its lowest (0: off)",
            lo=0,
            hi=1000,
        ),
        ParamSpec("initial", "reference", "first command curve (Eq. 20: zero)", choices=("reference", "zero")),
        ParamSpec("filter_hz", 0.0, "zero-phase low-pass on the update (0: plain Arimoto)", "Hz", lo=0.0, hi=1000.0),
        ParamSpec("settle_time", 1.0, "hold at the curve's start before each trial", "s", lo=0.0, hi=60.0),
        ParamSpec("output", "ilc_result.npz", "result file (commands, measurements) for servo_fit_node"),
        ParamSpec("start_on_launch", False, "start learning once /joint_states of the joint arrive"),
        ParamSpec(
            "execution",
            "stream",
            "how a trial runs: stream the samples at rate_hz of wall time, or "
            "send it as one JointTrajectory timed on the servo node's stamps (sim time: as fast as the "
            "sim runs)",
            choices=EXECUTIONS,
        ),
    ]
