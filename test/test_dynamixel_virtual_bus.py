"""The unmodified dynamixel-sdk (PortHandler, PacketHandler 2.0, group classes) against the virtual bus on a pty."""

import json
import os
import subprocess
import sys

import dxl_harness
import numpy as np
import pytest
from dynamixel_sdk import (
    COMM_SUCCESS,
    GroupBulkRead,
    GroupBulkWrite,
    GroupSyncRead,
    GroupSyncWrite,
    PacketHandler,
)

from servo_ff.bus import control_table as ct
from servo_ff.bus.virtual_bus import Faults, ServoLoad, VirtualBus, spawn_virtual_bus
from servo_ff.models.firmware import FIRMWARE_LAWS
from servo_ff.models.params import P_KP
from servo_ff.ros.harness import wait_for

IDS = list(range(1, 21))


@pytest.fixture(autouse=True)
def patient_sdk(monkeypatch):
    """The SDK's packet timeout is 2·LATENCY_TIMER + 2 ms (34 ms). On this shared 2-core machine the server
    thread is sometimes not scheduled for that long (a ping timed out at 202 ms in a loaded CI run), so give the
    unmodified SDK a longer latency timer: 1 s per packet. Answers are still checked exactly."""
    import dynamixel_sdk.port_handler

    monkeypatch.setattr(dynamixel_sdk.port_handler, "LATENCY_TIMER", 500)


@pytest.fixture
def vbus():
    with VirtualBus(ids=IDS, model="mx106", loads=ServoLoad.fixed_inertia(0.005), return_delay=0) as vb:
        yield vb


def sdk_port(device):
    return dxl_harness.sdk_port(device), PacketHandler(2.0)


def test_ping_20_servos(vbus):
    port, ph = sdk_port(vbus.device)
    for i in IDS:
        model, result, error = ph.ping(port, i)
        assert (result, error, model) == (COMM_SUCCESS, 0, 321), i
    _, result, _ = ph.ping(port, 42)  # nobody there
    assert result != COMM_SUCCESS
    port.closePort()


def test_read_write_and_motion(vbus):
    port, ph = sdk_port(vbus.device)
    assert ph.read2ByteTxRx(port, 5, 84) == (850, COMM_SUCCESS, 0)  # Position P Gain default
    assert ph.write4ByteTxRx(port, 5, 116, 2048 + 512) == (COMM_SUCCESS, 0)
    assert ph.write1ByteTxRx(port, 5, 64, 1) == (COMM_SUCCESS, 0)
    wait_for(lambda: abs(ph.read4ByteTxRx(port, 5, 132)[0] - 2560) <= 3)
    wait_for(lambda: abs(vbus.snapshot()["theta"][4] - 512 * ct.RAD_PER_COUNT) < 3 * ct.RAD_PER_COUNT)
    assert vbus.snapshot()["theta"][5] == 0.0  # id 6 untouched, torque off, no gravity
    # read-only item, EEPROM with torque on, partial item, goal beyond the position limit
    assert ph.write1ByteTxRx(port, 5, 70, 0)[1] == 0x07  # access error
    assert ph.write1ByteTxRx(port, 5, 9, 0)[1] == 0x07  # Return Delay Time is EEPROM, torque is on
    assert ph.write2ByteTxRx(port, 5, 116, 100)[1] == 0x05  # data length error
    assert ph.write4ByteTxRx(port, 5, 116, 5000)[1] == 0x06  # data limit error (Max Position Limit 4095)
    assert ph.read4ByteTxRx(port, 5, 116) == (2560, COMM_SUCCESS, 0)  # the refused writes changed nothing
    # P gain register drives the firmware law (kp = register / 16)
    assert ph.write2ByteTxRx(port, 5, 84, 400) == (COMM_SUCCESS, 0)
    assert vbus.p[4, P_KP] == 25.0
    port.closePort()


