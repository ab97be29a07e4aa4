"""Dynamixel Protocol 1.0 (issue 16): the 1.0 tables, the unmodified dynamixel-sdk Protocol 1.0 classes against
``servo-ff virtual-bus --protocol dxl1`` in another process, and DynamixelBus1 against the virtual bus (faults,
stale data, goal limits, alarms, reboot equivalent, bad input)."""

import logging
import math
import time

import dxl_harness
import numpy as np
import pytest
from dxl_harness import audited_cycles, losing_one_gain_write
from dynamixel_sdk import COMM_SUCCESS, GroupBulkRead, GroupSyncWrite, PacketHandler

from servo_ff.bus import control_table as ct
from servo_ff.bus import protocol1 as p1
from servo_ff.bus.bus_interface import bus_class, make_bus
from servo_ff.bus.bus_types import BusConfig, BusError, GoalRejected
from servo_ff.bus.dynamixel.bus_p1 import DynamixelBus1
from servo_ff.bus.dynamixel.p1_units import baud_code, p_of_slope, slope_of_p, state_record
from servo_ff.bus.dynamixel.virtual_p1 import VirtualBus1
from servo_ff.bus.virtual_bus import Faults, ServoLoad, spawn_virtual_bus
from servo_ff.models.params import P_KP
from servo_ff.models.presets import preset
from servo_ff.ros.harness import wait_for

RPM = 2 * math.pi / 60


@pytest.fixture(autouse=True)
def patient_sdk(monkeypatch):
    """The stock SDK's packet timeout is 2·LATENCY_TIMER + 2 ms; give it room on this shared machine."""
    import dynamixel_sdk.port_handler

    monkeypatch.setattr(dynamixel_sdk.port_handler, "LATENCY_TIMER", 100)


def sdk_port(device):
    """The stock SDK on ``device``, with a 200 ms reply margin instead of its 2 × 16 ms latency timer: the virtual
    bus (a thread, or another process) answered a loaded box's read later than that ('P Gain of id 3: -3001', the
    SDK's COMM_RX_TIMEOUT, shake run); a silent servo still times out.

    The SDK opens pyserial with ``timeout=0``, so its receive loop spins a core for the whole wait; on this shared
    2-core box that starved the bus process (20 servos, about 0.3 ms of CPU per 1 ms physics step): at load 5-7,
    20-60 of 90 transactions timed out, main's code and the brown-out branch alike. A 2 ms read timeout waits in
    the kernel instead (the SDK's code and its own timeouts unchanged): 0 of 90, replies in 3-8 ms (p50)."""
    from dynamixel_sdk import port_handler

    port = dxl_harness.sdk_port(device)
    set_timeout = port.setPacketTimeout

    def patient(packet_length) -> None:
        set_timeout(packet_length)
        port.packet_timeout += 200.0 - 2.0 * port_handler.LATENCY_TIMER  # ms

    port.setPacketTimeout = patient
    return port, PacketHandler(1.0)


# ---------------------------------------------------------------------- tables (e-manual values)
@pytest.mark.parametrize(
    "key,number,page,vmax,top,rpm,center",
    [
        ("mx106-p1", 320, "dxl/mx/mx-106/", 160, 4095, 0.114, 2048),
        ("mx64-p1", 310, "dxl/mx/mx-64/", 240, 4095, 0.114, 2048),
        ("ax12a", 12, "dxl/ax/ax-12a/", 140, 1023, 0.111, 512),
    ],
)
def test_p1_tables_match_the_e_manual(key, number, page, vmax, top, rpm, center):
    t = ct.control_table(key)
    assert (t.protocol, t.model_number, t.source) == ("dxl1", number, f"https://emanual.robotis.com/docs/en/{page}")
    assert ct.control_table(number, protocol="dxl1") is t
    for name, (addr, size) in {
        "ID": (3, 1),
        "Baud Rate": (4, 1),
        "Return Delay Time": (5, 1),
        "Min Position Limit": (6, 2),  # CW Angle Limit
        "Max Position Limit": (8, 2),  # CCW Angle Limit
        "Temperature Limit": (11, 1),
        "Max Voltage Limit": (13, 1),
        "Status Return Level": (16, 1),
        "Shutdown": (18, 1),
        "Torque Enable": (24, 1),
        "Goal Position": (30, 2),
        "PWM Limit": (34, 2),  # Torque Limit
        "Present Position": (36, 2),
        "Present Velocity": (38, 2),
        "Present Load": (40, 2),
        "Present Input Voltage": (42, 1),
        "Present Temperature": (43, 1),
        "Lock": (47, 1),
    }.items():
        assert (t.item(name).address, t.item(name).size) == (addr, size), name
    assert t.item("Max Position Limit").default == top and t.item("Max Voltage Limit").default == vmax
    assert t.item("Shutdown").default == 36 and t.item("Return Delay Time").default == 250
    assert t.center == center and t.sign_bit == 10 and t.load_unit == 1 / 1023  # Torque Limit's scale: 1023 = 100 %
    assert t.velocity_unit == pytest.approx(rpm * RPM)
    if key == "ax12a":
        assert t.rad_per_count == pytest.approx(math.radians(300) / 1023)
        assert "Position P Gain" not in t.by_name and t.item("CW Compliance Slope").address == 28
    else:
        assert t.rad_per_count == pytest.approx(2 * math.pi / 4096)
        assert (t.item("Position P Gain").address, t.item("Position P Gain").default) == (28, 32)
        assert (t.p_gain_per_kp, t.p_gain_max) == (1.0, 254)
    # sign-magnitude, bit 10 = CW = negative (Present Speed 1024 + 300 = 34.3 rpm clockwise)
    assert t.decode("Present Velocity", 1024 + 300) == -300 and t.encode("Present Load", -512) == 1536


