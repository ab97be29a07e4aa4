"""The STS control tables (bus/feetech/tables/sts3215.yaml, sts3250.yaml): addresses and sizes from the Feetech memory
table, model numbers, sign-magnitude items, baud codes, units and the P gain scale of bam's kp."""

import math

import numpy as np
import pytest

from servo_ff.bus import control_table as ct
from servo_ff.bus.feetech import status
from servo_ff.bus.feetech.registers import encode_many
from servo_ff.models.firmware import FIRMWARE_LAWS


@pytest.mark.parametrize("key,number", [("sts3215", 777), ("sts3250", 2825)])
def test_addresses_sizes_and_model_numbers(key, number):
    t = ct.control_table(key)
    assert (t.protocol, t.model_number) == ("sts", number)
    assert ct.control_table(number, protocol="sts") is t
    expect = {
        "Model Number": (3, 2),
        "ID": (5, 1),
        "Baud Rate": (6, 1),
        "Return Delay Time": (7, 1),
        "Status Return Level": (8, 1),
        "Min Position Limit": (9, 2),
        "Max Position Limit": (11, 2),
        "Position P Gain": (21, 1),
        "Homing Offset": (31, 2),
        "Torque Enable": (40, 1),
        "Goal Position": (42, 2),
        "Lock": (55, 1),
        "Present Position": (56, 2),
        "Present Velocity": (58, 2),
        "Present Load": (60, 2),
        "Present Input Voltage": (62, 1),
        "Present Temperature": (63, 1),
        "Hardware Error Status": (65, 1),
        "Present Current": (69, 2),
    }
    for name, (addr, size) in expect.items():
        it = t.item(name)
        assert (it.address, it.size) == (addr, size), name
    # the cycle's state block 56..61 is exactly position + velocity + load; health 62..65 ends with the status
    assert {t.at(a).name for a in range(56, 62)} == {"Present Position", "Present Velocity", "Present Load"}
    assert all(t.item(n).eeprom for n in ("ID", "Position P Gain", "Max Position Limit"))
    assert not t.item("Torque Enable").eeprom and not t.item("Lock").eeprom
    assert t.source.startswith("Feetech STS series memory table")


def test_sign_magnitude_items_and_units():
    t = ct.control_table("sts3215")
    assert [t.sign_bit_of(n) for n in ("Present Position", "Present Velocity", "Present Load", "Homing Offset")] == [
        15,
        15,
        10,
        11,
    ]
    assert t.encode("Present Load", -5) == 0x405 and t.decode("Present Load", [0x405, 5]).tolist() == [-5, 5]
    assert t.encode("Goal Position", -3) == 0x8003 and t.decode("Present Velocity", 0x8000 | 3400) == -3400
    np.testing.assert_array_equal(encode_many(t, t.item("Present Velocity"), [-1, 40000]), [0x8001, 0x7FFF])
    assert t.position_to_rad(2048 + 1024) == pytest.approx(math.pi / 2)
    assert t.velocity_unit == pytest.approx(2 * math.pi / 4096)  # counts/s
    assert (t.voltage_unit, t.load_unit, t.current_unit) == (0.1, 0.001, 0.0065)
    assert ct.position_range_counts(t) == (0, 4095)


def test_baud_codes_and_p_gain_scale():
    t = ct.control_table("sts3215")
    assert t.baud_codes == {
        1_000_000: 0,
        500_000: 1,
        250_000: 2,
        128_000: 3,
        115_200: 4,
        76_800: 5,
        57_600: 6,
        38_400: 7,
    }
    # bam's STS3215Actuator: kp 32 is the P coefficient register itself (its default 32)
    assert FIRMWARE_LAWS["sts3215"].kp == 32.0 and t.item("Position P Gain").default == 32
    assert int(ct.kp_to_p_gain(32.0, t)) == 32 and float(ct.p_gain_to_kp(20, t)) == 20.0
    assert t.p_gain_max == 254


def test_status_bits_map_onto_the_hardware_error_layout():
    assert status.to_hw_error(status.OVERLOAD | status.VOLTAGE) == ct.HW_OVERLOAD | ct.HW_INPUT_VOLTAGE
    assert (
        ct.hardware_error_text(status.to_hw_error(status.SENSOR | status.TEMPERATURE)) == "overheating, motor encoder"
    )
    assert status.to_hw_error(np.array([0, status.CURRENT])).tolist() == [0, ct.HW_ELECTRICAL_SHOCK]
    assert status.text(0) == "ok" and status.text(status.OVERLOAD) == "overload"
