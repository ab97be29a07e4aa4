"""servo_feedforward_node and its servo node's torque (``servo/torque_enabled``) over DDS: no goal while the torque is
off; when it comes on again (or for the first time after goals went out) the goals start where the joints stand and
blend into the desired trajectory (audit 20a E2: before, the next goal was the old target, the joint swung back at
8 rad/s)."""

from __future__ import annotations

import numpy as np
import pytest
from nodes_harness import PENDULUM_JOINTS as JOINTS
from nodes_harness import FeedForwardProbe, RosHarness, sim_node, wait_for
from nodes_harness import pendulum_feedforward as _pendulum_ff

pytest.importorskip("rclpy")
pytest.importorskip("servo_ff.dynamics.feedforward", reason="feed-forward core servo_ff.dynamics not merged yet")
from builtin_interfaces.msg import Duration  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Bool  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

from servo_ff.ros.robot_description import latched_qos  # noqa: E402


def _point(q, seconds: float = 0.0) -> JointTrajectory:
    d = Duration(sec=int(seconds), nanosec=int(round(seconds % 1 * 1e9)))
    return JointTrajectory(joint_names=JOINTS, points=[JointTrajectoryPoint(positions=list(q), time_from_start=d)])


def test_no_goal_while_the_torque_is_off_and_goals_blend_from_where_the_joints_stand_when_it_comes_on(capfd):
    """Goal = desired position (``enabled`` false) on the pendulums, a hold at [1.2, 0]. A servo node activated after
    the goals started (its first ``true``) and one re-activated (``false`` then ``true``) with the joints fallen:
    the first goal is the pose read then, and the goals go on to the hold point monotonically over
    15/8·gap/resume_speed; while ``false``, no goal for any /joint_states. Before: the next goal was 1.2 at once."""
    with RosHarness(salt=110) as h:
        ff = _pendulum_ff(h, enabled=False, resume_speed=2.0, warn_throttle=30.0)
        probe = FeedForwardProbe(h, "ff_torque_client", torque=(Bool, "servo/torque_enabled", latched_qos(1)))
        goals, js, desired, torque = probe.goals, probe.js, probe.desired, probe.torque
        handled = [0]  # /joint_states the node handled (its callback wrapped: a positive sign it saw them)
        on_states = ff._on_joint_states
        ff._on_joint_states = lambda *a: (on_states(*a), handled.__setitem__(0, handled[0] + 1))

        def state(q) -> JointState:
            return JointState(name=JOINTS, position=list(q))

        start = state([0.0, 0.0])
        wait_for(lambda: js.publish(start) or ff._js_sub is None, 20.0, "the pose taken")
        desired.publish(_point([1.2, 0.0]))  # its only point at 0: the first goal (start-pose rule, JTC)
        wait_for(lambda: goals and goals[-1] == [1.2, 0.0], 20.0, "the hold goal")

        def comes_on(q) -> list[list[float]]:
            """The torque on with the joints at ``q``: the goals from then until the hold point is reached."""
            n = len(goals)
            torque.publish(Bool(data=True))
            wait_for(lambda: ff.torque_on is True, 20.0, "torque on heard")
            fallen = state(q)
            back = "the hold point again"
            wait_for(lambda: js.publish(fallen) or (len(goals) > n and abs(goals[-1][0] - 1.2) < 1e-12), 30.0, back)
            return goals[n:]

        for q in ([-0.1, 0.05], [0.4, -0.3]):  # first true after goals went out; then false → true
            if ff.torque_on:
                torque.publish(Bool(data=False))
                wait_for(lambda: ff.torque_on is False, 20.0, "torque off heard")
                n, k, limp = len(goals), handled[0], state(q)
                wait_for(lambda: js.publish(limp) or handled[0] >= k + 20, 20.0, "20 states handled while off")  # noqa: B023
                assert len(goals) == n, goals[n:]  # no goal while off (before: one per state)
            after = np.array(comes_on(q))
            np.testing.assert_allclose(after[0], q, atol=1e-12)  # where they stand (before: [1.2, 0] at once)
            assert (np.diff(after[:, 0]) >= -1e-12).all() and (np.diff(after[:, 1]) * np.sign(-q[1]) >= -1e-12).all()
            assert len(after) > 5  # a blend, not a step
        err = capfd.readouterr().err
        lines = [ln for ln in err.splitlines() if "servo/torque_enabled" in ln]
        assert len(lines) == 3, lines  # true (blend), false, true (blend): one line each
        assert "largest gap 1.300 rad" in lines[0] and "over 1.22 s" in lines[0], lines[0]  # 15/8 · 1.3 / 2
        assert "no goal until the torque is on again" in lines[1] and "[0.4, -0.3] rad" in lines[2], lines


