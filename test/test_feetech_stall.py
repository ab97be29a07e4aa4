"""A stalled responder: instructions queue while the emulator does not serve, for longer than the late horizon;
when it serves again, the queued instructions are answered first. None of those replies may be reported as a
later transaction's fresh state (checked against the virtual bus's truth record)."""

import time
from dataclasses import replace

import numpy as np
from dxl_harness import cycles_through_a_stall, cycles_with_a_ping_in_a_backlog, run_cycles, stall_config, wait_served

from servo_ff.bus import control_table as ct
from servo_ff.bus import truth as tr
from servo_ff.bus.feetech.bus import STATE_ADDR, FeetechBus
from servo_ff.bus.feetech.virtual_bus import StsVirtualBus
from servo_ff.bus.virtual_bus import ServoLoad

STS = ct.control_table("sts3215")
IDS = [1, 2, 3]


def state_values(payload: bytes) -> np.ndarray:
    raw = np.frombuffer(payload[:4], dtype="<u2")
    pos = int(STS.decode("Present Position", int(raw[0])))
    vel = int(STS.decode("Present Velocity", int(raw[1])))
    return np.array([(pos - STS.center) * STS.rad_per_count, vel * STS.velocity_unit])


def test_replies_queued_behind_a_stall_longer_than_the_late_horizon_are_never_fresh_state():
    vb = StsVirtualBus(ids=IDS, return_delay=0, dt_max=0.002, loads=ServoLoad.fixed_inertia(0.002), truth=True)
    with vb, FeetechBus(stall_config(vb.device, IDS, "sts3215", "sts")) as bus:
        recs, stalled = cycles_through_a_stall(vb, bus, STATE_ADDR)
    assert not any(v.any() for _, _, v, _, _ in stalled)  # nothing answered while stalled
    audit = tr.audit_states(vb.truth.arrays(), recs, STATE_ADDR, state_values)
    assert audit.stale_valid == 0, audit.examples
    assert audit.before_sent == 0
    assert not bus.port.unsynced and bus.port.resyncs >= 1  # the stall was seen, and the bus resynced
    assert sum(v.all() for _, _, v, _, _ in recs[-30:]) >= 10  # back in step after the backlog


def test_a_ping_reply_queued_behind_a_backlog_does_not_close_it():
    """A PING forgotten after its settle time while earlier state reads still owed replies: its reply, queued behind
    theirs, reached the next PING of that servo, which took it and closed the reads still pending; their replies then
    went to later reads as fresh state (the bench's fault scenario under CPU load: 1264 stale entries, 41–62 reads
    old) or, when they came first, to nobody (``stray``)."""
    vb = StsVirtualBus(ids=IDS, return_delay=0, dt_max=0.002, loads=ServoLoad.fixed_inertia(0.002), truth=True)
    with vb, FeetechBus(replace(stall_config(vb.device, IDS, "sts3215", "sts"), late_horizon_s=0.4, retries=0)) as bus:
        recs = cycles_with_a_ping_in_a_backlog(vb, bus, STATE_ADDR, 2, state_values, need=200)
    audit = tr.audit_states(vb.truth.arrays(), recs, STATE_ADDR, state_values)
    assert audit.stale_valid == 0, audit.examples
    # every reply queued behind the stall owned by its own read (a read closed too early left its replies to a later
    # read, stale, or, when they came first, to nobody: stray); one stray may be the second PING's own reply, come
    # after its settle time with nothing queued before it (a loaded machine)
    assert bus.port.counters.stray <= 1 and audit.checked > 200
    assert sum(v.all() for _, _, v, _, _ in recs[-30:]) >= 10  # back in step after the backlog


