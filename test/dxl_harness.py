"""Test helpers: a hand-made Dynamixel peer on a pty for deterministic faults (no mocks of the SDK), the wait
for a virtual bus to serve every state read a client sent (before the truth audit), and the cycles of a bus through
a stalled virtual bus (test_dynamixel_stall.py, test_feetech_stall.py), a virtual bus that loses one P-gain
SYNC_WRITE, and the vendor SDKs' ports opened on a virtual bus (:func:`sdk_port`)."""

import os
import select
import threading
import time
import tty

import numpy as np

from servo_ff.bus import truth as tr
from servo_ff.bus.bus_types import BusConfig
from servo_ff.bus.dynamixel import protocol as pr
from servo_ff.bus.dynamixel.stream import StreamDecoder
from servo_ff.ros.harness import wait_for

#: [s] pyserial read timeout of an SDK port: the SDKs open it with 0, so their receive loops spin a core for the
#: whole wait; on a shared 2-core box that starved the virtual bus they wait for (at load 5-7, 20-60 of 90
#: transactions timed out; with 2 ms, 0 of 90, replies in 3-8 ms). The SDKs' code and packet timeouts are unchanged.
SDK_READ_WAIT = 0.002


def sdk_port(device: str, sdk=None):
    """The stock ``dynamixel_sdk`` (or ``sdk``: ``scservo_sdk``) PortHandler on ``device`` at 1 Mbaud, its reads
    waiting in the kernel (:data:`SDK_READ_WAIT`)."""
    if sdk is None:
        import dynamixel_sdk as sdk
    port = sdk.PortHandler(device)
    assert port.openPort() and port.setBaudRate(1_000_000)
    port.ser.timeout = SDK_READ_WAIT
    return port


def wait_served(vb, bus, addr: int, timeout: float = 30.0) -> None:
    """Poll until the virtual bus ``vb`` has received every state read of ``addr`` the client ``bus`` sent (the
    audit skips reads the bus never served, and a loaded machine may leave some queued on the pty)."""
    wait_for(
        lambda: len(tr.reads_of(vb.truth.arrays(), addr)) >= bus.state_reads,
        timeout,
        "the virtual bus to serve every state read",
    )


def run_cycles(bus, n: int, t0: float) -> list:
    """``n`` cycles of ``bus`` toward a sine goal (0.8 rad, 8 rad/s since ``t0``): per cycle (state reads sent, ids,
    valid, (position, velocity) rows, stamps), the records :func:`servo_ff.bus.truth.audit_states` checks."""
    return [
        _record(bus, bus.cycle(np.full(len(bus.ids), 0.8 * np.sin(8.0 * (time.monotonic() - t0))))) for _ in range(n)
    ]


def _record(bus, s) -> tuple:
    """One cycle's state ``s`` of ``bus`` as :func:`servo_ff.bus.truth.audit_states` checks it: (state reads sent,
    ids, valid, (position, velocity) rows, stamps)."""
    return bus.state_reads, s.ids, s.valid, np.stack([s.position, s.velocity], axis=1), s.stamps


def audited_cycles(vb, bus, addr: int, values, goals_fn, need: int, batch: int = 200, batches: int = 10):
    """Cycles of ``bus`` toward ``goals_fn(k)`` in batches of ``batch`` until the truth audit of state reads of
    ``addr`` (decoded by ``values``) has checked more than ``need`` entries, at most ``batches`` batches (a loaded
    machine times many reads out, so a fixed count audits too few): (records, audit)."""
    recs: list = []
    for _ in range(batches):
        for _ in range(batch):
            recs.append(_record(bus, bus.cycle(goals_fn(len(recs)))))
        wait_served(vb, bus, addr)  # what is still queued, before the audit (and before the bus stops)
        audit = tr.audit_states(vb.truth.arrays(), recs, addr, values)
        if audit.checked > need:
            break
    return recs, audit


def stall_config(device: str, ids, model: str, protocol: str) -> BusConfig:
    """A bus whose late horizon (0.05 s) is far shorter than a stall, that never skips a servo."""
    return BusConfig(
        port=device,
        ids=ids,
        model=model,
        protocol=protocol,
        latency_timer_ms=1.0,
        timeout_ms=20.0,
        late_horizon_s=0.05,
        skip_after=1000,
        retries=5,
    )


def cycles_through_a_stall(vb, bus, addr: int) -> tuple[list, list]:
    """Cycles of ``bus`` (torque on: moving servos, every transaction's payload differs) before, during and after a
    stall of the virtual bus ``vb`` (its lock held: the instructions queue on the pty), until the bus has resynced
    and is back in step, then until ``vb`` has served every state read of ``addr``: (every record, the stall's)."""
    bus.torque(True)
    t0 = time.monotonic()
    recs = run_cycles(bus, 20, t0)
    # 40 cycles = 80 instructions, more than the 48 (id, length) pairs of the markers: one marker per instruction
    # would repeat one
    with vb._lock:
        stalled = run_cycles(bus, 40, t0)
    after = run_cycles(bus, 60, t0)
    t_end = time.monotonic() + 30.0
    while (bus.port.unsynced or sum(v.all() for _, _, v, _, _ in after[-30:]) < 10) and time.monotonic() < t_end:
        after += run_cycles(bus, 10, t0)  # a loaded machine: the backlog takes longer to be answered
    wait_served(vb, bus, addr)
    return recs + stalled + after, stalled


