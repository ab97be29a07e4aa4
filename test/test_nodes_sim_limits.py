"""servo_sim_node (stepper) over real DDS: a velocity limit commanded on ``servo/joint_command`` stays through an
unrelated actuator parameter change, and ``actuator.thermal.*`` changes without the winding model are refused."""

from __future__ import annotations

import pytest
from nodes_harness import PENDULUM_SIM, RosHarness, sim_node, wait_for

pytest.importorskip("rclpy")
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402

from servo_ff.models.params import P_GVMAX  # noqa: E402

LIMIT = 0.5  # rad/s


def stamp_s(m: JointState) -> float:
    return m.header.stamp.sec + m.header.stamp.nanosec * 1e-9


def test_a_commanded_velocity_limit_survives_an_actuator_parameter_change():
    """Shoulder limited to 0.5 rad/s on joint_command, moved 0.3 → 1.3 rad, actuator.friction_viscous +1 %, moved
    back with no new limit: both moves peak near the limit on the published joint_states (sim time, the sim owning
    /clock as fast as it runs). Before, the change rebuilt the servo rows without the limit: the move back peaked at
    ≈ 8.5 rad/s."""
    with RosHarness(salt=78) as h:
        sim = sim_node(h, **PENDULUM_SIM, publish_clock=True, real_time_factor=0.0, physics_dt=0.001)
        c = h.make_node("probe")
        states: list[JointState] = []
        c.create_subscription(JointState, "joint_states", states.append, 5000)
        js = c.create_publisher(JointState, "servo/joint_command", 10)
        cmd = c.create_publisher(Float64MultiArray, "servo/commands", 10)
        wait_for(lambda: js.get_subscription_count() and cmd.get_subscription_count() and sim.active, 20.0, "discovery")
        wait_for(lambda: states and abs(states[-1].velocity[0]) < 0.01, 20.0, "the shoulder at rest")
        js.publish(JointState(name=["shoulder"], velocity=[LIMIT]))
        wait_for(lambda: sim.sim.packed[0, P_GVMAX] == LIMIT, 10.0, "the limit in the servo rows")

        def peak_of_move(goal: float) -> float:
            """Largest |shoulder velocity| published from the goal until the shoulder rests at it."""
            t0 = sim.now_s()
            cmd.publish(Float64MultiArray(data=[goal, -0.2]))
            wait_for(
                lambda: (
                    stamp_s(states[-1]) > t0
                    and abs(states[-1].position[0] - goal) < 0.05  # 0.022 below 1.3 rad: gravity against the P loop
                    and abs(states[-1].velocity[0]) < 0.01
                ),
                60.0,
                f"the shoulder at rest at {goal} rad",
            )
            return max(abs(m.velocity[0]) for m in list(states) if stamp_s(m) > t0)

        up = peak_of_move(1.3)
        viscous = sim.get_parameter("actuator.friction_viscous").value
        r = sim.set_parameters([Parameter("actuator.friction_viscous", value=viscous * 1.01)])[0]
        assert r.successful, r.reason
        down = peak_of_move(0.3)
        assert up < LIMIT * 1.5 and down < LIMIT * 1.5, (up, down)  # before: down ≈ 8.5 rad/s
        assert sim.sim.packed[0, P_GVMAX] == LIMIT  # kept in the rebuilt rows


def test_thermal_parameters_are_refused_without_the_thermal_model():
    """thermal_model false (read-only): an actuator.thermal.* change would have no effect — refused, naming the
    parameter and thermal_model (before: accepted and logged as 'actuator parameters updated', the servos still
    without a thermal row). With thermal_model true the same change is taken by the winding model."""
    with RosHarness(salt=79) as h:
        cold = sim_node(h, **PENDULUM_SIM)
        hot = sim_node(h, namespace=f"{h.ns}/hot", **PENDULUM_SIM, thermal_model=True)
        wait_for(lambda: cold.active and hot.active, 20.0, "both sims active")
        before = cold.get_parameter("actuator.thermal.resistance").value
        r = cold.set_parameters([Parameter("actuator.thermal.resistance", value=50.0)])[0]
        assert not r.successful
        assert "actuator.thermal.resistance" in r.reason and "thermal_model" in r.reason, r.reason
        assert cold.get_parameter("actuator.thermal.resistance").value == before and cold.sim.thermal is None
        # the value it has: nothing to refuse (a parameter file re-applied whole sets every actuator.thermal.*)
        r = cold.set_parameters([Parameter("actuator.thermal.resistance", value=before)])[0]
        assert r.successful, r.reason
        r = hot.set_parameters([Parameter("actuator.thermal.resistance", value=50.0)])[0]
        assert r.successful, r.reason
        assert hot.sim.thermal.th.resistance == 50.0
