"""rosbag2 logs (mcap or sqlite3 storage) through the ``rosbags`` library — no ROS installation needed.

Reading: ``/joint_states`` (sensor_msgs/JointState: position [rad], velocity [rad/s]), the goal topic
(std_msgs/Float64MultiArray, sensor_msgs/JointState or trajectory_msgs/JointTrajectory), the supply
voltage (sensor_msgs/BatteryState ``voltage`` [V]) and, if present, torque enable (std_msgs/Bool). The
streams are aligned on their overlap and resampled onto a uniform grid: measurements by linear
interpolation, commands (goal, voltage, enable) by zero-order hold. Bench metadata (mass, length, kp, …)
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

from ..identification.servo_log import DEFAULT_DT, LogError, ServoLog, clean_meta
from ..safe_parse import parse_json

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
    joint_states_topic: str = "/joint_states",
    goal_topic: str | None = None,
    voltage_topic: str | None = None,
    enable_topic: str | None = None,
    goal_joints: Sequence[str] | None = None,
) -> ServoLog:
    """Read one joint's log from a rosbag2 recording (directory, ``.mcap`` or ``.db3``) as ``ros2 bag record``
    writes it.

    ``joint``: the joint to read (required when ``/joint_states`` names several). ``goal_joints``: the order of
    the values of a Float64MultiArray goal (a forward command controller's ``joints``; default: the
    ``/joint_states`` order when the lengths match). ``meta`` gives the bench (``mass``, ``length``, ``arm_mass``,
    ``kp``, ``vin``) and overrides a ``/servo_ff/log_meta`` message if the bag has one; without either, ``kp``
    comes from a recorded ``*p_gains`` topic and ``vin`` from the supply topic, and no pendulum is assumed
    (mass = length = 0: τ_o must then come from a URDF)."""
    from rosbags.highlevel import AnyReader

    path = Path(path)
    src = str(path)
    try:
        reader = AnyReader([path], default_typestore=_typestore())
        reader.open()
    except Exception as e:  # rosbags raises AnyReaderError, ReaderError, FileNotFoundError, …
        raise LogError(f"{src}: cannot open rosbag2 ({type(e).__name__}: {e})") from None
    try:
        bag = _read_streams(reader, src, joint, joint_states_topic, goal_topic, voltage_topic, enable_topic)
    except LogError:
        raise
    except Exception as e:  # a truncated or corrupt file fails inside rosbags / sqlite3 / mcap
        raise LogError(f"{src}: cannot read the rosbag2, truncated or corrupt ({type(e).__name__}: {e})") from None
    finally:
        try:
            reader.close()
        except Exception:  # noqa: BLE001 - closing a corrupt bag may fail again; the error above names it
            pass
    streams, names_js, g_topic = bag["streams"], bag["names_js"], bag["goal_topic"]
    if len(streams["js"]) < 2:
        raise LogError(f"{src}: topic {joint_states_topic} has {len(streams['js'])} messages, need >= 2")
    if not streams["goal"]:
        raise LogError(f"{src}: goal topic {g_topic} has no messages")
    order = [j for j in goal_joints or () if j] or None
    if order is not None and joint is not None and joint not in order:
        raise LogError(f"{src}: joint {joint!r} is not configured (joints: {order})")

    def column(n_values: int, where: str) -> int:
        """Index of ``joint`` in a Float64MultiArray of ``n_values`` values."""
        if order is not None and len(order) != n_values:
            raise LogError(f"{src}: {where} has {n_values} values, the configured joints are {len(order)} ({order})")
        names = order or (names_js if names_js is not None and len(names_js) == n_values else None)
        if joint is None or (names is None and n_values == 1):
            return 0
        if names is None:
            raise LogError(
                f"{src}: {where} has {n_values} values for the joints {names_js} of "
                f"{joint_states_topic}: give their order (joints) to find joint {joint!r}"
            )
        return names.index(joint)

    goal_rows = []
    for i_msg, (t_g, value) in enumerate(streams["goal"]):
        if isinstance(value, tuple):  # Float64MultiArray: one value per joint
            k = column(len(value), f"topic {g_topic} message {i_msg}")
            if len(value) <= k:
                raise LogError(
                    f"{src}: topic {g_topic} message {i_msg}: {len(value)} values, joint {joint!r} (index {k}) missing"
                )
            value = value[k]
        goal_rows.append((t_g, value))
    merged = {**bag["meta"], **(meta or {})}
    if "kp" not in merged and bag["gains"]:
        try:
            k = column(len(bag["gains"][0]), f"topic {bag['gains_topic']}")
        except LogError:  # gains in an order we cannot map: kp must then be given
            k = -1
        kp = [g[k] for g in bag["gains"] if 0 <= k < len(g) and math.isfinite(g[k]) and g[k] > 0]
        if kp:
            merged["kp"] = float(np.median(kp))
    if "vin" not in merged and streams["volts"]:
        volts = [v for _, v in streams["volts"] if math.isfinite(v) and v > 0]
        if volts:
            merged["vin"] = float(np.median(volts))
    merged.setdefault("mass", 0.0)
    merged.setdefault("length", 0.0)
    for key, hint in (
        ("kp", "no p_gains topic in the bag: give kp (servo-ff fit --kp, fit node parameter kp)"),
        ("vin", "no supply topic in the bag: give vin (servo-ff fit --vin, fit node parameter vin)"),
    ):
        if key not in merged:
            raise LogError(f"{src}: {key} unknown ({hint})")
    m = clean_meta(src, merged)
    return _resample(
        src,
        streams["js"],
        goal_rows,
        streams["volts"],
        streams["enable"],
        m,
        dt,
        joint_states_topic,
        g_topic,
        bag["voltage_topic"],
    )


def _read_streams(
    reader,
    src: str,
    joint: str | None,
    joint_states_topic: str,
    goal_topic: str | None,
    voltage_topic: str | None,
    enable_topic: str | None,
) -> dict[str, Any]:
    topics = {c.topic: c.msgtype for c in reader.connections}
    counts: dict[str, int] = {}
    for c in reader.connections:
        counts[c.topic] = counts.get(c.topic, 0) + int(getattr(c, "msgcount", 0) or 0)
    if joint_states_topic not in topics:
        raise LogError(
            f"{src}: topic {joint_states_topic!r} is missing (topics: {', '.join(sorted(topics)) or 'none'})"
        )
    g_topic = _pick_topic(
        src, topics, goal_topic, GOAL_TYPES, "goal", exclude=(joint_states_topic,), counts=counts, like=is_command_like
    )
    v_topic = _pick_topic(src, topics, voltage_topic, (BATTERY,), "supply voltage", required=False, counts=counts)
    e_topic = _pick_topic(src, topics, enable_topic, (BOOL,), "torque enable", required=False, counts=counts)
    gains_topics = sorted(t for t, ty in topics.items() if ty == FLOAT_ARRAY and _is_gains(t) and t != g_topic)
    k_topic = gains_topics[0] if gains_topics else None
    bag_meta: dict[str, Any] = {}
    streams: dict[str, list] = {"js": [], "goal": [], "volts": [], "enable": []}
    gains: list[tuple] = []
    names_js: list[str] | None = None
    wanted = {joint_states_topic, g_topic, v_topic, e_topic, k_topic, META_TOPIC} - {None}
    conns = [c for c in reader.connections if c.topic in wanted]
    count: dict[str, int] = {}
    for conn, t_ns, raw in reader.messages(connections=conns):
        i_msg = count[conn.topic] = count.get(conn.topic, -1) + 1
        where = f"topic {conn.topic} message {i_msg}"
        try:
            msg = reader.deserialize(raw, conn.msgtype)
        except Exception as e:  # rosbags raises its own errors on truncated / corrupt CDR
            raise LogError(f"{src}: {where}: cannot decode {conn.msgtype} ({type(e).__name__}: {e})") from None
        if conn.topic == META_TOPIC:
            meta_doc = parse_json(msg.data, f"{src}: {where}", LogError)
            if not isinstance(meta_doc, dict):
                raise LogError(
                    f"{src}: {where}: expected a JSON object of bench metadata, got {type(meta_doc).__name__}"
                )
            bag_meta.update(meta_doc)
        elif conn.topic == joint_states_topic:
            names = list(msg.name)
            if joint is None:
                if len(names) != 1 and names_js is None:
                    raise LogError(f"{src}: topic {joint_states_topic} has joints {names}; name the joint (joint)")
                idx = 0
            else:
                if joint not in names:
                    raise LogError(f"{src}: topic {joint_states_topic}: joint {joint!r} not in {names}")
                idx = names.index(joint)
            names_js = names
            if len(msg.position) <= idx:
                raise LogError(
                    f"{src}: {where}: {len(msg.position)} position(s) for joint(s) {names}; joint index {idx} has none"
                )
            vel = msg.velocity[idx] if len(msg.velocity) > idx else math.nan
            streams["js"].append((_stamp(msg.header, t_ns), msg.position[idx], vel))
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
            else:  # JointTrajectory: every point at stamp + time_from_start
                names = list(msg.joint_names)
                if joint is not None and joint not in names:
                    raise LogError(f"{src}: topic {g_topic}: joint {joint!r} not in {names}")
                k = names.index(joint) if joint is not None else 0
                t0 = _stamp(msg.header, t_ns)
                for i_pt, pt in enumerate(msg.points):
                    if len(pt.positions) <= k:
                        raise LogError(
                            f"{src}: {where}: point {i_pt} has {len(pt.positions)} position(s) for "
                            f"joint(s) {names}; joint index {k} has none"
                        )
                    tfs = pt.time_from_start.sec * 1_000_000_000 + pt.time_from_start.nanosec
                    streams["goal"].append((t0 + tfs, pt.positions[k]))
        elif conn.topic == v_topic:
            streams["volts"].append((_stamp(msg.header, t_ns), msg.voltage))
        elif conn.topic == e_topic:
            streams["enable"].append((t_ns, float(msg.data)))
        elif conn.topic == k_topic:
            gains.append(tuple(float(x) for x in msg.data))
    return {
        "streams": streams,
        "meta": bag_meta,
        "names_js": names_js,
        "goal_topic": g_topic,
        "voltage_topic": v_topic,
        "gains": gains,
        "gains_topic": k_topic,
    }


def _resample(
    src: str,
    js_rows: list,
    goal_rows: list,
    volt_rows: list,
    enable_rows: list,
    m: dict[str, Any],
    dt: float,
    joint_states_topic: str,
    g_topic: str,
    v_topic: str | None,
) -> ServoLog:
    base = js_rows[0][0]

    def rel(rows: list, width: int) -> np.ndarray:  # integer ns → seconds since the first joint state
        return np.asarray([((r[0] - base) * 1e-9, *r[1:]) for r in rows], float).reshape(len(rows), width)

    js = rel(js_rows, 3)
    for j, key in ((0, "header.stamp"), (1, "position")):
        bad = ~np.isfinite(js[:, j])
        if bad.any():
            raise LogError(f"{src}: topic {joint_states_topic} message {int(np.argmax(bad))}: {key} is not finite")
    step = np.diff(js[:, 0])
    if (step <= 0).any():
        i = int(np.argmax(step <= 0)) + 1
        raise LogError(f"{src}: topic {joint_states_topic}: timestamps not strictly increasing at message {i}")
    goal = rel(goal_rows, 2)
    goal = goal[np.argsort(goal[:, 0], kind="stable")]
    if not np.isfinite(goal).all():
        raise LogError(f"{src}: topic {g_topic} message {int(np.argmax(~np.isfinite(goal).all(1)))}: not finite")
    t0, t1 = max(js[0, 0], goal[0, 0]), js[-1, 0]
    if t1 - t0 < dt:
        raise LogError(f"{src}: topics {joint_states_topic} and {g_topic} overlap for less than dt={dt} s")
    t = t0 + np.arange(int(math.floor((t1 - t0) / dt + 1e-6)) + 1) * dt
    if t0 > js[0, 0]:
        _log.warning(
            "%s: %.3f s of %s before the first goal message are not used", src, t0 - js[0, 0], joint_states_topic
        )

    def hold(series: np.ndarray, default: float) -> np.ndarray:
        if len(series) == 0:
            return np.full(len(t), default)
        idx = np.searchsorted(series[:, 0], t + 1e-6, side="right") - 1  # 1 µs stamp jitter
        return np.where(idx >= 0, series[np.clip(idx, 0, None), 1], series[0, 1])

    position = np.interp(t, js[:, 0], js[:, 1])
    if np.isfinite(js[:, 2]).all():
        speed = np.interp(t, js[:, 0], js[:, 2])
    else:  # velocity field empty or NaN: derive from position
        speed = np.gradient(position, dt)
    volts = hold(rel(volt_rows, 2), m["vin"])
    if not np.isfinite(volts).all():
        raise LogError(f"{src}: topic {v_topic}: voltage is not finite")
    enable = (hold(rel(enable_rows, 2), 1.0) > 0.5).astype(float)  # no torque topic: powered throughout
    return ServoLog(
        t=t - t0,
        position=position,
        speed=speed,
        goal_position=hold(goal, goal[0, 1]),
        torque_enable=enable,
        input_volts=volts,
        **m,
        source=src,
    )


__all__ = ["read_rosbag", "is_command_like", "META_TOPIC"]
