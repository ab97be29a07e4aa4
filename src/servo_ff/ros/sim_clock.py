"""Who owns time in a simulated servo node (every sim backend: the stepper and MuJoCo).

With ``publish_clock: true`` the sim owns time: it publishes ``/clock`` (rosgraph_msgs/Clock) after every control
period, its own ROS clock (``use_sim_time`` is set) and every stamp it sends are that simulated time, and it steps
whole periods on a wall timer until the simulated time reaches ``real_time_factor`` × the wall time since the
start (at most ``max_catch_up`` per callback: a simulation slower than that re-anchors, i.e. runs slower than
asked); ``real_time_factor: 0`` runs as fast as it can (while active; inactive it runs at 1× real time): one period per
callback, or periods for about ``as_fast_batch`` seconds of wall time before the executor serves the subscriptions
(default: stepper 0, MuJoCo 10 ms) — a subscriber in the same executor then falls behind and loses states.

``lockstep: true`` instead steps one period per goal message received
(``<prefix>/commands`` or ``<prefix>/joint_command``) — a controller answering each ``joint_states`` closes the
loop on simulated time, as fast as both run — and after ``lockstep_timeout`` wall seconds without one (on the held
goal; a throttled warning; inactive, goals refused, one period per ``lockstep_timeout`` without a warning). A
JointState goal on ``<prefix>/joint_command`` whose ``header.stamp`` is that of a ``joint_states`` names the state
it answers: the answer to the latest state steps; an older one (late: the sim
stepped on its timeout meanwhile) becomes the held goal without a step, or is dropped when an answer to a newer
state came first — each a throttled line — so one late answer does not shift the loop by a period for the rest of
the run. Unstamped goals (``commands``, a JointState with stamp 0) step one period each, as they always did.

Otherwise it follows the node's ROS clock (wall time, or an external ``/clock`` under ``use_sim_time``): each
tick advances the whole periods elapsed on that clock (at most ``max_catch_up``) and publishes one state per
period, so ``/joint_states`` comes at ``rate_hz`` of that clock while its updates are finer than ``max_catch_up``
(``realtime: false``: exactly one period per tick). A step of that clock of ``FORWARD_JUMP`` (1 s) or more, and at
least twice ``max_catch_up``, is a jump forward (:mod:`.clock_jump`): the trajectory dropped; the simulation catches
up as after any step (at most ``max_catch_up``). Time not caught up (late ticks, a coarse clock, a jump, a paced
simulation slower than ``real_time_factor``) is said in a throttled warning.
"""

from __future__ import annotations

import math
import time
from typing import Any

from builtin_interfaces.msg import Time as TimeMsg
from diagnostic_msgs.msg import KeyValue
from rcl_interfaces.msg import SetParametersResult
from rclpy.parameter import Parameter
from rclpy.time import Time
from rosgraph_msgs.msg import Clock as ClockMsg
from sensor_msgs.msg import JointState

from .cdr_template import CdrTemplate
from .clock_jump import FORWARD_JUMP
from .common import TOPIC_CLOCK
from .joint_command_cdr import JointCommandCdr, deserialized
from .sim_time_params import sim_time_specs  # noqa: F401 (the backends' parameter tables import it from here)


