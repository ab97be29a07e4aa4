"""servo_fit_node's online RLS on α̂ (parameter rls, source topics): after the first live fit the node keeps refining
α̂ from the live topics and reports the RLS state on fit/result; α̂ stays finite and inside its box."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest
from nodes_harness import RosHarness, sim_node, wait_for

pytest.importorskip("rclpy")
from rclpy.parameter import Parameter  # noqa: E402
from std_msgs.msg import Float64MultiArray, String  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402
from test_nodes_identify import KP, URDF, sim_params  # noqa: E402

from servo_ff.nodes.fit_node import FitNode  # noqa: E402
from servo_ff.trajectories import sub_oscillations  # noqa: E402


def test_fit_node_refines_alpha_online_by_rls_from_live_topics():
    with RosHarness(salt=33) as h:
        sim_node(h, **sim_params(["pendulum_1"]))
        fit = h.add(
            FitNode(
                "servo_fit",
                context=h.context,
                namespace=h.ns,
                parameter_overrides=[
                    Parameter("joint", value="pendulum_1"),
                    Parameter("urdf_path", value=URDF),
                    Parameter("run_on_start", value=False),
                    Parameter("source", value="topics"),
                    Parameter("joints", value=["pendulum_1"]),
                    Parameter("kp", value=KP),
                    Parameter("window", value=6.0),
                    Parameter("dt", value=0.01),
                    Parameter("output", value=""),
                    Parameter("feedforward_node", value=""),
                    Parameter("rls", value=True),
                    Parameter("rls_period", value=0.5),
                ],
            )
        )
        client = h.make_node("rls_client")
        results: list[dict] = []
        client.create_subscription(String, "fit/result", lambda m: results.append(json.loads(m.data)), 50)
        pub = client.create_publisher(Float64MultiArray, "servo/commands", 10)
        wait_for(lambda: pub.get_subscription_count() >= 2, 10.0, "sim and fit subscribed to servo/commands")
        ref = sub_oscillations(duration=5.0, dt=0.01, amplitude=0.8, offset=0.4)

        def stream(times: int) -> None:
            t0 = time.monotonic()
            for k, q in enumerate(np.tile(ref.q, times)):
                pub.publish(Float64MultiArray(data=[float(q)]))
                # a controller's 100 Hz on wall time: the sim node runs on wall time (a real duration, not a wait)
                time.sleep(max(t0 + (k + 1) * 0.01 - time.monotonic(), 0.0))

        stream(1)
        r = h.call(client.create_client(Trigger, "fit/run"), Trigger.Request(), timeout=10.0)
        assert r.success, r.message
        wait_for(lambda: fit.result is not None or fit.last_error, 60.0, "the first live fit")
        assert fit.result is not None, fit.last_error
        assert fit.refiner is not None
        stream(2)  # live data after the fit: the RLS is fed
        state = wait_for(
            lambda: next((x["rls"] for x in reversed(results) if "rls" in x and x["rls"]["samples"] > 200), None),
            30.0,
            "RLS updates on fit/result",
        )
    alpha = np.array(state["alpha"])
    rls = fit.refiner.rls
    assert np.isfinite(alpha).all() and (alpha >= rls.lo).all() and (alpha <= rls.hi).all()
    assert state["reference"] == pytest.approx(list(fit.result["alpha"]))
    assert state["skipped"] == 0 and np.isfinite(state["rms_rls"])