def test_sync_read_and_sync_write_20_servos(vbus):
    port, ph = sdk_port(vbus.device)
    goals = {i: 2048 + 40 * i - 400 for i in IDS}
    sw = GroupSyncWrite(port, ph, 116, 4)
    for i, g in goals.items():
        assert sw.addParam(i, list(int(g).to_bytes(4, "little", signed=True)))
    assert sw.txPacket() == COMM_SUCCESS
    ten = GroupSyncWrite(port, ph, 64, 1)
    for i in IDS:
        ten.addParam(i, [1])
    assert ten.txPacket() == COMM_SUCCESS
    sr = GroupSyncRead(port, ph, 126, 10)
    for i in IDS:
        assert sr.addParam(i)

    def settled():
        if sr.txRxPacket() != COMM_SUCCESS:
            return False
        return all(abs(sr.getData(i, 132, 4) - goals[i]) <= 3 for i in IDS)

    wait_for(settled, 8.0)
    th = vbus.snapshot()["theta"]
    for k, i in enumerate(IDS):  # sync-read bytes are the simulated state
        pos = sr.getData(i, 132, 4)
        assert pos == round(th[k] / ct.RAD_PER_COUNT + 2048) or abs(pos - (th[k] / ct.RAD_PER_COUNT + 2048)) < 2
    assert vbus.stats.instructions["SYNC_READ"] >= 1 and vbus.stats.instructions["SYNC_WRITE"] == 2
    port.closePort()


def test_bulk_read_bulk_write_and_indirect(vbus):
    port, ph = sdk_port(vbus.device)
    bw = GroupBulkWrite(port, ph)
    assert bw.addParam(1, 84, 2, [0x90, 0x01])  # P gain 400
    assert bw.addParam(2, 116, 4, list((2100).to_bytes(4, "little")))
    assert bw.txPacket() == COMM_SUCCESS
    # indirect address 1..3 of id 3 → voltage (2 bytes) and temperature, read at 224
    for k, a in enumerate((144, 145, 146)):
        assert ph.write2ByteTxRx(port, 3, 168 + 2 * k, a) == (COMM_SUCCESS, 0)
    br = GroupBulkRead(port, ph)
    assert br.addParam(1, 84, 2) and br.addParam(2, 116, 4) and br.addParam(3, 224, 3)
    assert br.txRxPacket() == COMM_SUCCESS
    assert br.getData(1, 84, 2) == 400 and br.getData(2, 116, 4) == 2100
    assert br.getData(3, 224, 2) == 150 and br.getData(3, 226, 1) == 30  # 15.0 V, 30 °C
    port.closePort()


def test_reboot_clears_an_overload():
    with VirtualBus(ids=IDS, return_delay=0, faults=Faults(overload_at={7: 0.0})) as vb:
        port, ph = sdk_port(vb.device)
        wait_for(lambda: ph.read1ByteTxRx(port, 7, 70)[0] == ct.HW_OVERLOAD)
        value, result, error = ph.read1ByteTxRx(port, 7, 64)
        assert (value, result) == (0, COMM_SUCCESS) and error & 0x80  # torque off, alert bit in the status
        assert ph.write1ByteTxRx(port, 7, 64, 1)[1] & 0x7F == 0x01  # result fail: latched until REBOOT
        assert ph.read1ByteTxRx(port, 8, 70) == (0, COMM_SUCCESS, 0)  # neighbours unaffected
        assert ph.reboot(port, 7) == (COMM_SUCCESS, 0x80)  # status sent before the reboot
        assert ph.read1ByteTxRx(port, 7, 70) == (0, COMM_SUCCESS, 0)
        assert ph.write1ByteTxRx(port, 7, 64, 1) == (COMM_SUCCESS, 0)
        assert vb.snapshot()["enable"][6] == 1.0
        port.closePort()


