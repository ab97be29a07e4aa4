"""The messages of one joint in a rosbag2 (used by :mod:`.rosbag`). The joint comes from the joint_states topic
first (the one joint it names when none is given; messages naming it among different joints are two publishers of
it, refused: a bag does not say which sent a message); every other lookup is by that name: a JointState goal message
that does not name it carries other joints' goals (skipped, counted in one line; none naming it is refused), a
JointTrajectory that does not name it holds the joint (as a JointTrajectoryController does), a Float64MultiArray's
column and a gains column come from the joint order (:func:`.rosbag_goals.array_column`). Each row keeps its
header stamp (0: none) and receive time [ns]; :mod:`.rosbag_clock` puts them on one clock."""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ..safe_parse import parse_json
from .joint_publishers import REMAP_HINT, NameSets
from .rosbag_goals import trajectory_piece
from .rosbag_topics import JOINT_HINT, OPTION, STRING, option_hint
from .servo_log import LogError

FLOAT_ARRAY = "std_msgs/msg/Float64MultiArray"
JOINT_STATE = "sensor_msgs/msg/JointState"
_log = logging.getLogger(__name__)


def _stamp(header) -> int:
    """Header stamp in integer ns (0: not set)."""
    return max(0, header.stamp.sec * 1_000_000_000 + header.stamp.nanosec)


def _messages(reader, src: str, topics: Iterable[str]):
    """(topic, message index on its topic, receive time [ns], decoded message) of ``topics``, in bag order."""
    wanted = set(topics)
    conns = [c for c in reader.connections if c.topic in wanted]
    count: dict[str, int] = {}
    for conn, t_ns, raw in reader.messages(connections=conns):
        i_msg = count[conn.topic] = count.get(conn.topic, -1) + 1
        try:
            msg = reader.deserialize(raw, conn.msgtype)
        except Exception as e:  # rosbags raises its own errors on truncated / corrupt CDR
            raise LogError(
                f"{src}: topic {conn.topic} message {i_msg}: cannot decode {conn.msgtype} ({type(e).__name__}: {e})"
            ) from None
        yield conn, i_msg, t_ns, msg


def read_joint_states(reader, src: str, topic: str, joint: str | None) -> tuple[str, list[tuple], list[str]]:
    """(the joint, its rows (stamp, receive time [ns], position, velocity), every joint the messages name) of the
    joint_states ``topic``.
    ``joint`` None: the one joint the topic names — a message naming several, or another one than the messages
    before it (two publishers), is refused. A message not naming ``joint`` (another publisher's) is skipped,
    counted in one line; messages naming it among different joints are two publishers of it (:func:`_one_publisher`)."""
    rows: list[tuple] = []
    efforts: list[float] = []
    given, skipped, others, named = joint is not None, 0, set(), set()
    name_sets = NameSets()  # the joints each message naming ``joint`` names: one set per publisher
    for _, i_msg, t_ns, msg in _messages(reader, src, (topic,)):
        names = list(msg.name)
        named.update(names)
        where = f"topic {topic} message {i_msg}"
        if not given:
            if len(names) != 1:
                raise LogError(f"{src}: {where} names joints {names}; name the joint ({JOINT_HINT})")
            if joint is not None and names[0] != joint:
                raise LogError(
                    f"{src}: {where} names joint {names[0]!r}, the messages before it {joint!r} (two publishers): "
                    f"name the joint ({JOINT_HINT})"
                )
            joint = names[0]
        elif joint not in names:  # another publisher's message
            skipped += 1
            others.update(names)
            continue
        name_sets.add(names, f"message {i_msg}")
        idx = names.index(joint)
        if len(msg.position) <= idx:
            raise LogError(
                f"{src}: {where}: {len(msg.position)} position(s) for joint(s) {names}; joint index {idx} has none"
            )
        vel = msg.velocity[idx] if len(msg.velocity) > idx else math.nan
        rows.append((_stamp(msg.header), t_ns, msg.position[idx], vel))
        efforts.append(msg.effort[idx] if len(msg.effort) > idx else math.nan)
    if given and not rows and skipped:
        raise LogError(f"{src}: topic {topic}: no message names joint {joint!r} (they name {sorted(others)})")
    _one_publisher(src, topic, joint, name_sets)
    if skipped:
        _log.warning(
            "%s: %d of %d message(s) of %s do not name joint %r (they name %s): skipped",
            src,
            skipped,
            skipped + len(rows),
            topic,
            joint,
            ", ".join(sorted(others)),
        )
    if joint is not None:
        rows = _fresh_rows(src, topic, joint, rows, efforts)
    if len(rows) < 2 or joint is None:
        raise LogError(f"{src}: topic {topic} has {len(rows)} messages, need >= 2")
    return joint, rows, sorted(named)


