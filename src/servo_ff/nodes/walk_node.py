"""``servo_walk_node``: a walking engine (``gait``: Rhoban's placo, :mod:`servo_ff.dynamics.walk_pattern`, or the
NimbRo-OP's own CPG, :mod:`servo_ff.dynamics.nimbro_cpg_engine`, on its 8 ms tick; ``op3_cpg``: that CPG scaled to
the OP3) under the feed-forward node. It takes ``cmd_vel`` (geometry_msgs/Twist: linear.x, linear.y [m/s], angular.z
[rad/s]) as walking stacks do, and publishes the desired JointTrajectory and the support coefficient on the topics of
``servo_walker_node`` (which stays for arms: ``pattern: waypoints``).

Once ``/joint_states`` gave every joint's position (in one message, or in several servo nodes' within 0.5 s:
:class:`servo_ff.ros.measured_pose.PoseAcross`) it takes the measured pose, waits ``start_delay``, moves to
placo's walking stance in ``approach_time`` (minimum jerk) and then walks: stepping in place while cmd_vel is
zero, re-planning the footsteps from the latest cmd_vel at each support change (placo clips a step to
``max_dx_forward`` …; a cmd_vel beyond one of them is logged, throttled). A cmd_vel older than ``cmd_timeout``
counts as zero (logged once); a non-finite one is refused with a warning.

Halt: a cmd_vel with ``angular.x = -1`` (other components ignored; Hamburg Bit-Bots' bitbots_hcm ``StopWalking``
publishes ``Twist(angular.x=-1.0)`` to their walk) makes the engine (``set_halt``) finish the step in progress and
stand in double support; a later valid cmd_vel with a non-zero linear.x, linear.y or angular.z walks again (one
before it stands cancels the halt where the gait can, the CPG's own rule; a zero one leaves it standing). During
the approach, before the walk's first sample is planned (``horizon`` ahead; engine_process: ``publish_period`` +
``engine_lead`` more): the robot stands in the stance until such a cmd_vel; later, the walk's first step halts.
``on_cmd_timeout: halt`` halts on a stale cmd_vel (none at all: from the approach). Logged once each (docs/nodes.md).

Every ``publish_period`` it publishes the points of the next ``horizon`` seconds (and the one at or before now; the
first point's time in ``header.stamp``, time_from_start 0 there; ``horizon`` at least ``publish_period`` + 0.05 s:
walk_params.check_walk; the planned window kept from 2–4 s before now), with velocities and accelerations by five-point
central differences on the ``dt`` grid (:func:`servo_ff.interpolation.knot_derivatives`: the quintic the
feed-forward node samples between the points then has no q̈ ripple), held at the URDF velocity limit (else
``max_velocity``; placo plans within it, the differences overshoot where a joint runs at it) and ``max_acceleration``
(the NimbRo-OP's knee passing through straight), counted and logged (:mod:`servo_ff.nodes.walk_held`); the support
coefficient (1 = left foot) on each ``/joint_states`` for its stamp + ``support_lead`` (the time of the feed-forward
node's next tick; unstamped: the node's clock; a stamp out of the plan sends none, said:
:mod:`servo_ff.nodes.walk_support`), sent when it changes and every ``publish_period`` (the feed-forward node holds
it; ``support_clock: timer``: every ``1/rate_hz``, one control period behind in the lockstep loop). The feed-forward
node follows or refuses the trajectory by its own rules (velocity and acceleration bounds).

Balance feedback (:mod:`servo_ff.dynamics.walk_balance`, off while every ``balance_*`` gain is 0): once walking,
each ``imu_topic`` reading (sensor_msgs/Imu: trunk orientation and angular velocity) gives offsets on the ankles and
hips, added to the points of the next published trajectory, reached from the previous message's by a minimum-jerk
ramp over its first ``publish_period`` (:mod:`servo_ff.dynamics.offset_ramp`: no step); a reading older than
``imu_timeout`` (by its header stamp, or its arrival) gives none (logged once; none at all ``imu_timeout`` after the
walk's start too); one without a usable orientation (or rate, with a rate gain) is refused (logged, throttled;
REP-145's "not given" included): :mod:`servo_ff.ros.imu_balance`.

``engine_process``: the engine's samples asked ahead of the messages, waited for within bounds; the process ending
or hanging is one ERROR line, a stop to the stance and a new process (:mod:`servo_ff.nodes.walk_process`). Before its
first pose the node says what it waits for (/clock, the engine process, /joint_states:
:mod:`servo_ff.nodes.walk_waiting`); the pose is taken once the engine process is up
(:mod:`servo_ff.nodes.walk_start`). Its phase and counters: ``/diagnostics`` (:mod:`servo_ff.nodes.walk_diagnostics`).

A jump back of the clock, or forward by more than 1 s (``clock_jump.FORWARD_JUMP``: a bag or a simulation skipped
ahead), drops the plan, the cmd_vel and the IMU's age: the walk starts again as at start-up, from the next measured
pose, on a new engine (:mod:`servo_ff.nodes.walk_restart`).
"""

