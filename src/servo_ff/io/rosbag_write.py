"""rosbag2 recordings of a :class:`~servo_ff.io.servo_log.ServoLog` (mcap or sqlite3, through
``rosbags``): what :mod:`.rosbag` reads back, with the bench metadata on ``/servo_ff/log_meta``."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from .atomic import atomic_path
from .rosbag import META_TOPIC, _typestore
from .rosbag_topics import BATTERY, BOOL, FLOAT_ARRAY, JOINT_STATE, STRING, TRAJECTORY
from .servo_log import ServoLog


def write_rosbag(
    log: ServoLog,
    path: str | Path,
    storage: str = "mcap",
    joint: str = "joint",
    goal_type: str = "Float64MultiArray",
    goal_topic: str = "/goal_position",
    voltage_topic: str = "/battery_state",
    enable_topic: str = "/torque_enable",
    start_ns: int = 1_700_000_000_000_000_000,
) -> None:
    """Write ``log`` as a rosbag2 recording (``storage`` ``mcap`` or ``sqlite3``) with its metadata; atomically:
    written under a temporary name, renamed once complete (a killed writer leaves no half bag at ``path``)."""
    with atomic_path(path, directory=True) as tmp:
        _write_rosbag(log, tmp, storage, joint, goal_type, goal_topic, voltage_topic, enable_topic, start_ns)


def _write_rosbag(log, path, storage, joint, goal_type, goal_topic, voltage_topic, enable_topic, start_ns) -> None:
    from rosbags.rosbag2 import StoragePlugin, Writer

    plugins = {"mcap": StoragePlugin.MCAP, "sqlite3": StoragePlugin.SQLITE3}
    if storage not in plugins:
        raise ValueError(f"storage must be one of {', '.join(plugins)}, got {storage!r}")
    gtypes = {"Float64MultiArray": FLOAT_ARRAY, "JointState": JOINT_STATE, "JointTrajectory": TRAJECTORY}
    if goal_type not in gtypes:
        raise ValueError(f"goal_type must be one of {', '.join(gtypes)}, got {goal_type!r}")
    ts = _typestore()
    T = ts.types
    Time, Header = T["builtin_interfaces/msg/Time"], T["std_msgs/msg/Header"]
    Duration = T["builtin_interfaces/msg/Duration"]

    def header(ns: int):
        return Header(stamp=Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000), frame_id="")

    def js_msg(ns: int, pos: float, vel: float):
        return T[JOINT_STATE](
            header=header(ns),
            name=[joint],
            position=np.array([pos]),
            velocity=np.array([vel]),
            effort=np.array([], float),
        )

    with Writer(path, version=9, storage_plugin=plugins[storage]) as w:
        c_js = w.add_connection("/joint_states", JOINT_STATE, typestore=ts)
        c_goal = w.add_connection(goal_topic, gtypes[goal_type], typestore=ts)
        c_v = w.add_connection(voltage_topic, BATTERY, typestore=ts)
        c_en = w.add_connection(enable_topic, BOOL, typestore=ts)
        c_meta = w.add_connection(META_TOPIC, STRING, typestore=ts)
        meta = {k: getattr(log, k) for k in ("mass", "arm_mass", "length", "kp", "vin", "motor", "trajectory")}
        w.write(c_meta, start_ns, ts.serialize_cdr(T[STRING](data=json.dumps(meta)), STRING))
        dim = T["std_msgs/msg/MultiArrayLayout"](dim=[], data_offset=0)
        for k in range(len(log)):
            ns = start_ns + int(round(float(log.t[k]) * 1e9))
            w.write(c_js, ns, ts.serialize_cdr(js_msg(ns, log.position[k], log.speed[k]), JOINT_STATE))
            g = float(log.goal_position[k])
            if goal_type == "Float64MultiArray":
                gm = T[FLOAT_ARRAY](layout=dim, data=np.array([g]))
            elif goal_type == "JointState":
                gm = js_msg(ns, g, 0.0)
            else:
                pt = T["trajectory_msgs/msg/JointTrajectoryPoint"](
                    positions=np.array([g]),
                    velocities=np.array([], float),
                    accelerations=np.array([], float),
                    effort=np.array([], float),
                    time_from_start=Duration(sec=0, nanosec=0),
                )
                gm = T[TRAJECTORY](header=header(ns), joint_names=[joint], points=[pt])
            w.write(c_goal, ns, ts.serialize_cdr(gm, gtypes[goal_type]))
            if k == 0 or log.input_volts[k] != log.input_volts[k - 1]:
                bm = _battery(T, header(ns), float(log.input_volts[k]))
                w.write(c_v, ns, ts.serialize_cdr(bm, BATTERY))
            if k == 0 or log.torque_enable[k] != log.torque_enable[k - 1]:
                w.write(c_en, ns, ts.serialize_cdr(T[BOOL](data=bool(log.torque_enable[k] > 0.5)), BOOL))


def _battery(T, header, volts: float):
    B = T[BATTERY]
    nan = math.nan
    return B(
        header=header,
        voltage=volts,
        temperature=nan,
        current=nan,
        charge=nan,
        capacity=nan,
        design_capacity=nan,
        percentage=nan,
        power_supply_status=0,
        power_supply_health=0,
        power_supply_technology=0,
        present=True,
        cell_voltage=np.array([], np.float32),
        cell_temperature=np.array([], np.float32),
        location="",
        serial_number="",
    )


__all__ = ["write_rosbag"]
