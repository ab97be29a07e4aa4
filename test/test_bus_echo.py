"""Adapters that echo what they send (half duplex without direction control): every bus refuses one at connect /
scan in one line, before anything is written, and sends nothing more (before: Protocol 1.0 read model number 512
from a PING's echo, STS read Present Position 568 from a READ's and wrote it as Goal Position at reboot, 2.0 took
a WRITE's echo for a garbled acknowledgement)."""

from __future__ import annotations

import pytest

from servo_ff.bus.bus_interface import make_bus
from servo_ff.bus.bus_types import BusConfig, BusError
from servo_ff.bus.virtual_bus import VirtualBus

FAMILIES = [("mx106", "dxl2"), ("mx106-p1", "dxl1"), ("sts3215", "sts")]
REFUSAL = r"^the adapter on \S+ echoes what it sends \(READ [0-9a-f ]+ came back .*: use one with direction control"


def _bus(vb: VirtualBus, model: str, protocol: str):
    cfg = BusConfig(
        port=vb.device, ids=[1, 2], model=model, protocol=protocol, latency_timer_ms=1.0, timeout_ms=50.0, retries=1
    )
    return make_bus(cfg)


@pytest.mark.parametrize("model,protocol", FAMILIES)
def test_an_echoing_adapter_is_refused_before_anything_is_written(model, protocol):
    with VirtualBus(ids=[1, 2], model=model, return_delay=0, echo=True) as vb:
        vb.regs.set("Goal Position", 3000, [0])
        with _bus(vb, model, protocol) as bus:
            with pytest.raises(BusError, match=REFUSAL) as e:
                bus.connect()
            assert "\n" not in str(e.value) and "U2D2 / URT-1" in str(e.value)
            for call in (lambda: bus.reboot(1), lambda: bus.write_item(1, "Torque Enable", 1), bus.read_state):
                with pytest.raises(BusError, match=REFUSAL):  # latched: the port sends nothing more
                    call()
            with pytest.raises(BusError, match=REFUSAL):
                bus.scan([1, 2])
        assert set(vb.stats.instructions) <= {"READ"}  # the probe only
        assert int(vb.regs.value(0, "Goal Position")) == 3000 and int(vb.regs.value(0, "Torque Enable")) == 0


@pytest.mark.parametrize("model,protocol", FAMILIES)
def test_scan_refuses_an_echoing_adapter(model, protocol):
    with VirtualBus(ids=[1, 2], model=model, return_delay=0, echo=True) as vb, _bus(vb, model, protocol) as bus:
        with pytest.raises(BusError, match=REFUSAL):
            bus.scan([1, 2])


@pytest.mark.parametrize("model,protocol", FAMILIES)
def test_without_echo_the_probe_leaves_nothing_behind(model, protocol):
    with VirtualBus(ids=[1, 2], model=model, return_delay=0) as vb, _bus(vb, model, protocol) as bus:
        assert bus.connect() == ([1, 2], [])
        assert bus.scan([1, 2, 3]) == {1: bus.table.model_number, 2: bus.table.model_number}
        bus.setup()
        assert bus.read_item(1, "Present Position") == int(vb.regs.value(0, "Present Position"))
        assert bus.read_state().valid.all()
        c = bus.port.counters
        assert (c.late, c.stray, c.unattributed) == (0, 0, 0) and bus.port.refusal is None
