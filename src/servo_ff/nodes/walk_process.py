"""``servo_walk_node``'s engine process (``engine_process``: placo in a child, :mod:`servo_ff.dynamics.walk_worker`)
from the node's side.

The walk's samples are asked ahead of the messages (``publish_period`` + ``engine_lead`` + ``horizon``) and taken
without holding the executor: only the samples the next period needs (``publish_period`` + 3 ``dt`` from now) are
waited for, until their request is ``walk_worker.HUNG_AFTER`` (1 s, wall) old — with the defaults they were asked
≈ 1 s before, so the wait is about nil; ``engine_lead`` 0: up to 0.5 s — the others are taken if they are there
(those that are not, for the next message; this one is that much shorter).

A child that ended (killed, crashed) or hung (a request unanswered for ``HUNG_AFTER``: stopped, stuck) is one ERROR
line; it is killed (SIGKILL, which a stopped process does not outlive); the plan is cut after now and the stop
follows (:mod:`servo_ff.dynamics.walk_stop`: from where the published plan is then to rest in 0.1 s, then to the
gait's stance over at least one step period, within the motion bounds); a new child is started at once
(:func:`.walk_restart.start_worker`). Once it is up and the stop is over, the walk starts again from the stance under
a halt request: it stands until a non-zero ``cmd_vel`` (one that came since the fault included), as after
``angular.x = -1``. Before the walk's first pose (:mod:`.walk_start`) there is no stop: the new child is started and
the pose taken once it is up. ``MAX_FAILED_STARTS`` children in a row that end (or hang) before they are up: no more
is started — one ERROR line, ``/diagnostics`` ERROR ("given up")."""

from __future__ import annotations

import bisect
import math
from typing import Any

import numpy as np

from servo_ff.dynamics.walk_stop import StopPlan, stop_plan
from servo_ff.dynamics.walk_worker import WorkerFault
from servo_ff.interpolation import knot_derivatives

from .walk_restart import start_worker


def request(node: Any, times: list[float]) -> None:
    """The worker's samples at ``times`` [s] under the command and halt request as they stand now (the stale-command
    rule applied by the node once per message, not per sample)."""
    node.worker.request(times, node.engine.cmd, None, float(node.table["cmd_timeout"]), node.engine.halt_requested)


def prefetch(node: Any, until: float) -> None:
    """Ask the worker for the walk's grid samples up to ``until`` [s] not asked yet (computed while the node's
    executor goes on)."""
    if node.worker is None or not node.times:
        return
    last, walk = (node._ahead[-1] if node._ahead else node.times[-1]), []
    while last < until:
        last += node.dt
        node._ahead.append(last)
        if last >= node.t_walk - 1e-9:
            walk.append(last)
    request(node, walk)


def walk_sample(node: Any, until: float | None) -> tuple[np.ndarray, float, bool] | None:
    """The worker's next sample (q [rad] engine order, support coefficient, halted), waiting until ``until`` [s,
    time.monotonic]: None if not there by then; ``until`` None (a sample the next period needs): until the child is
    hung, then its WorkerFault."""
    w = node.worker
    if not w.available(1, w.deadline() if until is None else until):  # (a needed one: its request's allowance)
        if until is None:
            raise w.hung("the sample the next message needs not computed in its request's allowance")
        return None
    (q,), (c,) = w.take(1)
    return q, c, w.halted


MAX_FAILED_STARTS = 5  # workers in a row that end before they are up: no more is started (no restart loop)


def tend(node: Any, now: float) -> None:
    """Before each message at ``now`` [s]: a worker that ended or hung is a fault (:func:`fault`); once the new
    one is up and the stop is over, the walk starts again."""
    if getattr(node, "engine_given_up", False):
        return  # standing: the stance held, no worker
    try:
        node.worker.check()
        if node.stop is not None and math.isinf(node.t_walk) and node.worker.ready():
            _resume(node)
    except WorkerFault as e:
        fault(node, e, now)


