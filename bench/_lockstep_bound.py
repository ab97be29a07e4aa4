"""The bound under the OP3 mission's loop (issue 21): a bare rclpy lockstep ping-pong with the mission's message
hops per 125 Hz control period and no work in any callback — the best real-time factor any lockstep loop of this
shape reaches on this machine (an anchor for ``bench/op3_mission.py``; not a bench itself: ``run_all.py`` skips
files starting with ``_``).

Per period, as in ``bringup/op3_mission.py``: the sim side, on each goal message, publishes ``/clock``,
``joint_states`` (20 joints), ``imu/data``, ``odom``, ``foot_forces`` and the contact support coefficient
(serialized once, as the sim node does); the feed-forward side (``use_sim_time``: its own ``/clock``
subscription) answers each ``joint_states`` with the 20 goals and takes ``imu/data`` and the walk side's support
coefficient; the walk side (``use_sim_time``) answers each ``joint_states`` with a support coefficient; a probe
takes ``imu/data``. Taken serialized (``raw=True``) where the mission's nodes take them so: ``imu/data`` (the
feed-forward node, the probe) and the walk side's ``joint_states``. ``processes=1``: every node in one executor
(the mission's harness); ``processes=2``: the sim side here, the other nodes in a child process with an executor
of its own (as ``ros2 launch`` would place them).
``events``: rclpy's EventsExecutor (the mission's), else the SingleThreadedExecutor.

Run alone: ``python bench/_lockstep_bound.py [--periods 1000]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

PERIOD_NS = 8_000_000  # 125 Hz, the mission's control period
N_JOINTS = 20


def _sim_side(ros):
    """The sim's side of the loop in ``ros`` (a RosHarness): a node stepping one period per goal message."""
    from nav_msgs.msg import Odometry
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import Imu, JointState
    from std_msgs.msg import Float64, Float64MultiArray

    from servo_ff.ros.cdr_template import CdrTemplate

    node = ros.make_node("bound_sim")
    names = [f"j{k}" for k in range(N_JOINTS)]
    zeros = [0.0] * N_JOINTS
    out = [
        (node.create_publisher(Clock, "/clock", 10), CdrTemplate(Clock(), [], stamp="clock")),
        (
            node.create_publisher(JointState, "joint_states", 10),
            CdrTemplate(JointState(name=names, position=zeros, velocity=zeros, effort=zeros), []),
        ),
        (node.create_publisher(Imu, "imu/data", 100), CdrTemplate(Imu(), [])),
        (node.create_publisher(Odometry, "odom", 100), CdrTemplate(Odometry(), [])),
        (
            node.create_publisher(Float64MultiArray, "foot_forces", 100),
            CdrTemplate(Float64MultiArray(data=[0.0, 0.0]), [], stamp=None),
        ),
        (node.create_publisher(Float64, "contact_support_coefficient", 100), CdrTemplate(Float64(), [], stamp=None)),
    ]
    state = {"periods": 0, "t_ns": 0}

    def step() -> None:
        state["t_ns"] += PERIOD_NS
        state["periods"] += 1
        sec, nsec = divmod(state["t_ns"], 1_000_000_000)
        for pub, cdr in out:
            if cdr._stamp_at >= 0:
                cdr.set_stamp(sec, nsec)
            cdr.publish(pub)

    node.create_subscription(Float64MultiArray, "servo/commands", lambda m: step(), 10)
    return node, out, state, step


