"""Bus cycle benchmark: one sync read (present current+velocity+position, 10 bytes from 126) + one sync write
(goal position) per cycle, dynamixel-sdk client against the virtual bus in a separate process over a pty.

For 1, 6, 12, 20 servos it prints the cycle time, bus transactions per cycle and the client's CPU time per
cycle (``time.process_time``; the emulator runs in its own process and is not counted), for
``servo_ff.bus.dynamixel.bus.DynamixelBus`` and for the stock SDK classes (``PortHandler``/``GroupSyncRead``/
``GroupSyncWrite``, whose receive loop polls the port without sleeping). It also prints the wire-time floor from
the packet sizes at 1, 3 and 4 Mbps (10 bits per byte) and a cProfile breakdown of the client for 20 servos.

    /work/venv/bin/python bench/bus.py [--cycles 1000] [--stock-cycles 200]

Same-run anchor (issue 25): our cycle and the bare vendor-SDK loop (``GroupSyncRead`` + ``GroupSyncWrite``, its
port's read waiting in ``select`` instead of spinning) alternate in blocks on one virtual bus; ``cpu_over_sdk`` is
the median of the per-round ratios of CPU per cycle (``bench/_bus_timing.py``, shared by the three bus benches).

Last line: ``RESULT cpu_over_sdk=<ratio> transactions_per_cycle=<int> cpu_us_per_cycle_20=<float>
cpu_us_mean_20=<float>`` —
the median of the per-cycle CPU time (robust to the scheduler of a shared machine) and the mean.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

import dynamixel_sdk as sdk  # noqa: E402
from _bus_timing import SdkLoop, anchor_lines, blocking_port, cpu_over_sdk, open_client, run_client, timed_cycles  # noqa: E402

from servo_ff.bus.dynamixel.bus import BusConfig, DynamixelBus  # noqa: E402
from servo_ff.bus.virtual_bus import spawn_virtual_bus  # noqa: E402

SIZES = (1, 6, 12, 20)
READ_LEN = 10


def wire_bytes(n: int, read_len: int = READ_LEN, write_len: int = 4) -> tuple[int, int]:
    """(bytes read incl. the sync-read instruction, bytes of the sync write) per cycle."""
    sync_read_inst = 14 + n  # header 7 + inst 1 + addr 2 + len 2 + ids n + crc 2
    replies = n * (11 + read_len)  # header 7 + inst + err + data + crc 2
    sync_write = 14 + n * (1 + write_len)
    return sync_read_inst + replies, sync_write


def run_ours(device: str, n: int, cycles: int, profile: bool = False):
    cfg = BusConfig(port=device, ids=range(1, n + 1), latency_timer_ms=1.0, timeout_ms=50.0)
    if not profile:
        t = run_client(DynamixelBus(cfg), n, cycles)
        return t.wall, t.cpu, t.tpc, t.fails, None
    prof = cProfile.Profile(time.process_time)
    with DynamixelBus(cfg) as bus:
        goals = open_client(bus, n)
        prof.enable()
        timed_cycles(bus, goals, cycles)
        prof.disable()
    return None, None, None, None, prof


def sdk_loop(device: str, n: int, port_cls=sdk.PortHandler) -> SdkLoop:
    """The vendor SDK's GroupSyncRead (10 bytes from 126) + GroupSyncWrite (goal position) on ``device``."""
    port = port_cls(device)
    ph = sdk.PacketHandler(2.0)
    assert port.openPort() and port.setBaudRate(1_000_000)
    sr = sdk.GroupSyncRead(port, ph, 126, READ_LEN)
    for i in range(1, n + 1):
        sr.addParam(i)
        ph.write1ByteTxRx(port, i, 9, 0)
    sw = sdk.GroupSyncWrite(port, ph, 116, 4)
    return SdkLoop(
        sr,
        sw,
        list(range(1, n + 1)),
        lambda g: list(g.to_bytes(4, "little")),
        lambda i: sr.getData(i, 132, 4),
        sdk.COMM_SUCCESS,
    )


def run_canned(n: int, cycles: int) -> float:
    """CPU µs of the same cycle with the port's system calls replaced by canned replies: the Python share
    (SDK framing + this package); the rest of the measured CPU time is the kernel's pty/select/wake-up work."""
    from servo_ff.bus.dynamixel import protocol as pr

    bus = DynamixelBus(BusConfig(port="/dev/null", ids=range(1, n + 1)))
    bus._build_groups()
    blob = b"".join(pr.encode_status(i, 0, bytes([0, 0, 0, 0, 0, 0, 0, 8, 0, 0])) for i in range(1, n + 1))
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


