"""Control tables as data and raw ↔ SI conversions."""

import dataclasses
import math

import numpy as np
import pytest

from servo_ff.bus import control_table as ct
from servo_ff.models.presets import preset


@pytest.mark.parametrize("model", ["mx28", "mx64", "mx106", "xm430"])
def test_addresses_and_sizes_from_the_e_manual(model):
    t = ct.control_table(model)
    expect = {
        "Return Delay Time": (9, 1),
        "Operating Mode": (11, 1),
        "PWM Limit": (36, 2),
        "Max Position Limit": (48, 4),
        "Min Position Limit": (52, 4),
        "Shutdown": (63, 1),
        "Torque Enable": (64, 1),
        "Status Return Level": (68, 1),
        "Hardware Error Status": (70, 1),
        "Position D Gain": (80, 2),
        "Position I Gain": (82, 2),
        "Position P Gain": (84, 2),
        "Goal Position": (116, 4),
        "Present PWM": (124, 2),
        "Present Velocity": (128, 4),
        "Present Position": (132, 4),
        "Present Input Voltage": (144, 2),
        "Present Temperature": (146, 1),
        "Indirect Address 1": (168, 2),
        "Indirect Data 1": (224, 1),
    }
    for name, (addr, size) in expect.items():
        it = t.item(name)
        assert (it.address, it.size) == (addr, size), name
    assert t.item("PWM Limit").default == 885
    assert t.item("Return Delay Time").default == 250
    cur = "Present Current" if model != "mx28" else "Present Load"
    assert (t.item(cur).address, t.item(cur).size) == (126, 2)
    # the 10-byte state block 126..135 is exactly current + velocity + position
    names = {t.at(a).name for a in range(126, 136)}
    assert names == {cur, "Present Velocity", "Present Position"}


def test_model_numbers_and_units():
    assert {k: ct.control_table(k).model_number for k in ("mx28", "mx64", "mx106", "xm430")} == {
        "mx28": 30,
        "mx64": 311,
        "mx106": 321,
        "xm430": 1020,
    }
    assert ct.control_table(321).name == "MX-106(2.0)"
    assert ct.control_table("MX-106").current_unit == pytest.approx(3.36e-3)
    assert ct.control_table("xm430").current_unit == pytest.approx(2.69e-3)
    assert not ct.control_table("mx28").has_current
    with pytest.raises(KeyError, match="valid models"):
        ct.control_table("ax12")
    with pytest.raises(KeyError, match="model number 999"):
        ct.control_table(999)
    with pytest.raises(KeyError, match="no control-table item 'Goal Curent'"):
        ct.control_table("mx106").item("Goal Curent")


def test_position_conversions_rep103():
    assert ct.counts_to_rad(2048) == 0.0
    assert ct.counts_to_rad(3072) == pytest.approx(math.pi / 2)
    assert ct.counts_to_rad(1024) == pytest.approx(-math.pi / 2)
    assert ct.counts_to_rad(2048 + 4096) == pytest.approx(2 * math.pi)
    c = np.arange(0, 4096, 7)
    assert np.array_equal(ct.rad_to_counts(ct.counts_to_rad(c)), c)
    with pytest.raises(ValueError, match="non-finite"):
        ct.rad_to_counts([0.0, np.nan])


