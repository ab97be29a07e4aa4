"""Soak run of issue 24: a MuJoCo bring-up at ``real_time_factor: 0`` (as fast as it steps) for ``--minutes`` of
wall time, each node its own process as ``servo-ff up`` starts it, on a private ROS domain:

* ``--bringup sim_humanoid`` (default): sim + feed-forward + the waypoint walker on ``repeat``;
* ``--bringup sim_op3`` (or ``sim_nimbro_op``): sim + feed-forward + the placo walk node (lockstep), under a
  ``cmd_vel`` this process publishes at 10 Hz (``--vx`` [m/s], ``--wz`` [rad/s]: a circle, so the walk stays on
  the ground it started on); the trunk tilt from ``imu/data`` tells a fall (tilt > 1 rad).

Every ``--every`` seconds: the RSS of each node (``/proc/<pid>/status`` VmRSS), the simulated time reached, the
drift of ``/clock`` against the stamps of ``/joint_states`` (latest clock − latest stamp: a growing gap would be a
stamp falling behind its clock), the largest trunk tilt so far (walk bring-ups) and the warnings and errors each
node logged so far. At the end: RSS growth of each node from the first minute to the end, the largest clock/stamp
gap, the sim-time rate, the counts.

    .venv/bin/python bench/soak.py [--minutes 10] [--every 30] [--bringup sim_op3 --vx 0.05 --wz 0.1]

Last line: ``RESULT wall_s=… sim_s=… rss_growth_pct=… clock_drift_ms=… warnings=… errors=… crashed=… goals=…``
(``rss_growth_pct``: the largest node's growth after the first minute); walk bring-ups add ``bringup=…
max_tilt_rad=… fell=0|1 fell_at_s=… path_m=… turned_rad=…`` (``fell_at_s``: sim time of the first tilt beyond 1
rad, nan if none; ``path_m``, ``turned_rad``: the base's path in the ground plane, chords of 1 s, and the yaw turned,
from ``odom``, the sim's ground truth).
"""

from __future__ import annotations

import argparse
import math
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

from servo_ff import bringup  # noqa: E402
from servo_ff.bringup.table import WALK_BRINGUPS  # noqa: E402

LEVEL = re.compile(r"^\[(WARN|ERROR|FATAL)\]")
FALL_TILT = 1.0  # rad: a trunk tilted further has fallen


def rss_mb(pid: int) -> float:
    """Resident set size of ``pid`` [MB] (NaN once it exited)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return float("nan")


def counts(log: Path) -> tuple[int, int, dict[str, int]]:
    """(warnings, errors, {first 80 characters of a message: count}) in a node's log."""
    warn = err = 0
    kinds: dict[str, int] = {}
    for line in log.read_text(errors="replace").splitlines():
        m = LEVEL.match(line)
        if not m:
            continue
        if m.group(1) == "WARN":
            warn += 1
        else:
            err += 1
        key = re.sub(r"[-\d.]+", "#", line.split("]: ", 1)[-1])[:80]
        kinds[key] = kinds.get(key, 0) + 1
    return warn, err, kinds