def test_units_baud_grid_and_compliance_slope():
    mx = ct.control_table("mx106-p1")
    assert baud_code(1_000_000, mx) == 1 and baud_code(57600, mx) == 34 and baud_code(3_000_000, mx) == 252
    assert baud_code(115200, mx) == 16  # −2.1 %: inside the manual's 3 %
    with pytest.raises(ValueError, match=r"baud 1500000: not on the MX-106\(1.0\) Baud Rate grid"):
        baud_code(1_500_000, mx)
    with pytest.raises(ValueError, match=r"baud 2000000: the AX-12A \(protocol dxl1\) runs at 7843..1000000"):
        baud_code(2_000_000, ct.control_table("ax12a"))
    with pytest.raises(ValueError, match="baud 4000000"):
        BusConfig(port="x", ids=[1], model="mx106-p1", protocol="dxl1", baud=4_000_000)
    assert [slope_of_p(p) for p in (8, 16, 32, 64, 128, 512, 40)] == [128, 64, 32, 16, 8, 2, 32]
    assert p_of_slope(32) == 32 and p_of_slope(25) == 64 and p_of_slope(0) == 512  # representative values
    rec = np.frombuffer(state_record(bytes([0x00, 0x08, 0x2C, 0x05, 0x10, 0x00])), dtype="<i2,<i4,<i4")[0]
    assert tuple(int(v) for v in rec) == (16, -300, 2048)  # load +1.6 %, speed 300 CW, position 2048


def test_bus_registry_and_unknown_protocol():
    assert bus_class("dxl1") is DynamixelBus1
    with pytest.raises(ValueError, match="protocol dxl2, not dxl1"):
        BusConfig(port="x", ids=[1], model="mx106", protocol="dxl1")


