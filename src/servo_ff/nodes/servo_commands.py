"""What the servo interface (:mod:`.servo_base`) takes: goal positions (``<prefix>/commands`` by ``joints``
order, ``<prefix>/joint_command`` by name with optional velocity / effort limits), JointTrajectory goals
(``<prefix>/joint_trajectory``, followed with JointTrajectoryController semantics; ``<prefix>/trajectory_status``
says what became of each), P gains (``<prefix>/p_gains``, through the ``kp`` parameter), and the
``<prefix>/torque_enable`` and ``<prefix>/reboot`` services; it publishes the torque state on the latched
``<prefix>/torque_enabled`` (:mod:`servo_ff.ros.torque_state`). Goals only while active, with torque on and states
coming (as follow_joint_trajectory: :meth:`ServoCommands.goal_refusal`); a refusal is one throttled line and a count
in the diagnostics.

A mixin of :class:`~.servo_base.ServoInterfaceNode` (uses its gate, throttle, names and ``hw_*`` hooks).
"""

from __future__ import annotations

import json

import numpy as np
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from std_srvs.srv import SetBool, Trigger
from trajectory_msgs.msg import JointTrajectory

from servo_ff.ros.common import throttle_key
from servo_ff.ros.trajectory_plan import ActiveTrajectory, plan_trajectory

from .servo_interface_params import KP_MAX


