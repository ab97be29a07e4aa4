"""The on-line walk (:class:`.walk_pattern.WalkEngine`) in a process of its own, computing its samples ahead (ROS-free).

placo holds the GIL through a re-plan (≈ 40 ms once a step): in the caller's process that time is on its critical
path. :class:`WalkWorker` owns an engine in a child process; ``request(times, cmd, cmd_time, …)`` asks for the
engine's samples at the grid times ``times`` (one ``tick`` each, in order, after ``start``) and returns at once;
``take(n)`` returns the next ``n`` samples, waiting only for those not computed yet. The samples are the engine's
own (the same sequence as ticking it in the caller) as long as the command does not change between a request and
the ticks it covers: a ``cmd_vel`` takes effect from the first sample requested after it (requests run ahead of use
by the caller's choice, e.g. one trajectory message). The halt request (the engine's ``set_halt``) travels with the
command in each request; whether the engine stands halted comes back per sample (:attr:`WalkWorker.halted`).

Faults: a child that ended (killed, crashed) is a :class:`WorkerFault` (``hung`` False) at the next call that meets
it; one that answers no more (stopped, stuck) is one (``hung`` True) once a request has been unanswered for
``hung_after`` [s, wall] (:meth:`WalkWorker.check`, :meth:`WalkWorker.deadline`: never a wait without an end).
``available(n, until)`` waits for samples only until a given time; ``close`` kills a child that does not end.

The stale-command rule (:func:`.walk_command.expire_command`) can run in the worker, per sample (the walk node applies
it itself once per message and passes ``cmd_time`` None): a sample at ``t`` with ``t − cmd_time > cmd_timeout`` walks
on a zero command, or (``on_timeout`` "halt") requests the halt (reported back with the samples).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections import deque
from multiprocessing.connection import Connection
from pathlib import Path

import numpy as np

from ..errors import ServoFFError
from .walk_command import check_on_cmd_timeout, expire_command


def _child(fd: int) -> None:
    """Child process (``python -c``, not multiprocessing: the caller's main module is not imported again): the
    engine from the first message (urdf, params, frames), answering ("start", cmd, halt), ("fill", times, cmd, halt,
    cmd_time, cmd_timeout, on_timeout), ("stop",)."""
    import signal

    from .walk_pattern import WalkEngine

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the process group: the parent ends this child
    conn = Connection(fd)
    try:
        _serve(conn, WalkEngine, *conn.recv())
    except (EOFError, BrokenPipeError, ConnectionResetError):  # the parent is gone (its end of the socket closed)
        return


def _serve(conn: Connection, engine_class, urdf, params, frames) -> None:
    engine = engine_class(urdf, params, frames)
    conn.send(("ready", engine.joints, engine.q_stand))
    while True:
        msg = conn.recv()
        if msg[0] == "stop":
            return
        if msg[0] == "start":
            engine.set_cmd(*msg[1])
            engine.set_halt(msg[2])
            engine.start()
            continue
        _, times, cmd, halt, cmd_time, timeout, on_timeout = msg
        engine.set_cmd(*cmd)
        engine.set_halt(halt)
        q = np.empty((len(times), len(engine.joints)))
        c = np.empty(len(times))
        halted = np.empty(len(times), dtype=bool)
        expired = False
        for k, t in enumerate(times):
            expired |= expire_command(engine, t, cmd_time, timeout, on_timeout)
            s = engine.tick()
            q[k], c[k], halted[k] = s.q, s.c_left, engine.halted
        conn.send(("samples", q, c, halted, expired))


HUNG_AFTER = 1.0  # [s, wall] a request unanswered this long (plus PLAN_S_PER_WALK_S of its walk): the child is hung
PLAN_S_PER_WALK_S = 0.5  # [s per s of walk beyond the first] allowed on top: the child answers a request at once,
# after ≈ 0.15 s of wall time per 1 s of walk here (a 10 s request: 1.5 s) — a run-time horizon of 10 s or a forward
# jump of the clock was taken for a hang (the review), the healthy child killed


class WorkerFault(ServoFFError, RuntimeError):
    """The child ended (killed, crashed: ``hung`` False) or answers no more (stopped, stuck: ``hung`` True)."""

    def __init__(self, text: str, pid: int, hung: bool):
        super().__init__(text)
        self.pid, self.hung = pid, hung


class WalkWorker:
    """A :class:`WalkEngine` for ``urdf`` in a child interpreter (no DDS or placo state inherited). ``timeout`` [s,
    wall]: the longest wait for its start-up (``ready``) and for a blocking ``take``; ``hung_after`` [s, wall]: a
    request unanswered this long is a hung child (:meth:`check`, :meth:`deadline`)."""

    def __init__(self, urdf: str | Path, params, frames, timeout: float = 120.0, hung_after: float = HUNG_AFTER):
        mine, theirs = socket.socketpair()
        src = str(Path(__file__).resolve().parents[2])
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
        code = f"from servo_ff.dynamics.walk_worker import _child; _child({theirs.fileno()})"
        self._proc = subprocess.Popen([sys.executable, "-c", code], pass_fds=[theirs.fileno()], env=env)
        theirs.close()
        self._conn = Connection(mine.detach())
        self.pid = self._proc.pid
        self.timeout, self.hung_after = timeout, hung_after
        self.born = time.monotonic()  # [s, time.monotonic] when the child was started
        self._ready: tuple | None = None  # ("ready", joints, q_stand)
        self._q: deque[np.ndarray] = deque()
        self._c: deque[float] = deque()
        self._h: deque[bool] = deque()
        self.halted = False  # the engine stood halted at the last sample taken
        # per request not answered yet: (when it was sent [s, time.monotonic], the wall time it may take [s])
        self._sent: deque[tuple[float, float]] = deque()
        self.expired = False  # a zero command from the stale-command rule since the last take
        try:
            self._conn.send((str(urdf), params, frames))
        except OSError:  # the child ended at once: check() says so with its exit code (before: raised out of here)
            pass

    def _answer(self, until: float):
        """The child's next message, waiting until ``until`` [s, time.monotonic]; None if none came by then; a
        WorkerFault if the child ended (its end of the socket closed)."""
        try:
            if not self._conn.poll(max(0.0, until - time.monotonic())):
                return None
            return self._conn.recv()
        except (EOFError, OSError) as e:  # (no TimeoutError here: a wait that ran out is None above, not "ended")
            raise self._ended(e) from None

    def _send(self, msg: tuple) -> None:
        try:
            self._conn.send(msg)
        except OSError as e:  # BrokenPipeError, ConnectionResetError: the child is gone
            raise self._ended(e) from None

    def _ended(self, e: BaseException) -> WorkerFault:
        try:
            code = self._proc.wait(timeout=0.1)  # its end of the socket closed: it is exiting
        except subprocess.TimeoutExpired:
            code = None
        return WorkerFault(
            f"walk worker (pid {self.pid}) ended (exit code {code}; {type(e).__name__})", self.pid, False
        )

    def hung(self, what: str) -> WorkerFault:
        """The fault of a child that answers no more (``what``: how that showed)."""
        return WorkerFault(f"walk worker (pid {self.pid}) hung: {what}", self.pid, True)

    def ready(self, wait: float = 0.0) -> bool:
        """Whether the child's engine is up (its joints and stance known), waiting at most ``wait`` [s] for it."""
        if self._ready is None:
            self._ready = self._answer(time.monotonic() + wait)
        return self._ready is not None

    def stance(self) -> np.ndarray | None:
        """The engine's stance [rad] (engine order) if the child ever started, without waiting (None: it did not)."""
        return None if self._ready is None else self._ready[2]

    def joints(self) -> list[str]:
        """The engine's joints (waits up to ``timeout`` for the child's start-up)."""
        if not self.ready(self.timeout):
            raise self.hung(f"not started in {self.timeout:g} s")
        return self._ready[1]

    def q_stand(self) -> np.ndarray:
        """The engine's walking stance [rad] (engine order), the one its walk starts from."""
        self.joints()
        return self._ready[2]

    def start(self, cmd: tuple[float, float, float], halt: bool = False) -> None:
        """The engine's ``start`` under ``cmd`` (its first plan's footsteps) and the halt request ``halt``."""
        self.joints()
        self._send(("start", tuple(cmd), bool(halt)))

    def request(
        self,
        times: list[float],
        cmd: tuple[float, float, float],
        cmd_time,
        cmd_timeout: float,
        halt: bool = False,
        on_timeout: str = "step_in_place",
    ) -> None:
        """Samples at ``times`` [s] under ``cmd`` and the halt request ``halt`` (``cmd_time``: when the command came,
        None: never; older than ``cmd_timeout`` [s]: a zero command, or the halt with ``on_timeout`` "halt"),
        computed from now; an ``on_timeout`` other than "step_in_place" or "halt" is a ValueError naming it."""
        check_on_cmd_timeout(on_timeout)
        if times:
            self._send(("fill", list(times), tuple(cmd), bool(halt), cmd_time, float(cmd_timeout), on_timeout))
            walk = times[-1] - times[0] + (times[1] - times[0] if len(times) > 1 else 0.0)  # [s] of walk asked for
            self._sent.append((time.monotonic(), self.hung_after + PLAN_S_PER_WALK_S * max(0.0, walk - 1.0)))

    def _took(self, msg: tuple) -> None:
        _, q, c, halted, expired = msg
        self._sent.popleft()
        self._q.extend(q)
        self._c.extend(c.tolist())
        self._h.extend(halted.tolist())
        self.expired |= bool(expired)

    def available(self, n: int, until: float) -> bool:
        """Whether the next ``n`` samples are here, taking the child's answers as they come until ``until`` [s,
        time.monotonic] (a WorkerFault if it ended; RuntimeError if fewer were requested)."""
        while len(self._q) < n:
            if not self._sent:
                raise RuntimeError(f"walk worker: {n} samples taken, {len(self._q)} requested")
            msg = self._answer(until)
            if msg is None:
                return False
            self._took(msg)
        return True

    def deadline(self) -> float:
        """[s, time.monotonic] when the oldest request not answered yet makes the child hung (now: none)."""
        return self._sent[0][0] + self._sent[0][1] if self._sent else time.monotonic()

    def late(self) -> float:
        """[s] how far past its allowance the oldest request is unanswered (≤ 0: in time, or none), the answers that
        came meanwhile taken."""
        if self._ready is not None:
            while self._sent and self.available(len(self._q) + 1, 0.0):
                pass
        return time.monotonic() - self.deadline() if self._sent else 0.0

    def check(self) -> None:
        """A WorkerFault if the child ended, is hung (a request unanswered for ``hung_after``), or did not start in
        ``timeout``; without waiting."""
        code = self._proc.poll()
        if code is not None:
            raise WorkerFault(f"walk worker (pid {self.pid}) ended (exit code {code})", self.pid, False)
        if self._ready is None and not self.ready() and time.monotonic() - self.born > self.timeout:
            raise self.hung(f"not started in {self.timeout:g} s")
        late = self.late()
        if late > 0.0:
            allowed = self._sent[0][1]
            raise self.hung(f"no samples for {allowed + late:.2f} s (a request allowed {allowed:.2f} s)")

    def take(self, n: int) -> tuple[list[np.ndarray], list[float]]:
        """The next ``n`` samples (q in engine order, c_left), waiting (up to ``timeout``) for the requests that hold
        them."""
        if not self.available(n, time.monotonic() + self.timeout):
            raise self.hung(f"no answer in {self.timeout:g} s")
        for _ in range(n):
            self.halted = self._h.popleft()
        return [self._q.popleft() for _ in range(n)], [self._c.popleft() for _ in range(n)]

    def kill(self) -> int | None:
        """SIGKILL (which ends a stopped child too; SIGTERM waits for SIGCONT), reaped; its socket closed. The exit
        code (None if it could not be reaped in 2 s)."""
        if self._proc.poll() is None:
            self._proc.kill()
        try:
            code = self._proc.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            code = None
        self._conn.close()
        return code

    def close(self) -> None:
        """Ask the child to stop; a child that does not end in 1 s (stopped, stuck) is killed."""
        try:  # a hung child reads nothing: not asked
            ask = self._proc.poll() is None and self.late() <= 0.0
        except WorkerFault:
            ask = False
        if ask:
            try:
                self._conn.send(("stop",))
                self._proc.wait(timeout=1.0)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.kill()
