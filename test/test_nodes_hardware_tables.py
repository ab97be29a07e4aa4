"""servo_hardware_node with every control table it accepts, against the virtual bus of that table's family on a pty:
/joint_states is published for each, its effort finite, or NaN with one line at configure saying effort is not known
for that servo (before: an XM430, XM430-W210, XC330 or XL330-M077 — tables without kt, effort NaN — published
nothing at all, unsaid: the publication took the NaN effort for a stale joint)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from nodes_harness import RosHarness, hardware_on_virtual_bus, wait_for

pytest.importorskip("rclpy")
pytest.importorskip("dynamixel_sdk")
pytest.importorskip("scservo_sdk")

from servo_ff.bus import control_table as ct  # noqa: E402
from servo_ff.bus.virtual_bus import ServoLoad, VirtualBus  # noqa: E402
from servo_ff.bus.virtual_options import VirtualBusOptions  # noqa: E402
from servo_ff.models.presets import preset  # noqa: E402

JOINTS = ["hip", "knee"]
IDS = [1, 2]
TABLES = sorted(ct.CONTROL_TABLES)
UNKNOWN = "effort is not known for servo"


def stand_in(table: str):
    """The physics of the virtual servo for a table without a preset of its own (the node reads what the bus
    reports; the model behind it only has to be stable)."""
    if table.startswith("xm430"):
        return preset("xm430", "m1")
    if table.startswith(("xc330", "xl330-m077", "xl430")):
        return preset("xl330", "m1")
    return {"ax12a": preset("mx28", "m1"), "sts3250": preset("sts3215", "m1")}.get(table)


#: the factory P gain of each table [register] and its kp (servo_interface_params.KP_UNIT: MX 2.0 register/16 — bam's
#: MX kp is the protocol-1 P —, every other the register itself; the AX-12A's Compliance Slope 32 is P 1024/32)
MX2 = ("mx28", "mx64", "mx106")


def factory_gain(table: str) -> tuple[str, int, float]:
    t = ct.control_table(table)
    if table == "ax12a":
        return "CW Compliance Slope", 32, 32.0
    reg = t.item("Position P Gain").default
    return "Position P Gain", reg, reg / (16.0 if table in MX2 else 1.0)


def states_of(table: str, tmp_path, salt: int, capfd, kp: float | None = 32.0) -> tuple[list, str, list, list]:
    """Three /joint_states of the node (``kp``; None: not given) on a virtual bus of ``table`` (autostart: configured
    and active), what the node wrote to stderr, the P gain register it wrote and its ``kp``."""
    link = tmp_path / f"tty_{table}"
    params = stand_in(table)
    kw = {"params": params} if params else {}
    t, vin = ct.control_table(table), (params or VirtualBusOptions.of(model=table).actuator()).firmware.vin
    if "Max Voltage Limit" in t.by_name:  # within it: a 5 V XL330 under a 7.5 V preset reports an input voltage error
        kw["supply_voltage"] = min(vin, 0.9 * t.by_name["Max Voltage Limit"].default * t.voltage_unit)
    vbus = VirtualBus(ids=IDS, model=table, link=str(link), loads=ServoLoad.pendulum(0.1, 0.1), **kw)
    vbus.start()
    h = RosHarness(salt=salt)
    try:
        protocol = ct.control_table(table).protocol  # patient (300 ms, 4 retries): 18 connects on a loaded box
        node, client, states, diags, pub = hardware_on_virtual_bus(
            h, link, JOINTS, IDS, table, kp, "tables_client", protocol=protocol, timeout_ms=300.0, retries=4
        )
        n = len(states)
        wait_for(lambda: len(states) >= n + 3, 20.0, f"{table}: three more joint_states")
        got = list(states)
        register = vbus.regs.get(factory_gain(table)[0]).tolist()
        kp_param = list(node.get_parameter("kp").value)
    finally:
        h.shutdown()
        vbus.stop()
    return got, capfd.readouterr().err, register, kp_param


@pytest.mark.parametrize("table", TABLES)
def test_every_table_publishes_joint_states_with_effort_or_says_it_is_not_known(table, tmp_path, capfd):
    """Also: kp = the factory gain in the table's kp unit writes the factory register (before: kp 800 on an XM430,
    the sim's default for it, wrote 12800; XC330, XL430 16 x too)."""
    item, factory, kp = factory_gain(table)
    states, err, register, _ = states_of(table, tmp_path, 91, capfd, kp)
    assert register == [factory, factory], (item, register)
    said = [ln for ln in err.splitlines() if UNKNOWN in ln]
    for m in states:
        assert list(m.name) == JOINTS and np.isfinite(m.position).all() and np.isfinite(m.velocity).all()
    effort = np.array([m.effort for m in states])
    if np.isfinite(effort).all():
        assert not said, said
    else:  # effort NaN on every message, said once at configure
        assert np.isnan(effort).all() and len(said) == 1, (effort, said)
    # every table shipped gives effort: kt for Present Current, stall torque for Present Load
    assert np.isfinite(effort).all(), f"{table}: effort NaN ({said})"


