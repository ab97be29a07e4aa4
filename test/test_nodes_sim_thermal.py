"""The sim node runs the servo's thermal model (actuator.thermal.*, thermal_model) and warns in /diagnostics before
the temperature limit, with the predicted time to reach it; at the limit it reports ERROR."""

from __future__ import annotations

import pytest
from nodes_harness import RosHarness, sim_node, wait_for

pytest.importorskip("rclpy")
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus  # noqa: E402


def test_a_servo_holding_a_heavy_load_is_warned_then_reported_at_its_temperature_limit():
    """An MX-64 holds 2 kg at 0.3 m, 1 rad from hanging (≈ 5 N·m, ≈ 3 A); a small thermal capacity (1 J/K,
    R_th 10 K/W: τ = 10 s) heats it past 70 °C within seconds of simulated time."""
    with RosHarness(salt=31) as h:
        sim = sim_node(
            h,
            joints=["a"],
            rate_hz=200.0,
            initial_position=[1.0],
            thermal_model=True,
            ambient_temperature=30.0,
            temperature_limit=70.0,
            temperature_warn_s=60.0,
            diagnostics_period=0.2,
            **{
                "load.mass": [2.0],
                "load.length": [0.3],
                "actuator.thermal.capacity": 1.0,
                "actuator.thermal.resistance": 10.0,
            },
        )
        seen: list[tuple[int, str, dict]] = []

        def on_diag(msg):
            for s in msg.status:
                if s.hardware_id.endswith("/sim/a"):
                    seen.append((s.level, s.message, {kv.key: kv.value for kv in s.values}))

        h.make_node("diag_client").create_subscription(DiagnosticArray, "/diagnostics", on_diag, 100)
        warn = wait_for(
            lambda: next((x for x in seen if x[0] == DiagnosticStatus.WARN and "reaches its limit" in x[1]), None),
            60.0,
            "a thermal warning",
        )
        assert 30.0 < float(warn[2]["temperature_C"]) < 70.0
        assert 0.0 < float(warn[2]["time_to_limit_s"]) < 60.0
        err = wait_for(
            lambda: next((x for x in seen if x[0] == DiagnosticStatus.ERROR and "at its limit" in x[1]), None),
            120.0,
            "the temperature limit reported at ERROR",
        )
        assert float(err[2]["temperature_C"]) >= 70.0 and err[2]["time_to_limit_s"] == "0.0"
        assert sim.sim.packed[0, 1] > sim.sim.params.R * 1.15  # the winding's R has risen with T (> +40 K)
