"""servo_walk_node with ``gait: op3_cpg`` steered by cmd_vel (linear.y, angular.z, linear.x < 0), driven by hand on
a fake clock as test_nodes_walk_cpg.py: the published points are the engine's under the same Twist (the hips yaw, the
legs roll), within the feed-forward node's bounds; a Twist beyond an axis's top is walked at the top and said."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pinocchio")
rclpy = pytest.importorskip("rclpy")

from nodes_harness import walk_points  # noqa: E402

from servo_ff.ros.harness import RosHarness  # noqa: E402


@pytest.mark.parametrize("twist", [(0.0, 0.0, 0.27), (0.0, 0.04, 0.0), (-0.08, 0.0, 0.0)])
def test_op3_cpg_walk_node_follows_a_steering_twist(twist):
    from geometry_msgs.msg import Twist, Vector3
    from rclpy.parameter import Parameter
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState

    from servo_ff.dynamics.feedforward import desired_motion_bounds
    from servo_ff.dynamics.nimbro_cpg_engine import op3_cpg_engine
    from servo_ff.dynamics.robot import load_robot
    from servo_ff.io.paths import share_file
    from servo_ff.nodes.walk_node import WalkNode

    urdf = share_file("urdf", "op3.urdf")
    ref = op3_cpg_engine(urdf)
    vx, vy, wz = twist
    assert ref.beyond_reach(vx, vy, wz) == []  # about half each axis's top
    clock = [1.0]
    values = {"urdf_path": str(urdf), "gait": "op3_cpg", "start_delay": 0.0, "approach_time": 0.2}
    values["cmd_timeout"] = 3600.0
    with RosHarness(salt=53) as ros:
        overrides = [Parameter(k, value=v) for k, v in values.items()]
        walk = WalkNode("servo_walk", **ros.node_kwargs(), parameter_overrides=overrides)
        try:
            perm = [ref.joints.index(j) for j in walk.joints]
            robot = load_robot(urdf)
            bounds = desired_motion_bounds(robot, 20.0, 1000.0)  # the feed-forward node's defaults
            index = {j: robot.joint_names.index(j) for j in walk.joints}
            walk.now_s = lambda: clock[0]
            walk._on_cmd(Twist(linear=Vector3(x=vx, y=vy), angular=Vector3(z=wz)))
            assert walk.cmd_clipped == 0
            walk._on_joint_states(serialize_message(JointState(name=walk.joints, position=list(ref.q_stand[perm]))))
            points = walk_points(walk, clock, index, bounds)  # the approach, then 2.3 s of the walk
            ref.set_cmd(vx, vy, wz)
            ref.start()
            want = [ref.tick() for _ in range(max(points) + 1)]
            assert len(points) > 250
            gcv = (ref.state.gcv, ref.state.gcv_y, ref.state.gcv_z)
            axis = int(np.argmax(np.abs(twist)))
            assert abs(gcv[axis]) > 0.3 and np.sign(gcv[axis]) == np.sign(twist[axis])  # steering, not in place
            for k, q in points.items():
                np.testing.assert_array_equal(q, want[k].q[perm], err_msg=f"tick {k}")
            moved = np.array([want[k].q for k in points])
            yaw = [ref.joints.index(j) for j in ("l_hip_yaw", "r_hip_yaw")]
            assert (np.abs(moved[:, yaw]).max() > 0.05) == (wz != 0)  # the hips yaw only when turning
            # beyond the top: walked at the top (gcv ±1), counted and said
            top = ref.tops(vx)[axis]
            big = [vx, vy, wz]
            big[axis] = 2.0 * top * np.sign(twist[axis])
            walk._on_cmd(Twist(linear=Vector3(x=big[0], y=big[1]), angular=Vector3(z=big[2])))
            assert walk.cmd_clipped == 1 and walk.engine.gcv3(*walk.engine.cmd)[axis] == np.sign(twist[axis])
        finally:
            walk.destroy_node()
