"""The servo interface shared by ``servo_sim_node`` and ``servo_hardware_node``: a managed (lifecycle) node.

Publishes ``joint_states`` (rad, rad/s, N·m; every configured joint in every message), ``servo_supply``
(BatteryState voltage) and ``/diagnostics``; takes goal positions as Float64MultiArray (``<prefix>/commands``,
``joints`` order), JointTrajectory (``<prefix>/joint_trajectory``, followed with JointTrajectoryController
semantics, :mod:`servo_ff.interpolation`) or JointState (``<prefix>/joint_command``, by name), P gains as a
per-joint parameter ``kp`` or live on ``<prefix>/p_gains`` (reflected in ``kp``); services
``<prefix>/torque_enable`` (SetBool) and ``<prefix>/reboot`` (Trigger); the torque state on the latched
``<prefix>/torque_enabled`` (Bool, :mod:`servo_ff.ros.torque_state`). ``prefix`` (default ``servo``) is a
parameter, so two servo nodes run side by side in one namespace. ``/diagnostics`` come every ``diagnostics_period``
of wall time (a steady clock: also while a sim owning ``/clock`` has stopped its time), ``servo_supply`` every
``supply_period`` of the node clock (sim time: one per period of the readers' time); a change at run time takes
effect at once. Both are stamped with the node clock.

Lifecycle (``rclpy.lifecycle``): configure = connect (hardware: open the port, scan, set up; a sim: its model;
torque stays off), activate = hold the present position, torque on, goals taken; deactivate = hold, torque off;
inactive, the loop runs without goals (``reads_while_inactive``: the hardware reads the bus, a sim steps its
physics with torque off, both publish); cleanup / shutdown = stop the loop, close. The constructor never enables
torque; ``autostart`` (default true) drives configure → activate once the node spins, for users without a
lifecycle manager. Goals are accepted only while active. Subclasses implement the ``hw_*`` hooks (stepper or
Dynamixel bus).

When ``position_min``/``position_max`` change, a held goal outside the new limits is moved to the nearest limit,
written, logged as a warning and counted in the diagnostics (``goals_moved_by_limit_change``).
"""

from __future__ import annotations

import math

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.clock import Clock, ClockType
from rclpy.lifecycle import LifecycleNode
from sensor_msgs.msg import BatteryState, JointState
from std_msgs.msg import Float64MultiArray, String
from std_srvs.srv import SetBool, Trigger
from trajectory_msgs.msg import JointTrajectory

from servo_ff.ros.cdr_template import CdrTemplate, all_finite
from servo_ff.ros.common import (
    TOPIC_DIAGNOSTICS,
    TOPIC_JOINT_STATES,
    TOPIC_SUPPLY,
    GoalGate,
    ParameterTable,
    Throttle,
    diag_name,
    hardware_id,
    per_joint,
    servo_names,
)
from servo_ff.ros.ros_logging import forward_core_logs
from servo_ff.ros.servo_lifecycle import ServoLifecycle
from servo_ff.ros.torque_state import TorqueStatePublisher
from servo_ff.ros.trajectory_plan import ActiveTrajectory

from .servo_commands import ServoCommands
from .servo_interface_params import KP_MAX, KP_UNIT, servo_interface_specs, validate_interface  # noqa: F401
from .servo_time_jumps import ServoTimeJumps

JS_HISTORY = 2000  # /joint_states writer history [messages]