def _one_publisher(src: str, topic: str, joint: str | None, name_sets: NameSets) -> None:
    """Refuse ``joint``'s messages that name it among different joints (:class:`.joint_publishers.NameSets`, the
    live fit's rule too): two publishers of it, whose rows mixed are no one servo's motion. rosbag2 does not record
    which publisher sent a message, so the one line says how to record one alone and name its topic."""
    if (why := name_sets.mixed(topic, joint)) is None:
        return
    raise LogError(
        f"{src}: {why}; a bag does not say which sent a message, so they are not mixed: record the servo's joint "
        f"states alone on a topic ({REMAP_HINT}) and name it ({option_hint(OPTION['js'])})"
    )


def _fresh_rows(src: str, topic: str, joint: str, rows: list[tuple], efforts: list[float]) -> list[tuple]:
    """``rows`` without those whose velocity or effort of ``joint`` is not finite while that field is finite in
    another message: no fresh reading there (a servo node keeps a silent servo's last position and gives NaN
    velocity and effort, as joint_state_broadcaster gives NaN for a value it does not have). They are left out,
    said in one line, so a run of them is a recorder gap (:mod:`.sample_gaps`). A field never finite is not
    recorded (the speed is then derived from the positions)."""
    vel = np.array([r[3] for r in rows], float)
    eff = np.array(efforts, float)
    stale = np.zeros(len(rows), bool)
    for x in (vel, eff):
        ok = np.isfinite(x)
        if ok.any():
            stale |= ~ok
    if not stale.any():
        return rows
    _log.warning(
        "%s: topic %s: %d of %d message(s) give joint %r no finite velocity or effort (the first: its message %d; a "
        "servo without a fresh reading): their positions are not used, and a run of them is a gap",
        src,
        topic,
        int(stale.sum()),
        len(rows),
        joint,
        int(np.argmax(stale)),
    )
    return [r for r, s in zip(rows, stale.tolist()) if not s]


