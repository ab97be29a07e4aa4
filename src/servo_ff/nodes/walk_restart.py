"""The walk node after a jump back of its clock (:mod:`servo_ff.ros.clock_jump`: a simulation restarted under the
running stack, ROS time switched on or off): its plan's times are the old clock's — published on, they would
start a trajectory in the new clock's future (held by the feed-forward node at its first point) or in its past
(refused) — and so are the cmd_vel's time and the IMU reading's. A jump forward by more than
``clock_jump.FORWARD_JUMP`` (1 s: a bag or a simulation skipped ahead) is taken the same way: planned on, the
skipped time's every ``dt`` sample was ticked in one callback (placo, 20 s: 7 s of wall time, the executor held,
unsaid). All three go; the walk starts again as at
start-up: from the next measured pose, ``start_delay``, the approach to the stance, then the walk (stepping in place
until a cmd_vel; standing if a halt was asked), on a new engine made when that pose is taken (not in the clock's
callback). A ``/joint_states`` stamped more than ``clock_jump.OLD_STAMP`` ahead of the clock is the old time's (queued
behind the jump): its pose is not taken. :func:`start_worker`: a new engine process (a new engine's, or one for an
engine process that ended or hung: :mod:`.walk_process`)."""

from __future__ import annotations

from typing import Any

from servo_ff.io.paths import resolve_path
from servo_ff.ros.input_age import reset_ages
from servo_ff.ros.level_publisher import LevelPublisher

from .walk_params import walk_engine


def drop_plan(node: Any) -> str:
    """The clock jumped (back, or forward beyond ``FORWARD_JUMP``): what the walk node ``node`` held from the old time
    dropped; what, for the log line ("" for nothing)."""
    dropped = reset_ages(node.balance.age) if node.balance is not None else []
    if node.q0 is not None:
        node.forget_plan()
        node.new_engine = True
        node.support_out = LevelPublisher(node.pub_c, float(node.table["publish_period"]))  # its heartbeat's time
        node.listen_joint_states()
        node.waiting.restart()  # (said again if no pose comes)
        node.ramp.reset()  # the balance offsets from none again
        dropped.append("the walk plan and cmd_vel (from the next measured pose: start_delay, approach, walk)")
    return f"dropped {', '.join(dropped)}" if dropped else ""


def renew_engine(node: Any) -> None:
    """A new engine (and engine process) for the walk node ``node``, asked to halt if the old one was, under the
    cmd_vel that came after the jump if one did."""
    v, halt, cmd = node.table.values, node.engine.halt_requested, node.engine.cmd
    node.engine, params, frames = walk_engine(v, resolve_path(v["urdf_path"]))
    node.engine.set_halt(halt)
    if node.cmd_time is not None:  # a cmd_vel that came after the jump, on the old engine
        node.engine.set_cmd(*cmd)
    if node.worker is not None:
        node.worker_spec = (params, frames)
        start_worker(node)
    node.new_engine = False


def start_worker(node: Any) -> None:
    """A new engine process (:class:`~servo_ff.dynamics.walk_worker.WalkWorker`) for the walk node ``node`` from its
    ``worker_spec`` (WalkParams, WalkFrames), the old one closed first (killed if it does not end). Returns at once:
    the child loads placo meanwhile (``worker.ready()``)."""
    from servo_ff.dynamics.walk_worker import WalkWorker

    if node.worker is not None:
        node.worker.close()
    node.worker = WalkWorker(resolve_path(node.table["urdf_path"]), *node.worker_spec)
