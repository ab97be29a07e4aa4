"""How the ILC node runs one trial on a servo interface (``execution``): ``stream`` publishes the command sample by
sample on the wall clock; ``trajectory`` sends it as one JointTrajectory stamped on the servo node's time and
records ``/joint_states`` by their stamps, so a simulation owning ``/clock`` runs it as fast as it can.

A stream trial whose goals went out later than :func:`late_bound` after their time (a starved process: the servo
held the goal before over several periods, then got them bunched) is run again, at most ``RESENDS`` times (before:
learned from as if it were the command), and so is one recorded with a gap in its states' stamps (:func:`gap_in`:
ticks the servo node missed, a sim following the wall clock that dropped simulated time, states lost; before:
interpolated over and learned from) or whose states do not cover it (lost at its start or end; before: the run
failed); it is recorded until a state stamped at its end has come. Measured (test_ilc_node_learns_and_writes_result,
the sim in the same process, two busy loops on 2 cores), the sample the sim applied in each period against the
one due: undisturbed trials vary over 0–5 samples, their goals sent at most 34 ms late and no gap; the trials
varying over 9–43 samples (errors 0.18–0.34 rad for 0.10–0.14) had goals sent 40–415 ms late or gaps of 23–381
ms but one (goals delayed 93 ms on their way into the servo node: not seen here, sent 22 ms late).

A trajectory trial is timed on the servo node's newest time seen here (the newest ``/joint_states`` stamp taken
from the queue, or ``/clock`` under ``use_sim_time`` when later), but a sim running as fast as it can is ahead of
that by however long this node took to take its messages and send the trial (seen from ``/joint_states`` alone:
0.05–2.4 s of sim time). A trajectory that arrives after its ``header.stamp`` is followed from the time of
reception (JointTrajectoryController semantics): its hold, and the start of the command when it is later than
the hold, are skipped while the recording by stamps shows the servo standing still. So every trial waits for the
servo node's ``trajectory_status``: refused → the ILC fails with the reason; arrived late (after its start, or
even after its end, which the servo node refuses) → sent again at once with a longer lead (kept for the next
trials), the late one discarded. On sim time the states' stamps are periodic, so a trial recorded with a gap
lost states on the way (a queue that overflowed). On wall time a gap is ticks the servo node missed (a starved
process: a sim following the wall clock drops the simulated time it cannot catch up, the state frozen while the
trajectory's time jumps; a servo holds a stale goal) or lost states: before, interpolated over and learned from
(the demo under load: trial 0's error 0.3608 rad for 0.3038 after a 394 ms gap). Either way the trial is run
again, and the ILC fails after ``RESENDS`` such reruns rather than learn from what was not the command. A
``/joint_states`` stamp that goes back (the clock jumped back: a restarted simulation) ends the trial with that
reason: a trial is never learned across it, nor waited for until the new clock reaches the old time."""

from __future__ import annotations

import json
import math
import time

import numpy as np
from builtin_interfaces.msg import Duration
from std_msgs.msg import String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from servo_ff.identification.alpha_data import first_step_back
from servo_ff.identification.ilc import ILCStop

EXECUTIONS = ("stream", "trajectory")
LEAD_STEPS = 2  # a trajectory trial starts at first this many samples after the newest /joint_states stamp
RESENDS = 8  # a trial that reached the servo node after its start is sent again at most this often
STALL_TIMEOUT = 10.0  # [s] wall time without a new /joint_states (or the trial's status) that aborts a trial
NO_WAITER = 2**63 - 1  # [ns] _wake_ns when no trial waits for a stamp
SHUTDOWN = "ROS shut down (Ctrl-C?) during the trial: trial aborted"
STATUS_DISCOVERY = 2.0  # [s] wall time a trial waits for a trajectory_status publisher before running unchecked


def went_back(joint: str, t: float, before: float) -> str:
    """The reason a trial ends when the /joint_states stamps of ``joint`` go back (``t`` [s] after ``before``)."""
    return (
        f"/joint_states of {joint} went back in time ({t:.3f} s after {before:.3f} s): the clock jumped back (a "
        "restarted simulation, a bag in a loop?); trial aborted, not learned across it"
    )


def recorded(rows: list, joint: str) -> np.ndarray:
    """The (stamp [s], position [rad]) rows of a trial as an array; RuntimeError when a stamp goes back."""
    tr = np.array(rows, dtype=np.float64).reshape(-1, 2)
    k = first_step_back(tr[:, 0])
    if k is not None:
        raise RuntimeError(went_back(joint, tr[k, 0], tr[k - 1, 0]))
    return tr