class ServoInterfaceNode(ServoCommands, ServoTimeJumps, ServoLifecycle, LifecycleNode):
    """Base node; subclasses call :meth:`_setup_interface` after declaring their parameters."""

    status_name = "servo"
    reads_while_inactive = False  # hardware, sims: the loop reads / steps and publishes (no goal) while inactive

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

    def hw_refresh(self) -> tuple[bool, str]:
        """A fresh reading before activate holds the present position (hardware: one read of the bus)."""
        return True, ""

    def hw_seen(self) -> np.ndarray:
        """Per joint: read at least once since configure (joint_states carries NaN for the others)."""
        return np.ones(self.n, dtype=bool)

    def hw_effort_known(self) -> bool:
        """False when the servo gives no effort (hardware: no torque constant kt): effort NaN is then published."""
        return True

    def hw_absent(self) -> dict[str, str]:
        """Joints not read yet → how to name them (goals naming them are refused)."""
        return {}

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

    def hw_torque_is_on(self) -> bool:
        """Whether torque is on (asked for, on hardware): a torque-on request otherwise holds the present position."""
        raise NotImplementedError

    def hw_supply_voltage(self) -> float:
        raise NotImplementedError

    def hw_tick(self) -> bool:
        """Advance / read the servos once per period; False if no fresh state (nothing published)."""
        return True

    def hw_stamp(self):
        """builtin_interfaces/Time of the state ``hw_tick`` read (default: now)."""
        return self.stamp()

    def hw_states_refusal(self) -> str:
        """Why no state can come now ('' while states come): follow_joint_trajectory rejects goals meanwhile."""
        return ""

    def states_lost(self, why: str) -> None:
        """No state will come for a while (a bus lost, a sim's physics stopped): the trajectory being followed is
        dropped (it is not followed on when states come again) and a follow_joint_trajectory goal aborted."""
        if self.traj is not None:
            self.traj = None
            self.get_logger().warning(f"{why}: the trajectory being followed is stopped")
        if self.fjt is not None and self.fjt.run is not None:
            self.fjt.stopped(why)  # before: no result, or one judged on the last state repeated

    def hw_diagnostics(self) -> list[DiagnosticStatus]:
        return []

    def autostart_retry_period(self) -> float:
        return 1.0

    # ------------------------------------------------------------------ setup
    def _setup_interface(self, table: ParameterTable) -> None:
        self.table = table
        forward_core_logs(self)  # the bus / physics layer's Python logging reaches /rosout
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
        self.traj: ActiveTrajectory | None = None  # followed from its receipt (a future header.stamp too: JTC)
        self.trajectories = 0  # accepted trajectories
        self.timer = None
        self._steady = Clock(clock_type=ClockType.STEADY_TIME)
        zeros = [0.0] * self.n
        self._js = CdrTemplate(  # every joint, every period: serialized once, stamp and arrays written in place
            JointState(name=self.joints, position=zeros, velocity=zeros, effort=zeros),
            ["position", "velocity", "effort"],
        )
        # reliable KEEP_LAST: a sample a reader has not acknowledged yet is lost once this many newer ones went
        # out; a sim running as fast as it can sends kHz of wall time while the reader's DDS thread waits for a core
        self.pub_js = self.create_publisher(JointState, TOPIC_JOINT_STATES, JS_HISTORY)
        self.pub_supply = self.create_publisher(BatteryState, TOPIC_SUPPLY, 10)
        self.pub_diag = self.create_publisher(DiagnosticArray, TOPIC_DIAGNOSTICS, 10)
        nm = self.names
        self.pub_traj_status = self.create_publisher(String, nm["trajectory_status"], 10)
        self.create_subscription(Float64MultiArray, nm["commands"], self._on_commands, 10)
        self.create_subscription(JointTrajectory, nm["joint_trajectory"], self._on_trajectory, 10)
        self.create_subscription(JointState, nm["joint_command"], self._on_joint_command, 10)
        self.create_subscription(Float64MultiArray, nm["p_gains"], self._on_p_gains, 10)
        self.create_service(SetBool, nm["torque_enable"], self._on_torque_enable)
        self.torque_state = TorqueStatePublisher(self, nm["torque_enabled"])
        self.create_service(Trigger, nm["reboot"], self._on_reboot)
        # diagnostics on the steady clock: they keep coming while a sim owning /clock stopped its time (unconfigured,
        # refused state); the supply on the node clock: a reader on sim time gets one every supply_period of its
        # time, whatever the real-time factor (on wall time, at rtf 10, 1 s of sim time between two)
        self._supply_timer = self._diag_timer = None
        self._periodic("supply_period", quiet=True)
        self._periodic("diagnostics_period", quiet=True)
        self.fjt = self.djs = None  # ros2_control interfaces: need control_msgs (tools/build_interfaces.py)
        try:
            from servo_ff.ros.dynamic_joint_states import DynamicJointStates
            from servo_ff.ros.follow_trajectory_action import FollowTrajectoryAction
        except ImportError as e:
            self.get_logger().warning(f"no {nm['follow_joint_trajectory']}, no /dynamic_joint_states: {e}")
        else:
            self.fjt, self.djs = FollowTrajectoryAction(self), DynamicJointStates(self, self.joints)
        self._jump = None
        self._watch_clock()
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
                self.traj = None
                self.hw_write_goal(self.gate.goal.copy())
                for line in moved:
                    self.get_logger().warning(f"joint limits changed: {line}")
        if "kp" in changed:
            self.kp = per_joint(v["kp"], self.n, "kp")
            self.hw_write_kp(self.kp)
        if "warn_throttle" in changed:
            self.throttle.period = v["warn_throttle"]
        for name in sorted(changed & {"diagnostics_period", "supply_period"}):
            self._periodic(name)

    def _periodic(self, name: str, quiet: bool = False) -> None:
        """(Re)create the /diagnostics timer (steady clock) or the servo_supply timer (node clock) with the period
        ``name`` gives."""
        attr, callback, clock = {
            "diagnostics_period": ("_diag_timer", self._publish_diagnostics, self._steady),
            "supply_period": ("_supply_timer", self._publish_supply, None),
        }[name]
        if getattr(self, attr) is not None:
            self.destroy_timer(getattr(self, attr))
        setattr(self, attr, self.create_timer(self.table[name], callback, clock=clock))
        if not quiet:
            time_base = "wall time" if clock is self._steady else "the node clock"
            self.get_logger().info(f"{name}: {self.table[name]:g} s of {time_base} from now on")

    def hw_fresh(self) -> np.ndarray:
        """Per joint: the present reading is this cycle's (hardware overrides it; a sim's always is)."""
        return np.ones(self.n, dtype=bool)

    def _hold_present(self, running: bool = False) -> None:
        """Goal = present position (within the limits), written; any trajectory dropped. ``running`` (deactivate,
        shutdown of an active node): a joint whose reading is not fresh (a silent servo) keeps the goal it was
        heading for — its last reading is old, and holding there would move it back."""
        self.traj = None
        pos = np.asarray(self.hw_read()[0], dtype=np.float64)
        if running:
            pos = np.where(self.hw_fresh(), pos, self.gate.goal)
        goal = np.clip(np.where(np.isfinite(pos), pos, self.gate.goal), self.gate.lower, self.gate.upper)
        clipped = np.isfinite(pos) & (goal != pos)  # a joint not read (NaN) keeps its goal: nothing to say
        if clipped.any():
            self.get_logger().warning(
                f"present position {pos.tolist()} is outside the joint limits ("
                + ", ".join(self.joints[k] for k in np.flatnonzero(clipped))
                + f"); holding the nearest limit {goal.tolist()}"
            )
        self.gate.goal = goal
        self.hw_write_goal(goal.copy())

    def destroy_node(self) -> None:
        self._stop_loop()
        if getattr(self, "fjt", None) is not None:
            self.fjt.destroy()  # a waitable: Node.destroy_node does not destroy it
        if getattr(self, "configured", False):
            try:
                self.hw_cleanup()  # close the port (hardware: torque as `on_exit` left it)
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

    # ------------------------------------------------------------------ publication
    def _tick(self) -> None:
        self.follow_trajectory(self.now_s())
        ticked = self.hw_tick()
        self.publish_torque_state()  # a protective shutdown, a brown-out seen by the health read, its restore
        if not ticked:
            return
        self.publish_state(self.hw_stamp())

    def hw_stale(self) -> np.ndarray | None:
        """Per joint: read before but not this cycle (hardware: a silent servo); None when every joint is fresh."""
        return None

    def hw_silent_too_long(self, among: np.ndarray | None = None) -> str:
        """The stale joints (of ``among``, (J,) bool; None: all) silent longer than the node's staleness bound,
        said ("": none; a sim's never are)."""
        return ""

    def publish_state(self, stamp) -> bool:
        """One /joint_states message with every joint; NaN everywhere for a joint not read since configure, NaN
        velocity and effort for one read before but not this cycle (its last position kept, as consumers need
        every joint, as joint_state_broadcaster); /dynamic_joint_states too, every interface. Effort NaN of a servo
        giving none (:meth:`hw_effort_known`) is published: freshness is the reading's."""
        pos, vel, eff = self.hw_read()
        if not all_finite(pos, vel, eff):
            seen = self.hw_seen()
            effort = eff[seen] if self.hw_effort_known() else 0.0
            if not (np.isfinite(pos[seen]).all() and np.isfinite(vel[seen]).all() and np.isfinite(effort).all()):
                return False
        stale = self.hw_stale()
        if stale is not None:  # never the last velocity / effort under a fresh stamp
            vel, eff = np.where(stale, math.nan, vel), np.where(stale, math.nan, eff)
        sec, nanosec = stamp.sec, stamp.nanosec
        js = self._js
        js.set_stamp(sec, nanosec)
        js.block(0)[:], js.block(1)[:], js.block(2)[:] = pos, vel, eff
        js.publish(self.pub_js)
        self.ticks += 1
        if self.fjt is not None:
            self.fjt.update(sec + nanosec * 1e-9, pos, vel)
            if self.djs.listened():  # nobody listening: no interfaces gathered
                extra = self.hw_state_interfaces()  # a stale joint's (temperature, voltage) never as fresh either
                if stale is not None:
                    extra = {name: np.where(stale, math.nan, x) for name, x in extra.items()}
                self.djs.publish(stamp, {"position": pos, "velocity": vel, "effort": eff, **extra})
        return True

    def hw_supply_stamp(self):
        """builtin_interfaces/Time of the reading ``hw_supply_voltage`` gives (None: now, a voltage read each call)."""
        return None

    def hw_state_interfaces(self) -> dict[str, np.ndarray]:
        """State interfaces (J,) besides position, velocity and effort, for /dynamic_joint_states."""
        return {}

    def _publish_supply(self) -> None:
        if not self.configured:
            return
        msg = BatteryState()
        msg.header.stamp = self.hw_supply_stamp() or self.stamp()  # the voltage's reading, not the republish
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
        now = g.clock()
        age = now - g.last_accept_time
        recent = now - g.last_reject_time < max(self.table.values["diagnostics_period"], 1.0)
        level = DiagnosticStatus.WARN if recent else DiagnosticStatus.OK
        following = "idle"
        if self.traj is not None:
            following = f"following a trajectory until {self.traj.end:.3f} s"
        return DiagnosticStatus(
            level=level,
            name=diag_name(self, "goals"),
            hardware_id=hardware_id(self, self.status_name),
            message=f"{g.rejected} goal message(s) rejected" + (f", last: {g.last_reason}" if g.rejected else ""),
            values=[
                KeyValue(key="lifecycle_state", value=self.state_label),
                KeyValue(key="prefix", value=self.table["prefix"]),
                KeyValue(key="accepted", value=str(g.accepted)),
                KeyValue(key="rejected", value=str(g.rejected)),
                KeyValue(key="goal_age_s", value=f"{age:.3f}" if math.isfinite(age) else "never"),
                KeyValue(key="trajectory", value=following),
                KeyValue(key="goals_moved_by_limit_change", value=str(g.limit_moves)),
                KeyValue(key="trajectory_samples_held_at_limits", value=str(g.held_samples)),
                KeyValue(key="published_states", value=str(self.ticks)),
            ],
        )

    def _publish_diagnostics(self) -> None:
        msg = DiagnosticArray()
        msg.header.stamp = self.stamp()
        msg.status = [self.interface_status(), *self.hw_diagnostics()]
        self.pub_diag.publish(msg)


__all__ = ["KP_MAX", "ActiveTrajectory", "ServoInterfaceNode", "servo_interface_specs", "validate_interface"]