def test_a_servo_without_kt_publishes_effort_nan_and_says_it_once(tmp_path, capfd, monkeypatch):
    """The XM430 table without its kt: joint_states still published (effort NaN, position and velocity read),
    one warning at configure naming the servo, the missing kt and the joints."""
    monkeypatch.setitem(ct.CONTROL_TABLES, "xm430", dataclasses.replace(ct.CONTROL_TABLES["xm430"], kt=None))
    states, err, *_ = states_of("xm430", tmp_path, 92, capfd)
    assert len(states) >= 3 and np.isnan([m.effort for m in states]).all()
    assert all(np.isfinite(m.position).all() for m in states)
    said = [ln for ln in err.splitlines() if UNKNOWN in ln]
    assert len(said) == 1, err[-3000:]
    assert "xm430 (XM430-W350)" in said[0] and "torque constant kt" in said[0] and "['hip', 'knee']" in said[0]


def test_kp_not_given_is_the_servos_default_gain_on_both_nodes(tmp_path, capfd):
    """No kp: the hardware node takes the servo's default gain, the sim's rule (servo_ff.bus.default_gain), said in
    one line: an XL330-M288 its preset's 400 = its factory register, as the sim with servo xl330; an XC330-M288
    (no preset) its factory 1100; an MX-106 (2.0) its preset's 32 = register 512, as before and as the sim. Before:
    32 for every servo, unsaid (XL330 register 32 against its factory 400; the sim 400)."""
    from rclpy.parameter import Parameter

    from servo_ff.nodes.sim_node import SimNode

    h = RosHarness(salt=93)
    try:
        sim_kp = {}
        for servo in ("xl330", "mx106"):
            overrides = [Parameter("servo", value=servo), Parameter("autostart", value=False)]
            sim = SimNode(f"sim_{servo}", **h.node_kwargs(), parameter_overrides=overrides)
            sim_kp[servo] = list(sim.get_parameter("kp").value)
            sim.destroy_node()
    finally:
        h.shutdown()
    assert sim_kp == {"xl330": [400.0], "mx106": [32.0]}
    for table, kp, register, source in (
        ("xl330-m288", 400.0, 400, "the xl330 preset's firmware kp, as the sim's"),
        ("xc330-m288", 1100.0, 1100, "the XC330-M288-T factory Position P Gain 1100"),
        ("mx106", 32.0, 512, "the mx106 preset's firmware kp, as the sim's"),
    ):
        _, err, written, kp_param = states_of(table, tmp_path, 94, capfd, None)
        assert kp_param == [kp] and written == [register, register], (table, kp_param, written)
        said = [ln for ln in err.splitlines() if "kp not set" in ln]
        assert len(said) == 1 and f"kp not set: {kp:g} ({source})" in said[0], (table, said)
