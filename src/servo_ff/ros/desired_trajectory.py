"""The desired trajectory the feed-forward node follows: a JointTrajectory (positions, velocities, accelerations
over ``time_from_start``) checked whole and sampled at the node's time.

One whose last point still moves (it gives a velocity or an acceleration that is not 0: a stream of chunks that
stopped — the walk node crashed or hung) is not dropped to rest at its end: the goal would step by the whole
velocity and acceleration feed-forward (audit 20a E1: 0.35 rad on the pendulum at kp 4; 0.33 rad median, 0.79 rad
at most on the OP3 at kp 280 with the walk's placo samples). :meth:`DesiredTrajectory.sample_goal` holds the last
position and fades the last point's q̇ and q̈ out over the node's ``end_fade``, and the node says it."""

from __future__ import annotations

import numpy as np
from trajectory_msgs.msg import JointTrajectory

from servo_ff.interpolation import JointSpline, follow

from .trajectory_plan import trajectory_points

MOVING_DQ, MOVING_DDQ = 1e-3, 1e-2  # [rad/s], [rad/s²] a last point beyond either still moves
#: [s] a trajectory starting further ahead of the node's clock, or that ended longer ago, is another clock's.
#: JointTrajectoryController takes a start of any lead; a planner streaming chunks (the walk node) stamps them
#: within a period of now, so a minute is far beyond any plan while a clock mismatch is far beyond a minute: one
#: node on use_sim_time (the sim's seconds since its start) and the other on wall time (1.7e9 s since 1970).
MAX_CLOCK_GAP = 60.0
CLOCKS = "another clock? (use_sim_time set on one node only)"


