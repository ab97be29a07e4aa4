"""docs/nodes.md's parameter tables come from module-level ParamSpec tables: generating them starts no node and
creates no rclpy context, and each table is exactly what its node declares when it runs."""

from __future__ import annotations

import pytest

rclpy = pytest.importorskip("rclpy")


def _refuse(*args, **kwargs):
    raise AssertionError("docs generation touched rclpy (a context or a node)")


def test_generating_the_tables_creates_no_context_and_no_node(monkeypatch):
    import rclpy.context
    import rclpy.node

    from servo_ff.nodes.param_docs import tables

    monkeypatch.setattr(rclpy, "init", _refuse)
    monkeypatch.setattr(rclpy, "create_node", _refuse)
    monkeypatch.setattr(rclpy.context.Context, "init", _refuse)
    monkeypatch.setattr(rclpy.node.Node, "__init__", _refuse)
    text = tables()
    names = ("sim", "hardware", "feedforward", "ilc", "fit", "walker", "state_publisher", "walk")
    assert [line for line in text.splitlines() if line.startswith("### ")] == [f"### `servo_{n}_node`" for n in names]
    assert "| `alpha.pendulum_2` |" in text and "| `actuator.firmware.vin` |" in text


def test_module_tables_are_what_each_node_declares():
    """Every node started with the docs' arguments declares exactly its module-level rows, in that order."""
    from rclpy.parameter import Parameter

    from servo_ff.io.paths import share_file
    from servo_ff.nodes.feedforward_node import FeedForwardNode
    from servo_ff.nodes.fit_node import FitNode
    from servo_ff.nodes.hardware_node import HardwareNode
    from servo_ff.nodes.ilc_node import ILCNode
    from servo_ff.nodes.param_docs import _nodes
    from servo_ff.nodes.sim_node import SimNode
    from servo_ff.nodes.state_publisher_node import StatePublisherNode
    from servo_ff.nodes.walk_node import WalkNode
    from servo_ff.nodes.walker_node import WalkerNode
    from servo_ff.ros.harness import RosHarness

    urdf = str(share_file("urdf", "pendulums2.urdf"))
    started = {
        "servo_sim_node": (SimNode, {}),
        "servo_hardware_node": (HardwareNode, {"autostart": False}),
        "servo_feedforward_node": (FeedForwardNode, {"urdf_path": urdf, "mode": "fixed"}),
        "servo_ilc_node": (ILCNode, {}),
        "servo_fit_node": (FitNode, {"urdf_path": urdf, "joint": "pendulum_1", "run_on_start": False}),
        "servo_walker_node": (WalkerNode, {}),
        "servo_state_publisher_node": (StatePublisherNode, {"urdf_path": urdf}),
        "servo_walk_node": (WalkNode, {}),
    }
    rows = _nodes()
    assert [exe for exe, _, _ in rows] == list(started)
    with RosHarness() as h:
        for exe, specs, kwargs in rows:
            cls, overrides = started[exe]
            node = cls(
                exe.removesuffix("_node"),
                **h.node_kwargs(),
                parameter_overrides=[Parameter(k, value=v) for k, v in overrides.items()],
            )
            try:
                declared = [s for t in node.parameter_tables for s in t.specs.values()]
            finally:
                node.destroy_node()
            assert declared == specs(**kwargs), exe
