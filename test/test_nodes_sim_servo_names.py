"""servo_sim_node takes the hardware node's `servo` names where a preset models that servo (presets.PRESET_ALIASES:
xl330-m288, mx106-p1, …) and, `model` not given, the best model a preset has when it has no m4, said in one line
(before: `servo: xl330-m288` and `mx106-p1` were refused, `servo: sts3215` without `model: m1` stopped the sim)."""

from __future__ import annotations

import pytest
from nodes_harness import RosHarness, sim_node
from rclpy.parameter import Parameter

pytest.importorskip("rclpy")


@pytest.fixture(scope="module")
def h():
    harness = RosHarness(salt=95)
    yield harness
    harness.shutdown()


@pytest.mark.parametrize(
    "servo, actuator, model, kp",
    [("xl330-m288", "xl330", "m4", 400.0), ("mx106-p1", "mx106", "m4", 32.0), ("sts3215", "sts3215", "m1", 32.0)],
)
def test_a_hardware_servo_name_runs_its_preset(h, capfd, servo, actuator, model, kp):
    node = sim_node(h, f"sim_{actuator}", servo=servo, autostart=False)
    try:
        assert (node.sim.params.actuator, node.sim.params.model) == (actuator, model)
        assert node.get_parameter("model").value == model  # the parameter tells the model run
        assert list(node.get_parameter("kp").value) == [kp]  # the preset's, as the hardware node's default
    finally:
        h.remove(node)  # between two callbacks: destroyed while the executor spins, its action server killed it
    said = [ln for ln in capfd.readouterr().err.splitlines() if "model not set" in ln]
    if model == "m4":
        assert not said
    else:
        assert len(said) == 1 and "preset sts3215 has no m4: m1, the best it has (m1)" in said[0], said


def test_a_model_given_is_kept_and_a_servo_without_preset_is_refused(h):
    node = sim_node(h, "sim_xl330_m2", servo="xl330-m288", model="m2", autostart=False)
    try:
        assert node.sim.params.model == "m2"
    finally:
        h.remove(node)
    with pytest.raises(Exception, match="xc330-m288"):  # a table no preset models: not a sim servo
        sim_node(h, "sim_xc330", servo="xc330-m288", autostart=False)


@pytest.mark.parametrize(
    "servo, bad_kp, table_name",
    [("xl330-m288", None, "XL330-M288-T"), ("mx106-p1", 300.0, "MX-106(1.0)"), ("mx106", 2000.0, "MX-106(2.0)")],
)
def test_the_sim_checks_the_table_the_hardware_node_runs_for_its_servo_name(h, servo, bad_kp, table_name):
    """The sim checks ``kp`` and the joint limits against the control table the hardware node runs for the same
    ``servo`` name (its ``_validate``, no bus: the interface's checks, then :func:`hardware_refusal`), not the
    table of the preset it resolves to. Before: ``xl330-m288`` (preset xl330, no table) checked nothing, limits ±π
    and position_max 3.15 taken; ``mx106-p1`` was checked against the MX-106(2.0) (kp 0..1023.9), kp 300 taken
    where the MX-106(1.0)'s P gain register holds 0..254. (The XL330's table kp range is the actuator schema's
    bound already: no kp case.)"""
    from servo_ff.bus import control_table as ct
    from servo_ff.nodes.hardware_params import hardware_refusal
    from servo_ff.nodes.servo_base import validate_interface

    table = ct.control_table(servo)
    node = sim_node(h, f"sim_range_{servo.replace('-', '_')}", servo=servo, autostart=False)
    try:
        # limits not given: the table's position range (4095 counts: 3.14006 rad), as the hardware node's
        assert list(node.get_parameter("position_max").value) == pytest.approx([3.14006], abs=1e-5)
        hw = {**node.table.values, "servo": servo, "ids": [1], "protocol": table.protocol}
        cases = [{"position_max": [3.15]}, {"kp": [10.0], "position_max": [3.0]}]
        for changes in cases if bad_kp is None else [{"kp": [bad_kp]}, *cases]:
            values = {**hw, **changes}  # the hardware node's _validate, no bus open
            refusal = validate_interface(values) or hardware_refusal(values)
            results = node.set_parameters_atomically([Parameter(k, value=v) for k, v in changes.items()])
            assert results.successful == (refusal is None), (changes, results.reason, refusal)
            assert refusal is None or (results.reason == refusal and table_name in refusal), (results.reason, refusal)
        assert list(node.get_parameter("kp").value) == [10.0]
    finally:
        node.destroy_node()
