"""A state reply garbled on the wire that passes the frame check by chance (CRC-16: 1 in 65 536 garbled frames;
Protocol 1.0's 8-bit checksum: 1 in 256) holds values no servo reports: it is counted corrupt, never a state."""

import numpy as np
import pytest
from dxl_harness import FakeServos

from servo_ff.bus import control_table as ct
from servo_ff.bus import protocol1 as p1
from servo_ff.bus.bus_types import STATE_DTYPE
from servo_ff.bus.dynamixel import protocol as pr
from servo_ff.bus.dynamixel.bus import BusConfig, DynamixelBus
from servo_ff.bus.dynamixel.bus_p1 import DynamixelBus1
from servo_ff.bus.dynamixel.p1_units import state_record
from servo_ff.bus.dynamixel.plausible_state import plausible_states, state_bounds
from servo_ff.bus.protocol1 import StreamDecoder1


def _record(current: int = 0, velocity: int = 0, position: int = 2048) -> bytes:
    return np.array([(current, velocity, position)], dtype=STATE_DTYPE).tobytes()


def test_bounds_of_each_protocol_come_from_its_table():
    x = state_bounds(ct.control_table("xm430"))
    assert x.position == (-1_048_575, 1_048_575) and x.velocity == 4096 and x.effort == 2 * 1193
    assert state_bounds(ct.control_table("mx28")).effort == 1000  # Present Load, 0.1 %
    p1 = state_bounds(ct.control_table("mx106-p1"))
    assert p1.position == (0, 4095) and p1.velocity == p1.effort == 1023
    assert state_bounds(ct.control_table("ax12a")).position == (0, 1023)


def test_a_servos_own_range_passes_and_each_garbled_field_does_not():
    b = state_bounds(ct.control_table("xm430"))
    fine = [_record(-2386, -4096, -1_048_575), _record(2386, 4096, 1_048_575), _record(850, 230, 3000)]
    bad = [_record(position=1 << 30), _record(velocity=0x10000), _record(current=-2387), _record(position=-(1 << 21))]
    rec = np.frombuffer(b"".join(fine + bad), dtype=STATE_DTYPE)
    assert plausible_states(b, rec).tolist() == [True] * 3 + [False] * 4


def test_protocol1_bits_above_the_sign_bit_read_out_of_range():
    """Present Speed 0x0C2C (bit 11 set: never by a servo) reads −2092, out of range; it read −44 (bit 11 dropped)."""
    b = state_bounds(ct.control_table("mx106-p1"))
    ok = state_record(bytes([0x00, 0x08, 0x2C, 0x04, 0x10, 0x00]))
    garbled = state_record(bytes([0x00, 0x08, 0x2C, 0x0C, 0x10, 0x00]))
    beyond = state_record(bytes([0x00, 0x10, 0x00, 0x00, 0x00, 0x00]))  # position 4096
    rec = np.frombuffer(ok + garbled + beyond, dtype=STATE_DTYPE)
    assert rec["velocity"].tolist()[:2] == [-44, -(0x0C2C & ~0x400)]
    assert plausible_states(b, rec).tolist() == [True, False, False]


@pytest.mark.parametrize(
    "bad",
    [_record(position=1 << 30), _record(velocity=-(1 << 20)), _record(current=30000)],
    ids=["position 2^30 (1.6e6 rad)", "velocity -2^20", "current 30000"],
)
def test_a_reply_with_a_good_crc_and_impossible_values_is_corrupt(bad):
    """Servo 2's reply carries a valid CRC around impossible data, in one chunk with 1's and 3's (the bus's fast
    path) and then alone among good ones: invalid and counted corrupt both times; 1 and 3 valid; the next read,
    intact, is valid again."""
    good = [pr.encode_status(i, 0, _record(12, 5, 2100 + i)) for i in (1, 2, 3)]
    garbled = [good[0], pr.encode_status(2, 0, bad), good[2]]
    with FakeServos([b"".join(garbled), b"".join(garbled[:2]), b"".join(good)]) as fake:
        cfg = BusConfig(port=fake.device, ids=[1, 2, 3], latency_timer_ms=1.0, timeout_ms=20.0)
        with DynamixelBus(cfg).open() as bus:
            first, second, third = (bus.read_state() for _ in range(3))
    assert first.valid.tolist() == [True, False, True]
    assert second.valid.tolist() == [True, False, False]
    assert third.valid.all() and np.isfinite(third.position).all()
    assert np.isnan(first.position[1]) and np.isnan(second.position[1])
    assert bus.stats[2].corrupt == 2 and bus.stats[2].ok == 1 and bus.stats[1].corrupt == 0
    assert bus.implausible == 2


P1_DATA = bytes([0x00, 0x08, 0x2C, 0x00, 0x10, 0x00])  # position 2048, speed 44, load 16


@pytest.mark.parametrize(
    "error,data,count",
    [
        (p1.ERR_ANGLE_LIMIT, P1_DATA, "status_errors"),  # its raw bytes are no state record
        (0, P1_DATA[:4] + bytes([0x00, 0x80]), "corrupt"),  # Present Load 0x8000: beyond the int16 field
    ],
    ids=["status error", "load high byte garbled"],
)
def test_protocol1_one_bad_reply_among_good_ones_costs_its_servo_alone(error, data, count):
    """BULK_READ replies of ids 1–3 with 2's bad: 2 invalid and counted, 1 and 3 valid (the range check had
    raised on both: a status error's 6 raw bytes joined to the 10-byte records, and a load that does not fit)."""
    replies = p1.encode(1, 0, P1_DATA) + p1.encode(2, error, data) + p1.encode(3, 0, P1_DATA)
    with FakeServos(replies, StreamDecoder1, p1.INST_BULK_READ) as fake:
        cfg = BusConfig(port=fake.device, ids=[1, 2, 3], model="mx106-p1", protocol="dxl1", latency_timer_ms=1.0,
                        timeout_ms=20.0)  # fmt: skip
        with DynamixelBus1(cfg).open() as bus:
            s = bus.read_state()
    assert s.valid.tolist() == [True, False, True]
    assert getattr(bus.stats[2], count) == 1 and bus.stats[1].ok == bus.stats[3].ok == 1