# ---------------------------------------------------------------------- the stock SDK against the CLI bus
def test_stock_sdk_protocol1_against_the_cli_virtual_bus():
    """PING (model number), READ/WRITE, REG_WRITE/ACTION, SYNC_WRITE, BULK_READ (stock Protocol1PacketHandler
    bulkReadTx + GroupBulkRead's receive), the missing REBOOT, Status Return Level, silence and overload."""
    args = ["--protocol", "dxl1", "--servo", "mx106-p1", "--ids", "1-20", "--return-delay", "0"]
    args += ["--overload", "7@0", "--silent", "9@0", "--load", "inertia:0.005"]
    with spawn_virtual_bus(args) as proc:
        port, ph = sdk_port(proc.device)
        assert ph.ping(port, 3) == (320, COMM_SUCCESS, 0)
        assert ph.ping(port, 9)[1] != COMM_SUCCESS  # silent
        wait_for(lambda: ph.read1ByteTxRx(port, 3, 28) == (32, COMM_SUCCESS, 0))  # P Gain (loaded box: asked again)
        assert ph.write2ByteTxRx(port, 3, 30, 2548) == (COMM_SUCCESS, 0)
        assert ph.write1ByteTxRx(port, 3, 24, 1) == (COMM_SUCCESS, 0)
        wait_for(lambda: abs(ph.read2ByteTxRx(port, 3, 36)[0] - 2548) <= 3)
        g = GroupBulkRead(port, ph)
        for i in (1, 2, 3, 4):
            assert g.addParam(i, 36, 6)
        g.makeParam()
        assert ph.bulkReadTx(port, g.param, len(g.param)) == COMM_SUCCESS
        assert g.rxPacket() == COMM_SUCCESS
        assert abs(g.getData(3, 36, 2) - 2548) <= 3 and g.getData(1, 40, 2) in range(2048)
        assert ph.write2ByteTxRx(port, 3, 30, 5000)[1] == p1.ERR_ANGLE_LIMIT  # beyond CCW Angle Limit 4095
        assert ph.write1ByteTxRx(port, 3, 36, 0)[1] == p1.ERR_RANGE  # read-only
        assert ph.readTxRx(port, 3, 73, 2)[1:] == (COMM_SUCCESS, p1.ERR_RANGE)  # past the table
        assert ph.regWriteTxRx(port, 4, 30, 2, [0x00, 0x0A]) == (COMM_SUCCESS, 0)
        assert ph.read2ByteTxRx(port, 4, 30)[0] == 2048 and ph.read1ByteTxRx(port, 4, 44)[0] == 1  # registered
        assert ph.action(port, 4) == COMM_SUCCESS and ph.read2ByteTxRx(port, 4, 30)[0] == 2560
        assert ph.action(port, 4) == COMM_SUCCESS  # nothing registered: an instruction error (SDK drops it)
        assert ph.reboot(port, 5) == (-9000, 0)  # COMM_NOT_AVAILABLE: no REBOOT in 1.0
        sw = GroupSyncWrite(port, ph, 30, 2)
        for i in range(1, 21):
            assert sw.addParam(i, [(2048 + 10 * i) & 0xFF, (2048 + 10 * i) >> 8])
        assert sw.txPacket() == COMM_SUCCESS
        assert [ph.read2ByteTxRx(port, i, 30)[0] for i in (1, 10, 20)] == [2058, 2148, 2248]
        # overload at t = 0 (Shutdown 36 has bit 5): Torque Limit (34) := 0 as the 1.0 firmware does (e-manual, Torque
        # Limit), the bit in every status, cleared by a write of Torque Limit (the 1.0 bus's torque on, its reboot)
        wait_for(lambda: ph.read1ByteTxRx(port, 7, 24)[2] & p1.ERR_OVERLOAD)
        assert ph.read2ByteTxRx(port, 7, 34)[0] == 0 and ph.read1ByteTxRx(port, 7, 24)[0] == 0  # (never on)
        assert ph.write2ByteTxRx(port, 7, 34, 1023) == (COMM_SUCCESS, 0)
        assert ph.read1ByteTxRx(port, 8, 24)[2] == 0  # neighbours unaffected
        assert ph.write1ByteTxRx(port, 6, 16, 1) == (COMM_SUCCESS, 0)  # Status Return Level 1: reads only
        assert ph.write1ByteTxRx(port, 6, 25, 1)[0] != COMM_SUCCESS  # no status: the SDK times out
        wait_for(lambda: ph.read1ByteTxRx(port, 6, 25)[0] == 1)  # (a read timing out on a loaded box reads 0)
        port.closePort()


def test_ax12_answers_bulk_read_with_an_instruction_error_and_maps_slope_to_kp():
    with VirtualBus1(ids=[1, 2], model="ax12a", params=preset("mx28", "m1"), return_delay=0) as vb:
        port, ph = sdk_port(vb.device)
        assert ph.ping(port, 2) == (12, COMM_SUCCESS, 0)
        g = GroupBulkRead(port, ph)
        g.addParam(1, 36, 2)
        g.makeParam()
        assert ph.bulkReadTx(port, g.param, len(g.param)) == COMM_SUCCESS
        _, result, error = ph.readRx(port, 1, 2)
        assert (result, error) == (COMM_SUCCESS, p1.ERR_INSTRUCTION)
        # center (a read the stock SDK times out on a loaded box, CI 2026-11-27: asked again)
        wait_for(lambda: ph.read2ByteTxRx(port, 1, 36) == (512, COMM_SUCCESS, 0))
        assert ph.write1ByteTxRx(port, 1, 28, 16) == (COMM_SUCCESS, 0)
        assert vb.p[0, P_KP] == 64.0  # slope 16 ↔ P 64 (e-manual MX PID table)
        port.closePort()


