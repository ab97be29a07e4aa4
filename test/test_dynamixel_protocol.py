"""Protocol 2.0 codec: the e-manual's example packets, the SDK's own framing, property tests."""

import random

import pytest
from dynamixel_sdk.protocol2_packet_handler import Protocol2PacketHandler
from hypothesis import given, settings
from hypothesis import strategies as st

from servo_ff.bus.dynamixel import protocol as pr
from servo_ff.bus.dynamixel.stream import StreamDecoder


def h(text: str) -> bytes:
    return bytes.fromhex(text)


# ROBOTIS e-manual, docs/en/dxl/protocol2.md (ROBOTIS-GIT/emanual), "Instruction Details" examples (XM430-W210).
MANUAL_INSTRUCTIONS = [
    ("ping id 1", 1, pr.INST_PING, "", "FF FF FD 00 01 03 00 01 19 4E"),
    ("broadcast ping", 0xFE, pr.INST_PING, "", "FF FF FD 00 FE 03 00 01 31 42"),
    ("read present position", 1, pr.INST_READ, "84 00 04 00", "FF FF FD 00 01 07 00 02 84 00 04 00 1D 15"),
    ("write goal 512", 1, pr.INST_WRITE, "74 00 00 02 00 00", "FF FF FD 00 01 09 00 03 74 00 00 02 00 00 CA 89"),
    ("reg write", 1, pr.INST_REG_WRITE, "68 00 C8 00 00 00", "FF FF FD 00 01 09 00 04 68 00 C8 00 00 00 AE 8E"),
    ("action", 1, pr.INST_ACTION, "", "FF FF FD 00 01 03 00 05 02 CE"),
    ("factory reset", 1, pr.INST_FACTORY_RESET, "01", "FF FF FD 00 01 04 00 06 01 A1 E6"),
    ("reboot id 1", 1, pr.INST_REBOOT, "", "FF FF FD 00 01 03 00 08 2F 4E"),
    ("sync read", 0xFE, pr.INST_SYNC_READ, "84 00 04 00 01 02", "FF FF FD 00 FE 09 00 82 84 00 04 00 01 02 CE FA"),
    (
        "sync write",
        0xFE,
        pr.INST_SYNC_WRITE,
        "74 00 04 00 01 96 00 00 00 02 AA 00 00 00",
        "FF FF FD 00 FE 11 00 83 74 00 04 00 01 96 00 00 00 02 AA 00 00 00 82 87",
    ),
    (
        "bulk read",
        0xFE,
        pr.INST_BULK_READ,
        "01 90 00 02 00 02 92 00 01 00",
        "FF FF FD 00 FE 0D 00 92 01 90 00 02 00 02 92 00 01 00 1A 05",
    ),
]
MANUAL_STATUS = [
    ("ping reply id 1", 1, 0, "06 04 26", "FF FF FD 00 01 07 00 55 00 06 04 26 65 5D"),
    ("ping reply id 2", 2, 0, "06 04 26", "FF FF FD 00 02 07 00 55 00 06 04 26 6F 6D"),
    ("read reply", 1, 0, "A6 00 00 00", "FF FF FD 00 01 08 00 55 00 A6 00 00 00 8C C0"),
    ("sync read reply id 2", 2, 0, "1F 08 00 00", "FF FF FD 00 02 08 00 55 00 1F 08 00 00 BA BE"),
    ("write reply", 1, 0, "", "FF FF FD 00 01 04 00 55 00 A1 0C"),
    ("bulk read reply id 1", 1, 0, "77 00", "FF FF FD 00 01 06 00 55 00 77 00 C3 69"),
    ("bulk read reply id 2", 2, 0, "24", "FF FF FD 00 02 05 00 55 00 24 8B A9"),
]


@pytest.mark.parametrize("what,dxl_id,inst,params,wire", MANUAL_INSTRUCTIONS, ids=[m[0] for m in MANUAL_INSTRUCTIONS])
def test_manual_instruction_packets(what, dxl_id, inst, params, wire):
    assert pr.encode_instruction(dxl_id, inst, h(params)) == h(wire)
    p = pr.decode(h(wire))
    assert (p.id, p.instruction, p.params, p.error) == (dxl_id, inst, h(params), None)


