"""The MuJoCo sim node's stamps and goal timing over DDS, against its servo layer stepped without ROS: every
``joint_states`` carries the state at its stamp, and a trajectory received at simulated time t drives the periods
from t on — what a serial node applies given the arrival time it reports on ``trajectory_status``. A state
published with another period's stamp, or physics stepped on a goal one period stale (a pipelined physics thread
would), fails it, as fast as possible (batches of periods per callback) and paced."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from nodes_harness import RosHarness, wait_for

pytest.importorskip("rclpy")
pytest.importorskip("mujoco")
import json  # noqa: E402

from builtin_interfaces.msg import Duration  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import String  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

from servo_ff.nodes.sim_node import MujocoSimNode  # noqa: E402
from servo_ff.ros.common import GoalGate  # noqa: E402
from servo_ff.ros.trajectory_plan import plan_trajectory  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
JOINTS = ["shoulder", "elbow"]


def arm_parameters(rtf: float) -> list[Parameter]:
    values = {
        "urdf_path": str(ROOT / "urdf" / "arm2r.urdf"),
        "servo_config": str(ROOT / "config" / "servos_arm2r.yaml"),
        "publish_clock": True,
        "real_time_factor": rtf,
        "rate_hz": 500.0,
        "physics_dt": 0.001,
        "counts_per_rev": 4096,
        "latency": 1,  # a goal reaches the firmware one period later: goal timing shows in the positions
    }
    return [Parameter(k, value=v) for k, v in values.items()]


def reach() -> JointTrajectory:
    """Two points in 0.5 s, started on reception (header.stamp 0)."""
    msg = JointTrajectory(joint_names=JOINTS)
    for t, q in ((0.2, [0.4, -0.6]), (0.5, [-0.3, 0.8])):
        ns = int(t * 1e9)
        msg.points.append(JointTrajectoryPoint(positions=q, time_from_start=Duration(sec=0, nanosec=ns)))
    return msg


def stamp_ns(msg) -> int:
    return msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec


@pytest.mark.parametrize("rtf", [0.0, 1.0])
def test_each_state_is_the_layers_at_its_stamp_with_goals_from_the_reception_period(compiled_mujoco_kernels, rtf):
    h = RosHarness(salt=57)
    try:
        # the reference: the same model built by the same node class, never started (not in the executor)
        twin = MujocoSimNode("servo_twin", **h.node_kwargs(), parameter_overrides=arm_parameters(rtf))
        sim = h.add(MujocoSimNode("servo_sim", **h.node_kwargs(), parameter_overrides=arm_parameters(rtf)))
        assert list(sim.joints) == JOINTS and (sim.substeps, sim.period_ns) == (2, 2_000_000)
        probe = h.make_node("timing_probe")
        states: list[JointState] = []
        status: list[dict] = []
        probe.create_subscription(JointState, "joint_states", states.append, 1000)
        probe.create_subscription(String, "servo/trajectory_status", lambda m: status.append(json.loads(m.data)), 10)
        pub = probe.create_publisher(JointTrajectory, "servo/joint_trajectory", 10)
        wait_for(lambda: sim.active and len(states) > 10 and pub.get_subscription_count(), 60.0, "the arm's states")
        msg = reach()
        pub.publish(msg)
        got = wait_for(lambda: status and status[0], 30.0, "the trajectory's status")
        assert got["accepted"], got
        received = got["received_ns"]
        end = received + 600_000_000  # the trajectory ended 0.1 s before
        # as fast as possible, the probe (same executor) takes a state per batch of periods: the others are lost
        wait_for(lambda: sum(stamp_ns(m) > end for m in states) >= 5, 60.0, f"5 states after {end * 1e-9:.2f} s")
        received_states = list(states)
    finally:
        twin.destroy_node()
        h.shutdown()

    # the layer stepped without ROS, period k from k * period: the held goal (activation holds the start pose),
    # then the trajectory planned at its reception time, evaluated at the start of each period
    s, period = twin.backend.servos, twin.period_ns
    gate = GoalGate(list(twin.joints), twin.gate.lower.copy(), twin.gate.upper.copy(), twin.gate.goal.copy())
    gate.goal = np.clip(twin.backend.state[0], gate.lower, gate.upper)
    plan = plan_trajectory(msg, received * 1e-9, gate, twin.joints, None)
    s.set_enable(1.0)
    last = stamp_ns(received_states[-1]) // period
    expected = np.empty((last + 1, 3, len(JOINTS)))
    for k in range(last):
        t = k * period * 1e-9
        goal = gate.goal if t < plan.start else np.clip(plan.spline.position(t), gate.lower, gate.upper)
        s.command(goal)
        s.step(twin.substeps)
        js = s.joint_state()
        s.imu()  # as the node's outputs read it each period
        expected[k + 1] = js.position, js.velocity, js.effort
    stamps = np.array([stamp_ns(m) for m in received_states])
    assert (stamps % period == 0).all() and (np.diff(stamps) > 0).all(), "whole periods, in order, none twice"
    k = stamps // period
    got_states = np.array([[m.position, m.velocity, m.effort] for m in received_states])
    before, after = k * period <= received, k * period > end
    assert before.sum() >= 5 and after.sum() >= 5, (before.sum(), after.sum())  # both sides of the trajectory
    np.testing.assert_array_equal(got_states, expected[k])
    assert np.ptp(got_states[:, 0], axis=0).max() > 0.5  # the arm moved: a goal one period off would show
