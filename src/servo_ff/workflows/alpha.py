"""Fit α̂ (Schwarz & Behnke, Compliant Robot Behavior using Servo Actuator Models identified by Iterative Learning
Control, Eq. 19, 22–27) from any source — an ILC record, a bench log, a rosbag2 recording — and write the result
as an α file the feed-forward node reads. ``servo-ff fit`` and ``servo_fit_node`` both call :func:`fit_alpha_source`.

τ_o comes, in this order of preference, from a URDF joint (fixed-base inverse dynamics), or the pendulum bench an
ILC record or a log describes. kp comes from the user when given, else from the source (an ILC record's, a bag's
recorded ``*p_gains``); :attr:`AlphaResult.kp_source` says which. Every fit passes the quality gate
(:mod:`servo_ff.identification.alpha_gate`) before anything is written or set.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..identification.alpha_data import (
    AlphaData,
    TorqueFn,
    data_from_ilc,
    data_from_log,
    fit_alpha_data,
    pendulum_torque,
)
from ..identification.alpha_fit import AlphaFit
from ..identification.alpha_gate import FitGate, check_excitation, check_fit
from ..io.ilc_record import ILCRecord, load_ilc_record
from ..io.logs import read_log
from .fit_options import bag_options


@dataclass(frozen=True)
class AlphaResult:
    joint: str
    fit: AlphaFit
    data: AlphaData
    kp_source: str = ""  # where kp came from: given, ILC record, log, a bag's recorded gains topic
    supply_source: str = ""  # where U_bat came from: given, ILC record, log, a bag's supply topic or log_meta
    ilc_stopped: str = ""  # why the ILC run of the record stopped early ("": it ended normally, or not a record)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready summary (α̂, q̇_s, δ, t_d, rms, condition, samples, kp and its source, mean supply and its
        source, source; an ILC record's ``ilc_stopped`` reason when its run stopped early)."""
        return {
            "joint": self.joint,
            "source": self.data.source,
            **self.fit.as_dict(),
            "kp": self.data.kp,
            "kp_source": self.kp_source,
            "u_bat": float(np.mean(self.data.u_bat)),
            "u_bat_source": self.supply_source,
            **({"ilc_stopped": self.ilc_stopped} if self.ilc_stopped else {}),
        }

    def stopped_line(self) -> str:
        """One warning line when the fitted ILC record comes from a run that stopped early, else ""."""
        if not self.ilc_stopped:
            return ""
        return f"{self.data.source}: its ILC run stopped early ({self.ilc_stopped}): fitted on the trials it kept"


def urdf_joint_torque(urdf: str | Path, joint: str) -> TorqueFn:
    """τ_o of ``joint`` moving alone (the others at 0) by fixed-base RNEA of ``urdf``, per sample."""
    from ..dynamics.inverse_dynamics import fixed_base_torques
    from ..dynamics.robot import load_robot

    robot = load_robot(urdf)
    if joint not in robot.joint_names:
        raise ValueError(f"{urdf}: no joint {joint!r}; joints: {', '.join(robot.joint_names)}")
    j, n = robot.joint_names.index(joint), robot.n_joints
    model, data = robot.fixed, robot.fixed.createData()

    def torque(q: np.ndarray, dq: np.ndarray, ddq: np.ndarray) -> np.ndarray:
        Q, V, A = (np.zeros((len(q), n)) for _ in range(3))
        Q[:, j], V[:, j], A[:, j] = q, dq, ddq
        return np.array(
            [fixed_base_torques(model, data, robot.configuration(Q[k]), V[k], A[k])[j] for k in range(len(q))]
        )

    return torque


def data_from_record(
    rec: ILCRecord, iteration: int = -1, kp: float | None = None, source: str = "ILC record"
) -> AlphaData:
    kp = rec.kp if kp is None else kp
    return data_from_ilc(rec.commands, rec.measured, rec.errors, rec.supply, kp, rec.dt, iteration, source)


def is_ilc_record(path: str | Path) -> bool:
    return Path(path).suffix.lower() == ".npz"