def test_virtual_bulk_read_answers_in_a_chain_as_the_firmware():
    """e-manual, Protocol 1.0, Bulk Read: each servo sends its status packet when the one listed before it has sent
    its own, so a silent servo silences the ones after it (before: each answered on its own); the stock SDK sees
    id 1's reply only. ``bulk_read_chain = False``: each answers on its own."""
    with VirtualBus1(ids=[1, 2, 3], model="mx106-p1", return_delay=0) as vb:
        port, ph = sdk_port(vb.device)
        vb.set_silent(2)
        for chain, answered in ((True, [True, False]), (False, [True, True])):
            vb.bulk_read_chain = chain
            g = GroupBulkRead(port, ph)
            for i in (1, 2, 3):
                assert g.addParam(i, 36, 2)
            g.makeParam()
            assert ph.bulkReadTx(port, g.param, len(g.param)) == COMM_SUCCESS
            assert [ph.readRx(port, i, 2)[1] == COMM_SUCCESS for i in (1, 3)] == answered  # ids 1 and 3
        port.closePort()


# ---------------------------------------------------------------------- DynamixelBus1 against the virtual bus
def state_values1(payload: bytes) -> np.ndarray:
    rec = np.frombuffer(state_record(payload), dtype=np.dtype([("c", "<i2"), ("v", "<i4"), ("p", "<i4")]))[0]
    t = ct.control_table("mx106-p1")
    return np.array([(rec["p"] - 2048) * t.rad_per_count, rec["v"] * t.velocity_unit])


def test_bus1_late_dropped_corrupt_replies_never_reported_as_fresh_state():
    """The reliability scenario of the 2.0 bus on BULK_READ: 0 stale entries reported valid."""
    ids = list(range(1, 9))
    faults = Faults(drop_rate=0.03, corrupt_rate=0.003, late_rate=0.008, late_s=0.02, seed=11)
    opts = dict(ids=ids, model="mx106-p1", faults=faults, loads=ServoLoad.fixed_inertia(0.002), return_delay=0)
    with VirtualBus1(truth=True, **opts) as vb:
        cfg = BusConfig(port=vb.device, ids=ids, model="mx106-p1", protocol="dxl1", timeout_ms=4.0, skip_after=1000)
        with DynamixelBus1(cfg) as bus:
            vb.regs.set("Torque Enable", 1)  # moving servos (set in the emulator: the lossy bus is what is tested)
            writes0 = vb.stats.instructions.get("SYNC_WRITE", 0)
            goals = lambda k: np.full(len(ids), 0.8 * np.sin(0.2 * k))  # noqa: E731
            recs, audit = audited_cycles(vb, bus, 36, state_values1, goals, need=50)
            n = len(recs)
            wait_for(lambda: vb.stats.instructions.get("SYNC_WRITE", 0) - writes0 >= n, 30.0, "the last goal write")
    assert vb.stats.held > 0 and sum(s.late for s in bus.stats.values()) > 0, bus.port.counters
    assert audit.stale_valid == 0, audit.examples
    assert audit.before_sent == 0 and audit.checked > 50, (audit.checked, n)  # 4 ms margin
    assert sum(s.corrupt for s in bus.stats.values()) > 0
    assert vb.stats.instructions["SYNC_WRITE"] - writes0 == n  # one goal write per cycle, no gains


def test_bus1_silent_servo_is_skipped_then_reprobed_and_counted_as_timeouts():
    """As the 2.0 bus: 3 misses → skipped (not asked, no slot waited for), re-probed, back when it answers."""
    ids = [1, 2, 3, 4, 5, 6]
    with VirtualBus1(ids=ids, model="mx106-p1", return_delay=0, truth=True) as vb:
        cfg = BusConfig(
            port=vb.device,
            ids=ids,
            model="mx106-p1",
            protocol="dxl1",
            timeout_ms=100.0,
            skip_after=3,
            probe_period_s=0.05,
        )
        with DynamixelBus1(cfg) as bus:
            bus.connect()
            bus.setup()
            vb.set_silent(6)
            st = bus.stats[6]
            for _ in range(50):
                s = bus.cycle(np.zeros(6))
                assert not s.valid[5]
                if st.skipping:
                    break
            assert st.skipping and st.timeouts >= 3 and st.corrupt == 0 and bus.skipped == [6]
            assert "re-probed every 0.05 s" in bus.servo_status(6)
            timeouts, n_reads = st.timeouts, len(vb.truth.rd_t)
            t0, tr0, probes0 = time.monotonic(), bus.transactions, st.probes
            cycles = 0
            while time.monotonic() - t0 < 0.2 or cycles < 20:
                s = bus.cycle(np.zeros(6))
                cycles += 1
                assert not s.valid[5] and np.isnan(s.position[5]) and s.valid[:5].all()
            probes = st.probes - probes0
            assert probes >= 1 and st.timeouts == timeouts  # probes are not bulk-read timeouts
            assert bus.transactions - tr0 == 2 * cycles + probes  # BULK_READ + SYNC_WRITE, plus the probes
            assert set(vb.truth.rd_n[n_reads:]) <= {5}  # the bulk reads asked 5 servos only
            vb.set_silent(6, False)
            wait_for(lambda: not bus.cycle(np.zeros(6)) or not st.skipping, 5.0)
            wait_for(lambda: bus.cycle(np.zeros(6)).valid.all(), 2.0)
            assert bus.servo_status(6) == "ok"


