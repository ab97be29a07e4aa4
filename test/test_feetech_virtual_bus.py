"""The unmodified Feetech SDK (``scservo_sdk``: PortHandler, PacketHandler(0), GroupSyncRead/GroupSyncWrite) against
the virtual STS bus: ``servo-ff virtual-bus --protocol sts`` in another process, or in this one where the test needs
to look inside (EPROM lock across a power cycle, an injected overload)."""

import dxl_harness
import numpy as np
import pytest
import scservo_sdk as scs

from servo_ff.bus import control_table as ct
from servo_ff.bus.feetech import status
from servo_ff.bus.feetech.virtual_bus import StsVirtualBus
from servo_ff.bus.virtual_bus import spawn_virtual_bus
from servo_ff.models.params import P_KP
from servo_ff.ros.harness import wait_for

IDS = list(range(1, 7))
#: physics sub-step: 4 ms (the default 1 ms costs ~0.5 ms of CPU per step for six servos; on a shared 2-core machine
#: next to the stock SDK, which polls the port without sleeping, the bus would fall behind real time)
DT = ["--dt-max", "0.004"]
STS = ct.control_table("sts3215")
TORQUE, GOAL, PRESENT, SPEED, LOAD, LOCK, P_GAIN, SRL = 40, 42, 56, 58, 60, 55, 21, 8


@pytest.fixture(autouse=True)
def patient_sdk(monkeypatch):
    """The SDK's packet timeout is 2·LATENCY_TIMER + 2 ms (34 ms); on this shared machine the bus process is
    sometimes not scheduled for that long."""
    import scservo_sdk.port_handler

    monkeypatch.setattr(scservo_sdk.port_handler, "LATENCY_TIMER", 100)


@pytest.fixture(scope="module")
def vbus():
    with spawn_virtual_bus(["--protocol", "sts", "--ids", "1-6", *DT]) as vb:
        yield vb


def sdk_port(device):
    return dxl_harness.sdk_port(device, scs), scs.PacketHandler(0)


def test_ping_reports_the_model_number(vbus):
    port, ph = sdk_port(vbus.device)
    try:
        for i in IDS:
            assert ph.ping(port, i) == (777, scs.COMM_SUCCESS, 0), i  # PING, then READ of address 3, 2 bytes
        assert ph.ping(port, 9)[1] == scs.COMM_RX_TIMEOUT  # nobody there
        assert ph.read2ByteTxRx(port, 2, 3) == (777, scs.COMM_SUCCESS, 0)
        assert ph.read1ByteTxRx(port, 2, 5) == (2, scs.COMM_SUCCESS, 0)  # ID
    finally:
        port.closePort()
    with spawn_virtual_bus(["--protocol", "sts", "--servo", "sts3250", "--ids", "4", *DT]) as vb:
        port, ph = sdk_port(vb.device)
        assert ph.ping(port, 4) == (2825, scs.COMM_SUCCESS, 0)
        assert ph.read1ByteTxRx(port, 4, 62) == (120, scs.COMM_SUCCESS, 0)  # 12.0 V supply (sts3250 law)
        port.closePort()