def fault(node: Any, e: WorkerFault, now: float) -> None:
    """The worker ended or hung (``e``), met at ``now`` [s]: killed, the stop (none before the walk's first pose:
    nothing planned), a new worker; one ERROR line."""
    old = node.worker
    stance = old.stance()
    streak = 0 if stance is not None else getattr(node, "failed_starts", 0) + 1  # ended before it was up
    node.failed_starts = streak
    code = old.kill()
    given_up = streak >= MAX_FAILED_STARTS  # (before: a new interpreter and placo import each period, an ERROR each)
    if not given_up:
        start_worker(node)  # before the cut below: it takes a while (a process spawned)
    stopping, then = "no pose taken yet", "the pose is taken once it is up"
    if node.q0 is not None:
        stance = node.engine.q_stand if stance is None else stance  # (the same gait's, in this process)
        # cut past the time the stop is published, not ``now``: a hung worker is met after its sample's allowance,
        # then killed and a new one spawned, and the message after the fault starts then; a plan cut before it had
        # the follower jump from the walk to the stop (SIGSTOP, two busy loops: 0.038-0.071 rad in an 8 ms tick)
        node.stop = _cut(node, max(now, node.now_s()), stance[node.perm])
        node.t_walk = math.inf  # the lead-in (the stop, then the stance held) until the new worker starts the walk
        node._ahead.clear()  # asked of the old worker
        node.engine.set_halt(True)
        node.standing = True  # the walk starts again standing
        stopping = f"stopping from the plan at t = {node.stop.t0:.3f} s to the stance in {node.stop.duration:.2f} s"
        then = "then standing until a non-zero cmd_vel"
    if given_up:
        node.engine_given_up = True
    node.faults += 1  # after the stop and the new worker (or none): a reader that sees the count sees them
    if given_up:
        held = "no walk" if node.q0 is None else f"stopping to the stance in {node.stop.duration:.2f} s, standing there"
        node.get_logger().error(
            f"{e}: {streak} walk workers in a row ended before they were up; no more is started — {held} (restart "
            "the node)"
        )
        return
    killed = f"; killed (exit code {code})" if e.hung else ""
    node.get_logger().error(f"{e}{killed}; {stopping}; new engine process (pid {node.worker.pid}) starting, {then}")


def _cut(node: Any, now: float, stance: np.ndarray) -> StopPlan:
    """The planned window cut after the first sample past ``now`` [s] (the published plan up to it), and the stop
    from that sample's q, q̇, q̈ (five-point differences of the plan) to ``stance`` [rad] (published order)."""
    t_min = float(node.engine.params.step_period)
    bounds = (node.vmax, node.amax)
    if not node.times:  # nothing planned yet: from the measured pose
        return stop_plan(now, (node.q0, 0.0 * node.q0, 0.0 * node.q0), 0.5, stance, bounds, t_min)
    j = min(bisect.bisect_right(node.times, now), len(node.times) - 1)
    zero = np.zeros_like(node.qs[j])
    dq, ddq = zero, zero
    if j >= 2 and j + 3 <= len(node.qs):
        dq, ddq = (x[0] for x in knot_derivatives(np.asarray(node.qs[j - 2 : j + 3]), node.dt))
    del node.times[j + 1 :], node.qs[j + 1 :], node.cs[j + 1 :]
    return stop_plan(node.times[j], (node.qs[j], dq, ddq), node.cs[j], stance, bounds, t_min)


def _resume(node: Any) -> None:
    """The new worker is up: its walk starts at the first grid time not planned or asked yet, after the stop (the
    stance is held until then), under the halt request unless a cmd_vel cancelled it meanwhile."""
    last = node._ahead[-1] if node._ahead else node.times[-1]
    node.worker.start(node.engine.cmd, node.engine.halt_requested)
    node.t_walk = max(node.stop.end, last + 0.5 * node.dt)
    how = "standing until a non-zero cmd_vel" if node.engine.halt_requested else "walking"
    node.get_logger().info(
        f"engine process (pid {node.worker.pid}) up: from the stance at t = {node.t_walk:.3f} s, {how}"
    )