def run_stock(device: str, n: int, cycles: int):
    loop = sdk_loop(device, n)
    t0, c0 = time.perf_counter(), time.process_time()
    loop.timed(cycles)
    wall = (time.perf_counter() - t0) / cycles
    cpu = (time.process_time() - c0) / cycles
    loop.read.port.closePort()
    return wall, cpu, 2.0, loop.fails


def anchor(n: int, rounds: int, per_round: int) -> tuple[float, np.ndarray, np.ndarray]:
    """cpu_over_sdk for ``n`` servos: our cycle and the bare SDK loop (blocking read) alternating on one virtual bus."""
    with spawn_virtual_bus(["--ids", f"1-{n}", "--return-delay", "0"]) as vb:
        loop = sdk_loop(vb.device, n, blocking_port(sdk.PortHandler))
        cfg = BusConfig(port=vb.device, ids=range(1, n + 1), latency_timer_ms=1.0, timeout_ms=50.0)
        try:
            return cpu_over_sdk(DynamixelBus(cfg), n, loop, rounds, per_round)
        finally:
            loop.read.port.closePort()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cycles", type=int, default=1000)
    ap.add_argument("--stock-cycles", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=10, help="alternating rounds of the same-run SDK anchor")
    args = ap.parse_args()

    print("Wire-time floor of one cycle (sync read of 10 bytes + sync write of 4-byte goals, 10 bits/byte)")
    print(f"{'servos':>6} {'read B':>7} {'write B':>8} {'1 Mbps ms':>10} {'3 Mbps ms':>10} {'4 Mbps ms':>10}")
    for n in SIZES:
        r, w = wire_bytes(n)
        print(f"{n:>6} {r:>7} {w:>8}" + "".join(f" {(r + w) * 10 / b * 1e3:>10.3f}" for b in (1e6, 3e6, 4e6)))
    print()
    rows = []
    prof = None
    for n in SIZES:
        with spawn_virtual_bus(["--ids", f"1-{n}", "--return-delay", "0"]) as vb:
            wall, cpu, tpc, fails, p = run_ours(vb.device, n, args.cycles, profile=False)
            s_wall, s_cpu, _, s_fails = run_stock(vb.device, n, args.stock_cycles)
            if n == SIZES[-1]:
                *_, prof = run_ours(vb.device, n, min(args.cycles, 500), profile=True)
        rows.append((n, wall, cpu, tpc, fails, s_wall, s_cpu, s_fails, run_canned(n, args.cycles)))
    print(
        f"Cycle over the pty ({args.cycles} cycles; virtual bus in its own process, Return Delay 0; "
        f"stock SDK: {args.stock_cycles} cycles)"
    )
    print(
        f"{'servos':>6} {'trans/cycle':>11} {'cycle ms':>9} {'CPU µs median':>14} {'CPU µs mean':>12}"
        f" {'Python-only µs':>15} {'fails':>6} | {'stock SDK cycle ms':>18} {'stock CPU µs mean':>18}"
        f" {'fails':>6}"
    )
    for n, wall, cpu, tpc, fails, s_wall, s_cpu, s_fails, canned in rows:
        print(
            f"{n:>6} {tpc:>11.2f} {wall * 1e3:>9.3f} {np.median(cpu) * 1e6:>14.1f} {cpu.mean() * 1e6:>12.1f}"
            f" {canned * 1e6:>15.1f} {fails:>6} | {s_wall * 1e3:>18.3f} {s_cpu * 1e6:>18.1f} {s_fails:>6}"
        )
    print(f"load average during the run: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    if prof is not None:
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(14)
        print("\nWhere the client's CPU time goes (20 servos, cProfile on process_time, sorted by own time):")
        print("\n".join(line for line in out.getvalue().splitlines()[2:] if line.strip()))
    n, wall, cpu, tpc, *_ = rows[-1]
    cpu_ratio, ours, theirs = anchor(SIZES[-1], args.rounds, max(args.cycles // args.rounds, 20))
    print()
    print(anchor_lines(f"Same-run anchor, {SIZES[-1]} servos", cpu_ratio, ours, theirs))
    print(
        "Python-only = the same cycle with the port's system calls replaced by canned replies; the difference "
        "to the measured CPU is kernel pty/select/tcflush work and cache misses after each sleep."
    )
    print(
        f"RESULT cpu_over_sdk={cpu_ratio:.3g} transactions_per_cycle={int(round(tpc))} "
        f"cpu_us_per_cycle_20={np.median(cpu) * 1e6:.1f} "
        f"cpu_us_mean_20={cpu.mean() * 1e6:.1f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
