"""``<prefix>/follow_joint_trajectory`` (control_msgs/action/FollowJointTrajectory) on a servo interface node,
with ros2_controllers' JointTrajectoryController semantics:

* a goal is rejected while the node is not active or its torque is off, or when its trajectory is invalid (the checks of
  ``<prefix>/joint_trajectory``: known joints, point sizes, finite values, increasing times, joint limits along
  the interpolated path; and JTC's: no effort, zero velocity at the last point, no multi-DOF part), with one log
  line saying why (ROS 2 actions carry no result for a rejected goal);
* an accepted goal preempts the goal in progress (aborted, INVALID_GOAL "Current goal preempted by new incoming
  action.") and its trajectory replaces the one followed at once, from the current state, on the same spline as
  the topic (:func:`.trajectory_plan.plan_trajectory`: a future ``header.stamp`` is approached from acceptance on,
  its tolerances judged from then);
* on every state published: path tolerances while the trajectory runs (PATH_TOLERANCE_VIOLATED: abort, hold
  the present position), after its last point the goal tolerances until its end + goal_time_tolerance
  (SUCCESSFUL, holding the last point; or GOAL_TOLERANCE_VIOLATED: abort, hold the present position), see
  :mod:`servo_ff.trajectory_tolerances`; a stale joint (hardware: a silent servo, NaN velocity) is not judged on
  its tolerances; one the goal names must be fresh to succeed, counts as a goal violation after
  goal_time_tolerance, and silent longer than the node's bound (``max_reply_age``) aborts the goal (INVALID_GOAL)
  naming it; a joint the goal does not name (held, as JTC fills a partial goal) is judged on its tolerances, never
  on its freshness: its silent servo does not end the goal;
  feedback (desired, actual, error = desired - actual, all joints) at ``action_monitor_rate`` (JTC publishes
  the latest state at that rate) and on the state an outcome is decided on;
* cancel: hold the present position, CANCELED; deactivate, torque switched off (``torque_enable`` false): abort
  (INVALID_GOAL); a command on another topic or service that replaces the trajectory aborts the goal
  (INVALID_GOAL) as a preemption.

Default tolerances come from the node's ``constraints.*`` parameters (JTC's ``constraints``).
"""

from __future__ import annotations

import numpy as np
from builtin_interfaces.msg import Duration, Time
from control_msgs.action import FollowJointTrajectory
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.task import Future
from trajectory_msgs.msg import JointTrajectoryPoint

from servo_ff.trajectory_tolerances import Tolerances, goal_tolerances, violations

from .common import float64_field, per_joint
from .trajectory_plan import ActiveTrajectory

Result = FollowJointTrajectory.Result
PREEMPTED = "Current goal preempted by new incoming action."
DEACTIVATED = "Current goal cancelled during deactivate transition."
REPLACED = "Current goal preempted: its trajectory was replaced (a command on another topic or service, a reset)"
CLOCK_JUMPED = "Current goal aborted: the clock jumped back (its trajectory's times were the old clock's)"
TORQUE_RESTORED = "Current goal aborted: torque was off; on again, the joints are held where they stand"
TORQUE_OFF = "Current goal aborted: torque was switched off (torque_enable false); the limp joints follow nothing"


def _duration(s: float) -> Duration:
    sec = int(np.floor(s))
    return Duration(sec=sec, nanosec=min(int(round((s - sec) * 1e9)), 999_999_999))


def _point(t: float, q, dq=None, ddq=None, eff=None) -> JointTrajectoryPoint:
    p = JointTrajectoryPoint(time_from_start=_duration(t))
    p.positions = float64_field(q)
    for name, v in (("velocities", dq), ("accelerations", ddq), ("effort", eff)):
        if v is not None:
            setattr(p, name, float64_field(v))
    return p


class _Run:
    """One accepted goal: its handle, trajectory, tolerances and the future its execute callback awaits."""

    def __init__(self, handle, traj: ActiveTrajectory, tol: Tolerances, named: np.ndarray):
        self.handle, self.traj, self.tol = handle, traj, tol
        self.named = named  # (J,) bool: the joints the goal names (their freshness decides; the others are held)
        self.done = Future()
        self.checked = False  # the first sample is always checked against the path tolerance
        self.final: np.ndarray | None = None  # the goal held once the trajectory ended
        self.last_feedback = -np.inf  # node time of the last feedback [s]


