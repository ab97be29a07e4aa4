"""The MuJoCo bring-ups: sim_humanoid, sim_arm and sim_so100 in the bring-up table, their arguments, and `servo-ff up
sim_humanoid` as a user runs it: the humanoid stands and steps with feed-forward (over real DDS)."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest

from servo_ff.bringup import plan

ROOT = Path(__file__).resolve().parents[1]


def test_plans_and_arguments(tmp_path):
    sim, ff, walker, desc = plan("sim_humanoid")
    names = ["servo_sim", "servo_feedforward", "servo_walker", "servo_state_publisher"]
    assert [n.name for n in (sim, ff, walker, desc)] == names
    assert ff.overrides["enabled"] is True and not sim.overrides and not desc.overrides
    assert ff.overrides["u_nominal"] == 15.0  # the YAML's servo_config's α̂: test_bringup_servo_alpha.py
    urdf, servos = ROOT / "urdf" / "humanoid20.urdf", ROOT / "config" / "servos_humanoid.yaml"  # the α̂ reads them
    sim, ff, walker, desc = plan(
        "sim_humanoid", urdf=str(urdf), servo_config=str(servos), support="contacts", n_steps="3", feedforward="false"
    )
    assert sim.overrides == {"servo_config": str(servos), "support_topic": "support_coefficient"}
    assert ff.overrides["enabled"] is False  # the URDF: robot_description, from the one node given it
    assert "u_nominal" not in ff.overrides  # feedforward:=false: no α̂ from servo_config (test_bringup_servo_alpha.py)
    assert desc.overrides == {"urdf_path": str(urdf)}
    assert walker.overrides == {"support_topic": "walker/support_coefficient", "n_steps": 3}
    assert [n.name for n in plan("sim_arm", gain="low")] == ["servo_sim", "servo_walker", "servo_state_publisher"]
    assert plan("sim_arm", gain="low")[0].overrides == {"kp": [8.0]}
    assert plan("sim_arm", gain="12.5")[0].overrides == {"kp": [12.5]}
    for bad, match in ((dict(gain="soft"), "gain"), (dict(urdf="/nonexistent.urdf"), "not found")):
        with pytest.raises((ValueError, FileNotFoundError), match=match):
            plan("sim_arm", **bad)
    with pytest.raises(ValueError, match="support"):
        plan("sim_humanoid", support="imu")


def test_sim_so100_plan_and_arguments(tmp_path):
    sim, walker, desc = plan("sim_so100")
    assert [n.name for n in (sim, walker, desc)] == ["servo_sim", "servo_walker", "servo_state_publisher"]
    assert sim.config == walker.config == "sim_so100.yaml" and not sim.overrides and not walker.overrides
    urdf, servos = tmp_path / "mine.urdf", tmp_path / "mine.yaml"
    urdf.write_text("<robot name='x'/>")
    servos.write_text("servos: {}\n")
    sim, walker, desc = plan(
        "sim_so100", urdf=str(urdf), servo_config=str(servos), gain="16", loops="3", namespace="arm"
    )
    assert sim.overrides == {"servo_config": str(servos), "kp": [16.0]} and desc.overrides == {"urdf_path": str(urdf)}
    assert walker.overrides == {"loops": 3} and sim.namespace == walker.namespace == desc.namespace == "/arm"
    for bad, match in (
        (dict(gain="high"), "sim_so100: gain must be a number >= 0, got 'high'"),
        (dict(gain="-1"), "gain must be a number >= 0"),
        (dict(loops="0"), "loops must be at least 1"),
        (dict(loops="two"), "loops must be an integer"),
        (dict(servo_config="/nonexistent.yaml"), "not found"),
        (dict(n_steps="3"), "no argument"),
    ):
        with pytest.raises((ValueError, FileNotFoundError), match=match):
            plan("sim_so100", **bad)


def test_up_sim_humanoid_stands_and_steps_with_feedforward(tmp_path, compiled_mujoco_kernels):
    """`servo-ff up sim_humanoid` (three processes; lockstep and as fast as possible from a params file, one
    step): the feed-forward node commands the servos, a foot leaves the ground while the other carries the robot,
    and the trunk stays upright."""
    pytest.importorskip("rclpy")
    pytest.importorskip("mujoco")
    from sensor_msgs.msg import Imu
    from std_msgs.msg import Float64MultiArray

    from servo_ff.bringup import python_env
    from servo_ff.ros.harness import RosHarness, wait_for

    fast = tmp_path / "fast.yaml"
    # lockstep waits up to 1 s of wall time for each goal: on a busy machine the simulation must not step on
    # without the feed-forward answer (that tests the machine, not the control loop)
    fast.write_text(
        "servo_sim:\n  ros__parameters:\n    lockstep: true\n    lockstep_timeout: 1.0\n    real_time_factor: 0.0\n"
    )
    h = RosHarness(salt=17)
    env = python_env()
    env["ROS_DOMAIN_ID"] = str(h.domain)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "servo_ff",
            "up",
            "sim_humanoid",
            "--arg",
            "n_steps:=1",
            "--arg",
            f"namespace:={h.ns}",
            "--params-file",
            str(fast),
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        probe = h.make_node("humanoid_probe")
        feet, tilt, goals = [], [0.0], []

        def on_imu(m):
            o = m.orientation
            tilt[0] = max(tilt[0], math.acos(max(-1.0, min(1.0, 1.0 - 2.0 * (o.x**2 + o.y**2)))))

        probe.create_subscription(Float64MultiArray, "foot_forces", lambda m: feet.append(list(m.data)), 100)
        probe.create_subscription(Imu, "imu/data", on_imu, 100)
        probe.create_subscription(Float64MultiArray, "servo/commands", goals.append, 100)
        wait_for(lambda: feet and goals, 90.0, "the humanoid bring-up's foot forces and feed-forward goals")
        weight = sum(feet[-1])
        assert weight > 30.0  # N: standing on its feet
        seen = [0]  # foot forces judged so far: every message, however long the test thread was not polling

        def stepped() -> bool:
            new, seen[0] = feet[seen[0] :], seen[0] + len(feet[seen[0] :])
            return any(min(f) < 0.02 * weight and max(f) > 0.8 * weight for f in new)

        wait_for(stepped, 120.0, "a step: one foot in the air, the other carrying the robot")
        assert tilt[0] < 0.3, tilt
    finally:
        proc.terminate()
        out = proc.communicate(timeout=20)[0]
        h.shutdown()
    assert "servo_walker" in out and "playing stepping" in out, out[-3000:]
    assert "has no parameter" not in out, out[-3000:]  # every YAML key of the bring-up reaches its node


def _up_patient(tmp_path, bringup: str, h, *args: str) -> subprocess.Popen:
    """`servo-ff up <bringup>` in harness ``h``'s domain and namespace, with the YAML's lockstep given 5 s of wall
    time (its 0.5 s) before a step without the feed-forward's goal: on a loaded box the feed-forward process can take
    longer than 12 × 0.5 s to start answering (the sim then stepped on plain P before its first goal), or to answer
    one state mid-walk (that tests the machine, not the loop)."""
    from servo_ff.bringup import python_env

    patient = tmp_path / "patient.yaml"
    patient.write_text("servo_sim:\n  ros__parameters:\n    lockstep_timeout: 5.0\n")
    cmd = [
        sys.executable,
        "-m",
        "servo_ff",
        "up",
        bringup,
        "--arg",
        f"namespace:={h.ns}",
        "--params-file",
        str(patient),
        *(x for a in args for x in ("--arg", a)),  # more bring-up arguments (name:=value)
    ]
    env = {**python_env(), "ROS_DOMAIN_ID": str(h.domain)}
    return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def test_up_sim_op3_walks_under_cmd_vel(tmp_path, compiled_mujoco_kernels):
    """`servo-ff up sim_op3` as shipped (four processes, its YAML: lockstep; lockstep_timeout 5 s here): under
    cmd_vel 0.1 m/s the trunk advances and stays upright over 10 s of sim time from the walk's start (free-running,
    the OP3 fell backwards on plain P before a slowly discovered walk node's first trajectory)."""
    pytest.importorskip("rclpy")
    pytest.importorskip("mujoco")
    pytest.importorskip("placo")
    from geometry_msgs.msg import Twist
    from nav_msgs.msg import Odometry
    from sensor_msgs.msg import JointState

    from servo_ff.ros.harness import RosHarness, wait_for

    h = RosHarness(salt=19)
    proc = _up_patient(tmp_path, "sim_op3", h)
    try:
        probe = h.make_node("op3_up_probe")
        pub = probe.create_publisher(Twist, "cmd_vel", 10)
        forward = Twist()
        forward.linear.x = 0.1
        odom: list[tuple[float, float, float]] = []  # (sim s, x, z) of the trunk

        def on_odom(m: Odometry) -> None:
            p = m.pose.pose.position
            odom.append((m.header.stamp.sec + m.header.stamp.nanosec * 1e-9, p.x, p.z))

        probe.create_subscription(Odometry, "odom", on_odom, 100)
        first_goal: list[float] = []  # sim s of the latest odom when the first feed-forward goal came

        def on_goal(m: JointState) -> None:
            if not first_goal:
                first_goal.append(odom[-1][0] if odom else 0.0)

        # the YAML's stamped_goals: the feed-forward node's goals on servo/joint_command, each stamped with its state
        probe.create_subscription(JointState, "servo/joint_command", on_goal, 100)
        t_walk = 2.5  # s: start_delay 0.5 + approach_time 2.0 after the first joint_states
        wait_for(lambda: pub.publish(forward) or (odom and odom[-1][0] >= t_walk), 120.0, "the OP3 walk's start")
        t0, x0, _ = odom[-1]
        wait_for(lambda: pub.publish(forward) or odom[-1][0] >= t0 + 10.0, 300.0, "10 s of walking under cmd_vel")
        # lockstep: the sim waited for the goals from its first period (free-running: not before start_delay -
        # horizon = 0.5 s, plain P meanwhile)
        assert first_goal[0] < 0.1, first_goal
        window = [o for o in odom if o[0] >= t0]
        assert window[-1][1] - x0 > 0.5, window[-1]  # m (1 m commanded; 0.8 m measured)
        assert min(z for _, _, z in window) > 0.15  # m: the trunk up (0.22 m standing, below 0 once fallen)
    finally:
        proc.terminate()
        out = proc.communicate(timeout=20)[0]
        h.shutdown()
    assert "has no parameter" not in out, out[-3000:]


