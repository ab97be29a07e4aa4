"""servo_walk_node over DDS: the placo walk on the MuJoCo OP3 through the feed-forward node (lockstep, as fast as
possible), cmd_vel followed; the feed-forward node refuses the walk's trajectory when it breaks its bounds; a
non-finite cmd_vel is refused by the walk node; the sim_op3 bring-up's plan. The walk node on its own: its sampling
of the planned window, the trajectory it gives the feed-forward node, malformed /joint_states bytes, cmd_timeout,
the engine process (the walk without ROS: test_walk_op3.py)."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("placo")
pytest.importorskip("mujoco")
rclpy = pytest.importorskip("rclpy")

from nodes_harness import watched  # noqa: E402

from servo_ff.models.schema import MAX_ACCELERATION  # noqa: E402
from servo_ff.ros.harness import RosHarness, wait_for  # noqa: E402

URDF = "urdf/op3.urdf"


def _op3(ros: RosHarness, max_acceleration: float = MAX_ACCELERATION):
    """The OP3 mission's graph (low-gain P k_P 280 + feed-forward) without quantisation or latency, a quick start."""
    from servo_ff.bringup.op3_mission import op3_nodes

    return op3_nodes(
        ros,
        "ff",
        280.0,
        sim_params={"counts_per_rev": 0, "latency": 0},
        ff_params={"max_acceleration": [max_acceleration]},
        walk_params={"start_delay": 0.2, "approach_time": 1.0, "cmd_timeout": 1.0},
    )


def test_walk_node_drives_op3_forward_through_feedforward(compiled_mujoco_kernels):
    from geometry_msgs.msg import Twist
    from sensor_msgs.msg import Imu, JointState

    with RosHarness(salt=41) as ros:
        sim, ff, walk = _op3(ros)
        probe = ros.make_node("walk_probe")
        cmd = probe.create_publisher(Twist, "cmd_vel", 10)
        tilt, rows = [0.0], []

        def on_imu(m):
            o = m.orientation
            tilt[0] = max(tilt[0], math.acos(max(-1.0, min(1.0, 1.0 - 2.0 * (o.x**2 + o.y**2)))))

        def on_js(m):
            t = m.header.stamp.sec + m.header.stamp.nanosec * 1e-9
            if walk.times and walk.t_walk is not None and t > walk.t_walk:
                k = [list(m.name).index(j) for j in walk.joints]
                planned = [np.interp(t, walk.times, np.asarray(walk.qs)[:, i]) for i in range(len(walk.joints))]
                rows.append(np.array(m.position)[k] - planned)

        probe.create_subscription(Imu, "imu/data", on_imu, 100)
        probe.create_subscription(JointState, "joint_states", on_js, 100)
        wait_for(lambda: walk.t_walk is not None, 60.0, "the walk node's stance")
        x0 = float(sim.servos.data.qpos[0])
        forward = Twist()
        forward.linear.x = 0.1

        def walked_on() -> bool:
            cmd.publish(forward)
            return sim.sim_time_ns * 1e-9 > walk.t_walk + 3.5

        wait_for(walked_on, 300.0, "3.5 s of walking under cmd_vel (7 steps)")
        travel = float(sim.servos.data.qpos[0]) - x0
        assert ff.rejected == 0 and walk.messages > 20
        assert tilt[0] < 0.35, tilt  # upright (measured 0.22; the trunk leans 0.1 rad by design; a fall is 0.6)
        assert travel > 0.08, travel  # forward (REP-103 x) under cmd_vel: measured 0.16 m
        err = np.sqrt(np.mean(np.square(rows), axis=0))
        legs = [i for i, j in enumerate(walk.joints) if any(p in j for p in ("hip", "knee", "ank"))]
        assert len(rows) > 300 and len(legs) == 12 and err[legs].max() < 0.08, (
            err
        )  # measured: 0.04 rad (knee, ankle pitch); the former 0.36 s gait: ≈ 0.17 rad (hip roll, knee)