class ServoCommands:
    """Goal, trajectory, gain, torque and reboot callbacks of a servo interface node."""

    # ------------------------------------------------------------------ goal callbacks
    def goal_refusal(self, names=(), goal: bool = True) -> tuple[str, str] | None:
        """Why a goal naming ``names`` cannot be taken now, as (kind, reason); None when it can: not active
        (lifecycle), and for a position ``goal``: no states (a sim's physics stopped, the hardware's bus lost) or
        a joint named with torque off (the limp servos follow nothing: a later torque on holds where they stand,
        the goal would be lost); a joint not read since configure. The topics and follow_joint_trajectory refuse
        the same."""
        if not self.active:
            return "inactive", (
                f"the node is {self.state_label}, not active (lifecycle); goals are accepted once it is activated"
            )
        if goal and (lost := self.hw_states_refusal()):
            return "lost", lost
        torque_off = self.hw_torque_off() if goal else np.zeros(self.n, dtype=bool)
        named = [j for j in names if j in self.gate.index]
        off = [j for j in named if torque_off[self.gate.index[j]]]
        if off and len(off) == len(named):  # torque off by request: every joint; a protective shutdown: its joint —
            # a goal naming others too is taken (the shut-down servo stays off until torque_enable, which holds it)
            where = "" if torque_off.all() else f" on {', '.join(off)}"
            return "torque", (
                f"torque is off{where}: the limp servos follow nothing ({self.names['torque_enable']} true first)"
            )
        hit = self.absent_joints(names)
        if hit:
            return "absent", f"{', '.join(hit)} not read yet (missing since configure); refused until it answers"
        return None

    def _refuse_goal(self, source: str, names=(), goal: bool = True) -> bool:
        """Refuse (True, one throttled line, counted) a goal :meth:`goal_refusal` refuses."""
        refusal = self.goal_refusal(names, goal)
        if refusal is not None:
            self.gate._reject(source, *refusal)
        return refusal is not None

    def absent_joints(self, names) -> list[str]:
        """How to name each of ``names`` not read since configure (goals naming them are refused)."""
        absent = self.hw_absent()
        return [absent[j] for j in names if j in absent]

    def _accept(self, goal: np.ndarray | None) -> None:
        if goal is not None:
            self.traj = None  # a direct goal ends any trajectory being followed
            self.hw_write_goal(goal)

    def _on_commands(self, msg: Float64MultiArray) -> None:
        if not self._refuse_goal(self.names["commands"], self.joints):
            self._accept(self.gate.from_array(msg.data, self.names["commands"]))

    def _on_joint_command(self, msg: JointState) -> None:
        """Position goal by name (an empty ``position`` sends none); ``velocity`` / ``effort``, when given, are
        limits of the motion: :meth:`hw_command_limits`."""
        source = self.names["joint_command"]
        limits_only = not len(msg.position) and bool(len(msg.velocity) or len(msg.effort))
        if self._refuse_goal(source, msg.name, goal=not limits_only):  # limits alone: taken with torque off too
            return
        if not len(msg.name):  # before: taken as a goal (the held one), which ended the trajectory being followed
            return self.gate._reject(source, "names", "no joint named: an empty JointState commands nothing")
        if len(msg.velocity) or len(msg.effort):
            for field, values in (("velocity", msg.velocity), ("effort", msg.effort)):
                if len(values) and len(values) != len(msg.name):
                    self.gate._reject(source, "length", f"{len(msg.name)} names but {len(values)} {field} values")
                    return
            unknown = [n for n in msg.name if n not in self.gate.index]
            if unknown:
                self.gate._reject(source, "names", f"unknown joint name(s) {unknown}; known: {', '.join(self.joints)}")
                return
            if len(set(msg.name)) != len(msg.name):  # before: limits-only, applied in turn (the last one won)
                self.gate._reject(source, "names", "duplicate joint names")
                return
        goal = None
        if len(msg.position) or not (len(msg.velocity) or len(msg.effort)):
            goal = self.gate.from_names(msg.name, msg.position, source)
            if goal is None:  # refused whole: its limits too (before: a refused message still set its speed limit)
                return
        if len(msg.velocity) or len(msg.effort):
            self.hw_command_limits(list(msg.name), list(msg.velocity), list(msg.effort), source)
        self._accept(goal)

    def hw_command_limits(self, names: list[str], velocity: list[float], effort: list[float], source: str) -> None:
        """Velocity [rad/s] / effort [N·m] limits of the named joints (empty list: not given); a backend without
        such limits refuses them with one line (the position goal still applies)."""
        given = " and ".join(f for f, v in (("velocity", velocity), ("effort", effort)) if v)
        self.refuse_limits(source, f"{given} refused: the {self.status_name} servos have no {given} limit")

    def refuse_limits(self, source: str, reason: str) -> None:
        """One (throttled) warning for refused velocity / effort limits, counted as a rejection."""
        self.gate.record(source, reason)
        self.throttle(f"{source}:limits", self.get_logger().warning, f"{source}: {reason}")

    def _on_trajectory(self, msg: JointTrajectory) -> None:
        source = self.names["joint_trajectory"]
        now = self.now_s()
        if self._refuse_goal(source, msg.joint_names):
            self._trajectory_status(msg, now, None, self.gate.last_reason)
            return
        try:
            traj = self.plan_trajectory(msg, now)
        except ValueError as e:
            self.gate._reject(source, "trajectory", f"trajectory refused whole: {e}")
            self._trajectory_status(msg, now, None, str(e))
            return
        traj.source = source
        self.traj = traj  # on receipt, a future stamp too (JTC); before, a pending one waited for its stamp while
        # the old one ran on, and the next message replaced it first: a stream stamped ahead was never followed
        self.gate.count_accept()  # counted once it is followed (a reader that sees the count sees it)
        self.trajectories += 1
        self._trajectory_status(msg, now, traj, "")

    def _trajectory_status(self, msg: JointTrajectory, now: float, traj: ActiveTrajectory | None, reason: str) -> None:
        """``<prefix>/trajectory_status``: what became of one JointTrajectory, keyed by its header.stamp. ``late_s``
        > 0: it arrived after its start, and is followed from the time of reception (its points due before
        are skipped, as in JointTrajectoryController): a sender that times a whole motion on the stamp (the ILC
        node) learns that it did not run as sent."""
        status = {
            "stamp_ns": msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec,
            "joints": list(msg.joint_names),
            "accepted": traj is not None,
            "received_ns": int(round(now * 1e9)),
            "reason": reason,
        }
        if traj is not None:
            status |= {"start_ns": int(round(traj.start * 1e9)), "late_s": max(now - traj.start, 0.0)}
        self.pub_traj_status.publish(String(data=json.dumps(status)))

    def plan_trajectory(self, msg: JointTrajectory, now: float) -> ActiveTrajectory:
        """:func:`servo_ff.ros.trajectory_plan.plan_trajectory` received at ``now`` [s], replacing this node's
        state then (the trajectory followed, else the held goal)."""
        return plan_trajectory(msg, now, self.gate, self.joints, self.traj)

    def follow_trajectory(self, t: float) -> None:
        """Goal of the trajectory being followed at time ``t`` [s], written (called before each control step)."""
        if self.traj is None:
            return
        goal = self.gate.hold_sample(self.traj.spline.position(t), self.traj.source)
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
            # through the parameter: `kp` always tells the gains applied (its callback validates and writes); the
            # class's own set_parameters, not the node's logging wrapper: a refusal is one line, the topic's below
            kp_param = Parameter("kp", Parameter.Type.DOUBLE_ARRAY, kp.tolist())
            result = type(self).set_parameters(self, [kp_param])[0]
            if not result.successful:
                reason = result.reason
        if reason:  # the latest refusal in the diagnostics (before: only counted, the status named an older one)
            self.gate.record(source, reason)
            self.throttle(
                throttle_key(source, reason),
                self.get_logger().warning,
                f"P gains on {source} rejected: {reason}; keeping {self.kp.tolist()}",
            )

    def _shut_down(self) -> str:
        """Why a service has nothing to act on ('' while it has): a finalized node (lifecycle shutdown) is done."""
        return "the node is finalized (lifecycle shutdown): nothing done" if self.state_label == "finalized" else ""

    def not_connected(self) -> str:
        """Why torque_enable / reboot have no servo to act on ('' while configured): finalized, or unconfigured
        (before configure and after cleanup: the hardware's port is closed; a sim answers the same)."""
        if self._shut_down() or self.configured:
            return self._shut_down()
        return f"the node is {self.state_label} (lifecycle): no servo is connected until configure, nothing written"

    def _on_torque_enable(self, request: SetBool.Request, response: SetBool.Response) -> SetBool.Response:
        if self.not_connected():  # before: an unconfigured sim switched its torque (the hardware refused)
            response.success, response.message = False, self.not_connected()
        elif request.data and not self.active:
            response.success = False
            response.message = (
                f"the node is {self.state_label}: torque is enabled by activating it (lifecycle transition activate)"
            )
        elif request.data and not self.hw_torque_is_on():
            response.success, response.message = self._torque_on_where_it_stands()
        elif request.data:
            response.success, response.message = self.hw_torque(True)
        else:
            response.success, response.message = self._torque_off()
        self.publish_torque_state()
        self.get_logger().info(f"torque {'enable' if request.data else 'disable'}: {response.message}")
        return response

    def hw_torque_off(self) -> np.ndarray:
        """Per joint: torque off (goals naming it are refused); hardware: also a servo's protective shutdown."""
        return np.full(self.n, not self.hw_torque_is_on())

    def hw_torque_all_on(self) -> bool:
        """Whether the torque of every servo read is on now, as far as the node knows (``<prefix>/torque_enabled``);
        the hardware node also counts a servo that rebooted by itself as off until its torque is restored."""
        return bool(self.configured and self.hw_torque_is_on())

    def publish_torque_state(self, on: bool | None = None, force: bool = False) -> None:
        """``<prefix>/torque_enabled`` := ``on`` (None: :meth:`hw_torque_all_on`), published when it changed or
        ``force`` (configure). Called on every transition, torque service and control cycle."""
        pub = getattr(self, "torque_state", None)
        if pub is not None:  # (a transition before the interface is set up: nothing to publish on)
            pub.update(self.hw_torque_all_on() if on is None else on, force)

    def _torque_off(self) -> tuple[bool, str]:
        """Torque off (the ``torque_enable`` service): the limp servos follow nothing, as on deactivate: the
        trajectory being followed is dropped and a follow_joint_trajectory goal aborted first, said in the reply
        (before: the trajectory went on writing goals and the goal was judged a success). Nothing is held: a later
        torque on holds where the joints stand."""
        dropped = ["the trajectory being followed"] if self.traj is not None else []
        self.traj = None
        if self.fjt is not None and self.fjt.run is not None:
            self.fjt.torque_off()
            dropped.append("the follow_joint_trajectory goal (aborted)")
        ok, msg = self.hw_torque(False)
        return ok, msg + (f"; dropped {' and '.join(dropped)}" if dropped else "")

    def _torque_on_where_it_stands(self) -> tuple[bool, str]:
        """Torque on after it was off (the ``torque_enable`` service): the joints may have moved meanwhile (fallen),
        so they are read afresh and held where they stand, within the limits, as activate does; the trajectory
        being followed goes (a follow_joint_trajectory goal is aborted). Before, the held goal was written: the
        joints snapped back to it."""
        ok, msg = self.hw_refresh()
        if not ok:
            return False, msg
        if self.fjt is not None and self.fjt.run is not None:
            self.fjt.torque_restored()
        self._hold_present()
        ok, msg = self.hw_torque(True)
        return ok, f"{msg}, holding the present position {self.gate.goal.round(4).tolist()} rad" if ok else msg

    def _on_reboot(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        if self.not_connected():  # before: an unconfigured sim rebooted and rewrote its goal
            response.success, response.message = False, self.not_connected()
        else:
            response.success, response.message = self.hw_reboot()
        if response.success:  # hold where the servos stand (torque off), within the limits, said if clipped
            self._hold_present()
        self.publish_torque_state()  # off now (a sim's loop never publishes it; the hardware's would next cycle)
        self.get_logger().info(f"reboot: {response.message}")
        return response