def test_return_delay_time_is_honoured():
    """20 replies each held 500 µs (Return Delay Time) before they leave, on the bus's own account of its waits."""
    with VirtualBus(ids=IDS) as vb:  # default Return Delay Time 250 (500 µs)
        port, ph = sdk_port(vb.device)
        sr = GroupSyncRead(port, ph, 132, 4)
        for i in IDS:
            sr.addParam(i)
        assert sr.txRxPacket() == COMM_SUCCESS
        assert (vb.stats.replies, vb.stats.held_s) == (20, pytest.approx(20 * 500e-6))
        port.closePort()


def test_status_return_level_and_silent_servo(vbus):
    port, ph = sdk_port(vbus.device)
    assert ph.write1ByteTxRx(port, 4, 68, 1) == (COMM_SUCCESS, 0)  # reads and ping only from now on
    result, _ = ph.write4ByteTxRx(port, 4, 116, 2048)
    assert result != COMM_SUCCESS  # no status packet for a WRITE
    assert ph.read4ByteTxRx(port, 4, 116)[1] == COMM_SUCCESS
    vbus.set_silent(9)
    assert ph.ping(port, 9)[1] != COMM_SUCCESS
    assert ph.ping(port, 10)[1] == COMM_SUCCESS
    port.closePort()


def test_pendulum_hangs_and_holds_against_gravity():
    with VirtualBus(
        ids=[1, 2],
        loads={1: ServoLoad.pendulum(0.5, 0.2), 2: ServoLoad.fixed_inertia(0.01)},
        friction_model="m1",
        return_delay=0,
    ) as vb:
        vb.theta[:] = [0.5, 0.5]  # released: the pendulum swings back down, the inertia stays put
        # it comes to rest where m·g·l·sin θ no longer beats the static friction (≈0.1 N·m → |θ| < 0.2)
        wait_for(lambda: abs(vb.snapshot()["theta"][0]) < 0.2 and abs(vb.snapshot()["dtheta"][0]) < 1e-6, 6.0)
        assert vb.snapshot()["theta"][1] == pytest.approx(0.5)
        port, ph = sdk_port(vb.device)
        assert ph.write4ByteTxRx(port, 1, 116, 3072)[0] == COMM_SUCCESS  # horizontal: maximum gravity torque
        assert ph.write1ByteTxRx(port, 1, 64, 1)[0] == COMM_SUCCESS

        def physics_time() -> float:  # the emulator's own clock [s] (it steps on wall time)
            with vb._lock:
                return float(vb.servos.bank.time)

        def resting():  # stuck in friction for 0.1 s (θ̇ = 0 at a turning point alone is not rest)
            a, t0 = vb.snapshot(), physics_time()
            wait_for(lambda: physics_time() >= t0 + 0.1, 5.0, "0.1 s of the emulator's physics")
            b = vb.snapshot()
            return abs(a["dtheta"][0]) < 1e-9 and abs(b["dtheta"][0]) < 1e-9 and a["theta"][0] == b["theta"][0] > 1.3

        wait_for(resting, 8.0)
        theta = vb.snapshot()["theta"][0]
        current = ph.read2ByteTxRx(port, 1, 126)[0]
        assert vb.snapshot()["theta"][0] == theta  # still there when the current was read
        tau = ct.current_to_torque(current, ct.control_table("mx106"), kt=vb.params.kt)
        # holding torque = m·g·l·sin θ up to the Coulomb friction of the m1 preset (friction_base ≈ 0.10 N·m)
        fc = vb.params.friction["friction_base"]
        assert abs(tau - 0.5 * 9.80665 * 0.2 * np.sin(theta)) <= fc + 0.02
        port.closePort()