def fit_alpha_source(
    path: str | Path,
    *,
    joint: str | None = None,
    urdf: str | Path | None = None,
    iteration: int = -1,
    kp: float | None = None,
    dt: float = 0.005,
    goal_topic: str | None = None,
    joints: tuple[str, ...] | list[str] | None = None,
    vin: float | None = None,
    mass: float | None = None,
    length: float | None = None,
    arm_mass: float | None = None,
    topics: dict[str, str | None] | None = None,
    gate: FitGate | None = None,
    **fit_options: Any,
) -> AlphaResult:
    """α̂ from the ILC record (``.npz``), bench log (``.json``/``.csv``) or rosbag2 at ``path``.

    ``joint`` selects the joint of a bag and must match an ILC record's joint; ``joints`` is the order of a bag's
    Float64MultiArray goals (a forward command controller's ``joints``); ``urdf`` gives τ_o by inverse dynamics
    (required when the source carries no load of its own). The bench (``kp``, ``vin``, pendulum ``mass``,
    ``length``, ``arm_mass``) given here overrides the source's own; a bag needs none of it in the bag.
    ``topics``: a bag's ``namespace``, ``joint_states_topic``, ``goal_topic``, ``p_gains_topic``,
    ``supply_topic``, ``enable_topic`` (:data:`~servo_ff.workflows.fit_options.TOPIC_OPTIONS`; None: found by
    type). ``gate``: the quality gate (None: its defaults); FitRefused names the failing figure. ``fit_options`` go
    to ``fit_alpha``."""
    torque: TorqueFn | np.ndarray | None = None
    stopped = ""
    if kp is not None and not (math.isfinite(kp) and kp > 0):  # before: 0 read as "not given" (the record's kp)
        raise ValueError(f"kp must be finite and > 0, got {kp}")
    if iteration < -1:  # -1: the trial with the lowest windowed error; before, any negative number meant it
        raise ValueError(f"iteration must be >= 0 (a trial) or -1 (the best), got {iteration}")
    if is_ilc_record(path):
        rec = load_ilc_record(path)
        if joint and rec.joint != joint:
            raise ValueError(f"{path}: the ILC record is for joint {rec.joint!r}, not {joint!r}")
        joint, stopped = rec.joint, rec.stopped  # before: a diverged or interrupted run's record fitted unsaid
        data = data_from_record(rec, iteration, kp, f"ILC record {path}")
        kp_source = "given" if kp is not None else "ILC record"
        supply_source = "ILC record"
        if mass is not None and length is not None:  # the bench the record was taken on, given (before: ignored)
            if not all(math.isfinite(v) and v > 0 for v in (mass, length)) or not (arm_mass or 0.0) >= 0:
                raise ValueError(f"mass and length must be finite and > 0 (arm mass >= 0), got {mass}, {length}")
            torque = pendulum_torque(mass, length, arm_mass or 0.0)
        elif rec.pendulum is not None:
            torque = pendulum_torque(*rec.pendulum)
    else:
        bench = {
            k: v
            for k, v in (("kp", kp), ("vin", vin), ("mass", mass), ("length", length), ("arm_mass", arm_mass))
            if v is not None
        }
        bag = bag_options({**(topics or {}), **({"goal_topic": goal_topic} if goal_topic else {})}, joint, joints)
        log = read_log(path, dt=dt, meta=bench or None, **bag)  # the bag options: used for a rosbag2 only
        joint = joint or log.joint or "joint"  # a bag's own joint: the α file names it (the node reads it)
        data = data_from_log(log, kp)
        kp_source = "given" if kp is not None else (log.kp_source or "log")
        supply_source = log.vin_source or ("given" if vin is not None else "log")
        if log.length > 0 and (log.mass > 0 or log.arm_mass > 0):
            torque = pendulum_torque(log.mass, log.length, log.arm_mass)
    if urdf:
        torque = urdf_joint_torque(urdf, joint)
    if torque is None:
        raise ValueError(
            f"{path}: no load known for τ_o (no pendulum in the record or log): give a URDF "
            "(--urdf; fit node: urdf_path) or the pendulum's mass and length (--mass and --length)"
        )
    res = gated_fit(joint, data, torque, gate, kp_source, supply_source, **fit_options)
    return replace(res, ilc_stopped=stopped) if stopped else res


def gated_fit(
    joint: str,
    data: AlphaData,
    torque: TorqueFn | np.ndarray,
    gate: FitGate | None,
    kp_source: str,
    supply_source: str = "",
    **fit_options,
) -> AlphaResult:
    """α̂ of ``data`` through the quality gate: excitation before the fit, α̂ ranges, rms and conditioning after
    (:class:`~servo_ff.identification.alpha_gate.FitRefused` naming the figure and its threshold)."""
    gate = gate or FitGate()
    check_excitation(data, gate, bool(fit_options.get("with_inertia")))
    fit = fit_alpha_data(data, torque, **fit_options)
    check_fit(fit, gate, data.source)
    return AlphaResult(joint, fit, data, kp_source, supply_source)


def save_alpha_result(
    result: AlphaResult,
    path: str | Path,
    joint_names: tuple[str, ...] | None = None,
    info: dict[str, Any] | None = None,
    as_default: bool = False,
) -> Path:
    """Write the fitted α̂ as an α file (``servo_ff.dynamics.alpha`` format) for ``result.joint`` (or for every
    joint in ``joint_names``; ``as_default``: as the file's ``default`` entry, which every joint of any robot
    reads), with how it was fitted (and ``info``) under ``fit``; ValueError (nothing written) when α̂, q̇_s or δ
    is not finite."""
    from ..dynamics.alpha import AlphaTable, save_alpha

    f = result.fit
    if not (np.isfinite(f.alpha).all() and math.isfinite(f.dq_s) and math.isfinite(f.delta)):
        raise ValueError(f"{path}: α̂ {list(f.alpha)}, q̇_s {f.dq_s}, δ {f.delta} not all finite; nothing written")
    names = tuple(joint_names) if joint_names else (result.joint,)
    n = len(names)
    alpha = np.zeros(5)
    alpha[: len(f.alpha)] = f.alpha  # α̂4 = 0 when it was not fitted
    table = AlphaTable(names, np.tile(alpha, (n, 1)), np.full(n, f.dq_s), np.full(n, f.delta))
    fit_info = {k: v for k, v in result.as_dict().items() if k not in ("alpha", "dq_s", "delta")}
    return save_alpha(table, path, {**fit_info, **(info or {})}, as_default=as_default)


__all__ = ["AlphaResult", "gated_fit", "urdf_joint_torque", "data_from_record", "fit_alpha_source", "save_alpha_result"]
