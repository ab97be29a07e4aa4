"""Velocity and effort limits of a position goal on the simulated servos (ROS-free): what the JointState command's
``velocity`` [rad/s] / ``effort`` [N·m] set on real servos (``servo_ff.bus.command_limits``), as the
servo model's own firmware limits in the packed parameter rows (:mod:`.params`):

* velocity → ``slots.GVMAX``, the firmware goal-velocity limit (the internal target slews toward the goal no faster,
  :func:`.motor.goal_slew`): as Feetech's Goal Velocity or a Dynamixel Profile Velocity without acceleration;
* effort → ``slots.IMAX``, the current limit (:func:`.motor.current_limited_duty` / the current law), τ/kt: as a
  Dynamixel Goal Current in current-based position mode.

A limit is a magnitude, never above the servo's own (its row at start-up); 0 lifts it (back to the servo's own).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from . import slots


def apply_motion_limits(
    rows: np.ndarray,
    own: np.ndarray,
    idx: Sequence[int],
    velocity: Sequence[float] = (),
    effort: Sequence[float] = (),
) -> None:
    """Write the limits of servos ``idx`` into the packed ``rows`` (in place; ``own``: the rows without limits).
    ``velocity`` / ``effort``: one per index, or empty (not given). ValueError naming the field for a non-finite
    value, before anything is written."""
    idx = np.asarray(idx, dtype=int)
    for name, values in (("velocity", velocity), ("effort", effort)):
        v = np.asarray(values, dtype=np.float64)
        if v.size and not np.isfinite(v).all():
            raise ValueError(f"{name} {v.tolist()} is not finite")
    if len(velocity):
        v = np.abs(np.asarray(velocity, dtype=np.float64))
        rows[idx, slots.GVMAX] = np.where(v > 0, np.minimum(v, own[idx, slots.GVMAX]), own[idx, slots.GVMAX])
    if len(effort):
        i_max = np.abs(np.asarray(effort, dtype=np.float64)) / own[idx, slots.KT]
        rows[idx, slots.IMAX] = np.where(i_max > 0, np.minimum(i_max, own[idx, slots.IMAX]), own[idx, slots.IMAX])


__all__ = ["apply_motion_limits"]