def read_streams(reader, src: str, joint: str | None, topics: Mapping[str, str | None], meta_topics: set[str]):
    """The rows of every stream of one joint, (stamp, receive time [ns], …): ``js`` (…, position, velocity),
    ``goal`` (…, value, or a tuple of values naming no joints: a Float64MultiArray's, stamp 0), ``volts``,
    ``enable`` (…, value; stamp 0); ``traj`` (JointTrajectory piece starting at its stamp, receive time), ``gains``
    (receive time, values); the ``goal_kind`` (message type), the resolved ``joint``, ``js_joints`` (every joint
    /joint_states names); and the bench ``meta`` of ``meta_topics``."""
    joint, js_rows, js_joints = read_joint_states(reader, src, topics["js"], joint)
    g_topic, v_topic, e_topic, k_topic = topics["goal"], topics["volts"], topics["enable"], topics["gains"]
    streams: dict[str, Any] = {"js": js_rows, "goal": [], "traj": [], "volts": [], "enable": [], "gains": []}
    streams.update(joint=joint, goal_kind="", js_joints=js_joints)
    bag_meta: dict[str, Any] = {}
    others: set[str] = set()  # joints a skipped JointState goal named
    skipped = 0
    wanted = {t for t in (g_topic, v_topic, e_topic, k_topic) if t} | meta_topics
    for conn, i_msg, t_ns, msg in _messages(reader, src, wanted):
        where = f"topic {conn.topic} message {i_msg}"
        if conn.topic in meta_topics:
            if conn.msgtype != STRING:  # before: "truncated or corrupt (AttributeError: 'float' object …)"
                raise LogError(
                    f"{src}: topic {conn.topic} has type {conn.msgtype}, expected {STRING} (the JSON bench metadata "
                    "servo-ff record-sim writes); drop or rename that topic"
                )
            meta_doc = parse_json(msg.data, f"{src}: {where}", LogError)
            if not isinstance(meta_doc, dict):
                raise LogError(
                    f"{src}: {where}: expected a JSON object of bench metadata, got {type(meta_doc).__name__}"
                )
            bag_meta.update(meta_doc)
        elif conn.topic == g_topic:
            streams["goal_kind"] = conn.msgtype
            if conn.msgtype == FLOAT_ARRAY:  # the joint's column is chosen once the joint order is known
                streams["goal"].append((0, t_ns, tuple(float(x) for x in msg.data)))
            elif conn.msgtype == JOINT_STATE:
                value = _joint_goal(src, where, msg, joint)
                if value is None:
                    skipped += 1
                    others.update(msg.name)
                    continue
                streams["goal"].append((_stamp(msg.header), t_ns, value))
            else:
                streams["traj"].append((trajectory_piece(src, where, msg, joint, _stamp(msg.header)), t_ns))
        elif conn.topic == v_topic:
            streams["volts"].append((_stamp(msg.header), t_ns, msg.voltage))
        elif conn.topic == e_topic:
            streams["enable"].append((0, t_ns, float(msg.data)))
        elif conn.topic == k_topic:
            streams["gains"].append((t_ns, tuple(float(x) for x in msg.data)))
    if skipped:
        named = sorted(others)
        if not streams["goal"]:
            raise LogError(
                f"{src}: topic {g_topic}: no message names joint {joint!r} (they name {named}): "
                f"not its goals; name the goal topic of {joint!r} ({option_hint(OPTION['goal'])})"
            )
        _log.warning(
            "%s: %d message(s) of %s name other joints (%s), not %r: not its goals, skipped",
            src,
            skipped,
            g_topic,
            ", ".join(named),
            joint,
        )
    off = sum(r[2] < 0.5 for r in streams["enable"])
    if off:  # which topic turned the torque off is said: a wrong one drops good samples
        _log.warning(
            "%s: torque enable from %s (%s): off in %d of %d message(s)",
            src,
            e_topic,
            option_hint(OPTION["enable"]),
            off,
            len(streams["enable"]),
        )
    if streams["traj"] and all(p[2].shape[1] == 0 for p, _ in streams["traj"]):  # q (P, 0): not named
        raise LogError(f"{src}: topic {g_topic}: no message names joint {joint!r}")
    return {"streams": streams, "meta": bag_meta}


def _joint_goal(src: str, where: str, msg, joint: str) -> float | tuple[float, ...] | None:
    """``joint``'s goal in a JointState goal message; None when the message names other joints only; the tuple of
    its positions when it names no joint."""
    names = list(msg.name)
    if joint in names:
        k = names.index(joint)
    elif not names:  # names no joint: its values, read as a Float64MultiArray's (rosbag_goals.array_column)
        return tuple(float(x) for x in msg.position)
    else:
        return None
    if len(msg.position) <= k:
        raise LogError(
            f"{src}: {where}: {len(msg.position)} position(s) for joint(s) {names}; joint index {k} has none"
        )
    return msg.position[k]


__all__ = ["read_joint_states", "read_streams"]