def test_bus1_goal_limits_p_gain_alarm_and_reboot_equivalent():
    ids = [1, 2]
    with VirtualBus1(ids=ids, model="mx106-p1", return_delay=0, loads=ServoLoad()) as vb:
        cfg = BusConfig(port=vb.device, ids=ids, model="mx106-p1", protocol="dxl1", timeout_ms=100.0, p_gain=True)
        with make_bus(cfg) as bus:
            bus.connect()
            bus.setup()
            bus.torque(True)
            writes = vb.stats.instructions.get("SYNC_WRITE", 0)
            for bad in (4.0, -3.5, float("nan")):
                with pytest.raises(GoalRejected):
                    bus.cycle([0.0, bad], [32, 32])
            assert vb.stats.instructions.get("SYNC_WRITE", 0) == writes  # nothing written
            cycles, s = 0, None  # at least 100 cycles, then until the servos (real-time physics) arrive
            while cycles < 100 or (cycles < 5000 and not np.allclose(s.position, [0.4, -0.3], atol=0.02)):
                s, cycles = bus.cycle([0.4, -0.3], [40, 24]), cycles + 1
            np.testing.assert_allclose(s.position, [0.4, -0.3], atol=0.02)
            np.testing.assert_allclose(vb.p[:, P_KP], [40, 24])
            wait_for(lambda: vb.stats.instructions["SYNC_WRITE"] - writes == cycles + 1)  # gains once, goals each cycle
            with pytest.raises(ValueError, match="p_gains"):
                bus.cycle([0.0, 0.0], [300, 32])  # beyond the 0..254 register
            vb.inject_overload(2)
            h = bus.read_health()
            assert h.hw_error.tolist() == [0, ct.HW_OVERLOAD] and h.valid.all() and h.torque.tolist() == [1, 1]
            np.testing.assert_allclose(h.voltage, vb.supply_voltage, atol=0.1)
            # Shutdown (18) = 36 includes overload: the 1.0 firmware cuts the output by Torque Limit (34) := 0 and
            # leaves Torque Enable at 1 (e-manual, AX-12A / MX-28 (1.0), Torque Limit); the health read says so
            assert vb.regs.get("PWM Limit").tolist() == [1023, 0] and h.shutdown.tolist() == [False, True]
            bus.reboot(2)
            assert bus.hardware_error(2) == 0 and bus.read_health().hw_error.tolist() == [0, 0]
            assert vb.regs.get("PWM Limit").tolist() == [1023, 1023] and not bus.read_health().shutdown.any()
            # goal = the position read at the reboot; the servo is free (torque cut by the overload) and still
            # settling, so two reads later it may be a few counts further (2 seen in CI; 5 counts = 0.44°)
            assert abs(bus.read_item(2, "Goal Position") - bus.read_item(2, "Present Position")) <= 5
            bus.torque(True)
            vb.brown_out(1)  # restarts by itself: RAM from 24 at defaults, torque off, no alarm
            h = bus.read_health()
            assert h.torque.tolist() == [0, 1] and h.hw_error.tolist() == [0, 0] and h.valid.all()
            assert not h.shutdown.any()  # a brown-out: Torque Limit back at Max Torque (14), not 0
            assert (
                vb.regs.value(0, "Position P Gain") == 32 and abs(vb.goal[0] - vb.theta[0]) < 2 * vb.table.rad_per_count
            )