class Monitor:
    """/clock, /joint_states, the goals and (``cmd_vel`` given) the trunk IMU of the bring-up, in this process (own
    context, executor thread); publishes ``cmd_vel`` (vx [m/s], wz [rad/s]) at 10 Hz when given."""

    def __init__(self, goal_topic: str, cmd_vel: tuple[float, float] | None = None) -> None:
        import rclpy
        from geometry_msgs.msg import Twist
        from rclpy.context import Context
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.qos import qos_profile_sensor_data
        from rosgraph_msgs.msg import Clock
        from sensor_msgs.msg import Imu, JointState
        from std_msgs.msg import Float64MultiArray

        self.ctx = Context()
        rclpy.init(context=self.ctx)
        self.node = rclpy.create_node("soak_monitor", context=self.ctx)
        self.clock = self.stamp = float("nan")
        self.messages = self.goals = 0
        self.max_tilt, self.fell_at = 0.0, float("nan")
        self.node.create_subscription(Clock, "/clock", self._on_clock, qos_profile_sensor_data)
        self.node.create_subscription(JointState, "/joint_states", self._on_js, 10)
        goal_type = JointState if goal_topic.endswith("joint_command") else Float64MultiArray
        self.node.create_subscription(goal_type, goal_topic, self._on_goal, 10)
        self.path_m, self.turned_rad, self._pose = 0.0, 0.0, None
        if cmd_vel is not None:
            from nav_msgs.msg import Odometry

            self.node.create_subscription(Imu, "/imu/data", self._on_imu, qos_profile_sensor_data)
            self.node.create_subscription(Odometry, "/odom", self._on_odom, 10)
            twist = Twist()
            twist.linear.x, twist.angular.z = cmd_vel
            pub = self.node.create_publisher(Twist, "/cmd_vel", 10)
            self.node.create_timer(0.1, lambda: pub.publish(twist))  # wall time: the node's clock is not /clock
        self.ex = SingleThreadedExecutor(context=self.ctx)
        self.ex.add_node(self.node)
        self.thread = threading.Thread(target=self.ex.spin, daemon=True)
        self.thread.start()

    def _on_odom(self, msg) -> None:
        """The base's path in the ground plane [m], chords of 1 s of sim time (the trunk's sway within a step left
        out), and its yaw turned [rad]."""
        p, o, st = msg.pose.pose.position, msg.pose.pose.orientation, msg.header.stamp
        t = st.sec + st.nanosec * 1e-9
        yaw = math.atan2(2.0 * (o.w * o.z + o.x * o.y), 1.0 - 2.0 * (o.y * o.y + o.z * o.z))
        if self._pose is not None and t < self._pose[0] + 1.0:
            return
        if self._pose is not None:
            _, x, y, last = self._pose
            self.path_m += math.hypot(p.x - x, p.y - y)
            self.turned_rad += math.remainder(yaw - last, math.tau)
        self._pose = (t, p.x, p.y, yaw)

    def _on_imu(self, msg) -> None:
        o = msg.orientation
        tilt = math.acos(max(-1.0, min(1.0, 1.0 - 2.0 * (o.x * o.x + o.y * o.y))))  # body z against world z
        self.max_tilt = max(self.max_tilt, tilt)
        if tilt > FALL_TILT and self.fell_at != self.fell_at:
            self.fell_at = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9

    def _on_clock(self, msg) -> None:
        self.clock = msg.clock.sec + msg.clock.nanosec * 1e-9

    def _on_js(self, msg) -> None:
        self.stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        self.messages += 1

    def _on_goal(self, msg) -> None:
        self.goals += 1

    def gap(self) -> float:
        """Latest /clock − latest /joint_states stamp [s]."""
        return self.clock - self.stamp

    def close(self) -> None:
        self.ex.shutdown(timeout_sec=5.0)
        self.thread.join(timeout=5.0)  # the executor thread out of spin before the context goes
        self.node.destroy_node()
        self.ctx.try_shutdown()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=10.0, help="wall time of the run [min]")
    ap.add_argument("--every", type=float, default=30.0, help="sampling period [s]")
    ap.add_argument("--bringup", choices=("sim_humanoid", *WALK_BRINGUPS), default="sim_humanoid")
    ap.add_argument("--vx", type=float, default=0.05, help="cmd_vel linear.x [m/s] (walk bring-ups)")
    ap.add_argument("--wz", type=float, default=0.1, help="cmd_vel angular.z [rad/s] (walk bring-ups)")
    args = ap.parse_args()
    walk = args.bringup in WALK_BRINGUPS
    work = Path(tempfile.mkdtemp(prefix="soak-"))
    extra = work / "soak_params.yaml"
    extra.write_text(
        "servo_sim:\n  ros__parameters:\n    real_time_factor: 0.0\n"
        + ("" if walk else "servo_walker:\n  ros__parameters:\n    repeat: true\n")
    )
    from servo_ff.ros.harness import domain_id

    os.environ["ROS_DOMAIN_ID"] = str(domain_id(13))  # a domain no other process holds (its lock file)
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    env = bringup.python_env()
    procs = []
    for node in bringup.plan(args.bringup, params_file=str(extra)):
        log = work / f"{node.name}.log"
        f = log.open("w")
        procs.append((node.name, subprocess.Popen(bringup.python_command(node), env=env, stdout=f, stderr=f), log))
    mon = Monitor("/servo/joint_command" if walk else "/servo/commands", (args.vx, args.wz) if walk else None)
    t0 = time.monotonic()
    end = t0 + 60.0 * args.minutes
    samples = []  # (wall s, sim s, {node: RSS MB}, gap s, warnings, errors)
    print(f"soak: {', '.join(n for n, _, _ in procs)} on domain {os.environ['ROS_DOMAIN_ID']}, logs in {work}")
    print(
        f"{'wall_s':>7} {'sim_s':>9} {'gap_ms':>8} "
        + " ".join(f"{n + '_MB':>18}" for n, _, _ in procs)
        + ("  tilt_rad" if walk else "")
        + "  warn  err"
    )
    crashed = []
    try:
        while True:
            now = time.monotonic()
            rss = {n: rss_mb(p.pid) for n, p, _ in procs}
            w = e = 0
            for _, _, log in procs:
                a, b, _ = counts(log)
                w, e = w + a, e + b
            samples.append((now - t0, mon.clock, rss, mon.gap(), w, e))
            print(
                f"{now - t0:7.0f} {mon.clock:9.1f} {1e3 * mon.gap():8.1f} "
                + " ".join(f"{rss[n]:18.1f}" for n, _, _ in procs)
                + (f"  {mon.max_tilt:8.3f}" if walk else "")
                + f"  {w:4d} {e:4d}",
                flush=True,
            )
            crashed = [f"{n} (exit {p.returncode})" for n, p, _ in procs if p.poll() is not None]
            if crashed or now >= end:
                break
            time.sleep(min(args.every, max(0.0, end - now)))
    finally:
        for _, p, _ in procs:
            if p.poll() is None:
                p.terminate()
        for _, p, _ in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
        mon.close()
    base = next((s for s in samples if s[0] >= 60.0), samples[-1])
    last = samples[-1]
    growth = {n: 100.0 * (last[2][n] - base[2][n]) / base[2][n] for n in base[2]}
    gaps = [abs(s[3]) for s in samples if s[3] == s[3]]
    wall, sim = last[0], last[1]
    print(f"RSS growth after the first minute: {', '.join(f'{n} {g:+.2f} %' for n, g in growth.items())}")
    print(f"sim time {sim:.1f} s in {wall:.1f} s wall ({sim / wall:.2f}×)")
    print(f"/joint_states messages {mon.messages}, feed-forward goals {mon.goals}")
    for name, _, log in procs:
        a, b, kinds = counts(log)
        top = sorted(kinds.items(), key=lambda kv: -kv[1])[:5]
        print(f"{name}: {a} warnings, {b} errors" + "".join(f"\n    {c:6d} × {k}" for k, c in top))
    if crashed:
        print(f"CRASHED: {', '.join(crashed)}")
    print(
        f"RESULT wall_s={wall:.0f} sim_s={sim:.0f} rss_growth_pct={max(growth.values()):.2f} "
        f"clock_drift_ms={1e3 * max(gaps, default=float('nan')):.1f} warnings={last[4]} errors={last[5]} "
        f"crashed={len(crashed)} goals={mon.goals}"
        + (
            f" bringup={args.bringup} max_tilt_rad={mon.max_tilt:.3f} fell={int(mon.fell_at == mon.fell_at)} "
            f"fell_at_s={mon.fell_at:.1f} path_m={mon.path_m:.2f} turned_rad={mon.turned_rad:.2f}"
            if walk
            else ""
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
