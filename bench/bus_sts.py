"""Feetech STS bus benchmark: FeetechBus (scservo_sdk) cycles against ``servo-ff virtual-bus --protocol sts`` in its
own process over a pty — one SYNC_READ (present position + velocity + load, 6 bytes from 56) + one SYNC_WRITE (goal
position, 2 bytes at 42) per cycle — and the fault scenario of issue 15 on STS servos.

The emulator runs with a 2 ms physics sub-step (``--dt-max 0.002``). Part 1: for 1, 6 and 12 servos at 1 Mbps, the
bus transactions per cycle and the client's CPU time per cycle (``time.process_time``; the emulator's process is not
counted) next to the wire-time floor (bytes × 10 / baud), for ``servo_ff.feetech.bus.FeetechBus`` and for the stock
SDK classes (``PortHandler``/``GroupSyncRead``/``GroupSyncWrite``, whose receive loop polls the port without
sleeping), and the Python share of the cycle (the port's system calls replaced by canned replies).

Part 2 (fault scenario): 6 servos, 1 % corrupt bytes, 1 % dropped replies, the last servo silent mid-run (and back
later), one overload (cleared by the client with the reboot equivalent: torque off, goal = present, setup, torque
on), a 4 V supply sag, P gains through the cycle, a hostile goal (NaN, ±5e6 rad, 1e300, beyond a limit) every
97th cycle. From the bus's truth record: state entries reported valid that are not their own transaction's intact
reply — split into another transaction's data (stale) and a garbled reply that passed the 8-bit checksum and the
range check (a limit of the protocol) — and goals written outside the joint limits or non-finite; the mean cycle
time with the silent servo over the healthy one.

    .venv/bin/python bench/bus_sts.py [--cycles 1000] [--stock-cycles 200] [--fault-cycles 20000]

Last line: ``RESULT transactions_per_cycle=<int> cpu_us_per_cycle_6=<median> cpu_us_mean_6=<mean>
wire_ms_6=<floor> stale_valid=<int> corrupt_accepted=<int> bad_goals=<int> silent_rate_ratio=<x>``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

import scservo_sdk as scs  # noqa: E402

from servo_ff.dynamixel import control_table as ct  # noqa: E402
from servo_ff.dynamixel import protocol1 as p1  # noqa: E402
from servo_ff.dynamixel import truth as tr  # noqa: E402
from servo_ff.dynamixel.bus_types import BusConfig, GoalRejected  # noqa: E402
from servo_ff.dynamixel.faults import CORRUPTED  # noqa: E402
from servo_ff.dynamixel.virtual_bus import spawn_virtual_bus  # noqa: E402
from servo_ff.feetech.bus import GOAL_ADDR, STATE_ADDR, STATE_LEN, FeetechBus  # noqa: E402

SIZES = (1, 6, 12)
#: the emulator's physics sub-step: 2 ms (the default 1 ms costs it ~0.65 ms of CPU per step for six STS3215 on this
#: machine, and a shared 2-core machine then stalls it; the client under test is the same)
DT = ["--dt-max", "0.002"]
STS = ct.control_table("sts3215")
BAUD = 1_000_000
LIMIT = 2.5  # joint limits ±2.5 rad in the fault scenario
HOSTILE = (np.nan, 5e6, -5e6, 1e300, LIMIT + 0.5)


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
    with FeetechBus(config(device, n, timeout_ms=50.0)) as bus:
        bus.connect()
        bus.setup()
        bus.torque(True)
        goals = np.full(n, 0.2)
        for _ in range(30):
            bus.cycle(goals)
        fails0 = sum(s.failures for s in bus.stats.values())
        t0, tr0 = time.perf_counter(), bus.transactions
        cpu = np.empty(cycles)
        pt = time.process_time
        for k in range(cycles):
            c = pt()
            goals[:] = 0.2 + 0.1 * np.sin(k * 0.01)
            bus.cycle(goals)
            cpu[k] = pt() - c
        wall = (time.perf_counter() - t0) / cycles
        tpc = (bus.transactions - tr0) / cycles
        fails = sum(s.failures for s in bus.stats.values()) - fails0
    return wall, cpu, tpc, fails


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


def run_stock(device: str, n: int, cycles: int):
    port = scs.PortHandler(device)
    ph = scs.PacketHandler(0)
    assert port.openPort() and port.setBaudRate(BAUD)
    sr = scs.GroupSyncRead(port, ph, STATE_ADDR, STATE_LEN)
    for i in range(1, n + 1):
        sr.addParam(i)
    sw = scs.GroupSyncWrite(port, ph, GOAL_ADDR, 2)
    fails = 0
    t0, c0 = time.perf_counter(), time.process_time()
    for k in range(cycles):
        if sr.txRxPacket() != scs.COMM_SUCCESS:
            fails += 1
        pos = [scs.SCS_TOHOST(sr.getData(i, STATE_ADDR, 2), 15) for i in range(1, n + 1)]  # noqa: F841
        sw.clearParam()
        goal = 2048 + int(100 * np.sin(k * 0.01))
        for i in range(1, n + 1):
            sw.addParam(i, [scs.SCS_LOBYTE(goal), scs.SCS_HIBYTE(goal)])
        sw.txPacket()
    wall = (time.perf_counter() - t0) / cycles
    cpu = (time.process_time() - c0) / cycles
    port.closePort()
    return wall, cpu, fails


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
def goals_at(t: float, n: int) -> np.ndarray:
    return 0.8 * np.sin(2 * np.pi * 0.5 * t + np.arange(n) * 0.4)


def state_values(payload: bytes) -> np.ndarray:
    raw = np.frombuffer(payload[:4], dtype="<u2")
    pos = int(STS.decode("Present Position", int(raw[0])))
    vel = int(STS.decode("Present Velocity", int(raw[1])))
    return np.array([(pos - STS.center) * STS.rad_per_count, vel * STS.velocity_unit])


def fault_bus(device: str, n: int) -> FeetechBus:
    cfg = config(
        device,
        n,
        p_gain=True,
        retries=5,
        joint_limits={i: (-LIMIT, LIMIT) for i in range(1, n + 1)},
        skip_after=5,
        probe_period_s=0.2,
        names={i: f"j{i}" for i in range(1, n + 1)},
    )
    bus = FeetechBus(cfg).open()
    t_end = time.monotonic() + 10.0
    while True:  # a busy machine can miss every ping retry of a servo: try again before giving up
        _, missing = bus.connect()
        if not missing:
            break
        if time.monotonic() > t_end:
            raise SystemExit(f"servos {missing} missing at start")
        bus.ids, bus.missing = list(cfg.ids), []
    bus.setup()
    bus.torque(True)
    return bus


def calibrate(n: int, fault_args: list[str]) -> float:
    """Seconds per cycle with the random faults only."""
    with spawn_virtual_bus(["--protocol", "sts", "--ids", f"1-{n}", "--return-delay", "0", *DT, *fault_args]) as vb:
        bus = fault_bus(vb.device, n)
        kp = np.full(n, 32)
        for _ in range(100):
            bus.cycle(goals_at(0.0, n), kp)
        dts = []
        for k in range(400):
            t0 = time.perf_counter()
            bus.cycle(goals_at(k * 1e-3, n), kp)
            dts.append(time.perf_counter() - t0)
        bus.close()
    return float(np.median(dts))


def split_audit(truth, records) -> tuple[tr.Audit, int]:
    """The truth audit and, of its invalid-valid entries, those whose own reply was garbled (checksum collision)."""
    audit = tr.audit_states(truth, records, STATE_ADDR, state_values)
    reads = tr.reads_of(truth, STATE_ADDR)
    index = {(int(r), int(i)): k for k, (r, i) in enumerate(zip(truth["rp_read"], truth["rp_id"]))}
    garbled = 0
    for serial, ids, valid, values, _ in records:
        if serial - 1 >= len(reads):
            continue
        r = int(reads[serial - 1])
        for j, i in enumerate(ids):
            k = index.get((r, int(i)))
            if valid[j] and k is not None and truth["rp_fate"][k] == CORRUPTED:
                garbled += 1
    return audit, garbled


def part2(args) -> tuple[int, int, int, float]:
    n = args.servos
    silent_id, overload_id = n, max(1, n // 3)
    rand = ["--corrupt-rate", "0.01", "--drop-rate", "0.01", "--seed", str(args.seed)]
    dt_cal = calibrate(n, rand)
    dur = args.fault_cycles * dt_cal * 1.05
    t_ovl, t_sil, d_sil, t_sag, d_sag = 0.15 * dur, 0.4 * dur, 0.3 * dur, 0.78 * dur, 0.08 * dur
    truth_path = os.path.join(tempfile.mkdtemp(prefix="servo_ff_sts_faults_"), "truth.npz")
    vb_args = ["--protocol", "sts", "--ids", f"1-{n}", "--return-delay", "0", *DT, *rand]
    vb_args += ["--silent", f"{silent_id}@{t_sil:.3f}+{d_sil:.3f}", "--overload", f"{overload_id}@{t_ovl:.3f}"]
    vb_args += ["--sag", f"4@{t_sag:.3f}+{d_sag:.3f}", "--truth", truth_path]
    t_end = t_sag + d_sag + 0.5
    cyc_t = np.zeros((3 * args.fault_cycles, 2))
    records = []
    exceptions = refused = hostile_tries = 0
    reboot_t = recovered_t = skipped_t = back_t = None
    volts_min = np.inf
    kp = np.full(n, 32)
    with spawn_virtual_bus(vb_args) as vb:
        t_start = time.monotonic()
        bus = fault_bus(vb.device, n)
        for k in range(3 * args.fault_cycles):
            c0 = time.monotonic()
            if k >= args.fault_cycles and c0 - t_start > t_end:
                break
            goal = goals_at(c0 - t_start, n)
            if k % 97 == 0:
                hostile_tries += 1
                bad = goal.copy()
                bad[k % n] = HOSTILE[(k // 97) % len(HOSTILE)]
                try:
                    bus.cycle(bad, kp)
                except GoalRejected:
                    refused += 1
                except Exception:  # noqa: BLE001
                    exceptions += 1
            try:
                s = bus.cycle(goal, kp)
            except Exception as e:  # noqa: BLE001
                exceptions += 1
                print(f"cycle {k}: {type(e).__name__}: {e}", file=sys.stderr)
                continue
            c1 = time.monotonic()
            cyc_t[k] = (c0 - t_start, c1 - c0)
            records.append((bus.state_reads, s.ids, s.valid, np.stack([s.position, s.velocity], axis=1), s.stamps))
            st = bus.stats[silent_id]
            if skipped_t is None and st.skipping:
                skipped_t = c1 - t_start
            if skipped_t is not None and back_t is None and not st.skipping:
                back_t = c1 - t_start
            j = overload_id - 1
            if reboot_t is not None and recovered_t is None and s.valid[j] and abs(s.position[j] - goal[j]) < 0.1:
                recovered_t = c1 - t_start
            if k % 50 == 0:
                h = bus.read_health()
                if h.valid.any():
                    volts_min = min(volts_min, float(np.nanmin(h.voltage)))
                for i, e in zip(h.ids, h.hw_error):
                    if e > 0 and e & ct.HW_OVERLOAD and reboot_t is None:
                        try:
                            bus.reboot(i)  # the reboot equivalent: torque off, goal = present
                            bus.setup(ids=[i])
                            bus.write_goals(goals_at(time.monotonic() - t_start, n), kp)
                            bus.torque(True, ids=[i])
                            reboot_t = time.monotonic() - t_start
                        except Exception as e:  # noqa: BLE001
                            exceptions += 1
                            print(f"reboot of id {i}: {type(e).__name__}: {e}", file=sys.stderr)
        bus.close()
        time.sleep(0.2)
    truth = tr.load(truth_path)
    audit, garbled = split_audit(truth, records)
    data, addr = truth["wr_data"], truth["wr_addr"]
    is_goal = addr == GOAL_ADDR
    raw = data[is_goal, 0:2].copy().view("<u2")[:, 0].astype(np.int64)
    counts = STS.decode("Goal Position", raw)
    lim_c = np.abs(np.rint(np.array([-LIMIT, LIMIT]) / STS.rad_per_count)).max()
    bad_goals = int(np.sum(np.abs(counts - STS.center) > lim_c))
    t_sil_abs = float(truth["t0"]) - t_start + t_sil
    t, dt = cyc_t[:, 0], cyc_t[:, 1]
    done = dt > 0
    around_reboot = (t > t_ovl - 0.01 * dur) & (t < t_ovl + 0.03 * dur)
    outside = (t < t_sil_abs - 0.02 * dur) | (t > t_sil_abs + d_sil + 0.02 * dur)
    healthy = done & (t > 0.03 * dur) & outside & ~around_reboot
    silent = done & (t >= t_sil_abs) & (t < t_sil_abs + d_sil)
    ratio = float(dt[silent].mean() / dt[healthy].mean()) if silent.any() and healthy.any() else float("nan")
    ratio_med = float(np.median(dt[silent]) / np.median(dt[healthy])) if silent.any() and healthy.any() else ratio
    stats = bus.stats
    tot = {k: sum(getattr(s, k) for s in stats.values()) for k in ("ok", "timeouts", "corrupt", "late", "wrong_length")}
    stale = audit.stale_valid - garbled
    print()
    print(
        f"Fault scenario: {n} × STS3215, corrupt bytes 1 %, dropped replies 1 %, id {silent_id} silent "
        f"{t_sil_abs:.1f}–{t_sil_abs + d_sil:.1f} s, id {overload_id} overload at {t_ovl:.1f} s, sag 4 V "
        f"{t_sag:.1f}–{t_sag + d_sag:.1f} s; latency timer 1 ms (margin 3 ms); calibration {dt_cal * 1e3:.2f} ms/cycle"
    )
    rows = [
        ("cycles", f"{int(done.sum())}"),
        ("exceptions", f"{exceptions}"),
        ("hostile goals refused (GoalRejected)", f"{refused} / {hostile_tries}"),
        ("state entries checked against the truth", f"{audit.checked}"),
        ("stale entries reported valid (another transaction's data)", f"{stale}"),
        ("garbled replies that passed checksum + range check", f"{garbled}"),
        ("entries stamped before their reply was sent", f"{audit.before_sent}"),
        ("intact on-time replies reported invalid", f"{audit.intact_invalid}"),
        ("goals written (sync write entries)", f"{int(is_goal.sum())}"),
        ("out-of-limit or non-finite goals written", f"{bad_goals}"),
        (
            "replies: ok / timeouts / corrupt / late / wrong length",
            f"{tot['ok']} / {tot['timeouts']} / {tot['corrupt']} / {tot['late']} / {tot['wrong_length']}",
        ),
        (
            "bus-level: checksum errors / length errors / unattributed",
            f"{bus.port.scanner.stats.crc_errors} / {bus.port.scanner.stats.length_errors} / "
            f"{bus.port.counters.unattributed}",
        ),
        (
            f"id {silent_id}: timeouts / skipped reads / probes",
            f"{stats[silent_id].timeouts} / {stats[silent_id].skipped} / {stats[silent_id].probes}",
        ),
        (
            f"id {silent_id}: skipped after silence began [s]",
            f"{skipped_t - t_sil_abs:.3f}" if skipped_t is not None else "never",
        ),
        (
            f"id {silent_id}: back after silence ended [s]",
            f"{back_t - t_sil_abs - d_sil:.3f}" if back_t is not None else "never",
        ),
        ("cycle time healthy, before and after the silence [ms] (mean)", f"{dt[healthy].mean() * 1e3:.3f}"),
        ("cycle time with one silent servo [ms] (mean)", f"{dt[silent].mean() * 1e3:.3f}"),
        ("cycle-time ratio silent / healthy: mean (RESULT) / median", f"{ratio:.3f} / {ratio_med:.3f}"),
        (f"id {overload_id}: overload → reboot equivalent at [s]", f"{reboot_t:.3f}" if reboot_t else "never"),
        (
            f"id {overload_id}: tracking again (|error| < 0.1 rad) after it [s]",
            f"{recovered_t - reboot_t:.3f}" if recovered_t is not None and reboot_t is not None else "never",
        ),
        ("lowest supply voltage read [V]", f"{volts_min:.1f}"),
        ("load average at the end (1 min) / cores", f"{os.getloadavg()[0]:.2f} / {os.cpu_count()}"),
    ]
    w = max(len(r[0]) for r in rows)
    for what, v in rows:
        print(f"{what:<{w}}  {v:>24}")
    for ex in audit.examples:
        print(f"not its own intact reply: {ex}")
    return stale, garbled, bad_goals, ratio


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cycles", type=int, default=1000)
    ap.add_argument("--stock-cycles", type=int, default=200)
    ap.add_argument("--fault-cycles", type=int, default=20000)
    ap.add_argument("--servos", type=int, default=6, help="servos of the fault scenario")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    n, wall, cpu, tpc, *_ = part1(args)
    stale, garbled, bad_goals, ratio = part2(args)
    floor = sum(wire_bytes(6)) * 10 / BAUD
    print(
        f"RESULT transactions_per_cycle={int(round(tpc))} cpu_us_per_cycle_6={np.median(cpu) * 1e6:.1f} "
        f"cpu_us_mean_6={cpu.mean() * 1e6:.1f} wire_ms_6={floor * 1e3:.3f} stale_valid={stale} "
        f"corrupt_accepted={garbled} bad_goals={bad_goals} silent_rate_ratio={ratio:.3f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
