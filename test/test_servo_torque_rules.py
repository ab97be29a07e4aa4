"""The torque rules of the servo interface nodes, on the methods themselves (the node-level tests:
test_nodes_goal_refusals.py, test_nodes_feedforward_torque.py): a lost bus is not 'torque on' (the feed-forward node
reads the pose again after it), and one servo's protective shutdown refuses only a goal naming no other joint."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("rclpy")
from servo_ff.nodes.hardware_commands import HardwareCommands  # noqa: E402
from servo_ff.nodes.servo_commands import ServoCommands  # noqa: E402


def _hardware(connected: bool) -> SimpleNamespace:
    return SimpleNamespace(configured=True, connected=connected, unpowered=set(), hw_torque_is_on=lambda: True)


def test_a_lost_bus_is_not_torque_on():
    assert HardwareCommands.hw_torque_all_on(_hardware(connected=True))
    assert not HardwareCommands.hw_torque_all_on(_hardware(connected=False))


def _node(off: list[bool]) -> SimpleNamespace:
    joints = ["hip", "knee", "ankle"]
    return SimpleNamespace(
        active=True,
        n=len(joints),
        gate=SimpleNamespace(index={j: k for k, j in enumerate(joints)}),
        names={"torque_enable": "servo/torque_enable"},
        hw_states_refusal=lambda: None,
        hw_torque_off=lambda: np.array(off),
        absent_joints=lambda names: [],
    )


def test_a_protective_shutdown_refuses_only_goals_naming_no_other_joint():
    node = _node([False, True, False])  # the knee's servo shut itself down
    assert ServoCommands.goal_refusal(node, ["hip", "knee", "ankle"]) is None  # the others stay driven
    kind, reason = ServoCommands.goal_refusal(node, ["knee"])
    assert kind == "torque" and "on knee" in reason
    kind, reason = ServoCommands.goal_refusal(_node([True, True, True]), ["hip", "knee", "ankle"])
    assert kind == "torque" and "torque is off:" in reason  # off by request: every joint