def _walk_under_cmd_vel(tmp_path, bringup: str, salt: int, what: str, *args: str):
    """`servo-ff up <bringup> <args>` under cmd_vel 0.1 m/s from its first odom until 3 s of sim time after the walk's
    start (2.5 s: start_delay 0.5 + approach_time 2.0): (odom [(sim s, x [m], trunk tilt [rad])], the walk's part of
    it, the process's output)."""
    from geometry_msgs.msg import Twist
    from nav_msgs.msg import Odometry

    from servo_ff.ros.harness import RosHarness, wait_for

    h = RosHarness(salt=salt)
    proc = _up_patient(tmp_path, bringup, h, *args)
    try:
        probe = h.make_node(f"{bringup}_up_probe")
        pub = probe.create_publisher(Twist, "cmd_vel", 10)
        forward = Twist()
        forward.linear.x = 0.1
        odom: list[tuple[float, float, float]] = []  # (sim s, x, tilt of the trunk's z axis [rad])

        def on_odom(m: Odometry) -> None:
            p, q = m.pose.pose.position, m.pose.pose.orientation
            tilt = math.acos(max(-1.0, min(1.0, 1.0 - 2.0 * (q.x * q.x + q.y * q.y))))
            odom.append((m.header.stamp.sec + m.header.stamp.nanosec * 1e-9, p.x, tilt))

        probe.create_subscription(Odometry, "odom", on_odom, 100)
        t_walk = 2.5  # s: start_delay 0.5 + approach_time 2.0 after the first joint_states
        wait_for(lambda: pub.publish(forward) or (odom and odom[-1][0] >= t_walk), 120.0, f"the {what} walk's start")
        t0 = odom[-1][0]
        wait_for(lambda: pub.publish(forward) or odom[-1][0] >= t0 + 3.0, 300.0, "3 s of walking under cmd_vel")
    finally:
        proc.terminate()
        out = proc.communicate(timeout=20)[0]
        h.shutdown()
    return odom, [o for o in odom if o[0] >= t0], out


