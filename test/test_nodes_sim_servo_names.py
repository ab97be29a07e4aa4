"""servo_sim_node takes the hardware node's `servo` names where a preset models that servo (presets.PRESET_ALIASES:
xl330-m288, mx106-p1, …) and, `model` not given, the best model a preset has when it has no m4, said in one line
(before: `servo: xl330-m288` and `mx106-p1` were refused, `servo: sts3215` without `model: m1` stopped the sim)."""

from __future__ import annotations

import pytest
from nodes_harness import RosHarness, sim_node

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
