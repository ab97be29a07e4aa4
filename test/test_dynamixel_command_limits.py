"""JointState velocity / effort → the servo's limit register in its table's own unit (dynamixel/command_limits.py),
per protocol, and one clear refusal where the servo has no such register or the value does not fit."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from servo_ff.bus import control_table as ct
from servo_ff.bus.command_limits import LimitRefused, effort_limit, velocity_limit


@pytest.mark.parametrize(
    "servo, item, raw",
    [
        ("mx106", "Profile Velocity", round(2.0 / ct.RAD_S_PER_VELOCITY_UNIT)),  # 0.229 rpm: 83
        ("xl330-m288", "Profile Velocity", 83),
        ("ax12a", "Moving Speed", round(2.0 / 0.011623892818282236)),  # 0.111 rpm: 172
        ("sts3215", "Goal Velocity", round(2.0 / (2 * math.pi / 4096))),  # counts/s: 1304
    ],
)
def test_velocity_goes_to_the_velocity_register_in_its_unit(servo, item, raw):
    table = ct.control_table(servo)
    w = velocity_limit(table, -2.0)  # a magnitude: the sign does not matter
    assert (w.item, w.raw) == (item, raw)
    assert velocity_limit(table, 0.0).raw == 0  # 0 lifts the limit
    assert velocity_limit(table, 1e-6).raw == 1  # a tiny limit stays a limit


def test_effort_per_protocol():
    mx106 = ct.control_table("mx106")
    w = effort_limit(mx106, 1.5, operating_mode=5)
    assert (w.item, w.raw) == ("Goal Current", round(1.5 / mx106.kt / mx106.current_unit))
    assert effort_limit(mx106, 0.0, operating_mode=5).raw == mx106.item("Current Limit").default
    sts = ct.control_table("sts3215")
    w = effort_limit(sts, 1.0, vin=7.4)  # the stall duty τ·R/(kt·V_in) = 1·2.676/(1.212·7.4) = 29.8 %
    assert (w.item, w.raw, w.clamped) == ("Torque Limit", 298, "")
    ax = ct.control_table("ax12a")
    assert (effort_limit(ax, 0.75).item, effort_limit(ax, 0.75).raw) == ("PWM Limit", round(0.5 * 1023))


@pytest.mark.parametrize(
    "servo, kwargs, match",
    [
        ("mx106", {"operating_mode": 3}, "Operating Mode 3, not current-based position mode"),
        ("no_kt", {"operating_mode": 5}, "kt unknown"),
        ("mx28", {"operating_mode": 5}, "no Goal Current"),
        ("sts3215", {}, "STS3215: supply voltage unknown"),
        ("mx106", {"operating_mode": 5, "nm": 100.0}, "beyond the MX-106"),
        ("sts3215", {"nm": math.nan}, "not finite"),
    ],
)
def test_effort_refusals_are_one_line(servo, kwargs, match):
    nm = kwargs.pop("nm", 1.0)
    with pytest.raises(LimitRefused, match=match) as e:
        table = dataclasses.replace(ct.control_table("xm430-w210"), kt=None) if servo == "no_kt" else None
        effort_limit(table or ct.control_table(servo), nm, **kwargs)
    assert "\n" not in str(e.value)


def test_velocity_refusals():
    with pytest.raises(LimitRefused, match="beyond the AX-12A Moving Speed register"):
        velocity_limit(ct.control_table("ax12a"), 100.0)
    with pytest.raises(LimitRefused, match="not finite"):
        velocity_limit(ct.control_table("mx106"), math.inf)


def test_an_effort_limit_reads_back_as_that_effort():
    """Each torque-limit register is the inverse of the effort the bus reports for it: Goal Current × kt (dxl2) and
    the STS duty through the motor law at stall (load_effort, θ̇ = 0), within one register step. Before, the STS
    limit was τ/stall_torque of full duty: 1 N·m at 7.4 V read back as 1.75 N·m; a Protocol 1.0 Torque Limit
    (1023 = 100 %) read back through Present Load at 0.1 % a count, 2.3 % above it."""
    from servo_ff.bus.bus_types import load_effort

    for vin in (6.0, 7.4, 12.0):
        for name in ("sts3215", "sts3250"):
            sts = ct.control_table(name)
            for nm in (0.2, 1.0, 1.8):
                w = effort_limit(sts, nm, vin=vin)
                back = load_effort(sts, None, np.array([w.raw]), np.zeros(1), np.array([vin]))[0]
                step = vin * sts.kt / sts.R * sts.load_unit  # one 0.1 % duty step [N·m]
                assert abs(back - nm) <= step / 2 + 1e-12, (name, vin, nm, back)
    for name in ("ax12a", "mx64-p1", "mx106-p1"):  # Protocol 1.0: Torque Limit and Present Load on one 0-1023 scale
        p1 = ct.control_table(name)
        for nm in (0.2, 0.5 * p1.stall_torque, 0.95 * p1.stall_torque):
            w = effort_limit(p1, nm)
            back = load_effort(p1, None, np.array([w.raw]), np.zeros(1))[0]
            step = p1.stall_torque / 1023  # one count of either [N·m] (before: Present Load's read 1.023 × the limit)
            assert abs(back - nm) <= step / 2 + 1e-12, (name, nm, back, w)
    mx106 = ct.control_table("mx106")
    w = effort_limit(mx106, 1.5, operating_mode=5)
    back = ct.current_to_torque(np.array([w.raw]), mx106)[0]
    assert abs(back - 1.5) <= mx106.current_unit * mx106.kt / 2


def test_an_sts_effort_beyond_the_supply_is_clamped_and_says_so():
    """4 N·m on an STS3215 at 7.4 V (full duty holds 7.4·kt/R = 3.35 N·m): full duty, with the reason; at 12 V it
    fits (62 % duty). Before: refused against the datasheet's 1.912 N·m."""
    sts = ct.control_table("sts3215")
    w = effort_limit(sts, -4.0, vin=7.4)
    assert (w.raw, "clamped" in w.clamped, "3.35 N·m" in w.clamped) == (1000, True, True), w
    assert effort_limit(sts, 4.0, vin=12.0).clamped == ""
    assert effort_limit(sts, 0.0).raw == 1000  # no limit: needs no supply voltage