def test_feedforward_refuses_walk_beyond_its_bounds_and_walk_refuses_nan_cmd(compiled_mujoco_kernels):
    from geometry_msgs.msg import Twist

    with RosHarness(salt=42) as ros:
        sim, ff, walk = _op3(ros, max_acceleration=1.0)  # rad/s²: the approach and the steps exceed it
        wait_for(lambda: ff.rejected > 0, 120.0, "the feed-forward node refusing the walk's trajectory")
        probe = ros.make_node("walk_probe")
        cmd = probe.create_publisher(Twist, "cmd_vel", 10)
        good, bad = Twist(), Twist()
        good.linear.x = 0.05
        bad.linear.x = math.nan
        wait_for(lambda: cmd.publish(good) or walk.engine.cmd[0] == 0.05, 30.0, "the cmd_vel at the walk node")
        wait_for(lambda: cmd.publish(bad) or walk.cmd_refused > 0, 30.0, "the walk node refusing a NaN cmd_vel")
        assert walk.engine.cmd == (0.05, 0.0, 0.0)  # the last good command kept


def test_op3_mission_loop_steps_on_goals_from_its_first_period(compiled_mujoco_kernels):
    """The mission's start (issue 21): the sim activated once the graph matches and sent its held goal
    (``start_lockstep``), the walk node's first chunk at once, the feed-forward node's tick on that chunk — every
    period is stepped on a goal, none on the lockstep timeout (10 s here, its largest value)."""
    from servo_ff.bringup.op3_mission import op3_nodes, start_lockstep

    with RosHarness(salt=44, events=True) as ros:
        sim, ff, walk = op3_nodes(
            ros,
            "ff",
            280.0,
            sim_params={"autostart": False, "lockstep_timeout": 10.0, "counts_per_rev": 0, "latency": 0},
            walk_params={"start_delay": 0.5, "approach_time": 1.0},  # start_delay = horizon (0.5 s): a chunk at once
        )
        start_lockstep(ros, ros.make_node("start_probe"), sim, imu_readers=1)
        wait_for(lambda: sim.sim_time_ns >= 300_000_000, 120.0, "0.3 s simulated")
        periods = sim.sim_time_ns // sim.period_ns
        assert periods <= ff.ticks + 1, (periods, ff.ticks)  # + 1: start_lockstep's goal; a timeout step: + 2
        assert walk.messages >= 1 and ff.ticks >= 30


def test_sim_op3_bringup_plan():
    from servo_ff.bringup import plan

    sim, ff, walk, described = plan("sim_op3")
    assert [n.executable for n in (sim, ff, walk, described)] == [
        "servo_sim_node",
        "servo_feedforward_node",
        "servo_walk_node",
        "servo_state_publisher_node",
    ]
    assert {n.config for n in (sim, ff, walk, described)} == {"sim_op3.yaml"}
    sim, ff, walk, _ = plan("sim_op3", gain="800", feedforward="false")
    assert sim.overrides["kp"] == ff.overrides["kp"] == [800.0] and ff.overrides["enabled"] is False
    with pytest.raises(ValueError, match="feedforward must be"):
        plan("sim_op3", feedforward="maybe")
    assert "urdf_path" not in walk.overrides  # the YAML's op3.urdf
    urdf = Path(__file__).resolve().parents[1] / "urdf" / "op3.urdf"
    sim, ff, walk, described = plan("sim_op3", urdf=str(urdf))
    assert walk.overrides["urdf_path"] == described.overrides["urdf_path"] == str(urdf)  # one robot for all


