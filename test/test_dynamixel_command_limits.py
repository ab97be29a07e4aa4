"""JointState velocity / effort → the servo's limit register in its table's own unit (dynamixel/command_limits.py),
per protocol, and one clear refusal where the servo has no such register or the value does not fit."""

from __future__ import annotations

import dataclasses
import math

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
    assert (effort_limit(sts, 0.956).item, effort_limit(sts, 0.956).raw) == ("Torque Limit", 500)  # half stall
    ax = ct.control_table("ax12a")
    assert (effort_limit(ax, 0.75).item, effort_limit(ax, 0.75).raw) == ("PWM Limit", round(0.5 * 1023))


@pytest.mark.parametrize(
    "servo, kwargs, match",
    [
        ("mx106", {"operating_mode": 3}, "Operating Mode 3, not current-based position mode"),
        ("no_kt", {"operating_mode": 5}, "kt unknown"),
        ("mx28", {"operating_mode": 5}, "no Goal Current"),
        ("sts3215", {"nm": 2.0}, "beyond the STS3215 stall torque"),
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