from __future__ import annotations

import bisect
import math
import time
from collections import deque
from typing import Any

import numpy as np
from geometry_msgs.msg import Twist
from rclpy.node import Node
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64
from trajectory_msgs.msg import JointTrajectory

from servo_ff.dynamics.offset_ramp import OffsetRamp
from servo_ff.dynamics.walk_command import expire_command
from servo_ff.dynamics.walk_worker import WorkerFault
from servo_ff.io.paths import resolve_path
from servo_ff.ros.cdr_template import cdr_stamp
from servo_ff.ros.clock_jump import FORWARD_JUMP, on_clock_jump_back
from servo_ff.ros.common import TOPIC_JOINT_STATES, ParameterTable, spin_node
from servo_ff.ros.imu_balance import ImuBalance
from servo_ff.ros.joint_command_cdr import deserialized
from servo_ff.ros.level_publisher import LevelPublisher
from servo_ff.ros.measured_pose import PoseAcross
from servo_ff.ros.trajectory_cdr import TrajectoryCdr

from .walk_diagnostics import WalkDiagnostics
from .walk_held import held_derivatives
from .walk_params import BALANCE_KEYS, PLACO_ONLY, check_walk, walk_engine, walk_specs
from .walk_process import fault, prefetch, request, tend, walk_sample
from .walk_restart import drop_plan, start_worker
from .walk_start import take_pose
from .walk_support import KEEP, JointStatesSupport
from .walk_waiting import StartWait


