"""``servo_sim_node``: the servo interface of :mod:`.servo_base` over a physics backend object
(:class:`.sim_backend.SimBackend`): by default Duclusaud et al.'s stepper (Extended Friction Models, Algorithm 1;
:class:`.sim_stepper.StepperBackend`), with ``backend: mujoco`` a whole robot in MuJoCo
(:class:`.mujoco_backend.MujocoBackend`). One :class:`SimNode` class for both: the backend builds the model,
declares its parameters and answers the ``hw_*`` hooks.

With the stepper, every control period (``1/rate_hz``, 500 Hz by default) advances all joints by one period in steps
of at most ``physics_dt`` (calls of :func:`servo_ff.models.stepper.step`) toward the held goals, then publishes
``/joint_states`` stamped with the simulated time at the end of the period. The actuator comes from
``actuator_file`` (an identified parameter file, as ``servo-ff identify --out`` writes it: its actuator and model
m1..m6 included), else from ``servo`` + ``model`` (:func:`servo_ff.models.presets.preset`), with every coefficient
exposed as an ``actuator.*`` parameter (core schema) but the P gain, which is ``kp``; the simulated supply voltage
is ``actuator.firmware.vin``. The load is a pendulum per joint (``load.type: pendulum``, Duclusaud et al. (Extended
Friction Models) bench: θ = 0 hanging down), a pure inertia (``none``), or gravity of a URDF (``urdf``, via
``servo_ff.dynamics``).

Time: :mod:`servo_ff.ros.sim_clock` (own ``/clock`` at ``real_time_factor``, lockstep, or follow the node clock).

Lifecycle (:mod:`.servo_base`), as the hardware node's: the simulated torque is off until the node is activated;
configured and inactive, the physics is stepped with torque off (the joints fall under their load as real ones
would) and ``/joint_states``, the backend's topics, ``servo_supply`` and (``publish_clock``) ``/clock`` are
published, no goal taken (lockstep: one period per ``lockstep_timeout``, no goal being awaited); activate holds
the joints where they are then; deactivate holds the present position, then turns torque off; cleanup stops the
loop and resets the simulation to ``initial_position``. Unconfigured (no model), nothing is stepped.

The servo type's ranges are checked as the hardware node checks them (:mod:`.servo_ranges`, from the control table
the hardware node runs for the same ``servo`` name, not the preset's: ``mx106-p1`` is the MX-106(1.0); ``kp`` within
the P gain register, the joint limits within the position range; limits not given are that range): a parameter set
the sim runs, the hardware runs too. A parameter change that would make the model non-finite is
refused before it takes effect: the core schema's
admissible ranges, and the explicit-integration stability of the back-EMF damping for the physics step
(:func:`servo_ff.models.stepper.step_stability_refusal`: dt < 2·J·R/kt², J = load inertia + armature). The
``<prefix>/reset`` service (std_srvs/Trigger) always brings the simulation back: position = ``initial_position``,
velocity 0, goal = ``initial_position``, errors cleared, torque on — also after the stepper refused a state. Limits
narrowed at run time past ``initial_position`` (checked against the limits at start-up only) hold the goal of a
reset or cleanup at the nearest limit, said in its line (:meth:`SimNode.hold_start_pose`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from diagnostic_msgs.msg import DiagnosticStatus
from std_srvs.srv import Trigger

from servo_ff.ros.common import spin_node
from servo_ff.ros.sim_clock import SimClock

from .mujoco_backend import MujocoBackend
from .servo_base import ServoInterfaceNode
from .servo_ranges import default_limits_from_table, range_refusal
from .sim_backend import SimBackend, substeps
from .sim_stepper import LOAD_TYPES, StepperBackend, actuator_source, build_load, sim_specs, source_specs


class SimNode(SimClock, ServoInterfaceNode):
    """``servo_sim_node``: the servo interface over a physics backend object (``backend``; default: a new
    :class:`StepperBackend`), with the simulated time of :class:`SimClock`."""

    reads_while_inactive = True  # as the hardware node: inactive = torque off, physics stepped, states published

    def __init__(self, name: str = "servo_sim", backend: SimBackend | None = None, **kwargs: Any):
        self.period_taps: list[Callable[[], None]] = []  # called after each period's outputs are published
        #: (joint, "velocity" | "effort") → the limit last commanded on joint_command [rad/s | N·m], kept until
        #: commanded otherwise (0 lifts it): written again into rows an actuator parameter change rebuilt
        self.limits_commanded: dict[tuple[str, str], float] = {}
        super().__init__(name, **kwargs)
        self.backend = backend if backend is not None else StepperBackend()
        self.status_name = self.backend.status_name
        self.stepper_error = ""  # why the physics last refused the state ("" while it runs)
        table = self.backend.declare(self)
        self._setup_interface(table)
        v = table.values
        started = self.backend.start(v)
        self.substeps = substeps(v)
        self.create_service(Trigger, self.names["reset"], self._on_reset)
        self._init_clock(v)
        default_limits_from_table(self, self.backend.servo_table())  # not given: the servo type's range, as hardware
        self._built = True
        if started is not None:
            self.get_logger().info(started + self.clock_text())

    # the backend's model, for tests and benchmarks: the stepper's servos, MuJoCo's servos, joint order and error
    sim = property(lambda self: self.backend.sim)
    servos = property(lambda self: self.backend.servos)
    perm = property(lambda self: self.backend.perm)
    model_error = property(lambda self: self.backend.model_error)

    def _step(self) -> bool:
        ok = self.backend.step()
        if not ok and self.stepper_error:
            self.states_lost(f"the simulation refused the state: {self.stepper_error}")
        return ok

    def hw_states_refusal(self) -> str:
        return f"the simulation refuses the state ({self.stepper_error}); reset it" if self.stepper_error else ""

    def publish_state(self, stamp) -> bool:
        if self.backend.stops_outputs_on_error and self.stepper_error:
            return False
        # the backend's topics (MuJoCo: imu/data, …) before /joint_states: a controller ticking on /joint_states has
        # this period's IMU whatever its executor's order (rclpy's EventsExecutor: the order the messages came)
        self.backend.publish_outputs(stamp)
        published = super().publish_state(stamp)
        for tap in self.period_taps:  # in-process observers of the period (a mission's probe: no DDS callback)
            tap()
        return published

    # ------------------------------------------------------------------ parameters
    def _validate(self, values: dict[str, Any]) -> str | None:
        """The backend's checks, then the servo type's ``kp`` and (once built) position range, as the hardware node
        checks them (:mod:`.servo_ranges`): a parameter set the sim runs, the hardware runs too."""
        built = getattr(self, "_built", False)  # declared: the default ±π is replaced by the range after
        return self.backend.validate(values) or range_refusal(values, self.backend.servo_table(), built)

    def config_refusal(self) -> str:
        return range_refusal(self.table.values, self.backend.servo_table()) or ""  # limits given beyond the range

    def _apply(self, changed: set[str]) -> None:
        self.backend.apply(changed)
        self._apply_clock(changed)
        self._apply_interface(changed)

    # ------------------------------------------------------------------ velocity / effort limits
    def hw_command_limits(self, names: list[str], velocity: list[float], effort: list[float], source: str) -> None:
        """JointState velocity / effort → the servo model's own goal-velocity and current limits
        (:func:`servo_ff.models.motion_limits.apply_motion_limits`); the rows without limits are kept once. The
        limits are kept per joint (:attr:`limits_commanded`, as the hardware node's ``limits_written``): rows
        rebuilt by an actuator parameter change get them again (:meth:`reapply_command_limits`)."""
        from servo_ff.models.motion_limits import apply_motion_limits

        rows, order = self.backend.limit_rows()
        if rows is None:
            self.refuse_limits(source, "velocity/effort refused: no model")
            return
        if getattr(self, "_own_rows", (None,))[0] is not rows:  # new rows (actuator parameters changed): theirs
            self._own_rows = (rows, rows.copy())
        try:
            apply_motion_limits(rows, self._own_rows[1], order[[self.gate.index[n] for n in names]], velocity, effort)
        except ValueError as e:
            self.refuse_limits(source, f"velocity/effort refused: {e}")
            return
        for field, values in (("velocity", velocity), ("effort", effort)):
            for name, x in zip(names, values):  # empty values: not given, the joint's limit stays
                if x:
                    self.limits_commanded[(name, field)] = abs(float(x))
                else:  # 0 lifts it
                    self.limits_commanded.pop((name, field), None)

    def reapply_command_limits(self) -> str:
        """The commanded limits (:attr:`limits_commanded`) written again into the backend's rows after it rebuilt
        them (an actuator parameter change: the new rows are the servos' own, without limits); a commanded limit
        stays until commanded otherwise. Returns what was kept, for the log line ("" if nothing)."""
        from servo_ff.models.motion_limits import apply_motion_limits

        rows, order = self.backend.limit_rows()
        if rows is None:
            return ""
        if getattr(self, "_own_rows", (None,))[0] is not rows:
            self._own_rows = (rows, rows.copy())
        kept = []
        for field, unit in (("velocity", "rad/s"), ("effort", "N·m")):
            items = [(j, x) for (j, f), x in self.limits_commanded.items() if f == field]
            if items:
                idx = order[[self.gate.index[j] for j, _ in items]]
                apply_motion_limits(rows, self._own_rows[1], idx, **{field: [x for _, x in items]})
                kept += [f"{j} {field} {x:g} {unit}" for j, x in items]
        return ", ".join(kept)

    def hold_start_pose(self, pose: np.ndarray) -> str:
        """Goal := the start pose ``pose`` [rad] (reset, cleanup) within the joint limits, written. The limits may
        have narrowed at run time past ``initial_position`` (read-only): the goal is then held at the nearest limit,
        as the hardware node holds a reading beyond them (torque on moves the joint there). Returns '' or the clause
        saying so, for the caller's one line."""
        pose = np.asarray(pose, dtype=np.float64)
        goal = np.minimum(np.maximum(pose, self.gate.lower), self.gate.upper)
        self.gate.goal = goal
        self.hw_write_goal(goal.copy())
        out = np.flatnonzero(goal != pose)
        if not out.size:
            return ""
        return (
            f"; the start pose is outside the joint limits ({', '.join(self.joints[i] for i in out)}): goal held at "
            f"the nearest limit {goal.round(4).tolist()} rad (torque on moves the joint there)"
        )

    # ------------------------------------------------------------------ hooks
    def _on_reset(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        if self._shut_down():  # (before: reset moved the joints of a shut-down sim back to initial_position)
            response.success, response.message = False, self._shut_down()
            return response
        response.success, response.message = self.backend.reset(self.stepper_error)
        if not response.success:
            return response
        self.stepper_error = ""
        self.traj = None
        self._t_ns = None
        self.publish_torque_state()  # on again while active (also after torque_enable false), off while inactive
        self.get_logger().warning(response.message)
        return response

    def autostart_retry_period(self) -> float:
        return self.backend.autostart_retry_period()

    def hw_configure(self) -> tuple[bool, str]:
        return self.backend.configure()

    def hw_cleanup(self) -> None:
        self.backend.cleanup()

    def hw_read(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.backend.read()

    def hw_write_goal(self, goal: np.ndarray) -> None:
        self.backend.write_goal(goal)

    def hw_write_kp(self, kp: np.ndarray) -> None:
        self.backend.write_kp(kp)

    def hw_torque(self, enable: bool) -> tuple[bool, str]:
        return self.backend.torque(enable)

    def hw_reboot(self) -> tuple[bool, str]:
        return self.backend.reboot()

    def hw_torque_is_on(self) -> bool:
        return self.backend.torque_is_on()

    def hw_supply_voltage(self) -> float:
        return self.backend.supply_voltage()

    def hw_diagnostics(self) -> list[DiagnosticStatus]:
        return self.backend.diagnostics()


class MujocoSimNode(SimNode):
    """``servo_sim_node`` with ``backend: mujoco``: :class:`SimNode` over a :class:`MujocoBackend`."""

    def __init__(self, name: str = "servo_sim", **kwargs: Any):
        super().__init__(name, backend=MujocoBackend(), **kwargs)


def sim_node_factory(**kwargs: Any) -> SimNode:
    """``servo_sim_node``'s constructor: :class:`SimNode` over the MuJoCo backend when the parameter ``backend`` is
    ``mujoco``, else over the stepper."""
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
    return SimNode(backend=MujocoBackend() if backend == "mujoco" else StepperBackend(), **kwargs)


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
