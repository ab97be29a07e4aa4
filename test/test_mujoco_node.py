"""servo_sim_node with backend mujoco over real DDS: the humanoid's joint_states, imu/data, foot forces, support
coefficient, /clock, the servo services; non-finite physics → outputs stop, ERROR, reset brings it back; bad
robot descriptions → one error naming the joint or link at configure; the 2R arm traces its triangle."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from nodes_harness import RosHarness, wait_for

pytest.importorskip("rclpy")
pytest.importorskip("mujoco")
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from sensor_msgs.msg import BatteryState, Imu, JointState  # noqa: E402
from std_msgs.msg import Float64, Float64MultiArray  # noqa: E402
from std_srvs.srv import SetBool, Trigger  # noqa: E402

from servo_ff.nodes.sim_node import MujocoSimNode  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
HUMANOID = [
    Parameter("urdf_path", value=str(ROOT / "urdf" / "humanoid20.urdf")),
    Parameter("servo_config", value=str(ROOT / "config" / "servos_humanoid.yaml")),
    Parameter("floating_base", value=True),
    Parameter("publish_clock", value=True),
    Parameter("real_time_factor", value=0.0),
    Parameter("rate_hz", value=250.0),
    Parameter("counts_per_rev", value=4096),
    Parameter("latency", value=1),
    Parameter("warn_throttle", value=30.0),
]


@pytest.fixture(scope="module")
def ros(compiled_mujoco_kernels):
    h = RosHarness(salt=14)
    sim = h.add(MujocoSimNode("servo_sim", **h.node_kwargs(), parameter_overrides=HUMANOID))
    probe = h.make_node("mujoco_probe")
    got: dict[str, list] = {k: [] for k in ("js", "imu", "feet", "c", "clock", "diag", "supply", "odom")}
    for topic, typ, key in (
        ("joint_states", JointState, "js"),
        ("imu/data", Imu, "imu"),
        ("foot_forces", Float64MultiArray, "feet"),
        ("support_coefficient", Float64, "c"),
        ("/clock", Clock, "clock"),
        ("/diagnostics", DiagnosticArray, "diag"),
        ("servo_supply", BatteryState, "supply"),
        ("odom", Odometry, "odom"),
    ):
        probe.create_subscription(typ, topic, got[key].append, 100)
    wait_for(lambda: len(got["js"]) > 50 and got["imu"] and got["c"], 60.0, "the MuJoCo sim node's outputs")
    yield h, sim, probe, got
    h.shutdown()


def stamp(m) -> float:
    return m.header.stamp.sec + m.header.stamp.nanosec * 1e-9


def clock_s(m) -> float:
    return m.clock.sec + m.clock.nanosec * 1e-9


def after(got, key, t, timeout=20.0):
    return wait_for(lambda: got[key] and stamp(got[key][-1]) > t and got[key][-1], timeout, f"{key} after {t:.2f} s")


def test_humanoid_stands_and_reports_every_sensor(ros):
    h, sim, probe, got = ros
    js = after(got, "js", 1.0)
    assert len(js.name) == 20 and "l_knee" in js.name and len(js.position) == len(js.effort) == 20
    assert np.isfinite(js.position).all()
    imu = after(got, "imu", stamp(js))
    o = imu.orientation
    assert 1.0 - 2.0 * (o.x**2 + o.y**2) > math.cos(0.1), "the trunk stays upright"
    assert abs(imu.linear_acceleration.z - 9.81) < 1.0  # the specific force of standing still
    feet = wait_for(lambda: got["feet"] and got["feet"][-1], 20.0, "foot forces")
    weight = sim.servos.model.body_subtreemass[sim.servos.sim.root_body] * 9.81
    assert abs(sum(feet.data) - weight) < 0.15 * weight, (feet.data, weight)  # both feet carry the robot
    assert 0.3 < got["c"][-1].data < 0.7
    # the sim owns time: /clock reaches the states' stamps (waited for: /clock is another topic, the state of a
    # period can be taken before its /clock), where a wall-time stamp (~1.8e9 s) would never be
    wait_for(lambda: got["clock"] and clock_s(got["clock"][-1]) >= stamp(js), 20.0, f"/clock at {stamp(js):.3f} s")
    supply = wait_for(lambda: got["supply"] and got["supply"][-1], 20.0, "servo_supply")
    assert supply.voltage > 0


def test_a_period_tap_reads_each_periods_imu_message_as_dds_delivers_it(ros):
    """``SimNode.period_taps`` run after each period's outputs: ``outputs.imu_bytes()`` is then that period's
    imu/data (one new message per period, stamped with the start of its last physics step), equal to what a DDS
    reader receives with the same stamp."""
    from rclpy.serialization import deserialize_message

    h, sim, probe, got = ros
    outputs, seen, by_stamp = sim.backend.outputs, [], {}

    def tap() -> None:
        data = outputs.imu_bytes()
        t = deserialize_message(data, Imu).header.stamp
        seen.append((outputs.imu_published, sim.ticks, t.sec * 1_000_000_000 + t.nanosec - sim.sim_time_ns))
        by_stamp[t.sec + t.nanosec * 1e-9] = data

    def delivered() -> bool:  # a message DDS delivered whose stamp was tapped (tapping goes on until then)
        return len(seen) >= 20 and any(stamp(m) in by_stamp for m in got["imu"][-100:])

    sim.period_taps.append(tap)
    try:
        wait_for(delivered, 60.0, "a tapped imu/data message delivered by DDS")
    finally:
        sim.period_taps.remove(tap)
    counts, ticks = [c for c, _, _ in seen], [t for _, t, _ in seen]
    step_ns = round(sim.servos.model.opt.timestep * 1e9)  # the state the IMU read: the last step's start
    assert {lag for _, _, lag in seen} == {-step_ns}  # this period's message (before: stamped with its end)
    assert counts == list(range(counts[0], counts[0] + len(seen)))  # one new message each period
    assert ticks == list(range(ticks[0], ticks[0] + len(seen))) and len(by_stamp) == len(seen)
    matched = [(deserialize_message(by_stamp[stamp(m)], Imu), m) for m in list(got["imu"]) if stamp(m) in by_stamp]
    assert matched and all(tapped == dds for tapped, dds in matched)


def test_odom_is_the_floating_base_pose_in_the_odom_frame(ros):
    h, sim, probe, got = ros
    js = after(got, "js", 1.0)
    odom = after(got, "odom", stamp(js))
    m = sim.servos.model
    assert odom.header.frame_id == "odom" and odom.child_frame_id == m.body(sim.servos.sim.root_body).name
    p, o, v = odom.pose.pose.position, odom.pose.pose.orientation, odom.twist.twist
    z_trunk = sim.servos.data.xpos[sim.servos.sim.root_body][2]
    assert abs(p.z - z_trunk) < 2e-3 and p.z > 0.2  # standing: the trunk well above the ground, where MuJoCo has it
    assert 1.0 - 2.0 * (o.x**2 + o.y**2) > math.cos(0.1)
    assert abs(o.x**2 + o.y**2 + o.z**2 + o.w**2 - 1.0) < 1e-9
    assert math.hypot(v.linear.x, v.linear.y, v.linear.z) < 0.05  # stands still
    pytest.importorskip("tf2_msgs")
    from tf2_msgs.msg import TFMessage

    tfs: list = []
    probe.create_subscription(TFMessage, "/tf", tfs.append, 100)
    tf = wait_for(
        lambda: next((m for m in tfs if m.transforms[0].child_frame_id == odom.child_frame_id), None), 20.0, "odom tf"
    )
    t = tf.transforms[0]
    assert t.header.frame_id == "odom" and abs(t.transform.translation.z - p.z) < 0.01


def test_joint_command_velocity_and_effort_limit_the_simulated_servo(ros):
    """velocity → the servo model's goal-velocity limit (its internal target slews no faster), effort → its
    current limit τ/kt: the elbow's step is taken at ≤ 0.5 rad/s (unlimited it peaks well above) with |τ_m| ≤
    0.8 N·m; 0 lifts both limits; a non-finite one is refused with a line."""
    from servo_ff.models.params import P_GVMAX, P_IMAX, P_KT

    h, sim, probe, got = ros
    pub = probe.create_publisher(JointState, "servo/joint_command", 10)
    wait_for(lambda: pub.get_subscription_count(), 30.0, "subscription")
    j = sim.joints.index("r_elbow")
    row = sim.perm[j]
    own = sim.servos.p[row, P_IMAX]
    t0 = sim.sim_time_ns * 1e-9
    start = after(got, "js", t0).position[j]
    slew: list[tuple[float, float]] = []  # (sim time [s], the firmware's internal target [rad]) every period

    def tap() -> None:
        slew.append((sim.sim_time_ns * 1e-9, float(sim.servos.target[row])))

    def applied_when(done):  # the row read between two callbacks: one callback takes the goal, then the limits
        def read():
            with h._busy:
                return (sim.servos.p[row].copy(),) if done(sim.servos.p[row]) else None

        return read

    sim.period_taps.append(tap)
    try:
        wait_for(lambda: slew, 20.0, "a period tapped before the goal")  # the target's start is in the record
        pub.publish(JointState(name=["r_elbow"], position=[start - 0.6], velocity=[0.5], effort=[0.8]))

        (p,) = wait_for(applied_when(lambda p: abs(sim.gate.goal[j] - (start - 0.6)) < 1e-9), 20.0, "the goal applied")
        assert p[P_GVMAX] == 0.5 and p[P_IMAX] == min(0.8 / p[P_KT], own)
        # the target at the goal in the record, then the elbow there (the states received while it moved)
        wait_for(lambda: abs(slew[-1][1] - (start - 0.6)) < 2e-3, 20.0, "the internal target at the goal")
        wait_for(lambda: abs(got["js"][-1].position[j] - (start - 0.6)) < 0.03, 20.0, "the elbow at its goal")
    finally:
        sim.period_taps.remove(tap)
    moving = [m for m in list(got["js"]) if stamp(m) > t0]
    assert max(abs(m.velocity[j]) for m in moving) < 0.5 * 1.15
    assert max(abs(m.effort[j]) for m in moving) <= 0.8 + 1e-9
    # the internal target, read in the sim every period (no DDS message can be missed): it slews at 0.5 rad/s
    # from the start to the goal, so the 0.6 rad take 1.2 s of sim time (an unlimited step jumps in one period)
    t, target = np.array(slew).T
    assert abs(target[0] - start) < 2e-3 and abs(target[-1] - (start - 0.6)) < 2e-3, (target[0], target[-1], start)
    assert (np.abs(np.diff(target)) <= 0.5 * np.diff(t) + 1e-9).all()
    left, arrived = (
        t[np.flatnonzero(target < target[0] - 1e-6)[0] - 1],
        t[np.flatnonzero(target <= target[-1] + 1e-6)[0]],
    )
    assert abs((arrived - left) - 0.6 / 0.5) < 0.02, (left, arrived)
    rejected = sim.gate.rejected
    pub.publish(JointState(name=["r_elbow"], velocity=[float("nan")]))
    wait_for(lambda: sim.gate.rejected > rejected, 20.0, "the NaN refused")
    assert "not finite" in sim.gate.last_reason and sim.servos.p[row, P_GVMAX] == 0.5
    pub.publish(JointState(name=["r_elbow"], velocity=[0.0], effort=[0.0]))
    (p,) = wait_for(applied_when(lambda p: p[P_GVMAX] == np.inf), 20.0, "the limits lifted")
    assert p[P_IMAX] == own


def test_goals_gains_torque_and_diagnostics(ros):
    h, sim, probe, got = ros
    pub = probe.create_publisher(JointState, "servo/joint_command", 10)
    gains = probe.create_publisher(Float64MultiArray, "servo/p_gains", 10)
    wait_for(lambda: pub.get_subscription_count() and gains.get_subscription_count(), 30.0, "subscriptions")
    pub.publish(JointState(name=["l_elbow"], position=[-0.6]))
    wait_for(
        lambda: abs(got["js"][-1].position[list(got["js"][-1].name).index("l_elbow")] + 0.6) < 0.05,
        20.0,
        "the elbow at its goal",
    )
    kp = [20.0] * 20
    gains.publish(Float64MultiArray(data=kp))
    wait_for(lambda: list(sim.get_parameter("kp").value) == kp, 20.0, "kp reflecting p_gains")
    torque = probe.create_client(SetBool, "servo/torque_enable")
    assert h.call(torque, SetBool.Request(data=False)).success
    js = after(got, "js", sim.sim_time_ns * 1e-9 + 0.02)  # stamped after the torque went off
    assert np.allclose(js.effort, 0.0)
    assert h.call(torque, SetBool.Request(data=True)).success
    diag = wait_for(lambda: [s for m in got["diag"] for s in m.status if s.name.endswith("physics")], 20.0, "diag")
    assert diag[-1].level == DiagnosticStatus.OK and any(kv.key == "energy_J" for kv in diag[-1].values)


def test_non_finite_physics_stops_outputs_until_reset(ros):
    h, sim, probe, got = ros
    reset = probe.create_client(Trigger, "servo/reset")
    blown: list[bool] = []

    def blow_up() -> None:  # between two periods, in the sim's own thread (a write during a step could be lost)
        if not blown:
            sim.servos.data.qvel[6] = float("nan")  # the physics blows up (what a bad model or gain would do)
            blown.append(True)

    sim.period_taps.append(blow_up)
    try:
        wait_for(lambda: sim.stepper_error, 20.0, "the divergence to be detected")
    finally:
        sim.period_taps.remove(blow_up)
    assert "diverged" in sim.stepper_error
    published = sim.ticks
    n_diag = len(got["diag"])
    wait_for(lambda: len(got["diag"]) >= n_diag + 2, 20.0, "two more /diagnostics (the node's timers ran)")
    assert sim.ticks == published  # outputs stopped (nothing published since)
    n_stopped = len(got["js"])
    for m in got["js"] + [m for m in got["imu"]]:
        vals = list(getattr(m, "position", [])) + list(getattr(m, "velocity", []))
        assert all(math.isfinite(v) for v in vals)
    assert all(math.isfinite(m.data) for m in got["c"])
    diag = wait_for(
        lambda: [
            s
            for m in got["diag"][-3:]
            for s in m.status
            if s.name.endswith("physics") and s.level == DiagnosticStatus.ERROR
        ],
        20.0,
        "an ERROR diagnostic",
    )
    assert "reset" in diag[-1].message
    res = h.call(reset, Trigger.Request())
    assert res.success and "diverged" in res.message
    wait_for(lambda: len(got["js"]) > n_stopped + 20, 20.0, "joint_states after the reset")
    assert np.isfinite(got["js"][-1].position).all() and not sim.stepper_error


ARM = ROOT / "urdf" / "arm2r.urdf"


@pytest.mark.parametrize("case", ["inertial", "foot", "servo"])
def test_bad_robot_description_is_one_error_naming_it(tmp_path, case):
    text = ARM.read_text() if case != "foot" else (ROOT / "urdf" / "humanoid20.urdf").read_text()
    servo = ROOT / "config" / ("servos_arm2r.yaml" if case != "foot" else "servos_humanoid.yaml")
    if case == "inertial":  # the forearm loses its inertial
        text = re.sub(
            r'(<link name="forearm"[^>]*>)(.*?)(</link>)',
            lambda m: m.group(1) + re.sub(r"<inertial>.*?</inertial>", "", m.group(2), flags=re.S) + m.group(3),
            text,
            flags=re.S,
        )
        want = "forearm"
    elif case == "foot":  # the right foot loses its collision geometry
        text = re.sub(
            r'(<link name="r_foot"[^>]*>)(.*?)(</link>)',
            lambda m: m.group(1) + re.sub(r"<collision>.*?</collision>", "", m.group(2), flags=re.S) + m.group(3),
            text,
            flags=re.S,
        )
        want = "r_foot"
    else:
        servo = tmp_path / "servos.yaml"
        servo.write_text("servos:\n  shoulder: mx106/m4\n")
        want = "elbow"
    urdf = tmp_path / "robot.urdf"
    urdf.write_text(text)
    h = RosHarness(salt=15)
    try:
        node = h.add(
            MujocoSimNode(
                "servo_sim",
                **h.node_kwargs(),
                parameter_overrides=[
                    Parameter("urdf_path", value=str(urdf)),
                    Parameter("servo_config", value=str(servo)),
                    Parameter("floating_base", value=case == "foot"),
                ],
            )
        )
        wait_for(
            lambda: node._autostart_timer is None or node.state_label != "unconfigured" or node.model_error,
            20.0,
            "the configure attempt",
        )
        wait_for(
            lambda: (
                any(k.startswith("lifecycle:configure") for k in node.throttle._last)
                or node.state_label != "unconfigured"
            ),
            20.0,
            "the configure attempt's outcome",
        )
        assert node.state_label == "unconfigured"
        assert want in node.model_error and "\n" not in node.model_error, node.model_error
    finally:
        h.shutdown()