def test_bus1_items_by_name_are_sign_magnitude_as_the_e_manual_says(monkeypatch):
    """ROBOTIS e-manual, MX-64 (Protocol 1.0), Control Table Description: Present Speed (38), Present Load (40) and
    Goal Torque (71) are 0–2047 with bit 10 as the direction (0–1023 CCW, 1024–2047 CW; 0 and 1024 both stop), so
    CW = negative is 1024 + magnitude. read_item / write_item follow it, as the cycle does (before: two's complement:
    Present Speed 0x0420 read as 1056, Present Load 0x07FF as 2047, Goal Torque −100 written 0xFF9C)."""
    with VirtualBus1(ids=[1], model="mx64-p1", return_delay=0, loads=ServoLoad()) as vb:
        monkeypatch.setattr(vb.servos, "publish", lambda *a: None)  # the registers below stay as set
        raw = {"Present Velocity": [0x0420, 0x0020, 0x0400], "Present Load": [0x07FF, 0x03FF, 0x0464]}
        cfg = BusConfig(port=vb.device, ids=[1], model="mx64-p1", protocol="dxl1", timeout_ms=100.0)
        with DynamixelBus1(cfg) as bus:
            bus.connect()
            got = {}
            for name, values in raw.items():
                got[name] = []
                for v in values:
                    with vb._lock:
                        vb.regs.set(name, v)
                    got[name].append(bus.read_item(1, name))
            assert got == {"Present Velocity": [-32, 32, 0], "Present Load": [-1023, 1023, -100]}
            a = bus.table.item("Goal Torque").address
            for value, want in ((-100, 0x0464), (100, 0x0064), (-1023, 0x07FF)):
                bus.write_item(1, "Goal Torque", value)
                assert int.from_bytes(vb.regs.mem[0, a : a + 2].tobytes(), "little") == want, value
                assert bus.read_item(1, "Goal Torque") == value
            for bad in (1024, -1024):  # beyond 10 magnitude bits: refused, nothing written (1024 would read as −0)
                with pytest.raises(ValueError, match="Goal Torque"):
                    bus.write_item(1, "Goal Torque", bad)
            assert int.from_bytes(vb.regs.mem[0, a : a + 2].tobytes(), "little") == 0x07FF


def test_ax12_bus_reads_each_servo_and_writes_kp_as_compliance_slope():
    ids = [1, 2, 3]
    with VirtualBus1(ids=ids, model="ax12a", params=preset("mx28", "m1"), return_delay=0) as vb:
        cfg = BusConfig(port=vb.device, ids=ids, model="ax12a", protocol="dxl1", timeout_ms=100.0, p_gain=True)
        with make_bus(cfg) as bus:
            assert bus.connect() == (ids, [])
            bus.setup()
            bus.torque(True)
            t0 = bus.transactions
            for _ in range(60):
                s = bus.cycle([0.5, 0.0, -0.5], [64, 64, 64])
            assert bus.transactions - t0 == 60 * (3 + 1) + 1  # 3 READs + the goal write; the slopes once
            assert vb.regs.get("CW Compliance Slope").tolist() == [16, 16, 16]
            # the emulated servos move in wall time: cycle on until they arrive (60 fast cycles may be too soon)
            t_end = time.monotonic() + 30.0
            while not np.all(np.abs(np.asarray(s.position) - [0.5, 0.0, -0.5]) <= 0.03) and time.monotonic() < t_end:
                s = bus.cycle([0.5, 0.0, -0.5], [64, 64, 64])
            np.testing.assert_allclose(s.position, [0.5, 0.0, -0.5], atol=0.03)
            assert "AX: no BULK_READ" in bus.stats_summary()


