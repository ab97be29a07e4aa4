"""A stalled responder: instructions queue while the emulator does not serve, for longer than the late horizon;
when it serves again, the queued instructions are answered first. None of those replies may be reported as a
later transaction's fresh state (checked against the virtual bus's truth record)."""

import time

import numpy as np
from dxl_harness import wait_served

from servo_ff.bus import control_table as ct
from servo_ff.bus import truth as tr
from servo_ff.bus.bus_types import BusConfig
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


def run_cycles(bus, n, t0):
    out = []
    for _ in range(n):
        s = bus.cycle(np.full(len(IDS), 0.8 * np.sin(8.0 * (time.monotonic() - t0))))
        out.append((bus.state_reads, s.ids, s.valid, np.stack([s.position, s.velocity], axis=1), s.stamps))
    return out


def test_replies_queued_behind_a_stall_longer_than_the_late_horizon_are_never_fresh_state():
    vb = StsVirtualBus(ids=IDS, return_delay=0, dt_max=0.002, loads=ServoLoad.fixed_inertia(0.002), truth=True)
    with vb:
        cfg = BusConfig(
            port=vb.device,
            ids=IDS,
            model="sts3215",
            protocol="sts",
            latency_timer_ms=1.0,
            timeout_ms=20.0,
            late_horizon_s=0.05,
            skip_after=1000,
            retries=5,
        )
        with FeetechBus(cfg) as bus:
            bus.torque(True)  # moving servos: every transaction's payload differs
            t0 = time.monotonic()
            recs = run_cycles(bus, 20, t0)
            # the emulator stalls (descheduled): the instructions queue on the pty; 40 cycles = 80 instructions,
            # more than the 48 (id, length) pairs of the markers: one marker per instruction would repeat one
            with vb._lock:
                stalled = run_cycles(bus, 40, t0)
            after = run_cycles(bus, 60, t0)
            t_end = time.monotonic() + 30.0
            while (
                bus.port.unsynced or sum(v.all() for _, _, v, _, _ in after[-30:]) < 10
            ) and time.monotonic() < t_end:
                after += run_cycles(bus, 10, t0)  # a loaded machine: the backlog takes longer to be answered
            recs += stalled + after
            wait_served(vb, bus, STATE_ADDR)
    assert not any(v.any() for _, _, v, _, _ in stalled)  # nothing answered while stalled
    audit = tr.audit_states(vb.truth.arrays(), recs, STATE_ADDR, state_values)
    assert audit.stale_valid == 0, audit.examples
    assert audit.before_sent == 0
    assert not bus.port.unsynced and bus.port.resyncs >= 1  # the stall was seen, and the bus resynced
    assert sum(v.all() for _, _, v, _, _ in recs[-30:]) >= 10  # back in step after the backlog
