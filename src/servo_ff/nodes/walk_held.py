"""``servo_walk_node``'s points' q̇ and q̈ held at the feed-forward node's bounds
(:func:`servo_ff.interpolation.held_knot_derivatives`: a point's whole q̇, or q̈, scaled by one factor), each value
beyond counted on the node (``vel_held``, ``acc_held``) and said (throttled)."""

from __future__ import annotations

from typing import Any

import numpy as np

from servo_ff.interpolation import held_knot_derivatives


def held_derivatives(node: Any, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(q̇ [rad/s], q̈ [rad/s²]) of the points of ``q`` (points + 4, joints) [rad] on the walk node ``node``'s grid,
    held within its ``vmax``, ``amax``."""
    dq, ddq, v_held, a_held = held_knot_derivatives(q, node.dt, node.vmax, node.amax)
    if v_held.any():
        node.vel_held += int(v_held.sum())
        why = "the plan's five-point differences overshoot it"
        _say(node, "q̇", v_held, "the URDF velocity limit", why, node.vel_held)
    if a_held.any():
        node.acc_held += int(a_held.sum())
        bound = f"max_acceleration {node.table['max_acceleration']:g} rad/s² (the feed-forward node's bound)"
        _say(node, "q̈", a_held, bound, "the plan jumps there", node.acc_held)
    return dq, ddq


def _say(node: Any, what: str, held: np.ndarray, bound: str, why: str, total: int) -> None:
    """Log (throttled) that the points where the joints of ``held`` (per joint) went beyond ``bound`` had their
    ``what`` scaled as a whole to it; ``total``: values beyond so far."""
    joints = [j for j, n in zip(node.joints, held, strict=True) if n]
    node.get_logger().warning(
        f"{what} of the points where {', '.join(joints)} went beyond {bound} scaled as a whole to it ({why}; "
        f"{total} value(s) beyond so far)",
        throttle_duration_sec=5.0,
    )