def test_reads_beyond_the_ledgers_length_are_forgotten_as_after_a_stall():
    """More reads queued than the ledger keeps (``maxlen``, 3 here): the oldest are forgotten while their replies
    are still queued, as when they expire, so the bus resyncs instead of taking them for the reads it kept."""
    vb = StsVirtualBus(ids=IDS, return_delay=0, dt_max=0.002, loads=ServoLoad.fixed_inertia(0.002), truth=True)
    # the stall (8 reads, 20 ms each) within the late horizon: nothing expires
    with vb, FeetechBus(replace(stall_config(vb.device, IDS, "sts3215", "sts"), late_horizon_s=0.3)) as bus:
        bus.port.ledger.maxlen = 3
        bus.torque(True)
        t0 = time.monotonic()
        recs = run_cycles(bus, 20, t0)
        with vb._lock:
            recs += run_cycles(bus, 8, t0)
        recs += run_cycles(bus, 60, t0)
        wait_served(vb, bus, STATE_ADDR)
    audit = tr.audit_states(vb.truth.arrays(), recs, STATE_ADDR, state_values)
    assert audit.stale_valid == 0, audit.examples
    assert bus.port.ledger.overflow >= 1 and bus.port.resyncs >= 1
    assert sum(v.all() for _, _, v, _, _ in recs[-30:]) >= 10  # back in step after the backlog


def test_a_late_health_reply_never_passes_for_the_resync_marker():
    """The marker (READ of n bytes from address 0) of resync 57 was (id 1, 26 bytes), the length of the health read's
    reply: a health read queued behind a stall answered it, the port took itself for in step with the state reads
    queued after it still to come, and reported them as later reads' fresh state. The marker's lengths now leave out
    every length the bus's own transactions use."""
    from servo_ff.bus.feetech.bus import HEALTH_LEN

    vb = StsVirtualBus(ids=IDS, return_delay=0, dt_max=0.002, loads=ServoLoad.fixed_inertia(0.002), truth=True)
    with vb, FeetechBus(stall_config(vb.device, IDS, "sts3215", "sts")) as bus:
        bus.torque(True)
        t0 = time.monotonic()
        bus.read_health()
        recs = run_cycles(bus, 20, t0)
        with vb._lock:  # stalled: a health read, then state reads, queue; the ledger forgets them (late horizon)
            bus.read_health()
            recs += run_cycles(bus, 10, t0)
            bus.port.resyncs = 3 * list(range(7, 88)).index(HEALTH_LEN)  # the next marker: resync 57's
        recs += run_cycles(bus, 60, t0)
        wait_served(vb, bus, STATE_ADDR)
    audit = tr.audit_states(vb.truth.arrays(), recs, STATE_ADDR, state_values)
    assert audit.stale_valid == 0, audit.examples
    assert bus.port.resyncs > 57 and not bus.port.unsynced
    assert sum(v.all() for _, _, v, _, _ in recs[-30:]) >= 10  # back in step after the backlog
    assert HEALTH_LEN not in bus.port.marker_choices()


def test_unanswered_markers_never_repeat_a_pair_while_servos_are_skipped():
    """Resync markers sent one after another, none answered (an outage), while servos are skipped and come back
    (their misses during the outage): a marker's reply may still come, and would pass for a later marker of the
    same (id, length): the port would take itself for in step with replies still queued. Before, the pair was the
    k-th of (ids not skipped) × lengths, and the id list changing made pairs repeat (here within 40 markers)."""
    import random

    from servo_ff.bus.feetech.port import StsPortHandler
    from servo_ff.bus.transactions import CommStats

    class Unanswered(StsPortHandler):
        def __init__(self):
            super().__init__("none", timeout_ms=4.0)
            self._fd, self.sent = 3, []

        def writePort(self, packet):
            self.sent.append((packet[2], packet[6]))  # READ: FF FF id LEN INST address n
            return len(packet)

        def _await_marker(self, marker):
            return False

    port = Unanswered()
    port.stats = {i: CommStats() for i in range(1, 9)}
    port.reserve_lengths(6, 26)
    rng = random.Random(5)
    for _ in range(40):
        for st in port.stats.values():
            st.skipping = rng.random() < 0.15
        assert not port._resync()
    assert len(set(port.sent)) == len(port.sent), [p for p in port.sent if port.sent.count(p) > 1]
