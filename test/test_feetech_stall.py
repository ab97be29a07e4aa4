"""A stalled responder: instructions queue while the emulator does not serve, for longer than the late horizon;
when it serves again, the queued instructions are answered first. None of those replies may be reported as a
later transaction's fresh state (checked against the virtual bus's truth record)."""

import numpy as np
from dxl_harness import cycles_through_a_stall, stall_config

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
