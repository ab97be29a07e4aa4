"""``servo_walker_node``: a walking-stack stand-in. It publishes what a walking stack hands to the feed-forward
node — the desired JointTrajectory (positions, velocities, accelerations) and the support coefficient — from our
stepping gait (:func:`servo_ff.dynamics.gait.stepping_in_place`, Schwarz & Behnke §5.2), on the ROS clock
(sim time under ``use_sim_time``). ``pattern: triangle`` plays the 2R arm's end-effector triangle instead
(:func:`servo_ff.dynamics.arm2r.triangle_path` through ``ik_2r``; joints ``shoulder``, ``elbow``);
``pattern: waypoints`` visits joint-space poses given as a parameter (any arm: ``waypoints`` holds the poses one
after the other, ``joints`` order) with minimum-jerk moves and a rest at each pose
(:func:`servo_ff.trajectories.joint_waypoints`).

On the first ``/joint_states`` it takes the measured pose, waits ``start_delay``, moves to the pattern's first
pose in ``approach_time`` (minimum jerk) and plays the pattern once (``repeat``: again and again). Like a walking
stack it publishes short horizons: every ``publish_period`` the points of the next ``horizon`` seconds (and the
one before now) on ``trajectory_topic``, each stamped with the time of its first point (time_from_start 0: that
point replaces the follower's current state, as in ros2_control's JointTrajectoryController, so no segment is
interpolated toward it from an older state) and each message continues the last, until one has reached the
pattern's last point (a later tail would repeat it, and the last one could end before it arrives, which a
JointTrajectoryController refuses); the support coefficient
(1 = all weight on the left foot) every control period ``1/rate_hz`` on ``support_topic``. ``finished``
(std_msgs/Bool) turns true after the last point. A jump back of the clock drops the pattern in play: it plays again
from the next measured pose (:mod:`servo_ff.ros.clock_jump`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from builtin_interfaces.msg import Duration, Time
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool, Float64
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from servo_ff.ros.clock_jump import on_clock_jump_back
from servo_ff.ros.common import TOPIC_JOINT_STATES, ParameterTable, ParamSpec, spin_node
from servo_ff.ros.measured_pose import measured_pose

PATTERNS = ("stepping", "triangle", "waypoints")


def walker_specs() -> list[ParamSpec]:
    from servo_ff.dynamics.gait import SteppingParams

    g = SteppingParams()
    return [
        ParamSpec("pattern", "stepping", "what to play", read_only=True, choices=PATTERNS),
        ParamSpec("joints", [""], "joints of the trajectory (empty: those of the first /joint_states)", read_only=True),
        ParamSpec(
            "n_steps", 40, "stepping: number of steps (first swing foot: right)", lo=1, hi=100000, read_only=True
        ),
        ParamSpec("crouch", g.crouch, "stepping: crouch a (knee = 2a standing)", "rad", lo=0.0, hi=1.2, read_only=True),
        ParamSpec(
            "shift", g.shift, "stepping: hip/ankle roll at full lateral shift", "rad", lo=0.0, hi=0.6, read_only=True
        ),
        ParamSpec("lift", g.lift, "stepping: extra crouch of the swing leg", "rad", lo=0.0, hi=1.0, read_only=True),
        ParamSpec(
            "stride",
            g.stride,
            "stepping: forward step of each swing foot (0: in place; quasi-static walk)",
            "m",
            lo=0.0,
            hi=0.1,
            read_only=True,
        ),
        ParamSpec(
            "t_shift",
            g.t_shift,
            "stepping: weight shift from one foot to the other",
            "s",
            lo=0.1,
            hi=60.0,
            read_only=True,
        ),
        ParamSpec("t_lift", g.t_lift, "stepping: lift the swing foot", "s", lo=0.1, hi=60.0, read_only=True),
        ParamSpec("t_lower", g.t_lower, "stepping: set it down", "s", lo=0.1, hi=60.0, read_only=True),
        ParamSpec("loops", 2, "triangle, waypoints: loops of the path", lo=1, hi=100000, read_only=True),
        ParamSpec("edge_time", 1.0, "triangle: time per edge", "s", lo=0.05, hi=60.0, read_only=True),
        ParamSpec(
            "waypoints",
            [0.0],
            "waypoints: joint-space poses one after the other, each one value per joint in `joints` order "
            "(length a multiple of the number of joints)",
            "rad",
            lo=-2 * math.pi,
            hi=2 * math.pi,
            read_only=True,
        ),
        ParamSpec(
            "segment_time", 1.5, "waypoints: minimum-jerk move between poses", "s", lo=0.05, hi=60.0, read_only=True
        ),
        ParamSpec("dwell_time", 0.5, "waypoints: rest at each pose", "s", lo=0.0, hi=60.0, read_only=True),
        ParamSpec("start_delay", 1.0, "wait after the first joint_states", "s", lo=0.0, hi=3600.0, read_only=True),
        ParamSpec(
            "approach_time", 2.0, "measured pose → first pose of the pattern", "s", lo=0.01, hi=60.0, read_only=True
        ),
        ParamSpec("repeat", False, "play the pattern again after it ends", read_only=True),
        ParamSpec("horizon", 1.0, "seconds of trajectory in each message", "s", lo=0.05, hi=60.0),
        ParamSpec("publish_period", 0.25, "period of the trajectory messages", "s", lo=0.005, hi=60.0),
        ParamSpec("point_dt", 0.02, "time between trajectory points", "s", lo=0.001, hi=1.0, read_only=True),
        ParamSpec("rate_hz", 125.0, "rate of the support coefficient", "Hz", lo=1.0, hi=2000.0, read_only=True),
        ParamSpec(
            "trajectory_topic",
            "feedforward/trajectory",
            "where the desired trajectory goes (the "
            "feed-forward node; servo/joint_trajectory: straight to a servo node)",
            read_only=True,
        ),
        ParamSpec("support_topic", "support_coefficient", "where the support coefficient goes", read_only=True),
    ]


class Pattern:
    """The whole desired motion on a grid: t (T,) [s from the pattern start], q, dq, ddq (T, J), c_left (T,)."""

    def __init__(self, t, q, dq, ddq, c_left):
        self.t, self.q, self.dq, self.ddq, self.c_left = t, q, dq, ddq, c_left

    @property
    def end(self) -> float:
        return float(self.t[-1])

    def sample(self, t: float) -> np.ndarray:
        """Desired positions at ``t`` (linear between grid points; the grid is fine)."""
        return np.array([np.interp(t, self.t, self.q[:, j]) for j in range(self.q.shape[1])])


def waypoint_poses(flat: list[float], joints: list[str]) -> np.ndarray:
    """The ``waypoints`` parameter (flat, ``joints`` order) as poses (K, J); a length that is not a positive
    multiple of the number of joints is refused naming both."""
    n = len(joints)
    if n == 0 or len(flat) == 0 or len(flat) % n:
        raise ValueError(
            f"waypoints has {len(flat)} value(s), not a positive multiple of the {n} joints ({', '.join(joints)})"
        )
    return np.asarray(flat, dtype=float).reshape(-1, n)


def build_pattern(v: dict[str, Any], joints: list[str], q0: np.ndarray) -> Pattern:
    """The pattern of the parameters ``v`` for ``joints``, starting from the measured pose ``q0`` (an approach
    segment, minimum jerk, then the pattern)."""
    dt = float(v["point_dt"])
    if v["pattern"] == "stepping":
        from servo_ff.dynamics.gait import SteppingParams, stepping_in_place

        p = SteppingParams(
            crouch=v["crouch"],
            shift=v["shift"],
            lift=v["lift"],
            t_shift=v["t_shift"],
            t_lift=v["t_lift"],
            t_lower=v["t_lower"],
            stride=v["stride"],
        )
        g = stepping_in_place(joints, int(v["n_steps"]), dt, p)
        t, q, dq, ddq, c = g.t, g.q, g.dq, g.ddq, g.c_left
    elif v["pattern"] == "waypoints":
        poses = waypoint_poses(list(v["waypoints"]), joints)
        from servo_ff.trajectories import joint_waypoints

        t, q, dq, ddq = joint_waypoints(poses, dt, float(v["segment_time"]), float(v["dwell_time"]), int(v["loops"]))
        c = np.full(len(t), 0.5)
    else:
        from servo_ff.dynamics.arm2r import ik_2r, triangle_path

        if joints != ["shoulder", "elbow"]:
            raise ValueError(f"pattern triangle drives joints [shoulder, elbow], got {joints}")
        t, pts = triangle_path(dt, edge_s=float(v["edge_time"]), loops=int(v["loops"]))
        q = ik_2r(pts)
        dq = np.gradient(q, dt, axis=0)
        ddq = np.gradient(dq, dt, axis=0)
        c = np.full(len(t), 0.5)
    ta = float(v["approach_time"])
    s = np.arange(1, int(round(ta / dt))) * dt / ta
    mj = (10 * s**3 - 15 * s**4 + 6 * s**5)[:, None]
    dmj = ((30 * s**2 - 60 * s**3 + 30 * s**4) / ta)[:, None]
    ddmj = ((60 * s - 180 * s**2 + 120 * s**3) / ta**2)[:, None]
    d = q[0] - q0
    n = len(s) + 1
    approach_t = np.arange(n) * dt
    return Pattern(
        np.concatenate([approach_t, ta + t]),
        np.concatenate([q0[None], q0 + mj * d, q]),
        np.concatenate([np.zeros((1, len(q0))), dmj * d, dq]),
        np.concatenate([np.zeros((1, len(q0))), ddmj * d, ddq]),
        np.concatenate([np.full(n, c[0]), c]),
    )


class WalkerNode(Node):
    def __init__(self, name: str = "servo_walker", **kwargs: Any):
        super().__init__(name, **kwargs)
        self.table = ParameterTable(self, walker_specs(), n_joints=lambda v: None)
        v = self.table.values
        self.joints = [j for j in v["joints"] if j]
        if v["pattern"] == "waypoints" and self.joints:
            waypoint_poses(list(v["waypoints"]), self.joints)  # a bad length: one error line at start-up
        self.pattern: Pattern | None = None
        self.build_error: str | None = None  # the pattern cannot be built for these joints (logged once)
        self.t_start: float | None = None  # [s, ROS clock] of the pattern's t = 0
        self.finished = False
        self.messages = 0
        self.end_sent = False  # a message holding the pattern's last point went out (for this play)
        self.pub_traj = self.create_publisher(JointTrajectory, v["trajectory_topic"], 10)
        self.pub_c = self.create_publisher(Float64, v["support_topic"], 10)
        self.pub_done = self.create_publisher(Bool, "walker/finished", 10)
        self.create_subscription(JointState, TOPIC_JOINT_STATES, self._on_joint_states, 10)
        self.create_timer(float(v["publish_period"]), self._publish_trajectory)
        self.create_timer(1.0 / float(v["rate_hz"]), self._publish_support)
        self._jump = on_clock_jump_back(self, self._drop_old_time)
        self.get_logger().info(
            f"walking-stack stand-in: pattern {v['pattern']} → {v['trajectory_topic']}, "
            f"support coefficient → {v['support_topic']}"
        )

    def now_s(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def _drop_old_time(self) -> str:
        """The clock jumped back: the pattern's times are the old clock's (published on, the follower held its
        first point, the pose of the old start); it plays again from the next measured pose."""
        if self.pattern is None:
            return ""
        self.pattern, self.finished, self.end_sent = None, False, False
        return "dropped the pattern in play (it plays again from the next measured pose: start_delay, approach)"

    def _on_joint_states(self, msg: JointState) -> None:
        if self.pattern is not None or self.build_error is not None or self.now_s() <= 0.0:
            return
        joints, stamp = self.joints or list(msg.name), msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        q0, why = measured_pose(msg.name, msg.position, stamp, joints, self.now_s())  # not the old time's
        if q0 is None:
            return why and self.get_logger().error(why, throttle_duration_sec=5.0)
        try:
            self.pattern = build_pattern(self.table.values, joints, q0)
        except ValueError as e:
            self.build_error = str(e)
            self.get_logger().error(f"cannot build the pattern: {e}; nothing will be played")
            return
        self.joints = joints
        self.t_start = self.now_s() + float(self.table["start_delay"])
        self.get_logger().info(
            f"playing {self.table['pattern']} over {self.pattern.end:.1f} s from t = {self.t_start:.3f} s"
        )
        self._publish_trajectory()

    def _publish_trajectory(self) -> None:
        p = self.pattern
        if p is None:
            return
        rel = self.now_s() - self.t_start
        if rel > p.end:
            if self.table["repeat"]:  # again, its approach from where the last play ended (before: from the first
                self.t_start += p.end + 1.0  # play's start pose, a point at 0: the follower's goal stepped back to it)
                p = self.pattern = build_pattern(self.table.values, self.joints, p.q[-1])
                rel = self.now_s() - self.t_start
                self.end_sent = False
            else:
                if not self.finished:
                    self.finished = True
                    self.get_logger().info("pattern finished")
                self.pub_done.publish(Bool(data=True))
                return
        if self.end_sent:
            return
        lo = max(0, int(np.searchsorted(p.t, rel, side="right")) - 1)
        hi = min(int(np.searchsorted(p.t, rel + float(self.table["horizon"]), side="right")) + 1, len(p.t))
        msg = JointTrajectory(joint_names=self.joints)
        ns = int(round((self.t_start + p.t[lo]) * 1e9))
        msg.header.stamp = Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)
        for k in range(lo, hi):
            tn = int(round((p.t[k] - p.t[lo]) * 1e9))
            msg.points.append(
                JointTrajectoryPoint(
                    positions=p.q[k].tolist(),
                    velocities=p.dq[k].tolist(),
                    accelerations=p.ddq[k].tolist(),
                    time_from_start=Duration(sec=tn // 1_000_000_000, nanosec=tn % 1_000_000_000),
                )
            )
        self.pub_traj.publish(msg)
        self.messages += 1
        self.end_sent = hi == len(p.t)

    def support(self, t: float) -> float:
        """Left-foot support coefficient of the pattern at ROS time ``t`` (0.5 before it starts)."""
        if self.pattern is None:
            return 0.5
        return float(np.interp(t - self.t_start, self.pattern.t, self.pattern.c_left, left=0.5, right=0.5))

    def _publish_support(self) -> None:
        if self.pattern is not None:
            self.pub_c.publish(Float64(data=self.support(self.now_s())))


def main(args: list[str] | None = None) -> int:
    return spin_node(WalkerNode, args)


if __name__ == "__main__":
    import sys

    sys.exit(main())