def _controller_side(ros) -> list:
    """The feed-forward, walk and probe sides in ``ros``: answer each joint_states, take the other topics."""
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import Imu, JointState
    from std_msgs.msg import Float64, Float64MultiArray

    sim_time = [Parameter("use_sim_time", value=True)]
    ff = ros.add(__import__("rclpy").create_node("bound_ff", parameter_overrides=sim_time, **ros.node_kwargs()))
    walk = ros.add(__import__("rclpy").create_node("bound_walk", parameter_overrides=sim_time, **ros.node_kwargs()))
    probe = ros.make_node("bound_probe")
    goal = ff.create_publisher(Float64MultiArray, "servo/commands", 10)
    goal_msg = Float64MultiArray(data=[0.0] * N_JOINTS)
    support = walk.create_publisher(Float64, "support_coefficient", 10)
    ff.create_subscription(JointState, "joint_states", lambda m: goal.publish(goal_msg), 10)
    ff.create_subscription(Imu, "imu/data", lambda m: None, 10, raw=True)  # raw where the mission's nodes are
    ff.create_subscription(Float64, "support_coefficient", lambda m: None, 10)
    walk.create_subscription(JointState, "joint_states", lambda m: support.publish(Float64(data=0.5)), 10, raw=True)
    probe.create_subscription(Imu, "imu/data", lambda m: None, 1000, raw=True)
    return [ff, walk, probe]


def _serve(salt: int, events: bool) -> None:
    """Child process: the controller sides in a harness on the parent's domain and namespace, until killed."""
    from servo_ff.ros.harness import RosHarness

    ros = RosHarness(salt=salt, domain=int(os.environ["ROS_DOMAIN_ID"]), prefix="bound_", events=events)
    ros.ns = os.environ["BOUND_NS"]
    _controller_side(ros)
    while True:
        time.sleep(1.0)


def lockstep_bound(
    periods: int = 1000, processes: int = 1, events: bool = True, salt: int = 71, warmup: int = 50
) -> float:
    """Real-time factor (simulated s per wall s) of ``periods`` lockstep periods of 8 ms after ``warmup``."""
    from servo_ff.ros.harness import RosHarness, wait_for

    ros = RosHarness(salt=salt, prefix="bound_", events=events)
    child = None
    try:
        node, out, state, step = _sim_side(ros)
        if processes == 1:
            _controller_side(ros)
        else:
            env = {**os.environ, "BOUND_NS": ros.ns, "PYTHONPATH": str(ROOT / "src")}
            bench = str(ROOT / "bench")
            code = f"import sys; sys.path.insert(0, {bench!r}); import _lockstep_bound as b; b._serve({salt}, {events})"
            child = subprocess.Popen([sys.executable, "-c", code], env=env)
        wait_for(
            lambda: (
                out[0][0].get_subscription_count() >= 2
                and out[1][0].get_subscription_count() >= 2
                and out[2][0].get_subscription_count() >= 2
                and node.count_publishers(f"{ros.ns}/servo/commands") >= 1
            ),
            60.0,
            "the lockstep ping-pong's nodes to match",
        )
        for _ in range(20):  # the first state; each goal then steps one period (sent again if lost in discovery)
            step()
            try:
                wait_for(lambda: state["periods"] > 1, 2.0, "a first goal")
                break
            except TimeoutError:
                continue
        wait_for(lambda: state["periods"] >= warmup, 60.0, "the ping-pong's warm-up")
        p0, t0 = state["periods"], time.perf_counter()
        wait_for(lambda: state["periods"] >= p0 + periods, 600.0, f"{periods} ping-pong periods")
        wall = time.perf_counter() - t0
        return (state["periods"] - p0) * PERIOD_NS * 1e-9 / wall
    finally:
        if child is not None:
            child.terminate()
            child.wait(timeout=10)
        ros.shutdown()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--periods", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    best: dict[str, float] = {}
    for _ in range(a.rounds):
        for events in (True, False):
            one, two = lockstep_bound(a.periods, 1, events), lockstep_bound(a.periods, 2, events)
            kind = "EventsExecutor" if events else "SingleThreadedExecutor"
            print(f"lockstep ping-pong rtf, {kind}: one process {one:.2f}, two processes {two:.2f}", flush=True)
            for n, x in (("one", one), ("two", two)):
                key = f"rtf_{'events' if events else 'single'}_{n}_process"  # the best of the rounds
                best[key] = max(best.get(key, 0.0), x)
    print("RESULT " + " ".join(f"{k}={v:.2f}" for k, v in best.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
