"""The sim node runs the servo's thermal model (actuator.thermal.*, thermal_model) and warns in /diagnostics before
the temperature limit, with the predicted time to reach it; at the limit it reports ERROR."""

from __future__ import annotations

import pytest
from nodes_harness import RosHarness, wait_for

pytest.importorskip("rclpy")
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402

from servo_ff.nodes.sim_node import SimNode  # noqa: E402


def test_a_servo_holding_a_heavy_load_is_warned_then_reported_at_its_temperature_limit():
    """An MX-64 holds 2 kg at 0.3 m, 1 rad from hanging (≈ 5 N·m, ≈ 3 A); a small thermal capacity (1 J/K,
    R_th 10 K/W: τ = 10 s) heats it past 70 °C within seconds of simulated time."""
    with RosHarness(salt=31) as h:
        sim = h.add(
            SimNode(
                "servo_sim",
                context=h.context,
                namespace=h.ns,
                parameter_overrides=[
                    Parameter("joints", value=["a"]),
                    Parameter("rate_hz", value=200.0),
                    Parameter("initial_position", value=[1.0]),
                    Parameter("load.mass", value=[2.0]),
                    Parameter("load.length", value=[0.3]),
                    Parameter("thermal_model", value=True),
                    Parameter("ambient_temperature", value=30.0),
                    Parameter("actuator.thermal.capacity", value=1.0),
                    Parameter("actuator.thermal.resistance", value=10.0),
                    Parameter("temperature_limit", value=70.0),
                    Parameter("temperature_warn_s", value=60.0),
                    Parameter("diagnostics_period", value=0.2),
                ],
            )
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
