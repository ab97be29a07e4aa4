"""The robot part of the walking mission's graph (:func:`.op3_mission.op3_nodes`): each node's parameters that
describe the robot, as opposed to the mission's own (lockstep, gains, stamped goals), and the walk's step times.

:func:`op3_graph` is the OP3's (urdf/op3.urdf, config/servos_op3.yaml, α̂ config/alpha_op3.yaml); :func:`bringup_graph`
reads another robot's from its bring-up YAML, as ``servo-ff up <bringup>`` gives them (:func:`.table.plan`: the
YAML's node sections with the arguments' overrides, α̂ from the sim's servo file as :mod:`.servo_alpha` does).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from servo_ff.io.paths import share_file


@dataclass(frozen=True)
class RobotGraph:
    """Base parameters of the sim, feed-forward and walk nodes of one robot, and its knee joints (left, right)."""

    name: str
    sim: dict[str, Any] = field(default_factory=dict)
    ff: dict[str, Any] = field(default_factory=dict)
    walk: dict[str, Any] = field(default_factory=dict)
    knees: tuple[str, str] = ("l_knee", "r_knee")


def op3_graph(gait: str = "placo") -> RobotGraph:
    """The ROBOTIS OP3's (the mission's default, unchanged since issue 21); ``gait`` "cpg": the walk node on the
    authors' CPG scaled to the OP3 (``gait: op3_cpg``, in the node), as ``servo-ff up sim_op3 gait:=cpg``."""
    if gait not in ("placo", "cpg"):
        raise ValueError(f"op3 graph: gait must be 'placo' or 'cpg', got {gait!r}")
    urdf = str(share_file("urdf", "op3.urdf"))
    sim = {
        "urdf_path": urdf,
        "servo_config": str(share_file("config", "servos_op3.yaml")),
        "floating_base": True,
        "rate_hz": 125.0,
        "physics_dt": 0.001,
        "counts_per_rev": 4096,
        "latency": 1,
        "position_min": [-3.0],
        "position_max": [3.0],
        "support_topic": "contact_support_coefficient",
    }
    ff = {
        "urdf_path": urdf,
        "mode": "floating",
        "left_foot": "l_sole",
        "right_foot": "r_sole",
        "alpha_file": str(share_file("config", "alpha_op3.yaml")),  # current-law α̂ (dynamics/alpha_current)
    }
    walk = {"urdf_path": urdf, "start_delay": 0.5, "approach_time": 2.0, "engine_process": True}
    if gait == "cpg":
        walk.update(gait="op3_cpg", engine_process=False)
    return RobotGraph("op3", sim, ff, walk)


def bringup_graph(bringup: str, knees: tuple[str, str], **args: str) -> RobotGraph:
    """The graph's base parameters of bring-up ``bringup`` (``config/<bringup>.yaml``) with its arguments ``args``
    (e.g. ``gait="cpg"``): each node's YAML section (``/**`` then its own) under the arguments' overrides; the
    feed-forward node's ``urdf_path`` is the description node's (the robot_description it reads under ``up``)."""
    from .node_launch import config_dir
    from .servo_alpha import node_params
    from .table import plan

    nodes = {n.name: {**node_params(config_dir() / n.config, n.name), **n.overrides} for n in plan(bringup, **args)}
    missing = [n for n in ("servo_sim", "servo_feedforward", "servo_walk", "servo_state_publisher") if n not in nodes]
    if missing:
        raise ValueError(f"bring-up {bringup}: no {', '.join(missing)} node: not a walking bring-up")
    ff = {"urdf_path": nodes["servo_state_publisher"]["urdf_path"], **nodes["servo_feedforward"]}
    return RobotGraph(bringup, nodes["servo_sim"], ff, nodes["servo_walk"], knees)


def step_times(engine, vx: float, n_steps: int, obstacle_step: int = 0) -> tuple[np.ndarray, float]:
    """([s from the walk start] the end of each of the first ``n_steps`` steps, [s] the middle of step
    ``obstacle_step``'s swing) of the walk node's ``engine`` under a constant ``vx`` [m/s]: placo's from its timing
    (the first double support, then one step period per step), the CPG's (NimbRo-OP's or OP3's) from its state machine
    (:func:`.nimbro_cpg_plan.gait_states`: the ticks the engine makes; its swing lasts the whole step)."""
    p = engine.params
    if hasattr(p, "step_windows"):  # placo (dynamics.walk_pattern.WalkParams)
        return p.step_windows(n_steps, obstacle_step)
    from servo_ff.dynamics.nimbro_cpg_plan import gait_states

    n = max(n_steps, obstacle_step + 1)
    starts = [s for s, _ in gait_states(engine.gcv(vx), n + 1, p).steps][:n]
    if len(starts) < n:
        raise ValueError(f"the CPG at {vx:g} m/s plans {len(starts)} steps, not {n}")
    return np.array(starts[:n_steps]) + p.step_period, starts[obstacle_step] + 0.5 * p.step_period


def cpg_stop(engine, vx: float, n_steps: int, lead: float) -> tuple[float, float]:
    """([s from the walk start] when to publish the halt, [s] when the run ends) for the walk node's CPG ``engine``
    to walk the ROS-free plan's ``n_steps`` steps at ``vx`` [m/s] and its stop (:func:`.nimbro_cpg_plan.gait_states`:
    the command withdrawn once step ``n_steps + 1`` has begun, latched at the tick after its start; the plan ending
    0.5 s after its halt): the middle of step ``n_steps`` less ``lead`` [s], how far ahead of the sim's clock the
    engine ticks, so that the engine latches 0 at the same phase centre (its halt request: ``gait_tick``'s None, as
    the plan's) and halts at the same tick; the end is the plan's."""
    if not hasattr(engine, "gcv"):
        raise ValueError(f"withdraw: a CPG engine only (NimbRo-OP's or OP3's), not {type(engine).__name__}")
    from servo_ff.dynamics.nimbro_cpg_plan import gait_states

    p = engine.params
    s = gait_states(engine.gcv(vx), n_steps, p)
    if len(s.steps) < n_steps:
        raise ValueError(f"the CPG at {vx:g} m/s halts before step {n_steps}")
    return s.steps[n_steps - 1][0] + 0.5 * p.step_period - lead, float(s.t[-1])


__all__ = ["RobotGraph", "bringup_graph", "cpg_stop", "op3_graph", "step_times"]
