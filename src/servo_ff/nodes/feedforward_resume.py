"""How ``servo_feedforward_node`` follows its servo node's torque, the latched ``servo/torque_enabled``
(std_msgs/Bool, :mod:`servo_ff.ros.torque_state`): while it is false the node sends no goal (said once: the servos
are limp, a goal would only be the target they snap to when it comes on). When it comes on again (``activate``,
``torque_enable`` true, a hardware bus back after a loss: the state is false while it is lost) — or on for the first
time after goals went out before any state was heard (a servo node activated after this one started) — the joints
stand wherever they fell: the pose is read again (:class:`servo_ff.ros.start_pose.StartPose`, every goal joint) and
the goals blend from it, at rest, into the desired trajectory (:class:`ResumeBlend`). (ros2_control's
JointTrajectoryController holds the state it reads on activation and drops its trajectory; this node blends back into
the desired trajectory its walking stack keeps streaming.) A sim's ``reset`` while torque stays on changes no state:
no blend follows it. Before, the next goal was the trajectory's: on the pendulum 1.35 rad away, the joint swung
back at 8 rad/s, and nothing was said.

The state is true only while *every* servo's torque is on: one servo's protective shutdown makes it false too. While
servos report a hardware error (``/diagnostics``, :mod:`servo_ff.ros.servo_faults`), the false is taken for theirs:
the others are driven on (the goals go by name without the faulted joints, as before), from the pose read again
when their goals had paused (the error is often heard after the false).

Until a state is heard (no servo node publishing it) the goals go out as before."""

from __future__ import annotations

import numpy as np
from std_msgs.msg import Bool

from servo_ff.ros.common import TOPIC_TORQUE_ENABLED
from servo_ff.ros.robot_description import latched_qos

RESUME_MIN_S = 0.1  # [s] shortest blend (a pose that barely moved)
WAIT_SAID_AFTER = 1.0  # [s] a goal joint not read again for longer is said (throttled)
SMOOTHSTEP_PEAK = 15.0 / 8.0  # max of ds/dx for s(x) = 10x³ − 15x⁴ + 6x⁵ on [0, 1]


def resume_duration(gap: float, speed: float) -> float:
    """[s] the blend over a largest gap ``gap`` [rad] whose own part peaks at ``speed`` [rad/s]: 15/8·gap/speed
    (the quintic smoothstep's peak slope), at least :data:`RESUME_MIN_S`."""
    return max(RESUME_MIN_S, SMOOTHSTEP_PEAK * gap / speed)


