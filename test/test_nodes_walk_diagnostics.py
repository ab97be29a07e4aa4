"""servo_walk_node's ``/diagnostics`` (nodes/walk_diagnostics.py): its phase through a walk driven by hand on a fake
clock (holding the pose, approach, walking, halted), WARN for a stale or refused cmd_vel and only until the next
status, ERROR when the engine processes are given up; over DDS, the status of a node on sim time with no /clock
(its timer on the steady clock)."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("placo")
rclpy = pytest.importorskip("rclpy")

from servo_ff.ros.harness import RosHarness, wait_for  # noqa: E402


def _walk(ros: RosHarness, name: str, **values):
    from rclpy.parameter import Parameter

    from servo_ff.io.paths import share_file
    from servo_ff.nodes.walk_node import WalkNode

    values = {"urdf_path": str(share_file("urdf", "op3.urdf")), **values}
    return WalkNode(name, **ros.node_kwargs(), parameter_overrides=[Parameter(k, value=v) for k, v in values.items()])


def _values(status) -> dict[str, str]:
    return {kv.key: kv.value for kv in status.values}


def test_the_walk_status_follows_its_phases_and_warns_once_per_refusal():
    from diagnostic_msgs.msg import DiagnosticStatus as S
    from geometry_msgs.msg import Twist
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState

    clock = [1.0]
    with RosHarness(salt=61) as ros:
        walk = _walk(ros, "servo_walk_d", start_delay=0.5, approach_time=0.5, cmd_timeout=1.0)
        try:
            walk.now_s = lambda: clock[0]
            st = walk.diagnostics.status()
            assert st.level == S.OK and st.message == "waiting for /joint_states", st  # not yet SAY_AFTER
            walk.waiting.since -= 5.0  # as if 5 s had passed with no /joint_states
            st = walk.diagnostics.status()
            assert st.level == S.WARN and "waiting for /joint_states for 5 s" in st.message, st
            assert _values(st)["cmd_vel_age"] == "none yet" and _values(st)["engine_pid"] == "in process"
            walk._on_joint_states(
                serialize_message(JointState(name=walk.joints, position=list(walk.engine.q_stand[walk.perm])))
            )
            phases = []
            forward = Twist()
            forward.linear.x = 0.1
            for _ in range(20):  # 2 s at 10 Hz
                walk._on_cmd(forward)
                walk._publish_trajectory()
                phases.append(_values(walk.diagnostics.status())["phase"])
                clock[0] += 0.1
            assert phases[0] == "holding the measured pose" and "approach" in phases and phases[-1] == "walking"
            assert phases.index("approach") < phases.index("walking"), phases
            st = walk.diagnostics.status()
            assert st.level == S.OK and st.message == "walking", st
            assert _values(st)["cmd_vel"] == "0.1 0 0" and _values(st)["trajectories"] == str(walk.messages)

            bad = Twist()
            bad.linear.x = math.nan
            walk._on_cmd(bad)  # refused: WARN in the next status only
            st = walk.diagnostics.status()
            assert st.level == S.WARN and "since the last status: 1 cmd_refused" in st.message, st
            assert _values(st)["cmd_refused"] == "1"
            assert walk.diagnostics.status().level == S.OK

            clock[0] += 1.5  # no cmd_vel for 1.5 s > cmd_timeout
            walk._publish_trajectory()
            st = walk.diagnostics.status()
            assert st.level == S.WARN and "no cmd_vel for 1 s" in st.message, st
            walk._on_cmd(forward)
            walk._publish_trajectory()
            assert walk.diagnostics.status().level == S.OK

            halt = Twist()
            halt.angular.x = -1.0
            walk._on_cmd(halt)
            for _ in range(40):  # the step in progress, then standing
                clock[0] += 0.1
                walk._publish_trajectory()
            st = walk.diagnostics.status()
            assert _values(st)["phase"] == "halted" and _values(st)["halt_requested"] == "True", st
            assert st.level == S.OK  # a requested halt is no fault

            walk.engine_given_up = True  # (walk_process.fault: MAX_FAILED_STARTS workers ended before they were up)
            st = walk.diagnostics.status()
            assert st.level == S.ERROR and st.message.startswith("given up"), st
        finally:
            walk.destroy_node()


def test_a_walk_node_on_sim_time_with_no_clock_says_so_on_diagnostics():
    """Its timers on sim time do not run without /clock: the status goes out on the steady clock."""
    from diagnostic_msgs.msg import DiagnosticArray
    from diagnostic_msgs.msg import DiagnosticStatus as S

    with RosHarness(salt=62) as ros:
        walk = ros.add(_walk(ros, "servo_walk_c", use_sim_time=True, start_delay=3600.0))
        probe = ros.make_node("walk_diag_probe")
        got: list = []
        probe.create_subscription(DiagnosticArray, "/diagnostics", got.append, 50)
        name = f"{walk.get_fully_qualified_name()}: walk"

        def warned():
            return [s for m in got for s in m.status if s.name == name and s.level == S.WARN]

        st = wait_for(warned, 30.0, "the walk node's WARN status")[0]
        assert st.message.startswith("waiting for /clock for "), st
        assert _values(st)["phase"] == "waiting for /clock" and walk.q0 is None
