"""X-series Protocol 2.0 tables (tables/*.yaml) against the ROBOTIS e-manual values they cite, and the virtual bus
running an XL330 table (stock SDK and DynamixelBus on the pty)."""

import dxl_harness
import numpy as np
import pytest
from dynamixel_sdk import COMM_SUCCESS, PacketHandler

from servo_ff.bus import control_table as ct
from servo_ff.bus.dynamixel.bus import BusConfig, DynamixelBus
from servo_ff.bus.virtual_bus import ServoLoad, VirtualBus
from servo_ff.models.firmware import FIRMWARE_LAWS
from servo_ff.models.params import P_KP
from servo_ff.models.presets import preset_servo

# e-manual https://emanual.robotis.com/docs/en/dxl/x/<key>/ control tables: model number, Temperature Limit(31),
# Max/Min Voltage Limit(32/34), Current Limit(38) (None: no current sensing), Velocity Limit(44), Shutdown(63),
# Velocity I/P Gain(76/78), Position D/I/P Gain(80/82/84), Indirect Data 1 address, number of indirect items.
MANUAL = {
    "xl330-m288": (1200, 70, 70, 35, 1750, 445, 53, 1600, 180, 0, 0, 400, 208, 20),
    "xl330-m077": (1190, 70, 70, 35, 1750, 1620, 53, 400, 40, 0, 400, 400, 208, 20),
    "xl430-w250": (1060, 72, 140, 60, None, 265, 52, 1000, 100, 4000, 0, 640, 224, 28),
    "xc330-m288": (1240, 70, 70, 35, 2352, 350, 52, 1600, 50, 500, 0, 1100, 208, 20),
    "xc330-m181": (1230, 70, 70, 35, 2352, 545, 52, 1400, 100, 500, 0, 1200, 208, 20),
    "xc330-t288": (1220, 70, 140, 55, 910, 320, 52, 1200, 40, 0, 0, 900, 208, 20),
    "xc330-t181": (1210, 70, 140, 55, 910, 510, 52, 1200, 40, 0, 0, 900, 208, 20),
}
ITEMS = (
    "Temperature Limit",
    "Max Voltage Limit",
    "Min Voltage Limit",
    "Current Limit",
    "Velocity Limit",
    "Shutdown",
    "Velocity I Gain",
    "Velocity P Gain",
    "Position D Gain",
    "Position I Gain",
    "Position P Gain",
)


@pytest.mark.parametrize("key", sorted(MANUAL))
def test_x_table_matches_the_e_manual(key):
    t = ct.control_table(key)
    number, *defaults, ind_data, n_ind = MANUAL[key]
    assert (t.protocol, t.model_number) == ("dxl2", number)
    assert t.source == f"https://emanual.robotis.com/docs/en/dxl/x/{key}/"
    assert ct.control_table(number) is t  # by the model number a servo reports over 2.0
    for name, value in zip(ITEMS, defaults):
        if value is None:
            assert name not in t.by_name
        else:
            assert t.item(name).default == value, name
    # the common X layout: addresses and sizes
    for name, (addr, size) in {
        "Return Delay Time": (9, 1),
        "PWM Limit": (36, 2),
        "Max Position Limit": (48, 4),
        "Torque Enable": (64, 1),
        "Hardware Error Status": (70, 1),
        "Position P Gain": (84, 2),
        "Goal Position": (116, 4),
        "Present Velocity": (128, 4),
        "Present Position": (132, 4),
        "Present Input Voltage": (144, 2),
        "Present Temperature": (146, 1),
        "Backup Ready": (147, 1),
        "Indirect Address 1": (168, 2),
    }.items():
        assert (t.item(name).address, t.item(name).size) == (addr, size), name
    assert t.item("Indirect Data 1").address == ind_data
    assert (
        t.item(f"Indirect Data {n_ind}").address == ind_data + n_ind - 1
        and f"Indirect Data {n_ind + 1}" not in t.by_name
    )
    assert t.item(f"Indirect Address {n_ind}").default == ind_data + n_ind - 1  # each points at its own data
    # units: 4096 counts/rev, 0.229 rpm, 0.1 V; current 1 mA, or Present Load (0.1 %) on the XL430
    assert t.rad_per_count == pytest.approx(2 * np.pi / 4096) and t.center == 2048
    assert t.velocity_unit == pytest.approx(0.229 * 2 * np.pi / 60) and t.voltage_unit == pytest.approx(0.1)
    if key == "xl430-w250":
        assert t.current_unit is None and t.item("Present Load").address == 126 and t.load_unit == 1e-3
    else:
        assert t.current_unit == pytest.approx(1e-3) and t.item("Present Current").address == 126


