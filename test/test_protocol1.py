"""Protocol 1.0 framing (Dynamixel 1.0 and Feetech SCS/STS): the e-manual's worked examples, round trips, and a
stream decoder that survives garbage, bad checksums, split packets and impossible lengths."""

from __future__ import annotations

import numpy as np
import pytest

from servo_ff.bus import protocol1 as p1


def test_e_manual_examples():
    # Protocol 1.0 e-manual: READ of the internal temperature (address 43, 1 byte) of ID 1, and its reply (32 °C)
    assert p1.encode(1, p1.INST_READ, bytes((0x2B, 0x01))) == bytes.fromhex("ff ff 01 04 02 2b 01 cc")
    assert p1.encode(1, 0x00, bytes((0x20,))) == bytes.fromhex("ff ff 01 03 00 20 db")
    assert p1.decode(bytes.fromhex("ff ff 01 03 00 20 db")) == p1.Packet1(1, 0, b"\x20")


@pytest.mark.parametrize(
    "bad, words",
    [
        ("ff ff 01 03 00 20 dc", "checksum"),
        ("ff fe 01 03 00 20 db", "header"),
        ("ff ff 01 04 00 20 db", "length"),
        ("ff ff 01", "too short"),
    ],
)
def test_decode_says_what_is_wrong(bad, words):
    with pytest.raises(p1.Protocol1Error, match=words):
        p1.decode(bytes.fromhex(bad))


def test_encode_refuses_bad_fields():
    with pytest.raises(p1.Protocol1Error, match="id"):
        p1.encode(0xFF, p1.INST_PING)
    with pytest.raises(p1.Protocol1Error, match="too long"):
        p1.encode(1, p1.INST_WRITE, bytes(300))


def test_stream_decoder_resyncs_and_counts():
    rng = np.random.default_rng(3)
    packets = [
        p1.Packet1(int(i), int(c), bytes(rng.integers(0, 256, int(k), dtype=np.uint8)))
        for i, c, k in zip(rng.integers(0, 253, 40), rng.integers(0, 256, 40), rng.integers(0, 30, 40))
    ]
    wire = b""
    n_bad = 0
    for k, p in enumerate(packets):
        frame = p1.encode(*p)
        if k % 7 == 3:  # corrupt a parameter or the checksum
            frame = frame[:-1] + bytes(((frame[-1] + 1) & 0xFF,))
            n_bad += 1
        wire += b"\x00\x13\xff" + frame if k % 5 == 0 else frame
    dec = p1.StreamDecoder1()
    got = []
    for j in range(0, len(wire), 11):  # split at arbitrary places
        got += dec.feed(wire[j : j + 11])
    want = [p for k, p in enumerate(packets) if k % 7 != 3]
    assert got == want
    assert dec.stats.checksum_errors >= n_bad and dec.stats.packets == len(want)
    assert dec.pending == 0


def test_stream_decoder_skips_impossible_length_and_keeps_partial():
    dec = p1.StreamDecoder1()
    frame = p1.encode(5, p1.INST_PING)
    assert dec.feed(b"\xff\xff\x01\x01" + frame[:3]) == []  # LEN 1 is impossible: skipped
    assert dec.stats.length_errors == 1 and dec.pending > 0
    assert dec.feed(frame[3:]) == [p1.Packet1(5, p1.INST_PING, b"")]
    assert dec.feed(frame[:4]) == [] and dec.drop_partial() == 4 and dec.stats.incomplete == 1