class SimClock:
    """Mixin of a sim node: the time keeping above around its ``_step()`` (one control period of physics, False
    when it refuses the state) and ``publish_state(stamp)``."""

    def _init_clock(self, v: dict[str, Any]) -> None:
        self.period_ns = int(round(1e9 / v["rate_hz"]))
        self._t_ns: int | None = None  # simulated time of the last published state (follow mode)
        self.owns_clock = bool(v["publish_clock"])
        self.lockstep = bool(v["lockstep"]) and self.owns_clock
        self.sim_time_ns = 0  # simulated time when the sim owns the clock
        self._last_step_wall = 0.0
        self._rtf_mark: tuple[float, float] | None = None  # (wall [s], sim [s]) at the last measured_rtf()
        self._answered_ns = -1  # lockstep: stamp of the newest state a stamped goal answered
        self._timed_out: tuple[int, float] = (-1, 0.0)  # lockstep: (stamp, wall [s]) of the last state timed out
        self._lockstep_counts = {"timeout_steps": 0, "late_answers": 0, "dropped_answers": 0}
        if self.lockstep:
            self._read_joint_command_cdr()
        self._clock_check = None
        if self.owns_clock:
            self._own_clock()
        elif self.get_parameter("use_sim_time").value:
            self._arm_clock_check(0)
        self.add_on_set_parameters_callback(self._on_set_sim_time)  # after _own_clock: it sets use_sim_time
        self.add_post_set_parameters_callback(self._post_set_sim_time)

    def measured_rtf(self) -> float:
        """Simulated seconds per wall second since the previous call (NaN at the first): what the sim achieved,
        reported in its diagnostics (``real_time_factor_measured``), as Gazebo shows its real-time factor."""
        now = (time.monotonic(), self.now_s())
        mark, self._rtf_mark = self._rtf_mark, now
        if mark is None or now[0] <= mark[0]:
            return math.nan
        return (now[1] - mark[1]) / (now[0] - mark[0])

    def lockstep_stats(self) -> dict[str, int]:
        """Lockstep: periods stepped on ``lockstep_timeout``, late stamped answers taken as the held goal, stamped
        answers dropped (an answer to a newer state came first)."""
        return dict(self._lockstep_counts)

    def clock_values(self) -> list[KeyValue]:
        """The diagnostics key values of the time keeping: simulated time and the measured real-time factor
        (lockstep: its counts, :meth:`lockstep_stats`)."""
        return [
            KeyValue(key="sim_time_s", value=f"{self.now_s():.3f}"),
            KeyValue(key="real_time_factor_measured", value=f"{self.measured_rtf():.3f}"),
            KeyValue(key="clock", value="own /clock" if self.owns_clock else "node clock"),
            *(
                KeyValue(key=f"lockstep_{k}", value=str(n))
                for k, n in (self._lockstep_counts.items() if self.lockstep else ())
            ),
        ]

    def clock_text(self) -> str:
        """How this node keeps time, for its start-up line."""
        if not self.owns_clock:
            return "following the node clock"
        return f"owning /clock at real_time_factor {self.table['real_time_factor']:g}" + (
            " (lockstep)" if self.lockstep else ""
        )

    def _own_clock(self) -> None:
        """/clock publisher; the node's own ROS clock is set from the simulation each period (use_sim_time = true,
        without a /clock subscription of its own, which would lag behind)."""
        self.pub_clock = self.create_publisher(ClockMsg, TOPIC_CLOCK, 10)
        self._clock_cdr = CdrTemplate(ClockMsg(), [], stamp="clock")  # serialized once, the time written in place
        self._stamp = TimeMsg()  # the stamp of this period's states (publish_state copies it)
        if not self.get_parameter("use_sim_time").value:
            self.set_parameters([Parameter("use_sim_time", Parameter.Type.BOOL, True)])
        ts = getattr(self, "_time_source", None)
        sub = getattr(ts, "_clock_sub", None)
        if sub is not None:
            self.destroy_subscription(sub)
            ts._clock_sub = None
        self._set_time(0)

    def _read_joint_command_cdr(self) -> None:
        """``<prefix>/joint_command`` taken as CDR bytes: a goal in the joints' own layout read in place
        (:class:`.joint_command_cdr.JointCommandCdr`, ≈ 2 µs against rclpy's 13–26 µs for 20 joints)."""
        topic = self.resolve_topic_name(self.names["joint_command"])
        for sub in [s for s in self.subscriptions if s.topic_name == topic]:
            self.destroy_subscription(sub)
        self._jc_cdr = JointCommandCdr(self.joints)
        self.create_subscription(JointState, topic, self._on_joint_command_cdr, 10, raw=True)

    def _set_time(self, ns: int, node_clock: bool = True) -> None:
        """Simulated time ``ns``: /clock published, stamp set; the node's ROS clock as well unless ``node_clock`` is
        False (inside a batch of periods, where no callback reads it: :meth:`_sync_node_clock` after the batch)."""
        self.sim_time_ns = ns
        if node_clock:
            self._sync_node_clock()
        sec, nanosec = divmod(ns, 1_000_000_000)
        stamp = self._stamp
        stamp.sec, stamp.nanosec = sec, nanosec
        self._clock_cdr.set_stamp(sec, nanosec)
        self._clock_cdr.publish(self.pub_clock)

    def _sync_node_clock(self) -> None:
        self.get_clock().set_ros_time_override(Time(nanoseconds=self.sim_time_ns))

    def _on_set_sim_time(self, params: list[Parameter]) -> SetParametersResult:
        """A sim owning /clock set ``use_sim_time`` itself: a change is refused (its time would go to the wall)."""
        if self.owns_clock and any(p.name == "use_sim_time" and p.value is not True for p in params):
            return SetParametersResult(
                successful=False, reason="use_sim_time is set by this node itself: it owns /clock (publish_clock)"
            )
        return SetParametersResult(successful=True)

    def _post_set_sim_time(self, params: list[Parameter]) -> None:
        """``use_sim_time`` set true at run time (following the node clock): the check of start-up, from now."""
        if not self.owns_clock and any(p.name == "use_sim_time" and p.value is True for p in params):
            self._arm_clock_check(self.get_clock().now().nanoseconds)

    def _arm_clock_check(self, since_ns: int) -> None:
        """In 3 s of wall time: one warning if the node clock still reads ``since_ns`` (no /clock has come)."""
        if self._clock_check is not None:
            self.destroy_timer(self._clock_check)
        self._clock_since = since_ns
        self._clock_check = self.create_timer(3.0, self._check_clock, clock=self._steady)

    def _check_clock(self) -> None:
        self.destroy_timer(self._clock_check)
        self._clock_check = None
        if self.get_parameter("use_sim_time").value and self.get_clock().now().nanoseconds == self._clock_since:
            self.get_logger().warning(
                "use_sim_time is true and no /clock has arrived: the simulation waits for it "
                "(set publish_clock:=true to let this node own the time)"
            )

    def now_s(self) -> float:
        return self.sim_time_ns * 1e-9 if self.owns_clock else super().now_s()

    def _start_loop(self) -> None:
        self._stop_loop()
        self._t_ns = None
        if not self.owns_clock:
            self.timer = self.create_timer(self.period, self._tick)
        elif self.lockstep:
            self._last_step_wall = time.monotonic()
            timeout = float(self.table["lockstep_timeout"])
            self.timer = self.create_timer(timeout / 2, self._lockstep_timer, clock=self._steady)
        else:
            rtf = self._paced_rtf()
            self._pace = (time.monotonic(), self.sim_time_ns)
            period = min(self.period / rtf, 0.002) if rtf > 0 else 0.0
            self.timer = self.create_timer(period, self._tick_paced, clock=self._steady)

    def _tick_owned(self, node_clock: bool = True) -> bool:
        """One period on the owned clock: trajectory goal, physics, /clock, joint_states (False: not stepped).
        ``node_clock`` False: the node's ROS clock is left for the caller to sync after its batch."""
        self.follow_trajectory(self.sim_time_ns * 1e-9)
        if not self._step():
            return False
        self._last_step_wall = time.monotonic()
        self._set_time(self.sim_time_ns + self.period_ns, node_clock)
        self.publish_state(self._stamp)  # the time _set_time published
        return True

    def _paced_rtf(self) -> float:
        """``real_time_factor``, but 1 while inactive at 0 (as fast as possible): nobody drives the fallen robot, and
        a sim racing ahead would burn a core and put its time far ahead of a manager's activate."""
        rtf = float(self.table["real_time_factor"])
        return 1.0 if rtf <= 0 and not self.active else rtf

    def _tick_paced(self) -> None:
        rtf = self._paced_rtf()
        now = time.monotonic()
        try:
            if rtf <= 0:
                batch = self.table["as_fast_batch"]
                while self._tick_owned(False) and self.active and time.monotonic() - now < batch:
                    pass
                return
            wall0, sim0 = self._pace
            due = (sim0 + int(rtf * (now - wall0) * 1e9) - self.sim_time_ns) // self.period_ns
            cap = max(1, int(self.table["max_catch_up"] / self.period))
            if due > cap:
                self._pace = (now - cap * self.period / rtf, self.sim_time_ns)  # re-anchored: lost time not made up
                self._said_dropped((due - cap) * self.period, "the simulation is slower than real_time_factor")
                due = cap
            for _ in range(due):
                if not self._tick_owned(False):
                    return
        finally:
            self._sync_node_clock()  # once per batch: no callback runs inside it

    def _lockstep_timer(self) -> None:
        now = time.monotonic()
        if now - self._last_step_wall < self.table["lockstep_timeout"]:
            return
        self._timed_out = (self.sim_time_ns, self._last_step_wall)
        self._last_step_wall = now
        if not (self.active and self.hw_torque_is_on()):  # no goals taken (torque off: refused): nothing is late
            self._tick_owned()
            return
        self._lockstep_counts["timeout_steps"] += 1
        self.throttle(
            "lockstep:timeout",
            self.get_logger().warning,
            f"lockstep_timeout: no goal {now - self._timed_out[1]:.3f} s of wall time after the state at "
            f"{self.sim_time_ns * 1e-9:.3f} s (lockstep_timeout {self.table['lockstep_timeout']:g} s); stepped on "
            f"the held goal ({self._lockstep_counts['timeout_steps']} timeout step(s) so far)",
        )
        self._tick_owned()

    def _on_commands(self, msg) -> None:
        super()._on_commands(msg)
        if self.lockstep and self.active:
            self._tick_owned()

    def _on_joint_command(self, msg) -> None:
        """Lockstep: a goal stamped with an earlier state's stamp is late (see the module's docstring)."""
        if not (self.lockstep and self.active):
            return super()._on_joint_command(msg)
        stamp = msg.header.stamp
        kind = self._answer(stamp.sec * 1_000_000_000 + stamp.nanosec)
        if kind >= 0:
            super()._on_joint_command(msg)
        if kind > 0:
            self._tick_owned()

    def _on_joint_command_cdr(self, data: bytes) -> None:
        read = self._jc_cdr.read(data) if self.active else None
        source = self.names["joint_command"]
        if read is None:  # another layout (or inactive: refused with its line)
            try:
                msg = deserialized(data, JointState)
            except ValueError as e:
                return self.gate._reject(source, "bytes", str(e))
            return self._on_joint_command(msg)
        kind = self._answer(read[0])
        if kind >= 0 and not self._refuse_goal(source, self.joints):
            self._accept(self.gate.from_array(read[1], source))
        if kind > 0:
            self._tick_owned()

    def _answer(self, ns: int) -> int:
        """What a lockstep goal stamped ``ns`` does: 1 applied and stepped (the answer to the latest state, or
        unstamped), 0 applied as the held goal without a step (late), -1 dropped."""
        if 0 < ns < self.sim_time_ns:
            return self._late_answer(ns)
        if ns > self.sim_time_ns:
            self.throttle(
                "lockstep:ahead",
                self.get_logger().warning,
                f"{self.names['joint_command']}: goal stamped {ns * 1e-9:.3f} s, after the latest state "
                f"({self.sim_time_ns * 1e-9:.3f} s): it answers no state of this sim; stepped as an unstamped goal",
            )
        elif ns:
            self._answered_ns = ns
        return 1

    def _late_answer(self, ns: int) -> int:
        """A stamped goal answering a state older than the latest: the held goal if no newer state was answered
        (not stepped: the answer to the latest state steps), else dropped; one throttled line either way."""
        source = self.names["joint_command"]
        behind = (self.sim_time_ns - ns) // self.period_ns
        when = f"state at {ns * 1e-9:.3f} s ({behind} period(s) behind the latest"
        stamp, wall = self._timed_out
        if stamp == ns:
            when += f", {time.monotonic() - wall:.3f} s of wall time after the state"
        when += f"; lockstep_timeout {self.table['lockstep_timeout']:g} s)"
        if ns <= self._answered_ns:
            self._lockstep_counts["dropped_answers"] += 1
            self.throttle(
                "lockstep:dropped",
                self.get_logger().warning,
                f"{source}: goal answering the {when} dropped: an answer to the state at "
                f"{self._answered_ns * 1e-9:.3f} s came before it",
            )
            return -1
        self._lockstep_counts["late_answers"] += 1
        self._answered_ns = ns
        self.throttle(
            "lockstep:late",
            self.get_logger().warning,
            f"{source}: late goal answering the {when}: held from now on, not stepped (the sim stepped on the held "
            "goal meanwhile; the answer to its latest state steps it)",
        )
        return 0

    def _tick(self) -> None:
        """Follow mode: the whole periods elapsed on the node clock since the last state."""
        now = self.get_clock().now().nanoseconds
        if not self.table["realtime"]:
            self.follow_trajectory(now * 1e-9)
            if self._step():
                self.publish_state(self.stamp())
            return
        if now == 0:  # sim time not started yet
            return
        if self._t_ns is None or now < self._t_ns - self.period_ns:  # first tick, or the clock went back
            self._t_ns = now - self.period_ns
        steps = (now - self._t_ns) // self.period_ns
        cap = max(1, int(self.table["max_catch_up"] / self.period))
        if steps > cap:  # too late: the simulation drops the time it cannot catch up
            self._t_ns = now - cap * self.period_ns
            self._said_dropped((steps - cap) * self.period, "ticks came late or the node clock advanced in steps")
            steps = cap
        for _ in range(steps):
            self.follow_trajectory(self._t_ns * 1e-9)
            if not self._step():
                return
            self._t_ns += self.period_ns
            self.publish_state(Time(nanoseconds=self._t_ns).to_msg())

    def _said_dropped(self, dropped: float, why: str) -> None:
        """One throttled warning: ``dropped`` [s] of simulated time not caught up (more than ``max_catch_up``)."""
        self.throttle(
            "clock:dropped",
            self.get_logger().warning,
            f"{dropped:.3f} s of simulated time dropped, not caught up ({why}; max_catch_up "
            f"{self.table['max_catch_up']:g} s per tick)",
        )

    def forward_jump_bound(self) -> float | None:
        """Following the node clock: a step of it of more than ``FORWARD_JUMP`` and more than twice ``max_catch_up``
        is a jump (a step the sim catches up, as a coarse /clock's, is time passing); owning /clock: none."""
        if self.table["publish_clock"]:
            return None
        return max(FORWARD_JUMP, 2.0 * float(self.table["max_catch_up"]))

    def _drop_ahead(self, how: str) -> str:
        """The node clock jumped forward: the trajectory goes; the next tick catches up at most ``max_catch_up`` of
        the time jumped over, as after any late tick (the rest is not simulated)."""
        said = super()._drop_ahead(how)
        skipped = "" if self._t_ns is None else f" of {(self.get_clock().now().nanoseconds - self._t_ns) * 1e-9:.3f} s"
        what = (
            f"the simulation goes on from the new time, the time jumped over not simulated beyond max_catch_up "
            f"({self.table['max_catch_up']:g} s{skipped})"
        )
        return f"{said}; {what}" if said else what

    def _apply_clock(self, changed: set[str]) -> None:
        """The loop restarted on the new real_time_factor (paced) or lockstep_timeout (lockstep: polled at half);
        the jump watch on the new max_catch_up."""
        running = self.timer is not None  # active, or inactive (stepped without goals)
        if running and self.owns_clock and ("lockstep_timeout" if self.lockstep else "real_time_factor") in changed:
            self._start_loop()
        if "max_catch_up" in changed and not self.owns_clock:
            self._watch_clock()
