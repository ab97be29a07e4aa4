"""A stalled responder on the Dynamixel 2.0 and 1.0 buses (the counterpart of test_feetech_stall.py): instructions
queue while the emulator does not serve, for longer than the late horizon; when it serves again, the queued
instructions are answered first. None of those replies may be reported as a later transaction's fresh state
(checked against the virtual bus's truth record)."""

from dataclasses import replace

import numpy as np
import pytest
from dxl_harness import cycles_through_a_stall, cycles_with_a_ping_in_a_backlog, stall_config

from servo_ff.bus import control_table as ct
from servo_ff.bus import truth as tr
from servo_ff.bus.bus_types import BusConfig
from servo_ff.bus.dynamixel.bus import DynamixelBus
from servo_ff.bus.dynamixel.bus_p1 import STATE_ADDR, DynamixelBus1
from servo_ff.bus.dynamixel.p1_units import state_record
from servo_ff.bus.dynamixel.virtual_p1 import VirtualBus1
from servo_ff.bus.virtual_bus import ServoLoad, VirtualBus

IDS = [1, 2, 3]
MX106_P1 = ct.control_table("mx106-p1")


def state_values(payload: bytes) -> np.ndarray:
    """(position, velocity) [rad, rad/s] of a 10-byte 2.0 state reply, as the bus computes them."""
    raw = np.frombuffer(payload, dtype=np.dtype([("c", "<i2"), ("v", "<i4"), ("p", "<i4")]))[0]
    return np.array([ct.counts_to_rad(raw["p"]), ct.velocity_to_rad_s(raw["v"])])


def state_values1(payload: bytes) -> np.ndarray:
    """The same of a 6-byte 1.0 state reply (MX-106 on 1.0 firmware)."""
    rec = np.frombuffer(state_record(payload), dtype=np.dtype([("c", "<i2"), ("v", "<i4"), ("p", "<i4")]))[0]
    return np.array([(rec["p"] - MX106_P1.center) * MX106_P1.rad_per_count, rec["v"] * MX106_P1.velocity_unit])


#: protocol → (virtual bus, bus, model, address of the state read, its decoder)
RIGS = {
    "dxl2": (VirtualBus, DynamixelBus, "mx106", ct.ADDR_PRESENT_CURRENT, state_values),
    "dxl1": (VirtualBus1, DynamixelBus1, "mx106-p1", STATE_ADDR, state_values1),
}


@pytest.mark.parametrize("protocol", list(RIGS))
def test_replies_queued_behind_a_stall_longer_than_the_late_horizon_are_never_fresh_state(protocol):
    virtual, bus_class, model, addr, decode = RIGS[protocol]
    load = ServoLoad.fixed_inertia(0.002)
    with virtual(ids=IDS, model=model, return_delay=0, dt_max=0.002, loads=load, truth=True) as vb:
        with bus_class(stall_config(vb.device, IDS, model, protocol)) as bus:
            bus.connect()
            recs, stalled = cycles_through_a_stall(vb, bus, addr)
    assert not any(v.any() for _, _, v, _, _ in stalled)  # nothing answered while stalled
    audit = tr.audit_states(vb.truth.arrays(), recs, addr, decode)
    assert audit.stale_valid == 0, audit.examples
    assert audit.before_sent == 0
    assert not bus.port.unsynced and bus.port.resyncs >= 1  # the stall was seen, and the bus resynced
    assert sum(v.all() for _, _, v, _, _ in recs[-30:]) >= 10  # back in step after the backlog


@pytest.mark.parametrize("protocol", list(RIGS))
def test_a_ping_reply_queued_behind_a_backlog_does_not_close_it(protocol):
    """test_feetech_stall.py's case on the Dynamixel buses (the same port code, :mod:`servo_ff.bus.select_port`)."""
    virtual, bus_class, model, addr, decode = RIGS[protocol]
    load = ServoLoad.fixed_inertia(0.002)
    with virtual(ids=IDS, model=model, return_delay=0, dt_max=0.002, loads=load, truth=True) as vb:
        config = replace(stall_config(vb.device, IDS, model, protocol), late_horizon_s=0.4, retries=0)
        with bus_class(config) as bus:
            bus.connect()
            recs = cycles_with_a_ping_in_a_backlog(vb, bus, addr, 2, decode, need=200)
    audit = tr.audit_states(vb.truth.arrays(), recs, addr, decode)
    assert audit.stale_valid == 0, audit.examples
    # every reply queued behind the stall owned by its own read (a read closed too early left its replies to a later
    # read, stale, or, when they came first, to nobody: stray); one stray may be the second PING's own reply, come
    # after its settle time with nothing queued before it (a loaded machine)
    assert bus.port.counters.stray <= 1 and audit.checked > 200
    assert sum(v.all() for _, _, v, _, _ in recs[-30:]) >= 10  # back in step after the backlog


@pytest.mark.parametrize("protocol", list(RIGS))
def test_reads_through_an_outage_recover_as_soon_as_the_servos_answer(protocol):
    """Reads go on while no servo answers: every one leaves a transaction in the ledger, so the first replies after
    the outage used to be taken as late replies of those, and so on (300 reads later still invalid at a 0.5 s
    horizon). The resync clears the ledger once its marker is answered."""
    virtual, bus_class, model, _, _ = RIGS[protocol]
    with virtual(ids=IDS, model=model, return_delay=0) as vb:
        cfg = BusConfig(
            port=vb.device,
            ids=IDS,
            model=model,
            protocol=protocol,
            timeout_ms=20.0,
            skip_after=1000,
            late_horizon_s=0.2,
        )
        with bus_class(cfg) as bus:
            bus.connect()
            for i in IDS:
                vb.set_silent(i)
            assert not any(bus.read_state().valid.any() for _ in range(40))
            for i in IDS:
                vb.set_silent(i, False)
            reads = 1
            while not bus.read_state().valid.all() and reads < 300:
                reads += 1
    assert reads <= 20, (reads, bus.port.resyncs, bus.port.resync_failures)
