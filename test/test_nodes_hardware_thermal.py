"""servo_hardware_node warns in /diagnostics before a servo's temperature limit, with the time to reach it predicted
from the measured Present Temperature (the virtual bus's thermal model heats a servo holding a heavy load)."""

from __future__ import annotations

import math

import pytest
from nodes_harness import RosHarness, hardware_on_virtual_bus, wait_for

pytest.importorskip("rclpy")
pytest.importorskip("dynamixel_sdk")
from diagnostic_msgs.msg import DiagnosticStatus  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

from servo_ff.bus.virtual_bus import ServoLoad, VirtualBus  # noqa: E402


def test_a_heating_servo_is_warned_with_the_predicted_time_to_its_limit(tmp_path):
    """MX-106 holding 2 kg at 0.3 m, 1 rad up (≈ 5 N·m, ≈ 2.5 A); thermal C 2 J/K, R_th 20 K/W (τ 40 s)."""
    link = tmp_path / "ttyDXL"
    bus = VirtualBus(
        ids=[1],
        model="mx106",
        thermal=True,
        thermal_capacity=2.0,
        thermal_resistance=20.0,
        loads=ServoLoad.pendulum(2.0, 0.3),
        link=str(link),
    )
    bus.start()
    try:
        with RosHarness(salt=34) as h:
            node, client, states, diags, pub = hardware_on_virtual_bus(
                h,
                link,
                ["a"],
                [1],
                "mx106",
                32.0,
                "thermal_client",
                temperature_limit=70.0,
                temperature_warn_s=1e5,
                thermal_time_constant=40.0,
            )
            pub.publish(Float64MultiArray(data=[1.0]))

            def warned():
                for d in reversed(diags):
                    for s in d.status:
                        if (
                            s.name.endswith(": a")
                            and s.level == DiagnosticStatus.WARN
                            and "reaches its limit" in s.message
                        ):
                            return s
                return None

            s = wait_for(warned, 60.0, "a thermal warning from the hardware node")
            values = {kv.key: kv.value for kv in s.values}
            assert 0.0 < float(values["time_to_limit_s"]) < math.inf
            assert float(values["temperature_C"]) < 70.0
    finally:
        bus.stop()
