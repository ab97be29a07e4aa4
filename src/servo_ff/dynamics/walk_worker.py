"""The on-line walk (:class:`.walk_pattern.WalkEngine`) in a process of its own, computing its samples ahead (ROS-free).

placo holds the GIL through a re-plan (≈ 40 ms once a step): in the caller's process that time is on its critical
path. :class:`WalkWorker` owns an engine in a child process; ``request(times, cmd, cmd_time, …)`` asks for the
engine's samples at the grid times ``times`` (one ``tick`` each, in order, after ``start``) and returns at once;
``take(n)`` returns the next ``n`` samples, waiting only for those not computed yet. The samples are the engine's
own (the same sequence as ticking it in the caller) as long as the command does not change between a request and
the ticks it covers: a ``cmd_vel`` takes effect from the first sample requested after it (requests run ahead of use
by the caller's choice, e.g. one trajectory message). The halt request (the engine's ``set_halt``) travels with the
command in each request; whether the engine stands halted comes back per sample (:attr:`WalkWorker.halted`).

The stale-command rule (:func:`.walk_command.expire_command`) can run in the worker, per sample (the walk node applies
it itself once per message and passes ``cmd_time`` None): a sample at ``t`` with ``t − cmd_time > cmd_timeout`` walks
on a zero command, or (``on_timeout`` "halt") requests the halt (reported back with the samples).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections import deque
from multiprocessing.connection import Connection
from pathlib import Path

import numpy as np

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


class WalkWorker:
    """A :class:`WalkEngine` for ``urdf`` in a child interpreter (no DDS or placo state inherited)."""

    def __init__(self, urdf: str | Path, params, frames, timeout: float = 120.0):
        mine, theirs = socket.socketpair()
        src = str(Path(__file__).resolve().parents[2])
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
        code = f"from servo_ff.dynamics.walk_worker import _child; _child({theirs.fileno()})"
        self._proc = subprocess.Popen([sys.executable, "-c", code], pass_fds=[theirs.fileno()], env=env)
        theirs.close()
        self._conn = Connection(mine.detach())
        self._conn.send((str(urdf), params, frames))
        self.timeout = timeout  # [s, wall] longest wait for one answer
        self._ready: tuple | None = None  # ("ready", joints, q_stand)
        self._q: deque[np.ndarray] = deque()
        self._c: deque[float] = deque()
        self._h: deque[bool] = deque()
        self.halted = False  # the engine stood halted at the last sample taken
        self._pending = 0  # requests sent, not answered yet
        self.expired = False  # a zero command from the stale-command rule since the last take

    def _recv(self):
        try:
            if not self._conn.poll(self.timeout):
                raise TimeoutError(f"walk worker (pid {self._proc.pid}): no answer in {self.timeout:g} s")
            return self._conn.recv()
        except (EOFError, OSError) as e:  # the child is gone: its end of the socket closed
            raise self._ended(e) from None

    def _send(self, msg: tuple) -> None:
        try:
            self._conn.send(msg)
        except OSError as e:  # BrokenPipeError, ConnectionResetError: the child is gone
            raise self._ended(e) from None

    def _ended(self, e: BaseException) -> RuntimeError:
        try:
            code = self._proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            code = None
        return RuntimeError(f"walk worker (pid {self._proc.pid}) ended (exit code {code}; {type(e).__name__})")

    def joints(self) -> list[str]:
        """The engine's joints (waits for the child's start-up)."""
        if self._ready is None:
            self._ready = self._recv()
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
            self._pending += 1

    def take(self, n: int) -> tuple[list[np.ndarray], list[float]]:
        """The next ``n`` samples (q in engine order, c_left), waiting for the requests that hold them."""
        while len(self._q) < n:
            if not self._pending:
                raise RuntimeError(f"walk worker: {n} samples taken, {len(self._q)} requested")
            _, q, c, halted, expired = self._recv()
            self._pending -= 1
            self._q.extend(q)
            self._c.extend(c.tolist())
            self._h.extend(halted.tolist())
            self.expired |= bool(expired)
        for _ in range(n):
            self.halted = self._h.popleft()
        return [self._q.popleft() for _ in range(n)], [self._c.popleft() for _ in range(n)]

    def close(self) -> None:
        try:
            self._conn.send(("stop",))
        except (BrokenPipeError, OSError):
            pass
        try:
            self._proc.wait(timeout=5.0)
        except subprocess.TimeoutExpired:
            self._proc.terminate()
            self._proc.wait(timeout=5.0)
        self._conn.close()
