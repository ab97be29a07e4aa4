"""What the ILC node reads from the servo node that takes its goals, before the first trial: the joint limits of the
learned joint (the servo node's ``position_min`` / ``position_max``, the limits it refuses goals beyond) and the P
gains it holds (``kp``, put back after the run). The servo node is the node subscribing to the ILC node's goal
topics (``servo/joint_command``, ``servo/joint_trajectory``) whose ``joints`` has the joint; its parameters are
read through its ``get_parameters`` service. And whether another ILC node learns the same joint on the same goal
topics (:func:`rival`): the two would run their trials over each other (one ``ilc/start`` starts both)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from rcl_interfaces.srv import GetParameters
from rclpy.node import Node
from rclpy.parameter import parameter_value_to_python

from servo_ff.ros.parameters import per_joint

NAMES = ["joints", "position_min", "position_max", "kp"]


@dataclass(frozen=True)
class ServoView:
    """The servo node of the learned joint: its name, the joint's limits [rad], its ``joints`` and ``kp``."""

    name: str
    lower: float
    upper: float
    joints: list[str]
    kp: list[float]


def _get(node: Node, servo: str, timeout: float, names: list[str] = NAMES) -> dict | None:
    """The parameters ``names`` of the node ``servo`` (None: its service did not answer within ``timeout`` s)."""
    client = node.create_client(GetParameters, f"{servo}/get_parameters")
    try:
        if not client.wait_for_service(timeout_sec=timeout):
            return None
        done = threading.Event()
        future = client.call_async(GetParameters.Request(names=names))
        future.add_done_callback(lambda _: done.set())
        if not done.wait(timeout) or future.result() is None:
            return None
        values = future.result().values
        return dict(zip(names, (parameter_value_to_python(v) for v in values))) if len(values) == len(names) else None
    finally:
        node.destroy_client(client)


def view_of(servo: str, joint: str, p: dict) -> ServoView | None:
    """The :class:`ServoView` of ``joint`` from the servo node's parameters ``p`` (None: not its joint, or it has
    no limits); a servo node naming no joints (``joints: ['']``) with one limit pair applies it to every joint."""
    joints = [j for j in (p.get("joints") or []) if j]
    lo, hi, kp = p.get("position_min"), p.get("position_max"), p.get("kp")
    if not isinstance(lo, list) or not isinstance(hi, list) or (joints and joint not in joints):
        return None
    if not joints and (len(lo) != 1 or len(hi) != 1):
        return None
    n, i = max(len(joints), 1), joints.index(joint) if joints else 0
    gains = [] if kp is None else [float(k) for k in (kp if isinstance(kp, list) else [kp])]
    return ServoView(
        servo, float(per_joint(lo, n, "position_min")[i]), float(per_joint(hi, n, "position_max")[i]), joints, gains
    )


def servo_view(node: Node, topics: list[str], joint: str, timeout: float) -> ServoView:
    """The servo node of ``joint`` among the subscribers of ``topics`` (resolved names), found within ``timeout``
    s of wall time; RuntimeError naming the topics when none is."""
    own = {node.get_fully_qualified_name()}
    deadline, seen = time.monotonic() + timeout, set()
    while True:
        for topic in topics:
            for info in node.get_subscriptions_info_by_topic(topic):
                name = f"{info.node_namespace.rstrip('/')}/{info.node_name}"
                if name in own or name in seen:
                    continue
                p = _get(node, name, min(2.0, max(0.5, deadline - time.monotonic())))
                if p is not None:
                    seen.add(name)
                    view = view_of(name, joint, p)
                    if view is not None:
                        return view
        if time.monotonic() > deadline or not node.context.ok():
            raise RuntimeError(
                f"no servo node with joint {joint} and its limits (position_min/position_max) subscribes to "
                f"{' or '.join(topics)}: the goals cannot be checked against the joint limits"
            )
        time.sleep(0.1)


def rival(node: Node, topics: list[str], joint: str, timeout: float = 2.0) -> str:
    """The name of another node publishing on ``topics`` (resolved names) whose ``joint`` parameter is ``joint``
    (another ILC node on the same joint), '' when there is none."""
    own = node.get_fully_qualified_name()
    names = {
        f"{i.node_namespace.rstrip('/')}/{i.node_name}" for t in topics for i in node.get_publishers_info_by_topic(t)
    }
    for name in sorted(names - {own}):
        p = _get(node, name, timeout, ["joint"])
        if p is not None and p.get("joint") == joint:
            return name
    return ""