class WalkNode(Node):
    def __init__(self, name: str = "servo_walk", **kwargs: Any):
        super().__init__(name, **kwargs)
        from servo_ff.dynamics.walk_balance import BalanceFeedback, BalanceGains

        self.table = ParameterTable(self, walk_specs(), validate=check_walk, n_joints=lambda v: None)
        v = self.table.values
        self.gait = v["gait"]
        self.engine, params, frames = walk_engine(v, resolve_path(v["urdf_path"]))
        if params is None:  # the CPG: placo's parameters are declared (one table) but do not act; said once
            self.get_logger().info(f"gait {v['gait']}: {', '.join(PLACO_ONLY)} do not apply (placo's parameters)")
        self.worker = None  # dynamics.walk_worker.WalkWorker with engine_process
        self.worker_spec = (params, frames)  # what a new one is made of (walk_restart.start_worker)
        self.faults = 0  # engine processes that ended or hung (walk_process)
        self._ahead: deque[float] = deque()  # grid times [s, ROS clock] beyond self.times, asked of the worker
        order = [j for j in v["joints"] if j]
        if order and sorted(order) != sorted(self.engine.joints):
            raise ValueError(f"joints {order} are not the joints of {v['urdf_path']}: {self.engine.joints}")
        strange = [j for j in v["posture_joints"] if j and j not in self.engine.joints]
        if strange:
            raise ValueError(f"posture_joints {strange} are not joints of {v['urdf_path']}: {self.engine.joints}")
        self.joints = order or self.engine.joints
        self.perm = [self.engine.joints.index(j) for j in self.joints]  # engine order → published order
        from servo_ff.dynamics.feedforward import joint_motion_bounds

        # [rad/s], [rad/s²] the feed-forward node's bounds (the URDF's velocity limits: placo's too)
        self.vmax, self.amax = joint_motion_bounds(
            resolve_path(v["urdf_path"]), self.joints, v["max_velocity"], v["max_acceleration"]
        )
        self.vel_held, self.acc_held = 0, 0  # published q̇, q̈ values held at self.vmax, self.amax
        self.dt = self.engine.params.dt  # [s] the engine's grid (placo: dt; nimbro_cpg: its 8 ms tick)
        self.forget_plan()
        self.new_engine = False  # the clock jumped back: a new engine when the next pose is taken (walk_restart)
        self.cmd_refused = 0
        self.cmd_clipped = 0  # cmd_vel messages beyond the gait's reach (placo clips their steps)
        self.messages = 0
        self.pub_traj = self.create_publisher(JointTrajectory, v["trajectory_topic"], 10)
        self._cdr: TrajectoryCdr | None = None  # the trajectory message's bytes, for its number of points
        self.pub_c = self.create_publisher(Float64, v["support_topic"], 10)
        # the support coefficient when it changes (and every publish_period): the feed-forward node holds it
        self.support_out = LevelPublisher(self.pub_c, float(v["publish_period"]))
        self.js_support = JointStatesSupport(self)  # its time per /joint_states (walk_support)
        self._js_sub = None
        self.waiting = StartWait(self, TOPIC_JOINT_STATES)
        self.listen_joint_states()
        self.create_subscription(Twist, v["cmd_vel_topic"], self._on_cmd, 10)
        gains = BalanceGains(*(float(v[f"balance_{k}"]) for k in BALANCE_KEYS))
        self.balance = None  # the IMU balance input (off while every balance_* gain is 0)
        self.ramp = OffsetRamp(len(self.joints), float(v["publish_period"]))  # its offsets, ramped per message
        if gains.enabled:
            feedback = BalanceFeedback(resolve_path(v["urdf_path"]), self.joints, gains)
            self.balance = ImuBalance(feedback, v["imu_topic"], lambda: self.get_logger())
            self.create_subscription(Imu, v["imu_topic"], self._on_imu, 10)
        self._jump = on_clock_jump_back(self, lambda: drop_plan(self), forward=FORWARD_JUMP)  # (forward: no plan
        # of the skipped time, every dt sample ticked in one callback — placo: 7 s for 20 s, the executor held)
        self.diagnostics = WalkDiagnostics(self)  # /diagnostics: the phase, what needs a look
        if v["engine_process"]:  # last: a constructor that fails above leaves no child process behind
            start_worker(self)
        self.create_timer(float(v["publish_period"]), self._publish_trajectory)
        self.support_on_js = v["support_clock"] == "joint_states"  # read-only: decided once, not per tick
        if not self.support_on_js:
            self.create_timer(1.0 / float(v["rate_hz"]), self._publish_support)
        self.get_logger().info(
            f"{self.gait} walk ({len(self.joints)} joints, step period {self.engine.params.step_period:.3f} s): "
            f"{v['cmd_vel_topic']} → {v['trajectory_topic']}, support coefficient → {v['support_topic']}"
        )

    def now_s(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def listen_joint_states(self) -> None:
        """/joint_states taken serialized (the stamp read in place per period, the whole message for the pose)."""
        if self._js_sub is None:
            self._js_sub = self.create_subscription(JointState, TOPIC_JOINT_STATES, self._on_joint_states, 10, raw=True)

    def forget_plan(self) -> None:
        """No pose taken, nothing planned: the walk starts from the next measured pose (start-up, a clock jump)."""
        self.q0: np.ndarray | None = None  # first: the walk is seen unstarted before its times are gone
        self.pose = PoseAcross(self.joints)  # the measured pose, read across /joint_states messages (walk_start)
        self.t_walk: float | None = None  # [s, ROS clock] of the walk's t = 0 (after the approach)
        self.t0: float | None = None  # [s, ROS clock] of the approach start
        self.stop = None  # dynamics.walk_stop.StopPlan: the lead-in after the engine process failed (walk_process)
        self.times: list[float] = []  # [s, ROS clock] planned samples (a sliding window)
        self.qs: list[np.ndarray] = []
        self.cs: list[float] = []
        self._ahead.clear()
        self.cmd_time: float | None = None
        self.standing = False  # the engine stood halted at the latest planned sample
        self.cmd_stale_logged = False

    def _on_cmd(self, msg: Twist) -> None:
        if msg.angular.x == -1.0:  # the humanoid league's "stop walking" (bitbots_hcm StopWalking)
            if not self.engine.halt_requested:
                self.engine.set_halt(True)
                self.get_logger().info("halt requested by cmd_vel angular.x = -1: stopping after the step in progress")
            return
        try:
            self.engine.set_cmd(msg.linear.x, msg.linear.y, msg.angular.z)
        except ValueError as e:
            self.cmd_refused += 1
            self.get_logger().warning(f"{self.table['cmd_vel_topic']}: {e}; refused, keeping the last command")
            return
        self.cmd_time = self.now_s()
        self.cmd_stale_logged = False
        if self.engine.halt_requested and any((msg.linear.x, msg.linear.y, msg.angular.z)):
            self.engine.set_halt(False)  # a zero cmd_vel (a teleop streaming zeros) leaves it standing
            how = "from the standing pose" if self.standing else "during the halt: cancelled where the gait can re-plan"
            v = f"linear.x/y {msg.linear.x:g}/{msg.linear.y:g} m/s, angular.z {msg.angular.z:g} rad/s"
            self.get_logger().info(f"walking again under cmd_vel {v} ({how})")
        beyond = self.engine.beyond_reach(msg.linear.x, msg.linear.y, msg.angular.z)
        if beyond:
            self.cmd_clipped += 1
            how = f" (placo's max_dx_forward/max_dx_backward/max_dy/max_dtheta per {self.engine.params.step_period:g}"
            how = f"{how} s step): placo walks at most that" if self.gait == "placo" else ""  # (the CPG's words say it)
            self.get_logger().warning(
                f"{self.table['cmd_vel_topic']}: {', '.join(beyond)}{how}", throttle_duration_sec=5.0
            )

    def _on_imu(self, msg: Imu) -> None:
        now = self.now_s()
        if self.t_walk is not None and now >= self.t_walk:  # the approach has no trunk-pitch reference: no feedback
            self.balance.take(msg, now, self.engine.params.trunk_pitch, float(self.table["imu_timeout"]))

    def _on_joint_states(self, data: bytes) -> None:
        """/joint_states taken serialized: only its stamp is read per period, the whole message only for the pose."""
        self.waiting.seen += 1
        stamp = cdr_stamp(data) if self.q0 is not None else None
        if stamp is None:
            try:
                msg = deserialized(data, JointState)
            except ValueError as e:  # bytes published serialized that are no JointState
                self.get_logger().warning(f"{TOPIC_JOINT_STATES}: {e}; ignored", throttle_duration_sec=5.0)
                return
            stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        if self.q0 is not None:
            if self.support_on_js:  # the feed-forward node ticks on the next /joint_states: stamp + one period
                self.js_support.send(stamp)  # (unstamped: the node's clock; out of the plan: none, said)
            return
        take_pose(self, msg, stamp)  # (engine_process: once the engine process is up, walk_start)

    def _approach(self, t: float) -> np.ndarray:
        s = min(max((t - self.t0) / float(self.table["approach_time"]), 0.0), 1.0)
        # the stance the walk starts from: the worker's (its engine ticks the walk) with engine_process
        stand = self.engine.q_stand if self.worker is None else self.worker.q_stand()
        return self.q0 + (10 * s**3 - 15 * s**4 + 6 * s**5) * (stand[self.perm] - self.q0)

    def _fill(self, now: float, until: float) -> None:
        """Plan samples on the ``dt`` grid up to ``until`` [s, ROS clock] (approach, then the walk), those the next
        period needs at least (engine_process: walk_process)."""
        if not self.times:
            t = math.floor(max(now, self.t0 - self.dt) / self.dt) * self.dt
            if self.worker is not None and t >= self.t_walk - 1e-9:  # a late first fill: already walking
                self._ahead.append(t)
                request(self, [t])
            self._append(t, self._sample(t, None))
        prefetch(self, until)
        need = now + float(self.table["publish_period"]) + 3 * self.dt  # (the later ones: not waited for)
        while self.times[-1] < until:
            t = self.times[-1] + self.dt
            if (got := self._sample(t, None if t <= need else time.monotonic())) is None:
                break  # the worker's, not computed yet: in the next message
            self._append(t, got)
        old = bisect.bisect_left(self.times, now - KEEP)  # from now, not from the newest sample (a long horizon)
        if old * self.dt >= KEEP:
            del self.times[:old], self.qs[:old], self.cs[:old]

    def _append(self, t: float, sample: tuple[np.ndarray, float]) -> None:
        self.times.append(t)
        self.qs.append(sample[0])
        self.cs.append(sample[1])

    def _sample(self, t: float, until: float | None) -> tuple[np.ndarray, float] | None:
        """(q [rad] in ``joints`` order, support coefficient) at ``t`` [s]: the lead-in before the walk (the approach;
        after an engine process failed, the stop), then the engine's; None: the worker's sample not there by
        ``until`` [s, time.monotonic] (None: one the next period needs, walk_process.walk_sample)."""
        if t < self.t_walk - 1e-9:
            q, c = self.stop.at(t) if self.stop is not None else (self._approach(t), 0.5)
        elif self.worker is not None:
            if (got := walk_sample(self, until)) is None:
                return None
            q, c = got[0][self.perm], got[1]
            self._stood(t, got[2])
        else:
            s = self.engine.tick()
            q, c = s.q[self.perm], s.c_left
            self._stood(t, self.engine.halted)
        if self._ahead:
            self._ahead.popleft()  # t itself: the same sum of dt
        return q, c

    def _stood(self, t: float, halted: bool) -> None:
        """Log once when the walk stands halted from the sample at ``t`` [s, ROS clock]."""
        if halted and not self.standing:
            self.get_logger().info(f"halted: standing in double support at t = {t:.3f} s")
        self.standing = halted

    def _expire_cmd(self, t: float) -> None:
        if self.engine.halt_requested:
            return  # a halt request stays until a cmd_vel
        timeout, on = float(self.table["cmd_timeout"]), self.table["on_cmd_timeout"]
        halt = on == "halt"
        since = self.cmd_time if self.cmd_time is not None or not halt else self.t0
        if not expire_command(self.engine, t, since, timeout, on):
            return
        if not self.cmd_stale_logged:
            what = "halting after the step in progress (on_cmd_timeout: halt)" if halt else "stepping in place"
            self.get_logger().warning(f"no cmd_vel for {timeout} s: {what}")
            self.cmd_stale_logged = True

    def _publish_trajectory(self) -> None:
        if self.q0 is None:
            return
        now = self.now_s()
        # a cmd_vel older than cmd_timeout *now* counts as zero for the samples planned from now on (judged on the
        # samples' own times, a command streamed every period counted as stale once cmd_timeout < horizon)
        self._expire_cmd(now)
        horizon = float(self.table["horizon"])
        if now < self.t0 - horizon - 1e-9:  # (start_delay = horizon: at once, whatever the rounding)
            return  # the measured pose is held until the approach comes within the horizon
        if self.worker is not None:
            tend(self, now)  # a worker that ended or hung: the stop; a new one up: the walk again
        try:
            self._publish(now, horizon)
        except WorkerFault as e:
            fault(self, e, now)
            self._publish(now, horizon)  # the stop (no worker asked)

    def _publish(self, now: float, horizon: float) -> None:
        n = math.ceil(horizon / self.dt - 1e-9) + 2  # points: the one at or before now, then past the horizon
        self._fill(now, now + horizon + 4 * self.dt)  # and two samples beyond the last point (five-point differences)
        now = max(now, self.now_s())  # (after a wait for the worker: from the time it is sent)
        lo = max(2, bisect.bisect_right(self.times, now) - 1)
        n = min(n, len(self.times) - 2 - lo)  # fewer in the first message (its samples start at the approach)
        if n < 1:
            return  # (the worker's samples not there yet: walk_process)
        t = np.asarray(self.times[lo : lo + n])
        q = np.asarray(self.qs[lo - 2 : lo + n + 2])
        if self.balance is not None:  # ramped from the previous message's offsets: no step
            off = self.balance.offset_at(now, float(self.table["imu_timeout"]), self.t_walk)  # (none yet: said)
            q = q + self.ramp.follow(np.asarray(self.times[lo - 2 : lo + n + 2]), t[0], off)
        if self._cdr is None or self._cdr.n_points != n:
            self._cdr = TrajectoryCdr(self.joints, n)
        ns = np.rint(t * 1e9).astype(np.int64)
        dq, ddq = held_derivatives(self, q)
        self._cdr.fill(int(ns[0]), np.rint((t - t[0]) * 1e9).astype(np.int64), q[2:-2], dq, ddq)
        self.pub_traj.publish(self._cdr.data())  # pre-serialised (ros/trajectory_cdr.py)
        self.messages += 1
        ahead = float(self.table["publish_period"]) + float(self.table["engine_lead"])
        prefetch(self, now + ahead + horizon + 4 * self.dt)  # the next messages' samples, computed meanwhile

    def _bracket(self, t: float) -> slice:
        """The two planned samples around ROS time ``t`` (one at the ends): np.interp on them is np.interp on
        the whole window, without converting the window to an array every call."""
        k = bisect.bisect_right(self.times, t)
        return slice(max(k - 1, 0), max(k + 1, 2))

    def support(self, t: float) -> float:
        """Planned left-foot support coefficient at ROS time ``t`` (0.5 before the walk)."""
        if not self.times:
            return 0.5
        b = self._bracket(t)
        return float(np.interp(t, self.times[b], self.cs[b]))

    def desired(self, t: float) -> np.ndarray | None:
        """Planned joint positions [rad] (``joints`` order) at ROS time ``t``, linear between the ``dt`` samples
        (None before the first); clamped to the planned window's ends."""
        if not self.times:
            return None
        b = self._bracket(t)
        ts, qs = self.times[b], self.qs[b]
        if len(ts) < 2 or t <= ts[0]:
            return qs[0].copy()
        if t >= ts[1]:
            return qs[1].copy()
        return qs[0] + (t - ts[0]) / (ts[1] - ts[0]) * (qs[1] - qs[0])

    def destroy_node(self) -> None:
        if self.worker is not None:
            self.worker.close()
        super().destroy_node()

    def _publish_support(self) -> None:
        if self.q0 is not None:
            self.pub_c.publish(Float64(data=self.support(self.now_s())))


def main(args: list[str] | None = None) -> int:
    return spin_node(WalkNode, args)


if __name__ == "__main__":
    import sys

    sys.exit(main())
