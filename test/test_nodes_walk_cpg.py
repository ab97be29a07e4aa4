"""servo_walk_node with ``gait: nimbro_cpg`` (the NimbRo-OP's own CPG, dynamics.nimbro_cpg_engine) on
urdf/nimbro_op.urdf, driven by hand on a fake clock: the published points are the engine's q (the node's joint
order) on its 8 ms tick, within the feed-forward node's bounds; the support coefficient sent over DDS is the
engine's (its phase's); a stale cmd_vel steps in place; what the CPG cannot take is refused in one line."""

from __future__ import annotations

import re

import numpy as np
import pytest

pytest.importorskip("pinocchio")
rclpy = pytest.importorskip("rclpy")

from nodes_harness import walk_points  # noqa: E402

from servo_ff.ros.harness import RosHarness, wait_for  # noqa: E402


def _node(ros: RosHarness, name: str, **extra):
    from rclpy.parameter import Parameter

    from servo_ff.io.paths import share_file
    from servo_ff.nodes.walk_node import WalkNode

    values = {"urdf_path": str(share_file("urdf", "nimbro_op.urdf")), "gait": "nimbro_cpg", "start_delay": 0.0}
    values |= {"approach_time": 0.2, "cmd_timeout": 3600.0, **extra}
    return WalkNode(name, **ros.node_kwargs(), parameter_overrides=[Parameter(k, value=v) for k, v in values.items()])