def test_velocity_current_torque_voltage():
    assert ct.velocity_to_rad_s(1) == pytest.approx(0.229 * 2 * math.pi / 60)
    assert ct.velocity_to_rad_s(-100) == pytest.approx(-2.39809, rel=1e-5)
    assert ct.rad_s_to_velocity(ct.velocity_to_rad_s(1234)) == 1234
    mx106 = ct.control_table("mx106")
    assert ct.current_to_amps(1000, mx106) == pytest.approx(3.36)
    assert ct.amps_to_current(3.36, mx106) == 1000
    # τ = kt·I with the identified (bam m4) output torque constant of the MX-106
    assert ct.current_to_torque(100, mx106) == pytest.approx(0.336 * preset("mx106", "m4").kt)
    assert ct.current_to_torque(100, mx106, kt=2.0) == pytest.approx(0.672)
    # XM430-W350: the e-manual's stall torque / stall current at 12 V, 4.1 N·m / 2.3 A (before: none, effort NaN)
    assert ct.current_to_torque(100, ct.control_table("xm430")) == pytest.approx(0.269 * 4.1 / 2.3)
    no_kt = dataclasses.replace(ct.control_table("xm430"), kt=None)
    assert math.isnan(ct.current_to_torque(100, no_kt))  # kt unknown: effort NaN
    with pytest.raises(ValueError, match="no current sensor"):
        ct.current_to_amps(1, ct.control_table("mx28"))
    assert ct.voltage_to_volts(120) == pytest.approx(12.0)
    assert ct.pwm_to_duty(885) == 1.0
    assert ct.p_gain_to_kp(512) == 32.0 and ct.kp_to_p_gain(32) == 512


def test_defaults_bytes_and_hardware_error_text():
    mem = ct.control_table("mx106").defaults(17)
    assert int.from_bytes(mem[0:2], "little") == 321 and mem[7] == 17 and mem[9] == 250
    assert int.from_bytes(mem[84:86], "little") == 850
    assert mem[63] == ct.HW_OVERHEATING | ct.HW_ELECTRICAL_SHOCK | ct.HW_OVERLOAD
    # Indirect Address k defaults to Indirect Data k (224 + k − 1)
    assert int.from_bytes(mem[168:170], "little") == 224 and int.from_bytes(mem[222:224], "little") == 251
    assert ct.hardware_error_text(0) == "ok"
    assert ct.hardware_error_text(ct.HW_OVERLOAD | ct.HW_INPUT_VOLTAGE) == "input voltage, overload"


def test_yaml_table_loader_and_encodings(tmp_path):
    """A table as data: items by X-series name, units as fields; sign-magnitude (Feetech, bit 15) and two's
    complement encodings; malformed files name the file and the key."""
    f = tmp_path / "demo.yaml"
    f.write_text(
        "name: DEMO\nmodel_number: 7\nprotocol: sts\nsource: test\ncurrent_unit: 0.0065\nsign_bit: 15\n"
        "rad_per_count: 0.0015339807878856412\np_gain_per_kp: 1\nitems:\n"
        "  Goal Position: [42, 2, RW, 0, signed]\n  Present Position: [56, 2, R, 0, signed]\n"
        "  ID: [5, 1, RW, 1, eeprom]\n"
    )
    t = ct.load_table(f)
    assert (t.protocol, t.item("ID").eeprom, t.item("Goal Position").address) == ("sts", True, 42)
    assert t.encode("Goal Position", -5) == 0x8005 and t.decode("Goal Position", [0x8005, 5]).tolist() == [-5, 5]
    assert t.position_to_rad(2048 + 1024) == pytest.approx(math.pi / 2)
    twos = ct.control_table("mx106")
    assert twos.encode("Present Velocity", -2) == 2**32 - 2 and twos.decode("Present Velocity", 2**32 - 2) == -2
    with pytest.raises(ValueError, match="magnitude"):
        t.encode("Goal Position", -(1 << 15))
    f.write_text(f.read_text().replace("  ID: [5, 1", "  ID: [43, 1"))
    with pytest.raises(ValueError, match="demo.yaml: items 'Goal Position' and 'ID' overlap"):
        ct.load_table(f)
    f.write_text("name: X\nprotocol: sts\nitems: {}\n")
    with pytest.raises(ValueError, match="demo.yaml: missing key 'model_number'"):
        ct.load_table(f)
    # no silent fallback to the MX 2.0 scale (16): an X table without it read its factory gain 800 as kp 50
    f.write_text("name: X\nmodel_number: 1\nprotocol: dxl2\nsource: test\ncurrent_unit: null\nitems: {}\n")
    with pytest.raises(ValueError, match="demo.yaml: missing key 'p_gain_per_kp'"):
        ct.load_table(f)