@pytest.mark.parametrize("what,dxl_id,err,params,wire", MANUAL_STATUS, ids=[m[0] for m in MANUAL_STATUS])
def test_manual_status_packets(what, dxl_id, err, params, wire):
    assert pr.encode_status(dxl_id, err, h(params)) == h(wire)
    p = pr.decode(h(wire))
    assert p.is_status and (p.id, p.error, p.params) == (dxl_id, err, h(params))


def test_crc_check_value_and_sdk_agree():
    assert pr.crc16(b"123456789") == 0xFEE8  # CRC-16/BUYPASS check value
    rng = random.Random(1)
    sdk = Protocol2PacketHandler()
    for n in (1, 7, 64, 300):
        data = bytes(rng.randrange(256) for _ in range(n))
        assert pr.crc16(data) == sdk.updateCRC(0, list(data), n)


def test_stuffing_inserts_fd_and_length_counts_it():
    params = h("FF FF FD 01 FF FF FD")
    wire = pr.encode_instruction(3, pr.INST_WRITE, params)
    body = wire[7:-2]
    assert body == bytes([pr.INST_WRITE]) + h("FF FF FD FD 01 FF FF FD FD")
    assert pr.packet_length(wire) == len(wire)
    assert pr.decode(wire).params == params


def sdk_frame(dxl_id: int, inst: int, params: bytes) -> bytes:
    """The SDK's own framing (``addStuffing`` + ``updateCRC``), without a port. NB: ``txPacket`` drops
    ``addStuffing``'s return value, so the SDK (4.1) sends unstuffed packets when stuffing grows them."""
    sdk = Protocol2PacketHandler()
    pkt = [0] * (10 + len(params))
    pkt[4], pkt[5], pkt[6], pkt[7] = dxl_id, (len(params) + 3) & 0xFF, (len(params) + 3) >> 8, inst
    pkt[8 : 8 + len(params)] = list(params)
    pkt = sdk.addStuffing(pkt)
    total = (pkt[5] | pkt[6] << 8) + 7
    pkt[0:4] = [0xFF, 0xFF, 0xFD, 0x00]
    crc = sdk.updateCRC(0, pkt, total - 2)
    pkt[total - 2], pkt[total - 1] = crc & 0xFF, crc >> 8
    return bytes(pkt[:total])


stuffy = st.lists(
    st.one_of(st.binary(max_size=8), st.just(b"\xff\xff\xfd"), st.just(b"\xff\xff\xfd\xfd")), max_size=20
).map(b"".join)


@settings(max_examples=200, deadline=None)
@given(dxl_id=st.integers(0, 253), inst=st.sampled_from([1, 2, 3, 4, 5, 6, 8, 0x82, 0x83, 0x92, 0x93]), params=stuffy)
def test_encode_matches_sdk_and_round_trips(dxl_id, inst, params):
    wire = pr.encode_instruction(dxl_id, inst, params)
    assert wire == sdk_frame(dxl_id, inst, params)
    assert pr.decode(wire) == pr.Packet(dxl_id, inst, params, None)


@settings(max_examples=200, deadline=None)
@given(
    dxl_id=st.integers(0, 253), err=st.integers(0, 255), params=stuffy, cuts=st.lists(st.integers(0, 400), max_size=5)
)
def test_status_round_trip_through_stream_in_pieces(dxl_id, err, params, cuts):
    wire = pr.encode_status(dxl_id, err, params)
    dec = StreamDecoder()
    out = []
    prev = 0
    for c in sorted(min(c, len(wire)) for c in cuts) + [len(wire)]:
        out += dec.feed(wire[prev:c])
        prev = c
    assert out == [pr.Packet(dxl_id, pr.INST_STATUS, params, err)]
    assert dec.pending == 0


@settings(max_examples=300, deadline=None)
@given(junk=st.binary(max_size=600))
def test_random_bytes_never_crash_the_decoder(junk):
    dec = StreamDecoder()
    for pkt in dec.feed(junk):
        assert isinstance(pkt, pr.Packet)
    dec.drop_partial()
    # a valid packet after the junk is found at once: a fake header cannot hold it back
    good = pr.encode_instruction(7, pr.INST_PING)
    assert pr.Packet(7, pr.INST_PING, b"", None) in dec.feed(good)


@settings(max_examples=100, deadline=None)
@given(junk=st.binary(max_size=200))
def test_decode_raises_protocol_error_not_crash(junk):
    try:
        pr.decode(junk)
    except pr.ProtocolError:
        pass