class ResumeBlend:
    """From ``q0`` (per robot joint [rad], at rest; NaN: not blended) at ``t0`` [s] into the desired trajectory over
    ``duration`` [s]: q = q0 + s·(q_d − q0), q̇ = ṡ·(q_d − q0) + s·q̇_d, q̈ = s̈·(q_d − q0) + 2ṡ·q̇_d + s·q̈_d with s the
    quintic smoothstep of (t − t0)/duration: the first goal at q0 with q̇ = q̈ = 0, the last on the trajectory with
    its q̇ and q̈ (position, velocity and acceleration continuous at both ends)."""

    def __init__(self, t0: float, q0: np.ndarray, duration: float):
        self.t0, self.q0, self.duration = float(t0), np.array(q0, dtype=np.float64), float(duration)

    def done(self, t: float) -> bool:
        return t >= self.t0 + self.duration

    def apply(
        self, t: float, cols: np.ndarray, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The desired (q, q̇, q̈) of the joints ``cols`` at ``t`` blended from ``q0``."""
        x = min(max((t - self.t0) / self.duration, 0.0), 1.0)
        s = x**3 * (10.0 - 15.0 * x + 6.0 * x * x)
        s1 = 30.0 * x * x * (1.0 - x) ** 2 / self.duration
        s2 = 60.0 * x * (1.0 - x) * (1.0 - 2.0 * x) / self.duration**2
        q0 = self.q0[cols]
        e = np.where(np.isfinite(q0), q - q0, 0.0)  # a joint never read: the trajectory's
        return q - (1.0 - s) * e, s1 * e + s * dq, s2 * e + 2.0 * s1 * dq + s * ddq


class TorqueFollow:
    """Mixin of :class:`~.feedforward_node.FeedForwardNode`: the torque state and the blend after it came on."""

    def _init_torque(self) -> None:
        self.torque_on: bool | None = None  # None: no servo/torque_enabled heard yet (goals go out)
        self.paused = False  # torque off, no servo reporting an error: no goals
        self.resuming = False  # on again: the next goal waits for the pose read again, then blends
        self.resume_cause, self.resume_since = "", 0.0  # what the blend's line says; [s] since when
        self.blend: ResumeBlend | None = None
        self.create_subscription(Bool, TOPIC_TORQUE_ENABLED, self._on_torque, latched_qos(1))

    def _on_torque(self, msg: Bool) -> None:
        on, was = bool(msg.data), self.torque_on
        if on == was:
            return
        self.torque_on = on
        log = self.get_logger()
        if not on:
            self.resuming, self.blend = False, None
            others = "but to the others while servos report a hardware error"
            log.warning(f"{TOPIC_TORQUE_ENABLED} false: servos are limp; no goal until the torque is on again (then "
                        f"from where the joints stand), {others}")  # fmt: skip
            return
        self.paused = False
        if was is not None or self.ticks > 0:  # (on before any goal: the first goal starts from the pose anyway)
            self._restart(f"{TOPIC_TORQUE_ENABLED} true")

    def _restart(self, cause: str) -> None:
        """The joints may stand anywhere: the pose is read again, the next goal blends from it (or the next
        trajectory starts from it)."""
        self.pose.read_again(self.q_des)
        self._listen_joint_states(True)
        self.resuming, self.resume_cause, self.blend = self.traj is not None, cause, None
        self.resume_since = self._now()
        if self.traj is None:
            self.get_logger().info(f"{cause}: the next desired trajectory starts from where the joints stand")

    def _torque_gate(self, now: float) -> bool:
        """Whether a tick at ``now`` sends a goal: not while the torque is off (unless servos report a hardware
        error: then to the others, from the pose read again when their goals had paused), nor while resuming
        until every goal joint was read again."""
        if self.torque_on is False and not self.faults.faulted:
            self.paused = True
            return False
        if self.paused:  # the torque off is the faulted servos': the others driven again
            self.paused = False
            self._restart(f"{TOPIC_TORQUE_ENABLED} false with {sorted(self.faults.faulted)} reporting an error")
            return False  # the pose: from the next /joint_states
        return not self.resuming or self._resume(now)

    def _resume(self, now: float) -> bool:
        """At a tick while resuming: False (no goal) until every goal joint was read again; then the blend from
        that pose into the trajectory followed now starts, in one line."""
        if not self.pose.all_read():  # (several servo nodes: a message each) said after WAIT_SAID_AFTER
            if now - self.resume_since > WAIT_SAID_AFTER:
                self._warn("unread", f"{self.pose.never_read(self.joints)} not read since {self.resume_cause}")
            return False
        q0 = self.q_des.copy()  # the goal joints as read now, the others as held (read, or desired)
        q, _, _ = self.traj.sample(now)
        gap = np.abs(q - q0[self.traj.columns])
        largest = float(np.nanmax(gap)) if np.isfinite(gap).any() else 0.0
        speed = float(self.table["resume_speed"])
        self.blend, self.resuming = ResumeBlend(now, q0, resume_duration(largest, speed)), False
        pose = np.round(q0[self.out_cols], 3).tolist()
        self.get_logger().info(
            f"{self.resume_cause}: the goals start where the joints stand ({pose} rad) and join the "
            f"desired trajectory over {self.blend.duration:.2f} s (largest gap {largest:.3f} rad, resume_speed "
            f"{speed:g} rad/s)"
        )
        return True

    def _blended(
        self, now: float, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The trajectory's sample, blended while a blend runs."""
        if self.blend is None:
            return q, dq, ddq
        if self.blend.done(now):
            self.blend = None
            return q, dq, ddq
        return self.blend.apply(now, self.traj.columns, q, dq, ddq)

    def torque_state(self) -> str:
        """The diagnostics' ``torque`` value."""
        if self.torque_on is None:
            return f"unknown (no {TOPIC_TORQUE_ENABLED} yet): goals sent"
        if not self.torque_on:
            return "off: no goals" if not self.faults.faulted else "off: goals to the servos reporting no error"
        if self.resuming:
            return "on: reading the pose"
        return "on: joining the trajectory" if self.blend is not None else "on"


__all__ = ["RESUME_MIN_S", "ResumeBlend", "TorqueFollow", "resume_duration"]
