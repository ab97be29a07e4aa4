"""The OP3 mission's energy comparison over a common window of whole steps (issue 21 item 5; ROS-free).

Each run (:class:`~servo_ff.bringup.op3_mission.Op3Result`) carries ``step_energy``: the sim's per-joint E = ∫U·I dt
[J] from the walk start to the end of each step it completed before a fall (row 0: the walk start, zeros; row k: the
end of step k, at the first double support + k step periods). Controllers are compared over the steps all of them
walked: the whole run when none fell (the mission's "40 steps"), else the whole steps before the first fall among
them; fewer than ``MIN_STEPS`` steps compare nothing (nan).
"""

from __future__ import annotations

import math
from typing import NamedTuple, Protocol

import numpy as np

from servo_ff.dynamics.walk_pattern import WalkParams

MIN_STEPS = 2  #: fewest whole steps a comparison is made over
#: [m/s] the 40-step comparison's candidate speeds, fastest first: the speeds of the ROS-free obstacle map's grid
#: (bench/op3_obstacle_sweep.SPEEDS) at which (a) stood on flat ground for 16 steps (it fell at 0.08)
ENERGY40_SPEEDS = (0.05, 0.035, 0.02)
KNEES = ("l_knee", "r_knee")
#: the joint groups of the energy tables (Schwarz & Behnke report the knees and all joints); None: every joint
GROUPS: dict[str, tuple[str, ...] | None] = {
    "knees": KNEES,
    "hips": tuple(f"{s}_hip_{a}" for s in "lr" for a in ("yaw", "roll", "pitch")),
    "ankles": tuple(f"{s}_ank_{a}" for s in "lr" for a in ("pitch", "roll")),
    "all": None,
}


class StepEnergy(Protocol):
    joints: list[str]
    step_energy: np.ndarray  # (steps + 1, J) [J] cumulative from the walk start


class Comparison(NamedTuple):
    steps: int  # whole steps compared over (the common window)
    knee_reduction: float  # 1 − E_knees(other)/E_knees(base) over the window; nan when steps < MIN_STEPS
    reduction: float  # the same over all joints


def step_end(steps: int, params: WalkParams | None = None) -> float:
    """[s from the walk start] the end of step ``steps`` (row ``steps`` of ``step_energy``): the first double support
    + ``steps`` step periods of ``params`` (default: :class:`WalkParams`', the walk node's)."""
    p = params or WalkParams()
    return p.single_support * p.startend_double_support_ratio + steps * p.step_period


def whole_steps(run: StepEnergy) -> int:
    """Steps ``run`` completed before it fell (all of them when it did not)."""
    return max(len(run.step_energy) - 1, 0)


def common_steps(runs: list[StepEnergy]) -> int:
    """The whole steps every run of ``runs`` completed: the window before the first fall among them."""
    return min(whole_steps(r) for r in runs)


def energy_over(run: StepEnergy, steps: int, joints: tuple[str, ...] | None = None) -> float:
    """[J] ``run``'s energy over its first ``steps`` steps, summed over ``joints`` (all when None)."""
    if steps > whole_steps(run):
        raise ValueError(f"the run completed {whole_steps(run)} steps, not {steps}")
    e = run.step_energy[steps]
    return float(e.sum() if joints is None else sum(e[run.joints.index(j)] for j in joints))


def group_sums(joints: list[str], energy: np.ndarray) -> dict[str, float]:
    """[J] ``energy`` (per joint, in the order of ``joints``) summed over each of :data:`GROUPS`."""
    return {
        g: float(np.sum(energy) if js is None else sum(energy[joints.index(j)] for j in js)) for g, js in GROUPS.items()
    }


def energy40_keys(vx: float, steps: float, knee_reduction: float, reduction: float) -> str:
    """The 40-step comparison's RESULT keys (``bench/op3_mission.py`` section 6, ``tools/op3_energy40.py``): the speed
    [m/s] (nan: (a) fell at every candidate), the whole steps compared and 1 − E(c)/E(a) over the knees and all
    joints."""
    return (
        f"energy40_vx={vx:g} energy40_steps={steps:g} knee_energy40_reduction={knee_reduction:.3f} "
        f"energy40_reduction={reduction:.3f}"
    )


def compare(base: StepEnergy, other: StepEnergy, min_steps: int = MIN_STEPS) -> Comparison:
    """``other``'s energy reduction against ``base`` (knees, all joints) over their common window of whole steps."""
    n = common_steps([base, other])
    if n < min_steps:
        return Comparison(n, math.nan, math.nan)
    knee = 1.0 - energy_over(other, n, KNEES) / energy_over(base, n, KNEES)
    return Comparison(n, knee, 1.0 - energy_over(other, n) / energy_over(base, n))


def window_lines(runs: dict[str, StepEnergy], steps: int) -> list[str]:
    """One line per labelled run: its energy over the first ``steps`` steps, or the steps it walked if fewer."""
    lines = []
    for label, r in runs.items():
        if whole_steps(r) < steps:
            lines.append(f"{label}: fell after {whole_steps(r)} whole steps")
        else:
            lines.append(f"{label}: {energy_over(r, steps):.1f} J, knees {energy_over(r, steps, KNEES):.1f} J")
    return lines


__all__ = [
    "Comparison",
    "ENERGY40_SPEEDS",
    "GROUPS",
    "KNEES",
    "MIN_STEPS",
    "common_steps",
    "compare",
    "energy40_keys",
    "energy_over",
    "group_sums",
    "step_end",
    "whole_steps",
    "window_lines",
]