def test_cpg_walk_node_publishes_the_engines_q_and_support_coefficient():
    from geometry_msgs.msg import Twist
    from rclpy.parameter import Parameter
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64

    from servo_ff.dynamics.feedforward import desired_motion_bounds
    from servo_ff.dynamics.nimbro_cpg_engine import CpgEngine
    from servo_ff.dynamics.robot import load_robot
    from servo_ff.io.paths import share_file

    urdf = share_file("urdf", "nimbro_op.urdf")
    ref = CpgEngine(urdf)
    joints = ref.joints[::-1]  # a published order other than the engine's
    clock = [1.0]
    with RosHarness(salt=47) as ros:
        walk = _node(ros, "servo_walk", joints=joints)
        try:
            assert walk.dt == 0.008 and walk.joints == joints and walk.gait == "nimbro_cpg"
            perm = [ref.joints.index(j) for j in joints]
            got: list[float] = []
            probe = ros.make_node("cpg_probe")
            probe.create_subscription(Float64, "support_coefficient", lambda m: got.append(m.data), 100)
            robot = load_robot(urdf)
            bounds = desired_motion_bounds(robot, 20.0, 1000.0)  # the feed-forward node's defaults
            index = {j: robot.joint_names.index(j) for j in walk.joints}
            walk.now_s = lambda: clock[0]
            walk._on_cmd(Twist(linear=type(Twist().linear)(x=0.04)))
            walk._on_joint_states(serialize_message(JointState(name=joints, position=list(ref.q_stand[perm]))))
            points = walk_points(walk, clock, index, bounds)  # the approach, then 2.3 s of the walk
            ref.set_cmd(0.04, 0.0, 0.0)
            ref.start()
            want = [ref.tick() for _ in range(max(points) + 1)]
            assert len(points) > 250 and ref.state.gcv > 0.3  # walking forward, not stepping in place
            for k, q in points.items():
                np.testing.assert_array_equal(q, want[k].q[perm], err_msg=f"tick {k}")
            # the support coefficient for each tick's time, sent over DDS when it changes (and each publish_period)
            sent = []
            i0 = next(i for i, t in enumerate(walk.times) if t > walk.t_walk - 1e-9)  # the walk's first tick
            for k in range(1, len(want)):
                before = walk.support_out.sent
                ns = round((walk.times[i0 + k] - 0.008) * 1e9)  # a stamp one support_lead before tick k
                stamp = JointState()
                stamp.header.stamp.sec, stamp.header.stamp.nanosec = divmod(ns, 10**9)
                walk._on_joint_states(serialize_message(stamp))
                if walk.support_out.sent > before:
                    sent.append(walk.support(ns // 10**9 + (ns % 10**9) * 1e-9 + 0.008))  # as the node reads it
                    assert sent[-1] == pytest.approx(want[k].c_left, abs=1e-6), k
                    wait_for(lambda n=len(sent): len(got) >= n, 30.0, f"support coefficient message {len(sent)}")
            assert got == sent and min(got) == 0.0 and max(got) == 1.0 and any(0.1 < c < 0.9 for c in got)
            # a stale cmd_vel: stepping in place (gcv back to 0)
            walk.set_parameters([Parameter("cmd_timeout", value=0.05)])
            clock[0] += 0.1
            walk._publish_trajectory()
            assert walk.engine.cmd == (0.0, 0.0, 0.0) and walk.cmd_stale_logged
        finally:
            walk.destroy_node()


class _Said:
    """A node's logger: its lines kept, (level, text)."""

    def __init__(self):
        self.lines: list[tuple[str, str]] = []

    def __getattr__(self, level: str):
        return lambda m, **_: self.lines.append((level, m))


def test_unstamped_joint_states_send_the_support_coefficient_of_the_nodes_clock():
    """/joint_states with header.stamp 0 (a driver that does not stamp). Before: the coefficient was the plan's at
    0 + support_lead, np.interp held at the window's first sample: 2 messages in 4 s of walking, off the plan by 0.44
    on average and 1.0 at worst (audit 20a e6). Now an unstamped message is taken at the node's clock (said once);
    a stamp the plan cannot answer (another clock's: 10 s behind) sends none, said."""
    from geometry_msgs.msg import Twist
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState

    clock, said = [1.0], _Said()
    with RosHarness(salt=46) as ros:
        walk = _node(ros, "servo_walk_u")
        try:
            walk.now_s = lambda: clock[0]
            walk.get_logger = lambda: said
            sends: list[tuple[float, float]] = []  # (time, coefficient) of each send
            walk.support_out.send = lambda t, c: sends.append((t, c))
            walk._on_cmd(Twist(linear=type(Twist().linear)(x=0.04)))
            walk._on_joint_states(serialize_message(JointState(name=walk.joints, position=[0.0] * len(walk.joints))))
            unstamped = serialize_message(JointState())
            for k in range(400):  # 3.2 s of 8 ms ticks, a message planned every 0.096 s
                clock[0] += 0.008
                if k % 12 == 0:
                    walk._publish_trajectory()
                walk._on_joint_states(unstamped)
                t, c = sends[-1]
                assert len(sends) == k + 1 and t == pytest.approx(clock[0] + 0.008, abs=1e-9), (k, t, clock[0])
                assert c == walk.support(clock[0] + 0.008)
            walking = [c for t, c in sends if t > walk.t_walk + 0.5]
            assert min(walking) == 0.0 and max(walking) == 1.0  # the plan's single supports, not one held value
            assert sum("unstamped (header.stamp 0)" in m for _, m in said.lines) == 1, said.lines
            foreign = JointState()
            foreign.header.stamp.sec = int(clock[0]) - 10  # another clock's stamp
            walk._on_joint_states(serialize_message(foreign))
            assert len(sends) == 400 and walk.js_support.refused == 1
            assert any(level == "warning" and "outside what the plan answers" in m for level, m in said.lines)
        finally:
            walk.destroy_node()


def test_what_the_cpg_cannot_take_is_one_line():
    with RosHarness(salt=47) as ros:
        for extra, line in (
            ({"engine_process": True}, "engine_process: true with gait nimbro_cpg"),
            ({"balance_ankle_pitch": 0.5}, "balance_* gains with gait nimbro_cpg"),
        ):
            with pytest.raises(ValueError, match=re.escape(line)):
                _node(ros, "servo_walk_bad", **extra)


def test_sim_nimbro_op_gait_cpg_starts_the_walk_node_on_the_cpg():
    """The walk node started with `servo-ff up sim_nimbro_op gait:=cpg`'s parameter files and arguments walks the
    CPG (the YAML's placo rows and engine_process: true notwithstanding), on the YAML's joint order."""
    import yaml
    from rclpy.parameter import Parameter

    from servo_ff.bringup import config_dir, plan
    from servo_ff.dynamics.nimbro_cpg_engine import CpgEngine
    from servo_ff.nodes.walk_node import WalkNode

    with RosHarness(salt=47) as ros:
        args = plan("sim_nimbro_op", namespace=ros.ns, gait="cpg")[2].ros_args(config_dir())
        quick = [Parameter("start_delay", value=3600.0)]
        walk = ros.add(WalkNode("servo_walk", **ros.node_kwargs(), cli_args=args, parameter_overrides=quick))
        cfg = yaml.safe_load((config_dir() / "sim_nimbro_op.yaml").read_text())
        assert isinstance(walk.engine, CpgEngine) and walk.worker is None and walk.dt == 0.008
        assert walk.joints == cfg["/**"]["ros__parameters"]["joints"]
