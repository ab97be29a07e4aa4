"""A servo node's destroy_node takes its FollowJointTrajectory action server down with it: rclpy's
``Node.destroy_node`` leaves waitables alone, and an action server left to the garbage collector, freed after its
node and context, segfaulted processes at exit."""

from __future__ import annotations

import pytest
from nodes_harness import PENDULUM_SIM, RosHarness, sim_node, wait_for

pytest.importorskip("rclpy")
pytest.importorskip("control_msgs")


def _action_services(probe, ns: str) -> set[str]:
    return {n for n, _ in probe.get_service_names_and_types() if n.startswith(f"{ns}/servo/follow_joint_trajectory/")}


def test_destroy_node_takes_the_action_server_down():
    with RosHarness(salt=73) as h:
        sim = sim_node(h, **PENDULUM_SIM)
        probe = h.make_node("destroy_probe")
        up = wait_for(lambda: _action_services(probe, h.ns), 20.0, "the action server's services in the graph")
        assert {f"{h.ns}/servo/follow_joint_trajectory/_action/send_goal"} <= up
        h.remove(sim)
        # left alive, the action server keeps its services (and the node's handle) in the graph
        wait_for(lambda: not _action_services(probe, h.ns), 20.0, "the action server gone from the graph")
        assert sim.fjt.server is None