class FollowTrajectoryAction:
    """The action server of one servo interface node (``node``:
    :class:`servo_ff.nodes.servo_base.ServoInterfaceNode`)."""

    def __init__(self, node):
        self.node = node
        self.name = node.names["follow_joint_trajectory"]
        self.run: _Run | None = None  # the goal in progress
        self._runs: dict[bytes, _Run] = {}  # accepted goals whose execute callback has not started yet
        self.server = ActionServer(
            node,
            FollowJointTrajectory,
            self.name,
            execute_callback=self._execute,
            goal_callback=self._on_goal,
            handle_accepted_callback=self._on_accepted,
            cancel_callback=lambda handle: CancelResponse.ACCEPT,
        )

    def destroy(self) -> None:
        """Destroy the action server before its node: rclpy's ``Node.destroy_node`` leaves waitables alone, and an
        action server freed later by the garbage collector, after its node and context, segfaulted the process at
        exit (in 4 of 58 runs of the arm test on a loaded box)."""
        if self.server is not None:
            self.server.destroy()
            self.server = None

    # ------------------------------------------------------------------ goals
    def defaults(self) -> Tolerances:
        v, n = self.node.table.values, self.node.n
        return Tolerances.defaults(
            per_joint(v["constraints.trajectory"], n, "constraints.trajectory"),
            per_joint(v["constraints.goal"], n, "constraints.goal"),
            v["constraints.stopped_velocity_tolerance"],
            v["constraints.goal_time"],
        )

    def refusal(self, goal) -> str | None:
        """Why ``goal`` is rejected (None: accepted): the node's state and JTC's checks of the trajectory."""
        node, traj = self.node, goal.trajectory
        # not active, no states (before: accepted, never ended), torque off (before: judged on the limp joints' fall),
        # a joint not read yet (before: accepted, then 'reached'): as the topics refuse them
        refusal = node.goal_refusal(traj.joint_names)
        if refusal is not None:
            return refusal[1]
        if goal.multi_dof_trajectory.points:
            return "multi_dof_trajectory is not supported (single-DOF joints only)"
        if traj.points and any(p.effort for p in traj.points):
            return "trajectories with effort are not supported (position-controlled servos)"
        if traj.points and any(abs(v) > np.finfo(np.float32).eps for v in traj.points[-1].velocities):
            return "the last point's velocities are not zero"
        try:
            node.plan_trajectory(traj, node.now_s())
        except ValueError as e:
            return str(e)
        return None

    def _on_goal(self, goal) -> GoalResponse:
        reason = self.refusal(goal)
        if reason is None:
            return GoalResponse.ACCEPT
        self.node.gate._reject(self.name, "goal", reason)  # one throttled warning, counted in the diagnostics
        return GoalResponse.REJECT

    def _on_accepted(self, handle) -> None:
        node, goal = self.node, handle.request
        self.finish(Result.INVALID_GOAL, PREEMPTED, abort=True)
        handle.execute()
        now = node.now_s()
        try:
            traj = node.plan_trajectory(goal.trajectory, now)
            traj.source = self.name
        except ValueError as e:  # the state changed since the goal was checked
            run = _Run(handle, None, self.defaults(), np.ones(node.n, dtype=bool))
            self.run = self._runs[bytes(handle.goal_id.uuid)] = run
            self.finish(Result.INVALID_GOAL, f"trajectory refused: {e}", abort=True)
            return
        tol = goal_tolerances(
            self.defaults(),
            node.joints,
            [(t.name, t.position, t.velocity, t.acceleration) for t in goal.path_tolerance],
            [(t.name, t.position, t.velocity, t.acceleration) for t in goal.goal_tolerance],
            goal.goal_time_tolerance.sec + goal.goal_time_tolerance.nanosec * 1e-9,
        )
        for note in tol.notes:
            node.get_logger().error(f"{self.name}: {note}")
        node.traj = traj  # on receipt, a future stamp too (JTC's goal_accepted_callback: add_new_trajectory_msg)
        named = np.isin(node.joints, traj.joints)
        self.run = self._runs[bytes(handle.goal_id.uuid)] = _Run(handle, traj, tol, named)
        node.gate.count_accept()  # counted once it is followed
        node.trajectories += 1
        node.get_logger().info(f"{self.name}: goal accepted, {traj.end - traj.start:.3f} s from {traj.start:.3f} s")

    async def _execute(self, handle):
        """The goal's result, once :meth:`finish` ended it (rclpy sends it when this returns)."""
        return await self._runs.pop(bytes(handle.goal_id.uuid)).done

    # ------------------------------------------------------------------ ending a goal
    def finish(self, code: int, text: str, abort: bool = False, canceled: bool = False, hold: bool = False) -> None:
        """End the goal in progress (if any) with ``code``/``text``; ``hold``: hold the present position."""
        run, self.run = self.run, None
        if run is None:
            return
        if hold:
            self.node._hold_present(running=True)  # a silent joint keeps its goal, not its old reading
        if canceled:
            run.handle.canceled()
            result = Result()
        else:
            (run.handle.abort if abort else run.handle.succeed)()
            result = Result(error_code=code, error_string=text)
        line = f"{self.name}: goal {'canceled' if canceled else 'aborted' if abort else 'succeeded'}: {text}"
        if abort:  # rclpy: one severity per call site
            self.node.get_logger().warning(line)
        else:
            self.node.get_logger().info(line)
        run.done.set_result(result)

    def deactivate(self) -> None:
        """The node leaves the active state: the goal in progress is aborted."""
        self.finish(Result.INVALID_GOAL, DEACTIVATED, abort=True)

    def torque_off(self) -> None:
        """Torque was switched off (the ``torque_enable`` service): the goal in progress is aborted, as on
        deactivate (before: its trajectory went on writing goals to the limp servos, and it was judged a success)."""
        self.finish(Result.INVALID_GOAL, TORQUE_OFF, abort=True)

    def torque_restored(self) -> None:
        """Torque came on again after it was off (the joints held where they stand): the goal is aborted."""
        self.finish(Result.INVALID_GOAL, TORQUE_RESTORED, abort=True)

    def stopped(self, why: str) -> None:
        """The node's physics stopped (a sim's divergence): the goal in progress is aborted, not left hanging."""
        self.finish(Result.INVALID_GOAL, f"Current goal aborted: {why}", abort=True)

    def clock_jumped(self) -> None:
        """The node's clock jumped back (:mod:`.clock_jump`): the goal in progress is aborted."""
        self.finish(Result.INVALID_GOAL, CLOCK_JUMPED, abort=True)

    # ------------------------------------------------------------------ every published state
    def update(self, t: float, pos: np.ndarray, vel: np.ndarray) -> None:
        """Feedback and tolerance checks for the state (``pos``, ``vel``) at time ``t`` [s, node clock]."""
        run = self.run
        if run is None:
            return
        node, traj = self.node, run.traj
        if run.handle.is_cancel_requested:
            self.finish(Result.SUCCESSFUL, "canceled on request", canceled=True, hold=True)
            return
        if node.traj is not traj:
            if run.final is None and t < traj.end or run.final is not None and not self._holding(run):
                self.finish(Result.INVALID_GOAL, REPLACED, abort=True)
                return
            if run.final is None:  # it just ended: follow_trajectory holds its last point
                run.final = node.gate.goal.copy()
        if t < traj.received:
            return  # a state from before the goal came (the previous goal was in force)
        q, dq, ddq = traj.spline.sample(t)
        error = np.stack([q - pos, dq - vel, np.zeros_like(q)])
        stale = np.isfinite(pos) & ~np.isfinite(vel)  # a silent servo's held position: not judged as a reading
        silent = node.hw_silent_too_long(run.named) if (stale & run.named).any() else ""
        if silent:  # its position unknown for longer than the node's own staleness bound
            outcome = Result.INVALID_GOAL, f"Current goal aborted: {silent}", True, False, True
        else:
            outcome = self._judge(run, t, error, stale)
        if outcome is not None or t - run.last_feedback >= 1.0 / node.table.values["action_monitor_rate"] - 1e-9:
            run.last_feedback = t  # as JTC: the latest state at action_monitor_rate, and the one judged
            feedback = FollowJointTrajectory.Feedback(joint_names=node.joints)
            feedback.header.stamp = _stamp(t)
            since = t - traj.start
            feedback.desired = _point(since, q, dq, ddq)
            feedback.actual = _point(since, pos, vel)
            feedback.error = _point(since, error[0], error[1])
            run.handle.publish_feedback(feedback)
        if outcome is not None:
            self.finish(*outcome)

    def _judge(self, run: _Run, t: float, error: np.ndarray, stale: np.ndarray) -> tuple | None:
        """The outcome at time ``t`` with ``error`` (3, J): arguments of :meth:`finish`, or None (running). The
        ``stale`` joints (J,) (no reply this cycle: last position, NaN velocity) are not judged on their tolerances:
        the goal succeeds only with every joint it names fresh, and after ``goal_time_tolerance`` such a stale joint
        is a violation; a stale joint it does not name is not waited for."""
        traj, joints = run.traj, self.node.joints
        error = np.where(stale, 0.0, error)
        stale = stale & run.named
        if t < traj.end or not run.checked:
            run.checked = True
            bad = violations(error, run.tol.path, joints)
            if bad:
                text = "Aborted due to path tolerance violation: " + "; ".join(bad)
                return Result.PATH_TOLERANCE_VIOLATED, text, True, False, True
            if t < traj.end:
                return None
        bad = violations(error, run.tol.goal, joints)
        if not bad and not stale.any():
            return Result.SUCCESSFUL, "Goal successfully reached!"
        bad += [f"{joints[j]} has no fresh reading (its servo is silent)" for j in np.flatnonzero(stale)]
        late = t - traj.end - run.tol.goal_time
        if run.tol.goal_time > 0 and late > 0:
            text = f"Aborted due to goal_time_tolerance exceeding by {late:.3f} seconds: " + "; ".join(bad)
            return Result.GOAL_TOLERANCE_VIOLATED, text, True, False, True
        return None

    def _holding(self, run: _Run) -> bool:
        """The node still holds the goal its trajectory ended on (no other command came since)."""
        node = self.node
        return node.traj is None and np.array_equal(node.gate.goal, run.final)


def _stamp(t: float) -> Time:
    sec = int(np.floor(t))
    return Time(sec=sec, nanosec=min(int(round((t - sec) * 1e9)), 999_999_999))


__all__ = ["FollowTrajectoryAction"]
