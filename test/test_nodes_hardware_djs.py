"""servo_hardware_node's /dynamic_joint_states on the virtual Dynamixel bus: besides position, velocity and
effort (the values of joint_states), the servos' temperature and input voltage."""

from __future__ import annotations

import numpy as np
import pytest
from nodes_harness import RosHarness, hardware_on_virtual_bus, wait_for

pytest.importorskip("rclpy")
pytest.importorskip("dynamixel_sdk")
try:
    from control_msgs.msg import DynamicJointState
except ImportError as e:  # generated at set-up by tools/build_interfaces.py (a ROS install has its own)
    pytest.skip(f"control_msgs not importable ({e}): run tools/build_interfaces.py", allow_module_level=True)
from servo_ff.bus.virtual_bus import ServoLoad, VirtualBus  # noqa: E402

JOINTS = ["shoulder", "elbow"]
IDS = [3, 7]


def test_dynamic_joint_states_carry_temperature_and_voltage(tmp_path):
    link = tmp_path / "ttyDXL"
    bus = VirtualBus(ids=IDS, model="mx106", loads=ServoLoad.pendulum(0.3, 0.1), link=str(link))
    bus.start()
    h = RosHarness(salt=12)
    try:
        node, client, states, diags, pub = hardware_on_virtual_bus(
            h, link, JOINTS, IDS, "mx106", 32.0, "hw_djs_client", health_period=0.05
        )
        dyn: list = []
        client.create_subscription(DynamicJointState, "dynamic_joint_states", dyn.append, 50)

        def matched():  # a message with health read and the joint_states of the same cycle
            by_stamp = {(m.header.stamp.sec, m.header.stamp.nanosec): m for m in list(states)[-200:]}
            out = []
            for d in list(dyn)[-20:]:
                js = by_stamp.get((d.header.stamp.sec, d.header.stamp.nanosec))
                if js is not None and all(np.isfinite(iv.values).all() for iv in d.interface_values):
                    out.append((d, js))
            return out

        d, js = wait_for(matched, 20.0, "dynamic_joint_states with temperature and voltage")[-1]
        assert list(d.joint_names) == JOINTS
        for j, iv in enumerate(d.interface_values):
            assert list(iv.interface_names) == ["position", "velocity", "effort", "temperature", "voltage"]
            assert list(iv.values[:3]) == [js.position[j], js.velocity[j], js.effort[j]]
            temperature, voltage = iv.values[3:]
            assert 0.0 < temperature < 100.0  # °C, read from the servo's Present Temperature
            assert abs(voltage - bus.supply_voltage) < 0.2  # V, Present Input Voltage (0.1 V units)
    finally:
        h.shutdown()
        bus.stop()


def test_a_silent_servo_has_no_interface_published_as_fresh(tmp_path):
    """The elbow stops answering: in /dynamic_joint_states its velocity, effort, temperature and voltage are NaN
    under the fresh stamps, its position the last one as in joint_states; the shoulder's are all finite. Before
    (/tmp/audit_20b/fault_silent_djs.py): its last temperature (30.0 °C) and voltage (15.0 V) went on as fresh."""
    import math

    link = tmp_path / "ttyDXL"
    bus = VirtualBus(ids=IDS, model="mx106", loads=ServoLoad.pendulum(0.3, 0.1), link=str(link))
    bus.start()
    h = RosHarness(salt=107)
    try:
        node, client, states, diags, pub = hardware_on_virtual_bus(
            h, link, JOINTS, IDS, "mx106", 32.0, "hw_djs_silent", health_period=0.05, max_reply_age=0.2
        )
        dyn: list = []
        client.create_subscription(DynamicJointState, "dynamic_joint_states", dyn.append, 200)
        wait_for(lambda: any(np.isfinite(d.interface_values[1].values).all() for d in list(dyn)), 20.0, "a full one")
        bus.set_silent(IDS[1])
        n = len(dyn)

        def silent() -> list:
            return [d for d in list(dyn)[n:] if math.isnan(d.interface_values[1].values[1])]

        wait_for(lambda: len(silent()) >= 30, 30.0, "30 dynamic_joint_states with the elbow silent")
        for d in silent():
            shoulder, elbow = (dict(zip(iv.interface_names, iv.values)) for iv in d.interface_values)
            assert all(math.isnan(elbow[k]) for k in ("velocity", "effort", "temperature", "voltage")), elbow
            assert math.isfinite(elbow["position"])  # the last one, as joint_states carry it
        assert any(np.isfinite(d.interface_values[0].values).all() for d in silent()), "the shoulder is fresh"
    finally:
        h.shutdown()
        bus.stop()
