"""The MuJoCo backend of ``servo_sim_node`` (``backend: mujoco``): a whole robot from a URDF or MJCF, every driven
joint its own servo model (:class:`servo_ff.dynamics.mujoco_servos.MujocoServos`, servo type and friction model
per joint from a servo YAML), multibody physics, ground and contacts by MuJoCo.

Same interface as the stepper backend and the hardware node (:mod:`.servo_base`: ``joint_states`` of every
driven joint, goals, P gains, torque enable, reboot, ``servo_supply``, ``/diagnostics``, lifecycle, ``/clock``
and ``real_time_factor`` as in :mod:`.sim_node`), plus

* ``imu/data`` (sensor_msgs/Imu: orientation, angular velocity, specific-force acceleration of the root body,
  what MuJoCo's gyro / accelerometer compute; the options' noise added),
* ``foot_forces`` (std_msgs/Float64MultiArray: normal ground force per foot [N], ``feet`` order) and
  ``support_coefficient`` (std_msgs/Float64, c = F_left/(F_left + F_right), 0.5 airborne; robots with two
  feet; topic name ``support_topic``),
* ``odom`` (nav_msgs/Odometry, floating base: ``odom_frame`` → root link, :mod:`servo_ff.ros.odometry_pub`),

each control period (:mod:`.mujoco_outputs`). ``lockstep: true`` (with ``publish_clock``) steps one period per goal
message received (``<prefix>/commands`` or ``<prefix>/joint_command``) — a controller answering each
``joint_states`` closes the loop on simulated time, as fast as both run — and after ``lockstep_timeout`` wall
seconds without one (a goal stamped with the state it answers: :mod:`servo_ff.ros.sim_clock`).

Bad input is one error line at configure naming the joint or link (no inertial on a moving link, no foot
collision geometry on a floating base, a joint missing from the servo YAML). A physics state going non-finite
stops every output (nothing non-finite is published), turns the diagnostics to ERROR, and ``<prefix>/reset``
brings the robot back to its start pose.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from diagnostic_msgs.msg import DiagnosticStatus, KeyValue

from servo_ff.dynamics.mujoco_servos import PhysicsDiverged  # the per-period step catches it
from servo_ff.ros.common import ParameterTable, ParamSpec, diag_name, hardware_id, per_joint
from servo_ff.ros.servo_diagnostics import sim_state

from .mujoco_outputs import TOPIC_FOOT_FORCES, TOPIC_IMU, MujocoOutputs
from .mujoco_params import boot_values, mujoco_specs, servos_from_boot
from .servo_base import servo_interface_specs, validate_interface
from .sim_backend import SimBackend


class MujocoBackend(SimBackend):
    """``servo_sim_node`` with ``backend: mujoco``: the node's time handling (``/clock``, ``real_time_factor``,
    following the node clock) over the MuJoCo servo layer."""

    status_name = "mujoco"
    stops_outputs_on_error = True  # a diverged physics state publishes nothing until reset

    def __init__(self) -> None:
        self.node: Any = None
        self.model_error = ""
        self.servos = None
        self.options = None
        self.source_name = ""
        self._obstacle_geom = -1
        self.joint_order: list[str] = []
        self.perm = np.zeros(0, dtype=int)
        self.outputs: MujocoOutputs | None = None

    def declare(self, node: Any) -> ParameterTable:
        """The model from the boot parameters (a bad file: ``model_error``, one line at configure), then the
        table: ``joints`` default to the model's driven joints, ``kp`` to the servo YAML's gains."""
        self.node = node
        try:
            self._build(boot_values(node))
        except (ValueError, OSError) as e:  # SimModelError / ServoMapError: one line naming the joint or link
            self.model_error = " ".join(str(e).split())
        model_joints = self.joint_order or ["joint_1"]
        specs = servo_interface_specs(default_joints=model_joints, kp=32.0) + mujoco_specs()
        for i, s in enumerate(specs):
            if s.name == "kp" and self.servos is not None:
                from servo_ff.models import slots

                specs[i] = ParamSpec(
                    s.name, self.servos.p[:, slots.KP].tolist(), s.description, s.unit, lo=s.lo, hi=s.hi, per_joint=True
                )
        self._model_joints = model_joints
        table = ParameterTable(
            node, specs, validate=node._validate, apply=node._apply, n_joints=lambda v: len(self._joints_of(v))
        )
        joints = self._joints_of(table.values)
        if self.servos is not None and sorted(joints) != sorted(self.joint_order):
            extra = [j for j in joints if j not in self.joint_order]
            missing = [j for j in self.joint_order if j not in joints]
            self.model_error = (
                f"joints: {extra[0]!r} is not a driven joint of the model"
                if extra
                else f"joints: driven joint {missing[0]!r} is missing (list every driven joint, in "
                "any order, or [''] for all in model order)"
            )
        #: node (``joints``) order → the servo layer's (model) order: model = node[inverse]
        self.perm = np.array(
            [self.joint_order.index(j) for j in joints]
            if self.servos is not None and not self.model_error
            else range(len(joints)),
            dtype=int,
        )
        self._identity = bool((self.perm == np.arange(len(self.perm))).all())  # per period: no reordering
        if self.model_error:
            self.servos = None
        table.values["joints"] = joints  # [""]: every driven joint, model order
        return table

    def start(self, v: dict[str, Any]) -> str | None:
        node = self.node
        self.goal = np.zeros(node.n)
        self.state = (np.full(node.n, np.nan),) * 3
        if self.servos is not None:
            self._place(per_joint(v["initial_position"], node.n, "initial_position"))
            self.servos.set_kp(self._model(node.kp))
            self.servos.set_enable(0.0)  # torque comes on with the lifecycle transition activate
        # simulated time stops with the physics: the ERROR diagnostics keep coming, as the node's diagnostics timer
        # runs on the steady clock (at diagnostics_period, also when changed at run time): no timer of its own here
        self.outputs = MujocoOutputs(node, self.servos, self.options, v)
        if self.model_error:  # a model error is one line at configure
            return None
        sm = self.servos.sim
        return (
            f"MuJoCo: {self.source_name}, {'floating' if sm.floating else 'fixed'} base, {node.n} servo(s), "
            f"{v['rate_hz']:g} Hz control, {self.servos.model.opt.timestep * 1e3:g} ms physics, "
            f"{len(sm.feet)} feet; "
        )

    # ------------------------------------------------------------------ model
    def _build(self, b: dict[str, Any]) -> None:
        self.source_name, self.options, self.servos = servos_from_boot(b)
        self.joint_order = list(self.servos.joint_names)
        self._obstacle_foot = b["obstacle_foot"]
        self._obstacle_geom = int(self.servos.model.geom("obstacle").id) if self.servos.sim.floating else -1

    def _joints_of(self, v: dict[str, Any]) -> list[str]:
        joints = [j for j in v["joints"] if j]
        return joints or list(self._model_joints)

    def _place(self, q0: np.ndarray) -> None:
        """Joints at ``q0`` (``joints`` order; floating base: upright on the ground), remembered as the reset
        state."""
        q0 = self._model(q0)
        import mujoco

        from servo_ff.dynamics.mujoco_model import place_on_ground

        s = self.servos
        if s.sim.floating:
            place_on_ground(s.sim, s.qadr, q0)
        else:
            mujoco.mj_resetData(s.model, s.data)
            s.data.qpos[s.qadr] = q0
            mujoco.mj_forward(s.model, s.data)
        s.set_initial_state()
        s.reset()
        self.goal = s.goal[self.perm]
        self.node.gate.goal = self.goal.copy()
        self._read()

    def _model(self, x: np.ndarray) -> np.ndarray:
        """Node (``joints``) order → model order."""
        out = np.empty(len(self.perm))
        out[self.perm] = x
        return out

    # ------------------------------------------------------------------ stepping
    def _read(self) -> None:
        js = self.servos.joint_state()  # fresh arrays
        self.state = (
            tuple(js) if self._identity else (js.position[self.perm], js.velocity[self.perm], js.effort[self.perm])
        )

    def step(self) -> bool:
        node = self.node
        if self.servos is None:
            return False
        if node.stepper_error:
            return False
        try:
            self.servos.command(self.goal if self._identity else self._model(self.goal))  # command() copies
            self.servos.step(node.substeps)
            self._read()
        except PhysicsDiverged as e:
            node.stepper_error = str(e)
            self.state = (np.full(node.n, np.nan),) * 3
            node.get_logger().error(f"{e}: outputs stopped; call {node.names['reset']} to bring the robot back")
            node._publish_diagnostics()
            return False
        return True

    def publish_outputs(self, stamp) -> None:
        self.outputs.publish(stamp)

    def _set_obstacle(self, height: float) -> None:
        from servo_ff.dynamics.mujoco_model import place_board, place_obstacle

        s = self.servos
        if s is not None and self._obstacle_geom >= 0 and s.sim.feet:
            if self.node.table["obstacle_shape"] == "board":
                place_board(s.model, s.data, self._obstacle_geom, list(s.sim.feet), height)
            else:
                place_obstacle(s.model, s.data, self._obstacle_geom, list(s.sim.feet), self._obstacle_foot, height)

    # ------------------------------------------------------------------ parameters
    def validate(self, values: dict[str, Any]) -> str | None:
        reason = validate_interface({**values, "joints": self._joints_of(values)})
        if reason:
            return reason
        n = len(self._joints_of(values))
        ratio = 1.0 / (values["rate_hz"] * values["physics_dt"])
        if abs(ratio - round(ratio)) > 1e-6:
            return (
                f"rate_hz {values['rate_hz']:g} Hz: the control period must be a whole number of physics steps "
                f"(physics_dt {values['physics_dt']:g} s)"
            )
        # initial_position (read-only) against the limits at start-up only: a run-time narrowing past it is taken as
        # on the hardware node, and holds a reset's goal at the nearest limit (hold_start_pose); before: refused
        if getattr(self.node, "table", None) is None:
            theta0 = per_joint(values["initial_position"], n, "initial_position")
            lo = per_joint(values["position_min"], n, "position_min")
            hi = per_joint(values["position_max"], n, "position_max")
            if ((theta0 < lo) | (theta0 > hi)).any():
                return f"initial_position {theta0.tolist()} is outside the joint limits"
        if values["obstacle_height"] > 0 and getattr(self, "servos", None) is not None and not self.servos.sim.floating:
            return "obstacle_height needs a floating-base robot"
        return None

    def apply(self, changed: set[str]) -> None:
        if "obstacle_height" in changed and self.servos is not None:
            self._set_obstacle(float(self.node.table["obstacle_height"]))

    # ------------------------------------------------------------------ hooks
    def autostart_retry_period(self) -> float:
        return 3600.0 if self.model_error else 1.0  # a bad file does not fix itself: one line, not one a second

    def configure(self) -> tuple[bool, str]:
        if self.model_error:
            return False, self.model_error
        return True, f"MuJoCo model of {self.source_name}: {self.node.n} servo(s) {self.node.joints}, torque off"

    def cleanup(self) -> None:
        if self.servos is None:
            return
        self.servos.reset()
        self.servos.set_enable(0.0)
        self.node.stepper_error = ""
        held = self.node.hold_start_pose(self.servos.goal[self.perm])
        if held:
            self.node.get_logger().warning(f"cleanup: the robot is back in its start pose{held}")
        self._read()

    def reset(self, was: str) -> tuple[bool, str]:
        if self.servos is None:
            return False, f"no model: {self.model_error}"
        self.servos.reset()
        self.servos.set_enable(1.0 if self.node.active else 0.0)
        held = self.node.hold_start_pose(self.servos.goal[self.perm])
        self._read()
        return True, (
            "simulation reset: the robot is back in its start pose (initial_position), velocity 0, "
            "goal = start pose, torque "
            + ("on" if self.node.active else "off (node not active)")
            + (f" (physics had diverged: {was})" if was else "")
            + held
        )

    def limit_rows(self) -> tuple[np.ndarray | None, np.ndarray]:
        return (None, self.perm) if self.servos is None else (self.servos.p, self.perm)

    def read(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.state

    def write_goal(self, goal: np.ndarray) -> None:
        self.goal = np.asarray(goal, dtype=np.float64)

    def write_kp(self, kp: np.ndarray) -> None:
        if self.servos is not None:
            self.servos.set_kp(self._model(kp))

    def torque(self, enable: bool) -> tuple[bool, str]:
        if self.servos is None:
            return False, f"no model: {self.model_error}"
        if enable and not self.torque_is_on():  # from where the joints are (no target, goal in flight left behind)
            self.servos.hold_present()
        self.servos.set_enable(1.0 if enable else 0.0)
        return True, f"torque {'enabled' if enable else 'disabled'} on {self.node.n} simulated joint(s)"

    def torque_is_on(self) -> bool:
        return self.servos is not None and bool((self.servos.enable > 0).all())

    def reboot(self) -> tuple[bool, str]:
        if self.servos is None:
            return False, f"no model: {self.model_error}"
        self.servos.set_enable(0.0)
        if np.isfinite(self.state[0]).all():
            self.goal = self.state[0].copy()
        return True, "simulated servos rebooted: torque off, goal = present position"

    def supply_voltage(self) -> float:
        from servo_ff.models import slots

        return float(np.mean(self.servos.p[:, slots.VIN])) if self.servos is not None else math.nan

    def diagnostics(self) -> list[DiagnosticStatus]:
        node = self.node
        if self.servos is None:
            return [
                DiagnosticStatus(
                    level=DiagnosticStatus.ERROR,
                    name=diag_name(node, "model"),
                    hardware_id=hardware_id(node, "mujoco"),
                    message=self.model_error,
                )
            ]
        s = self.servos
        level, state = sim_state(node, bool(s.enable.any()))  # as the hardware's
        if node.stepper_error:
            level = DiagnosticStatus.ERROR
            state = f"physics diverged ({node.stepper_error}); outputs stopped, call {node.names['reset']}"
        out = [
            DiagnosticStatus(
                level=level,
                name=diag_name(node, "physics"),
                hardware_id=hardware_id(node, "mujoco"),
                message=state,
                values=[
                    *node.clock_values(),
                    KeyValue(key="model", value=self.source_name),
                    KeyValue(key="energy_J", value=f"{s.energy.sum():.3f}"),
                ],
            )
        ]
        pos, vel, eff = self.state
        for i, name in enumerate(node.joints):
            params = s.params[name]
            out.append(
                DiagnosticStatus(
                    level=level,
                    name=diag_name(node, name),
                    hardware_id=hardware_id(node, f"mujoco/{name}"),
                    message=state,
                    values=[
                        KeyValue(key="servo", value=f"{params.actuator}/{params.model}"),
                        KeyValue(key="position_rad", value=f"{pos[i]:.5f}"),
                        KeyValue(key="goal_rad", value=f"{self.goal[i]:.5f}"),
                        KeyValue(key="velocity_rad_s", value=f"{vel[i]:.5f}"),
                        KeyValue(key="effort_Nm", value=f"{eff[i]:.5f}"),
                        KeyValue(key="kp", value=f"{node.kp[i]:g}"),
                        KeyValue(key="energy_J", value=f"{s.energy[self.perm[i]]:.3f}"),
                        KeyValue(key="supply_V", value=f"{self.supply_voltage():g}"),
                    ],
                )
            )
        return out


__all__ = ["TOPIC_FOOT_FORCES", "TOPIC_IMU", "MujocoBackend", "mujoco_specs"]
