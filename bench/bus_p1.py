"""Dynamixel Protocol 1.0 bus cycle benchmark: ``DynamixelBus1`` against ``servo-ff virtual-bus --protocol dxl1`` in a
separate process over a pty. Protocol 1.0 has no SYNC_READ: an MX cycle is one BULK_READ of present position +
speed + load (36–41, 6 bytes per servo) and one SYNC_WRITE of goal position (30, 2 bytes); an AX-12 cycle is one
READ per servo (no BULK_READ) and the SYNC_WRITE.

For 1, 6, 12, 20 MX-106 (1.0) servos, and 20 AX-12A, it prints bus transactions per cycle, cycle time and the
client's CPU time per cycle (``time.process_time``; the emulator runs in its own process and is not counted), next
to the wire-time floor of the packets at 1 Mbps (10 bits per byte, Return Delay Time 0).

    .venv/bin/python bench/bus_p1.py [--cycles 1000]

Same-run anchor (issue 25, ``bench/_bus_timing.py``): 20 MX servos, our cycle and the vendor SDK's
``GroupBulkRead`` + ``GroupSyncWrite`` (Protocol 1.0, its port's read waiting in ``select``) alternating in blocks on
one virtual bus; ``cpu_over_sdk`` = median of the per-round ratios of CPU per cycle.

Last line: ``RESULT cpu_over_sdk=<ratio> transactions_per_cycle=<int> cpu_us_per_cycle_20=<float> cpu_us_mean_20=<float>
wire_ms_20=<float> ax_transactions_per_cycle=<int>`` (20 MX servos; median and mean CPU time per cycle).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

import dynamixel_sdk as sdk  # noqa: E402
from _bus_timing import SdkLoop, anchor_lines, blocking_port, cpu_over_sdk, run_client  # noqa: E402

from servo_ff.bus.bus_types import BusConfig  # noqa: E402
from servo_ff.bus.dynamixel.bus_p1 import DynamixelBus1  # noqa: E402
from servo_ff.bus.virtual_bus import spawn_virtual_bus  # noqa: E402
from servo_ff.models.presets import preset  # noqa: E402

SIZES = (1, 6, 12, 20)


def wire_bytes(n: int, bulk: bool = True) -> tuple[int, int]:
    """(bytes of the read incl. its instruction(s), bytes of the goal sync write) per cycle."""
    reply = 6 + 6  # FF FF ID LEN ERR + 6 data + checksum
    read = (7 + 3 * n + n * reply) if bulk else n * (8 + reply)  # BULK_READ: FF FF FE LEN 92 00 [len id addr]… CHK
    return read, 8 + 3 * n  # SYNC_WRITE: FF FF FE LEN 83 30 02 [id lo hi]… CHK


def config(device: str, model: str, n: int) -> BusConfig:
    return BusConfig(
        port=device, ids=range(1, n + 1), model=model, protocol="dxl1", latency_timer_ms=1.0, timeout_ms=50.0
    )


def run(device: str, model: str, n: int, cycles: int):
    t = run_client(DynamixelBus1(config(device, model, n)), n, cycles)
    return t.wall, t.cpu, t.tpc, t.fails


class BulkRead1(sdk.GroupBulkRead):
    """The SDK's GroupBulkRead with its Protocol 1.0 ``txPacket`` fixed: dynamixel-sdk 4.1 passes a fifth argument
    that ``Protocol1PacketHandler.bulkReadTx`` does not take (the vendor's own packet code is used unchanged)."""

    def txPacket(self):
        if self.is_param_changed or not self.param:
            self.makeParam()
        return self.ph.bulkReadTx(self.port, self.param, len(self.data_dict) * 3)


def anchor(n: int, rounds: int, per_round: int) -> tuple[float, np.ndarray, np.ndarray]:
    """cpu_over_sdk for ``n`` MX-106 (1.0): our cycle and the vendor SDK's GroupBulkRead (36–41) + GroupSyncWrite
    (30, 2 bytes), Protocol 1.0, its read waiting in ``select``, alternating on one virtual bus."""
    with spawn_virtual_bus(
        ["--protocol", "dxl1", "--servo", "mx106-p1", "--ids", f"1-{n}", "--return-delay", "0"]
    ) as vb:
        port = blocking_port(sdk.PortHandler)(vb.device)
        assert port.openPort() and port.setBaudRate(1_000_000)
        ph = sdk.PacketHandler(1.0)
        br = BulkRead1(port, ph)
        for i in range(1, n + 1):
            br.addParam(i, 36, 6)
        sw = sdk.GroupSyncWrite(port, ph, 30, 2)
        loop = SdkLoop(
            br,
            sw,
            list(range(1, n + 1)),
            lambda g: [g & 0xFF, g >> 8],
            lambda i: br.getData(i, 36, 2),
            sdk.COMM_SUCCESS,
        )
        try:
            return cpu_over_sdk(DynamixelBus1(config(vb.device, "mx106-p1", n)), n, loop, rounds, per_round)
        finally:
            port.closePort()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cycles", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=10, help="alternating rounds of the same-run SDK anchor")
    args = ap.parse_args()
    rows = []
    for n in SIZES:
        with spawn_virtual_bus(
            ["--protocol", "dxl1", "--servo", "mx106-p1", "--ids", f"1-{n}", "--return-delay", "0"]
        ) as vb:
            rows.append(("MX-106(1.0)", n, True, *run(vb.device, "mx106-p1", n, args.cycles)))
    with tempfile.TemporaryDirectory() as tmp:  # the AX-12A has no identified preset: a stand-in actuator
        params = os.path.join(tmp, "ax.json")
        preset("mx28", "m1").save_json(params)
        ax = ["--protocol", "dxl1", "--servo", "ax12a", "--params", params, "--ids", "1-20", "--return-delay", "0"]
        with spawn_virtual_bus(ax) as vb:
            rows.append(("AX-12A", 20, False, *run(vb.device, "ax12a", 20, max(args.cycles // 4, 50))))
    print(
        f"Protocol 1.0 cycle over the pty (virtual bus in its own process, Return Delay 0; {args.cycles} cycles, "
        "AX a quarter of them)"
    )
    print(
        f"{'servos':>14} {'n':>3} {'read':>10} {'trans/cycle':>11} {'cycle ms':>9} {'CPU µs median':>14}"
        f" {'CPU µs mean':>12} {'fails':>6} | {'wire B':>7} {'1 Mbps floor ms':>16}"
    )
    for name, n, bulk, wall, cpu, tpc, fails in rows:
        r, w = wire_bytes(n, bulk)
        print(
            f"{name:>14} {n:>3} {'BULK_READ' if bulk else 'READ × n':>10} {tpc:>11.2f} {wall * 1e3:>9.3f}"
            f" {np.median(cpu) * 1e6:>14.1f} {cpu.mean() * 1e6:>12.1f} {fails:>6} | {r + w:>7} {(r + w) * 1e-2:>16.3f}"
        )
    print(f"load average during the run: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    _, n, _, wall, cpu, tpc, _ = rows[len(SIZES) - 1]
    r, w = wire_bytes(n)
    cpu_ratio, ours, theirs = anchor(n, args.rounds, max(args.cycles // args.rounds, 20))
    print(
        anchor_lines(
            f"Same-run anchor, {n} MX-106(1.0), vendor GroupBulkRead + GroupSyncWrite", cpu_ratio, ours, theirs
        )
    )
    print(
        f"RESULT cpu_over_sdk={cpu_ratio:.3g} transactions_per_cycle={int(round(tpc))} "
        f"cpu_us_per_cycle_20={np.median(cpu) * 1e6:.1f} "
        f"cpu_us_mean_20={cpu.mean() * 1e6:.1f} wire_ms_20={(r + w) * 1e-2:.3f} ax_transactions_per_cycle="
        f"{int(round(rows[-1][5]))}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
