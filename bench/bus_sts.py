"""Feetech STS bus benchmark: FeetechBus (scservo_sdk) cycles against ``servo-ff virtual-bus --protocol sts`` in its
own process over a pty — one SYNC_READ (present position + velocity + load, 6 bytes from 56) + one SYNC_WRITE (goal
position, 2 bytes at 42) per cycle — and the fault scenario of issue 15 on STS servos.

The emulator runs with a 2 ms physics sub-step (``--dt-max 0.002``). Part 1: for 1, 6 and 12 servos at 1 Mbps, the
bus transactions per cycle and the client's CPU time per cycle (``time.process_time``; the emulator's process is not
counted) next to the wire-time floor (bytes × 10 / baud), for ``servo_ff.bus.feetech.bus.FeetechBus`` and for the stock
SDK classes (``PortHandler``/``GroupSyncRead``/``GroupSyncWrite``, whose receive loop polls the port without
sleeping), and the Python share of the cycle (the port's system calls replaced by canned replies).

Part 2 (fault scenario): 6 servos, 1 % corrupt bytes, 1 % dropped replies, the last servo silent mid-run (and back
later), one overload (cleared by the client with the reboot equivalent: torque off, goal = present, setup, torque
on), a 4 V supply sag, P gains through the cycle, a hostile goal (NaN, ±5e6 rad, 1e300, beyond a limit) every
97th cycle. From the bus's truth record: state entries reported valid that are not their own transaction's intact
reply — split into another transaction's data (stale) and a garbled reply that passed the 8-bit checksum and the
range check (a limit of the protocol) — and goals written outside the joint limits or non-finite; the mean cycle
time with the silent servo over the healthy one. Part 2 is ``bench/faults.py --protocol sts`` (the scenario's one
copy, shared by every bus protocol), called from here.

    .venv/bin/python bench/bus_sts.py [--cycles 1000] [--stock-cycles 200] [--fault-cycles 20000]

Same-run anchor (issue 25, ``bench/_bus_timing.py``): 6 servos, our cycle and the vendor SDK's ``GroupSyncRead`` +
``GroupSyncWrite`` (its port's read waiting in ``select``) alternating in blocks on one virtual bus; ``cpu_over_sdk`` =
median of the per-round ratios of CPU per cycle.

Last line: ``RESULT cpu_over_sdk=<ratio> transactions_per_cycle=<int> cpu_us_per_cycle_6=<median> cpu_us_mean_6=<mean>
wire_ms_6=<floor> stale_valid=<int> corrupt_accepted=<int> bad_goals=<int> silent_rate_ratio=<x>``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

import faults  # noqa: E402  (bench/faults.py: the fault scenario)
import scservo_sdk as scs  # noqa: E402
from _bus_timing import SdkLoop, anchor_lines, blocking_port, cpu_over_sdk, run_client  # noqa: E402

from servo_ff.bus import protocol1 as p1  # noqa: E402
from servo_ff.bus.bus_types import BusConfig  # noqa: E402
from servo_ff.bus.feetech.bus import GOAL_ADDR, STATE_ADDR, STATE_LEN, FeetechBus  # noqa: E402
from servo_ff.bus.virtual_bus import spawn_virtual_bus  # noqa: E402

SIZES = (1, 6, 12)
#: the emulator's physics sub-step: 2 ms (the default 1 ms costs it ~0.65 ms of CPU per step for six STS3215 on this
#: machine, and a shared 2-core machine then stalls it; the client under test is the same)
DT = ["--dt-max", "0.002"]
BAUD = 1_000_000


def wire_bytes(n: int) -> tuple[int, int]:
    """(bytes of the sync read incl. its replies, bytes of the goal sync write) per cycle."""
    sync_read = 8 + n  # FF FF FE LEN 82 addr len ids… checksum
    replies = n * (6 + STATE_LEN)  # FF FF id LEN err data… checksum
    sync_write = 8 + 3 * n  # FF FF FE LEN 83 addr len (id lo hi)… checksum
    return sync_read + replies, sync_write


def config(device: str, n: int, **kw) -> BusConfig:
    kw.setdefault("latency_timer_ms", 1.0)
    return BusConfig(port=device, ids=range(1, n + 1), model="sts3215", protocol="sts", **kw)


# ------------------------------------------------------------------ part 1
def run_ours(device: str, n: int, cycles: int):
    t = run_client(FeetechBus(config(device, n, timeout_ms=50.0)), n, cycles)
    return t.wall, t.cpu, t.tpc, t.fails


def run_canned(n: int, cycles: int) -> float:
    """CPU s of the same cycle with the port's system calls replaced by canned replies: the Python share."""
    bus = FeetechBus(config("/dev/null", n))
    bus._build_groups()
    blob = b"".join(p1.encode(i, 0, bytes([0, 8, 0, 0, 0, 0])) for i in range(1, n + 1))
    bus.port.read_available = lambda wait=True, deadline=None: blob
    bus.port.writePort = lambda pkt: len(pkt)
    bus.port.clearPort = lambda: None
    goals = np.full(n, 0.2)
    for _ in range(50):
        bus.cycle(goals)
    cpu = np.empty(cycles)
    pt = time.process_time
    for k in range(cycles):
        c = pt()
        bus.cycle(goals)
        cpu[k] = pt() - c
    return float(np.median(cpu))