@pytest.mark.parametrize(
    "model,item,old,new,per_cycle",
    [("mx106-p1", "Position P Gain", 32, 64, 2), ("ax12a", "CW Compliance Slope", 32, 16, 3)],
)
def test_bus1_a_lost_p_gain_write_is_found_by_the_health_read_and_sent_again(model, item, old, new, per_cycle, caplog):
    """One SYNC_WRITE of the P gain (MX: P Gain 28; AX: Compliance Slopes 28–29) lost on the wire: the next health
    read (24–43 covers 28–29) finds the register other than written, the next cycle writes it again, one warning per
    servo; no transaction added to a cycle (before: never sent again — after 145 cycles and 2 health reads the
    registers still read [32, 32] against kp 64 asked)."""
    ids = [1, 2]
    extra = {"params": preset("mx28", "m1")} if model == "ax12a" else {}
    with losing_one_gain_write(VirtualBus1, 28)(ids=ids, model=model, return_delay=0, **extra) as vb:
        cfg = BusConfig(port=vb.device, ids=ids, model=model, protocol="dxl1", timeout_ms=100.0, p_gain=True)
        with make_bus(cfg) as bus:
            bus.connect()
            bus.setup()
            bus.cycle([0.0, 0.0], [32, 32])
            bus.read_health()  # read back as written: nothing to do
            vb.lose_next = True
            t0 = bus.transactions
            for _ in range(5):
                bus.cycle([0.0, 0.0], [64, 64])
            assert bus.transactions - t0 == 5 * per_cycle + 1  # the gains once (lost), then goals only
            assert [bus.read_item(i, item) for i in ids] == [old, old]
            with caplog.at_level(logging.WARNING):
                h = bus.read_health()
            assert h.valid.all()
            lines = [r.getMessage() for r in caplog.records if "lost write" in r.getMessage()]
            assert [line.split(":")[0] for line in lines] == ["id 1", "id 2"], lines
            assert f"reads {old}, {new} was written" in lines[0], lines
            t0 = bus.transactions
            bus.cycle([0.0, 0.0], [64, 64])
            assert bus.transactions - t0 == per_cycle + 1  # sent again, in the cycle after the health read
            assert [bus.read_item(i, item) for i in ids] == [new, new]
            bus.read_health()
            t0 = bus.transactions
            for _ in range(5):
                bus.cycle([0.0, 0.0], [64, 64])
            assert bus.transactions - t0 == 5 * per_cycle  # in force: nothing more
            assert len([r for r in caplog.records if "lost write" in r.getMessage()]) == 2


def test_bus1_a_servo_that_rebooted_gets_its_gain_again_without_a_lost_write_warning(caplog):
    """A brown-out puts P Gain (28) back at its power-on 32 and torque off: the health read finds torque off on a
    servo this bus turned on, forgets its gain quietly and the next cycle writes it again (before: 'id 2: P Gain
    (28) reads 32, 40 was written (a lost write)', using up that servo's one warning)."""
    ids = [1, 2]
    with VirtualBus1(ids=ids, model="mx106-p1", return_delay=0) as vb:
        cfg = BusConfig(port=vb.device, ids=ids, model="mx106-p1", protocol="dxl1", timeout_ms=100.0, p_gain=True)
        with make_bus(cfg) as bus:
            bus.connect()
            bus.setup()
            bus.cycle([0.0, 0.0], [40, 40])
            bus.torque(True)
            bus.read_health()
            with vb._lock:
                vb.brown_out(2)
            assert vb.regs.get("Position P Gain").tolist() == [40, 32]
            with caplog.at_level(logging.WARNING):
                h = bus.read_health()
                assert h.torque.tolist() == [1, 0]
                bus.setup([2])  # the node's restore
                bus.cycle([0.0, 0.0], [40, 40])
                assert [bus.read_item(i, "Position P Gain") for i in ids] == [40, 40]  # after the sync write
                bus.torque(True, [2])
                bus.read_health()
            assert not [r.getMessage() for r in caplog.records if "lost write" in r.getMessage()]
            assert bus._gains.rewrites == {}


def test_bus1_a_brown_out_of_a_servo_with_max_torque_0_is_not_an_alarm_shutdown(caplog):
    """Max Torque (14) 0: Torque Limit (34) is 0 at power-on; set-up says the servo has no output until an effort
    limit is written (one warning, not repeated by the next set-up). With an effort limit written and torque on, a
    brown-out (Torque Enable 0, Torque Limit back at Max Torque: 0) is not reported as an alarm shutdown (before:
    ``Health.shutdown`` True, the node latched it and never restored the knee: review 19b, Torque Enable [1, 0],
    unrequested_reboots [0, 0]); an alarm shutdown (Torque Enable 1, Torque Limit 0) still is."""
    ids = [1, 2]
    with VirtualBus1(ids=ids, model="mx106-p1", return_delay=0) as vb:
        vb.regs.set("Max Torque", 0, [1])
        vb.regs.set("PWM Limit", 0, [1])  # as at power-on
        cfg = BusConfig(port=vb.device, ids=ids, model="mx106-p1", protocol="dxl1", timeout_ms=100.0)
        with make_bus(cfg) as bus:
            bus.connect()
            with caplog.at_level(logging.WARNING):
                bus.setup()
                bus.setup([2])
            said = [r.getMessage() for r in caplog.records if "Max Torque (14) is 0" in r.getMessage()]
            assert len(said) == 1 and said[0].startswith("id 2:"), said
            bus.write_item(2, "PWM Limit", 122)  # an effort limit
            bus.torque(True)
            assert not bus.read_health().shutdown.any()
            with vb._lock:
                vb.brown_out(2)
            assert vb.regs.get("PWM Limit").tolist() == [1023, 0] and vb.regs.get("Torque Enable").tolist() == [1, 0]
            h = bus.read_health()
            assert h.torque.tolist() == [1, 0] and h.shutdown.tolist() == [False, False], "a brown-out, not a cut"
            bus.setup([2])  # the node's restore: set-up, the effort limit again, torque on
            bus.write_item(2, "PWM Limit", 122)
            bus.torque(True, [2])
            vb.inject_overload(2)
            h = bus.read_health()
            assert h.torque.tolist() == [1, 1] and h.shutdown.tolist() == [False, True], "an alarm shutdown"


