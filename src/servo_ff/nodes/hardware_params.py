"""The bus parameters of ``servo_hardware_node`` (port, protocol, servo type, ids, timing): their one description."""

from __future__ import annotations

from typing import Any

from servo_ff.bus.default_gain import default_kp
from servo_ff.bus.families import PROTOCOLS
from servo_ff.ros.common import ParamSpec, per_joint

from .servo_interface_params import servo_interface_specs
from .servo_ranges import range_refusal, servo_table


def hardware_specs() -> list[ParamSpec]:
    return [
        ParamSpec("port", "/dev/ttyUSB0", "serial port of the servo bus", read_only=True),
        ParamSpec(
            "protocol",
            "dxl2",
            "bus protocol (servo_ff.bus.bus_interface): dxl2 Dynamixel 2.0, dxl1 Dynamixel 1.0, sts Feetech",
            read_only=True,
            choices=PROTOCOLS,
        ),
        ParamSpec("baud", 1000000, "baud rate", "bit/s", lo=9600, hi=10_500_000, read_only=True),
        ParamSpec("ids", [1], "servo ids in `joints` order", lo=0, hi=253, read_only=True),
        ParamSpec("servo", "mx106", "servo type: its control table (servo_ff.bus.control_table)", read_only=True),
        ParamSpec(
            "latency_timer_ms",
            16.0,
            "USB adapter latency timer (reply margin = latency + 2 ms)",
            "ms",
            lo=0.0,
            hi=1000.0,
            read_only=True,
        ),
        ParamSpec(
            "timeout_ms",
            0.0,
            "fixed reply margin after each reply slot (0: latency timer + 2 ms)",
            "ms",
            lo=0.0,
            hi=10000.0,
            read_only=True,
        ),
        ParamSpec("retries", 2, "retries of single-servo transactions", lo=0, hi=20, read_only=True),
        ParamSpec(
            "return_delay",
            0,
            "Return Delay Time written at setup, 2 µs units (-1: leave)",
            lo=-1,
            hi=254,
            read_only=True,
        ),
        ParamSpec("reconnect_period", 1.0, "time between reconnection attempts", "s", lo=0.01, hi=3600.0),
        ParamSpec(
            "stale_cycles", 50, "cycles without any valid reply before the bus counts as disconnected", lo=1, hi=100000
        ),
        ParamSpec("health_period", 0.5, "period of the voltage / temperature / error read", "s", lo=0.01, hi=3600.0),
        ParamSpec(
            "max_reply_age",
            0.5,
            "a servo silent longer than this is reported at ERROR and aborts a follow_joint_trajectory goal naming "
            "its joint",
            "s",
            lo=0.001,
            hi=3600.0,
        ),
        ParamSpec(
            "missing_ids",
            "fail",
            "an id silent at configure, or one whose set-up refuses its Operating Mode or Min/Max Position Limit: "
            "fail (configure fails, retried under autostart) or continue (its joint is NaN in joint_states and "
            "refuses goals, torque off; a silent one until it answers, probed every reconnect_period; a refused one "
            "until configure again, not probed)",
            read_only=True,
            choices=("fail", "continue"),
        ),
        ParamSpec(
            "on_exit",
            "hold",
            "at process exit / SIGINT / destroy while torque is on: hold (torque left on, goal held) or torque_off "
            "(hold the present position, then torque off)",
            choices=("hold", "torque_off"),
        ),
        ParamSpec("temperature_limit", 70.0, "servo temperature limit (diagnostics)", "°C", lo=0.0, hi=200.0),
        ParamSpec("temperature_warn_s", 60.0, "warn when the limit is predicted nearer than this", "s", lo=0.0, hi=1e6),
        ParamSpec(
            "thermal_time_constant",
            600.0,
            "R_th·C of the servo's winding model: T_∞ = T + τ·dT/dt from the measured trend",
            "s",
            lo=1.0,
            hi=1e6,
            read_only=True,
        ),
    ]


def parameter_specs() -> list[ParamSpec]:
    """Every parameter ``servo_hardware_node`` declares, in declaration order: the servo interface, then the bus."""
    return servo_interface_specs(kp=default_kp("mx106")[0]) + hardware_specs()  # kp: the default servo's


def hardware_refusal(values: dict[str, Any], bus=None, limits: bool = True) -> str | None:
    """Why the hardware node's parameter set ``values`` (the interface's own checks passed) cannot be applied, or
    None: ids against joints, ``servo`` against ``protocol``, then the servo type's ranges as a sim checks them
    (:func:`.servo_ranges.range_refusal`: ``kp`` within the P gain range, and with ``limits`` the joint limits within
    the position range: the bus refuses wider ones at open, the node could never connect) and, with the ``bus``
    open, each servo's Min/Max Position Limit read at set-up (the bus would refuse every goal)."""
    joints, ids = values["joints"], values["ids"]
    if len(ids) != len(joints):
        return f"ids has {len(ids)} entries for {len(joints)} joints"
    if len(set(ids)) != len(ids):
        return f"ids contains duplicates: {ids}"
    try:
        table = servo_table(values["servo"], required=True)
    except KeyError as e:
        return str(e.args[0])
    if table.protocol != values["protocol"]:
        return f"servo {values['servo']} ({table.name}) speaks protocol {table.protocol}, not {values['protocol']}"
    refusal = range_refusal(values, table, limits)
    if refusal or not limits or bus is None or list(ids) != list(bus.config.ids):
        return refusal
    lo = per_joint(values["position_min"], len(joints), "position_min")
    hi = per_joint(values["position_max"], len(joints), "position_max")
    return bus.joint_limits_refusal({i: (float(lo[k]), float(hi[k])) for k, i in enumerate(ids)})