def test_cli_subprocess_serves_the_real_sdk():
    with spawn_virtual_bus(
        [
            "--ids",
            "1-3",
            "--servo",
            "mx64",
            "--return-delay",
            "0",
            "--overload",
            "2@0",
            "--sag",
            "3@0",
            "--load",
            "pendulum:0.3,0.1",
            "--load",
            "3=inertia:0.01",
        ]
    ) as proc:
        port, ph = sdk_port(proc.device)
        assert [ph.ping(port, i)[0] for i in (1, 2, 3)] == [311, 311, 311]
        wait_for(lambda: ph.read1ByteTxRx(port, 2, 70)[0] == ct.HW_OVERLOAD)
        assert ph.read2ByteTxRx(port, 1, 144)[0] == 120  # preset vin 15 V − 3 V sag, 0.1 V units
        port.closePort()


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--ids", "1-x"], "--ids '1-x'"),
        (["--overload", "three"], "--overload 'three'"),
        (["--silent", "2@"], "--silent '2@'"),
        (["--sag", "3"], "--sag '3'"),
        (["--load", "spring:1"], "--load 'spring:1'"),
        (["--load", "pendulum:-1,0.1"], "load.mass"),
        (["--servo", "ax12"], "valid models"),
        (["--servo", "xm430"], "no identified preset"),
        (["--drop-rate", "1.5"], "drop_rate"),
        (["--ids", "1-3", "--load", "9=inertia:0.1"], "ids [9]"),
        (["--return-delay", "300"], "return_delay"),
        (["--baud", "12345"], "baud 12345"),
        (["--firmware", "mx64"], "--firmware needs --params"),
    ],
)
def test_cli_rejects_bad_flags_with_the_flag_name(argv, message, capsys):
    from servo_ff.cli.virtual_bus import main

    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_cli_help_names_every_protocol_the_virtual_bus_serves():
    """``servo-ff --help``'s line for virtual-bus names each family (before: "Dynamixel Protocol 2.0 or Feetech STS",
    no Protocol 1.0, which ``--protocol dxl1`` serves)."""
    from servo_ff.bus.families import FAMILIES
    from servo_ff.cli import build_parser

    text = " ".join(build_parser().format_help().split())
    line = text[text.index("virtual-bus simulated servos") :]
    for f in FAMILIES.values():
        assert f.title.split(" (")[0] in line[: line.index(")")], f.protocol