def test_sim_nimbro_op_walk_node_has_the_nimbro_gait():
    """The walk node started with `servo-ff up sim_nimbro_op`'s parameter files plans with
    dynamics.nimbro_walk's gait: every WalkParams field (the arms' posture and the knees' IK range too) and
    NIMBRO_FRAMES; a posture or an IK range the node cannot take is one line naming the parameter."""
    from rclpy.parameter import Parameter

    from servo_ff.bringup import config_dir, plan
    from servo_ff.dynamics.nimbro_walk import NIMBRO_FRAMES, nimbro_walk_params
    from servo_ff.dynamics.walk_pattern import WalkFrames
    from servo_ff.nodes.walk_node import WalkNode

    quick = [Parameter("engine_process", value=False), Parameter("start_delay", value=3600.0)]
    with RosHarness(salt=45) as ros:
        args = plan("sim_nimbro_op", namespace=ros.ns)[2].ros_args(config_dir())
        walk = ros.add(WalkNode("servo_walk", **ros.node_kwargs(), cli_args=args, parameter_overrides=quick))
        assert walk.engine.params == nimbro_walk_params()
        v = walk.table.values
        assert WalkFrames(v["trunk_link"], v["left_foot_link"], v["right_foot_link"]) == NIMBRO_FRAMES
        assert walk.engine.robot.get_joint_limits("right_knee_pitch")[0] == 0.05  # the IK's knee: bent forward
        for names, values, line in (
            (["left_elbow_pitch", "right_elbow_pitch"], [-0.4], "posture_positions has 1 value"),
            (["l_el"], [0.5], "posture_joints ['l_el'] are not joints of"),
        ):
            bad = quick + [Parameter("posture_joints", value=names), Parameter("posture_positions", value=values)]
            with pytest.raises(ValueError, match=re.escape(line)):
                WalkNode("servo_walk_bad", **ros.node_kwargs(), cli_args=args, parameter_overrides=bad)
        for lower, line in (([0.05], "ik_range_lower/ik_range_upper have 1/2 value(s) for 2 ik_range_joints"),
                            ([0.05, 5.0], "ik_ranges: 'right_knee_pitch' (5.0, 3.14")):  # fmt: skip
            bad = quick + [Parameter("ik_range_lower", value=lower)]
            with pytest.raises(ValueError, match=re.escape(line)):
                WalkNode("servo_walk_bad", **ros.node_kwargs(), cli_args=args, parameter_overrides=bad)
        knees = ["left_knee_pitch", "left_knee_pitch"]  # the second range would replace the first, unsaid
        bad = quick + [Parameter("ik_range_joints", value=knees)]
        with pytest.raises(ValueError, match=re.escape("ik_range_joints names left_knee_pitch more than once")):
            WalkNode("servo_walk_bad", **ros.node_kwargs(), cli_args=args, parameter_overrides=bad)