def test_read_write_sign_magnitude_and_motion(vbus):
    port, ph = sdk_port(vbus.device)
    try:
        assert ph.read1ByteTxRx(port, 1, P_GAIN) == (32, scs.COMM_SUCCESS, 0)  # P coefficient default
        assert ph.read1ByteTxRx(port, 1, LOCK) == (1, scs.COMM_SUCCESS, 0)
        assert ph.read2ByteTxRx(port, 1, PRESENT) == (2048, scs.COMM_SUCCESS, 0)
        assert ph.write2ByteTxRx(port, 1, GOAL, 2048 - 700) == (scs.COMM_SUCCESS, 0)
        assert ph.write1ByteTxRx(port, 1, TORQUE, 1) == (scs.COMM_SUCCESS, 0)
        speeds = []

        def moving_down():
            speeds.append(ph.read2ByteTxRx(port, 1, SPEED)[0])
            return speeds[-1] & 0x8000  # moving toward lower counts: sign bit 15 set

        wait_for(moving_down, 3.0)
        v = scs.SCS_TOHOST(speeds[-1], 15)
        assert -4000 < v < 0  # counts/s, under the firmware's 3400 counts/s internal target

        def settled() -> bool:  # at the goal and at rest (a reading while it swings through 1348 is not settled)
            speed = scs.SCS_TOHOST(ph.read2ByteTxRx(port, 1, SPEED)[0], 15)
            return abs(ph.read2ByteTxRx(port, 1, PRESENT)[0] - 1348) <= 3 and abs(speed) <= 20

        wait_for(settled)
        assert ph.read2ByteTxRx(port, 2, PRESENT)[0] == 2048  # id 2 untouched, torque off
        load = ph.read2ByteTxRx(port, 1, LOAD)[0]
        assert load & ~0x7FF == 0 and (load & 0x3FF) <= 1000  # drive duty 0.1 %, sign in bit 10
        # read-only bytes are not written, the reply carries only the status bits
        assert ph.write2ByteTxRx(port, 1, PRESENT, 100) == (scs.COMM_SUCCESS, 0)
        assert abs(ph.read2ByteTxRx(port, 1, PRESENT)[0] - 1348) <= 20  # not 100
        assert ph.write1ByteTxRx(port, 1, TORQUE, 0) == (scs.COMM_SUCCESS, 0)
    finally:
        port.closePort()


def test_sync_read_and_sync_write(vbus):
    port, ph = sdk_port(vbus.device)
    try:
        read = scs.GroupSyncRead(port, ph, PRESENT, 6)
        write = scs.GroupSyncWrite(port, ph, GOAL, 2)
        goals = {i: 2048 + 150 * (i - 3) for i in IDS}
        for i in IDS:
            assert read.addParam(i)
            assert write.addParam(i, [scs.SCS_LOBYTE(goals[i]), scs.SCS_HIBYTE(goals[i])])
        assert write.txPacket() == scs.COMM_SUCCESS  # one SYNC_WRITE (0x83), no replies
        torque = scs.GroupSyncWrite(port, ph, TORQUE, 1)
        for i in IDS:
            torque.addParam(i, [1])
        assert torque.txPacket() == scs.COMM_SUCCESS

        def arrived():
            if read.txRxPacket() != scs.COMM_SUCCESS:  # one SYNC_READ (0x82), six replies
                return False
            at_rest = all(read.getData(i, SPEED, 2) & 0x7FFF < 20 for i in IDS)  # |speed| < 20 counts/s
            return at_rest and all(abs(read.getData(i, PRESENT, 2) - goals[i]) <= 3 for i in IDS)

        wait_for(arrived)
        for i in IDS:
            torque.changeParam(i, [0])
        assert torque.txPacket() == scs.COMM_SUCCESS
        assert all(ph.read1ByteTxRx(port, i, TORQUE)[0] == 0 for i in IDS)
    finally:
        port.closePort()


def test_reg_write_action_and_status_return_level(vbus):
    port, ph = sdk_port(vbus.device)
    try:
        assert ph.regWriteTxRx(port, 5, P_GAIN, 1, [20]) == (scs.COMM_SUCCESS, 0)
        assert ph.read1ByteTxRx(port, 5, 64)[0] == 1  # Registered Instruction (asynchronous-write flag)
        assert ph.read1ByteTxRx(port, 5, P_GAIN)[0] == 32  # held until ACTION
        assert ph.action(port, scs.BROADCAST_ID) == scs.COMM_SUCCESS
        wait_for(lambda: ph.read1ByteTxRx(port, 5, P_GAIN)[0] == 20)
        assert ph.read1ByteTxRx(port, 5, 64)[0] == 0
        # Status Return Level 0: writes are taken but not answered; PING and READ still are
        assert ph.write1ByteTxRx(port, 5, SRL, 0) == (scs.COMM_SUCCESS, 0)  # the level before the write answers
        assert ph.write1ByteTxRx(port, 5, P_GAIN, 32)[0] == scs.COMM_RX_TIMEOUT
        assert ph.read1ByteTxRx(port, 5, P_GAIN) == (32, scs.COMM_SUCCESS, 0)
        assert ph.ping(port, 5)[1] == scs.COMM_SUCCESS
        ph.write1ByteTxOnly(port, 5, SRL, 1)
        wait_for(lambda: ph.write1ByteTxRx(port, 5, P_GAIN, 32) == (scs.COMM_SUCCESS, 0))
    finally:
        port.closePort()