def test_cli_params_of_an_actuator_without_a_law_need_firmware_then_serve_with_it(tmp_path):
    """``servo-ff virtual-bus --params FILE`` for an actuator no law is known for: exit 2, one line listing the
    known laws and how to give one, no traceback, nothing served. With ``--firmware LAW`` it serves, on that law's
    supply (the header line and the Present Input Voltage register)."""
    path = tmp_path / "ax12.json"
    params = {"kt": 1.0, "R": 2.0, "armature": 0.01, "friction_base": 0.01, "friction_viscous": 0.02}
    path.write_text(json.dumps({**params, "model": "m1", "actuator": "ax12"}))
    src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run(
        [sys.executable, "-m", "servo_ff", "virtual-bus", "--ids", "1", "--params", str(path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and proc.stdout == ""  # no traceback, no DEVICE line
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("servo-ff virtual-bus: error: ") and str(path) in line
    assert f"'ax12' has no known firmware law; known laws: {', '.join(FIRMWARE_LAWS)};" in line
    assert "'firmware' object" in line and "--firmware" in line
    for law in ("mx64", "xl330"):
        vin = FIRMWARE_LAWS[law].vin
        with spawn_virtual_bus(["--ids", "1", "--params", str(path), "--firmware", law]) as vb:
            header = vb.proc.stdout.readline()
            assert "actuator ax12/m1" in header and f"supply {vin:g} V" in header, header
            port, ph = sdk_port(vb.device)
            assert ph.ping(port, 1)[1] == COMM_SUCCESS
            assert ph.read2ByteTxRx(port, 1, 144)[0] == round(10 * vin)  # Present Input Voltage, 0.1 V units
            port.closePort()
        assert vb.proc.returncode is not None  # stopped with the context


def test_thermal_model_heats_a_stalled_servo_until_overheating_shuts_it_down():
    vb = VirtualBus(
        ids=[1, 2], thermal=True, thermal_capacity=0.3, thermal_resistance=20.0, loads=ServoLoad.pendulum(2.0, 0.3)
    )  # 5.9 N·m of gravity: holding it costs current
    vb.mem[:, 31] = 60  # Temperature Limit 60 °C
    vb.write_bytes(0, 116, (3072).to_bytes(4, "little"))  # id 1 holds the load horizontal
    vb.write_bytes(0, 64, b"\x01")
    t0 = vb._t_last
    hottest, k = 0.0, 0
    while not vb.hw_error[0] and k < 600:  # up to 30 s of simulated wall time in 50 ms ticks
        k += 1
        vb.advance(t0 + 0.05 * k)
        hottest = max(hottest, vb.read_bytes(0, 146, 1)[1][0])  # Present Temperature register
    snap = vb.snapshot()
    assert snap["hw_error"][0] == ct.HW_OVERHEATING and snap["enable"][0] == 0.0
    assert hottest > 60 and snap["temp"][1] == pytest.approx(30.0)  # id 2: torque off, no heat
    for j in range(1, 200):  # torque off: it cools back toward ambient, the error stays latched
        vb.advance(t0 + 0.05 * (k + j))
    assert vb.snapshot()["temp"][0] < hottest - 10 and vb.hw_error[0] == ct.HW_OVERHEATING


def test_wire_time_emulation_delays_replies():
    """A 14-byte ping reply at 57600 baud is held 14·10/57600 = 2.4 ms (its wire time) before it leaves, on the bus's
    own account of its waits (Return Delay Time 0)."""
    with VirtualBus(ids=[1], baud=57600, wire_time=True, return_delay=0) as vb:
        port, ph = sdk_port(vb.device)
        for _ in range(5):
            assert ph.ping(port, 1)[1] == COMM_SUCCESS
        assert (vb.stats.replies, vb.stats.held_s) == (5, pytest.approx(5 * 14 * 10 / 57600))
        assert ph.read1ByteTxRx(port, 1, 8)[0] == 1  # Baud Rate register: 1 = 57600
        port.closePort()


def test_truth_arrays_taken_while_a_row_is_appended_hold_whole_rows_only():
    """The bus thread appends a reply's fields one by one; a snapshot between two (an audit under load) had
    rp_read one longer than rp_fate: IndexError in audit_states (test_feetech_bus late/dropped, 1 of 6 runs)."""
    from servo_ff.bus.truth import TruthRecord

    rec = TruthRecord()
    rec.rp_read.append(0)
    rec.rp_id.append(1)  # rp_fate, rp_late, ... not yet
    a = rec.arrays()
    assert {len(a[k]) for k in a if k.startswith("rp_")} == {0}


def test_truth_arrays_taken_while_the_bus_appends_never_make_an_append_fail():
    """arrays() held numpy views of the columns while it copied them: the bus thread's append then raised
    BufferError, the reply was lost mid-row and every later reply was audited against its neighbour's truth
    (test_feetech_bus late/dropped: 91 "stale" entries, 'internal error #1 ... BufferError' in the bus's log;
    every stale report of 24 runs with the reverted aa4e9f9 was this). Here snapshots, one after another, while
    the bus thread appends 30,000 replies."""
    import threading

    from servo_ff.bus.truth import TruthRecord

    rec, errors, stop = TruthRecord(), [], threading.Event()

    def bus_thread():
        for j in range(30000):
            if stop.is_set():
                break
            try:
                rec.begin_read(56, 6, 1, float(j))
                rec.reply(j % 250, 0, False, float(j), bytes([j % 250]) * 6)
            except BufferError as e:
                errors.append(e)
            rec.end_read()

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # thread switches between any two bytecodes of arrays()
    th = threading.Thread(target=bus_thread)
    try:
        th.start()
        while th.is_alive():
            rec.arrays()
    finally:
        stop.set()
        th.join()
        sys.setswitchinterval(interval)
    a = rec.arrays()
    assert not errors, f"{len(errors)} appends failed: {errors[0]!r}"
    assert {len(a[k]) for k in a if k.startswith("rp_")} == {len(a["rp_id"])}
    assert np.array_equal(a["rp_data"][:, 0], a["rp_id"])  # each row's fields are one reply's