def test_walk_node_holds_published_velocity_at_the_urdf_limit():
    """Where placo's plan runs a joint at its URDF velocity limit, the five-point differences overshoot it (the
    NimbRo-OP's knees at the MX-106's 4.7 rad/s: 4.93 rad/s, which the feed-forward node refused): the published
    q̇ is held at the limit and counted; the point's whole q̇ is scaled by one factor, so a joint below its own limit
    moves with the held ones (here every joint the same 5.0 rad/s peaks: the legs' MX-106 held at 4.7, the arms' MX-64
    (6.6 rad/s) scaled with them, not counted; clipped alone they kept 5.0 and the joints' relations broke)."""
    from rclpy.parameter import Parameter

    from servo_ff.dynamics.walk_pattern import WalkPlan
    from servo_ff.dynamics.walk_sim import desired_motion
    from servo_ff.io.paths import share_file
    from servo_ff.nodes.walk_node import WalkNode
    from servo_ff.ros.desired_trajectory import parse_trajectory

    overrides = [Parameter("urdf_path", value=str(share_file("urdf", "nimbro_op.urdf")))]
    overrides += [Parameter("trunk_link", value="trunk_link"), Parameter("start_delay", value=3600.0)]
    with RosHarness(salt=43) as ros:
        walk = WalkNode("servo_walk_v", **ros.node_kwargs(), parameter_overrides=overrides)
        try:
            walk.now_s = lambda: 1.0
            w = 2.0 * math.pi * 2.0
            times = walk.dt * np.arange(300)
            walk.times, walk.cs = list(times), [0.5] * 300
            walk.qs = list(np.repeat((5.0 / w) * np.sin(w * times)[:, None], len(walk.joints), axis=1))
            walk.q0, walk.t0, walk.t_walk = walk.qs[0], 0.0, 0.0
            said, logger = [], walk.get_logger()
            walk.get_logger = lambda: type("Said", (), {"warning": lambda _, m, **kw: said.append(m)})()
            walk._publish_trajectory()
            walk.get_logger = lambda: logger
            traj = parse_trajectory(walk._cdr.data(), {j: i for i, j in enumerate(walk.joints)}, 1.0)
            peak = dict(zip(walk.joints, np.abs(traj.dq).max(axis=0), strict=True))
            assert peak["left_knee_pitch"] == peak["right_hip_pitch"] == 4.7 and walk.vel_held > 0
            # the log line says what was done: the points scaled as a whole (not those joints alone held)
            assert len(said) == 1 and "scaled as a whole" in said[0] and "left_knee_pitch" in said[0], said
            assert peak["left_elbow_pitch"] == pytest.approx(4.7, abs=1e-9)
            assert (traj.dq == traj.dq[:, :1]).all()  # equal joints stay equal
            # the ROS-free walk's "walk_node" sampling holds the same values (one function, both front-ends)
            plan = WalkPlan(list(walk.joints), times, np.asarray(walk.qs), *[None] * 8)
            same = desired_motion(plan, traj.t0 + traj.times, walk.dt, "walk_node", walk.vmax)[1]
            np.testing.assert_allclose(same, traj.dq, rtol=0, atol=1e-9)
        finally:
            walk.destroy_node()


def test_nimbro_walk_node_publishes_no_point_the_feedforward_node_refuses():
    """The walk node with `servo-ff up sim_nimbro_op`'s parameters, driven by hand on a fake clock through the
    approach and the first steps: every message passes the feed-forward node's check (its default bounds: the URDF's
    4.7 / 6.6 rad/s, 1000 rad/s²). With the URDF's knee range (ik_range_joints empty: before the knee fix) placo's
    right knee passes through straight in the first step (test_walk_sim.py): its q̈ at the knots is held at 1000
    rad/s² and counted (before the hold, one trajectory per DDS run was refused, 1175 rad/s²), its q̇ at 4.7 rad/s;
    with the bring-up's knee range (bent forward) no q̈ is held."""
    from rclpy.parameter import Parameter
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState

    from servo_ff.bringup import config_dir, plan
    from servo_ff.dynamics.feedforward import desired_motion_bounds
    from servo_ff.dynamics.robot import load_robot
    from servo_ff.io.paths import share_file
    from servo_ff.models.schema import MAX_ACCELERATION, MAX_VELOCITY
    from servo_ff.nodes.walk_node import WalkNode
    from servo_ff.ros.desired_trajectory import parse_trajectory

    robot = load_robot(share_file("urdf", "nimbro_op.urdf"))
    vmax, amax, src = desired_motion_bounds(robot, MAX_VELOCITY, MAX_ACCELERATION)  # the feed-forward node's defaults
    index = {j: robot.joint_names.index(j) for j in robot.joint_names}
    held = {}
    with RosHarness(salt=45) as ros:
        args = plan("sim_nimbro_op", namespace=ros.ns)[2].ros_args(config_dir())
        for knees, extra in (("urdf", {"ik_range_joints": [""]}), ("bent forward", {})):
            clock = [1.0]
            quick = {"engine_process": False, "start_delay": 0.0, "approach_time": 0.2, **extra}
            walk = WalkNode(
                "servo_walk", **ros.node_kwargs(), cli_args=args,
                parameter_overrides=[Parameter(k, value=v) for k, v in quick.items()],
            )  # fmt: skip
            try:
                walk.now_s = lambda c=clock: c[0]
                pose = list(walk.engine.q_stand[walk.perm])
                walk._on_joint_states(serialize_message(JointState(name=walk.joints, position=pose)))
                for _ in range(25):  # the approach (0.2 s) and 2.3 s of stepping in place: the knee's turn at ≈ 0.75 s
                    clock[0] += 0.1
                    walk._publish_trajectory()
                    parse_trajectory(walk._cdr.data(), index, clock[0], (vmax, amax, src))  # raises when refused
                held[knees] = (walk.acc_held, walk.vel_held)
            finally:
                walk.destroy_node()
    assert held["urdf"][0] > 0 and held["urdf"][1] > 0, held
    assert held["bent forward"][0] == 0, held


