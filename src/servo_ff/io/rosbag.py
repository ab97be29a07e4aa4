"""rosbag2 logs (mcap or sqlite3 storage) through the ``rosbags`` library — no ROS installation needed.

Reading: ``joint_states`` (sensor_msgs/JointState: position [rad], velocity [rad/s]), the goal topic
(std_msgs/Float64MultiArray, sensor_msgs/JointState or trajectory_msgs/JointTrajectory), the supply
voltage (sensor_msgs/BatteryState ``voltage`` [V]), the servo P gains (a ``…p_gains`` Float64MultiArray) and, if
present, torque enable (a std_msgs/Bool named so); relative topic names are resolved under ``namespace``, and
topics found by type are looked for under it (:mod:`.rosbag_topics`). The streams are aligned on their overlap
and resampled onto a uniform grid: measurements by linear interpolation, commands (goal, voltage, enable) by
zero-order hold, JointTrajectory goals as the servo nodes and JointTrajectoryController follow them (each message
replaces the one in progress on receipt and reaches its first point at its stamp + time_from_start,
:class:`servo_ff.trajectory_receipt.ReplacedTrajectories`). A Float64MultiArray
names no joints: with more than one value per message its order must be given (``goal_joints``). Bench metadata
(mass, length, kp, …) come from the ``meta`` argument and/or the JSON in a ``/servo_ff/log_meta``
std_msgs/String message, which :func:`.rosbag_write.write_rosbag` stores. Errors name the bag, the topic and the
missing joint/key.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .rosbag_clock import on_one_clock
from .rosbag_goals import array_column, kp_from_gains, normalize_namespace, resolve_topic, trajectory_goals
from .rosbag_resample import resample_bag as _resample
from .rosbag_streams import read_streams
from .rosbag_supply import bag_supply, supply_how
from .rosbag_topics import is_command_like, pick_topics
from .servo_log import DEFAULT_DT, LogError, ServoLog, clean_meta

_log = logging.getLogger(__name__)
META_TOPIC = "/servo_ff/log_meta"


def _typestore():
    from rosbags.typesys import Stores, get_typestore

    return get_typestore(Stores.ROS2_JAZZY)


def _one_line(e: BaseException) -> str:
    """``Type: message`` of ``e`` on one line (a YAML parser's error spans several)."""
    return " ".join(f"{type(e).__name__}: {e}".split())


def _open_hint(path: Path, e: BaseException) -> str:
    """What to do about a bag that does not open."""
    if "metadata.yaml" in str(e) and path.is_dir():
        return "give its .mcap/.db3 file itself, or rebuild metadata.yaml (ros2 bag reindex)"
    if "files are missing" in str(e):
        return "a file its metadata.yaml lists is not there: copy the whole bag directory"
    if isinstance(e, FileNotFoundError) or not path.exists():
        return "give a rosbag2 directory, .mcap or .db3 file"
    return "truncated or corrupt: record it again (an .mcap cut off: mcap recover)"


def _check_bag_meta(src: str, bag_meta: Mapping[str, Any], given: Mapping[str, Any]) -> None:
    """A bench value on /servo_ff/log_meta that is no finite number >= 0 (and not given instead) is refused naming
    the topic, the key and the flag that gives it (before: "key 'kp' must be finite", no topic, no remedy)."""
    for k in ("kp", "vin", "mass", "length", "arm_mass"):
        if k not in bag_meta or k in given:
            continue
        v = bag_meta[k]
        ok = isinstance(v, (int, float)) and not isinstance(v, bool) and np.isfinite(v) and v >= 0
        if not ok:
            flag = "--" + k.replace("_", "-")
            raise LogError(
                f"{src}: topic {META_TOPIC}: key {k!r} must be a finite number >= 0, got {v!r}; give {k} instead "
                f"(servo-ff fit {flag})"
            )


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

    ``joint``: the joint to read (None: the one ``joint_states`` names); every goal, trajectory and gain is looked
    up by its name (:mod:`.rosbag_streams`), every stream timed on one clock (:mod:`.rosbag_clock`), torque enable
    from ``enable_topic`` or a Bool named so. ``goal_joints``: the order of the
    values of Float64MultiArray goals and gains (a forward command controller's ``joints``; required when they
    carry more than one value). ``namespace``: relative topic names (``joint_states``, …) are resolved under it and
    the goal, supply and gains topics found by type are looked for under it. ``meta`` gives the bench (``mass``,
    ``length``, ``arm_mass``, ``kp``, ``vin``) and overrides a ``/servo_ff/log_meta`` message if the bag has one;
    without either, ``kp`` comes from the recorded ``…p_gains`` topic (``gains_topic``; one gain over the data,
    :func:`.rosbag_goals.kp_from_gains`), and no pendulum is assumed (mass = length = 0: τ_o must then come from a
    URDF). The log's ``kp_source`` says where ``kp`` came from; a given ``kp`` that differs from the recorded gain is
    logged. The supply: a given ``vin``, else the servo node's (or the named) supply topic, else the log_meta
    ``vin``, else the one BatteryState, said (:mod:`.rosbag_supply`); ``vin_source`` says which."""
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
        raise LogError(f"{src}: cannot open rosbag2 ({_one_line(e)}); {_open_hint(path, e)}") from None
    try:
        topics = {c.topic: c.msgtype for c in reader.connections}
        counts: dict[str, int] = {}
        for c in reader.connections:
            counts[c.topic] = counts.get(c.topic, 0) + int(getattr(c, "msgcount", 0) or 0)
        picked = pick_topics(src, topics, counts, ns, topics_wanted, kp_given=bool(meta and "kp" in meta))
        bag = read_streams(reader, src, joint, picked, {META_TOPIC, ns + META_TOPIC})
    except LogError:
        raise
    except Exception as e:  # a truncated or corrupt file fails inside rosbags / sqlite3 / mcap
        raise LogError(
            f"{src}: cannot read the rosbag2, truncated or corrupt ({_one_line(e)}); record it again"
        ) from None
    finally:
        try:
            reader.close()
        except Exception:  # noqa: BLE001 - closing a corrupt bag may fail again; the error above names it
            pass
    streams = on_one_clock(src, bag["streams"], picked, dt)
    g_topic, js_topic = picked["goal"], picked["js"]
    joint = streams["joint"]  # the one joint_states names when none was given: every lookup below is by name
    if not streams["goal"] and not streams["traj"]:
        raise LogError(f"{src}: goal topic {g_topic} has no messages")
    order = [j for j in goal_joints or () if j] or None
    if order is not None and joint not in order:
        raise LogError(f"{src}: joint {joint!r} is not configured (joints: {order})")
    goal_rows = []
    for i_msg, (t_g, value) in enumerate(streams["goal"]):
        if isinstance(value, tuple):  # Float64MultiArray or unnamed JointState: one value per joint, no names
            where = f"topic {g_topic} message {i_msg}"
            k = array_column(src, joint, order, len(value), where, bag["streams"]["js_joints"])
            value = value[k]
        goal_rows.append((t_g, value))
    traj = None
    if streams["traj"]:
        js_t = np.array([r[0] for r in streams["js"]], float)
        first = min(p[0] for p in streams["traj"])
        q0 = float(np.interp(first, js_t, [r[1] for r in streams["js"]]))
        traj = trajectory_goals(src, g_topic, streams["traj"], streams["js"][0][0], q0)
    else:
        first = min(r[0] for r in goal_rows)
    span = (max(streams["js"][0][0], first), streams["js"][-1][0])  # the data: where the gain must be one
    _check_bag_meta(src, bag["meta"], meta or {})
    merged = {**bag["meta"], **(meta or {})}
    kp_source = "given" if meta and "kp" in meta else "/servo_ff/log_meta" if "kp" in merged else ""
    kp_note = ""
    if streams["gains"]:
        kp_rec, kp_note = kp_from_gains(src, streams["gains"], picked["gains"], joint, order, span, streams["js"][0][0])
        if kp_rec is not None and "kp" not in merged:
            merged["kp"], kp_source = kp_rec, f"recorded {picked['gains']}"
        elif kp_rec is not None and abs(float(merged["kp"]) - kp_rec) > 0.01 * kp_rec:
            _log.warning(
                "%s: kp %g (%s) is used, not the recorded %s %g",
                src,
                merged["kp"],
                kp_source,
                picked["gains"],
                kp_rec,
            )
    how = supply_how(bool(topics_wanted["volts"]), picked["volts"], ns)
    given_vin = (meta or {}).get("vin")
    volt_rows, vin, vin_source = bag_supply(
        src, streams["volts"], picked["volts"], how, given_vin, bag["meta"].get("vin"), ns
    )
    merged.pop("vin", None)
    if vin is not None:
        merged["vin"] = vin
    bench_known = "mass" in merged and "length" in merged  # not needed by an α fit (the URDF's); identify refuses
    merged.setdefault("mass", 0.0)
    merged.setdefault("length", 0.0)
    for key, hint in (
        ("kp", kp_note or "no p_gains topic in the bag"),
        ("vin", "no supply topic in the bag"),
    ):
        if key not in merged:
            raise LogError(
                f"{src}: {key} unknown ({hint}): give {key} (servo-ff fit --{key}, fit node parameter {key}; "
                "servo-ff identify reads it from the bag only)"
            )
    m = clean_meta(src, merged)
    streams = {**streams, "volts": volt_rows}  # a given vin wins over the recorded series (rosbag_supply)
    return _resample(src, streams, goal_rows, traj, m, dt, js_topic, g_topic, picked["volts"]).with_(
        kp_source=kp_source, vin_source=vin_source, bench_known=bench_known, joint=joint
    )


__all__ = ["read_rosbag", "is_command_like", "META_TOPIC"]
