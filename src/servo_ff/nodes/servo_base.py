"""The servo interface shared by ``servo_sim_node`` and ``servo_hardware_node``.

Publishes ``/joint_states`` (rad, rad/s, N·m), ``/servo_supply`` (BatteryState voltage) and ``/diagnostics``;
takes goal positions as Float64MultiArray (``servo/commands``, ``joints`` order), JointTrajectory
(``servo/joint_trajectory``, first point) or JointState (``servo/joint_command``, by name), P gains as a
per-joint parameter ``kp`` or live on ``servo/p_gains``; services ``servo/torque_enable`` (SetBool) and
``servo/reboot`` (Trigger). Subclasses implement the ``hw_*`` hooks (stepper or Dynamixel bus). When
``position_min``/``position_max`` change, a held goal outside the new limits is moved to the nearest limit,
written, logged as a warning and counted in the diagnostics (``goals_moved_by_limit_change``).
"""
from __future__ import annotations

import math
import time
from typing import Any, Sequence

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.node import Node
from sensor_msgs.msg import BatteryState, JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import SetBool, Trigger
from trajectory_msgs.msg import JointTrajectory

from .common import (SRV_REBOOT, SRV_TORQUE_ENABLE, TOPIC_COMMANDS, TOPIC_DIAGNOSTICS, TOPIC_JOINT_COMMAND,
                     TOPIC_JOINT_STATES, TOPIC_P_GAINS, TOPIC_SUPPLY, TOPIC_TRAJECTORY, GoalGate, ParamSpec,
                     ParameterTable, Throttle, joint_names_param, per_joint)

KP_MAX = 16383.0  # Dynamixel Position P Gain register range


def servo_interface_specs(default_joints: Sequence[str] = ("joint_1",), rate_hz: float = 500.0,
                          kp: float = 32.0) -> list[ParamSpec]:
    return [
        ParamSpec("joints", list(default_joints), "joint names; order of Float64MultiArray goals and gains",
                  read_only=True),
        ParamSpec("rate_hz", float(rate_hz), "publication / control rate", "Hz", lo=1.0, hi=2000.0,
                  read_only=True),
        ParamSpec("kp", [float(kp)], "firmware position P gain", "register units", lo=0.0, hi=KP_MAX,
                  per_joint=True),
        ParamSpec("position_min", [-math.pi], "lower joint limit; goals below are refused", "rad",
                  lo=-1e3, hi=1e3, per_joint=True),
        ParamSpec("position_max", [math.pi], "upper joint limit; goals above are refused", "rad",
                  lo=-1e3, hi=1e3, per_joint=True),
        ParamSpec("diagnostics_period", 1.0, "period of /diagnostics", "s", lo=0.01, hi=60.0),
        ParamSpec("supply_period", 0.1, "period of /servo_supply", "s", lo=0.001, hi=60.0),
        ParamSpec("warn_throttle", 1.0, "minimum time between two warnings of one kind", "s", lo=0.0, hi=3600.0),
    ]


def validate_interface(values: dict[str, Any]) -> str | None:
    joints = joint_names_param(values)
    n = len(joints)
    lo = per_joint(values["position_min"], n, "position_min")
    hi = per_joint(values["position_max"], n, "position_max")
    if (lo >= hi).any():
        i = int(np.argmax(lo >= hi))
        return f"position_min[{i}]={lo[i]} must be below position_max[{i}]={hi[i]} ({joints[i]})"
    return None


