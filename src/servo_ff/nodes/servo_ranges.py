"""The servo type's ranges, checked the same way by ``servo_sim_node`` and ``servo_hardware_node`` (one check, from
the type's control table, :mod:`servo_ff.bus.control_table`): ``kp`` within its P gain register and the joint
limits within its position range (0–4095 counts: [−π, 3.14006] rad on a 4096-count servo). A parameter set the sim
runs, the hardware runs too. Limits not given are that range (the interface's default ±π is wider)."""

from __future__ import annotations

from typing import Any

import numpy as np
from rclpy.parameter import Parameter

from servo_ff.bus import control_table as ct
from servo_ff.bus.default_gain import default_kp
from servo_ff.ros.common import per_joint


def servo_table(servo: str, required: bool = False) -> ct.ControlTable | None:
    """The control table ``servo_hardware_node`` runs for its ``servo`` parameter (:func:`ct.control_table`): the
    one lookup of both nodes, the sim's by the same ``servo`` name (``mx106-p1`` is the MX-106(1.0), ``xl330-m288``
    the XL330-M288-T; never the preset a sim resolves it to). A name without a table (``xl320``, ``mg995``): None,
    nothing checked; with ``required`` (the hardware node: nothing to drive) the KeyError naming the valid ones."""
    try:
        return ct.control_table(servo)
    except KeyError:
        if required:
            raise
        return None


def kp_range_refusal(kp: np.ndarray, joints, table: ct.ControlTable) -> str | None:
    """Why per-joint ``kp`` (firmware-law gain) cannot be written to ``table``'s P gain register (its rounded register
    value outside ``p_gain_min``..``p_gain_max``: the AX-12A's compliance slope 1024 / P needs P ≥ 1), naming the
    first joint out of range, its value and the range; None when all fit."""
    reg = ct.kp_to_p_gain(kp, table)
    bad = (reg < table.p_gain_min) | (reg > table.p_gain_max)
    if not bad.any():
        return None
    k, per = int(np.argmax(bad)), table.p_gain_per_kp
    lo, hi = table.p_gain_min, table.p_gain_max
    return (
        f"kp of {joints[k]} = {kp[k]:g} (P gain register {int(reg[k])}) is outside the {table.name} range: "
        f"kp {lo / per:g}..{hi / per:g} (register {lo}..{hi})"
    )


def limits_range_refusal(lo: np.ndarray, hi: np.ndarray, joints, table: ct.ControlTable) -> str | None:
    """Why joint limits [``lo``, ``hi``] [rad] exceed ``table``'s position range (a bus refuses them at open, a
    goal beyond it cannot be written), naming the first joint; None when all fit."""
    rlo, rhi = ct.position_range_rad(table, table.center)
    bad = (lo < rlo) | (hi > rhi)
    if not bad.any():
        return None
    k = int(np.argmax(bad))
    return (
        f"joint limits of {joints[k]} [{lo[k]:.5f}, {hi[k]:.5f}] rad exceed the {table.name} position range "
        f"[{rlo:.5f}, {rhi:.5f}] rad"
    )


def range_refusal(values: dict[str, Any], table: ct.ControlTable | None, limits: bool = True) -> str | None:
    """``kp`` and (``limits``) ``position_min``/``position_max`` of a parameter set against ``table`` (None: no
    table, nothing checked): the first refusal, or None."""
    if table is None:
        return None
    joints = values["joints"]
    n = len(joints)
    refusal = kp_range_refusal(per_joint(values["kp"], n, "kp"), joints, table)
    if refusal or not limits:
        return refusal
    lo, hi = per_joint(values["position_min"], n, "position_min"), per_joint(values["position_max"], n, "position_max")
    return limits_range_refusal(lo, hi, joints, table)


def default_limits_from_table(node, table: ct.ControlTable | None) -> None:
    """``position_min``/``position_max`` not given to ``node``: ``table``'s position range, one log line (the
    interface's default ±π is wider than a 4096-count servo's 0–4095)."""
    if table is None:
        return
    given = getattr(node, "_parameter_overrides", {}) or {}
    lo, hi = ct.position_range_rad(table, table.center)
    missing = [(k, x) for k, x in (("position_min", lo), ("position_max", hi)) if k not in given]
    if missing:
        node.set_parameters([Parameter(k, Parameter.Type.DOUBLE_ARRAY, [x]) for k, x in missing])
        node.get_logger().info(
            ", ".join(f"{k} not set: {x:.5f} rad" for k, x in missing) + f" (the {table.name} position range)"
        )


def default_kp_of_servo(node, servo: str) -> None:
    """``kp`` not given to ``node`` (the hardware's): the servo's default gain
    (:func:`servo_ff.bus.default_gain.default_kp`, the sim's rule: its preset's firmware kp, else the table's factory
    P gain), one log line naming its source."""
    if "kp" in (getattr(node, "_parameter_overrides", {}) or {}):
        return
    kp, source = default_kp(servo)
    node.set_parameters([Parameter("kp", Parameter.Type.DOUBLE_ARRAY, [kp])])
    node.get_logger().info(f"kp not set: {kp:g} ({source})")