def test_walk_node_samples_its_window_as_np_interp_and_takes_one_pose():
    """support() and desired() on the two samples around t equal np.interp on the whole planned window (what
    the node computed before); after the first /joint_states the node takes no more of them
    (support_clock timer; on joint_states it keeps listening: each one publishes the support coefficient)."""
    from sensor_msgs.msg import JointState

    from servo_ff.nodes.walk_node import WalkNode

    # (t0, t_walk) when q0 is written: the walk is seen started last
    Watched, seen = watched(WalkNode, "q0", lambda n, v: None if v is None else (n.t0, n.t_walk))
    with RosHarness(salt=43) as ros:
        from rclpy.parameter import Parameter

        # the walk starts in an hour: its timers leave the planned window below to the test
        walk = ros.add(
            Watched(
                "servo_walk",
                **ros.node_kwargs(),
                parameter_overrides=[Parameter("start_delay", value=3600.0), Parameter("support_clock", value="timer")],
            )
        )
        probe = ros.make_node("walk_probe")
        pub = probe.create_publisher(JointState, "joint_states", 10)
        pose = JointState(name=list(walk.joints), position=[0.01 * i for i in range(len(walk.joints))])
        wait_for(lambda: pub.publish(pose) or walk.q0 is not None, 60.0, "the walk node taking the pose")
        topics = lambda: [s.topic_name for s in walk.subscriptions]  # noqa: E731
        wait_for(lambda: not any(t.endswith("/joint_states") for t in topics()), 20.0, "joint_states dropped")
        np.testing.assert_array_equal(walk.q0, pose.position)
        ((t0, t_walk),) = seen  # (before: q0 came first, with t0 and t_walk None)
        assert t0 is not None and t_walk == t0 + float(walk.table["approach_time"])
        rng = np.random.default_rng(0)
        walk.times = list(100.0 + 0.01 * np.arange(300))
        walk.cs = list(rng.uniform(0.0, 1.0, 300))
        walk.qs = list(rng.normal(0.0, 1.0, (300, len(walk.joints))))
        ts = np.concatenate([rng.uniform(99.9, 103.1, 500), walk.times[::7], [walk.times[-1], 99.0, 104.0]])
        qs = np.asarray(walk.qs)
        for t in ts:
            assert walk.support(t) == float(np.interp(t, walk.times, walk.cs)), t
            want = [np.interp(t, walk.times, qs[:, i]) for i in range(qs.shape[1])]
            np.testing.assert_allclose(walk.desired(t), want, rtol=0, atol=1e-14)


