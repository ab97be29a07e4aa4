"""``servo_walk_node``'s start: the first measured pose taken (at start-up, after a jump of the clock) and the walk's
times set from it.

With ``engine_process`` the pose is taken once the engine process is up: its start-up (placo's import, ≈ 1.5 s) is
waited for by the executor, not in a callback — each ``/joint_states`` and each second of the steady clock
(:mod:`.walk_waiting`) look at it without waiting (before: the first ``/joint_states`` waited in ``worker.start`` up to
the worker's ``timeout``, 120 s, the executor held: no status, no line). A child that ends, or is not up in that
``timeout``, before the pose is a fault counted as one during the walk (:func:`.walk_process.fault`: one ERROR line
each, ``MAX_FAILED_STARTS`` in a row and no more is started; before, a new child and an ERROR line on every
``/joint_states``, ≈ 55 a second, for ever)."""

from __future__ import annotations

from typing import Any

from sensor_msgs.msg import JointState

from servo_ff.dynamics.walk_worker import WorkerFault

from .walk_process import fault
from .walk_restart import renew_engine


def engine_up(node: Any) -> bool:
    """Whether the walk node ``node``'s engine can start now, without waiting: in process, or its engine process up.
    One that ended or hung is a fault (:func:`.walk_process.fault`); one given up never is."""
    if node.worker is None:
        return True
    if getattr(node, "engine_given_up", False):
        return False
    try:
        node.worker.check()
        return node.worker.ready()
    except WorkerFault as e:
        fault(node, e, node.now_s())
        return False


def take_pose(node: Any, msg: JointState, stamp: float) -> None:
    """``msg`` (stamped ``stamp`` [s]) into the measured pose (``node.pose``: several servo nodes' messages,
    :class:`servo_ff.ros.measured_pose.PoseAcross`; a refused one said, throttled); the walk started if it is whole
    (:func:`start_walk`)."""
    if getattr(node, "engine_given_up", False):
        return  # (said once, in walk_process.fault)
    q0, why = node.pose.take(msg.name, msg.position, stamp, node.now_s())  # (across messages; not the old time's)
    if q0 is None:
        return why and node.get_logger().error(why, throttle_duration_sec=5.0)
    start_walk(node)


def start_walk(node: Any) -> None:
    """The walk's start from the measured pose if it is whole now and the engine is up: ``q0``, the approach's start
    ``t0`` after ``start_delay`` and the walk's ``t_walk``, the first message at once. Called on each
    ``/joint_states`` and, before the first pose, on the steady tick of :mod:`.walk_waiting` (a lockstep simulation
    sends no state until the walk's first chunk has driven a goal: the pose waits there for the engine process)."""
    now = node.now_s()
    if node.q0 is not None or getattr(node, "engine_given_up", False) or now <= 0.0 or node.pose.missing(now):
        return
    if node.new_engine:
        renew_engine(node)
    if not engine_up(node):
        return  # taken once the engine process is up
    if node.worker is None:
        node.engine.start()
    else:
        try:
            node.worker.start(node.engine.cmd, node.engine.halt_requested)  # (up: no wait)
        except WorkerFault as e:
            return fault(node, e, now)
    if not node.support_on_js:  # only the first pose is used: no message taken per servo cycle
        node.destroy_subscription(node._js_sub)
        node._js_sub = None
    node.t0 = now + float(node.table["start_delay"])
    node.t_walk = node.t0 + float(node.table["approach_time"])
    node.q0 = node.pose.q.copy()  # last: the walk is seen started (q0) with its times set
    node.get_logger().info(f"walking stance at t = {node.t_walk:.3f} s, then walking under cmd_vel")
    # the first chunk at once, not at the next timer tick: a lockstep sim waits for the goals it drives
    node._publish_trajectory()
