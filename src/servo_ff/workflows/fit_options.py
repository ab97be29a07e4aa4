"""The one description of the replay topics and the fit-quality gate, for both front-ends: the fit node declares a
parameter per row (``nodes/fit_node.py``), ``servo-ff fit`` and ``servo-ff identify`` a flag per row
(``--joint-states-topic``, …)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from ..identification.alpha_gate import GATE_DOCS, FitGate


@dataclass(frozen=True)
class Option:
    name: str  # parameter name; the flag is --name with - for _
    default: Any
    description: str
    unit: str = ""
    lo: float | None = None
    hi: float | None = None

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


#: Topics of a bag (source bag). Relative names are resolved under ``namespace``; empty: found by type.
TOPIC_OPTIONS: tuple[Option, ...] = (
    Option("namespace", "", "namespace of the recorded topics (e.g. /robot1): relative topic names are under it"),
    Option("joint_states_topic", "joint_states", "sensor_msgs/JointState topic of the bag"),
    Option(
        "goal_topic",
        "",
        "goal topic of the bag: Float64MultiArray, JointState or JointTrajectory "
        "(empty: the one command-like topic of a goal type)",
    ),
    Option(
        "p_gains_topic",
        "",
        "Float64MultiArray of the servo P gains (empty: the one topic named …p_gains, …p_gain or …kp, if any)",
    ),
    Option(
        "supply_topic",
        "",
        "sensor_msgs/BatteryState supply topic (empty: the servo node's servo_supply, else the one BatteryState "
        "topic, said; a given vin wins)",
    ),
    Option(
        "enable_topic",
        "",
        "std_msgs/Bool torque enable topic (empty: the one Bool topic named …torque… or …enable…, if any; "
        "none: torque on throughout)",
    ),
)

GATE_OPTIONS: tuple[Option, ...] = tuple(
    Option(f.name, float(getattr(FitGate(), f.name)), GATE_DOCS[f.name][1], GATE_DOCS[f.name][0], lo=0.0)
    for f in fields(FitGate)
)


def topic_values(values: dict[str, Any]) -> dict[str, str | None]:
    """The bag reader's topic arguments from option values (empty strings: None, found by type)."""
    return {o.name: (values.get(o.name) or None) for o in TOPIC_OPTIONS}


def bag_options(
    topics: dict[str, Any] | None, joint: str | None = None, joints: list[str] | tuple[str, ...] | None = None
) -> dict[str, Any]:
    """``read_rosbag``'s keyword arguments from topic option values (:func:`topic_values`), the bag's ``joint`` and
    the order ``joints`` of its Float64MultiArray goals and gains; what is not given is left out (found by type).
    Both replaying front-ends (``servo-ff fit`` / the fit node, ``servo-ff identify``) read bags through it."""
    t = {k: v for k, v in (topics or {}).items() if v}
    bag = {
        "joint": joint,
        "goal_topic": t.get("goal_topic"),
        "goal_joints": list(joints) if joints else None,
        "namespace": t.get("namespace"),
        "joint_states_topic": t.get("joint_states_topic"),
        "gains_topic": t.get("p_gains_topic"),
        "voltage_topic": t.get("supply_topic"),
        "enable_topic": t.get("enable_topic"),
    }
    return {k: v for k, v in bag.items() if v}


def gate_from(values: dict[str, Any]) -> FitGate:
    """The gate from option values (missing or None: the default)."""
    return FitGate(**{o.name: float(values[o.name]) for o in GATE_OPTIONS if values.get(o.name) is not None})


__all__ = ["Option", "TOPIC_OPTIONS", "GATE_OPTIONS", "topic_values", "bag_options", "gate_from"]
