"""Fault scenario of issue 15: 16 servos, 1 % corrupt bytes, 1 % dropped replies, one servo silent mid-run (and back
later), one overload (rebooted by the client), a supply sag — against the virtual bus in its own process, which
keeps a truth record of every sync read, reply fate and sync write — for Dynamixel Protocol 2.0 (``--protocol dxl2``,
16 × MX-106 2.0, the default), Protocol 1.0 (``dxl1``, 16 × MX-106 on 1.0 firmware: BULK_READ + SYNC_WRITE, the
reboot equivalent of :class:`DynamixelBus1`) or Feetech STS (``sts``, 6 × STS3215, emulator sub-step 2 ms; also run
by ``bench/bus_sts.py``), every bus made by ``make_bus`` and driven through the same calls.

The client is the protocol's bus as the hardware node drives it (latency timer 1 ms, P gain + goal through indirect
addresses, a health read every 50 cycles, the overloaded servo rebooted, set up and re-enabled; 5 retries for
single-servo transactions, since 1 % per byte garbles ~11 % of their 11-byte replies and ~19 % of the 21-byte state
replies); every 97th cycle
it first tries a hostile goal (NaN, ±5e6 rad, 1e300, beyond a limit), which must be refused before anything is
written. Fault times are placed from a short calibration run so that the phases fall at the same fractions of the
run on any machine (the run goes on past ``--cycles`` until every phase is over). From the truth record it counts
state entries reported valid that are not the intact reply of their own transaction (stale), intact on-time
replies reported invalid, and goals written outside the joint limits or non-finite. The entries reported valid
that are not their own intact reply are split into another transaction's data (stale) and a garbled reply that
passed the frame check and the range check (a limit of the protocol, ``corrupt_accepted``: the 8-bit checksum of
``dxl1`` and ``sts`` passes 1 in 256 garbled frames, the CRC-16 of ``dxl2`` 1 in 65 536, and the range check
catches garbled high bytes only).

    .venv/bin/python bench/faults.py [--protocol dxl2|dxl1|sts] [--cycles 20000] [--servos 16|16|6] [--seed 1]
                                     [--hogs N]

``--hogs N`` runs N CPU-bound processes from the end of the set-up to the end of the run: on a saturated machine the
emulator falls tens of reads behind the client, the backlog in which the ledger must keep count (single-servo
transactions, resync markers and reads beyond its length included). (Started before the set-up, they made it fail
in most runs: a starved emulator answers its single-servo writes later than the 3 ms reply margin, every retry.)

Last line: ``RESULT stale_valid=<int> corrupt_accepted=<int> bad_goals=<int> silent_rate_ratio=<x> cycles=<int>
exceptions=<int>`` (exceptions: raised by the bus during the run, each printed).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack, contextmanager

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

from dataclasses import dataclass  # noqa: E402

from servo_ff.bus import control_table as ct  # noqa: E402
from servo_ff.bus import truth as tr  # noqa: E402
from servo_ff.bus.bus_interface import make_bus  # noqa: E402
from servo_ff.bus.bus_types import GAIN_GOAL_DATA_ADDR, BusConfig, GoalRejected  # noqa: E402
from servo_ff.bus.faults import CORRUPTED  # noqa: E402
from servo_ff.bus.virtual_bus import spawn_virtual_bus  # noqa: E402

LIMIT = 2.5  # joint limits ±2.5 rad
HOSTILE = (np.nan, 5e6, -5e6, 1e300, LIMIT + 0.5)
STATE_DT = np.dtype([("c", "<i2"), ("v", "<i4"), ("p", "<i4")])


def state_values(payload: bytes) -> np.ndarray:
    """Protocol 2.0: present current, velocity, position (126, 10 bytes) → [position rad, velocity rad/s]."""
    raw = np.frombuffer(payload, dtype=STATE_DT)[0]
    return np.array([ct.counts_to_rad(raw["p"]), ct.velocity_to_rad_s(raw["v"])])


def table_state_values(table: ct.ControlTable):
    """Protocol 1.0 / STS: present position + velocity (2 bytes each, the table's encoding) first in the payload."""

    def decode(payload: bytes) -> np.ndarray:
        raw = np.frombuffer(payload[:4], dtype="<u2")
        pos = int(table.decode("Present Position", int(raw[0])))
        vel = int(table.decode("Present Velocity", int(raw[1])))
        return np.array([(pos - table.center) * table.rad_per_count, vel * table.velocity_unit])

    return decode


@dataclass
class Proto:
    """What the scenario needs to know of one protocol's bus."""

    name: str
    model: str
    vb_args: list[str]  # virtual-bus CLI args selecting the protocol and servo
    kp: int  # P gain (raw register) written through the cycle
    servos: int  # default servo count
    state_addr: int  # address of the state read in the truth record
    goal_addr: int  # address of the goal sync write (Protocol 1.0 / STS: 2 bytes)
    checksum8: bool  # 8-bit checksum: garbled replies can pass it
    label: str = ""

    @property
    def table(self) -> ct.ControlTable:
        return ct.control_table(self.model)

    def decode(self, payload: bytes) -> np.ndarray:
        return state_values(payload) if self.name == "dxl2" else table_state_values(self.table)(payload)

    def goals_written(self, truth) -> tuple[int, int]:
        """(goal entries written, of which out of the joint limits or non-finite)."""
        data, addr = truth["wr_data"], truth["wr_addr"]
        if self.name == "dxl2":  # indirect P gain (2) + goal (4) at GAIN_GOAL_DATA_ADDR, or goal position at 116
            goal_raw = np.where(
                addr == GAIN_GOAL_DATA_ADDR,
                data[:, 2:6].copy().view("<i4")[:, 0],
                data[:, 0:4].copy().view("<i4")[:, 0],
            )
            is_goal = (addr == GAIN_GOAL_DATA_ADDR) | (addr == ct.ADDR_GOAL_POSITION)
            goal_rad = ct.counts_to_rad(goal_raw[is_goal])
            lim_c = np.abs(ct.rad_to_counts([-LIMIT, LIMIT]) - ct.CENTER_COUNTS).max()
            bad = ~np.isfinite(goal_rad) | (np.abs(goal_raw[is_goal] - ct.CENTER_COUNTS) > lim_c)
            return int(is_goal.sum()), int(np.sum(bad))
        t = self.table
        is_goal = addr == self.goal_addr
        raw = data[is_goal, 0:2].copy().view("<u2")[:, 0].astype(np.int64)
        counts = t.decode("Goal Position", raw)
        lim_c = np.abs(np.rint(np.array([-LIMIT, LIMIT]) / t.rad_per_count)).max()
        return int(is_goal.sum()), int(np.sum(np.abs(counts - t.center) > lim_c))


def _protocols() -> dict[str, Proto]:
    from servo_ff.bus.dynamixel.p1_units import STATE_ADDR as STATE_ADDR1

    sts_state = 56  # servo_ff.bus.feetech.bus.STATE_ADDR (importing it needs scservo_sdk)
    return {
        "dxl2": Proto("dxl2", "mx106", [], 800, 16, ct.ADDR_PRESENT_CURRENT, ct.ADDR_GOAL_POSITION, False, "MX-106"),
        "dxl1": Proto(
            "dxl1",
            "mx106-p1",
            ["--protocol", "dxl1", "--servo", "mx106-p1"],
            32,
            16,
            STATE_ADDR1,
            30,
            True,
            "MX-106 (Protocol 1.0)",
        ),
        # the emulator's physics sub-step: 2 ms (the default 1 ms costs it ~0.65 ms of CPU per step for six STS3215,
        # and a shared 2-core machine then stalls it; the client under test is the same)
        "sts": Proto(
            "sts", "sts3215", ["--protocol", "sts", "--dt-max", "0.002"], 32, 6, sts_state, 42, True, "STS3215"
        ),
    }


PROTOCOLS = _protocols()


def open_bus(proto: Proto, device: str, n: int):
    cfg = BusConfig(
        port=device,
        ids=range(1, n + 1),
        protocol=proto.name,
        model=proto.model,
        latency_timer_ms=1.0,
        p_gain=True,
        retries=5,
        joint_limits={i: (-LIMIT, LIMIT) for i in range(1, n + 1)},
        skip_after=5,
        probe_period_s=0.2,
        names={i: f"j{i}" for i in range(1, n + 1)},
    )
    bus = make_bus(cfg).open()
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


def goals_at(t: float, n: int) -> np.ndarray:
    return 0.8 * np.sin(2 * np.pi * 0.5 * t + np.arange(n) * 0.4)


def calibrate(proto: Proto, n: int, fault_args) -> float:
    """Seconds per cycle with the random faults only (no silence, overload, sag)."""
    with spawn_virtual_bus([*proto.vb_args, "--ids", f"1-{n}", "--return-delay", "0", *fault_args]) as vb:
        bus = open_bus(proto, vb.device, n)
        kp = np.full(n, proto.kp)
        for _ in range(100):
            bus.cycle(goals_at(0.0, n), kp)
        dts = []
        for k in range(400):
            t0 = time.perf_counter()
            bus.cycle(goals_at(k * 1e-3, n), kp)
            dts.append(time.perf_counter() - t0)
        bus.close()
    return float(np.median(dts))  # robust to a load spike during the calibration


def split_audit(proto: Proto, truth, records) -> tuple[tr.Audit, int]:
    """The truth audit and, of its invalid-valid entries, those whose own reply was garbled (checksum or CRC
    collision)."""
    audit = tr.audit_states(truth, records, proto.state_addr, proto.decode)
    reads = tr.reads_of(truth, proto.state_addr)
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


@dataclass
class Result:
    stale_valid: int
    corrupt_accepted: int
    bad_goals: int
    ratio: float
    cycles: int
    exceptions: int

    def line(self) -> str:
        return (
            f"RESULT stale_valid={self.stale_valid} corrupt_accepted={self.corrupt_accepted} "
            f"bad_goals={self.bad_goals} silent_rate_ratio={self.ratio:.3f} cycles={self.cycles} "
            f"exceptions={self.exceptions}"
        )


def run(proto: Proto, cycles: int, n: int, seed: int, hogs: int = 0) -> Result:
    """The fault scenario on ``n`` servos of ``proto``; prints its table, returns the figures. ``hogs``: CPU-bound
    processes from the end of the set-up to the end of the run."""
    silent_id, overload_id = n, max(1, n // 3)
    rand = ["--corrupt-rate", "0.01", "--drop-rate", "0.01", "--seed", str(seed)]
    dt_cal = calibrate(proto, n, rand)
    dur = cycles * dt_cal * 1.05
    t_ovl, t_sil, d_sil, t_sag, d_sag = 0.15 * dur, 0.4 * dur, 0.3 * dur, 0.78 * dur, 0.08 * dur
    truth_path = os.path.join(tempfile.mkdtemp(prefix=f"servo_ff_faults_{proto.name}_"), "truth.npz")
    vb_args = [
        *proto.vb_args,
        "--ids",
        f"1-{n}",
        "--return-delay",
        "0",
        *rand,
        "--silent",
        f"{silent_id}@{t_sil:.3f}+{d_sil:.3f}",
        "--overload",
        f"{overload_id}@{t_ovl:.3f}",
        "--sag",
        f"4@{t_sag:.3f}+{d_sag:.3f}",
        "--truth",
        truth_path,
    ]
    t_end = t_sag + d_sag + 0.5  # run at least this long (bus clock) so every fault phase is over
    cyc_t = np.zeros((3 * cycles, 2))
    records = []
    exceptions, refused, hostile_tries = 0, 0, 0
    reboot_t = None
    recovered_t = None
    skipped_t = back_t = None
    volts_min = np.inf
    with spawn_virtual_bus(vb_args) as vb, ExitStack() as load:
        t_start = time.monotonic()  # ≈ the bus's fault clock (it started just before printing its device)
        bus = open_bus(proto, vb.device, n)
        load.enter_context(cpu_hogs(hogs))  # after the set-up, whose single-servo writes a starved emulator fails
        kp = np.full(n, proto.kp)
        for k in range(3 * cycles):
            c0 = time.monotonic()
            if k >= cycles and c0 - t_start > t_end:
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
                except Exception as e:  # noqa: BLE001
                    exceptions += 1
                    print(f"cycle {k} (hostile goal): {type(e).__name__}: {e}", file=sys.stderr)
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
                            bus.reboot(i)  # Protocol 1.0 / STS: the equivalent (torque off, goal = present)
                            time.sleep(0.01)
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
    audit, garbled = split_audit(proto, truth, records)
    n_goals, bad_goals = proto.goals_written(truth)
    t_sil_abs = float(truth["t0"]) - t_start + t_sil  # the bus's fault clock → ours
    t, dt = cyc_t[:, 0], cyc_t[:, 1]
    done = dt > 0
    around_reboot = (t > t_ovl - 0.01 * dur) & (t < t_ovl + 0.03 * dur)
    # healthy reference: before and after the silence (load drift on a shared machine averages out)
    outside = (t < t_sil_abs - 0.02 * dur) | (t > t_sil_abs + d_sil + 0.02 * dur)
    healthy = done & (t > 0.03 * dur) & outside & ~around_reboot
    silent = done & (t >= t_sil_abs) & (t < t_sil_abs + d_sil)
    ratio = float(dt[silent].mean() / dt[healthy].mean()) if silent.any() and healthy.any() else float("nan")
    ratio_med = float(np.median(dt[silent]) / np.median(dt[healthy])) if silent.any() and healthy.any() else ratio
    stats = bus.stats
    tot = {
        k: sum(getattr(s, k) for s in stats.values())
        for k in ("ok", "timeouts", "corrupt", "late", "wrong_length", "status_errors", "skipped", "probes")
    }
    stale = audit.stale_valid - garbled
    what = "" if proto.name == "dxl2" else f" × {proto.label}"
    print(
        f"Fault scenario: {n} servos{what}, corrupt bytes 1 %, dropped replies 1 %, id {silent_id} silent "
        f"{t_sil_abs:.1f}–{t_sil_abs + d_sil:.1f} s, id {overload_id} overload at {t_ovl:.1f} s, sag 4 V "
        f"{t_sag:.1f}–{t_sag + d_sag:.1f} s; latency timer 1 ms (margin 3 ms); calibration "
        f"{dt_cal * 1e3:.2f} ms/cycle"
    )
    rows = [
        ("cycles", f"{int(done.sum())}"),
        ("exceptions", f"{exceptions}"),
        ("hostile goals refused (GoalRejected)", f"{refused} / {hostile_tries}"),
        ("state entries checked against the truth", f"{audit.checked}"),
        ("stale entries reported valid (another transaction's data)", f"{stale}"),
        (f"garbled replies that passed {'checksum' if proto.checksum8 else 'CRC'} + range check", f"{garbled}"),
        ("replies through the frame check refused by the range check", f"{bus.implausible}"),
        ("entries stamped before their reply was sent", f"{audit.before_sent}"),
        ("intact on-time replies reported invalid", f"{audit.intact_invalid}"),
        ("goals written (sync write entries)", f"{n_goals}"),
        ("out-of-limit or non-finite goals written", f"{bad_goals}"),
        (
            "replies: ok / timeouts / corrupt / late / wrong length",
            f"{tot['ok']} / {tot['timeouts']} / {tot['corrupt']} / {tot['late']} / {tot['wrong_length']}",
        ),
        (
            f"bus-level: {'checksum' if proto.checksum8 else 'CRC'} errors / length errors / unattributed",
            f"{bus.port.rx_stream.stats.crc_errors} / {bus.port.rx_stream.stats.length_errors} / "
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
        (f"id {overload_id}: overload → reboot at [s]", f"{reboot_t:.3f}" if reboot_t is not None else "never"),
        (
            f"id {overload_id}: tracking again (|error| < 0.1 rad) after reboot [s]",
            f"{recovered_t - reboot_t:.3f}" if recovered_t is not None and reboot_t is not None else "never",
        ),
        ("lowest supply voltage read [V]", f"{volts_min:.1f}"),
        (
            "earlier transactions pending at once (peak) / forgotten",
            f"{bus.port.ledger.peak} / {bus.port.ledger.overflow}",
        ),
        ("sync reads not written (port full)", f"{bus.port.counters.tx_failures}"),
        (
            "resyncs after a stall (marker not answered)",
            f"{getattr(bus.port, 'resyncs', '-')} ({getattr(bus.port, 'resync_failures', '-')})",
        ),
        ("load average at the end (1 min) / cores", f"{os.getloadavg()[0]:.2f} / {os.cpu_count()}"),
    ]
    w = max(len(r[0]) for r in rows)
    for what, v in rows:
        print(f"{what:<{w}}  {v:>24}")
    for ex in audit.examples:
        print(f"not its own intact reply: {ex}")
    return Result(stale, garbled, bad_goals, ratio, int(done.sum()), exceptions)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--protocol", choices=list(PROTOCOLS), default="dxl2")
    ap.add_argument("--cycles", type=int, default=20000)
    ap.add_argument("--servos", type=int, default=None, help="default: 16 (dxl2, dxl1), 6 (sts)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--hogs", type=int, default=0, help="CPU-bound processes run meanwhile (the emulator then lags: a backlog)"
    )
    args = ap.parse_args()
    proto = PROTOCOLS[args.protocol]
    res = run(proto, args.cycles, args.servos or proto.servos, args.seed, args.hogs)
    print(res.line())
    return 0


@contextmanager
def cpu_hogs(n: int):
    """``n`` processes that spin until the block ends: a saturated machine, on which the emulator falls behind the
    client and instructions queue (the backlog the ledger must keep count through)."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    if n:
        print(f"{n} CPU hogs running on {os.cpu_count()} cores")
    try:
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()


if __name__ == "__main__":
    sys.exit(main())