def test_eprom_lock_decides_what_a_power_cycle_keeps():
    with StsVirtualBus(ids=[1, 2], return_delay=0, dt_max=0.004) as vb:
        port, ph = sdk_port(vb.device)
        try:
            # Lock = 1 (default): an EPROM write acts at once but is not saved
            assert ph.write1ByteTxRx(port, 1, 5, 10) == (scs.COMM_SUCCESS, 0)  # ID 1 → 10
            assert ph.ping(port, 10) == (777, scs.COMM_SUCCESS, 0) and ph.ping(port, 1)[1] != scs.COMM_SUCCESS
            assert ph.write1ByteTxRx(port, 2, P_GAIN, 12) == (scs.COMM_SUCCESS, 0)
            assert vb.p[1, P_KP] == 12.0  # the firmware law uses it at once
            vb.power_cycle(10)
            vb.power_cycle(2)
            assert ph.ping(port, 1) == (777, scs.COMM_SUCCESS, 0)  # back to the saved ID
            assert ph.read1ByteTxRx(port, 2, P_GAIN)[0] == 32
            # unlock, write, lock: saved
            for value, addr in ((0, LOCK), (12, P_GAIN), (1, LOCK)):
                assert ph.write1ByteTxRx(port, 2, addr, value) == (scs.COMM_SUCCESS, 0)
            vb.power_cycle(2)
            assert ph.read1ByteTxRx(port, 2, P_GAIN)[0] == 12 and ph.read1ByteTxRx(port, 2, LOCK)[0] == 1
            # EPROM is writable with torque on (unlike Dynamixel X)
            assert ph.write1ByteTxRx(port, 2, TORQUE, 1) == (scs.COMM_SUCCESS, 0)
            assert ph.write1ByteTxRx(port, 2, P_GAIN, 40) == (scs.COMM_SUCCESS, 0)
            assert ph.read1ByteTxRx(port, 2, P_GAIN)[0] == 40
        finally:
            port.closePort()


def test_overload_latches_until_torque_is_released():
    """The STS has no REBOOT: an overload releases the torque and stays in every reply's status byte until Torque
    Enable is written 0 (the reboot equivalent); torque cannot come back before."""
    with StsVirtualBus(ids=[1, 2, 3], return_delay=0, dt_max=0.004) as vb:
        port, ph = sdk_port(vb.device)
        try:
            assert ph.write1ByteTxRx(port, 3, TORQUE, 1) == (scs.COMM_SUCCESS, 0)
            vb.inject_overload(3)
            assert ph.ping(port, 3) == (777, scs.COMM_SUCCESS, status.OVERLOAD)  # data valid, status bit set
            assert ph.read1ByteTxRx(port, 3, TORQUE) == (0, scs.COMM_SUCCESS, status.OVERLOAD)
            assert ph.read1ByteTxRx(port, 3, 65)[0] == status.OVERLOAD  # Status register
            assert ph.getRxPacketError(status.OVERLOAD) == "[RxPacketError] Overload error!"
            assert ph.write1ByteTxRx(port, 3, TORQUE, 1) == (scs.COMM_SUCCESS, status.OVERLOAD)
            assert ph.read1ByteTxRx(port, 3, TORQUE)[0] == 0  # refused while latched
            assert ph.write1ByteTxRx(port, 3, TORQUE, 0) == (scs.COMM_SUCCESS, 0)  # released: cleared
            assert ph.write1ByteTxRx(port, 3, TORQUE, 1) == (scs.COMM_SUCCESS, 0)
            assert ph.read1ByteTxRx(port, 3, TORQUE) == (1, scs.COMM_SUCCESS, 0)
            assert ph.ping(port, 2) == (777, scs.COMM_SUCCESS, 0)
        finally:
            port.closePort()


