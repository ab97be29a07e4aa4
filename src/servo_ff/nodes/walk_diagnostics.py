"""``servo_walk_node``'s status in ``/diagnostics``, once a second on the steady clock (a node on sim time waiting
for ``/clock`` says so too): its phase and what needs a look.

Phases: ``waiting for /clock``, ``waiting for the engine process`` (``engine_process``: not up yet) or ``waiting for
/joint_states`` (no pose taken), ``holding the measured pose`` (``start_delay``), ``approach`` (to the walking stance),
``walking``, ``halted`` (standing in double support), ``stopping`` (the engine process ended or hung: to the stance, a
new one starting), ``given up`` (engine processes that ended before they were up, ``walk_process.MAX_FAILED_STARTS``
in a row). Level: ERROR when given up; WARN while stopping, while waiting longer than ``walk_waiting.SAY_AFTER``
(``ENGINE_SAY_AFTER`` for the engine process), with a stale ``cmd_vel`` or IMU reading (or none since the walk
started), and when ``cmd_vel`` messages were refused or points' q̇/q̈ held since the last status; else OK. The
counters behind each (``cmd_refused``, ``cmd_clipped``, ``vel_held``, ``acc_held``, ``engine_faults``) are its
values."""

from __future__ import annotations

import math
import time
from typing import Any

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.clock import Clock, ClockType

from servo_ff.ros.clock_stall import ClockStall
from servo_ff.ros.common import TOPIC_DIAGNOSTICS, diag_name, hardware_id

from .walk_waiting import ENGINE_SAY_AFTER, SAY_AFTER, engine_wait

# the node's counters (attribute: diagnostics key); a rise since the last status: WARN
COUNTERS = {"cmd_refused": "cmd_refused", "vel_held": "vel_held", "acc_held": "acc_held", "faults": "engine_faults"}


def walk_phase(node: Any, now: float) -> str:
    """The walk node ``node``'s phase at ``now`` [s, ROS clock] (the module's list)."""
    if getattr(node, "engine_given_up", False):
        return "given up"
    if node.q0 is None:
        if node.get_clock().now().nanoseconds == 0:
            return "waiting for /clock"
        return "waiting for /joint_states" if engine_wait(node) is None else "waiting for the engine process"
    if node.stop is not None and math.isinf(node.t_walk):
        return "stopping"
    if now < node.t0:
        return "holding the measured pose"
    if now < node.t_walk:
        return "approach"
    return "halted" if node.standing else "walking"


class WalkDiagnostics:
    """Publishes ``node``'s status on ``/diagnostics`` every second of the steady clock."""

    def __init__(self, node: Any):
        self.node = node
        self.pub = node.create_publisher(DiagnosticArray, TOPIC_DIAGNOSTICS, 10)
        self.seen = {k: 0 for k in COUNTERS.values()}  # the counters at the last status
        self.clock = ClockStall()  # the ROS clock standing: the ages below are as of its last reading
        self.timer = node.create_timer(1.0, self.publish, clock=Clock(clock_type=ClockType.STEADY_TIME))

    def publish(self) -> None:
        msg = DiagnosticArray(status=[self.status()])
        msg.header.stamp = self.node.get_clock().now().to_msg()
        self.pub.publish(msg)

    def status(self) -> DiagnosticStatus:
        """The status now; the counters' rises are judged since the previous call."""
        n, now = self.node, self.node.now_s()
        phase = walk_phase(n, now)
        counts = {k: int(getattr(n, a)) for a, k in COUNTERS.items()}
        rises = [f"{counts[k] - self.seen[k]} {k}" for k in counts if counts[k] > self.seen[k]]
        self.seen = counts
        head, warn, waited, after = phase, [], time.monotonic() - n.waiting.since, SAY_AFTER
        if phase == "waiting for the engine process":
            waited, after = engine_wait(n) or 0.0, ENGINE_SAY_AFTER  # (0: up since the phase was read)
        if phase.startswith("waiting") and waited >= after:
            head, warn = f"{phase} for {waited:.0f} s", [""]  # (WARN; the head says it)
            if phase == "waiting for /joint_states" and n.waiting.seen:
                warn.append(n.pose.missing(now))  # (those that came lack joints)
        if phase == "stopping":
            warn.append("the engine process failed: stopping to the stance, a new one starting")
        stood = self.clock.standing(n.get_clock().now().nanoseconds)
        if stood is not None and stood >= 1.0 and phase != "waiting for /clock":
            warn.append(f"the clock stands ({stood:.0f} s, no /clock?): ages as of its last reading")
        if n.cmd_stale_logged:
            warn.append(f"no cmd_vel for {n.table['cmd_timeout']:g} s")
        if n.balance is not None and n.balance.age.stale:
            warn.append(f"{n.balance.topic} stale: no balance offset")
        if n.balance is not None and n.balance.missing:
            warn.append(f"no reading on {n.balance.topic} since the walk started: no balance offset")
        if rises:
            warn.append(f"since the last status: {', '.join(rises)}")
        level = DiagnosticStatus.WARN if warn else DiagnosticStatus.OK
        if phase == "given up":
            level = DiagnosticStatus.ERROR
        cmd_age = "none yet" if n.cmd_time is None else f"{now - n.cmd_time:.3f}"
        imu = "balance off" if n.balance is None else n.balance.age.state(now, float(n.table["imu_timeout"]))
        return DiagnosticStatus(
            level=level,
            name=diag_name(n, "walk"),
            hardware_id=hardware_id(n, "walk"),
            message="; ".join(x for x in (head, *warn) if x),
            values=[
                KeyValue(key="gait", value=n.gait),
                KeyValue(key="phase", value=phase),
                KeyValue(key="trajectories", value=str(n.messages)),
                KeyValue(key="cmd_vel", value=" ".join(f"{x:g}" for x in n.engine.cmd)),
                KeyValue(key="cmd_vel_age", value=cmd_age),
                KeyValue(key="halt_requested", value=str(n.engine.halt_requested)),
                KeyValue(key="cmd_clipped", value=str(n.cmd_clipped)),
                *(KeyValue(key=k, value=str(c)) for k, c in counts.items()),
                KeyValue(key="engine_pid", value="in process" if n.worker is None else str(n.worker.pid)),
                KeyValue(key="imu", value=imu or "none yet"),
            ],
        )