def test_a_pendulum_fallen_with_its_torque_off_is_not_snapped_back_when_it_comes_on():
    """servo_sim_node (stepper, MX-64 M4, pendulums with a 0.5 kg load, kp 32) and the feed-forward node holding
    pendulum_1 at 1.2 rad; ``torque_enable`` false: it falls and hangs; true: it goes back at about ``resume_speed``
    (1 rad/s). Before: the goal was 1.2 rad at once, back in 0.16 s at 8 rad/s (the URDF limit is 8.7)."""
    from std_srvs.srv import SetBool

    with RosHarness(salt=111) as h:
        sim = sim_node(h, joints=JOINTS, rate_hz=250.0, servo="mx64", model="m4", position_min=[-2.5],
                       position_max=[2.5], initial_position=[0.0, 0.0], warn_throttle=30.0,
                       **{"load.mass": [0.5], "load.length": [0.15]})  # fmt: skip
        _pendulum_ff(h, kp=[32.0], warn_throttle=30.0)
        client = h.make_node("ff_torque_sim_client")
        states: list[tuple[float, float]] = []  # (header.stamp [s], pendulum_1 [rad])

        def now() -> float:  # [s] the sim's clock (wall time): its states' stamps
            return sim.get_clock().now().nanoseconds * 1e-9

        def on_state(m: JointState) -> None:
            states.append((m.header.stamp.sec + m.header.stamp.nanosec * 1e-9, m.position[0]))

        client.create_subscription(JointState, "joint_states", on_state, 1000)
        desired = client.create_publisher(JointTrajectory, "feedforward/trajectory", 10)
        service = client.create_client(SetBool, "servo/torque_enable")
        wait_for(lambda: desired.get_subscription_count() and states and sim.active, 30.0, "discovery")
        desired.publish(_point([1.2, 0.0], 1.0))
        wait_for(lambda: abs(states[-1][1] - 1.2) < 0.05, 30.0, "pendulum_1 at 1.2 rad")
        assert h.call(service, SetBool.Request(data=False)).success
        t_off = now()  # (the states received may lag the sim's by seconds on a loaded box: its stamps tell)

        def hanging() -> bool:
            w = [q for t, q in states if t > t_off + 0.5][-100:]
            return len(w) == 100 and max(w) < 0.5 and max(w) - min(w) < 0.02  # (it may stick a while at first)

        wait_for(hanging, 60.0, "hanging still with the torque off")
        assert h.call(service, SetBool.Request(data=True)).success
        t_on = now()
        wait_for(lambda: states[-1][0] > t_on + 1.0, 30.0, "1 s of states after the torque came on")
        q_on = [q for t, q in states if t <= t_on][-1]
        assert q_on < 0.5  # fallen
        t, q = np.array([s for s in states if s[0] > t_on]).T
        speed = np.abs(np.diff(q) / np.diff(t))
        assert speed.max() < 2.0, (speed.max(), q_on, q.max())  # before: 8 rad/s
        assert q.max() < 1.2 - 0.1  # still on its way after 1 s (before: back within 0.2 s)


def test_the_resume_blend_starts_at_rest_on_the_pose_and_ends_on_the_trajectory_with_its_derivatives():
    """ResumeBlend over a moving desired trajectory (a sine): q(t0) = the pose with q̇ = q̈ = 0, the trajectory's
    (q, q̇, q̈) from t0 + duration on; q̇ and q̈ are the derivatives of q (finite differences); a joint never read
    (NaN) follows the trajectory; the length is 15/8·gap/speed, at least 0.1 s."""
    from servo_ff.nodes.feedforward_resume import ResumeBlend, resume_duration

    assert resume_duration(1.3, 2.0) == pytest.approx(1.21875) and resume_duration(0.01, 2.0) == 0.1
    w, cols = 3.0, np.array([0, 2])

    def traj(t: float):
        return np.array([np.sin(w * t), 0.5]), np.array([w * np.cos(w * t), 0.0]), np.array([-w * w * np.sin(w * t), 0])

    blend = ResumeBlend(1.0, np.array([-0.4, 9.9, np.nan]), 0.8)
    q, dq, ddq = blend.apply(1.0, cols, *traj(1.0))
    np.testing.assert_allclose([q[0], dq[0], ddq[0]], [-0.4, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose([q[1], dq[1], ddq[1]], [0.5, 0.0, 0.0], atol=1e-12)  # never read: the trajectory
    for got, want in zip(blend.apply(1.8, cols, *traj(1.8)), traj(1.8), strict=True):
        np.testing.assert_allclose(got, want, atol=1e-12)
    assert not blend.done(1.79) and blend.done(1.8)
    h = 1e-5
    for t in np.linspace(1.05, 1.75, 8):
        (qm, dqm, _), (q0, dq0, ddq0), (qp, dqp, _) = (blend.apply(s, cols, *traj(s)) for s in (t - h, t, t + h))
        np.testing.assert_allclose(dq0, (qp - qm) / (2 * h), atol=1e-6)
        np.testing.assert_allclose(ddq0, (dqp - dqm) / (2 * h), atol=1e-4)
