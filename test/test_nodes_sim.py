"""servo_sim_node over real DDS (loopback): joint_states, goals in three forms, torque enable, reboot, bad
goals, parameter validation."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from nodes_harness import PENDULUM_SIM, RosHarness, rosout_matched, sim_node, wait_for

pytest.importorskip("rclpy")
from builtin_interfaces.msg import Duration  # noqa: E402
from rcl_interfaces.msg import Parameter as ParameterMsg  # noqa: E402
from rcl_interfaces.msg import ParameterType, ParameterValue  # noqa: E402
from rcl_interfaces.srv import SetParameters  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray, String  # noqa: E402
from std_srvs.srv import SetBool, Trigger  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

from servo_ff.nodes.sim_node import SimNode  # noqa: E402
from servo_ff.ros.common import GoalGate, Throttle  # noqa: E402

JOINTS = PENDULUM_SIM["joints"]
MASS, LENGTH = 0.5, 0.15


@pytest.fixture(scope="module")
def ros():
    h = RosHarness(salt=1)
    sim = sim_node(h, **PENDULUM_SIM, **{"load.mass": [MASS], "load.length": [LENGTH]}, physics_dt=0.001)
    client = h.make_node("sim_test_client")
    states: list[JointState] = []
    client.create_subscription(JointState, "joint_states", states.append, 50)
    pubs = {
        "array": client.create_publisher(Float64MultiArray, "servo/commands", 10),
        "traj": client.create_publisher(JointTrajectory, "servo/joint_trajectory", 10),
        "js": client.create_publisher(JointState, "servo/joint_command", 10),
    }
    wait_for(lambda: all(p.get_subscription_count() for p in pubs.values()) and states, 20.0, "discovery of servo_sim")
    yield h, sim, client, states, pubs
    h.shutdown()


def latest(states, after: float = 0.0) -> JointState:
    return wait_for(
        lambda: states and states[-1].header.stamp.sec + states[-1].header.stamp.nanosec * 1e-9 > after and states[-1],
        20.0,
        "a joint_states message",
    )


def position(states) -> np.ndarray:
    return np.array(latest(states).position)


def settle_at(states, goal, tol=0.06, timeout=20.0) -> bool:
    try:
        return wait_for(lambda: bool((np.abs(position(states) - goal) < tol).all()), timeout, f"joints to reach {goal}")
    except TimeoutError as e:
        raise AssertionError(f"{e}; last joint_states position {position(states)}") from None


def test_joint_states_names_and_units(ros):
    h, sim, client, states, pubs = ros
    # let the pendulums settle on their start-up goals (simulated on the wall clock: a loaded machine takes longer)
    wait_for(lambda: np.abs(latest(states).velocity).max() < 0.01, 20.0, "the pendulums at rest")
    msg = latest(states)
    assert list(msg.name) == JOINTS
    assert len(msg.position) == len(msg.velocity) == len(msg.effort) == 2
    pos = np.array(msg.position)
    np.testing.assert_allclose(pos, [0.3, -0.2], atol=0.05)  # rad, held near the start-up position
    # effort is the motor torque in N·m holding the pendulum: sign of sin θ, at most the gravity torque
    gravity = MASS * 9.80665 * LENGTH * np.abs(np.sin(pos))
    eff = np.array(msg.effort)
    assert np.all(np.sign(eff) == np.sign(pos)), eff
    assert np.all(np.abs(eff) <= gravity * 1.05) and np.all(np.abs(eff) > 0.2 * gravity), (eff, gravity)


def test_float64multiarray_goal_moves_joint(ros):
    h, sim, client, states, pubs = ros
    pubs["array"].publish(Float64MultiArray(data=[1.0, -0.5]))
    settle_at(states, [1.0, -0.5])
    np.testing.assert_allclose(sim.gate.goal, [1.0, -0.5])


def test_trajectory_and_jointstate_goals_by_name(ros):
    h, sim, client, states, pubs = ros
    traj = JointTrajectory(
        joint_names=["elbow", "shoulder"],
        points=[
            JointTrajectoryPoint(positions=[0.4, 0.9], time_from_start=Duration(nanosec=200_000_000)),
            JointTrajectoryPoint(positions=[0.2, 0.6], time_from_start=Duration(nanosec=400_000_000)),
        ],
    )
    pubs["traj"].publish(traj)
    settle_at(states, [0.6, 0.2])  # the last point, matched by name
    pubs["js"].publish(JointState(name=["elbow"], position=[-0.4]))
    settle_at(states, [0.6, -0.4])  # shoulder keeps its goal


def test_jointstate_velocity_limits_the_simulated_servo(ros):
    """JointState velocity → the stepper's firmware goal-velocity limit: the elbow's 0.5 rad step at ≤ 0.4 rad/s
    (peak 0.49: the P loop lags the slewing target; without the limit the step peaks at 7.5 rad/s); 0 lifts it."""
    from servo_ff.models.params import P_GVMAX

    h, sim, client, states, pubs = ros
    wait_for(lambda: np.abs(latest(states).velocity).max() < 0.01, 20.0, "the pendulums at rest")
    start = position(states)
    t0 = sim.now_s()
    pubs["js"].publish(JointState(name=["elbow"], position=[start[1] + 0.5], velocity=[0.4]))
    wait_for(lambda: abs(position(states)[1] - (start[1] + 0.5)) < 0.02, 20.0, "the elbow at its goal")
    moving = [m for m in list(states) if m.header.stamp.sec + m.header.stamp.nanosec * 1e-9 > t0]
    assert sim.sim.packed[1, P_GVMAX] == 0.4 and max(abs(m.velocity[1]) for m in moving) < 0.4 * 1.25  # 0.488: lag
    pubs["js"].publish(JointState(name=["elbow"], velocity=[0.0]))
    wait_for(lambda: sim.sim.packed[1, P_GVMAX] == math.inf, 20.0, "the limit lifted")


def test_trajectory_status_reports_each_trajectory(ros):
    """One servo/trajectory_status per JointTrajectory, keyed by its header.stamp: accepted (stamp 0: started on
    reception, not late) or refused with the reason."""
    h, sim, client, states, pubs = ros
    status = []
    client.create_subscription(String, "servo/trajectory_status", lambda m: status.append(json.loads(m.data)), 10)
    wait_for(lambda: sim.pub_traj_status.get_subscription_count(), 20.0, "discovery of servo/trajectory_status")
    traj = JointTrajectory(
        joint_names=["elbow", "shoulder"],
        points=[JointTrajectoryPoint(positions=[0.2, 0.6], time_from_start=Duration(nanosec=200_000_000))],
    )
    pubs["traj"].publish(traj)
    wait_for(lambda: status, 20.0, "the status of the first trajectory")
    traj.header.stamp.sec = 1  # and outside the limits: refused
    traj.points[0].positions = [0.2, 2.6]
    pubs["traj"].publish(traj)
    wait_for(lambda: len(status) == 2, 20.0, "the status of the second trajectory")
    ok, refused = status
    assert ok["accepted"] and ok["stamp_ns"] == 0 and ok["late_s"] == 0.0 and ok["start_ns"] == ok["received_ns"]
    assert ok["joints"] == ["elbow", "shoulder"]
    assert not refused["accepted"] and refused["stamp_ns"] == 1_000_000_000 and "shoulder=2.6000" in refused["reason"]


def test_bad_goals_rejected_and_last_goal_held(ros):
    h, sim, client, states, pubs = ros
    pubs["array"].publish(Float64MultiArray(data=[0.5, 0.1]))
    settle_at(states, [0.5, 0.1])
    before = sim.gate.rejected
    bad = [
        ("array", Float64MultiArray(data=[math.nan, 0.0])),
        ("array", Float64MultiArray(data=[0.0, math.inf])),
        ("array", Float64MultiArray(data=[0.1, 0.2, 0.3])),  # wrong length
        ("array", Float64MultiArray(data=[2.5, 0.0])),  # beyond position_max = 2 rad
        ("js", JointState(name=["knee"], position=[0.0])),  # unknown name
        ("js", JointState(name=["elbow"], position=[math.nan])),
        ("traj", JointTrajectory(joint_names=["shoulder"], points=[JointTrajectoryPoint(positions=[-3.0])])),
        ("traj", JointTrajectory(joint_names=["shoulder"], points=[])),
    ]
    for kind, msg in bad:
        pubs[kind].publish(msg)
    wait_for(lambda: sim.gate.rejected - before >= len(bad), 20.0, "all bad goals to be rejected")
    np.testing.assert_allclose(sim.gate.goal, [0.5, 0.1])
    ticks = sim.ticks
    wait_for(lambda: sim.ticks - ticks >= 0.3 / sim.period, 30.0, "0.3 s of simulated time on the held goal")
    np.testing.assert_allclose(position(states), [0.5, 0.1], atol=0.06)
    reasons = list(sim.gate.recent)[-len(bad) :]
    for words in (
        ["shoulder=nan", "not finite"],
        ["elbow=inf"],
        ["3 values for 2 joints"],
        ["shoulder=2.5000 rad", "[-2.0000, 2.0000]"],
        ["'knee'"],
        ["shoulder=-3.0000 rad"],
        ["no points"],
    ):
        assert any(all(w in r for w in words) for r in reasons), (words, reasons)
    assert np.isfinite(np.array(latest(states).position)).all()


def test_torque_enable_service(ros):
    h, sim, client, states, pubs = ros
    pubs["array"].publish(Float64MultiArray(data=[1.2, 0.0]))
    settle_at(states, [1.2, 0.0])
    torque = client.create_client(SetBool, "servo/torque_enable")
    r = h.call(torque, SetBool.Request(data=False))
    assert r.success and "disabled" in r.message
    # released, the pendulum falls back toward hanging (θ = 0)
    wait_for(lambda: position(states)[0] < 0.4, 20.0, "released pendulum to fall")
    r = h.call(torque, SetBool.Request(data=True))
    assert r.success and "holding the present position" in r.message, r.message
    held = sim.gate.goal.copy()
    assert held[0] < 0.45  # where it was falling, held there: not the old goal 1.2 rad (before: a snap back up)
    settle_at(states, held.tolist())


def test_torque_on_after_a_speed_limited_move_starts_from_where_the_joint_is():
    """A goal 1.2 rad at ≤ 0.5 rad/s (the firmware's internal target slews there), torque off, the pendulum falls,
    torque on: the joint stays near where it lay. Before, the target left at 1.2 rad drove it back up (1.17 rad)."""

    with RosHarness(salt=41) as h:
        sim = sim_node(h, **PENDULUM_SIM, **{"load.mass": [0.5], "load.length": [0.15]}, physics_dt=0.001)
        c = h.make_node("probe")
        states: list = []
        c.create_subscription(JointState, "joint_states", states.append, 50)
        js = c.create_publisher(JointState, "servo/joint_command", 10)
        wait_for(lambda: js.get_subscription_count() and states and sim.active, 20.0, "discovery")
        js.publish(JointState(name=["shoulder"], position=[1.2], velocity=[0.5]))
        wait_for(lambda: abs(states[-1].position[0] - 1.2) < 0.03, 30.0, "the shoulder at 1.2 rad")
        torque = c.create_client(SetBool, "servo/torque_enable")
        assert h.call(torque, SetBool.Request(data=False)).success
        wait_for(lambda: states[-1].position[0] < 0.1, 30.0, "the released pendulum fallen")
        assert h.call(torque, SetBool.Request(data=True)).success
        # the states stamped after the torque went on: those still in flight were stepped with it off (the
        # pendulum may be swinging through 0 when it goes on; under load, 0.6 rad before the call returned)
        on, held = sim.now_s(), float(sim.gate.goal[0])
        stamp = lambda m: m.header.stamp.sec + m.header.stamp.nanosec * 1e-9  # noqa: E731
        wait_for(lambda: stamp(states[-1]) - on > 2.0, 30.0, "2 s of states")
        after = np.array([m.position[0] for m in list(states) if stamp(m) > on])
        assert held < 0.1 and after.max() < held + 0.1, (held, after.max())


def test_a_refused_joint_command_sets_none_of_its_limits():
    """A JointState whose position is refused (NaN) is refused whole: its velocity limit is not applied either
    (before: 'holding the last valid goal' was said while the 0.05 rad/s limit silently took effect). A limits-only
    one naming a joint twice is refused as a goal naming it twice is (before: applied in turn, the last one won)."""
    from servo_ff.models.params import P_GVMAX

    with RosHarness(salt=47) as h:  # its own node: the limit set here stays out of the module's
        sim = sim_node(h, **PENDULUM_SIM)
        js = h.make_node("probe").create_publisher(JointState, "servo/joint_command", 10)
        wait_for(lambda: js.get_subscription_count() and sim.active, 20.0, "discovery")
        before, rejected = float(sim.sim.packed[1, P_GVMAX]), sim.gate.rejected
        js.publish(JointState(name=["elbow"], position=[math.nan], velocity=[0.05]))
        wait_for(lambda: sim.gate.rejected > rejected, 10.0, "the refusal")
        js.publish(JointState(name=["elbow", "elbow"], velocity=[0.03, 0.04]))
        wait_for(lambda: sim.gate.rejected > rejected + 1, 10.0, "the duplicate names refused")
        assert sim.gate.last_reason.endswith("duplicate joint names"), sim.gate.last_reason
        assert sim.sim.packed[1, P_GVMAX] == before and not sim.limits_commanded
        js.publish(JointState(name=["elbow"], position=[0.1], velocity=[0.07]))  # after them, in order
        wait_for(lambda: sim.sim.packed[1, P_GVMAX] != before, 10.0, "the accepted message's limit")
        assert sim.sim.packed[1, P_GVMAX] == pytest.approx(0.07)  # the refused 0.05 never applied


def test_an_empty_joint_command_is_refused_and_ends_no_trajectory(ros):
    """Before: an empty JointState was taken as a goal (the held one), which ended the trajectory being followed."""
    h, sim, client, states, pubs = ros
    traj = JointTrajectory(joint_names=JOINTS, points=[
        JointTrajectoryPoint(positions=[0.4, 0.1], time_from_start=Duration(sec=30))])  # fmt: skip
    pubs["traj"].publish(traj)
    wait_for(lambda: sim.traj is not None, 10.0, "the trajectory followed")
    rejected = sim.gate.rejected
    pubs["js"].publish(JointState())
    wait_for(lambda: sim.gate.rejected > rejected, 10.0, "the refusal")
    assert "no joint named" in sim.gate.last_reason and sim.traj is not None
    pubs["array"].publish(Float64MultiArray(data=[0.0, 0.0]))  # back to rest for the module's other tests
    wait_for(lambda: sim.traj is None, 10.0, "the trajectory ended by a goal")


def test_reboot_turns_torque_off_and_holds_position(ros):
    h, sim, client, states, pubs = ros
    pubs["array"].publish(Float64MultiArray(data=[0.7, 0.0]))
    settle_at(states, [0.7, 0.0])
    r = h.call(client.create_client(Trigger, "servo/reboot"), Trigger.Request())
    assert r.success and not sim.sim.enabled
    assert abs(sim.gate.goal[0] - 0.7) < 0.1  # goal = present position after the reboot
    h.call(client.create_client(SetBool, "servo/torque_enable"), SetBool.Request(data=True))


def _set(h, client, **values):
    cli = client.create_client(SetParameters, "servo_sim/set_parameters")
    msgs = []
    for name, v in values.items():
        name = name.replace("__", ".")
        if isinstance(v, list):
            pv = ParameterValue(type=ParameterType.PARAMETER_DOUBLE_ARRAY, double_array_value=v)
        else:
            pv = ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=v)
        msgs.append(ParameterMsg(name=name, value=pv))
    return h.call(cli, SetParameters.Request(parameters=msgs)).results


@pytest.mark.parametrize(
    "values, words",
    [
        ({"kp": [math.nan, 32.0]}, ["kp[0]", "not finite"]),
        ({"kp": [32.0, 32.0, 32.0]}, ["kp", "3 values"]),
        ({"kp": [-1.0]}, ["kp", "minimum"]),
        ({"actuator__kt": math.inf}, ["actuator.kt"]),
        ({"actuator__R": -1.0}, ["actuator.R"]),
        ({"actuator__firmware__max_pwm": 1.5}, ["max_pwm"]),
        ({"position_min": [0.0, 3.0]}, ["position_min[1]", "position_max[1]"]),
        ({"load__mass": [math.nan]}, ["load.mass"]),
        # issue 15: extremes the schema refuses, and values inside it that the physics step cannot integrate
        ({"actuator__R": 1e-6}, ["actuator.R", "out of range"]),
        ({"actuator__kt": 1e300}, ["actuator.kt", "out of range"]),
        ({"actuator__friction_viscous": 1e300}, ["actuator.friction_viscous", "out of range"]),
        ({"actuator__armature": 0.0}, ["actuator.armature", "out of range"]),
        ({"actuator__R": 0.02}, ["stability limit 2·J·R/kt²", "of shoulder", "lower physics_dt"]),
        ({"actuator__kt": 40.0}, ["stability limit", "back-EMF damping would diverge"]),
    ],
)
def test_parameter_callback_refuses_bad_values(ros, values, words):
    h, sim, client, states, pubs = ros
    before = (sim.sim.packed.copy(), list(sim.table.values["kp"]))
    (res,) = _set(h, client, **values)
    assert not res.successful
    for w in words:
        assert w in res.reason, res.reason
    np.testing.assert_array_equal(sim.sim.packed, before[0])
    assert sim.table.values["kp"] == before[1]


def test_parameter_update_applies(ros):
    h, sim, client, states, pubs = ros
    (r1, r2) = _set(h, client, kp=[20.0, 10.0], actuator__friction_viscous=0.02)
    assert r1.successful and r2.successful
    np.testing.assert_allclose(sim.sim.kp, [20.0, 10.0])
    assert sim.sim.params.friction["friction_viscous"] == 0.02
    _set(h, client, kp=[32.0])
    np.testing.assert_allclose(sim.sim.kp, [32.0, 32.0])


def test_p_gains_topic(ros):
    h, sim, client, states, pubs = ros
    pub = client.create_publisher(Float64MultiArray, "servo/p_gains", 10)
    wait_for(lambda: pub.get_subscription_count(), 20.0, "p_gains subscriber")
    pub.publish(Float64MultiArray(data=[5.0, 6.0]))
    wait_for(lambda: np.allclose(sim.sim.kp, [5.0, 6.0]), 20.0, "live P gains")
    assert list(sim.get_parameter("kp").value) == [5.0, 6.0]  # the parameter tells the gains applied
    rejected = sim.gate.rejected
    pub.publish(Float64MultiArray(data=[math.nan, 6.0]))
    wait_for(lambda: sim.gate.rejected > rejected, 20.0, "bad gains rejected")
    np.testing.assert_allclose(sim.sim.kp, [5.0, 6.0])
    assert list(sim.get_parameter("kp").value) == [5.0, 6.0]
    pub.publish(Float64MultiArray(data=[32.0, 32.0]))
    wait_for(lambda: np.allclose(sim.sim.kp, [32.0, 32.0]), 20.0, "gains restored")
    assert list(sim.get_parameter("kp").value) == [32.0, 32.0]


def test_a_refused_p_gain_is_the_latest_rejection_in_the_diagnostics(ros):
    """A goal refused, then P gains refused: /diagnostics names the gains as the last rejection, at WARN (before:
    the gains were only counted: the status stayed OK and named the older goal refusal as the last)."""
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus

    h, sim, client, states, pubs = ros
    diags: list = []
    client.create_subscription(DiagnosticArray, "/diagnostics", diags.append, 50)
    gains = client.create_publisher(Float64MultiArray, "servo/p_gains", 10)
    wait_for(lambda: gains.get_subscription_count() and diags, 20.0, "p_gains subscriber and /diagnostics")
    rejected = sim.gate.rejected
    pubs["array"].publish(Float64MultiArray(data=[math.nan, 0.0]))
    wait_for(lambda: sim.gate.rejected > rejected, 20.0, "the goal refused")
    gains.publish(Float64MultiArray(data=[-1.0, 32.0]))
    wait_for(lambda: sim.gate.rejected > rejected + 1, 20.0, "the gains refused")
    status = sim.interface_status()
    assert status.level == DiagnosticStatus.WARN and "last: servo/p_gains: shoulder gain -1.0" in status.message, (
        status.level,
        status.message,
    )

    def goals_status():
        for m in reversed(list(diags)):
            for st in m.status:
                if st.name.endswith(": goals") and sim.get_name() in st.name:
                    return st
        return None

    wait_for(lambda: (st := goals_status()) and "last: servo/p_gains" in st.message, 20.0, "/diagnostics naming it")
    np.testing.assert_allclose(sim.sim.kp, [32.0, 32.0])


def test_every_refused_parameter_change_is_logged_with_name_and_reason(ros, capfd):
    """Refusals decided by rclpy (read-only, wrong type, descriptor range) and by the node's callback all log
    one warning naming the parameter, not only the service reply; repeats are throttled."""
    h, sim, client, states, pubs = ros
    cli = client.create_client(SetParameters, "servo_sim/set_parameters")
    cases = [
        ("rate_hz", ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=100.0)),  # read-only
        ("diagnostics_period", ParameterValue(type=ParameterType.PARAMETER_STRING, string_value="x")),  # type
        ("supply_period", ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=-1.0)),  # range
        ("load.length", ParameterValue(type=ParameterType.PARAMETER_DOUBLE_ARRAY, double_array_value=[math.nan])),
    ]  # callback
    for name, value in cases:
        (res,) = h.call(cli, SetParameters.Request(parameters=[ParameterMsg(name=name, value=value)])).results
        assert not res.successful
    for _ in range(3):  # repeats within warn_throttle: suppressed (counted in the next line that is logged)
        h.call(cli, SetParameters.Request(parameters=[ParameterMsg(name="rate_hz", value=cases[0][1])]))
    err = capfd.readouterr().err
    lines = [ln for ln in err.splitlines() if "parameter change refused" in ln]
    for name, _ in cases:
        assert sum(f"refused: {name}:" in ln for ln in lines) == 1, (name, lines)


def test_undeclared_start_up_parameters_are_named_in_one_warning(ros, capfd):
    """A renamed or misspelt parameter in a params file is not dropped in silence (rclpy ignores it): the node
    logs one warning naming it, and declared names are not reported."""
    from servo_ff.ros.parameters import warn_undeclared_overrides

    h = ros[0]
    node = SimNode(
        "servo_sim_typo",
        context=h.context,
        namespace=h.ns,
        parameter_overrides=[
            Parameter("joints", value=JOINTS),
            Parameter("preset", value="mx106"),  # the old name of `servo`
            Parameter("load.mas", value=[0.5]),
            Parameter("actuator.firmware.kp", value=20.0),  # an identified YAML's: the gain is `kp`
        ],
    )
    try:
        assert warn_undeclared_overrides(node) == ["actuator.firmware.kp", "load.mas", "preset"]
        err = capfd.readouterr().err
        (line,) = [ln for ln in err.splitlines() if "has no parameter" in ln]
        assert "servo_sim_typo has no parameter(s) actuator.firmware.kp, load.mas, preset: ignored" in line
        assert "actuator.firmware.kp: the P gain is the parameter kp" in line
        assert list(node.get_parameter("kp").value) == [32.0]  # not taken from it: one gain, one name
    finally:
        node.destroy_node()


# ------------------------------------------------------------------ ROS-free pieces of the nodes
def test_throttle_counts_suppressed_messages():
    now = [0.0]
    logged = []
    t = Throttle(1.0, clock=lambda: now[0])
    assert t("k", logged.append, "a")
    assert not t("k", logged.append, "a") and not t("k", logged.append, "a")
    assert t("other", logged.append, "b")
    now[0] = 1.5
    assert t("k", logged.append, "a")
    assert logged == ["a", "b", "a (2 similar message(s) suppressed)"]


def test_goal_gate_holds_last_valid_goal():
    warnings = []
    g = GoalGate(
        ["a", "b"],
        np.array([-1.0, -1.0]),
        np.array([1.0, 1.0]),
        goal=np.zeros(2),
        warn=warnings.append,
        throttle=Throttle(0.0),
    )
    assert g.from_array([0.5, -0.5], "t") is not None
    assert g.from_array([0.5, 1.5], "t") is None and "b=1.5000 rad is outside" in warnings[-1]
    assert g.from_names(["b", "c"], [0.0, 0.0], "t") is None and "'c'" in warnings[-1]
    assert g.from_names(["b", "b"], [0.0, 0.1], "t") is None
    np.testing.assert_array_equal(g.goal, [0.5, -0.5])
    assert g.rejected == 3 and g.accepted == 1


def test_goal_gate_stamps_accepts_and_refusals_on_its_clock():
    """The gate's accept/reject times come from its injected clock (the node's goal age and WARN window)."""
    now = [10.0]
    g = GoalGate(["a"], np.array([-1.0]), np.array([1.0]), goal=np.zeros(1), warn=lambda _: None, clock=lambda: now[0])
    assert g.last_accept_time == g.last_reject_time == -math.inf
    assert g.from_array([0.5], "t") is not None
    now[0] = 12.5
    assert g.from_array([5.0], "t") is None
    assert (g.last_accept_time, g.last_reject_time) == (10.0, 12.5)


def test_urdf_gravity_load_matches_the_pendulum_load():
    """load.type urdf (pendulums2.urdf, its twin) and load.type pendulum give the same motion."""
    pytest.importorskip("servo_ff.dynamics.robot", reason="dynamics core not merged yet")
    from pathlib import Path

    from servo_ff.models.presets import preset
    from servo_ff.models.stepper import PendulumLoad
    from servo_ff.nodes.sim_backend import SimServos, UrdfGravity

    urdf = Path(__file__).resolve().parents[1] / "urdf" / "pendulums2.urdf"
    p = preset("mx64", "m1")
    a = SimServos(
        p, 2, PendulumLoad(np.full(2, 0.5), np.full(2, 0.15), np.zeros(2)), theta=[0.2, -0.1], backend="numpy"
    )
    b = SimServos(p, 2, UrdfGravity(urdf, ["pendulum_1", "pendulum_2"]), theta=[0.2, -0.1], backend="numpy")
    for s in (a, b):
        s.goal = np.array([1.0, -0.8])
        for _ in range(200):
            s.advance(0.002)
    assert abs(a.theta[0] - 0.2) > 0.5  # it moved
    np.testing.assert_allclose(b.theta, a.theta, atol=1e-3)
    np.testing.assert_allclose(b.effort, a.effort, atol=1e-3)
    with pytest.raises(Exception, match="knee"):
        UrdfGravity(urdf, ["pendulum_1", "knee"])


def test_sim_node_refuses_urdf_load_without_path():
    from servo_ff.nodes.sim_node import build_load

    with pytest.raises(ValueError, match="load.urdf_path"):
        build_load({"load.type": "urdf", "load.urdf_path": "", "joints": ["a"]}, 1)


# ------------------------------------------------------------------ issue 15: admissible changes, reset
def test_stability_is_checked_across_parameters(ros):
    """R = 0.1 Ω is stable at the 1 ms step; the same R with a 4 ms step is not: the physics_dt change is refused."""
    h, sim, client, states, pubs = ros
    R0 = sim.sim.params.R
    (r,) = _set(h, client, actuator__R=0.1)
    assert r.successful
    (r,) = _set(h, client, physics_dt=0.004)
    assert not r.successful and "physics step 0.004 s" in r.reason and "stability limit" in r.reason, r.reason
    assert sim.substeps == 4  # unchanged: 1/250 Hz in steps of 1 ms
    (r,) = _set(h, client, actuator__R=R0)
    assert r.successful


def test_held_goal_rechecked_when_position_max_is_lowered(ros):
    h, sim, client, states, pubs = ros
    pubs["array"].publish(Float64MultiArray(data=[1.5, 0.0]))
    settle_at(states, [1.5, 0.0])
    moved = sim.gate.limit_moves
    (r,) = _set(h, client, position_max=[1.0, 2.0])
    assert r.successful, r.reason
    # never left outside the new limit: the goal is now the nearest limit, written to the sim, and counted
    np.testing.assert_allclose(sim.gate.goal, [1.0, 0.0])
    np.testing.assert_allclose(sim.sim.goal, [1.0, 0.0])
    assert sim.gate.limit_moves == moved + 1
    assert any(
        kv.key == "goals_moved_by_limit_change" and kv.value == str(moved + 1) for kv in sim.interface_status().values
    )
    settle_at(states, [1.0, 0.0])
    (r,) = _set(h, client, position_max=[2.0])
    assert r.successful


def test_limits_narrowed_past_initial_position_are_taken_and_a_reset_holds_the_nearest_limit(ros):
    """Goal [0.4, 0], position_min -> [0.5, -2] with initial_position [0.3, -0.2] (read-only): taken, the held goal
    moved to 0.5 rad and said, as the hardware node does (before: refused 'initial_position ... is outside the
    joint limits'); a reset then puts the joints at initial_position and holds the goal at the nearest limit,
    said in its line, and the shoulder goes there."""
    h, sim, client, states, pubs = ros
    reset = client.create_client(Trigger, "servo/reset")
    pubs["array"].publish(Float64MultiArray(data=[0.4, 0.0]))
    settle_at(states, [0.4, 0.0])
    moved = sim.gate.limit_moves
    try:
        (r,) = _set(h, client, position_min=[0.5, -2.0])
        assert r.successful, r.reason
        np.testing.assert_allclose(sim.gate.goal, [0.5, 0.0])
        assert sim.gate.limit_moves == moved + 1
        r = h.call(reset, Trigger.Request())
        assert r.success and "outside the joint limits (shoulder): goal held at the nearest limit [0.5, -0.2]" in (
            r.message
        ), r.message
        np.testing.assert_allclose(sim.gate.goal, [0.5, -0.2])
        np.testing.assert_allclose(sim.sim.goal, [0.5, -0.2])
        settle_at(states, [0.5, -0.2])
    finally:
        (r,) = _set(h, client, position_min=[-2.0])
        assert r.successful, r.reason


def test_reset_service_brings_the_sim_back_after_a_refused_state(ros):
    h, sim, client, states, pubs = ros
    reset = client.create_client(Trigger, "servo/reset")
    pubs["array"].publish(Float64MultiArray(data=[1.0, 0.5]))
    settle_at(states, [1.0, 0.5])

    def diverge():  # a diverged state; assigned until a tick sees it (a tick in flight may overwrite it once)
        if not sim.stepper_error:
            sim.sim.theta = np.array([math.nan, 0.5])
        return sim.stepper_error

    wait_for(diverge, 20.0, "the stepper to refuse the state")
    assert "theta" in sim.stepper_error
    frozen = sim.ticks

    def refusals() -> int:  # every tick while refused is one more throttled error line ("sim")
        return sim.throttle._suppressed.get("sim", 0)

    refused = refusals()
    wait_for(lambda: refusals() - refused >= 0.3 / sim.period, 30.0, "0.3 s of ticks refused")
    assert sim.ticks == frozen  # no joint_states while refused (never garbage)
    h.call(client.create_client(SetBool, "servo/torque_enable"), SetBool.Request(data=False))
    r = h.call(reset, Trigger.Request())
    assert r.success and "initial_position [0.3, -0.2]" in r.message and "stepper had refused" in r.message
    wait_for(lambda: sim.ticks > frozen + 5, 20.0, "joint_states to flow again")
    assert sim.stepper_error == "" and sim.sim.enabled and sim.sim.hardware_error == 0
    np.testing.assert_allclose(sim.gate.goal, [0.3, -0.2])
    settle_at(states, [0.3, -0.2])
    assert np.isfinite(np.array(latest(states).velocity)).all()


def test_bus_layer_logging_reaches_rosout(ros):
    """The ROS-free layers log with Python logging (``servo_ff.bus.dynamixel.bus``, ``servo_ff.bus.feetech.bus``,
    …): in a node their lines reach /rosout through the node's logger, named after the Python logger."""
    import logging

    from rcl_interfaces.msg import Log

    h, sim, client, states, pubs = ros
    got: list[Log] = []
    # the subscription stays: destroying one while the executor thread waits on it could kill that thread
    client.create_subscription(Log, "/rosout", got.append, 100)
    rosout_matched(sim, got, lambda m: m.msg)
    logging.getLogger("servo_ff.bus.dynamixel.bus").warning("id %d: probe line", 7)
    logging.getLogger("servo_ff.bus.feetech.bus").info("probe info line")

    lines = ("servo_ff.bus.dynamixel.bus: id 7: probe line", "servo_ff.bus.feetech.bus: probe info line")

    def both():
        by_text = {m.msg: m for m in got}
        return by_text if all(t in by_text for t in lines) else None

    by_text = wait_for(both, 30.0, "the bus lines on /rosout")
    warn = by_text["servo_ff.bus.dynamixel.bus: id 7: probe line"]
    assert warn.level == Log.WARN and warn.name.endswith("servo_sim")
    assert by_text["servo_ff.bus.feetech.bus: probe info line"].level == Log.INFO


def test_refusals_are_throttled_per_reason(ros):
    """Two different refusals of one parameter within the throttle period each get a line; a repeat of the same
    reason (other values) is counted, not logged. The throttle's clock is injected: no time passes."""
    from rcl_interfaces.msg import Log

    h, sim, client, states, pubs = ros
    got: list[str] = []
    client.create_subscription(Log, "/rosout", lambda m: got.append(m.msg), 100)
    original = sim.throttle
    sim.throttle = Throttle(30.0, clock=lambda: 100.0)  # a fixed time: everything is "within the period"
    try:
        rosout_matched(sim, got, lambda m: m)
        for kp in ([math.nan, 32.0], [32.0, 32.0, 32.0], [math.inf, 32.0]):
            assert not sim.set_parameters([Parameter("kp", value=kp)])[0].successful

        def refusals():
            return [ln for ln in got if "parameter change refused: kp:" in ln]

        wait_for(lambda: len(refusals()) >= 2, 30.0, "the two refusal lines")
        lines = refusals()
        assert len(lines) == 2 and "not finite" in lines[0] and "3 values" in lines[1], lines
        assert sum(sim.throttle._suppressed.values()) == 1  # kp[0]=inf: the same reason as kp[0]=nan
    finally:
        sim.throttle = original


def test_goal_refusals_are_throttled_per_reason():
    """GoalGate: a wrong length and a goal outside the limits on one topic within a period both warn."""
    lines: list[str] = []
    g = GoalGate(
        ["a", "b"],
        np.array([-1.0, -1.0]),
        np.array([1.0, 1.0]),
        np.zeros(2),
        warn=lines.append,
        throttle=Throttle(30.0, clock=lambda: 0.0),
    )
    g.from_array([0.0], "servo/commands")
    g.from_array([2.0, 0.0], "servo/commands")
    g.from_array([3.0, 0.0], "servo/commands")  # same reason, other value: counted
    g.from_names(["a", "a"], [0.0, 0.0], "servo/joint_command")
    g.from_names(["x"], [0.0], "servo/joint_command")  # unknown name: another reason than a duplicate
    assert len(lines) == 4 and g.rejected == 5, lines
    assert "1 values for 2 joints" in lines[0] and "outside its joint limits" in lines[1]


def test_torque_enabled_follows_reboot_and_reset():
    """``servo/torque_enabled`` (latched) after the sim's reboot and reset services. Before, neither published it (a
    sim's loop never does): reboot left it true with torque off, a reset after torque_enable false left it false
    with torque on (measured by /tmp/r19l/t1_torque_state.py)."""
    from std_msgs.msg import Bool

    from servo_ff.ros.robot_description import latched_qos

    with RosHarness(salt=102) as h:
        sim = sim_node(h, **PENDULUM_SIM)
        client = h.make_node("torque_state_client")
        got: list[bool] = []
        client.create_subscription(Bool, "servo/torque_enabled", lambda m: got.append(m.data), latched_qos(1))
        services = {n: client.create_client(t, f"servo/{n}") for n, t in
                    (("torque_enable", SetBool), ("reboot", Trigger), ("reset", Trigger))}  # fmt: skip
        wait_for(lambda: sim.active and got and got[-1], 30.0, "active, torque_enabled true")

        def call(name: str, request) -> bool:
            n = len(got)
            assert h.call(services[name], request, timeout=15.0).success
            return wait_for(lambda: len(got) > n and [got[-1]], 30.0, f"torque_enabled after {name}")[0]

        assert call("reboot", Trigger.Request()) is False and not sim.hw_torque_is_on()
        assert call("reset", Trigger.Request()) is True and sim.hw_torque_is_on()
        assert call("torque_enable", SetBool.Request(data=False)) is False
        assert call("reset", Trigger.Request()) is True and sim.hw_torque_is_on()
