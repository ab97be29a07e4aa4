"""Which transaction a reply belongs to: timing, windows, the ledger of earlier transactions (pure logic)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from servo_ff.bus import transactions as tx


def test_timing_comes_from_the_baud_rate_and_the_return_delay():
    t = tx.Timing(baud=1_000_000, return_delay_s=0.0, margin_s=0.003)
    assert t.slot_s(10) == pytest.approx(21 * 10 / 1e6)  # a 21-byte status packet at 1 Mbps: 210 µs
    slow = tx.Timing(baud=57_600, return_delay_s=500e-6, margin_s=0.003)
    assert slow.slot_s(10) == pytest.approx(500e-6 + 21 * 10 / 57_600)
    # 16 replies of 10 bytes after a 30-byte sync read instruction: wire + return delays + one margin
    assert t.first_deadline(100.0, 16, 10, 30) == pytest.approx(100.0 + 30e-5 + 16 * 21e-5 + 0.003)
    assert slow.expected_s(16, 10, 30) > 15 * t.expected_s(16, 10, 30)  # 57.6 kbit/s and 500 µs delays
    with pytest.raises(ValueError, match="timing.baud"):
        tx.Timing(baud=0)
    assert tx.max_reply_len(10) == 14 + 4  # 12 body bytes: at most 4 stuffing bytes


def test_window_deadline_moves_with_each_reply_so_a_silent_servo_costs_its_own_slot():
    t = tx.Timing(1_000_000, 0.0, 0.002)
    w = tx.Window(range(1, 5), 10, t, 0.0, 18)
    assert w.deadline == pytest.approx(t.first_deadline(0.0, 4, 10, 18))
    w.packet(1, 0, bytes(10), 1.0)
    assert w.deadline == pytest.approx(1.0 + 3 * t.slot_s(10) + 0.002) and not w.done
    w.packet(3, 0, bytes(10), 1.001)  # id 2 silent: id 3 answered after it, so 2 will not come
    w.packet(4, 0, bytes(10), 1.002)
    assert w.done  # the last position answered: nothing to wait for
    assert w.finish() == {1: "ok", 2: "timeouts", 3: "ok", 4: "ok"}


def test_one_garbled_frame_is_charged_to_its_own_slot_only():
    w = tx.Window(range(1, 7), 10, tx.Timing(1e6), 0.0, 20)
    w.packet(1, 0, bytes(10), 0.1)
    w.bad(2, 0.1)  # intact ID byte: id 2's reply was garbled
    w.packet(3, 0, bytes(10), 0.1)
    w.bad(0x77, 0.1)  # ID byte garbled too, between 3 and 5: the only empty slot is 4
    w.packet(5, 0, bytes(10), 0.1)
    out = w.finish()
    assert out == {1: "ok", 2: "corrupt", 3: "ok", 4: "corrupt", 5: "ok", 6: "timeouts"}
    w = tx.Window(range(1, 5), 10, tx.Timing(1e6), 0.0, 20)
    w.packet(1, 0, bytes(10), 0.1)
    w.bad(0x77, 0.1)  # after id 1, three slots empty: the CRC error is counted, not charged to all of them
    assert w.finish() == {1: "ok", 2: "timeouts", 3: "timeouts", 4: "timeouts"} and w.unattributed == 1


def test_newest_valid_reply_wins_and_a_wrong_length_does_not_spoil_a_valid_one():
    w = tx.Window([1, 2], 4, tx.Timing(1e6), 0.0, 16)
    w.packet(1, 0, b"\x01\x00\x00\x00", 0.1)
    w.packet(1, 0, b"\x02\x00\x00\x00", 0.2)
    w.packet(2, 0, b"\x03\x00\x00\x00", 0.3)
    w.packet(2, 0, b"\x09", 0.4)
    assert w.data == {1: b"\x02\x00\x00\x00", 2: b"\x03\x00\x00\x00"} and w.stamp == {1: 0.2, 2: 0.3}
    assert w.finish() == {1: "ok", 2: "ok"}


def test_late_reply_of_the_previous_cycle_is_never_this_cycles_data():
    led, cnt, t = tx.Ledger(), tx.RxCounters(), tx.Timing(1e6)
    old = tx.Window([1, 2, 3], 10, t, 0.0, 17)
    old.packet(1, 0, b"old1".ljust(10, b"\0"), 0.1)  # 2 and 3 time out: their replies may still come
    old.finish()
    led.add(old, 0.2)
    new = tx.Window([1, 2, 3], 10, t, 1.0, 17)
    for i, tag in [(2, b"old2"), (3, b"old3"), (1, b"new1"), (2, b"new2")]:  # the stream, in order
        tx.route_packet(led, new, cnt, None, i, 0x55, 0, tag.ljust(10, b"\0"), 1.1)
    assert cnt.late == 2 and not led
    assert {i: d[:4] for i, d in new.data.items()} == {1: b"new1", 2: b"new2"}
    # the ambiguous case: new replies 1 and 2 lost, "3" could be the old one: discarded, not guessed
    led.add(new, 1.2)  # new ended without id 3
    newer = tx.Window([1, 2, 3], 10, t, 2.0, 17)
    tx.route_packet(led, newer, cnt, None, 3, 0x55, 0, bytes(10), 2.1)
    assert newer.data == {} and cnt.late == 3


# --------------------------------------------------------------------------------------------- property
@st.composite
def scenario(draw):
    """Transactions (sync reads of 10 bytes, health reads of 4, pings of 3) with each reply delivered in its
    window, later (late) or never; windows see the stream in order, cut anywhere their own replies allow."""
    n_tx = draw(st.integers(1, 8))
    txs = []
    for _ in range(n_tx):
        kind = draw(st.sampled_from([10, 10, 4, 3]))
        ids = (
            (draw(st.integers(1, 6)),)
            if kind == 3
            else tuple(draw(st.permutations(range(1, 6)))[: draw(st.integers(1, 5))])
        )
        keep = [i for i in ids if draw(st.integers(0, 9)) > 1]  # ~20 % dropped or garbled beyond recognition
        txs.append((ids, kind, keep))
    cuts = [draw(st.integers(0, len(keep))) for _, _, keep in txs]  # replies of tx k delivered in its window
    return txs, cuts


@settings(max_examples=300, deadline=None)
@given(scenario())
def test_no_reply_is_ever_taken_by_another_transaction(sc):
    txs, cuts = sc
    led, cnt, timing = tx.Ledger(), tx.RxCounters(), tx.Timing(1e6)
    backlog = []  # (tx index, id, kind) not yet delivered, in wire order
    for k, ((ids, kind, keep), cut) in enumerate(zip(txs, cuts)):
        # everything still in flight from earlier transactions arrives first (some before, some after the TX)
        pre = len(backlog) // 2
        for owner, i, n in backlog[:pre]:  # drained before the instruction: window None
            tx.route_packet(led, None, cnt, None, i, 0x55, 0, bytes([owner]) * n, 0.0)
        w = tx.Window(ids, kind, timing, float(k), 20)
        for owner, i, n in backlog[pre:] + [(k, i, kind) for i in keep[:cut]]:
            tx.route_packet(led, w, cnt, None, i, 0x55, 0, bytes([owner]) * n, float(k))
        backlog = [(k, i, kind) for i in keep[cut:]]
        w.finish()
        led.add(w, float(k))
        for i, data in w.data.items():
            assert data == bytes([k]) * kind, f"tx {k} took tx {data[0]}'s reply from id {i}"
        # what the window got in time is taken, unless an older reply could still be in flight for the same slot
        assert set(w.data) <= set(keep[:cut])


def test_a_long_outage_keeps_every_earlier_transaction_and_garbled_frames_consume_nothing():
    led, cnt, t = tx.Ledger(), tx.RxCounters(), tx.Timing(1e6)
    for k in range(100):  # 100 sync reads nobody answered (the device stalled)
        w = tx.Window([1, 2], 10, t, float(k), 16)
        w.finish()
        led.add(w, float(k))
    assert len(led) == 100 and led.overflow == 0
    led.expire(99.0 + led.horizon_s)  # ended more than the horizon ago: taken as never coming
    assert len(led) == 1 and led.expired == 99
    led = tx.Ledger(horizon_s=1000.0)
    for k in range(100):
        w = tx.Window([1, 2], 10, t, float(k), 16)
        w.finish()
        led.add(w, float(k))
    now = tx.Window([1, 2], 10, t, 100.0, 16)
    tx.route_bad(led, now, cnt, 2, 100.1)  # garbled, ID byte may be wrong: counted, nothing consumed
    assert cnt.late_garbled == 1 and led._q[0].last == -1
    for k in range(100):  # then the device catches up: every reply is late, none is this cycle's
        for i in (1, 2):
            tx.route_packet(led, now, cnt, None, i, 0x55, 0, bytes([k]) * 10, 100.1)
    assert cnt.late == 200 and now.data == {} and not led
    tx.route_packet(led, now, cnt, None, 1, 0x55, 0, b"new".ljust(10, b"\0"), 100.2)
    assert now.data[1][:3] == b"new"


@pytest.mark.parametrize(
    "orphan",
    [(0, bytes(9)), (0x20, b"")],  # a resync marker's 9 bytes; a PING's, with Protocol 1.0's overload alarm bit
    ids=["another-length", "alarm-status"],
)
def test_a_reply_of_another_length_neither_closes_earlier_transactions_nor_moves_this_one_on(orphan):
    """A reply of a length no pending transaction expects (a resync marker's that came after its wait, a single-servo
    one's forgotten after its settle time) from a servo of this read: not proof that this read's replies have begun,
    whatever its error bits (Protocol 1.0's alarm bits come with every reply while they last). Taken as such it closed
    the reads still pending, whose replies then became this read's data."""
    err, params = orphan
    led, cnt, t = tx.Ledger(), tx.RxCounters(), tx.Timing(1e6)
    old = tx.Window([1, 2, 3], 10, t, 0.0, 17)
    old.finish()  # no reply yet: all three still owed
    led.add(old, 0.1)
    new = tx.Window([1, 2, 3], 10, t, 1.0, 17)
    deadline = new.deadline
    tx.route_packet(led, new, cnt, None, 3, 0x55, err, params, 1.1)  # the orphan, then the old read's, this read's
    assert led and new.last == -1 and new.deadline == deadline and not new.done
    for i, tag in [(i, f"{when}{i}".encode()) for when in ("old", "new") for i in (1, 2, 3)]:
        tx.route_packet(led, new, cnt, None, i, 0x55, 0, tag.ljust(10, b"\0"), 1.1)
    assert cnt.late == 3 and not led
    assert {i: d[:4] for i, d in new.data.items()} == {1: b"new1", 2: b"new2", 3: b"new3"}
    assert new.finish() == {1: "ok", 2: "ok", 3: "ok"}


def test_a_garbled_frame_does_not_move_the_read_on_by_its_id_byte():
    """A garbled frame's ID byte may be garbled too: read as the last servo's, it ended the read at once (position
    3 of 3 seen), and the read's own replies still to come were then nobody's in the ledger: the next read took
    them as its fresh data. It is charged to that servo (diagnostics) and moves the read on by one slot only (it
    sits in the next one at least)."""
    led, cnt, t = tx.Ledger(), tx.RxCounters(), tx.Timing(1e6)
    read = tx.Window([1, 2, 3, 4], 10, t, 0.0, 18)
    tx.route_packet(led, read, cnt, None, 1, 0x55, 0, b"old1".ljust(10, b"\0"), 0.1)
    tx.route_bad(led, read, cnt, 4, 0.1)  # id 2's reply with its ID byte garbled to 4
    assert read.last == 1 and not read.done  # ids 3 and 4 may still come
    read.finish()  # the read ends here (its deadline) without them: they stay owed
    led.add(read, 0.2)
    nxt = tx.Window([1, 2, 3, 4], 10, t, 1.0, 18)
    for i, tag in [(3, b"old3"), (4, b"old4"), (1, b"new1"), (2, b"new2"), (3, b"new3"), (4, b"new4")]:
        tx.route_packet(led, nxt, cnt, None, i, 0x55, 0, tag.ljust(10, b"\0"), 1.1)
    assert {i: d[:4] for i, d in nxt.data.items()} == {1: b"new1", 2: b"new2", 3: b"new3", 4: b"new4"}
    assert cnt.late == 2


def test_a_garbled_frame_of_an_earlier_read_does_not_move_this_one_on():
    """The stale read of the Protocol 1.0 fault run under load (205 entries): an earlier read's reply, garbled with
    its ID byte reading a servo whose reply that read already had, cannot be its (the ledger cannot own it), and was
    charged to the read in progress and moved it on to that slot: its own reply there, still to come, was then
    owed by nobody, and the next read took it, and every reply after it, as fresh. While earlier reads still owe
    replies it moves nothing."""
    led, cnt, t = tx.Ledger(), tx.RxCounters(), tx.Timing(1e6)
    old = tx.Window([1, 2, 3], 10, t, 0.0, 17)
    old.finish()  # nothing in time: all three owed
    led.add(old, 0.1)
    read = tx.Window([1, 2, 3], 10, t, 0.2, 17)
    tx.route_packet(led, read, cnt, None, 1, 0x55, 0, b"old1".ljust(10, b"\0"), 0.3)  # old's, late
    tx.route_bad(led, read, cnt, 1, 0.3)  # old's id 2, its ID byte garbled to 1: old cannot own it
    tx.route_packet(led, read, cnt, None, 3, 0x55, 0, b"old3".ljust(10, b"\0"), 0.3)
    assert not led and read.last == -1 and read.data == {}  # nothing of read's own yet
    read.finish()  # read ends here: all of its replies still to come
    led.add(read, 0.4)
    nxt = tx.Window([1, 2, 3], 10, t, 0.5, 17)
    for i, tag in [(1, b"rd-1"), (2, b"rd-2"), (3, b"rd-3"), (1, b"nxt1")]:
        tx.route_packet(led, nxt, cnt, None, i, 0x55, 0, tag.ljust(10, b"\0"), 0.6)
    assert {i: d[:4] for i, d in nxt.data.items()} == {1: b"nxt1"}  # read's replies late, never nxt's
    assert cnt.late == 5