def test_walk_trajectory_gives_the_feedforward_node_the_motions_acceleration_between_points():
    """The walk node's published points, sampled as the feed-forward node samples them (the quintic through q, q̇,
    q̈ of the points: parse_trajectory, DesiredTrajectory), give a smooth motion's q̈ between the points too: 2 Hz
    sines of 0.3 rad (q̈ up to 47 rad/s²) on the 10 ms grid within 0.05 rad/s² at every 1 ms. Three-point differences
    (the former points) were off by up to 5.7 rad/s² there (dt²·q⃛/6 in q̇, turned by the quintic into ± dt·q⃛), which
    the OP3's (c) paid for with 12 % more energy per step than the same walk ROS-free (docs/energy.md). The
    ROS-free walk's ``desired="walk_node"`` samples the same."""
    from rclpy.parameter import Parameter

    from servo_ff.dynamics.walk_pattern import WalkPlan
    from servo_ff.dynamics.walk_sim import desired_motion
    from servo_ff.nodes.walk_node import WalkNode
    from servo_ff.ros.desired_trajectory import parse_trajectory

    clock = [1.0]
    with RosHarness(salt=43) as ros:
        walk = WalkNode(
            "servo_walk_q", **ros.node_kwargs(), parameter_overrides=[Parameter("start_delay", value=3600.0)]
        )
        try:
            walk.now_s = lambda: clock[0]
            n = len(walk.joints)
            phase, w = np.linspace(0.0, 2.0, n), 2.0 * math.pi * 2.0
            motion = lambda t: 0.3 * np.sin(w * np.asarray(t)[..., None] + phase)  # noqa: E731
            times = walk.dt * np.arange(300)  # a planned window by hand (as above): 0 … 2.99 s
            walk.times, walk.qs, walk.cs = list(times), list(motion(times)), [0.5] * 300
            walk.q0, walk.t0, walk.t_walk = walk.qs[0], 0.0, 0.0
            walk._publish_trajectory()
            traj = parse_trajectory(walk._cdr.data(), {j: i for i, j in enumerate(walk.joints)}, clock[0])
            ts = np.arange(traj.t0 + 0.001, traj.t0 + traj.times[-1], 0.001)
            assert traj.times[-1] > 0.45 and ts[0] <= clock[0] + 0.01  # the horizon's points, from now on
            q, dq, ddq = (np.array([traj.sample(t)[k] for t in ts]) for k in range(3))
            np.testing.assert_allclose(ddq, -(w**2) * motion(ts), rtol=0, atol=0.05)
            np.testing.assert_allclose(dq, 0.3 * w * np.cos(w * ts[:, None] + phase), rtol=0, atol=1e-3)
            np.testing.assert_allclose(q, motion(ts), rtol=0, atol=1e-4)
            # the ROS-free walk's "walk_node" sampling (walk_sim.desired_motion) is this one
            plan = WalkPlan(list(walk.joints), times, motion(times), *[None] * 8)
            same = desired_motion(plan, ts, walk.dt, "walk_node")
            for mine, theirs in zip(same, (q, dq, ddq)):
                np.testing.assert_allclose(mine, theirs, rtol=0, atol=1e-9)
        finally:
            walk.destroy_node()


def test_bytes_no_joint_state_on_joint_states_are_one_line_and_the_walk_takes_the_pose():
    """/joint_states is taken as bytes: bytes rclpy cannot read as a JointState (published serialized by anyone)
    are one warning, not an exception that ends the walk node's executor; the next pose is taken."""
    from sensor_msgs.msg import JointState

    from servo_ff.nodes.walk_node import WalkNode

    with RosHarness(salt=48) as ros:
        from rclpy.parameter import Parameter

        walk = ros.add(
            WalkNode("servo_walk", **ros.node_kwargs(), parameter_overrides=[Parameter("start_delay", value=3600.0)])
        )
        probe = ros.make_node("walk_garbage")
        pub = probe.create_publisher(JointState, "joint_states", 10)
        wait_for(lambda: pub.get_subscription_count(), 30.0, "discovery")
        pub.publish(b"\x00\x01\x00\x00" + b"\x01\x00\x00\x00" * 2 + b"\xff\xff\xff\xff")  # a count past the end
        pose = JointState(name=list(walk.joints), position=[0.01 * i for i in range(len(walk.joints))])
        wait_for(lambda: pub.publish(pose) or walk.q0 is not None, 60.0, "the walk node taking the pose")
        np.testing.assert_array_equal(walk.q0, pose.position)
        assert ros._thread.is_alive()


