"""Trajectory execution tolerances with ros2_controllers' JointTrajectoryController semantics (ROS-free).

Per joint, a path tolerance (checked while the trajectory runs) and a goal tolerance (checked after its last
point), each on position [rad], velocity [rad/s] and acceleration [rad/s²]; a tolerance of 0 is not enforced. The
goal must be within its goal tolerance by the trajectory's end + ``goal_time`` [s] (0: no time limit). A
FollowJointTrajectory goal overrides the defaults per joint as control_msgs/JointTolerance says: > 0 replaces
the default, 0 keeps it, -1 erases it (not enforced); anything else (or an unknown joint) makes the goal's
tolerances invalid, and JointTrajectoryController then applies the defaults, as :func:`goal_tolerances` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

ERASE = -1.0
COMPONENTS = ("position", "velocity", "acceleration")
UNITS = ("rad", "rad/s", "rad/s²")


@dataclass
class Tolerances:
    """``path`` and ``goal`` (J, 3): per joint, position / velocity / acceleration tolerance (0: not enforced);
    ``goal_time`` [s] after the trajectory's end to reach the goal tolerance (0: no limit)."""

    path: np.ndarray
    goal: np.ndarray
    goal_time: float = 0.0
    notes: list[str] = field(default_factory=list)  # why a goal's own tolerances were not applied

    @classmethod
    def defaults(
        cls, trajectory: Sequence[float], goal: Sequence[float], stopped_velocity: float, goal_time: float
    ) -> Tolerances:
        """JointTrajectoryController's parameters: ``constraints.<joint>.trajectory`` / ``.goal`` (position),
        ``constraints.stopped_velocity_tolerance`` (goal velocity, every joint), ``constraints.goal_time``."""
        n = len(trajectory)
        path, end = np.zeros((n, 3)), np.zeros((n, 3))
        path[:, 0] = trajectory
        end[:, 0] = goal
        end[:, 1] = stopped_velocity
        return cls(path, end, float(goal_time))


def resolve(default: float, requested: float) -> float:
    """One tolerance of a goal: > 0 replaces ``default``, 0 keeps it, -1 erases it (0); ValueError otherwise."""
    if requested > 0.0:
        return float(requested)
    if abs(requested - ERASE) < np.finfo(np.float32).eps:
        return 0.0
    if requested < 0.0:
        raise ValueError(f"{requested:g} is not a tolerance (> 0, 0 = default, -1 = none)")
    return float(default)


def goal_tolerances(
    defaults: Tolerances,
    joints: Sequence[str],
    path: Sequence[tuple[str, float, float, float]],
    goal: Sequence[tuple[str, float, float, float]],
    goal_time: float,
) -> Tolerances:
    """The tolerances of one goal: ``path``/``goal`` as (joint, position, velocity, acceleration) entries and
    ``goal_time`` [s] over ``defaults``. An invalid entry gives the defaults with a note saying why."""
    out = Tolerances(defaults.path.copy(), defaults.goal.copy(), defaults.goal_time)
    index = {name: i for i, name in enumerate(joints)}
    try:
        out.goal_time = resolve(defaults.goal_time, goal_time)
        for kind, entries, table, base in (
            ("path_tolerance", path, out.path, defaults.path),
            ("goal_tolerance", goal, out.goal, defaults.goal),
        ):
            for name, *values in entries:
                if name not in index:
                    raise ValueError(f"{kind} names joint {name!r}, not one of {', '.join(joints)}")
                i = index[name]
                for c, value in enumerate(values):
                    try:
                        table[i, c] = resolve(base[i, c], value)
                    except ValueError as e:
                        raise ValueError(f"{kind} {COMPONENTS[c]} of {name}: {e}") from None
    except ValueError as e:
        return Tolerances(defaults.path.copy(), defaults.goal.copy(), defaults.goal_time, [f"{e}; using defaults"])
    return out


def violations(error: np.ndarray, tolerance: np.ndarray, joints: Sequence[str]) -> list[str]:
    """``error`` (3, J): position / velocity / acceleration error (desired - actual); one line per component
    beyond its enforced ``tolerance`` (J, 3), naming the joint, the error and the tolerance. Empty: within."""
    err = np.abs(np.asarray(error, dtype=np.float64)).T  # (J, 3)
    bad = (tolerance > 0.0) & (err > tolerance)  # NaN: a joint not read, which no accepted goal names
    return [
        f"{joints[j]} {COMPONENTS[c]} error {err[j, c]:.4g} {UNITS[c]} > tolerance {tolerance[j, c]:.4g}"
        for j, c in zip(*np.nonzero(bad))
    ]


__all__ = ["COMPONENTS", "ERASE", "Tolerances", "goal_tolerances", "resolve", "violations"]
