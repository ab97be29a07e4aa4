"""The servo interface shared by ``servo_sim_node`` and ``servo_hardware_node``: a managed (lifecycle) node.

Publishes ``joint_states`` (rad, rad/s, N·m; every configured joint in every message), ``servo_supply``
(BatteryState voltage) and ``/diagnostics``; takes goal positions as Float64MultiArray (``<prefix>/commands``,
``joints`` order), JointTrajectory (``<prefix>/joint_trajectory``, followed with JointTrajectoryController
semantics, :mod:`servo_ff.interpolation`) or JointState (``<prefix>/joint_command``, by name), P gains as a
per-joint parameter ``kp`` or live on ``<prefix>/p_gains`` (reflected in ``kp``); services
``<prefix>/torque_enable`` (SetBool) and ``<prefix>/reboot`` (Trigger). ``prefix`` (default ``servo``) is a
parameter, so two servo nodes run side by side in one namespace.

Lifecycle (``rclpy.lifecycle``): configure = connect (hardware: open the port, scan, set up; torque stays off),
activate = hold the present position, torque on, start the control loop; deactivate = hold, torque off, stop
the loop; cleanup / shutdown = close. The constructor never enables torque; ``autostart`` (default true)
drives configure → activate once the node spins, for users without a lifecycle manager. Goals are accepted
only while active. Subclasses implement the ``hw_*`` hooks (stepper or Dynamixel bus).

When ``position_min``/``position_max`` change, a held goal outside the new limits is moved to the nearest limit,
written, logged as a warning and counted in the diagnostics (``goals_moved_by_limit_change``).
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.clock import Clock, ClockType
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn
from rclpy.parameter import Parameter
from sensor_msgs.msg import BatteryState, JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import SetBool, Trigger
from trajectory_msgs.msg import JointTrajectory

from servo_ff.interpolation import JointSpline, follow

from .common import (
    TOPIC_DIAGNOSTICS,
    TOPIC_JOINT_STATES,
    TOPIC_SUPPLY,
    GoalGate,
    ParameterTable,
    ParamSpec,
    Throttle,
    joint_names_param,
    per_joint,
    servo_names,
)

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
            "<prefix>/reboot (relative: under the node's namespace)",
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
            "firmware position P gain (also set by <prefix>/p_gains)",
            KP_UNIT,
            lo=0.0,
            hi=KP_MAX,
            per_joint=True,
        ),
        ParamSpec(
            "position_min",
            [-math.pi],
            "lower joint limit; goals below are refused",
            "rad",
            lo=-1e3,
            hi=1e3,
            per_joint=True,
        ),
        ParamSpec(
            "position_max",
            [math.pi],
            "upper joint limit; goals above are refused",
            "rad",
            lo=-1e3,
            hi=1e3,
            per_joint=True,
        ),
        ParamSpec("diagnostics_period", 1.0, "period of /diagnostics", "s", lo=0.01, hi=60.0),
        ParamSpec("supply_period", 0.1, "period of /servo_supply", "s", lo=0.001, hi=60.0),
        ParamSpec("warn_throttle", 1.0, "minimum time between two warnings of one kind", "s", lo=0.0, hi=3600.0),
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


class ActiveTrajectory:
    """A JointTrajectory being followed: the spline over every joint, from ``start`` [s, node clock]."""

    def __init__(self, start: float, spline: JointSpline, joints: Sequence[str]):
        self.start, self.spline, self.joints = start, spline, list(joints)

    @property
    def end(self) -> float:
        return self.spline.end_time


class ServoInterfaceNode(LifecycleNode):
    """Base node; subclasses call :meth:`_setup_interface` after declaring their parameters."""

    status_name = "servo"

    # ------------------------------------------------------------------ hooks for subclasses
    def hw_configure(self) -> tuple[bool, str]:
        return True, "configured"

    def hw_activate(self) -> tuple[bool, str]:
        """Torque on (the held goal = present position is written first)."""
        return self.hw_torque(True)

    def hw_deactivate(self) -> tuple[bool, str]:
        """Torque off (the present position was written as the goal first)."""
        return self.hw_torque(False)

    def hw_cleanup(self) -> None:
        pass

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

    def autostart_retry_period(self) -> float:
        return 1.0

    # ------------------------------------------------------------------ setup
    def _setup_interface(self, table: ParameterTable) -> None:
        self.table = table
        v = table.values
        self.joints = list(v["joints"])
        self.n = len(self.joints)
        self.names = servo_names(v["prefix"])
        self.throttle = Throttle(v["warn_throttle"])
        table.throttle = self.throttle
        self.gate = GoalGate(
            self.joints,
            per_joint(v["position_min"], self.n, "position_min"),
            per_joint(v["position_max"], self.n, "position_max"),
            goal=np.zeros(self.n),
            warn=self.get_logger().warning,
            throttle=self.throttle,
        )
        self.kp = per_joint(v["kp"], self.n, "kp")
        self.period = 1.0 / v["rate_hz"]
        self.ticks = 0
        self.active = False
        self.configured = False
        self.state_label = "unconfigured"
        self.traj: ActiveTrajectory | None = None
        self.pending: ActiveTrajectory | None = None  # starts later (header.stamp in the future)
        self.trajectories = 0  # accepted trajectories
        self.timer = None
        self._steady = Clock(clock_type=ClockType.STEADY_TIME)
        self._js = JointState(name=self.joints)
        self.pub_js = self.create_publisher(JointState, TOPIC_JOINT_STATES, 100)  # catch-up bursts (sim)
        self.pub_supply = self.create_publisher(BatteryState, TOPIC_SUPPLY, 10)
        self.pub_diag = self.create_publisher(DiagnosticArray, TOPIC_DIAGNOSTICS, 10)
        nm = self.names
        self.create_subscription(Float64MultiArray, nm["commands"], self._on_commands, 10)
        self.create_subscription(JointTrajectory, nm["joint_trajectory"], self._on_trajectory, 10)
        self.create_subscription(JointState, nm["joint_command"], self._on_joint_command, 10)
        self.create_subscription(Float64MultiArray, nm["p_gains"], self._on_p_gains, 10)
        self.create_service(SetBool, nm["torque_enable"], self._on_torque_enable)
        self.create_service(Trigger, nm["reboot"], self._on_reboot)
        self.create_timer(v["supply_period"], self._publish_supply)
        self._diag_timer = self.create_timer(v["diagnostics_period"], self._publish_diagnostics)
        self._autostart_timer = None
        if v["autostart"]:  # transitions run once the node spins: the constructor never enables torque
            self._autostart_timer = self.create_timer(0.01, self._autostart, clock=self._steady)

    def _apply_interface(self, changed: set[str]) -> None:
        v = self.table.values
        if changed & {"position_min", "position_max"}:
            moved = self.gate.set_limits(
                per_joint(v["position_min"], self.n, "position_min"),
                per_joint(v["position_max"], self.n, "position_max"),
            )
            if moved:  # the held goal is re-checked: never left outside the limits, never moved silently
                self.traj = self.pending = None
                self.hw_write_goal(self.gate.goal.copy())
                for line in moved:
                    self.get_logger().warning(f"joint limits changed: {line}")
        if "kp" in changed:
            self.kp = per_joint(v["kp"], self.n, "kp")
            self.hw_write_kp(self.kp)
        if "warn_throttle" in changed:
            self.throttle.period = v["warn_throttle"]

    # ------------------------------------------------------------------ lifecycle
    def _autostart(self) -> None:
        if self._autostart_timer is not None:
            self.destroy_timer(self._autostart_timer)
            self._autostart_timer = None
        if self.state_label == "unconfigured":
            self.trigger_configure()
        if self.state_label == "inactive":
            self.trigger_activate()
        if self.state_label == "unconfigured":  # e.g. the bus is not there yet: retry
            self._autostart_timer = self.create_timer(
                self.autostart_retry_period(), self._autostart, clock=self._steady
            )

    def _transition(self, name: str, body) -> TransitionCallbackReturn:
        try:
            ok, msg = body()
        except Exception as e:  # rclpy would turn an exception into a silent ERROR transition
            ok, msg = False, f"{type(e).__name__}: {e}"
            self.get_logger().error(f"{name} failed: {msg}")
            return TransitionCallbackReturn.ERROR
        if ok:
            self.get_logger().info(f"{name}: {msg}")
            return TransitionCallbackReturn.SUCCESS
        self.throttle(f"lifecycle:{name}", self.get_logger().error, f"{name} failed: {msg}")
        return TransitionCallbackReturn.FAILURE

    def on_configure(self, state: LifecycleState) -> TransitionCallbackReturn:
        def body():
            ok, msg = self.hw_configure()
            if ok:
                self.configured, self.state_label = True, "inactive"
            return ok, msg

        return self._transition("configure", body)

    def _hold_present(self) -> None:
        """Goal = present position (within the limits), written; any trajectory dropped."""
        self.traj = self.pending = None
        pos = np.asarray(self.hw_read()[0], dtype=np.float64)
        goal = np.clip(np.where(np.isfinite(pos), pos, self.gate.goal), self.gate.lower, self.gate.upper)
        if not np.array_equal(goal, pos):
            self.get_logger().warning(
                f"present position {pos.tolist()} is outside the joint limits; holding the "
                f"nearest limit {goal.tolist()}"
            )
        self.gate.goal = goal
        self.hw_write_goal(goal.copy())

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        def body():
            self._hold_present()
            ok, msg = self.hw_activate()
            if ok:
                self.active, self.state_label = True, "active"
                self._start_loop()
            return ok, msg

        return self._transition("activate", body)

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        def body():
            self._stop_loop()
            self.active, self.state_label = False, "inactive"
            self._hold_present()
            return self.hw_deactivate()

        return self._transition("deactivate", body)

    def on_cleanup(self, state: LifecycleState) -> TransitionCallbackReturn:
        def body():
            self.hw_cleanup()
            self.configured, self.state_label = False, "unconfigured"
            return True, "closed"

        return self._transition("cleanup", body)

    def on_shutdown(self, state: LifecycleState) -> TransitionCallbackReturn:
        def body():
            text = "closed"
            if self.active:
                self._stop_loop()
                self.active = False
                self._hold_present()
                text = f"{self.hw_deactivate()[1]}; closed"
            if self.configured:
                self.hw_cleanup()
            self.configured, self.state_label = False, "finalized"
            return True, text

        return self._transition("shutdown", body)

    def on_error(self, state: LifecycleState) -> TransitionCallbackReturn:
        self._stop_loop()
        self.active = False
        try:
            self.hw_cleanup()
        except Exception as e:  # noqa: BLE001 (best effort: back to unconfigured)
            self.get_logger().error(f"cleanup after an error failed: {e}")
        self.configured, self.state_label = False, "unconfigured"
        return TransitionCallbackReturn.SUCCESS

    def _start_loop(self) -> None:
        self._stop_loop()
        self.timer = self.create_timer(self.period, self._tick)

    def _stop_loop(self) -> None:
        if self.timer is not None:
            self.destroy_timer(self.timer)
            self.timer = None

    def destroy_node(self) -> None:
        self._stop_loop()
        if getattr(self, "configured", False):
            try:
                self.hw_cleanup()  # close the port; torque is left as it is (a process exit must not drop a robot)
            except Exception:  # noqa: BLE001
                pass
            self.configured = False
        super().destroy_node()

    # ------------------------------------------------------------------ time
    def now_s(self) -> float:
        """The node's time [s] (ROS clock: sim time under use_sim_time)."""
        return self.get_clock().now().nanoseconds * 1e-9

    def stamp(self):
        return self.get_clock().now().to_msg()

    # ------------------------------------------------------------------ goal callbacks
    def _inactive(self, source: str) -> bool:
        if self.active:
            return False
        self.gate._reject(
            source,
            "inactive",
            f"the node is {self.state_label}, not active (lifecycle); goals are accepted once it is activated",
        )
        return True

    def _accept(self, goal: np.ndarray | None) -> None:
        if goal is not None:
            self.traj = self.pending = None  # a direct goal ends any trajectory being followed
            self.hw_write_goal(goal)

    def _on_commands(self, msg: Float64MultiArray) -> None:
        if not self._inactive(self.names["commands"]):
            self._accept(self.gate.from_array(msg.data, self.names["commands"]))

    def _on_joint_command(self, msg: JointState) -> None:
        if not self._inactive(self.names["joint_command"]):
            self._accept(self.gate.from_names(msg.name, msg.position, self.names["joint_command"]))

    def _on_trajectory(self, msg: JointTrajectory) -> None:
        source = self.names["joint_trajectory"]
        if self._inactive(source):
            return
        try:
            traj = self.plan_trajectory(msg, self.now_s())
        except ValueError as e:
            self.gate._reject(source, "trajectory", f"trajectory refused whole: {e}")
            return
        self.gate.accepted += 1
        self.gate.last_accept_time = time.monotonic()
        self.trajectories += 1
        if traj.start > self.now_s():
            self.pending = traj  # the current one runs until the new one starts
        else:
            self.traj, self.pending = traj, None

    def plan_trajectory(self, msg: JointTrajectory, now: float) -> ActiveTrajectory:
        """Validated JointTrajectory → the spline followed from the current state (JointTrajectoryController
        semantics). ValueError naming the point and joint for anything it refuses."""
        names = list(msg.joint_names)
        if not msg.points:
            raise ValueError("trajectory has no points")
        unknown = [n for n in names if n not in self.gate.index]
        if unknown or not names:
            raise ValueError(
                f"unknown joint name(s) {', '.join(map(repr, unknown)) or '(none given)'}; known: "
                f"{', '.join(self.joints)}"
            )
        if len(set(names)) != len(names):
            raise ValueError("duplicate joint names")
        m, p = len(names), len(msg.points)
        cols = np.array([self.gate.index[n] for n in names], dtype=int)
        q, dq, ddq = np.empty((p, m)), np.zeros((p, m)), np.zeros((p, m))
        hv, ha = np.zeros(p, dtype=bool), np.zeros(p, dtype=bool)
        times = np.empty(p)
        for k, pt in enumerate(msg.points):
            if len(pt.positions) != m:
                raise ValueError(f"point {k} has {len(pt.positions)} positions for {m} joints")
            q[k] = pt.positions
            for arr, has, field, vals in (
                (dq, hv, "velocities", pt.velocities),
                (ddq, ha, "accelerations", pt.accelerations),
            ):
                if len(vals) not in (0, m):
                    raise ValueError(f"point {k} has {len(vals)} {field} for {m} joints")
                if len(vals):
                    arr[k], has[k] = vals, True
            times[k] = pt.time_from_start.sec + pt.time_from_start.nanosec * 1e-9
        for field, arr in (("position", q), ("velocity", dq), ("acceleration", ddq)):
            bad = ~np.isfinite(arr)
            if bad.any():
                k, j = np.argwhere(bad)[0]
                raise ValueError(f"point {k} {field} of {names[j]} is {arr[k, j]} (not finite)")
        if p > 1 and not (np.diff(times) > 0).all():
            k = int(np.argmax(np.diff(times) <= 0)) + 1
            raise ValueError(f"time_from_start is not increasing: point {k} at {times[k]:g} s after {times[k - 1]:g} s")
        lo, hi = self.gate.lower[cols], self.gate.upper[cols]
        out = (q < lo) | (q > hi)
        if out.any():
            k, j = np.argwhere(out)[0]
            raise ValueError(
                f"point {k}: {names[j]}={q[k, j]:.4f} rad is outside its joint limits [{lo[j]:.4f}, {hi[j]:.4f}] rad"
            )
        stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        start = stamp if stamp > 0 else now
        if start + times[-1] < now:
            raise ValueError(f"it ended {now - start - times[-1]:.3f} s ago (header.stamp {stamp:.3f} s)")
        # the current state: the trajectory in progress at the start time, else the held goal at rest
        base = self.pending if self.pending is not None and self.pending.start <= start else self.traj
        if base is not None:
            q0, dq0, ddq0 = base.spline.sample(start)
        else:
            q0, dq0, ddq0 = self.gate.goal.copy(), np.zeros(self.n), np.zeros(self.n)
        held = np.setdiff1d(np.arange(self.n), cols)
        dq0[held] = 0.0
        ddq0[held] = 0.0
        Q, DQ, DDQ = np.tile(q0, (p, 1)), np.zeros((p, self.n)), np.zeros((p, self.n))
        Q[:, cols], DQ[:, cols], DDQ[:, cols] = q, dq, ddq
        spline = follow(start, q0, dq0, ddq0, times, Q, DQ, DDQ, hv, ha)
        where = spline.outside(self.gate.lower, self.gate.upper)
        if where is not None:
            j, t, qv = where
            raise ValueError(
                f"the interpolated path of {self.joints[j]} reaches {qv:.4f} rad at "
                f"{t - start:.3f} s, outside its joint limits [{self.gate.lower[j]:.4f}, "
                f"{self.gate.upper[j]:.4f}] rad"
            )
        return ActiveTrajectory(start, spline, names)

    def follow_trajectory(self, t: float) -> None:
        """Goal of the trajectory being followed at time ``t`` [s], written (called before each control step)."""
        if self.pending is not None and t >= self.pending.start:
            self.traj, self.pending = self.pending, None
        if self.traj is None:
            return
        goal = np.clip(self.traj.spline.sample(t)[0], self.gate.lower, self.gate.upper)
        self.gate.goal = goal
        self.hw_write_goal(goal.copy())
        if t >= self.traj.end:
            self.traj = None  # done: the last point is held

    def _on_p_gains(self, msg: Float64MultiArray) -> None:
        kp = np.asarray(msg.data, dtype=np.float64)
        source = self.names["p_gains"]
        reason = None
        if kp.shape != (self.n,):
            reason = f"{kp.size} gains for {self.n} joints"
        elif not np.isfinite(kp).all() or (kp < 0).any() or (kp > KP_MAX).any():
            i = int(np.argmax(~np.isfinite(kp) | (kp < 0) | (kp > KP_MAX)))
            reason = f"{self.joints[i]} gain {kp[i]} is not finite or outside [0, {KP_MAX}]"
        if reason is None and not np.array_equal(kp, self.kp):
            # through the parameter: `kp` always tells the gains applied (its callback validates and writes)
            result = self.set_parameters([Parameter("kp", Parameter.Type.DOUBLE_ARRAY, kp.tolist())])[0]
            if not result.successful:
                reason = result.reason
        if reason:
            self.gate.rejected += 1
            self.throttle(
                source, self.get_logger().warning, f"P gains on {source} rejected: {reason}; keeping {self.kp.tolist()}"
            )

    def _on_torque_enable(self, request: SetBool.Request, response: SetBool.Response) -> SetBool.Response:
        if request.data and not self.active:
            response.success = False
            response.message = (
                f"the node is {self.state_label}: torque is enabled by activating it (lifecycle transition activate)"
            )
        else:
            response.success, response.message = self.hw_torque(bool(request.data))
        self.get_logger().info(f"torque {'enable' if request.data else 'disable'}: {response.message}")
        return response

    def _on_reboot(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        response.success, response.message = self.hw_reboot()
        pos = self.hw_read()[0]
        self.traj = self.pending = None
        self.gate.goal = np.where(np.isfinite(pos), pos, self.gate.goal)  # hold where the servo stands
        self.get_logger().info(f"reboot: {response.message}")
        return response

    # ------------------------------------------------------------------ publication
    def _tick(self) -> None:
        self.follow_trajectory(self.now_s())
        if not self.hw_tick():
            return
        self.publish_state(self.stamp())

    def publish_state(self, stamp) -> bool:
        """One /joint_states message with every joint (never NaN: nothing is sent before a full state)."""
        pos, vel, eff = self.hw_read()
        if not (np.isfinite(pos).all() and np.isfinite(vel).all() and np.isfinite(eff).all()):
            return False
        js = self._js
        js.header.stamp = stamp
        js.position = np.asarray(pos, dtype=np.float64).tolist()
        js.velocity = np.asarray(vel, dtype=np.float64).tolist()
        js.effort = np.asarray(eff, dtype=np.float64).tolist()
        self.pub_js.publish(js)
        self.ticks += 1
        return True

    def _publish_supply(self) -> None:
        if not self.configured:
            return
        msg = BatteryState()
        msg.header.stamp = self.stamp()
        msg.header.frame_id = self.table["prefix"]
        msg.location = self.table["prefix"]
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
        following = "idle"
        if self.traj is not None:
            following = f"following a trajectory until {self.traj.end:.3f} s"
        return DiagnosticStatus(
            level=level,
            name=f"{self.get_name()}: goals",
            hardware_id=self.status_name,
            message=f"{g.rejected} goal message(s) rejected" + (f", last: {g.last_reason}" if g.rejected else ""),
            values=[
                KeyValue(key="lifecycle_state", value=self.state_label),
                KeyValue(key="prefix", value=self.table["prefix"]),
                KeyValue(key="accepted", value=str(g.accepted)),
                KeyValue(key="rejected", value=str(g.rejected)),
                KeyValue(key="goal_age_s", value=f"{age:.3f}" if math.isfinite(age) else "never"),
                KeyValue(key="trajectory", value=following),
                KeyValue(key="goals_moved_by_limit_change", value=str(g.limit_moves)),
                KeyValue(key="published_states", value=str(self.ticks)),
            ],
        )

    def _publish_diagnostics(self) -> None:
        msg = DiagnosticArray()
        msg.header.stamp = self.stamp()
        msg.status = [self.interface_status(), *self.hw_diagnostics()]
        self.pub_diag.publish(msg)


__all__ = ["KP_MAX", "ActiveTrajectory", "ServoInterfaceNode", "servo_interface_specs", "validate_interface"]
