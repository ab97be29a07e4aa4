"""Parameters every servo interface node declares (``servo_sim_node``, ``servo_hardware_node``): their one
description and the cross-parameter check."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from servo_ff.ros.common import ParamSpec, joint_names_param, per_joint

KP_MAX = 16383.0  # outer bound: the Dynamixel Position P Gain register range (MX allows kp ≤ 16383/16)
#: The unit of every `kp`: the firmware law's gain (servo_ff.models.firmware), i.e. what bam's parameter files mean
#: by kp — MX: Protocol 1.0 P units = Position P Gain register / 16; X-series, STS: the register itself.
KP_UNIT = "firmware-law gain (MX: P register/16; X, STS: register)"
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*(/[A-Za-z][A-Za-z0-9_]*)*$")


def servo_interface_specs(
    default_joints: Sequence[str] = ("joint_1",), rate_hz: float = 500.0, kp: float = 32.0
) -> list[ParamSpec]:
    return [
        ParamSpec(
            "joints", list(default_joints), "joint names; order of Float64MultiArray goals and gains", read_only=True
        ),
        ParamSpec(
            "prefix",
            "servo",
            "name of this servo interface: topics and services are <prefix>/commands, "
            "<prefix>/joint_trajectory, <prefix>/joint_command, <prefix>/p_gains, <prefix>/torque_enable, "
            "<prefix>/torque_enabled, <prefix>/reboot (relative: under the node's namespace)",
            read_only=True,
        ),
        ParamSpec(
            "autostart",
            True,
            "configure and activate at start-up (false: wait for a lifecycle manager)",
            read_only=True,
        ),
        ParamSpec("rate_hz", float(rate_hz), "publication / control rate", "Hz", lo=1.0, hi=2000.0, read_only=True),
        ParamSpec(
            "kp",
            [float(kp)],
            "firmware position P gain (also set by <prefix>/p_gains); not given: the servo's default gain, one rule "
            "for sim and hardware (servo_ff.bus.default_gain): the firmware kp of the preset modelling the servo "
            "(sim: of actuator_file), else its control table's factory P gain (hardware: one line says which)",
            KP_UNIT,
            lo=0.0,
            hi=KP_MAX,
            per_joint=True,
        ),
        ParamSpec(
            "position_min",
            [-math.pi],
            "lower joint limit; goals below are refused (not given: the servo type's "
            "position range, its control table's, when it has one)",
            "rad",
            lo=-1e3,
            hi=1e3,
            per_joint=True,
        ),
        ParamSpec(
            "position_max",
            [math.pi],
            "upper joint limit; goals above are refused (not given: the servo type's "
            "position range, its control table's, when it has one)",
            "rad",
            lo=-1e3,
            hi=1e3,
            per_joint=True,
        ),
        *constraint_specs(),
        ParamSpec(
            "diagnostics_period",
            1.0,
            "period of /diagnostics in wall time (steady clock: also while a sim's own time stands still); "
            "a change applies at once",
            "s",
            lo=0.01,
            hi=60.0,
        ),
        ParamSpec(
            "supply_period",
            0.1,
            "period of /servo_supply on the node clock (sim time under use_sim_time); a change applies at once",
            "s",
            lo=0.001,
            hi=60.0,
        ),
        ParamSpec("warn_throttle", 1.0, "minimum time between two warnings of one kind", "s", lo=0.0, hi=3600.0),
    ]


def constraint_specs() -> list[ParamSpec]:
    """Default tolerances of ``<prefix>/follow_joint_trajectory`` (JointTrajectoryController's ``constraints``)."""
    return [
        ParamSpec(
            "constraints.trajectory",
            [0.0],
            "path position tolerance while a FollowJointTrajectory goal runs (0: not enforced)",
            "rad",
            lo=0.0,
            hi=1e3,
            per_joint=True,
        ),
        ParamSpec(
            "constraints.goal",
            [0.0],
            "goal position tolerance at the trajectory's end (0: not enforced)",
            "rad",
            lo=0.0,
            hi=1e3,
            per_joint=True,
        ),
        ParamSpec(
            "constraints.stopped_velocity_tolerance",
            0.01,
            "goal velocity tolerance at the trajectory's end (0: not enforced)",
            "rad/s",
            lo=0.0,
            hi=1e3,
        ),
        ParamSpec(
            "constraints.goal_time",
            0.0,
            "time after the trajectory's end to be within the goal tolerance (0: no limit)",
            "s",
            lo=0.0,
            hi=3600.0,
        ),
        ParamSpec(
            "action_monitor_rate",
            20.0,
            "rate of FollowJointTrajectory feedback (the latest state; outcomes are checked every period)",
            "Hz",
            lo=0.1,
            hi=2000.0,
        ),
    ]


def validate_interface(values: dict[str, Any]) -> str | None:
    joints = joint_names_param(values)
    n = len(joints)
    if "prefix" in values and not _NAME.match(values["prefix"]):
        return (
            f"prefix={values['prefix']!r} is not a relative ROS name (letters, digits, '_', tokens separated "
            "by '/', each starting with a letter)"
        )
    lo = per_joint(values["position_min"], n, "position_min")
    hi = per_joint(values["position_max"], n, "position_max")
    if (lo >= hi).any():
        i = int(np.argmax(lo >= hi))
        return f"position_min[{i}]={lo[i]} must be below position_max[{i}]={hi[i]} ({joints[i]})"
    return None