def test_the_walk_takes_its_pose_from_two_servo_nodes_joint_states_read_within_half_a_second():
    """Two servo nodes (legs; arms and head) each publish their own joints on /joint_states. Before: the walk node
    needed every joint in one message and never started ("joint_states lacks [...]" every 5 s, audit 20a e12); now
    it reads the pose across messages as the feed-forward node does (ros/start_pose.py), each joint's latest finite
    reading, every one read in the last 0.5 s (POSE_MAX_AGE); what lacks is said on /diagnostics."""
    from diagnostic_msgs.msg import DiagnosticStatus
    from rclpy.parameter import Parameter
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState

    from servo_ff.io.paths import share_file
    from servo_ff.nodes.walk_node import WalkNode

    clock = [1.0]
    with RosHarness(salt=45) as ros:
        values = {"urdf_path": str(share_file("urdf", "op3.urdf")), "start_delay": 0.0, "approach_time": 0.2}
        walk = WalkNode(
            "servo_walk_s", **ros.node_kwargs(), parameter_overrides=[Parameter(k, value=v) for k, v in values.items()]
        )
        try:
            walk.now_s = lambda: clock[0]
            legs = [j for j in walk.joints if any(p in j for p in ("hip", "knee", "ank"))]
            rest = [j for j in walk.joints if j not in legs]
            q = {j: 0.01 * (k + 1) for k, j in enumerate(walk.joints)}

            def send(names: list[str], nan: str = "") -> None:
                position = [math.nan if j == nan else q[j] for j in names]
                walk._on_joint_states(serialize_message(JointState(name=names, position=position)))

            send(legs, nan="l_knee")  # (a joint not read yet)
            assert walk.q0 is None
            clock[0] += 0.6  # the legs' readings now 0.6 s old: no part of this pose
            send(rest)
            assert walk.q0 is None
            walk.waiting.since -= 5.0  # as if 5 s had passed
            st = walk.diagnostics.status()
            unread = [j for j in legs if j != "l_knee"]
            assert st.level == DiagnosticStatus.WARN and f"no reading of {unread} in the last 0.5 s" in st.message, st
            assert "not finite (not read yet?): l_knee nan" in st.message, st
            clock[0] += 0.1
            send(legs)
            assert walk.q0 is not None and walk.t_walk is not None
            np.testing.assert_array_equal(walk.q0, [q[j] for j in walk.joints])
        finally:
            walk.destroy_node()


@pytest.mark.parametrize("engine_process", [False, True])
def test_cmd_timeout_is_judged_at_planning_time(engine_process):
    """A cmd_vel streamed every publish period keeps the walk going with cmd_timeout (0.3 s) below the trajectory's
    horizon (0.5 s); it counts as zero once older than cmd_timeout. The node is driven by hand on a fake clock
    (not spun): its samples reach 0.53 s (+ engine_lead) ahead of now, which must not make a fresh command stale."""
    from geometry_msgs.msg import Twist
    from rclpy.parameter import Parameter
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState

    from servo_ff.io.paths import share_file
    from servo_ff.nodes.walk_node import WalkNode

    clock = [1.0]
    with RosHarness(salt=43) as ros:
        values = {"urdf_path": str(share_file("urdf", "op3.urdf")), "cmd_timeout": 0.3, "start_delay": 0.0,
                  "approach_time": 0.2, "engine_process": engine_process}  # fmt: skip
        walk = WalkNode(
            "servo_walk_t", **ros.node_kwargs(), parameter_overrides=[Parameter(k, value=v) for k, v in values.items()]
        )
        try:
            walk.now_s = lambda: clock[0]
            assert walk.worker is None or walk.worker.ready(60.0)  # (the pose is taken once the engine process is up)
            walk._on_joint_states(
                serialize_message(JointState(name=walk.joints, position=list(walk.engine.q_stand[walk.perm])))
            )
            forward = Twist()
            forward.linear.x = 0.1
            for _ in range(30):  # 3 s at 10 Hz, a fresh command before every message
                clock[0] += 0.1
                walk._on_cmd(forward)
                walk._publish_trajectory()
                assert walk.engine.cmd == (0.1, 0.0, 0.0) and not walk.cmd_stale_logged, clock[0]
            assert walk.desired(clock[0]) is not None
            clock[0] += 0.4  # no command for 0.4 s > cmd_timeout
            walk._publish_trajectory()
            assert walk.engine.cmd == (0.0, 0.0, 0.0) and walk.cmd_stale_logged
            assert walk.cmd_clipped == 0  # 0.1 m/s: within the OP3 gait's 0.125 m/s
            forward.linear.x = 0.2
            walk._on_cmd(forward)  # beyond it: kept (placo clips its steps), counted and logged
            assert walk.engine.cmd == (0.2, 0.0, 0.0) and walk.cmd_clipped == 1
        finally:
            walk.destroy_node()


