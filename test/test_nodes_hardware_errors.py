"""Every hardware-error bit end to end (issue 24), on each virtual bus through servo_hardware_node over DDS.

Each bit a bus can raise — by its physical cause where the emulator has one (supply sag → input voltage, winding
temperature above its Temperature Limit → overheating) or injected as its firmware latches it (overload, encoder /
sensor, electrical shock / over-current) — must reach /diagnostics at ERROR on the status of that servo (named by
joint, hardware_id by id), stay latched (the node never reboots a servo by itself) and clear only after a reboot
on request. The feed-forward node stops sending goals to a joint whose servo reports an error.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from nodes_harness import RosHarness, wait_for

pytest.importorskip("rclpy")
pytest.importorskip("dynamixel_sdk")
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus  # noqa: E402
from hardware_rig import IDS, JOINTS, node_params  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from std_srvs.srv import SetBool, Trigger  # noqa: E402

from servo_ff.bus import control_table as ct  # noqa: E402
from servo_ff.bus.virtual_bus import ServoLoad, VirtualBus  # noqa: E402
from servo_ff.nodes.hardware_node import HardwareNode  # noqa: E402


def make(protocol: str, link: Path):
    """(virtual bus, servo, kp, {bit name: (how, bus bits, Hardware Error Status bits)}) of one protocol; ``bus.
    unlatched``: the bits its firmware clears once their cause is gone."""
    load = ServoLoad.pendulum(0.1, 0.1)
    if protocol == "sts":
        pytest.importorskip("scservo_sdk")
        from servo_ff.bus.feetech import status
        from servo_ff.bus.feetech.virtual_bus import StsVirtualBus

        bus = StsVirtualBus(ids=IDS, loads=load, link=str(link), dt_max=0.002, thermal=True)
        bus.unlatched = status.SENSOR
        bits = {
            "overload": ("inject", status.OVERLOAD),
            "temperature": ("heat", status.TEMPERATURE),
            "voltage": ("sag", status.VOLTAGE),
            "sensor": ("inject", status.SENSOR),
            "current": ("inject", status.CURRENT),
        }
        return bus, "sts3215", 20.0, {k: (how, b, status.to_hw_error(b)) for k, (how, b) in bits.items()}
    if protocol == "dxl1":
        from servo_ff.bus.dynamixel.virtual_p1 import VirtualBus1

        bus = VirtualBus1(ids=IDS, model="mx106-p1", loads=load, link=str(link), thermal=True)
        bits = {"overload": ("inject", ct.HW_OVERLOAD), "overheating": ("heat", ct.HW_OVERHEATING)}
        bits["input voltage"] = ("sag", ct.HW_INPUT_VOLTAGE)
        return bus, "mx106-p1", 24.0, {k: (how, b, b) for k, (how, b) in bits.items()}
    bus = VirtualBus(ids=IDS, model="mx106", loads=load, link=str(link), thermal=True)
    bits = {
        "overload": ("inject", ct.HW_OVERLOAD),
        "overheating": ("heat", ct.HW_OVERHEATING),
        "input voltage": ("sag", ct.HW_INPUT_VOLTAGE),
        "encoder": ("inject", ct.HW_ENCODER),
        "electrical shock": ("inject", ct.HW_ELECTRICAL_SHOCK),
    }
    return bus, "mx106", 32.0, {k: (how, b, b) for k, (how, b) in bits.items()}


def cause(bus, how: str, k: int, bits: int, on: bool) -> None:
    """Raise (``on``) or remove the cause of ``bits`` on servo index ``k`` (a sag hits every servo)."""
    with bus._lock:
        if how == "inject" and (on or bits & getattr(bus, "unlatched", 0)):
            bus.inject_error(bus.ids[k], bits, on)
        elif how == "heat":
            bus.thermal.temp[k] = bus.regs.get("Temperature Limit")[k] + 20.0 if on else bus.thermal.options.ambient
        elif how == "sag":
            bus.faults.sag_volts = bus.supply_voltage - 1.0  # 1 V left: below any Min Voltage Limit
            bus.faults.sag_start, bus.faults.sag_duration = (bus.elapsed(), math.inf) if on else (math.inf, 0.0)


def requested(h: RosHarness, reboot) -> None:
    """A reboot on request; under load a reply can time out (the node then reconnects): asked again until done."""
    wait_for(lambda: h.call(reboot, Trigger.Request(), timeout=30.0).success, 90.0, "a reboot on request")


@pytest.mark.parametrize("protocol", ["dxl2", "dxl1", "sts"])
def test_every_error_bit_reaches_diagnostics_on_its_servo_and_is_cleared_only_on_request(tmp_path, protocol):
    link = tmp_path / "tty"
    bus, servo, kp, bits = make(protocol, link)
    bus.start()
    h = RosHarness(salt={"dxl2": 63, "dxl1": 64, "sts": 65}[protocol])
    try:
        extra = {"protocol": protocol, "servo": servo, "kp": [kp]}
        node = h.add(HardwareNode("servo_hw", **h.node_kwargs(), parameter_overrides=node_params(link, **extra)))
        c = h.make_node("errors_client")
        diags: list[DiagnosticArray] = []
        c.create_subscription(DiagnosticArray, "/diagnostics", diags.append, 100)
        reboot = c.create_client(Trigger, "servo/reboot")
        wait_for(lambda: node.active, 30.0, "the node active")

        def status(joint: str):
            return next((s for d in reversed(diags) for s in d.status if s.name.endswith(f"/servo_hw: {joint}")), None)

        reboots = bus.stats.instructions.get("REBOOT", 0)
        for n, (name, (how, raw, hw)) in enumerate(bits.items()):
            k = n % 2
            hit = [0, 1] if how == "sag" else [k]
            text = ct.hardware_error_text(hw)
            cause(bus, how, k, raw, True)
            for j in hit:  # ERROR on each servo it hit, naming the bit
                s = wait_for(
                    lambda j=j, text=text: (
                        (s := status(JOINTS[j])) and s.level == DiagnosticStatus.ERROR and text in s.message and s
                    ),
                    30.0,
                    f"{protocol} {name} on {JOINTS[j]} in /diagnostics",
                )
                assert s.hardware_id.endswith(f"/{IDS[j]}"), s.hardware_id
                assert int({kv.key: kv.value for kv in s.values}["hardware_error"]) & hw
            if len(hit) == 1:  # the other servo is not blamed
                other = status(JOINTS[1 - k])
                assert other is not None and text not in other.message, other.message
            m = len(diags)
            wait_for(lambda m=m: len(diags) > m + 5, 30.0, "a second more of diagnostics")
            assert (bus.hw_error[hit] & raw).all(), f"{name}: cleared without a request"
            assert bus.stats.instructions.get("REBOOT", 0) == reboots and node.unrequested_reboots.sum() == 0
            cause(bus, how, k, raw, False)
            requested(h, reboot)
            reboots = bus.stats.instructions.get("REBOOT", 0)
            for j in hit:
                wait_for(
                    lambda j=j: (s := status(JOINTS[j])) and s.level != DiagnosticStatus.ERROR,
                    30.0,
                    f"{protocol} {name} cleared on {JOINTS[j]} after the reboot",
                )
            assert not (bus.hw_error & raw).any()
    finally:
        h.shutdown()
        bus.stop()


def test_feedforward_sends_no_goal_to_a_joint_whose_servo_reports_an_error(tmp_path):
    """pendulum_1's servo overloads: the feed-forward node goes on driving pendulum_2 (by name) and leaves
    pendulum_1 at the goal it held, though servo/torque_enabled is false (one servo off); the reboot on request
    leaves every servo's torque off: no goal until torque_enable turns it on, then it drives both again, from where
    they stand (before the feed-forward node followed servo/torque_enabled, it drove the limp servos)."""
    pytest.importorskip("servo_ff.dynamics.feedforward")
    from builtin_interfaces.msg import Duration
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from servo_ff.nodes.feedforward_node import FeedForwardNode

    joints = ["pendulum_1", "pendulum_2"]
    urdf = Path(__file__).resolve().parents[1] / "urdf" / "pendulums2.urdf"
    link = tmp_path / "tty"
    bus = VirtualBus(ids=IDS, model="mx106", loads=ServoLoad.pendulum(0.1, 0.1), link=str(link))
    bus.start()
    h = RosHarness(salt=66)
    try:
        hw = h.add(
            HardwareNode(
                "servo_hw",
                **h.node_kwargs(),
                parameter_overrides=node_params(link, joints=joints, kp=[8.0], diagnostics_period=0.1),
            )
        )
        ff = h.add(
            FeedForwardNode(
                "servo_feedforward",
                **h.node_kwargs(),
                parameter_overrides=[
                    Parameter("urdf_path", value=str(urdf)),
                    Parameter("joints", value=joints),
                    Parameter("servo", value="mx106"),
                    Parameter("model", value="m4"),
                    Parameter("kp", value=[8.0]),
                ],
            )
        )
        c = h.make_node("ff_err_client")
        desired = c.create_publisher(JointTrajectory, "feedforward/trajectory", 10)
        wait_for(lambda: hw.active and desired.get_subscription_count(), 30.0, "both nodes up")

        def want(q):
            pt = JointTrajectoryPoint(positions=q, velocities=[0.0, 0.0], accelerations=[0.0, 0.0])
            pt.time_from_start = Duration()
            desired.publish(JointTrajectory(joint_names=joints, points=[pt]))

        want([0.3, 0.2])
        wait_for(lambda: np.allclose(hw.gate.goal, [0.3, 0.2], atol=0.1), 30.0, "goals from the feed-forward")
        bus.inject_overload(1)
        wait_for(lambda: "pendulum_1" in ff.faults.faulted, 30.0, "the feed-forward sees the error")
        held = float(hw.gate.goal[0])
        want([-0.4, -0.3])
        wait_for(lambda: abs(hw.gate.goal[1] + 0.3) < 0.1, 30.0, "pendulum_2 still driven")
        ticks = ff.ticks
        wait_for(lambda: ff.ticks > ticks + 50, 30.0, "feed-forward ticks while pendulum_1 is faulted")
        assert hw.gate.goal[0] == held, "a goal reached the faulted joint"
        requested(h, c.create_client(Trigger, "servo/reboot"))
        wait_for(lambda: not ff.faults.faulted, 30.0, "the error cleared for the feed-forward")
        wait_for(lambda: ff.paused, 30.0, "no goal while the torque is off (the reboot's)")
        ticks = ff.ticks
        enable = c.create_client(SetBool, "servo/torque_enable")
        wait_for(lambda: h.call(enable, SetBool.Request(data=True), timeout=30.0).success, 90.0, "torque on")
        wait_for(lambda: abs(hw.gate.goal[0] + 0.4) < 0.1, 30.0, "pendulum_1 driven again")
        assert ff.ticks > ticks
    finally:
        h.shutdown()
        bus.stop()
