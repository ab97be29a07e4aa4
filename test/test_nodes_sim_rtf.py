"""The sim node's measured real-time factor in its diagnostics (alone in its process: a sim running as fast as
possible elsewhere in the process, as test_nodes_simtime's module fixture, would hold the GIL and slow it)."""

from __future__ import annotations

import numpy as np
import pytest
from nodes_harness import RosHarness, sim_node, wait_for

pytest.importorskip("rclpy")


def test_diagnostics_report_the_measured_real_time_factor():
    """A sim paced at real_time_factor 3 reports ≈ 3 as real_time_factor_measured in its diagnostics (simulated
    seconds per wall second between two diagnostics; the first report, with no interval yet, reads nan)."""
    from diagnostic_msgs.msg import DiagnosticArray

    with RosHarness(salt=12) as h:
        sim_node(h, joints=["a"], rate_hz=100.0, publish_clock=True, real_time_factor=3.0, diagnostics_period=0.6)
        seen: list[float] = []

        def on_diag(msg):
            for status in msg.status:
                for kv in status.values:
                    if kv.key == "real_time_factor_measured" and status.hardware_id == f"{h.ns}/servo_sim/sim/a":
                        seen.append(float(kv.value))

        h.make_node("diag_client").create_subscription(DiagnosticArray, "/diagnostics", on_diag, 100)
        wait_for(lambda: len(seen) >= 6, 30.0, "six diagnostics of the sim")
    measured = [v for v in seen if np.isfinite(v)]
    assert len(measured) >= 5
    assert abs(float(np.median(measured[1:])) - 3.0) < 0.3, measured


def test_time_a_paced_sim_cannot_keep_up_with_is_said_dropped():
    """A sim asked for 1000× real time at 1 kHz with max_catch_up 1 ms (one period per tick) cannot step a million
    periods a second: it re-anchors, i.e. drops the simulated time it does not make up. Before, silently; now in a
    throttled warning naming how much."""
    from nodes_harness import rosout_matched
    from rcl_interfaces.msg import Log

    with RosHarness(salt=13) as h:
        got: list = []
        h.make_node("log_client").create_subscription(Log, "/rosout", got.append, 100)
        sim = sim_node(h, joints=["a"], rate_hz=1000.0, publish_clock=True, real_time_factor=1000.0,
                       max_catch_up=0.001, warn_throttle=1.0)  # fmt: skip
        rosout_matched(sim, got)
        line = wait_for(
            lambda: [m.msg for m in got if m.name.endswith("servo_sim") and "of simulated time dropped" in m.msg],
            30.0,
            "the warning",
        )[0]
        assert "the simulation is slower than real_time_factor; max_catch_up 0.001 s per tick" in line, line
        assert float(line.split(" s of simulated")[0]) > 0.0, line