def cycles_with_a_ping_in_a_backlog(vb, bus, addr: int, ping_id: int, values, need: int, timeout: float = 60.0) -> list:
    """Cycles of ``bus`` through a backlog shorter than its late horizon: state reads queue while the virtual bus
    ``vb`` does not serve, a PING of ``ping_id`` times out and is settled though its reply is queued behind theirs,
    more state reads queue; a second PING of that servo is written and ``vb`` serves again, so the first PING's
    reply arrives while the second one waits. Then 60 cycles, and more until the truth audit (state reads of
    ``addr`` decoded by ``values``) has checked more than ``need`` entries or ``timeout`` [s] has passed (a loaded
    machine times reads out: a fixed count audits too few), and until ``vb`` has served every state read: the
    records. The bus's config: no retries, a late horizon longer than the backlog (the ledger itself must keep the
    count)."""
    bus.torque(True)
    t0 = time.monotonic()
    recs = run_cycles(bus, 20, t0)
    with vb._lock:
        recs += run_cycles(bus, 3, t0)
        assert bus.ping(ping_id) is None  # queued behind the reads: timed out
        recs += run_cycles(bus, 5, t0)
        sent = bus.port.instructions
        second = threading.Thread(target=bus.ping, args=(ping_id,))
        second.start()
        wait_for(lambda: bus.port.instructions > sent, 10.0, "the second PING written")
    second.join()
    recs += run_cycles(bus, 60, t0)
    wait_served(vb, bus, addr)
    t_end = time.monotonic() + timeout
    while tr.audit_states(vb.truth.arrays(), recs, addr, values).checked <= need and time.monotonic() < t_end:
        recs += run_cycles(bus, 20, t0)
        wait_served(vb, bus, addr)
    return recs


class FakeServos:
    """A pty whose 'servos' answer every sync read with ``replies`` (bytes; a list: one per sync read in turn, the
    last one repeated) — deterministic faults. The thread stops and is joined before the fds close (a thread
    blocked on a closed fd would read a reused one)."""

    def __init__(self, replies: bytes | list[bytes], decoder=StreamDecoder, instruction: int = pr.INST_SYNC_READ):
        """``decoder``/``instruction``: another protocol's stream decoder and the read it answers (Protocol 1.0:
        ``StreamDecoder1``, ``INST_BULK_READ``)."""
        self._decoder, self._instruction = decoder, instruction
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        self.device = os.ttyname(self.slave)
        self.replies = [replies] if isinstance(replies, bytes) else list(replies)
        self.served = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        dec = self._decoder()
        while not self._stop.is_set():
            if not select.select([self.master], [], [], 0.01)[0]:
                continue
            for p in dec.feed(os.read(self.master, 1024)):
                if getattr(p, "instruction", getattr(p, "code", None)) == self._instruction:
                    os.write(self.master, self.replies[min(self.served, len(self.replies) - 1)])
                    self.served += 1

    def __enter__(self) -> "FakeServos":
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(2.0)
        os.close(self.master)
        os.close(self.slave)


def losing_one_gain_write(vb_cls, gain_addr: int):
    """``vb_cls`` (a virtual bus class) whose instance, once ``lose_next = True``, ignores the next SYNC_WRITE to
    ``gain_addr``: a garbled instruction the servos drop (a broadcast has no status, so the sender never knows)."""
    from servo_ff.bus import protocol1 as p1

    class Losing(vb_cls):
        lose_next = False

        def handle(self, pkt, now=None):
            if self.lose_next and pkt.code == p1.INST_SYNC_WRITE and len(pkt.params) > 1 and pkt.params[0] == gain_addr:
                self.lose_next = False
                return None
            return super().handle(pkt, now)

    return Losing


def late_read_then_next(vb, bus, late_item: str, next_item: str, rounds: int = 8) -> list[tuple]:
    """Per round: every reply of ``vb`` held back 20 ms (more than the bus's margin, which should be 4 ms: a busy
    servo, the emulator on a loaded machine) while servo 1's ``late_item`` is read (its value, or None: BusError),
    then replies on time while ``next_item`` is read until an answer (a BusError while the held replies drain):
    [(late_item's value or None, next_item's)]. A late reply that answers a later read shows as a wrong value."""
    from servo_ff.bus.bus_types import BusError
    from servo_ff.bus.faults import Faults, ReplyFaults

    def answered():
        try:
            return (bus.read_item(1, next_item),)
        except BusError:
            return None

    out = []
    for k in range(rounds):
        vb.reply_faults = ReplyFaults(Faults(late_rate=1.0, late_s=0.02, seed=3 + k), vb.rng)
        try:
            first = bus.read_item(1, late_item)
        except BusError:
            first = None
        vb.reply_faults = ReplyFaults(Faults(), vb.rng)
        out.append((first, wait_for(answered, timeout=10.0, what=f"a read of {next_item}")[0]))
    return out