def sdk_loop(device: str, n: int, port_cls=scs.PortHandler) -> SdkLoop:
    """The vendor SDK's GroupSyncRead (state) + GroupSyncWrite (goal position) on ``device``."""
    port = port_cls(device)
    ph = scs.PacketHandler(0)
    assert port.openPort() and port.setBaudRate(BAUD)
    sr = scs.GroupSyncRead(port, ph, STATE_ADDR, STATE_LEN)
    for i in range(1, n + 1):
        sr.addParam(i)
    sw = scs.GroupSyncWrite(port, ph, GOAL_ADDR, 2)
    return SdkLoop(
        sr,
        sw,
        list(range(1, n + 1)),
        lambda g: [scs.SCS_LOBYTE(g), scs.SCS_HIBYTE(g)],
        lambda i: scs.SCS_TOHOST(sr.getData(i, STATE_ADDR, 2), 15),
        scs.COMM_SUCCESS,
    )


def run_stock(device: str, n: int, cycles: int):
    loop = sdk_loop(device, n)
    t0, c0 = time.perf_counter(), time.process_time()
    loop.timed(cycles)
    wall = (time.perf_counter() - t0) / cycles
    cpu = (time.process_time() - c0) / cycles
    loop.read.port.closePort()
    return wall, cpu, loop.fails


def anchor(n: int, rounds: int, per_round: int) -> tuple[float, np.ndarray, np.ndarray]:
    """cpu_over_sdk for ``n`` STS servos: our cycle and the bare SDK loop (blocking read) alternating on one bus."""
    with spawn_virtual_bus(["--protocol", "sts", "--ids", f"1-{n}", "--return-delay", "0", *DT]) as vb:
        loop = sdk_loop(vb.device, n, blocking_port(scs.PortHandler))
        try:
            return cpu_over_sdk(FeetechBus(config(vb.device, n, timeout_ms=50.0)), n, loop, rounds, per_round)
        finally:
            loop.read.port.closePort()


