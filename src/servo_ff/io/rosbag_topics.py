"""Which topics of a rosbag2 are read (used by :mod:`.rosbag`): the one an option names, else the one of its type
whose last name says what it is, under the namespace — goals ``…command…``, ``…goal…``, ``…reference…``,
``…trajectory…``; torque enable ``…torque…``, ``…enable…`` (a servo node's ``<prefix>/torque_enabled``; among
several, the one beside the goal topic); the servo P gain ``…p_gains``, ``…p_gain``, ``…kp``; the supply the servo
node's own ``<namespace>/servo_supply``, else the one BatteryState (then said: :mod:`.rosbag_supply`).
Another topic of the type is never taken for what its name does not say (a ``/foot_contact`` Bool is no torque
enable, ``/servo/d_gains`` no P gain). Each refusal names the bag, the topics and the option that chooses."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping

from .servo_log import LogError

JOINT_STATE = "sensor_msgs/msg/JointState"
FLOAT_ARRAY = "std_msgs/msg/Float64MultiArray"
TRAJECTORY = "trajectory_msgs/msg/JointTrajectory"
BATTERY = "sensor_msgs/msg/BatteryState"
BOOL = "std_msgs/msg/Bool"
STRING = "std_msgs/msg/String"
GOAL_TYPES = (FLOAT_ARRAY, JOINT_STATE, TRAJECTORY)
#: the servo node's supply topic, relative to its namespace (``ros.common.TOPIC_SUPPLY``)
SERVO_SUPPLY = "servo_supply"
_log = logging.getLogger(__name__)

#: The option (fit node parameter, ``servo-ff fit`` flag) that names each topic: ``workflows/fit_options.py``.
OPTION = {
    "js": "joint_states_topic",
    "goal": "goal_topic",
    "volts": "supply_topic",
    "enable": "enable_topic",
    "gains": "p_gains_topic",
}


def option_hint(name: str) -> str:
    """``servo-ff fit or identify --goal-topic, fit node parameter goal_topic``: where a user gives option
    ``name`` (both commands take every topic flag)."""
    return f"servo-ff fit or identify --{name.replace('_', '-')}, fit node parameter {name}"


#: Where a user names the joint of a bag: ``servo-ff identify`` takes it too.
JOINT_HINT = "servo-ff fit or identify --joint, fit node parameter joint"


def _last(topic: str) -> str:
    return topic.rstrip("/").rsplit("/", 1)[-1].lower()


def is_gains(topic: str) -> bool:
    """Any gain topic (``…gains``, ``…gain``, ``…kp``): never a goal."""
    return "gain" in _last(topic) or is_p_gain(topic)


def is_p_gain(topic: str) -> bool:
    """The servo P gain: ``p_gains``, ``p_gain``, ``pgains``, ``position_p_gain``, ``kp``, ``servo_kp`` — not
    ``d_gains``, ``i_gains`` or a bare ``gains``."""
    return re.search(r"(^|_)(p_?gains?|kps?)$", _last(topic)) is not None


def is_enable(topic: str) -> bool:
    """A torque enable topic: its last name mentions torque or enable (``torque_enable``, ``motors_enabled``)."""
    last = _last(topic)
    return "torque" in last or "enable" in last


def is_command_like(topic: str) -> bool:
    """A topic that carries goals: its last name segment mentions command(s), goal, reference or trajectory
    (``/servo/commands``, ``/<controller>/commands``, ``servo/joint_command``, ``/<controller>/joint_trajectory``,
    ``/goal_position``), never gains (``/servo/p_gains`` is a Float64MultiArray too)."""
    last = _last(topic)
    return not is_gains(topic) and any(w in last for w in ("command", "goal", "reference", "trajectory"))


def pick_topic(
    src: str,
    topics: Mapping[str, str],
    wanted: str | None,
    types: tuple[str, ...],
    role: str,
    key: str,
    exclude: tuple[str, ...] = (),
    required: bool = True,
    counts: Mapping[str, int] | None = None,
    like: Callable[[str], bool] | None = None,
) -> str | None:
    """The topic option ``OPTION[key]`` names (``wanted``), else the one candidate of ``types`` (``like`` its
    name); several candidates are refused naming them and the option."""
    have = ", ".join(f"{t} [{ty}]" for t, ty in sorted(topics.items())) or "none"
    hint = option_hint(OPTION[key])
    if wanted is not None:
        if wanted not in topics:
            raise LogError(f"{src}: {role} topic {wanted!r} is not in the bag (topics: {have})")
        if topics[wanted] not in types:
            raise LogError(
                f"{src}: {role} topic {wanted!r} has type {topics[wanted]}, expected {' or '.join(types)} ({hint})"
            )
        return wanted
    cands = [t for t, ty in sorted(topics.items()) if ty in types and t not in exclude and (like is None or like(t))]
    if counts is not None and len(cands) > 1:  # a topic nobody published on is recorded without messages
        cands = [t for t in cands if counts.get(t, 0) > 0] or cands
    if not cands:
        if required:
            what = "command-like " if like is not None else ""
            raise LogError(
                f"{src}: no {what}{role} topic ({' or '.join(types)}) in the bag (topics: {have}); name it ({hint})"
            )
        return None
    if len(cands) > 1:
        raise LogError(f"{src}: several candidate {role} topics ({', '.join(cands)}); name one ({hint})")
    return cands[0]


def _parent(topic: str) -> str:
    return topic.rstrip("/").rsplit("/", 1)[0]


def _supply_like(local: Mapping[str, str], ns: str) -> Callable[[str], bool] | None:
    """How the supply topic is found: the servo node's own ``<ns>/servo_supply`` when the bag has it (a robot's main
    pack on ``/battery_state`` beside it is no servo supply), else any BatteryState (None)."""
    own = f"{ns}/{SERVO_SUPPLY}"
    return (lambda t: t == own) if local.get(own) == BATTERY else None


def _enable_like(local: Mapping[str, str], goal: str | None) -> Callable[[str], bool]:
    """How a torque enable topic is found by name: :func:`is_enable`; among several (a bag of several servo nodes,
    each with its ``<prefix>/torque_enabled``), the one beside the goal topic (``/legs/commands`` →
    ``/legs/torque_enabled``) when exactly one is."""
    cands = [t for t, ty in local.items() if ty == BOOL and is_enable(t)]
    beside = [t for t in cands if goal is not None and _parent(t) == _parent(goal)]
    if len(cands) > 1 and len(beside) == 1:
        return lambda t: t == beside[0]
    return is_enable


def pick_topics(
    src: str,
    topics: Mapping[str, str],
    counts: Mapping[str, int],
    ns: str,
    wanted: Mapping[str, str | None],
    kp_given: bool = False,
) -> dict[str, str | None]:
    """The topic of each stream (``js``, ``goal``, ``volts``, ``enable``, ``gains``; None: not recorded) from the
    named ones (``wanted``) and, for the others, the candidates under ``ns``. ``kp_given``: several P gain topics
    are then not refused (none is read)."""
    js = wanted["js"]
    if js not in topics:  # before: the topics listed, not what to do
        found = sorted(t for t, ty in topics.items() if ty == JOINT_STATE)
        which = f"its {JOINT_STATE} topic{'s' if len(found) > 1 else ''}: {', '.join(found)}" if found else ""
        raise LogError(
            f"{src}: topic {js!r} is missing (topics: {', '.join(sorted(topics)) or 'none'}); "
            + (f"name {which} ({option_hint(OPTION['js'])})" if found else f"the bag records no {JOINT_STATE}")
        )
    if topics[js] != JOINT_STATE:
        raise LogError(f"{src}: topic {js} has type {topics[js]}, expected {JOINT_STATE} ({option_hint(OPTION['js'])})")
    if wanted["goal"] == js:
        raise LogError(
            f"{src}: goal topic {js} is the joint_states topic: the goals are what was commanded "
            f"(e.g. /servo/joint_command), not the measured states ({option_hint(OPTION['goal'])})"
        )
    local = {t: ty for t, ty in topics.items() if not ns or t.startswith(ns + "/")}  # found by type: under ns

    def pick(key: str, types: tuple[str, ...], role: str, **kw) -> str | None:
        if wanted[key] is not None:
            return pick_topic(src, topics, wanted[key], types, role, key, **kw)
        return pick_topic(src, local, None, types, role, key, counts=counts, **kw)

    goal = pick("goal", GOAL_TYPES, "goal", exclude=(js,), like=is_command_like)
    volts = pick("volts", (BATTERY,), "supply voltage", required=False, like=_supply_like(local, ns))
    enable = pick("enable", (BOOL,), "torque enable", required=False, like=_enable_like(local, goal))
    if wanted["enable"] is None:
        other = sorted(t for t, ty in local.items() if ty == BOOL and t != enable)
        if enable is not None:
            _log.info("%s: torque enable from %s (%s)", src, enable, option_hint(OPTION["enable"]))
        if other:  # said, never taken: a /foot_contact False is no torque off
            _log.warning(
                "%s: std_msgs/Bool topic(s) %s not taken as torque enable (no torque/enable in the name, or another "
                "servo node's): %s (%s)",
                src,
                ", ".join(other),
                f"torque enable from {enable}, name another if it is not"
                if enable
                else "torque taken as on throughout, name it if one is",
                option_hint(OPTION["enable"]),
            )
    try:
        gains = pick("gains", (FLOAT_ARRAY,), "P gain", required=False, exclude=(goal,), like=is_p_gain)
    except LogError:
        if not kp_given:
            raise
        gains = None  # a given kp wins: several gain topics need no choosing
    if gains is not None and gains == goal:
        raise LogError(f"{src}: P gain topic {gains} is the goal topic ({option_hint(OPTION['gains'])})")
    return {"js": js, "goal": goal, "volts": volts, "enable": enable, "gains": gains}


__all__ = [
    "JOINT_STATE",
    "FLOAT_ARRAY",
    "TRAJECTORY",
    "BATTERY",
    "BOOL",
    "STRING",
    "GOAL_TYPES",
    "SERVO_SUPPLY",
    "OPTION",
    "option_hint",
    "JOINT_HINT",
    "is_gains",
    "is_p_gain",
    "is_enable",
    "is_command_like",
    "pick_topic",
    "pick_topics",
]