def test_fault_options_from_the_command_line():
    """--drop-rate, --corrupt-rate, --late-rate/--late-ms, --silent, --overload and --sag, seen by the stock SDK; the
    sag's window (``4@0+3``) on the bus's own clock: the command line's bus advanced by hand (no wall-time window for
    the test to catch)."""
    import argparse

    from servo_ff.cli.virtual_bus import build_bus, register

    args = ["--protocol", "sts", "--ids", "1-3", *DT, "--silent", "2@0", "--overload", "3@0.3"]
    with spawn_virtual_bus(
        [*args, "--sag", "4@0", "--drop-rate", "0.3", "--corrupt-rate", "0.01", "--seed", "3"]
    ) as vb:
        port, ph = sdk_port(vb.device)
        # supply 7.4 − 4 = 3.4 V < Min Voltage Limit 4.0 V: the voltage bit in every reply while the sag lasts (here
        # to the end)
        wait_for(lambda: ph.read1ByteTxRx(port, 1, 62) == (34, scs.COMM_SUCCESS, status.VOLTAGE), 30.0)
        results = [ph.read2ByteTxRx(port, 1, PRESENT)[1] for _ in range(40)]
        assert results.count(scs.COMM_SUCCESS) > 15
        assert results.count(scs.COMM_RX_TIMEOUT) > 3  # dropped replies
        assert all(ph.ping(port, 2)[1] == scs.COMM_RX_TIMEOUT for _ in range(3))  # silent from t = 0
        wait_for(lambda: ph.read1ByteTxRx(port, 3, 65)[0] == status.OVERLOAD | status.VOLTAGE, 30.0)
        port.closePort()
    parser = argparse.ArgumentParser(prog="servo-ff")
    register(parser.add_subparsers(dest="command", required=True))
    bus = build_bus(parser.parse_args(["virtual-bus", *args, "--sag", "4@0+3"]))
    seen = {}  # k → (Present Input Voltage [0.1 V], Hardware Error Status) of ids 1–3 at 0.1·k s of the bus's clock
    for k in range(1, 32):  # 0.1 s apart: within the clock's catch-up, as a served bus advances
        bus.advance(bus._t0 + 0.1 * k)
        seen[k] = (bus.regs.get("Present Input Voltage").tolist(), bus.regs.get("Hardware Error Status").tolist())
    v, ov = status.VOLTAGE, status.OVERLOAD
    assert [seen[k] for k in (1, 2, 4, 29)] == [([34] * 3, [v, v, v])] * 2 + [([34] * 3, [v, v, v | ov])] * 2
    assert seen[31] == ([74] * 3, [0, 0, ov])  # sag over at 3 s; the overload latched
    with spawn_virtual_bus(["--protocol", "sts", "--ids", "1", *DT, "--late-rate", "1", "--late-ms", "300"]) as vb:
        port, ph = sdk_port(vb.device)  # every reply held back 300 ms: past the SDK's 200 ms timeout
        assert ph.read2ByteTxRx(port, 1, PRESENT)[1] == scs.COMM_RX_TIMEOUT
        port.closePort()


def test_bad_command_lines_exit_2_with_one_line():
    import subprocess
    import sys

    for argv, expect in (
        (["--protocol", "sts", "--baud", "2000000"], "baud 2000000 is not a STS3215 rate; valid: 1000000, 500000"),
        (["--protocol", "sts", "--servo", "mx106"], "--servo mx106 (MX-106(2.0)) speaks protocol dxl2, not"),
        (["--protocol", "sts", "--servo", "sts9999"], "unknown Dynamixel model 'sts9999'"),
    ):
        r = subprocess.run(
            [sys.executable, "-m", "servo_ff.cli.virtual_bus", *argv], capture_output=True, text=True, timeout=60
        )
        assert r.returncode == 2 and expect in r.stderr and "Traceback" not in r.stderr, (argv, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1
    np.testing.assert_equal(STS.baud_codes[76800], 5)