def covering(tr: np.ndarray, grid: np.ndarray, joint: str, tol: float = 0.0) -> None:
    """RuntimeError unless the recorded (t [s], q) rows ``tr`` cover the trial's ``grid`` [s] to within ``tol``
    (stamps of another clock, or states that stopped, would be held at their edge and learned from: before, stream
    trials were)."""
    if len(tr) < 2 or tr[0, 0] > grid[0] + tol or tr[-1, 0] < grid[-1] - tol:
        span = f"stamped {tr[0, 0]:.3f}–{tr[-1, 0]:.3f} s" if len(tr) else "none"
        raise RuntimeError(
            f"/joint_states of {joint} ({span}) do not cover the trial ({grid[0]:.3f}–{grid[-1]:.3f} s, node clock)"
        )


def late_bound(window: float, dt: float) -> float:
    """The latest [s] a streamed goal may go out after its time: the error's window D (``window`` [s], Eq. 28: the
    time shift the ILC's own error measure ignores) plus one sample ``dt`` [s] (a goal waits for the servo's next
    tick anyway: unloaded, the sample a simulated period applies varies over 2 samples). Later, the servo held the
    goal before it over more periods than that: the trial was not the command (before: 10 samples, 100 ms at
    100 Hz, passed trials whose goals went out 40–84 ms late, errors up to 0.33 rad for 0.10–0.14)."""
    return window + dt


def gap_in(tr: np.ndarray, grid: np.ndarray, dt: float, hold: float = 0.0) -> str:
    """'' or the gap in the recorded (t [s], q) rows ``tr`` over the trial's ``grid`` [s] (± ``dt``, and the stamps
    just outside it: a gap over an end is interpolated over as well; before, missed): a step between stamps over
    2.5 × their median, and over the median plus ``hold`` [s], is ticks the servo node missed or states lost,
    interpolated over if learned from. ``hold`` (:func:`late_bound`): a tick missed for as long as a goal may be late
    holds the goal before no longer than a late goal does (a hardware node's PING of a missing servo once a second:
    a 37 ms gap at 100 Hz with the FTDI's 16 ms latency timer; before, every trial of over a second was run again
    and the ILC failed)."""
    t = tr[:, 0]
    lo = max(int(np.searchsorted(t, grid[0] - dt, "right")) - 1, 0)
    inside = t[lo : int(np.searchsorted(t, grid[-1] + dt, "left")) + 1]
    gaps = np.diff(inside)
    median = max(float(np.median(gaps)), 1e-9) if gaps.size else 0.0
    if not gaps.size or gaps.max() <= max(2.5 * median, median + hold):
        return ""
    return f"trial recorded with a {gaps.max() * 1e3:.1f} ms gap in /joint_states (median {median * 1e3:.1f} ms)"


