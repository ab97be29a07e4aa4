"""The node tests use the package's one rclpy harness (:mod:`servo_ff.ros.harness`); skipped without rclpy."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")
from servo_ff.ros.harness import RosHarness, domain_id, wait_for  # noqa: E402


def hardware_on_virtual_bus(h: RosHarness, link, joints, ids, servo: str, kp: float | None, client: str, **params):
    """The hardware node every hardware test starts: ``joints``/``ids`` on the virtual bus at ``link`` (100 Hz,
    latency timer 1 ms, limits ±2 rad, fast health and diagnostics; ``kp`` None: not given; ``params`` add or
    override), and a client subscribed to its joint states and diagnostics with a publisher on its commands.
    Returns (node, client, states, diags, commands publisher) once joint states flow and (autostart) the node is
    active."""
    from diagnostic_msgs.msg import DiagnosticArray
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    from servo_ff.nodes.hardware_node import HardwareNode

    values = {
        "joints": list(joints),
        "ids": list(ids),
        "port": str(link),
        "servo": servo,
        "rate_hz": 100.0,
        "latency_timer_ms": 1.0,
        # the virtual bus is a thread of this process: on a loaded box it answers late, and a 20 ms margin made a
        # scan miss a servo ('found ids [2], MISSING ids [1]') or stale cycles count the bus lost (shake runs)
        "timeout_ms": 100.0,
        "position_min": [-2.0],
        "position_max": [2.0],
        "health_period": 0.1,
        "diagnostics_period": 0.2,
        **({} if kp is None else {"kp": [kp]}),
        **params,
    }
    node = h.add(
        HardwareNode(
            "servo_hardware",
            context=h.context,
            namespace=h.ns,
            parameter_overrides=[Parameter(k, value=v) for k, v in values.items()],
        )
    )
    c = h.make_node(client)
    states: list = []
    diags: list = []
    c.create_subscription(JointState, "joint_states", states.append, 50)
    c.create_subscription(DiagnosticArray, "/diagnostics", diags.append, 50)
    pub = c.create_publisher(Float64MultiArray, "servo/commands", 10)
    wait_for(lambda: pub.get_subscription_count() and states, 20.0, "servo_hardware joint_states")
    if values.get("autostart", True):  # joint_states flow once configured, goals are taken once active
        wait_for(lambda: node.active, 20.0, "servo_hardware active")
    return node, c, states, diags, pub


#: The two pendulums most node tests drive (servo_sim_node, stepper backend): shoulder and elbow, MX-64 M1 at
#: 250 Hz from (0.3, -0.2) rad within ±2 rad, warnings throttled 30 s. ``sim_node(h, **PENDULUM_SIM)``.
PENDULUM_SIM: dict[str, Any] = {
    "joints": ["shoulder", "elbow"],
    "rate_hz": 250.0,
    "servo": "mx64",
    "model": "m1",
    "initial_position": [0.3, -0.2],
    "position_min": [-2.0],
    "position_max": [2.0],
    "warn_throttle": 30.0,
}


def sim_node(h: RosHarness, name: str = "servo_sim", namespace: str | None = None, **params: Any):
    """A servo_sim_node (stepper backend) added to ``h`` (in its namespace unless ``namespace`` is given), with
    ``params`` as its parameters by name (dotted names through ``**{"load.mass": [0.5]}``)."""
    from rclpy.parameter import Parameter

    from servo_ff.nodes.sim_node import SimNode

    kwargs = h.node_kwargs() if namespace is None else {**h.node_kwargs(), "namespace": namespace}
    overrides = [Parameter(k, value=v) for k, v in params.items()]
    return h.add(SimNode(name, **kwargs, parameter_overrides=overrides))


#: The joints of ``urdf/pendulums2.urdf`` (two pendulums on a fixed base), the feed-forward node tests' robot.
PENDULUM_JOINTS: list[str] = ["pendulum_1", "pendulum_2"]


def pendulum_feedforward(h: RosHarness, **params: Any):
    """A servo_feedforward node on ``urdf/pendulums2.urdf`` added to ``h``: both joints, kp 4, MX-64 M4 (``params``
    add or override)."""
    from pathlib import Path

    from rclpy.parameter import Parameter

    from servo_ff.nodes.feedforward_node import FeedForwardNode

    urdf = Path(__file__).resolve().parents[1] / "urdf" / "pendulums2.urdf"
    values = {"urdf_path": str(urdf), "joints": PENDULUM_JOINTS, "kp": [4.0], "servo": "mx64", "model": "m4"}
    overrides = [Parameter(k, value=v) for k, v in {**values, **params}.items()]
    return h.add(FeedForwardNode("servo_feedforward", **h.node_kwargs(), parameter_overrides=overrides))


class FeedForwardProbe:
    """A client node ``name`` of a feed-forward node in ``h``: the goals it publishes on ``servo/commands``
    (``goals``, lists), publishers ``js`` (``joint_states``), ``desired`` (``feedforward/trajectory``) and one per
    ``publishers`` item (attribute → (message type, topic, QoS)); built once every publisher is matched."""

    def __init__(self, h: RosHarness, name: str, **publishers: tuple[Any, str, Any]):
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray
        from trajectory_msgs.msg import JointTrajectory

        self.client = h.make_node(name)
        self.goals: list[list[float]] = []
        self.client.create_subscription(
            Float64MultiArray, "servo/commands", lambda m: self.goals.append(list(m.data)), 100
        )
        self.js = self.client.create_publisher(JointState, "joint_states", 50)
        self.desired = self.client.create_publisher(JointTrajectory, "feedforward/trajectory", 10)
        pubs = [self.js, self.desired]
        for attr, (kind, topic, qos) in publishers.items():
            pubs.append(self.client.create_publisher(kind, topic, qos))
            setattr(self, attr, pubs[-1])
        wait_for(lambda: all(p.get_subscription_count() for p in pubs), 20.0, "discovery")


def rosout_matched(node, got: list, text=lambda m: m.msg) -> None:
    """Wait until ``got`` (what a /rosout subscription received) has a line of ``node``: a new subscription is
    matched with each /rosout publisher some time after it is created, and a line logged before is lost to it."""
    import time

    token = f"rosout probe {time.monotonic_ns()}"
    last = [-1.0]

    def seen() -> bool:
        if time.monotonic() - last[0] > 0.2:  # a probe line every 0.2 s until one arrives
            last[0] = time.monotonic()
            node.get_logger().info(token)
        return any(token in text(m) for m in got)

    wait_for(seen, 30.0, "the /rosout subscription matched")


def lockstep_goals(sim, pub, rows, clock, timeout: float = 30.0) -> None:
    """Publish each of ``rows`` (Float64MultiArray data) to a lockstep sim (``publish_clock`` and ``lockstep``: one
    period per goal) once ``clock()`` [ns] (a node's ROS clock on the sim's /clock) reads the sim's time, and wait
    for the period it steps: every goal is received at the simulated time the sim applies it from, however loaded
    the box (a stream on wall time is not: a late tick of a sim on wall time applies a goal to the periods before
    it came, what a subscriber stamping goals on arrival cannot know)."""
    from std_msgs.msg import Float64MultiArray

    for row in rows:  # polled at 0.5 ms: a step takes a fraction of a millisecond
        t = sim.sim_time_ns
        wait_for(lambda t=t: clock() >= t, timeout, f"the clock at the sim's {t * 1e-9:.3f} s", interval=5e-4)
        pub.publish(Float64MultiArray(data=[float(x) for x in np.atleast_1d(row)]))
        wait_for(lambda t=t: sim.sim_time_ns > t, timeout, f"the sim's step after {t * 1e-9:.3f} s", interval=5e-4)


__all__ = [
    "PENDULUM_JOINTS",
    "PENDULUM_SIM",
    "FeedForwardProbe",
    "RosHarness",
    "domain_id",
    "hardware_on_virtual_bus",
    "lockstep_goals",
    "pendulum_feedforward",
    "rosout_matched",
    "sim_node",
    "wait_for",
    "rclpy",
]


def walk_points(walk, clock: list, index: dict, bounds, periods: int = 25, period: float = 0.1) -> dict:
    """Walk tick → the position the walk node published for it: ``periods`` trajectory messages planned by hand on
    the fake ``clock`` (``walk.now_s`` reads ``clock[0]``), each parsed as the feed-forward node would (raises when
    refused by ``bounds``), keeping the points from the walk start on (a later message's point replaces an earlier)."""
    from servo_ff.ros.desired_trajectory import parse_trajectory

    points: dict[int, np.ndarray] = {}
    for _ in range(periods):
        clock[0] += period
        walk._publish_trajectory()
        traj = parse_trajectory(walk._cdr.data(), index, clock[0], bounds)
        for t, q in zip(traj.t0 + traj.times, traj.q, strict=True):
            if t > walk.t_walk - 1e-6:
                points[round((t - walk.t_walk) / walk.dt)] = q
    return points


def watched(cls: type, attr: str, snapshot) -> tuple[type, list]:
    """A subclass of ``cls`` that notes ``snapshot(obj, value)`` (skipped when None) at each write of ``attr``, just
    before it: what a reader on another thread that sees the new value would read with it. For the order of writes
    (a count or flag written after what it announces). Returns (the subclass, the list of snapshots)."""
    seen: list = []

    class Watched(cls):
        def __setattr__(self, name, value):
            if name == attr and (got := snapshot(self, value)) is not None:
                seen.append(got)
            super().__setattr__(name, value)

    return Watched, seen