def test_a_late_first_trajectory_with_the_engine_process_starts_walking():
    """The first message planned after the walk's start (a timer late in sim time): its first sample is the
    worker's too (it was taken without being asked for: "1 samples taken, 0 requested")."""
    from rclpy.parameter import Parameter
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState

    from servo_ff.io.paths import share_file
    from servo_ff.nodes.walk_node import WalkNode

    clock = [1.0]
    with RosHarness(salt=44) as ros:
        values = {"urdf_path": str(share_file("urdf", "op3.urdf")), "start_delay": 1.0, "approach_time": 0.2,
                  "engine_process": True}  # fmt: skip
        walk = WalkNode(
            "servo_walk_l", **ros.node_kwargs(), parameter_overrides=[Parameter(k, value=v) for k, v in values.items()]
        )
        try:
            walk.now_s = lambda: clock[0]
            assert walk.worker is None or walk.worker.ready(60.0)  # (the pose is taken once the engine process is up)
            walk._on_joint_states(
                serialize_message(JointState(name=walk.joints, position=list(walk.engine.q_stand[walk.perm])))
            )
            assert walk.messages == 0  # the approach is more than a horizon away: nothing yet
            clock[0] = walk.t_walk + 0.15
            walk._publish_trajectory()
            assert walk.messages == 1 and walk.times[0] >= walk.t_walk
            np.testing.assert_allclose(walk.desired(clock[0]), walk.worker.q_stand()[walk.perm], atol=0.05)
        finally:
            walk.destroy_node()


def _walk_workers() -> int:
    """This process's live walk-worker children (/proc)."""
    import os
    from pathlib import Path

    n = 0
    for p in Path("/proc").glob("[0-9]*"):
        try:
            ppid = int((p / "stat").read_text().rsplit(")", 1)[1].split()[1])
            if ppid == os.getpid() and b"walk_worker" in (p / "cmdline").read_bytes():
                n += 1
        except (OSError, ValueError, IndexError):
            continue
    return n


@pytest.mark.skipif(not __import__("os").path.isdir("/proc"), reason="needs /proc")
def test_a_walk_node_refused_at_construction_leaves_no_engine_process():
    from rclpy.parameter import Parameter

    from servo_ff.io.paths import share_file
    from servo_ff.nodes.walk_node import WalkNode

    before = _walk_workers()
    with RosHarness(salt=45) as ros:
        values = {"urdf_path": str(share_file("urdf", "op3.urdf")), "joints": ["foo"], "engine_process": True}
        with pytest.raises(ValueError, match="foo"):
            WalkNode(
                "servo_walk_bad",
                **ros.node_kwargs(),
                parameter_overrides=[Parameter(k, value=v) for k, v in values.items()],
            )
    assert _walk_workers() == before