def test_corrupt_packet_counted_and_dropped_next_one_kept():
    a = bytearray(pr.encode_status(1, 0, h("A6 00 00 00")))
    a[10] ^= 0x40  # flip one data bit
    b = pr.encode_status(2, 0, h("1F 08 00 00"))
    dec = StreamDecoder()
    got = dec.feed(bytes(a) + b)
    assert [p.id for p in got] == [2]
    assert dec.stats.crc_errors == 1


def test_decode_errors_name_the_problem():
    with pytest.raises(pr.ProtocolError, match="too short"):
        pr.decode(b"\xff\xff\xfd")
    with pytest.raises(pr.ProtocolError, match="header"):
        pr.decode(h("FF FF FE 00 01 03 00 01 19 4E"))
    with pytest.raises(pr.ProtocolError, match="length"):
        pr.decode(h("FF FF FD 00 01 04 00 01 19 4E"))
    with pytest.raises(pr.ProtocolError, match="CRC"):
        pr.decode(h("FF FF FD 00 01 03 00 01 19 4F"))
    with pytest.raises(pr.ProtocolError, match="0x55"):
        pr.encode_instruction(1, pr.INST_STATUS)


@settings(max_examples=150, deadline=None)
@given(
    chunks=st.lists(
        st.one_of(
            st.binary(max_size=40),
            st.builds(lambda i, p: pr.encode_status(i, 0, p), st.integers(0, 253), stuffy),
            st.builds(lambda i, p: pr.encode_instruction(i, 3, p), st.integers(0, 253), stuffy),
        ),
        max_size=12,
    ),
    flip=st.integers(0, 10_000),
)
def test_compiled_scanner_equals_python_reference(chunks, flip):
    data = bytearray(b"".join(chunks))
    if data and flip % 3 == 0:
        data[flip % len(data)] ^= 0x5A  # corrupt one byte somewhere
    fast, ref = StreamDecoder(), StreamDecoder()
    half = len(data) // 2
    got = fast.feed(bytes(data[:half])) + fast.feed(bytes(data[half:]))
    want = ref.feed_py(bytes(data[:half])) + ref.feed_py(bytes(data[half:]))
    assert got == want
    assert fast.stats == ref.stats and fast.pending == ref.pending


fake_headers = st.lists(
    st.one_of(
        st.binary(max_size=12),
        st.builds(
            lambda i, n: b"\xff\xff\xfd\x00" + bytes([i]) + n.to_bytes(2, "little"),
            st.integers(0, 255),
            st.integers(0, 0xFFFF),
        ),
    ),
    max_size=8,
).map(b"".join)


@settings(max_examples=300, deadline=None)
@given(
    junk=fake_headers,
    replies=st.lists(st.tuples(st.integers(0, 252), stuffy), min_size=1, max_size=4),
    compiled=st.booleans(),
    limit=st.sampled_from([pr.MAX_LENGTH, 40]),
)
def test_no_header_holds_back_a_later_valid_packet(junk, replies, compiled, limit):
    """Junk with fake headers (any LEN, incomplete packets) before valid replies: every reply is returned by the
    feed that completes it, whatever LEN the junk claims (``limit``: a transaction's bound on LEN)."""
    wire = [pr.encode_status(i, 0, p[:20]) for i, p in replies]
    dec = StreamDecoder(max_length=limit)
    got = dec.feed(junk + b"".join(wire), compiled=compiled)
    want = [pr.Packet(i, pr.INST_STATUS, p[:20], 0) for i, p in replies]
    assert [g for g in got if g in want] == want


def test_impossible_len_is_dropped_at_once_and_counted():
    a, b = pr.encode_status(1, 0, bytes(10)), pr.encode_status(2, 0, bytes(10))
    fake = bytearray(a)
    fake[5:7] = (900).to_bytes(2, "little")  # LEN corrupted: claims 907 bytes
    for limit in (pr.MAX_LENGTH, 18):  # 18: the longest reply a 10-byte sync read can get
        dec = StreamDecoder(max_length=limit)
        assert [p.id for p in dec.feed(bytes(fake) + a + b)] == [1, 2]
        assert dec.stats.length_errors == 1 and dec.pending == 0
    bad = StreamDecoder(max_length=18).scan(bytes(fake) + a)
    assert bad.bad_starts == [0] and bad.bad_kinds == [2] and bad.whole[bad.bad_starts[0] + 4] == 1