def test_up_sim_nimbro_op_walks_under_cmd_vel(tmp_path, compiled_mujoco_kernels):
    """`servo-ff up sim_nimbro_op` as shipped (lockstep_timeout 5 s here, as sim_op3's test): under cmd_vel 0.1 m/s
    the NimbRo-OP advances upright over 3 s of sim time from the walk's start (measured 0.093 m; before the walk node
    held q̇ at the URDF limit the feed-forward node refused every trajectory and it walked 0.004 m in 10 s)."""
    pytest.importorskip("rclpy")
    pytest.importorskip("placo")
    odom, window, out = _walk_under_cmd_vel(tmp_path, "sim_nimbro_op", 23, "NimbRo-OP")
    assert window[-1][1] - window[0][1] > 0.04, window[-1]  # m (0.3 m commanded, from standing)
    assert max(o[2] for o in odom) < 0.35  # rad: upright (the trunk leans 0.1 rad by design; a fall is 0.6)
    assert "has no parameter" not in out, out[-3000:]


def test_up_sim_op3_gait_cpg_walks_under_cmd_vel_and_says_it_clips(tmp_path, compiled_mujoco_kernels):
    """`servo-ff up sim_op3 gait:=cpg` (the authors' CPG scaled to the OP3, walk node gait op3_cpg; lockstep_timeout
    5 s here, as sim_op3's test): under cmd_vel 0.1 m/s, above the scaled gait's 0.0567 m/s, the walk node says it
    walks at that, and the OP3 advances upright over 3 s of sim time from the walk's start."""
    pytest.importorskip("rclpy")
    pytest.importorskip("pinocchio")
    _, window, out = _walk_under_cmd_vel(tmp_path, "sim_op3", 29, "OP3 CPG", "gait:=cpg")
    assert window[-1][1] - window[0][1] > 0.03, window[-1]  # m (gcv ramping to 1 at 0.254 /s: ≈ 0.07 m planned)
    assert max(o[2] for o in window) < 0.35  # rad: upright (a fall is 0.6)
    assert "op3_cpg walk (20 joints, step period 0.295 s)" in out, out[-3000:]
    assert "linear.x 0.1 m/s beyond 0.05671 m/s (gcv.x 1: walked at that)" in out, out[-3000:]
    assert "has no parameter" not in out, out[-3000:]