def test_bus1_setup_raises_a_status_return_level_below_2_before_any_acknowledged_write(caplog):
    """Servos at Status Return Level 1 (PING and READ answered only): set-up reads the level, writes 2 without
    waiting for a status, reads it back, then torque off …; one line per servo (before: Torque Enable was written
    first and waited for a status that never came: 'setup of id 1 failed after 2 attempt(s): write 'Torque
    Enable'=0 … There is no status packet!'). A level that cannot be written (EEPROM Lock 47 = 1) fails set-up
    naming Status Return Level."""
    ids = [1, 2]
    vb = VirtualBus1(ids=ids, model="mx106-p1", return_delay=0)
    vb.regs.set("Status Return Level", 1)
    with vb:
        cfg = BusConfig(port=vb.device, ids=ids, model="mx106-p1", protocol="dxl1", timeout_ms=100.0, retries=1)
        with make_bus(cfg) as bus:
            assert bus.connect() == (ids, [])
            with caplog.at_level(logging.INFO):
                bus.setup()
            assert vb.regs.get("Status Return Level").tolist() == [2, 2]
            lines = [r.getMessage() for r in caplog.records if "Status Return Level 1 -> 2" in r.getMessage()]
            assert [line.split(":")[0] for line in lines] == ["id 1", "id 2"], lines
            bus.torque(True)
            assert vb.regs.get("Torque Enable").tolist() == [1, 1]
            writes = vb.stats.instructions["WRITE"]
            bus.setup()  # at 2 already: read, not written
            assert vb.stats.instructions["WRITE"] - writes == 2  # torque off, each servo (Return Delay Time in place)
            vb.regs.set("Status Return Level", 1, [1])
            vb.regs.set("Lock", 1, [1])  # EEPROM locked: the level cannot change
            with pytest.raises(BusError, match=r"setup of id 2 failed .*Status Return Level of id 2 is 1; writing 2"):
                bus.setup()


def test_unknown_model_number_names_id_number_and_tables():
    with VirtualBus1(ids=[1, 2], model="mx106-p1", return_delay=0) as vb:
        vb.mem[1, 0:2] = [1234 & 0xFF, 1234 >> 8]  # servo 2 reports a model number without a table
        cfg = BusConfig(port=vb.device, ids=[1, 2], model="mx106-p1", protocol="dxl1", timeout_ms=100.0)
        with DynamixelBus1(cfg) as bus, pytest.raises(BusError) as e:
            bus.connect()
    msg = str(e.value)
    assert "id 2" in msg and "model number 1234" in msg and "12 (ax12a), 310 (mx64-p1), 320 (mx106-p1)" in msg


@pytest.mark.parametrize(
    "argv,message",
    [
        (
            ["--protocol", "dxl1", "--servo", "mx106"],
            "--servo mx106 (MX-106(2.0)) speaks protocol dxl2, not --protocol dxl1; servos of dxl1: ",
        ),
        (["--protocol", "dxl1", "--servo", "mx106-p1", "--baud", "1500000"], "baud 1500000: not on the"),
        (["--protocol", "dxl1", "--servo", "ax12a"], "no identified preset"),
    ],
)
def test_cli_refuses_bad_protocol_servo_and_baud(argv, message, capsys):
    from servo_ff.cli.virtual_bus import main

    assert main(argv) == 2
    assert message in capsys.readouterr().err
