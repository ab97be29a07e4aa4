"""The default P gain ``kp`` of a servo, one rule for ``servo_sim_node`` and ``servo_hardware_node``: the firmware-law
kp of the preset that models the servo (:func:`servo_ff.models.presets.preset_servo`: what the sim runs by default),
else the control table's factory P gain in kp units (register / ``p_gain_per_kp``; the AX-12A's Compliance Slope s is
P = 1024/s). For the X-series and protocol-1 servos both agree (XM430 800, XL330 400, STS3215 32, MX 1.0 32); an MX
2.0's preset kp 32 (register 512) is bam's, identified at the 1.0 factory P, not its 2.0 factory 850 (kp 53.125)."""

from __future__ import annotations

from servo_ff.models.firmware import FIRMWARE_LAWS
from servo_ff.models.presets import preset_servo

from . import control_table as ct

#: AX-12A: Compliance Slope · P = 1024 (the MX manual's table Slope 8…128 = P Gain 128…8); the AX family's own
#: conversions (servo_ff.bus.dynamixel.p1_units) import it from here: a generic bus module imports no family
SLOPE_TIMES_P = 1024


def default_kp(servo: str) -> tuple[float, str]:
    """(kp, where it comes from) for the control table ``servo`` (a ``tables/*.yaml`` key)."""
    table = ct.control_table(servo)
    name = preset_servo(servo)
    if name is not None and name in FIRMWARE_LAWS:
        return float(FIRMWARE_LAWS[name].kp), f"the {name} preset's firmware kp, as the sim's"
    if "Position P Gain" in table.by_name:
        reg = table.item("Position P Gain").default
        return float(ct.p_gain_to_kp(reg, table)), f"the {table.name} factory Position P Gain {reg}"
    slope = table.item("CW Compliance Slope").default
    return SLOPE_TIMES_P / slope, f"the {table.name} factory Compliance Slope {slope} (P = 1024/slope)"