class ILCTrials:
    """Mixin of the ILC node: ``execute(command, dt)`` → the positions on the command grid."""

    def _live(self) -> bool:
        """ROS is up and the node not being destroyed (a Ctrl-C: spin_node destroys it, rclpy shuts the context
        down from its own thread, in either order)."""
        return not getattr(self, "_closing", False) and self.context.ok()

    def _wait_stamp(self, ns: int, give_up: float = math.inf) -> None:
        """Block until a /joint_states of the joint stamped at or after ``ns`` arrived (its time, not wall time), or
        until ``time.monotonic()`` passes ``give_up``; RuntimeError when none comes for ``STALL_TIMEOUT`` s."""
        with self._js_seen:
            last, seen = self.js_ns, time.monotonic()
            self._wake_ns = ns
            try:
                while self.js_ns < ns and time.monotonic() < give_up:
                    if not self._live():
                        raise ILCStop(SHUTDOWN)
                    if self.js_ns < last:  # its stamp would come only when the new clock reaches the old time
                        raise RuntimeError(went_back(self.table["joint"], self.js_ns * 1e-9, last * 1e-9))
                    if self.js_ns != last:
                        last, seen = self.js_ns, time.monotonic()
                    elif time.monotonic() - seen > STALL_TIMEOUT:
                        raise RuntimeError(
                            f"/joint_states of {self.table['joint']} stopped at {self.js_ns * 1e-9:.3f} s (waiting "
                            f"for {ns * 1e-9:.3f} s, nothing new for {STALL_TIMEOUT:g} s)"
                        )
                    self._js_seen.wait(0.25)
            finally:
                self._wake_ns = NO_WAITER

    def _on_trajectory_status(self, msg: String) -> None:
        """``servo/trajectory_status`` of the servo node: kept by the trajectory's stamp for :meth:`_sent`."""
        try:
            status = json.loads(msg.data)
            stamp = int(status["stamp_ns"])
        except (ValueError, KeyError, TypeError):
            return
        if self.table["joint"] in status.get("joints", ()):
            with self._js_seen:
                self._traj_status[stamp] = status
                self._js_seen.notify_all()

    def _sent(self, msg: JointTrajectory, stamp: int) -> dict | None:
        """Publish the trial and wait for the servo node's status of it (None: the servo node publishes none)."""
        with self._js_seen:
            self._traj_status.clear()
        self.pub_traj.publish(msg)
        if self.count_publishers(self.status_topic) == 0:
            if not self._unverified:
                self._unverified = True
                self.get_logger().warning(
                    f"no publisher on {self.status_topic}: whether the trials reach the servo node before their "
                    "start is not checked"
                )
            return None
        deadline = time.monotonic() + STALL_TIMEOUT
        with self._js_seen:
            while stamp not in self._traj_status:
                if not self._live():
                    raise ILCStop(SHUTDOWN)
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"no {self.status_topic} for the trial stamped {stamp * 1e-9:.3f} s within {STALL_TIMEOUT:g} s"
                    )
                self._js_seen.wait(0.25)
            return self._traj_status[stamp]

    def _execute_trajectory(self, command: np.ndarray, dt: float) -> np.ndarray:
        """The trial as one JointTrajectory (positions every dt: linear, i.e. exactly the command at the servo
        node's ticks when its rate is rate_hz) started a lead after the newest state; sent again with a longer
        lead while the servo node reports it arrived after its start; recorded and waited for on the servo node's
        stamps, so it runs at whatever pace that node's time goes."""
        step = int(round(dt * 1e9))
        n_settle = max(1, int(round(self.table["settle_time"] / dt)))
        self._set_gains()
        knots = np.arange(n_settle, n_settle + len(command)) * step  # command[k] at start + knots[k]
        points = [(step, command[0])] if n_settle > 1 else []  # to the curve's start, then held: the settling
        points += zip(knots.tolist(), command.tolist())
        msg = JointTrajectory(joint_names=[self.table["joint"]])
        msg.points = [
            JointTrajectoryPoint(
                positions=[float(q)], time_from_start=Duration(sec=t // 1_000_000_000, nanosec=t % 1_000_000_000)
            )
            for t, q in points
        ]
        if self._lead_ns is None:
            self._lead_ns = LEAD_STEPS * step
        t_wait = time.monotonic()
        while self.pub_traj.get_subscription_count() == 0:  # a trajectory nobody takes would be recorded as a trial
            if time.monotonic() > t_wait + STALL_TIMEOUT or not self._live():
                raise RuntimeError(f"no servo node subscribes to {self.pub_traj.topic_name}")
            time.sleep(0.05)
        while not self._unverified and self.count_publishers(self.status_topic) == 0:
            if time.monotonic() > t_wait + STATUS_DISCOVERY:  # at start-up it may come a little after the above
                break
            time.sleep(0.05)
        for rerun in range(RESENDS + 1):
            tr, grid = self._trajectory_trial(msg, knots, step, len(command))
            what = gap_in(tr, grid, dt, late_bound(self.table["window"], dt))
            if not what:
                break
            why = "states lost on the way here" if self._sim_time else "ticks the servo node missed or states lost"
            if rerun == RESENDS:
                raise RuntimeError(f"{what}, {RESENDS + 1} times ({why}): the trials are not the command")
            self.get_logger().warning(f"{what} ({why}): not the command, the trial is run again")
        self._trial_supply.append(float(np.mean(self.supply)) if self.supply else math.nan)
        return np.interp(grid, tr[:, 0], tr[:, 1])

    def _trajectory_trial(self, msg: JointTrajectory, knots: np.ndarray, step: int, n: int) -> tuple:
        """Send the trial (again with a longer lead while it arrives late) and record it: (the recorded (stamp,
        position) rows, the command grid [s])."""
        self.supply = []
        self.recording = []
        try:
            for attempt in range(RESENDS + 1):
                with self._js_seen:  # read after the message is built: the servo node's time went on meanwhile
                    if self.js_ns < 0:
                        raise RuntimeError(f"no /joint_states for {self.table['joint']} yet")
                    now = self.js_ns  # the servo node's time base (sim time when it owns /clock)
                if self._sim_time:  # /clock (depth 1) is fresher than the newest /joint_states taken from the queue
                    now = max(now, self.get_clock().now().nanoseconds)
                start = now + self._lead_ns
                msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(start, 1_000_000_000)
                status = self._sent(msg, start)
                if status is None:
                    break
                late = int(status["received_ns"]) - start
                if not status.get("accepted") and late <= int(knots[-1]):  # refused, not for arriving after its end
                    raise RuntimeError(f"the servo node refused the trial: {status.get('reason', '')}")
                if late <= 0:
                    break
                if attempt == RESENDS:
                    raise RuntimeError(
                        f"the trial reached the servo node {late * 1e-9:.3f} s after its start {RESENDS + 1} times "
                        f"(lead {self._lead_ns * 1e-9:.3f} s): the servo node's time runs away from this node"
                    )
                self._lead_ns = 2 * (self._lead_ns + late)
                self.get_logger().warning(
                    f"the trial reached the servo node {late * 1e-9:.3f} s after its start (its time ran ahead of "
                    f"the newest time seen here): sent again, {self._lead_ns * 1e-9:.3f} s ahead"
                )
            t0, t_end = start + int(knots[0]), start + int(knots[-1])
            self._wait_stamp(t_end + step)
        finally:
            rec, self.recording = self.recording, None
        tr = recorded(rec, self.table["joint"])
        grid = (t0 + np.arange(n) * step) * 1e-9
        covering(tr, grid, self.table["joint"])
        return tr, grid

    def execute(self, command: np.ndarray, dt: float) -> np.ndarray:
        """One trial: settle at command[0], run the command (streamed in real time, or as one trajectory),
        return the positions resampled on the command grid. A streamed trial whose goals went out more than
        :func:`late_bound` after their time, or recorded with a gap in its states, is run again (at most ``RESENDS``
        times, then the run fails naming what went wrong)."""
        if self.table["execution"] == "trajectory":
            return self._execute_trajectory(command, dt)
        bound = late_bound(self.table["window"], dt)
        for rerun in range(RESENDS + 1):
            q, late, what = self._stream_trial(command, dt)
            if not what and late <= bound:
                break
            what = what or (
                f"goals of the trial sent up to {late:.3f} s after their time (bound {bound:.3f} s: window + one "
                "sample; a starved process, the servo held a goal over several periods)"
            )
            if rerun == RESENDS:
                raise RuntimeError(f"{what}, {RESENDS + 1} times: the trials are not the command")
            self.get_logger().warning(f"{what}: not the command, the trial is run again")
        self._trial_supply.append(float(np.mean(self.supply)) if self.supply else math.nan)
        return q

    def _stream_trial(self, command: np.ndarray, dt: float) -> tuple[np.ndarray, float, str]:
        """Settle, stream the command at ``dt`` [s] of wall time, record: (the positions on the command grid, the
        latest a goal went out after its time [s], '' or why the states do not cover the trial)."""
        self._set_gains()
        self._command(command[0])
        time.sleep(self.table["settle_time"])
        self.supply = []
        self.recording = []
        t0 = time.monotonic()
        t0_ros = self._ros_now()
        late = 0.0
        for k, q in enumerate(command):
            if not self._live():
                raise ILCStop(SHUTDOWN)
            late = max(late, time.monotonic() - (t0 + k * dt))
            self._command(q)
            delay = t0 + (k + 1) * dt - time.monotonic()
            if delay > 0:
                time.sleep(delay)
        # the states up to the trial's end, however late they come here (a starved process; before: 2 samples'
        # time, then 'do not cover the trial'); stamps of another clock are said by covering() after STALL_TIMEOUT
        end = int(round((t0_ros + (len(command) - 1) * dt) * 1e9))
        self._wait_stamp(end, time.monotonic() + STALL_TIMEOUT)
        rec, self.recording = self.recording, None
        if len(rec) < 2:
            raise RuntimeError(f"no /joint_states for {self.table['joint']} during the trial")
        tr = recorded(rec, self.table["joint"])
        grid = t0_ros + np.arange(len(command)) * dt
        if not ((tr[:, 0] >= grid[0]) & (tr[:, 0] <= grid[-1])).any():  # stamps of another clock: no rerun helps
            covering(tr, grid, self.table["joint"])
        try:  # states lost at the start or the end (a starved process): run again (before: the run failed)
            covering(tr, grid, self.table["joint"], max(2 * dt, 0.05))  # the states' period and transport
        except RuntimeError as e:
            return grid, late, str(e)
        # ticks missed (a sim following the wall clock dropped time), states lost
        gap = gap_in(tr, grid, dt, late_bound(self.table["window"], dt))
        return np.interp(grid, tr[:, 0], tr[:, 1]), late, gap and f"{gap} (ticks the servo node missed or states lost)"
