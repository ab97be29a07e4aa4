"""``servo_sim_node``: the servo interface of :mod:`.servo_base` backed by Duclusaud et al.'s stepper
(Extended Friction Models, Algorithm 1).

Every control period (``1/rate_hz``, 500 Hz by default) advances all joints by one period in steps of at most
``physics_dt`` (calls of :func:`servo_ff.models.stepper.step`) toward the held goals, then publishes
``/joint_states`` stamped with the simulated time at the end of the period. The actuator comes from
``actuator_file`` (an identified parameter file, as ``servo-ff identify --out`` writes it: its actuator and model
m1..m6 included), else from ``servo`` + ``model`` (:func:`servo_ff.models.presets.preset`), with every coefficient
exposed as an ``actuator.*`` parameter (core schema) but the P gain, which is ``kp``; the simulated supply voltage
is ``actuator.firmware.vin``. The load is a pendulum per
joint (``load.type: pendulum``, Duclusaud et al. (Extended Friction Models) bench: θ = 0 hanging down), a pure inertia
(``none``), or gravity of a URDF (``urdf``, via ``servo_ff.dynamics``).

Time: :mod:`.sim_clock` (own ``/clock`` at ``real_time_factor``, lockstep, or follow the node clock).

Lifecycle (:mod:`.servo_base`): the simulated torque is off until the node is activated; deactivate holds the
present position, then turns torque off; cleanup resets the simulation to ``initial_position``.

A parameter change that would make the model non-finite is refused before it takes effect: the core schema's
admissible ranges, and the explicit-integration stability of the back-EMF damping for the physics step
(:func:`servo_ff.models.stepper.step_stability_refusal`: dt < 2·J·R/kt², J = load inertia + armature). The
``<prefix>/reset`` service (std_srvs/Trigger) always brings the simulation back: position = ``initial_position``,
velocity 0, goal = ``initial_position``, errors cleared, torque on — also after the stepper refused a state.
"""

from __future__ import annotations

from typing import Any

from servo_ff.ros.common import spin_node

from .mujoco_backend import MujocoSimNode
from .sim_stepper import LOAD_TYPES, SimNode, actuator_source, build_load, sim_specs, source_specs


def sim_node_factory(**kwargs: Any):
    """``servo_sim_node``'s constructor: :class:`MujocoSimNode` when the parameter ``backend`` is ``mujoco``,
    else the stepper :class:`SimNode`."""
    import rclpy

    probe = rclpy.create_node(
        kwargs.pop("name", "servo_sim"),
        automatically_declare_parameters_from_overrides=True,
        **{k: v for k, v in kwargs.items() if k in ("context", "namespace")},
    )
    try:
        backend = probe.get_parameter("backend").value if probe.has_parameter("backend") else None
    finally:
        probe.destroy_node()
    if backend == "mujoco":
        return MujocoSimNode(**kwargs)
    return SimNode(**kwargs)


def main(args: list[str] | None = None) -> int:
    return spin_node(sim_node_factory, args)


if __name__ == "__main__":
    import sys

    sys.exit(main())


__all__ = [
    "LOAD_TYPES",
    "MujocoSimNode",
    "SimNode",
    "actuator_source",
    "build_load",
    "main",
    "sim_node_factory",
    "sim_specs",
    "source_specs",
]
