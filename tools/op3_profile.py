"""Where the wall time of the OP3 mission's lockstep loop goes (issue 21): ``perf_counter`` around each callback of
the executor thread and around the stages inside them, per control period (8 ms simulated), over a short run of
``bringup.op3_mission.run_op3`` from ``--from`` simulated seconds (after numba's compilation and the start).

Run: python tools/op3_profile.py [--controller ff] [--steps 8] [--from 1.0] [--single] [--callbacks]
Stages are exclusive (a stage's time without the stages timed inside it); ``--callbacks`` also counts every
subscription and timer callback and times each as a stage "cb: <node>: <topic or timer>" (its own code outside
the stages above, e.g. rclpy's TimeSource on /clock); "executor rest" is the wall time of the window minus every
timed stage: the executor (the mission's EventsExecutor: its C++ queue, message takes and
callback dispatch; ``--single``: rclpy's SingleThreadedExecutor, whose waits, takes and callbacks' own code are
timed as well).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

TOTAL: dict[str, float] = defaultdict(float)
COUNT: dict[str, int] = defaultdict(int)
STACK: list[list[float]] = []  # [start, children] of the stages running
ON = {"on": False}


def _timed(fn, label: str):
    def wrapper(*a, **k):
        if not ON["on"]:
            return fn(*a, **k)
        STACK.append([time.perf_counter(), 0.0])
        try:
            return fn(*a, **k)
        finally:
            t0, children = STACK.pop()
            dt = time.perf_counter() - t0
            TOTAL[label] += dt - children
            COUNT[label] += 1
            if STACK:
                STACK[-1][1] += dt

    return wrapper


def _patch(cls, name: str, label: str) -> None:
    setattr(cls, name, _timed(getattr(cls, name), label))


class _WaitSet:
    """rclpy's wait set with its ``wait`` timed (the executor thread idle)."""

    def __init__(self, inner):
        self._inner = inner
        self.wait = _timed(inner.wait, "rclpy wait (idle)")

    def __getattr__(self, name):
        return getattr(self._inner, name)


class _Rclpy:
    def __init__(self, inner):
        self._inner = inner

    def WaitSet(self, *a):  # noqa: N802 (rclpy's name)
        return _WaitSet(self._inner.WaitSet(*a))

    def __getattr__(self, name):
        return getattr(self._inner, name)


CALLS: dict[str, int] = defaultdict(int)  # callbacks run while profiling, by node and topic/timer


def _count_callbacks() -> None:
    """Every subscription and timer callback created from now on counted and timed as a stage of its own, "cb:
    <node>: <topic>" (its code outside the stages timed inside it; ``--callbacks``)."""
    from rclpy.node import Node

    def counting(cb, label: str):
        timed = _timed(cb, f"cb: {label}")

        def wrapper(*a):
            if ON["on"]:
                CALLS[label] += 1
            return timed(*a)

        return wrapper

    sub, timer = Node.create_subscription, Node.create_timer

    def create_subscription(self, msg_type, topic, callback, *a, **k):
        return sub(self, msg_type, topic, counting(callback, f"{self.get_name()}: sub {topic}"), *a, **k)

    def create_timer(self, period, callback, *a, **k):
        clock = k.get("clock") or (a[1] if len(a) > 1 else None) or self.get_clock()
        label = f"{self.get_name()}: timer {period:g} s ({clock.clock_type.name})"
        return timer(self, period, counting(callback, label), *a, **k)

    Node.create_subscription, Node.create_timer = create_subscription, create_timer


