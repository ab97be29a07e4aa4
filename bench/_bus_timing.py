"""The timing loop of the three bus benches (Dynamixel 2.0, Dynamixel 1.0, Feetech STS) and their same-run anchor.

* :func:`run_client`: our bus client's cycles against a virtual bus (connect, setup, torque on, warm-up, then the
  timed cycles: wall time, CPU time per cycle, transactions per cycle, failures);
* :class:`SdkLoop`: the bare vendor-SDK loop of the same cycle (one group read + one ``GroupSyncWrite``) on a port
  whose ``readPort`` waits in ``select`` (:func:`blocking_port`) — the stock port polls without sleeping, so its
  CPU time is its wall time and says nothing about the cost of the work;
* :func:`cpu_over_sdk`: our cycle and the SDK loop on the same virtual bus, alternating in blocks (A B A B …):
  the median over the rounds of (our median CPU per cycle ÷ the SDK's).

Not a bench itself (``run_all.py`` skips files starting with ``_``).
"""

from __future__ import annotations

import select
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass
class ClientTiming:
    wall: float  # wall time per cycle [s]
    cpu: np.ndarray  # CPU (process) time of each cycle [s]
    tpc: float  # bus transactions per cycle
    fails: int  # failed servo reads during the timed cycles


def open_client(bus, n: int, warm: int = 30):
    """Connect, set up, torque on and ``warm`` cycles; returns the goal array (one per servo found: under load a
    servo can miss the discovery ping, which the bus reports and continues without)."""
    bus.connect()
    bus.setup()
    bus.torque(True)
    goals = np.full(n - len(getattr(bus, "missing", ())), 0.2)
    for _ in range(warm):
        bus.cycle(goals)
    return goals


def timed_cycles(bus, goals: np.ndarray, cycles: int, start: int = 0) -> np.ndarray:
    """CPU time [s] of each of ``cycles`` cycles of ``bus`` (goals moving slowly)."""
    cpu = np.empty(cycles)
    pt = time.process_time
    for k in range(cycles):
        c = pt()
        goals[:] = 0.2 + 0.1 * np.sin((start + k) * 0.01)
        bus.cycle(goals)
        cpu[k] = pt() - c
    return cpu


def run_client(bus, n: int, cycles: int) -> ClientTiming:
    """Our client's timed cycles (``bus`` is closed afterwards)."""
    with bus:
        goals = open_client(bus, n)
        fails0 = sum(s.failures for s in bus.stats.values())
        t0, tr0 = time.perf_counter(), bus.transactions
        cpu = timed_cycles(bus, goals, cycles)
        wall = (time.perf_counter() - t0) / cycles
        tpc = (bus.transactions - tr0) / cycles
        fails = sum(s.failures for s in bus.stats.values()) - fails0
    return ClientTiming(wall, cpu, tpc, fails)


def blocking_port(port_cls: type) -> type:
    """``port_cls`` (an SDK ``PortHandler``) with a ``readPort`` that waits in ``select`` for the rest of the packet
    timeout before reading (the SDK's receive loop otherwise spins on an empty non-blocking read)."""

    class BlockingPort(port_cls):
        def readPort(self, length):
            remaining_ms = self.packet_timeout - self.getTimeSinceStart()
            select.select([self.ser.fileno()], [], [], max(remaining_ms, 0.0) * 1e-3)
            return self.ser.read(length)

    return BlockingPort


@dataclass
class SdkLoop:
    """One vendor-SDK cycle: ``read`` (a group read's ``txRxPacket``) then the goal sync write (``write``, filled by
    ``params(goal)`` for each id); ``ok`` is the SDK's success code."""

    read: object
    write: object
    ids: list[int]
    params: Callable[[int], list[int]]
    get: Callable[[int], int]
    ok: int
    fails: int = 0

    def cycle(self, k: int) -> None:
        if self.read.txRxPacket() != self.ok:
            self.fails += 1
        pos = [self.get(i) for i in self.ids]  # noqa: F841  (the client reads its data back)
        self.write.clearParam()
        raw = self.params(2048 + int(100 * np.sin(k * 0.01)))
        for i in self.ids:
            self.write.addParam(i, raw)
        self.write.txPacket()

    def timed(self, cycles: int, start: int = 0) -> np.ndarray:
        cpu = np.empty(cycles)
        pt = time.process_time
        for k in range(cycles):
            c = pt()
            self.cycle(start + k)
            cpu[k] = pt() - c
        return cpu


def cpu_over_sdk(bus, n: int, sdk: SdkLoop, rounds: int, per_round: int) -> tuple[float, np.ndarray, np.ndarray]:
    """Our cycle and the SDK loop alternating in blocks of ``per_round`` cycles, ``rounds`` times, on the same virtual
    bus: (median of the per-round ratios of the median CPU per cycle, our per-round medians, the SDK's)."""
    ours, theirs = np.empty(rounds), np.empty(rounds)
    with bus:
        goals = open_client(bus, n)
        for _ in range(10):
            sdk.cycle(0)
        for r in range(rounds):
            ours[r] = np.median(timed_cycles(bus, goals, per_round, r * per_round))
            theirs[r] = np.median(sdk.timed(per_round, r * per_round))
    return float(np.median(ours / theirs)), ours, theirs


def anchor_lines(label: str, ratio: float, ours: np.ndarray, theirs: np.ndarray) -> str:
    """Two lines describing the same-run comparison."""
    return (
        f"{label}: our CPU µs per cycle (median per round) {np.median(ours) * 1e6:.1f} "
        f"[{ours.min() * 1e6:.1f}–{ours.max() * 1e6:.1f}], vendor SDK loop (blocking read) "
        f"{np.median(theirs) * 1e6:.1f} [{theirs.min() * 1e6:.1f}–{theirs.max() * 1e6:.1f}], {len(ours)} rounds "
        f"alternating\n  cpu_over_sdk = {ratio:.2f} (median of the per-round ratios; absolute µs are this machine's)"
    )
