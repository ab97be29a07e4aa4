"""servo_sim_node and servo_hardware_node check the servo type's ranges the same way (its control table: ``kp``
within the P gain register, the joint limits within the position range), so a parameter set the sim runs, the
hardware runs too; joint limits given beyond the range fail configure once, never retried by ``autostart``."""

from __future__ import annotations

import math

import pytest
from nodes_harness import PENDULUM_SIM, RosHarness, sim_node, wait_for

pytest.importorskip("rclpy")
pytest.importorskip("dynamixel_sdk")
from hardware_rig import Rig, node_params  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

from servo_ff.bus.virtual_bus import ServoLoad  # noqa: E402

MX106_MAX = 3.14006  # rad: 4095 counts of the MX-106(2.0), center 2048


def count_calls(node, name: str) -> list[int]:
    """Count the calls of ``node``'s method ``name`` from now on (an instance attribute wrapping it)."""
    calls = [0]
    inner = getattr(node, name)

    def counted(*args, **kwargs):
        calls[0] += 1
        return inner(*args, **kwargs)

    setattr(node, name, counted)
    return calls


@pytest.mark.parametrize("kind", ["sim", "hw"])
def test_a_limit_given_beyond_the_servo_range_fails_configure_once(tmp_path, kind):
    """position_max [π] (the interface's documented default, given) on MX-106s: configure fails with the range
    named, once; autostart keeps ticking but does not configure again (before, hardware: the bus refused it at
    every reconnect_period, forever, the same line each time; sim: accepted, active). Once the limit is changed
    within the range, autostart configures and activates."""
    rig = Rig(tmp_path, 104, ServoLoad.pendulum(0.25, 0.1)) if kind == "hw" else None
    h = rig.h if rig else RosHarness(salt=105)
    try:
        given = {"position_max": [math.pi], "autostart": True}
        if rig:  # constructed, counted, then spun: the first autostart tick is counted too
            from servo_ff.nodes.hardware_node import HardwareNode

            kw = h.node_kwargs()
            node = HardwareNode("servo_range", **kw, parameter_overrides=node_params(rig.link, **given))
        else:
            from servo_ff.nodes.sim_node import SimNode

            params = {**PENDULUM_SIM, "servo": "mx106", "model": "m4", **given}
            node = SimNode(
                "servo_range", **h.node_kwargs(), parameter_overrides=[Parameter(k, value=v) for k, v in params.items()]
            )
        configures = count_calls(node, "hw_configure")
        ticks = count_calls(node, "_autostart")
        failed: list[str] = []
        error = node.get_logger().error
        node.get_logger().error = lambda msg, **kw: (failed.append(msg), error(msg, **kw))[1]
        h.add(node)
        wait_for(lambda: ticks[0] >= 4 or node.active, 30.0, "four autostart ticks")
        assert node.state_label == "unconfigured" and configures[0] == 0, configures
        said = [m for m in failed if m.startswith("configure failed")]
        assert len(said) == 1, failed
        assert (
            f"joint limits of {node.joints[0]} [" in said[0]
            and "3.14159] rad exceed the MX-106(2.0) position range [-3.14159, 3.14006] rad" in said[0]
            and "a parameter error" in said[0]
        ), said
        r = node.set_parameters([Parameter("position_max", value=[2.0])])[0]
        assert r.successful, r.reason
        wait_for(lambda: node.active, 30.0, "active once the limit is within the range")
        assert configures[0] == 1
    finally:
        if rig:
            rig.close()
        else:
            h.shutdown()


def test_the_sim_refuses_the_ranges_the_hardware_refuses(tmp_path):
    """The same changes on a sim of MX-106s and on the hardware node of MX-106s (virtual bus): position_max [4.0]
    and kp [2000] refused by both with the same line, position_max [3.1] and kp [1000] taken by both; p_gains
    [2000, 10] on the topic refused by both, kp kept (before: the sim took all four). Limits not given are the
    servo's range on both (the sim's were ±π, which the hardware refuses)."""
    rig = Rig(tmp_path, 106, ServoLoad.pendulum(0.25, 0.1))
    try:
        hw = rig.node("servo_hardware")
        mx106 = {**PENDULUM_SIM, "joints": ["hip", "knee"], "servo": "mx106", "model": "m4"}
        sim = sim_node(rig.h, "servo_sim", f"{rig.h.ns}/sim", **mx106)
        bare = sim_node(rig.h, "servo_bare", f"{rig.h.ns}/bare", joints=["hip"], servo="mx106", model="m4")
        gains = {
            n: rig.client.create_publisher(Float64MultiArray, f"{ns}/servo/p_gains", 10)
            for n, ns in ((hw, rig.h.ns), (sim, f"{rig.h.ns}/sim"))
        }
        wait_for(
            lambda: hw.active and sim.active and all(p.get_subscription_count() for p in gains.values()),
            30.0,
            "both active",
        )
        assert list(bare.get_parameter("position_max").value) == pytest.approx([MX106_MAX], abs=1e-5)
        assert list(bare.get_parameter("position_min").value) == pytest.approx([-math.pi])
        for name, value, ok in (
            ("position_max", [4.0], False),
            ("kp", [2000.0], False),
            ("position_max", [3.1], True),
            ("kp", [1000.0], True),
        ):
            results = [n.set_parameters([Parameter(name, value=value)])[0] for n in (hw, sim)]
            assert [r.successful for r in results] == [ok, ok], (name, value, [r.reason for r in results])
            assert results[0].reason == results[1].reason, (name, value)
            assert (
                ok
                or "exceed the MX-106(2.0) position range" in results[0].reason
                or (
                    "kp of hip = 2000 (P gain register 32000) is outside the MX-106(2.0) range: kp 0..1023.94"
                    in results[0].reason
                )
            ), results[0].reason
        for node, pub in gains.items():
            pub.publish(Float64MultiArray(data=[2000.0, 10.0]))
        wait_for(lambda: hw.gate.rejected >= 1 and sim.gate.rejected >= 1, 20.0, "p_gains refused by both")
        for node in (hw, sim):
            assert list(node.get_parameter("kp").value) == [1000.0]
            assert "kp of hip = 2000 (P gain register 32000) is outside the MX-106(2.0) range" in node.gate.last_reason
    finally:
        rig.close()