def instrument() -> None:
    import rclpy.executors as ex

    from servo_ff.dynamics.feedforward import FeedForwardController
    from servo_ff.dynamics.walk_pattern import WalkEngine
    from servo_ff.nodes.feedforward_node import FeedForwardNode
    from servo_ff.nodes.mujoco_backend import MujocoBackend
    from servo_ff.nodes.mujoco_outputs import MujocoOutputs
    from servo_ff.nodes.servo_base import ServoInterfaceNode
    from servo_ff.nodes.walk_node import WalkNode
    from servo_ff.ros.desired_trajectory import DesiredTrajectory
    from servo_ff.ros.sim_clock import SimClock

    ex._rclpy = _Rclpy(ex._rclpy)
    take = ex.Executor._take_subscription
    ex.Executor._take_subscription = _timed(take, "rclpy take_message")
    run = ex.await_or_execute

    async def await_or_execute(callback, *args):
        if not ON["on"]:
            return await run(callback, *args)
        STACK.append([time.perf_counter(), 0.0])  # the callbacks are plain functions: no interleaving
        try:
            return await run(callback, *args)
        finally:
            t0, children = STACK.pop()
            TOTAL["callbacks' own code (goal message, clock, imu, supply, probe)"] += (
                time.perf_counter() - t0 - children
            )

    ex.await_or_execute = await_or_execute
    _patch(WalkEngine, "_replan", "walk: placo re-plan (LIPM QP, once a step)")
    _patch(WalkEngine, "_advance", "walk: placo IK per 10 ms sample")
    _patch(WalkNode, "_publish_trajectory", "walk: trajectory message (every 0.1 s)")
    _patch(WalkNode, "_on_joint_states", "walk: support coefficient on /joint_states")
    _patch(FeedForwardController, "tick", "feed-forward: controller tick (pinocchio, Eq. 19)")
    _patch(FeedForwardNode, "_on_joint_states", "feed-forward: rest of the tick (publish, checks)")
    _patch(FeedForwardNode, "_on_trajectory", "feed-forward: trajectory message (parse, check)")
    _patch(DesiredTrajectory, "sample", "feed-forward: desired trajectory sample")
    _patch(MujocoBackend, "step", "sim: physics + servo layer (8 × mj_step)")
    _patch(ServoInterfaceNode, "publish_state", "sim: publish joint_states")
    _patch(MujocoOutputs, "publish", "sim: publish imu, odom, foot forces, support")
    _patch(SimClock, "_set_time", "sim: /clock")
    _patch(SimClock, "_tick_owned", "sim: rest of the lockstep tick (goal, trajectory)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--controller", default="ff", choices=("high", "low", "ff"))
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--from", dest="t_from", type=float, default=1.0, help="simulated s")
    ap.add_argument("--single", action="store_true", help="rclpy's SingleThreadedExecutor")
    ap.add_argument(
        "--callbacks", action="store_true", help="also count the callbacks run per period and time each one"
    )
    a = ap.parse_args()
    instrument()
    if a.callbacks:
        _count_callbacks()
    from servo_ff.nodes.sim_node import SimNode

    mark: dict = {}
    step = SimNode._step

    def counted(self):
        t = self.sim_time_ns * 1e-9
        if t >= a.t_from and "t" not in mark:
            mark.update(wall=time.perf_counter(), t=t, cpu=time.process_time())
            TOTAL.clear(), COUNT.clear()
            ON["on"] = True
        if "t" in mark:
            mark["end"], mark["t_end"], mark["cpu_end"] = time.perf_counter(), t, time.process_time()
        return step(self)

    SimNode._step = counted
    from servo_ff.bringup.op3_mission import run_op3

    r = run_op3(a.controller, n_steps=a.steps, log=print, events=not a.single)
    ON["on"] = False
    periods = round((mark["t_end"] - mark["t"]) / 0.008)
    wall = mark["end"] - mark["wall"]
    rest = wall - sum(TOTAL.values())
    print(f"\n{periods} periods from {mark['t']:.2f} s simulated, {wall:.2f} s wall, rtf {periods * 0.008 / wall:.2f}")
    cpu = 1e6 * (mark["cpu_end"] - mark["cpu"]) / periods  # every thread of this process, not placo's child
    print(f"CPU time of the process {cpu:.0f} µs per period (load-robust: work, not waits)")
    print(f"travel {r.travel!r} m (to the last digit: a change that keeps the physics keeps it)")
    print("| stage | µs per period | calls per period |\n|---|---|---|")
    for k, v in sorted(TOTAL.items(), key=lambda kv: -kv[1]):
        print(f"| {k} | {1e6 * v / periods:.0f} | {COUNT[k] / periods:.2f} |")
    print(f"| executor rest | {1e6 * rest / periods:.0f} | |")
    print(f"| **total** | **{1e6 * wall / periods:.0f}** | |")
    if CALLS:
        print(f"\n| callback | per period |\n|---|---|\n| all | {sum(CALLS.values()) / periods:.2f} |")
        for k, n in sorted(CALLS.items(), key=lambda kv: -kv[1]):
            print(f"| {k} | {n / periods:.3f} |")
    return 0 if not r.fell else 1


if __name__ == "__main__":
    sys.exit(main())
