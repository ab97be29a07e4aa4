"""servo_walk_node's halt over DDS: cmd_vel ``angular.x = -1`` (the humanoid league's "stop walking", bitbots_hcm
StopWalking) stops the walk after the step in progress and the published trajectory holds the engine's halt pose; a
forward cmd_vel walks again; ``on_cmd_timeout: halt`` halts on a stale cmd_vel (placo, in its engine process). The
node is driven on a fake clock (its trajectory messages planned by hand), its cmd_vel taken over DDS."""

from __future__ import annotations

import re

import numpy as np
import pytest

pytest.importorskip("pinocchio")
rclpy = pytest.importorskip("rclpy")

from servo_ff.ros.harness import RosHarness, wait_for  # noqa: E402


def _twist(x: float = 0.0, angular_x: float = 0.0):
    from geometry_msgs.msg import Twist

    msg = Twist()
    msg.linear.x, msg.angular.x = x, angular_x
    return msg


class _Driven:
    """A walk node on a fake clock: cmd_vel over DDS from a probe, trajectory messages planned by hand."""

    def __init__(self, ros: RosHarness, name: str, **values):
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.parameter import Parameter
        from rclpy.serialization import serialize_message
        from sensor_msgs.msg import JointState

        from servo_ff.io.paths import share_file
        from servo_ff.nodes.walk_node import WalkNode

        # (its timer, run by spin_once when a cmd_vel is taken, plans on the same fake clock in this thread)
        urdf = str(share_file("urdf", "op3.urdf"))
        values = {"urdf_path": urdf, "start_delay": 0.0, "approach_time": 0.2, **values}
        self.walk = WalkNode(
            name, **ros.node_kwargs(), parameter_overrides=[Parameter(k, value=v) for k, v in values.items()]
        )
        self.clock = [1.0]
        self.walk.now_s = lambda: self.clock[0]
        self.executor = SingleThreadedExecutor(context=ros.context)
        self.executor.add_node(self.walk)
        from geometry_msgs.msg import Twist

        self.cmd = ros.make_node(f"{name}_probe").create_publisher(Twist, "cmd_vel", 10)
        stand = self.walk.engine.q_stand if self.walk.worker is None else self.walk.worker.q_stand()
        pose = JointState(name=self.walk.joints, position=list(stand[self.walk.perm]))
        self.walk._on_joint_states(serialize_message(pose))

    def send(self, msg, arrived, what: str) -> None:
        """Publish ``msg`` on cmd_vel until ``arrived()`` (the node spun to take it)."""
        wait_for(lambda: self.cmd.publish(msg) or self.executor.spin_once(timeout_sec=0.05) or arrived(), 60.0, what)

    def points(self, seconds: float) -> list[np.ndarray]:
        """The published points (positions, node order) of each message over ``seconds`` of the fake clock."""
        from servo_ff.ros.desired_trajectory import parse_trajectory

        index = {j: k for k, j in enumerate(self.walk.joints)}
        out = []
        for _ in range(round(seconds / 0.1)):
            self.clock[0] += 0.1
            self.walk._publish_trajectory()
            out.append(parse_trajectory(self.walk._cdr.data(), index, self.clock[0]).q)
        return out

    def close(self) -> None:
        self.executor.remove_node(self.walk)
        self.walk.destroy_node()


def _still(messages: list[np.ndarray]) -> bool:
    """Every point of the last message equal to its first (to 1e-9 rad)."""
    return bool(np.ptp(messages[-1], axis=0).max() <= 1e-9)


def test_cmd_vel_angular_x_minus_one_halts_the_cpg_walk_in_its_halt_pose_and_a_cmd_vel_walks_again():
    with RosHarness(salt=53) as ros:
        node = _Driven(ros, "servo_walk_h", gait="op3_cpg", cmd_timeout=3600.0)
        walk = node.walk
        try:
            node.send(_twist(0.03), lambda: walk.engine.cmd[0] == 0.03, "the forward cmd_vel at the walk node")
            walking = node.points(3.0)
            assert not _still(walking) and walk.engine.state.gcv > 0.3
            node.send(_twist(0.05, -1.0), lambda: walk.engine.halt_requested, "the halt at the walk node")
            assert walk.engine.cmd[0] == 0.03  # its other components ignored
            halting: list[np.ndarray] = []
            while not (halting and _still(halting)):  # polled on the fake clock, bounded
                halting += node.points(0.1)
                assert len(halting) < 100, "no halt within 10 s"
            assert walk.standing and walk.engine.halted
            np.testing.assert_array_equal(halting[-1][0], walk.engine.q_stand[walk.perm])  # the CPG's halt pose
            assert walk.support(node.clock[0]) == 0.5
            standing = node.points(1.0)
            assert all(np.array_equal(m, np.broadcast_to(halting[-1][0], m.shape)) for m in standing)
            node.send(_twist(0.0), lambda: walk.engine.cmd[0] == 0.0, "a zero cmd_vel at the walk node")
            assert walk.engine.halt_requested  # a zero cmd_vel (a teleop streaming zeros) leaves it standing
            assert all(np.array_equal(m, np.broadcast_to(halting[-1][0], m.shape)) for m in node.points(0.5))
            node.send(_twist(0.03), lambda: not walk.engine.halt_requested, "the walk-again cmd_vel")
            again = node.points(1.5)
            assert not _still(again) and not walk.standing and walk.engine.state.walking
        finally:
            node.close()


def test_on_cmd_timeout_halt_stops_the_placo_walk_in_its_engine_process_with_the_feet_side_by_side():
    import pinocchio as pin
    from rclpy.exceptions import InvalidParameterValueException

    from servo_ff.io.paths import share_file

    pytest.importorskip("placo")
    with RosHarness(salt=54) as ros:
        with pytest.raises(
            InvalidParameterValueException, match=re.escape("on_cmd_timeout='stop' is not one of step_in_place, halt")
        ):
            _Driven(ros, "servo_walk_bad", on_cmd_timeout="stop")
        node = _Driven(ros, "servo_walk_p", engine_process=True, on_cmd_timeout="halt", cmd_timeout=2.0)
        walk = node.walk
        try:
            node.send(_twist(0.1), lambda: walk.engine.cmd[0] == 0.1, "the forward cmd_vel at the walk node")
            messages: list[np.ndarray] = node.points(1.5)
            assert not _still(messages) and not walk.engine.halt_requested
            while not (walk.standing and _still(messages)):  # no further cmd_vel: stale after 2 s, then the halt
                messages += node.points(0.1)
                assert len(messages) < 150, "no halt within 15 s"
            assert walk.engine.halt_requested and walk.cmd_stale_logged
            urdf = str(share_file("urdf", "op3.urdf"))
            model = pin.buildModelFromUrdf(urdf)
            data = model.createData()
            q = pin.neutral(model)
            for j, v in zip(walk.joints, messages[-1][0], strict=True):
                q[model.joints[model.getJointId(j)].idx_q] = v
            pin.framesForwardKinematics(model, data, q)
            left, right = (data.oMf[model.getFrameId(f)] for f in ("l_sole", "r_sole"))
            rel = left.actInv(right).translation  # the right sole in the left sole's frame [m]
            assert abs(rel[0]) < 1e-3 and abs(rel[2]) < 1e-3, rel  # side by side, both on the ground
            node.send(_twist(0.1), lambda: not walk.engine.halt_requested, "the walk-again cmd_vel")
            again = node.points(1.5)
            assert not _still(again) and not walk.standing
        finally:
            node.close()
