"""rosbag2 logs (mcap or sqlite3 storage) through the ``rosbags`` library — no ROS installation needed.

Reading: ``joint_states`` (sensor_msgs/JointState: position [rad], velocity [rad/s]), the goal topic
(std_msgs/Float64MultiArray, sensor_msgs/JointState or trajectory_msgs/JointTrajectory), the supply
voltage (sensor_msgs/BatteryState ``voltage`` [V]), the servo P gains (a ``*gains`` Float64MultiArray) and, if
present, torque enable (std_msgs/Bool); relative topic names are resolved under ``namespace``, and topics found by
type are looked for under it. The streams are aligned on their overlap and resampled onto a uniform grid:
measurements by linear interpolation, commands (goal, voltage, enable) by zero-order hold, JointTrajectory goals
as JointTrajectoryController follows them (each message replaces the one in progress from its start time onward,
:class:`servo_ff.interpolation.ReplacedTrajectories`). A Float64MultiArray names no joints: with more than one
value per message its order must be given (``goal_joints``). Bench metadata (mass, length, kp, …)
come from the ``meta`` argument and/or the JSON in a ``/servo_ff/log_meta`` std_msgs/String message, which
:func:`.rosbag_write.write_rosbag` stores. Errors name the bag, the topic and the missing joint/key.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..safe_parse import parse_json
from .rosbag_goals import (
    array_column,
    kp_from_gains,
    normalize_namespace,
    resolve_topic,
    trajectory_goals,
    trajectory_piece,
)
from .rosbag_resample import resample_bag as _resample
from .servo_log import DEFAULT_DT, LogError, ServoLog, clean_meta

JOINT_STATE = "sensor_msgs/msg/JointState"
FLOAT_ARRAY = "std_msgs/msg/Float64MultiArray"
TRAJECTORY = "trajectory_msgs/msg/JointTrajectory"
BATTERY = "sensor_msgs/msg/BatteryState"
BOOL = "std_msgs/msg/Bool"
STRING = "std_msgs/msg/String"
GOAL_TYPES = (FLOAT_ARRAY, JOINT_STATE, TRAJECTORY)
_log = logging.getLogger(__name__)
META_TOPIC = "/servo_ff/log_meta"


def _typestore():
    from rosbags.typesys import Stores, get_typestore

    return get_typestore(Stores.ROS2_JAZZY)


def _stamp(header, fallback_ns: int) -> int:
    """Header stamp in integer ns (the bag's receive time when the stamp is zero)."""
    s = header.stamp.sec * 1_000_000_000 + header.stamp.nanosec
    return s if s > 0 else fallback_ns


def _is_gains(topic: str) -> bool:
    return "gains" in topic.rstrip("/").rsplit("/", 1)[-1].lower()


def is_command_like(topic: str) -> bool:
    """A topic that carries goals: its last name segment mentions command(s), goal, reference or trajectory
    (``/servo/commands``, ``/<controller>/commands``, ``servo/joint_command``, ``/<controller>/joint_trajectory``,
    ``/goal_position``), never gains (``/servo/p_gains`` is a Float64MultiArray too)."""
    last = topic.rstrip("/").rsplit("/", 1)[-1].lower()
    return not _is_gains(topic) and any(w in last for w in ("command", "goal", "reference", "trajectory"))


def _pick_topic(
    src: str,
    topics: Mapping[str, str],
    wanted: str | None,
    types: tuple[str, ...],
    role: str,
    exclude: tuple[str, ...] = (),
    required: bool = True,
    counts: Mapping[str, int] | None = None,
    like: Callable[[str], bool] | None = None,
) -> str | None:
    have = ", ".join(f"{t} [{ty}]" for t, ty in sorted(topics.items())) or "none"
    if wanted is not None:
        if wanted not in topics:
            raise LogError(f"{src}: {role} topic {wanted!r} is not in the bag (topics: {have})")
        if topics[wanted] not in types:
            raise LogError(
                f"{src}: {role} topic {wanted!r} has type {topics[wanted]}, expected one of {', '.join(types)}"
            )
        return wanted
    cands = [t for t, ty in sorted(topics.items()) if ty in types and t not in exclude and (like is None or like(t))]
    if counts is not None and len(cands) > 1:  # a topic nobody published on is recorded without messages
        cands = [t for t in cands if counts.get(t, 0) > 0] or cands
    if not cands:
        if required:
            what = "command-like " if like is not None else ""
            raise LogError(
                f"{src}: no {what}{role} topic ({' or '.join(types)}) in the bag (topics: {have}); name it (goal_topic)"
            )
        return None
    if len(cands) > 1:
        raise LogError(f"{src}: several candidate {role} topics ({', '.join(cands)}); name one (goal_topic)")
    return cands[0]


def read_rosbag(
    path: str | Path,
    dt: float = DEFAULT_DT,
    meta: Mapping[str, Any] | None = None,
    joint: str | None = None,
    joint_states_topic: str = "joint_states",
    goal_topic: str | None = None,
    voltage_topic: str | None = None,
    enable_topic: str | None = None,
    goal_joints: Sequence[str] | None = None,
    namespace: str | None = None,
    gains_topic: str | None = None,
) -> ServoLog:
    """Read one joint's log from a rosbag2 recording (directory, ``.mcap`` or ``.db3``) as ``ros2 bag record``
    writes it.

    ``joint``: the joint to read (required when ``joint_states`` names several). ``goal_joints``: the order of the
    values of Float64MultiArray goals and gains (a forward command controller's ``joints``; required when they
    carry more than one value). ``namespace``: relative topic names (``joint_states``, …) are resolved under it and
    the goal, supply and gains topics found by type are looked for under it. ``meta`` gives the bench (``mass``,
    ``length``, ``arm_mass``, ``kp``, ``vin``) and overrides a ``/servo_ff/log_meta`` message if the bag has one;
    without either, ``kp`` comes from the recorded ``*p_gains`` topic (``gains_topic``) and ``vin`` from the
    supply topic, and no pendulum is assumed (mass = length = 0: τ_o must then come from a URDF). The log's
    ``kp_source`` says where ``kp`` came from; a given ``kp`` that differs from the recorded gain is logged."""
    from rosbags.highlevel import AnyReader

    path = Path(path)
    src = str(path)
    ns = normalize_namespace(namespace)
    topics_wanted = {
        "js": resolve_topic(joint_states_topic, ns),
        "goal": goal_topic and resolve_topic(goal_topic, ns),
        "volts": voltage_topic and resolve_topic(voltage_topic, ns),
        "enable": enable_topic and resolve_topic(enable_topic, ns),
        "gains": gains_topic and resolve_topic(gains_topic, ns),
    }
    try:
        reader = AnyReader([path], default_typestore=_typestore())
        reader.open()
    except Exception as e:  # rosbags raises AnyReaderError, ReaderError, FileNotFoundError, …
        raise LogError(f"{src}: cannot open rosbag2 ({type(e).__name__}: {e})") from None
    try:
        bag = _read_streams(reader, src, joint, ns, topics_wanted)
    except LogError:
        raise
    except Exception as e:  # a truncated or corrupt file fails inside rosbags / sqlite3 / mcap
        raise LogError(f"{src}: cannot read the rosbag2, truncated or corrupt ({type(e).__name__}: {e})") from None
    finally:
        try:
            reader.close()
        except Exception:  # noqa: BLE001 - closing a corrupt bag may fail again; the error above names it
            pass
    streams, g_topic, js_topic = bag["streams"], bag["goal_topic"], topics_wanted["js"]
    if len(streams["js"]) < 2:
        raise LogError(f"{src}: topic {js_topic} has {len(streams['js'])} messages, need >= 2")
    if not streams["goal"] and not streams["traj"]:
        raise LogError(f"{src}: goal topic {g_topic} has no messages")
    order = [j for j in goal_joints or () if j] or None
    if order is not None and joint is not None and joint not in order:
        raise LogError(f"{src}: joint {joint!r} is not configured (joints: {order})")
    goal_rows = []
    for i_msg, (t_g, value) in enumerate(streams["goal"]):
        if isinstance(value, tuple):  # Float64MultiArray: one value per joint, no names
            k = array_column(src, joint, order, len(value), f"topic {g_topic} message {i_msg}")
            value = value[k]
        goal_rows.append((t_g, value))
    traj = None
    if streams["traj"]:
        js_t = np.array([r[0] for r in streams["js"]], float)
        first = min(p[0] for p in streams["traj"])
        q0 = float(np.interp(first, js_t, [r[1] for r in streams["js"]]))
        traj = trajectory_goals(src, g_topic, streams["traj"], streams["js"][0][0], q0)
    merged = {**bag["meta"], **(meta or {})}
    kp_source = "given" if meta and "kp" in meta else "/servo_ff/log_meta" if "kp" in merged else ""
    kp_note = ""
    if bag["gains"]:
        kp_rec, kp_note = kp_from_gains(src, bag["gains"], bag["gains_topic"], joint, order)
        if kp_rec is not None and "kp" not in merged:
            merged["kp"], kp_source = kp_rec, f"recorded {bag['gains_topic']}"
        elif kp_rec is not None and abs(float(merged["kp"]) - kp_rec) > 0.01 * kp_rec:
            _log.warning(
                "%s: kp %g (%s) is used, not the recorded %s %g",
                src,
                merged["kp"],
                kp_source,
                bag["gains_topic"],
                kp_rec,
            )
    if "vin" not in merged and streams["volts"]:
        volts = [v for _, v in streams["volts"] if math.isfinite(v) and v > 0]
        if volts:
            merged["vin"] = float(np.median(volts))
    bench_known = "mass" in merged and "length" in merged  # not needed by an α fit (the URDF's); identify refuses
    merged.setdefault("mass", 0.0)
    merged.setdefault("length", 0.0)
    for key, hint in (
        ("kp", kp_note or "no p_gains topic in the bag"),
        ("vin", "no supply topic in the bag"),
    ):
        if key not in merged:
            raise LogError(
                f"{src}: {key} unknown ({hint}: give {key} (servo-ff fit --{key}, fit node parameter {key}))"
            )
    m = clean_meta(src, merged)
    return _resample(src, streams, goal_rows, traj, m, dt, js_topic, g_topic, bag["voltage_topic"]).with_(
        kp_source=kp_source, bench_known=bench_known, joint=streams.get("joint", "")
    )


def _read_streams(reader, src: str, joint: str | None, ns: str, wanted: Mapping[str, str | None]) -> dict[str, Any]:
    topics = {c.topic: c.msgtype for c in reader.connections}
    counts: dict[str, int] = {}
    for c in reader.connections:
        counts[c.topic] = counts.get(c.topic, 0) + int(getattr(c, "msgcount", 0) or 0)
    js_topic = wanted["js"]
    if js_topic not in topics:
        raise LogError(f"{src}: topic {js_topic!r} is missing (topics: {', '.join(sorted(topics)) or 'none'})")
    # topics found by type: under the namespace
    local = {t: ty for t, ty in topics.items() if not ns or t.startswith(ns + "/")}

    def pick(key, types, role, **kw):
        if wanted[key] is not None:
            return _pick_topic(src, topics, wanted[key], types, role, **kw)
        return _pick_topic(src, local, None, types, role, counts=counts, **kw)

    g_topic = pick("goal", GOAL_TYPES, "goal", exclude=(js_topic,), like=is_command_like)
    v_topic = pick("volts", (BATTERY,), "supply voltage", required=False)
    e_topic = pick("enable", (BOOL,), "torque enable", required=False)
    if wanted["gains"] is not None:
        k_topic = _pick_topic(src, topics, wanted["gains"], (FLOAT_ARRAY,), "p_gains")
    else:
        gains_topics = sorted(t for t, ty in local.items() if ty == FLOAT_ARRAY and _is_gains(t) and t != g_topic)
        k_topic = gains_topics[0] if gains_topics else None
    meta_topics = {META_TOPIC, ns + META_TOPIC}
    bag_meta: dict[str, Any] = {}
    streams: dict[str, Any] = {"js": [], "goal": [], "traj": [], "volts": [], "enable": []}
    gains: list[tuple] = []
    conns = [c for c in reader.connections if c.topic in {js_topic, g_topic, v_topic, e_topic, k_topic} | meta_topics]
    count: dict[str, int] = {}
    stale = 0
    for conn, t_ns, raw in reader.messages(connections=conns):
        i_msg = count[conn.topic] = count.get(conn.topic, -1) + 1
        where = f"topic {conn.topic} message {i_msg}"
        try:
            msg = reader.deserialize(raw, conn.msgtype)
        except Exception as e:  # rosbags raises its own errors on truncated / corrupt CDR
            raise LogError(f"{src}: {where}: cannot decode {conn.msgtype} ({type(e).__name__}: {e})") from None
        if conn.topic in meta_topics:
            meta_doc = parse_json(msg.data, f"{src}: {where}", LogError)
            if not isinstance(meta_doc, dict):
                raise LogError(
                    f"{src}: {where}: expected a JSON object of bench metadata, got {type(meta_doc).__name__}"
                )
            bag_meta.update(meta_doc)
        elif conn.topic == js_topic:
            streams["js"].append(_joint_state_row(src, where, msg, joint, js_topic, t_ns))
            streams.setdefault("joint", joint or msg.name[0])  # the only joint when none is named
        elif conn.topic == g_topic:
            if conn.msgtype == FLOAT_ARRAY:  # the joint's column is chosen once the joint order is known
                streams["goal"].append((t_ns, tuple(float(x) for x in msg.data)))
            elif conn.msgtype == JOINT_STATE:
                names = list(msg.name)
                if joint is not None and joint not in names:
                    if len(names) > 1:
                        raise LogError(f"{src}: topic {g_topic}: joint {joint!r} not in {names}")
                k = names.index(joint) if joint in names else 0
                if len(msg.position) <= k:
                    raise LogError(
                        f"{src}: {where}: {len(msg.position)} position(s) for joint(s) {names}; "
                        f"joint index {k} has none"
                    )
                streams["goal"].append((_stamp(msg.header, t_ns), msg.position[k]))
            else:
                piece = trajectory_piece(src, where, msg, joint, _stamp(msg.header, t_ns))
                if len(piece[1]) and piece[0] + int(piece[1][-1] * 1e9) < t_ns:  # ended before it arrived
                    stale += 1  # a JointTrajectoryController refuses it
                    continue
                streams["traj"].append(piece)
        elif conn.topic == v_topic:
            streams["volts"].append((_stamp(msg.header, t_ns), msg.voltage))
        elif conn.topic == e_topic:
            streams["enable"].append((t_ns, float(msg.data)))
        elif conn.topic == k_topic:
            gains.append(tuple(float(x) for x in msg.data))
    if stale:
        _log.warning(
            "%s: %d message(s) of %s ended before they were received: not followed (as a JTC)", src, stale, g_topic
        )
    if streams["traj"] and all(len(p[1]) == 0 for p in streams["traj"]):
        raise LogError(f"{src}: topic {g_topic}: no message names joint {joint!r}")
    return {
        "streams": streams,
        "meta": bag_meta,
        "goal_topic": g_topic,
        "voltage_topic": v_topic,
        "gains": gains,
        "gains_topic": k_topic,
    }


def _joint_state_row(src: str, where: str, msg, joint: str | None, topic: str, t_ns: int) -> tuple:
    """(stamp [ns], position, velocity) of ``joint`` in a JointState (the only joint when None)."""
    names = list(msg.name)
    if joint is None:
        if len(names) != 1:
            raise LogError(f"{src}: topic {topic} has joints {names}; name the joint (joint)")
        idx = 0
    else:
        if joint not in names:
            raise LogError(f"{src}: topic {topic}: joint {joint!r} not in {names}")
        idx = names.index(joint)
    if len(msg.position) <= idx:
        raise LogError(
            f"{src}: {where}: {len(msg.position)} position(s) for joint(s) {names}; joint index {idx} has none"
        )
    vel = msg.velocity[idx] if len(msg.velocity) > idx else math.nan
    return (_stamp(msg.header, t_ns), msg.position[idx], vel)


__all__ = ["read_rosbag", "is_command_like", "META_TOPIC"]