class DesiredTrajectory:
    """A JointTrajectory in robot joint order: times (P,), q, q̇, q̈ (P, J), mask of the joints it names.

    Sampled with the servo nodes' interpolation (:class:`servo_ff.interpolation.JointSpline`,
    JointTrajectoryController semantics): quintic between points giving velocities and accelerations, cubic
    with velocities, linear otherwise; from the state followed at its start when its first point is later
    (:func:`servo_ff.interpolation.follow`); before its start, the ``previous`` one (of the same joints) while it
    lasts, else its first point; the last point at rest after it."""

    def __init__(
        self,
        t0: float,
        times: np.ndarray,
        q: np.ndarray,
        dq: np.ndarray,
        ddq: np.ndarray,
        columns: np.ndarray,
        has_dq: np.ndarray | None = None,
        has_ddq: np.ndarray | None = None,
        start: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
    ):
        self.t0, self.times, self.q, self.dq, self.ddq, self.columns = t0, times, q, dq, ddq, columns
        self.previous: DesiredTrajectory | None = None  # followed until t0 (set by parse_trajectory)
        self.names: list[str] = []  # of the columns (set by parse_trajectory)
        if start is None:
            self.spline = JointSpline(times, q, dq, ddq, has_dq, has_ddq)
        else:  # the state at t0 (the columns'), then the points; a first point at 0 replaces it
            self.spline = follow(0.0, *start, times, q, dq, ddq, has_dq, has_ddq)
        self.end = t0 + self.spline.end_time  # [s]
        _, dq_end, ddq_end = self.spline.end_state()
        moving = bool(self.spline.has_dq[-1]) and (
            bool((np.abs(dq_end) > MOVING_DQ).any()) or bool((np.abs(ddq_end) > MOVING_DDQ).any())
        )
        self.end_motion = (dq_end, ddq_end) if moving else None  # its last point's q̇, q̈ when it still moves
        self.end_said = False

    def sample(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q, q̇, q̈) at ``t`` [s, same clock as t0]; changes nothing."""
        if self.previous is not None and t < self.t0:  # not started: the one it replaces goes on until then
            return self.previous.sample(t)
        return self.spline.sample(t - self.t0)

    def sample_goal(self, t: float, fade: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """What the goal is computed from at ``t`` [s]: :meth:`sample`, but past an end that still moves its last
        position with its last point's q̇, q̈ weighted by w = 1 − s((t − end)/``fade``) (s the quintic
        smoothstep; 0 from ``fade`` [s] after the end on): the feed-forward fades out, no step."""
        if self.previous is not None and t < self.t0:
            return self.previous.sample_goal(t, fade)
        q, dq, ddq = self.spline.sample(t - self.t0)
        if self.end_motion is None or t < self.end or t - self.end >= fade:  # (at the end: w = 1, the left limit)
            return q, dq, ddq
        x = (t - self.end) / fade
        w = 1.0 - x**3 * (10.0 - 15.0 * x + 6.0 * x * x)
        return q, w * self.end_motion[0], w * self.end_motion[1]

    def end_news(self, t: float, fade: float) -> str:
        """Once, at the first ``t`` past an end that still moves: the line saying so; else ''."""
        if self.end_motion is None or self.end_said or t <= self.end:
            return ""
        self.end_said = True
        dq, ddq = (np.abs(a) for a in self.end_motion)
        v, a = int(np.argmax(dq)), int(np.argmax(ddq))
        names = self.names or [f"column {c}" for c in self.columns]
        return (
            f"the desired trajectory ended while moving (its last point: q̇ {dq[v]:.3g} rad/s on {names[v]}, q̈ "
            f"{ddq[a]:.3g} rad/s² on {names[a]}): its stream stopped? Holding its last position, the feed-forward of "
            f"its velocity and acceleration faded out over {fade:g} s (end_fade)"
        )

    def forget_before(self, t: float) -> None:
        """Cut the chain of replaced trajectories where none is sampled again for times from ``t`` on: at the first
        one started by ``t`` (what it replaced is never reached again)."""
        node: DesiredTrajectory | None = self
        while node is not None:
            if node.t0 <= t:
                node.previous = None
                return
            node = node.previous


def parse_trajectory(
    msg: JointTrajectory | bytes,
    index: dict[str, int],
    t_now: float,
    bounds=None,
    current: DesiredTrajectory | None = None,
    q_rest: np.ndarray | None = None,
) -> DesiredTrajectory:
    """Validated :class:`DesiredTrajectory` of a JointTrajectory or its serialized bytes (the points checked as the
    servo nodes check them, :func:`.trajectory_plan.trajectory_points`) or ValueError naming the problem (joint,
    point, field).

    ``bounds`` = (|q̇| bounds, |q̈| bounds, velocity-bound sources), per joint in ``index`` order
    (:func:`servo_ff.dynamics.feedforward.desired_motion_bounds`): values beyond them are refused.

    ``current`` (the trajectory followed now) and ``q_rest`` (the desired position of every joint in ``index``
    order, at rest): the state a trajectory whose first point is later than its start is followed from, as
    JointTrajectoryController does (before: its first point was commanded at once, however far); without them,
    its first point. One that ended before ``t_now`` is refused (before: taken, the goal jumped to its end); so is
    one starting over :data:`MAX_CLOCK_GAP` ahead of ``t_now`` (another clock's), one whose start joins a joint not
    read yet (``q_rest`` NaN), or whose segment from that state to its first point
    is beyond ``bounds``."""
    names, cols, times, q, dq, ddq, has_dq, has_ddq, stamp = trajectory_points(msg, index)
    if bounds is not None:
        from servo_ff.dynamics.feedforward import check_desired_motion

        vmax, amax, vsource = bounds
        reason = check_desired_motion(dq, ddq, vmax[cols], amax[cols], names, [vsource[c] for c in cols])
        if reason:
            raise ValueError(reason)
    t0 = stamp if stamp > 0 else t_now
    # (a clock at 0 — sim time before its first /clock — has no time to judge a start against)
    if t_now > 0 and t0 - t_now > MAX_CLOCK_GAP:  # before: accepted, its first point held until then (54 years)
        lead = f"{t0 - t_now:.3g} s ahead of this node's clock ({t_now:.3f} s; over {MAX_CLOCK_GAP:g} s)"
        raise ValueError(f"it starts {lead} (header.stamp {stamp:.3f} s): {CLOCKS}")
    if t0 + times[-1] < t_now:
        ago = t_now - t0 - times[-1]
        mismatch = f": {CLOCKS}" if ago > MAX_CLOCK_GAP else ""
        raise ValueError(f"it ended {ago:.3f} s ago (header.stamp {stamp:.3f} s){mismatch}")
    start = None
    if q_rest is not None and times[0] > 0:  # a first point at 0 replaces the state followed now
        q0, dq0, ddq0 = np.array(q_rest, dtype=np.float64), np.zeros(len(q_rest)), np.zeros(len(q_rest))
        if current is not None:  # where the trajectory followed now is at t0 (at rest after its end)
            q0[current.columns], dq0[current.columns], ddq0[current.columns] = current.sample(t0)
        start = (q0[cols], dq0[cols], ddq0[cols])
        if not np.isfinite(start[0]).all():
            unread = [n for n, v in zip(names, start[0]) if not np.isfinite(v)]
            raise ValueError(f"{unread} not read on /joint_states yet: the state it starts from is unknown")
    traj = DesiredTrajectory(t0, times, q, dq, ddq, cols, has_dq, has_ddq, start)
    traj.names = list(names)
    if start is not None and bounds is not None:  # the segment joining it (its peaks: on a fine grid)
        s = np.linspace(0.0, float(times[0]), 65)
        _, dqs, ddqs = (np.stack(a) for a in zip(*(traj.spline.sample(x) for x in s)))
        at = "joining it from the state followed now:"
        reason = check_desired_motion(dqs, ddqs, vmax[cols], amax[cols], names, [vsource[c] for c in cols], at)
        if reason:
            raise ValueError(reason)
    if current is not None and t0 > t_now and np.array_equal(current.columns, cols):
        traj.previous = current  # followed until t0
        traj.forget_before(t_now)
    return traj
