"""``servo_feedforward_node``: model-based feed-forward (Schwarz & Behnke (Compliant Robot Behavior) Eq. 19) between a
desired trajectory and the servo interface, a thin layer over
:class:`servo_ff.dynamics.feedforward.FeedForwardController`.

Ticks on every ``/joint_states`` message (the servo node's cycle) while it has a desired trajectory (before, the
pose the first goal starts from: :mod:`servo_ff.ros.start_pose`; idle, it stops listening; the trajectory that ends
the idle ticks once at once): samples it now, runs ``FeedForwardController.tick`` (inverse
dynamics rooted at the support foot, or fixed base, → goal positions, URDF limits) and publishes the goals on
``servo/commands`` (``joints`` order), or with ``stamped_goals`` on ``servo/joint_command`` (by name, ``header.stamp``
= the ``/joint_states`` it answers: a lockstep sim matches each goal to its state, :mod:`servo_ff.ros.sim_clock`).
It sets its goal joints' ``kp`` on the servo node (``servo_node``), by joint name, at start, when ``kp`` changes and
when the servo node (re)appears, never periodically (:mod:`servo_ff.ros.servo_gain`). No goal while the servo node's
``servo/torque_enabled`` is false; when it comes on again the goals blend from the pose read again into the
trajectory (:mod:`.feedforward_resume`).

Subscribes: ``feedforward/trajectory`` (JointTrajectory: positions, velocities, accelerations of its points, followed
as by JointTrajectoryController, :mod:`servo_ff.ros.desired_trajectory`: times from ``header.stamp``, or reception
when 0; one that ended refused), ``/joint_states``, ``imu/data`` (sensor_msgs/Imu orientation,
:mod:`servo_ff.ros.imu_input`), ``servo_supply`` (BatteryState voltage; ``u_nominal`` until the first),
``support_coefficient`` (std_msgs/Float64, 1 = left foot; 0.5 until the first, said once:
:mod:`servo_ff.ros.support_input`). Each is held until the next good one; one older than its ``imu_timeout``,
``supply_timeout`` or ``support_timeout`` is reported stale (:mod:`servo_ff.ros.input_age`). A jump back of the
clock drops the desired trajectory and the inputs' ages and reads the pose again (:mod:`servo_ff.ros.clock_jump`).
Parameters: :mod:`.feedforward_params` (``alpha.<joint>`` set by ``servo_fit_node``).

Admissible inputs only: numeric parameters from their rows of the core schema (``servo_ff.models.schema``); a
supply reading below ``min_supply_fraction``·``u_nominal`` is refused and the last good voltage held; a desired
trajectory beyond the joint's URDF velocity limit (else ``max_velocity``) or ``max_acceleration`` is refused and the
previous one kept — each with a warning throttled per kind.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from sensor_msgs.msg import BatteryState, Imu, JointState
from std_msgs.msg import Float64
from trajectory_msgs.msg import JointTrajectory

from servo_ff.ros.cdr_template import all_finite
from servo_ff.ros.clock_jump import FORWARD_JUMP, of_old_time, on_clock_jump_back
from servo_ff.ros.clock_stall import ClockStall
from servo_ff.ros.common import (
    TOPIC_DIAGNOSTICS,
    TOPIC_JOINT_STATES,
    TOPIC_SUPPLY,
    ParameterTable,
    Throttle,
    per_joint,
    spin_node,
    throttle_key,
)
from servo_ff.ros.desired_trajectory import DesiredTrajectory, parse_trajectory
from servo_ff.ros.goal_output import GoalOutput
from servo_ff.ros.imu_input import ImuInput
from servo_ff.ros.input_age import InputAge, reset_ages
from servo_ff.ros.joint_command_cdr import JointStateReader
from servo_ff.ros.robot_description import urdf_file, wait_robot_description
from servo_ff.ros.ros_logging import forward_core_logs
from servo_ff.ros.servo_gain import ServoGainSetter
from servo_ff.ros.start_pose import StartPose
from servo_ff.ros.support_input import SupportInput

from .feedforward_diagnostics import feedforward_status
from .feedforward_params import alpha_base, boot_specs, feedforward_specs, motion_bounds
from .feedforward_resume import TorqueFollow
from .feedforward_unread import UnreadJoints

TOPIC_DESIRED = "feedforward/trajectory"
TOPIC_IMU = "imu/data"
TOPIC_SUPPORT = "support_coefficient"
WAIT_SAID_AFTER = 1.0  # [s] a trajectory waiting longer for a goal joint's reading is said (throttled)


def _dynamics():
    try:
        from servo_ff.dynamics import alpha as alpha_mod
        from servo_ff.dynamics.feedforward import FeedForwardController
        from servo_ff.dynamics.inverse_dynamics import gravity_from_imu
        from servo_ff.dynamics.robot import load_robot
    except ImportError as e:  # the feed-forward core is a separate part of the package
        raise ValueError(f"servo_feedforward_node needs servo_ff.dynamics (pinocchio), not importable: {e}") from None
    return alpha_mod, FeedForwardController, load_robot, gravity_from_imu


class FeedForwardNode(TorqueFollow, Node):
    def __init__(self, name: str = "servo_feedforward", **kwargs: Any):
        super().__init__(name, **kwargs)
        alpha_mod, self._Controller, load_robot, self._gravity_from_imu = _dynamics()
        self._alpha_mod = alpha_mod
        boot = ParameterTable(self, boot_specs(), n_joints=lambda v: None)
        b = boot.values
        xml = b["robot_description"]
        if not (xml.strip() or b["urdf_path"]):  # neither set: the robot_description topic
            xml = wait_robot_description(self, b["robot_description_timeout"])
        self.robot = load_robot(urdf_file(xml, b["urdf_path"]))
        rj = list(self.robot.joint_names)
        self.index = {n: i for i, n in enumerate(rj)}
        joints = [j for j in b["joints"] if j] or rj
        unknown = [j for j in joints if j not in self.index]
        if unknown:
            raise ValueError(f"joints {unknown} are not in the URDF {self.robot.path.name} ({', '.join(rj)})")
        self.joints = joints
        self.out_cols = np.array([self.index[j] for j in joints], dtype=int)
        specs = feedforward_specs(alpha_base(self, b, rj), rj)
        self.table = ParameterTable(
            self, specs, validate=self._validate, apply=self._apply, n_joints=lambda v: len(self.robot.joint_names)
        )
        self.throttle = Throttle(self.table["warn_throttle"])
        self.ctrl = self._controller(self.table.values)
        self.bounds = motion_bounds(self.robot, self.table.values)
        self.q_des, self.dq_des, self.ddq_des = np.zeros(len(rj)), np.zeros(len(rj)), np.zeros(len(rj))
        self.q_des[self.out_cols] = np.nan  # a goal joint's desired: its reading, then the trajectory's
        self.pose = StartPose(self.index, self.out_cols)  # what the first goal starts from
        self.unread = UnreadJoints(self.index, joints)  # which NaN readings stop the goals
        self.traj: DesiredTrajectory | None = None
        self.u_bat: float | None = None
        self.rejected = self.ticks = 0
        self.last_error = self.stream_stopped = ""  # stream_stopped: a trajectory ended moving (WARN until the next)
        self.pub_diag = self.create_publisher(DiagnosticArray, TOPIC_DIAGNOSTICS, 10)
        self.clock_stall = ClockStall()  # its ROS clock standing between two statuses (feedforward_diagnostics)
        self._js_sub = None
        self._js_reader = JointStateReader()  # /joint_states read in place in the layout of the last one
        self._listen_joint_states(True)
        # taken serialized: read vectorised (ros/trajectory_cdr.py), no JointTrajectoryPoint objects built
        self.create_subscription(JointTrajectory, TOPIC_DESIRED, self._on_trajectory, 10, raw=True)
        log = self.get_logger()
        self.imu_input = ImuInput(TOPIC_IMU, self._gravity_from_imu, log.info, log.warning)
        self.create_subscription(Imu, TOPIC_IMU, self._on_imu, 10, raw=True)  # orientation read in place
        self.create_subscription(BatteryState, TOPIC_SUPPLY, self._on_supply, 10)
        held = "the feed-forward holds the last good voltage"
        self.supply_age = InputAge(TOPIC_SUPPLY, "voltage", "voltages", "supply_timeout", held, log.info, log.warning)
        self.support = SupportInput(TOPIC_SUPPORT, self.ctrl.mode == "floating", log.info, log.warning)
        self.create_subscription(Float64, TOPIC_SUPPORT, self._on_support, 10)
        self.gains = ServoGainSetter(self, b["servo_node"], joints)
        self.publish_gains()
        forward_core_logs(self, ("servo_ff.dynamics.feedforward",))  # the core's Python logging reaches /rosout
        self.out = GoalOutput(self, joints, b["stamped_goals"])  # a servo with a hardware error gets no goal
        self.faults = self.out.faults
        self._answering = (0, 0)  # (sec, nanosec) of the /joint_states the next goal answers (0: none)
        self.create_subscription(DiagnosticArray, TOPIC_DIAGNOSTICS, self._on_diagnostics, 10)
        # on the steady clock: a simulation that stops (its /clock with it) leaves no last "ok" standing for ever
        self.create_timer(1.0, self._publish_diagnostics, clock=Clock(clock_type=ClockType.STEADY_TIME))
        # a jump forward too: the desired trajectory sampled after it gave its end point at once
        self._jump = on_clock_jump_back(self, self._drop_old_time, FORWARD_JUMP)
        self._init_torque()  # servo/torque_enabled: no goal while off, a blend from the pose when on again
        kp = self.kp.tolist()
        self.get_logger().info(f"feed-forward on {self.robot.path.name} ({b['mode']} base), goals {joints}, kp {kp}")

    # ------------------------------------------------------------------ parameters
    def _alpha_table(self, v: dict[str, Any]):
        rj = list(self.robot.joint_names)
        dq_s, delta = (per_joint(v[k], len(rj), k) for k in ("stribeck_dq_s", "stribeck_delta"))
        rows = {
            j: {"alpha": list(v[f"alpha.{j}"]), "dq_s": float(dq_s[i]), "delta": float(delta[i])}
            for i, j in enumerate(rj)
        }
        return self._alpha_mod.alpha_table_from_mapping({"joints": rows}, rj, source="parameters alpha.*")

    def _robot_kp(self, v: dict[str, Any]) -> np.ndarray:
        kp = per_joint(v["kp"], len(self.joints), "kp")
        out = np.full(len(self.robot.joint_names), kp[0])
        out[self.out_cols] = kp
        return out

    def _validate(self, v: dict[str, Any]) -> str | None:
        per_joint(v["kp"], len(self.joints), "kp")
        self._alpha_table(v)  # AlphaError (a ValueError) names the key and its admissible range
        motion_bounds(self.robot, v)
        return None

    def _controller(self, v: dict[str, Any]):
        b = self.get_parameters(["mode", "left_foot", "right_foot"])
        return self._Controller(
            self.robot,
            self._alpha_table(v),
            self._robot_kp(v),
            mode=b[0].value,
            left_foot=b[1].value,
            right_foot=b[2].value,
            u_nominal=v["u_nominal"],
            min_supply_fraction=v["min_supply_fraction"],
        )

    def _apply(self, changed: set[str]) -> None:
        v = self.table.values
        rebuild = {"kp", "u_nominal", "min_supply_fraction", "stribeck_dq_s", "stribeck_delta"}
        if changed & (rebuild | {k for k in changed if k.startswith("alpha.")}):
            old = self.ctrl
            self.ctrl = self._controller(v)
            self.ctrl.gravity, self.ctrl.u_bat = old.gravity, old.u_bat
            self.get_logger().info(f"feed-forward parameters updated: {sorted(changed)}")
        if changed & {"max_velocity", "max_acceleration"}:
            self.bounds = motion_bounds(self.robot, v)
        if "kp" in changed:
            self.publish_gains()
        if "warn_throttle" in changed:
            self.throttle.period = v["warn_throttle"]

    @property
    def kp(self) -> np.ndarray:
        return per_joint(self.table["kp"], len(self.joints), "kp")

    @property
    def enabled(self) -> bool:
        return bool(self.table["enabled"])

    # ------------------------------------------------------------------ inputs
    def _warn(self, key: str, text: str) -> None:
        self.last_error = text
        self.rejected += 1  # after its text: a reader that sees the count sees the reason
        self.throttle(throttle_key(key, text), self.get_logger().warning, text)

    def _now(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def _drop_old_time(self) -> str:
        """The clock jumped back, or forward by ``FORWARD_JUMP`` or more: the desired trajectory (the old clock's times)
        and the inputs go (as at start)."""
        waiting = self.traj is not None or self.pose.waiting is not None
        dropped = ["the desired trajectory (no goal until the next one)"] if waiting else []
        self.traj, self.blend, self.stream_stopped = None, None, ""
        self.pose.start_over(self.q_des)  # the pose is read again: the next goal starts where the joints are then
        self._listen_joint_states(True)
        dropped += reset_ages(self.imu_input.age, self.supply_age)
        dropped += [f"the held {TOPIC_SUPPORT} (0.5 assumed)"] if self.support.reset() else []
        self.ctrl.forget_inputs()  # upright, u_nominal: what the diagnostics then say ("none yet …")
        return f"dropped {', '.join(dropped)}" if dropped else ""

    def _on_trajectory(self, msg: JointTrajectory | bytes) -> None:
        idle, now = self.traj is None and self._js_sub is None, self._now()  # idle: the pose taken, no trajectory
        if self.pose.must_wait(now, self.table["pose_max_age"]):  # followed once every goal joint is read again
            if self._parsed(msg, None, None) is not None:  # checked now: a refused one replaces none waiting
                self.pose.wait(msg, now)
                self._listen_joint_states(True)
            return
        self._follow(msg, at_once=idle)

    def _parsed(self, msg: JointTrajectory | bytes, current, q_rest) -> DesiredTrajectory | None:
        """``msg`` checked and read (``parse_trajectory``), or None, refused in a line."""
        try:
            return parse_trajectory(msg, self.index, self._now(), self.bounds, current, q_rest)
        except ValueError as e:
            self._warn("trajectory", f"desired trajectory on {TOPIC_DESIRED} rejected: {e}; keeping the previous one")
            return None

    def _follow(self, msg: JointTrajectory | bytes, at_once: bool) -> None:
        """``msg`` followed from the state now (or refused, said); ``at_once``: its first goal sent now."""
        if (traj := self._parsed(msg, self.traj, self.q_des)) is None:
            return
        self.traj, self.stream_stopped = traj, ""  # joints it does not name keep their last desired value
        self._listen_joint_states(True)
        if at_once:
            self._tick()  # a first goal at once: a lockstep sim waits for it before its next /joint_states

    def _listen_joint_states(self, on: bool) -> None:
        """/joint_states drive the ticks. Without a desired trajectory only the pose matters: the node takes it
        and stops listening until a trajectory arrives, so an idle node costs no CPU per servo cycle (e.g. in
        the identify bring-up, waiting for α beside a simulation running faster than real time)."""
        if on and self._js_sub is None:  # serialized: one in the previous one's layout is read in place
            self._js_sub = self.create_subscription(
                JointState, TOPIC_JOINT_STATES, self._on_joint_states_cdr, 10, raw=True
            )
        elif not on and self._js_sub is not None:
            self.destroy_subscription(self._js_sub)
            self._js_sub = None

    def _on_imu(self, data: bytes) -> None:
        refusal = self.imu_input.take(data, self._now(), float(self.table["imu_timeout"]))
        if refusal:  # one throttled line for a stream of bad messages, not one per message
            self._warn("imu", refusal)

    def _on_supply(self, msg: BatteryState) -> None:
        reason, st = self.ctrl.supply_refusal(msg.voltage), msg.header.stamp  # stamp: the reading's (hardware node)
        if reason is None:
            self.u_bat = float(msg.voltage)
            self.supply_age.taken(self._now(), st.sec + st.nanosec * 1e-9, float(self.table["supply_timeout"]))
        else:
            held = f"holding the last good {self.ctrl.u_bat:.3f} V"
            self._warn("supply", f"supply voltage {msg.voltage:.6g} V on {TOPIC_SUPPLY} refused ({reason}); {held}")

    def _on_support(self, msg: Float64) -> None:
        refusal = self.support.update(msg.data, self._now())
        if refusal:
            self._warn("support", refusal)

    def _on_joint_states_cdr(self, data: bytes) -> None:
        """/joint_states as CDR bytes: stamp and positions read in place (≈ 2 µs against rclpy's ≈ 13 µs for 20
        joints with velocities and efforts) when the layout is the previous message's; else read by rclpy."""
        try:
            self._on_joint_states(*self._js_reader.read(data))
        except ValueError as e:  # bytes published serialized that are no JointState
            self._warn("joint_states", f"{TOPIC_JOINT_STATES}: {e}")

    def _on_joint_states(self, names, position: np.ndarray, sec: int, nanosec: int) -> None:
        """One /joint_states (names, positions [rad], header.stamp): the pose taken, or a tick answering it."""
        if not all_finite(position):  # a goal joint not read yet (NaN): hold, no goal computed on it
            unread, news = self.unread.judge(names, position, self.q_des)  # another's: said once (feedforward_unread)
            if news:
                self.get_logger().warning(news)
            if unread:
                self._warn("unread", f"{TOPIC_JOINT_STATES}: {', '.join(unread)} not read yet (NaN); holding")
                return
        elif self.unread.said:
            self.unread.read_again(names)
        pose = self.pose
        if pose.before_first_goal and len(names) == len(position):  # desired = measured until a goal (the clock
            now = self._now()  # read then only, not on every tick)
            if not of_old_time(sec + nanosec * 1e-9, now):  # queued behind a jump back: no pose of the new time
                pose.take(names, position, self.q_des, now)
        self._answering = (sec, nanosec)
        if pose.ready():  # every goal joint read since the waiting trajectory came: followed from here
            msg, pose.waiting = pose.waiting, None
            self._follow(msg, at_once=True)
        elif pose.waiting is not None and self._now() - pose.since > WAIT_SAID_AFTER:
            self._warn("unread", f"{pose.unread(self.joints)} not read yet since the trajectory came: no goal")
        elif self.traj is not None:
            self._tick()
        self._answering = (0, 0)  # a tick of its own (a new trajectory) answers no state: unstamped
        if self.traj is None and pose.waiting is None:  # the pose taken (every goal joint read): idle
            self._listen_joint_states(not all_finite(self.q_des[self.out_cols]))

    def _tick(self) -> None:
        """The desired trajectory sampled now → goals on ``servo/commands`` (or by name, with faulted joints); none
        while the torque is off, blended from the pose read again after it came on (:mod:`.feedforward_resume`)."""
        now = self._now()
        if not self._torque_gate(now):  # torque off (said once when it went off), or the pose being read again
            return
        fade = float(self.table["end_fade"])  # past an end that still moves: its q̇, q̈ faded (desired_trajectory)
        q, dq, ddq = self._blended(now, *self.traj.sample_goal(now, fade))
        if news := self.traj.end_news(now, fade):
            self.stream_stopped = news
            self.get_logger().warning(news)
        cols = self.traj.columns
        self.q_des[cols], self.dq_des[cols], self.ddq_des[cols] = q, dq, ddq
        if self.pose.before_first_goal and not all_finite(unread := self.q_des[self.out_cols]):  # nor read nor desired
            return self._warn("unread", f"{np.array(self.joints)[np.isnan(unread)].tolist()} not read yet: no goal")
        try:
            if self.enabled:
                c_left = self.support.for_tick()  # double support until the first support coefficient (said once)
                imu = self.imu_input.pending
                goal = self.ctrl.tick(
                    self.q_des, self.dq_des, self.ddq_des, imu_quat=imu, u_bat=self.u_bat, c_left=c_left
                )
            else:
                goal = self.q_des
        except (ValueError, FloatingPointError) as e:
            self._warn("tick", f"feed-forward tick failed, no goal sent: {e}")
            return
        self.imu_input.pending = None  # consumed (the controller holds the last good one)
        self.u_bat = None
        self.out.send(goal[self.out_cols], self._answering)
        self.ticks, self.pose.before_first_goal = self.ticks + 1, False

    def _on_diagnostics(self, msg: DiagnosticArray) -> None:
        for line in self.faults.update(msg):
            self.get_logger().warning(line)

    # ------------------------------------------------------------------ outputs
    def publish_gains(self) -> None:
        """The servo node's ``kp`` of this node's goal joints set to this node's, by joint name (one value: every
        goal joint), through its parameter services."""
        self.gains.set(self.kp.tolist())

    def _publish_diagnostics(self) -> None:
        msg = DiagnosticArray(status=[feedforward_status(self)])  # (clears last_error: said once)
        msg.header.stamp = self.get_clock().now().to_msg()
        self.pub_diag.publish(msg)


def main(args: list[str] | None = None) -> int:
    return spin_node(FeedForwardNode, args)


if __name__ == "__main__":
    import sys

    sys.exit(main())