#: MX 2.0 tables: bam's MX kp is the protocol-1 P (Kp = P/8) and the 2.0 register KPP·128, so register = 16·kp; on
#: every other table (X-series: K_PP = register/128 as the firmware rows xm430 and xl330 define kp; protocol 1; STS)
#: kp is the register itself (servo_interface_params.KP_UNIT)
MX2 = ("mx28", "mx64", "mx106")


def test_every_table_reads_its_factory_p_gain_as_the_kp_of_its_firmware_law():
    """Before, a table without ``p_gain_per_kp`` fell back to the MX scale 16: XM430, XM430-W210, XC330 and XL430
    read their factory register 800 … 1200 as kp 50 … 75, and kp 800 (the sim's XM430 default) wrote 12800."""
    for key, t in ct.CONTROL_TABLES.items():
        per = 16.0 if key in MX2 else 1.0
        assert t.p_gain_per_kp == per, key
        if "Position P Gain" in t.by_name:
            factory = t.item("Position P Gain").default
            assert ct.p_gain_to_kp(factory, t) == factory / per and ct.kp_to_p_gain(factory / per, t) == factory
    assert (
        ct.kp_to_p_gain(800.0, ct.control_table("xm430")) == 800
        and ct.kp_to_p_gain(32.0, ct.control_table("mx106")) == 512
    )


def test_the_factory_p_gain_reads_back_as_the_sim_presets_default_kp():
    """Where the sim has a preset of the table's servo, the factory register reads back as its default kp (the
    firmware row's); MX 2.0 differs: its factory 850 (K_PP 6.64) reads as kp 53.125, while bam identified its MX
    presets on 1.0 firmware at the 1.0 factory P 32 (e-manual mx-106: P Gain 32; mx-106-2: Position P Gain 850)."""
    preset_of = {k: preset_servo(k) for k in ct.CONTROL_TABLES if preset_servo(k) and k not in MX2}
    assert preset_of == {
        "xm430": "xm430",
        "xl330-m288": "xl330",
        "sts3215": "sts3215",
        "mx106-p1": "mx106",
        "mx64-p1": "mx64",
    }
    for key, servo in preset_of.items():
        t = ct.control_table(key)
        assert ct.p_gain_to_kp(t.item("Position P Gain").default, t) == FIRMWARE_LAWS[servo].kp, key
    for key in MX2:
        t = ct.control_table(key)
        assert ct.p_gain_to_kp(t.item("Position P Gain").default, t) == 53.125 and FIRMWARE_LAWS[key].kp == 32.0


@pytest.fixture(autouse=True)
def patient_sdk(monkeypatch):
    import dynamixel_sdk.port_handler

    monkeypatch.setattr(dynamixel_sdk.port_handler, "LATENCY_TIMER", 100)


def test_virtual_bus_runs_an_xl330_table():
    """PING reports 1200; Position P Gain 400 is the law's kp (firmware row xl330); the indirect bank at 208."""
    with VirtualBus(ids=[1, 2], model="xl330-m288", supply_voltage=5.0, return_delay=0) as vb:
        port, ph = dxl_harness.sdk_port(vb.device), PacketHandler(2.0)
        assert ph.ping(port, 2) == (1200, COMM_SUCCESS, 0)
        assert ph.read2ByteTxRx(port, 1, 84) == (400, COMM_SUCCESS, 0)
        assert vb.p[0, P_KP] == 400.0
        assert ph.write2ByteTxRx(port, 1, 168, 146) == (COMM_SUCCESS, 0)  # Indirect Address 1 → temperature
        assert ph.read1ByteTxRx(port, 1, 208) == (30, COMM_SUCCESS, 0)
        assert ph.read2ByteTxRx(port, 1, 144) == (50, COMM_SUCCESS, 0)  # 5.0 V
        port.closePort()


def test_dynamixel_bus_cycles_an_xl330_with_p_gain_and_health():
    """DynamixelBus maps its health/gain indirect block onto the XL330's bank at 208 and reaches its goals."""
    ids = [1, 2, 3]
    with VirtualBus(ids=ids, model="xl330-m288", supply_voltage=5.0, return_delay=0, loads=ServoLoad()) as vb:
        cfg = BusConfig(port=vb.device, ids=ids, model="xl330-m288", timeout_ms=30.0, p_gain=True)
        with DynamixelBus(cfg) as bus:
            bus.connect()
            bus.setup()
            bus.torque(True)
            goals = np.array([0.3, -0.2, 0.1])
            for _ in range(200):
                s = bus.cycle(goals, np.full(3, 400))
                if s.valid.all() and np.allclose(s.position, goals, atol=0.02):
                    break
            np.testing.assert_allclose(s.position, goals, atol=0.02)
            np.testing.assert_allclose(vb.goal, goals, atol=1e-3)
            h = bus.read_health()
            np.testing.assert_allclose(h.voltage, 5.0, atol=0.05)
            assert (h.hw_error == 0).all() and (h.temperature == 30).all()