class ServoInterfaceNode(Node):
    """Base node; subclasses call :meth:`_setup_interface` after declaring their parameters."""

    status_name = "servo"

    # ------------------------------------------------------------------ hooks for subclasses
    def hw_read(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        raise NotImplementedError

    def hw_write_goal(self, goal: np.ndarray) -> None:
        raise NotImplementedError

    def hw_write_kp(self, kp: np.ndarray) -> None:
        raise NotImplementedError

    def hw_torque(self, enable: bool) -> tuple[bool, str]:
        raise NotImplementedError

    def hw_reboot(self) -> tuple[bool, str]:
        raise NotImplementedError

    def hw_supply_voltage(self) -> float:
        raise NotImplementedError

    def hw_tick(self) -> bool:
        """Advance / read the servos once per period; False if no fresh state (nothing published)."""
        return True

    def hw_diagnostics(self) -> list[DiagnosticStatus]:
        return []

    # ------------------------------------------------------------------ setup
    def _setup_interface(self, table: ParameterTable) -> None:
        self.table = table
        v = table.values
        self.joints = list(v["joints"])
        self.n = len(self.joints)
        self.throttle = Throttle(v["warn_throttle"])
        self.gate = GoalGate(self.joints, per_joint(v["position_min"], self.n, "position_min"),
                             per_joint(v["position_max"], self.n, "position_max"),
                             goal=np.zeros(self.n), warn=self.get_logger().warning, throttle=self.throttle)
        self.kp = per_joint(v["kp"], self.n, "kp")
        self.period = 1.0 / v["rate_hz"]
        self.ticks = 0
        self._last_publish = time.monotonic()
        self._js = JointState(name=self.joints)
        self.pub_js = self.create_publisher(JointState, TOPIC_JOINT_STATES, 10)
        self.pub_supply = self.create_publisher(BatteryState, TOPIC_SUPPLY, 10)
        self.pub_diag = self.create_publisher(DiagnosticArray, TOPIC_DIAGNOSTICS, 10)
        self.create_subscription(Float64MultiArray, TOPIC_COMMANDS, self._on_commands, 10)
        self.create_subscription(JointTrajectory, TOPIC_TRAJECTORY, self._on_trajectory, 10)
        self.create_subscription(JointState, TOPIC_JOINT_COMMAND, self._on_joint_command, 10)
        self.create_subscription(Float64MultiArray, TOPIC_P_GAINS, self._on_p_gains, 10)
        self.create_service(SetBool, SRV_TORQUE_ENABLE, self._on_torque_enable)
        self.create_service(Trigger, SRV_REBOOT, self._on_reboot)
        self.timer = self.create_timer(self.period, self._tick)
        self.create_timer(v["supply_period"], self._publish_supply)
        self._diag_timer = self.create_timer(v["diagnostics_period"], self._publish_diagnostics)

    def _apply_interface(self, changed: set[str]) -> None:
        v = self.table.values
        if changed & {"position_min", "position_max"}:
            moved = self.gate.set_limits(per_joint(v["position_min"], self.n, "position_min"),
                                         per_joint(v["position_max"], self.n, "position_max"))
            if moved:  # the held goal is re-checked: never left outside the limits, never moved silently
                self.hw_write_goal(self.gate.goal.copy())
                for line in moved:
                    self.get_logger().warning(f"joint limits changed: {line}")
        if "kp" in changed:
            self.kp = per_joint(v["kp"], self.n, "kp")
            self.hw_write_kp(self.kp)
        if "warn_throttle" in changed:
            self.throttle.period = v["warn_throttle"]

    # ------------------------------------------------------------------ callbacks
    def _accept(self, goal: np.ndarray | None) -> None:
        if goal is not None:
            self.hw_write_goal(goal)

    def _on_commands(self, msg: Float64MultiArray) -> None:
        self._accept(self.gate.from_array(msg.data, TOPIC_COMMANDS))

    def _on_trajectory(self, msg: JointTrajectory) -> None:
        if not msg.points:
            self.gate._reject(TOPIC_TRAJECTORY, "empty", "trajectory has no points")
            return
        self._accept(self.gate.from_names(msg.joint_names, msg.points[0].positions, TOPIC_TRAJECTORY))

    def _on_joint_command(self, msg: JointState) -> None:
        self._accept(self.gate.from_names(msg.name, msg.position, TOPIC_JOINT_COMMAND))

    def _on_p_gains(self, msg: Float64MultiArray) -> None:
        kp = np.asarray(msg.data, dtype=np.float64)
        reason = None
        if kp.shape != (self.n,):
            reason = f"{kp.size} gains for {self.n} joints"
        elif not np.isfinite(kp).all() or (kp < 0).any() or (kp > KP_MAX).any():
            i = int(np.argmax(~np.isfinite(kp) | (kp < 0) | (kp > KP_MAX)))
            reason = f"{self.joints[i]} gain {kp[i]} is not finite or outside [0, {KP_MAX}]"
        if reason:
            self.gate.rejected += 1
            self.throttle(f"{TOPIC_P_GAINS}", self.get_logger().warning,
                          f"P gains on {TOPIC_P_GAINS} rejected: {reason}; keeping {self.kp.tolist()}")
            return
        if not np.array_equal(kp, self.kp):
            self.kp = kp
            self.hw_write_kp(kp)

    def _on_torque_enable(self, request: SetBool.Request, response: SetBool.Response) -> SetBool.Response:
        response.success, response.message = self.hw_torque(bool(request.data))
        self.get_logger().info(f"torque {'enable' if request.data else 'disable'}: {response.message}")
        return response

    def _on_reboot(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        response.success, response.message = self.hw_reboot()
        pos = self.hw_read()[0]
        self.gate.goal = np.where(np.isfinite(pos), pos, self.gate.goal)  # hold where the servo stands
        self.get_logger().info(f"reboot: {response.message}")
        return response

    # ------------------------------------------------------------------ publication
    def _tick(self) -> None:
        if not self.hw_tick():
            return
        pos, vel, eff = self.hw_read()
        js = self._js
        js.header.stamp = self.get_clock().now().to_msg()
        js.position = pos.tolist()
        js.velocity = vel.tolist()
        js.effort = eff.tolist()
        self.pub_js.publish(js)
        self.ticks += 1

    def _publish_supply(self) -> None:
        msg = BatteryState()
        msg.header.stamp = self.get_clock().now().to_msg()
        v = self.hw_supply_voltage()
        msg.voltage = float(v)
        msg.present = math.isfinite(v)
        for name in ("temperature", "current", "charge", "capacity", "design_capacity", "percentage"):
            setattr(msg, name, math.nan)
        msg.power_supply_status = BatteryState.POWER_SUPPLY_STATUS_UNKNOWN
        self.pub_supply.publish(msg)

    def interface_status(self) -> DiagnosticStatus:
        g = self.gate
        age = time.monotonic() - g.last_accept_time
        recent = time.monotonic() - g.last_reject_time < max(self.table.values["diagnostics_period"], 1.0)
        level = DiagnosticStatus.WARN if recent else DiagnosticStatus.OK
        return DiagnosticStatus(
            level=level, name=f"{self.get_name()}: goals", hardware_id=self.status_name,
            message=f"{g.rejected} goal message(s) rejected" + (f", last: {g.last_reason}" if g.rejected else ""),
            values=[KeyValue(key="accepted", value=str(g.accepted)), KeyValue(key="rejected", value=str(g.rejected)),
                    KeyValue(key="goal_age_s", value=f"{age:.3f}" if math.isfinite(age) else "never"),
                    KeyValue(key="goals_moved_by_limit_change", value=str(g.limit_moves)),
                    KeyValue(key="published_states", value=str(self.ticks))])

    def _publish_diagnostics(self) -> None:
        msg = DiagnosticArray()
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.status = [self.interface_status(), *self.hw_diagnostics()]
        self.pub_diag.publish(msg)