def part1(args) -> tuple:
    print(f"Wire-time floor of one cycle (sync read of {STATE_LEN} bytes + sync write of 2-byte goals, 10 bits/byte)")
    print(f"{'servos':>6} {'read B':>7} {'write B':>8} {'1 Mbps ms':>10} {'500 kbps ms':>12}")
    for n in SIZES:
        r, w = wire_bytes(n)
        print(f"{n:>6} {r:>7} {w:>8} {(r + w) * 10 / 1e6 * 1e3:>10.3f} {(r + w) * 10 / 5e5 * 1e3:>12.3f}")
    print()
    rows = []
    for n in SIZES:
        with spawn_virtual_bus(["--protocol", "sts", "--ids", f"1-{n}", "--return-delay", "0", *DT]) as vb:
            wall, cpu, tpc, fails = run_ours(vb.device, n, args.cycles)
            s_wall, s_cpu, s_fails = run_stock(vb.device, n, args.stock_cycles)
        rows.append((n, wall, cpu, tpc, fails, s_wall, s_cpu, s_fails, run_canned(n, args.cycles)))
    print(
        f"Cycle over the pty at 1 Mbps ({args.cycles} cycles; virtual STS bus in its own process, Return Delay 0; "
        f"stock SDK: {args.stock_cycles} cycles)"
    )
    print(
        f"{'servos':>6} {'trans/cycle':>11} {'cycle ms':>9} {'CPU µs median':>14} {'CPU µs mean':>12}"
        f" {'Python-only µs':>15} {'wire floor ms':>14} {'fails':>6} | {'stock SDK cycle ms':>18}"
        f" {'stock CPU µs':>13} {'fails':>6}"
    )
    for n, wall, cpu, tpc, fails, s_wall, s_cpu, s_fails, canned in rows:
        floor = sum(wire_bytes(n)) * 10 / BAUD
        print(
            f"{n:>6} {tpc:>11.2f} {wall * 1e3:>9.3f} {np.median(cpu) * 1e6:>14.1f} {cpu.mean() * 1e6:>12.1f}"
            f" {canned * 1e6:>15.1f} {floor * 1e3:>14.3f} {fails:>6} | {s_wall * 1e3:>18.3f} {s_cpu * 1e6:>13.1f}"
            f" {s_fails:>6}"
        )
    print(f"load average during the run: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print(
        "CPU = the client's process time per cycle (the pty's select/read/write system calls included); "
        "Python-only = the same cycle with canned replies; the stock SDK polls the port without sleeping."
    )
    return next(r for r in rows if r[0] == 6)


# ------------------------------------------------------------------ part 2
def part2(args) -> tuple[int, int, int, float]:
    """The fault scenario: ``bench/faults.py --protocol sts`` (the shared code of every bus)."""
    print()
    res = faults.run(faults.PROTOCOLS["sts"], args.fault_cycles, args.servos, args.seed)
    return res.stale_valid, res.corrupt_accepted, res.bad_goals, res.ratio


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cycles", type=int, default=1000)
    ap.add_argument("--stock-cycles", type=int, default=200)
    ap.add_argument("--fault-cycles", type=int, default=20000)
    ap.add_argument("--servos", type=int, default=6, help="servos of the fault scenario")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=10, help="alternating rounds of the same-run SDK anchor")
    args = ap.parse_args()
    n, wall, cpu, tpc, *_ = part1(args)
    cpu_ratio, ours, theirs = anchor(6, args.rounds, max(args.cycles // args.rounds, 20))
    print(anchor_lines("Same-run anchor, 6 STS servos, vendor GroupSyncRead + GroupSyncWrite", cpu_ratio, ours, theirs))
    stale, garbled, bad_goals, ratio = part2(args)
    floor = sum(wire_bytes(6)) * 10 / BAUD
    print(
        f"RESULT cpu_over_sdk={cpu_ratio:.3g} transactions_per_cycle={int(round(tpc))} "
        f"cpu_us_per_cycle_6={np.median(cpu) * 1e6:.1f} "
        f"cpu_us_mean_6={cpu.mean() * 1e6:.1f} wire_ms_6={floor * 1e3:.3f} stale_valid={stale} "
        f"corrupt_accepted={garbled} bad_goals={bad_goals} silent_rate_ratio={ratio:.3f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
