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
* ``odom`` (nav_msgs/Odometry, floating base: ``odom_frame`` → root link, :mod:`.odometry_pub`),

each control period. ``lockstep: true`` (with ``publish_clock``) steps one period per goal message received
(``<prefix>/commands`` or ``<prefix>/joint_command``) — a controller answering each ``joint_states`` closes the
loop on simulated time, as fast as both run — and after ``lockstep_timeout`` wall seconds without one.

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
from sensor_msgs.msg import Imu
from std_msgs.msg import Float64, Float64MultiArray
from std_srvs.srv import Trigger

from servo_ff.dynamics.mujoco_sensors import support_coefficient
from servo_ff.dynamics.mujoco_servos import PhysicsDiverged  # the per-period step catches it

from .cdr_template import CdrTemplate
from .common import ParameterTable, ParamSpec, diag_name, hardware_id, per_joint
from .mujoco_params import boot_values, mujoco_specs, servos_from_boot
from .odometry_pub import OdometryPublisher
from .servo_base import ServoInterfaceNode, servo_interface_specs, validate_interface
from .sim_stepper import SimNode

TOPIC_IMU = "imu/data"
TOPIC_FOOT_FORCES = "foot_forces"


class MujocoSimNode(SimNode):
    """``servo_sim_node`` with ``backend: mujoco``. Reuses the stepper node's time handling (``/clock``,
    ``real_time_factor``, following the node clock); everything else is the MuJoCo servo layer."""

    status_name = "mujoco"

    def __init__(self, name: str = "servo_sim", **kwargs: Any):  # noqa: C901 (one table of parameters)
        ServoInterfaceNode.__init__(self, name, **kwargs)
        self.model_error = ""
        self.servos = None
        self.options = None
        self.source_name = ""
        self._obstacle_geom = -1
        self.joint_order: list[str] = []
        try:
            self._build(self._boot())
        except (ValueError, OSError) as e:  # SimModelError / ServoMapError: one line naming the joint or link
            self.model_error = " ".join(str(e).split())
        model_joints = self.joint_order or ["joint_1"]
        specs = servo_interface_specs(default_joints=model_joints, kp=32.0) + mujoco_specs()
        for i, s in enumerate(specs):
            if s.name == "kp" and self.servos is not None:
                from servo_ff.models.params import P_KP

                specs[i] = ParamSpec(
                    s.name, self.servos.p[:, P_KP].tolist(), s.description, s.unit, lo=s.lo, hi=s.hi, per_joint=True
                )
        self._model_joints = model_joints
        table = ParameterTable(
            self, specs, validate=self._validate, apply=self._apply, n_joints=lambda v: len(self._joints_of(v))
        )
        v = table.values
        joints = self._joints_of(v)
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
        self._setup_interface(table)
        self.goal = np.zeros(self.n)
        self.state = (np.full(self.n, np.nan),) * 3
        if self.servos is not None:
            self._place(per_joint(v["initial_position"], self.n, "initial_position"))
            self.servos.set_kp(self._model(self.kp))
            self.servos.set_enable(0.0)  # torque comes on with the lifecycle transition activate
        self.substeps = self._substeps(v)
        self.stepper_error = ""
        self.create_service(Trigger, self.names["reset"], self._on_reset)
        # simulated time stops with the physics: the ERROR diagnostics keep coming on the wall clock
        self.create_timer(v["diagnostics_period"], self._diagnostics_while_stopped, clock=self._steady)
        self.pub_imu = self.create_publisher(Imu, TOPIC_IMU, 100)
        self.pub_feet = self.create_publisher(Float64MultiArray, TOPIC_FOOT_FORCES, 100)
        self.pub_support = self.create_publisher(Float64, v["support_topic"], 100)
        self._imu = Imu()
        self._imu.orientation_covariance[0] = -1.0 if self.servos is None else 0.0
        o = self.options
        self._imu.angular_velocity_covariance[0::4] = [o.gyro_noise**2] * 3 if o else [0.0] * 3
        self._imu.linear_acceleration_covariance[0::4] = [o.accel_noise**2] * 3 if o else [0.0] * 3
        if self.servos is not None:
            self._imu.header.frame_id = self.servos.model.body(self.servos.sim.root_body).name
        # serialized once, written in place every period (cdr_template): stamp and readings only
        vec = ("x", "y", "z")
        self._imu_cdr = CdrTemplate(
            self._imu,
            [
                tuple(f"orientation.{c}" for c in (*vec, "w")),
                tuple(f"angular_velocity.{c}" for c in vec),
                tuple(f"linear_acceleration.{c}" for c in vec),
            ],
        )
        n_feet = len(self.servos.sim.feet) if self.servos is not None else 0
        self._feet_cdr = CdrTemplate(Float64MultiArray(data=[0.0] * n_feet), ["data"], stamp=None)
        self._support_cdr = CdrTemplate(Float64(), [("data",)], stamp=None)
        floating = self.servos is not None and self.servos.sim.floating
        self.odom = OdometryPublisher(self, self.servos, v["odom_frame"]) if floating else None
        self._init_clock(v)
        if not self.model_error:  # a model error is one line at configure
            sm = self.servos.sim
            self.get_logger().info(
                f"MuJoCo: {self.source_name}, {'floating' if sm.floating else 'fixed'} base, {self.n} servo(s), "
                f"{v['rate_hz']:g} Hz control, {self.servos.model.opt.timestep * 1e3:g} ms physics, "
                f"{len(sm.feet)} feet; " + self.clock_text()
            )

    # ------------------------------------------------------------------ model
    def _boot(self) -> dict[str, Any]:
        return boot_values(self)

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
        self.gate.goal = self.goal.copy()
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

    def _step(self) -> bool:
        if self.servos is None:
            return False
        if self.stepper_error:
            return False
        try:
            self.servos.command(self.goal if self._identity else self._model(self.goal))  # command() copies
            self.servos.step(self.substeps)
            self._read()
        except PhysicsDiverged as e:
            self.stepper_error = str(e)
            self.state = (np.full(self.n, np.nan),) * 3
            self.get_logger().error(f"{e}: outputs stopped; call {self.names['reset']} to bring the robot back")
            self._publish_diagnostics()
            return False
        return True

    def publish_state(self, stamp) -> bool:
        if self.stepper_error or not super().publish_state(stamp):
            return False
        s = self.servos
        imu = s.imu()
        q, w, a = imu.orientation, imu.angular_velocity, imu.linear_acceleration
        if not (np.isfinite(q).all() and np.isfinite(w).all() and np.isfinite(a).all()):
            return True
        msg = self._imu_cdr
        msg.set_stamp(stamp.sec, stamp.nanosec)
        msg.block(0)[:], msg.block(1)[:], msg.block(2)[:] = q, w, a
        self.pub_imu.publish(msg.data())
        if self.odom is not None:
            self.odom.publish(stamp)
        if s.sim.feet:
            f = s.foot_forces()
            self._feet_cdr.block(0)[:] = f
            self.pub_feet.publish(self._feet_cdr.data())
            if len(f) == 2:
                self._support_cdr.block(0)[0] = support_coefficient(f)
                self.pub_support.publish(self._support_cdr.data())
        return True

    def _diagnostics_while_stopped(self) -> None:
        if self.stepper_error:
            self._publish_diagnostics()

    def _set_obstacle(self, height: float) -> None:
        from servo_ff.dynamics.mujoco_model import place_obstacle

        s = self.servos
        if s is not None and self._obstacle_geom >= 0 and s.sim.feet:
            place_obstacle(s.model, s.data, self._obstacle_geom, list(s.sim.feet), self._obstacle_foot, height)

    # ------------------------------------------------------------------ parameters
    def _validate(self, values: dict[str, Any]) -> str | None:
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
        theta0 = per_joint(values["initial_position"], n, "initial_position")
        lo = per_joint(values["position_min"], n, "position_min")
        hi = per_joint(values["position_max"], n, "position_max")
        if ((theta0 < lo) | (theta0 > hi)).any():
            return f"initial_position {theta0.tolist()} is outside the joint limits"
        if values["obstacle_height"] > 0 and getattr(self, "servos", None) is not None and not self.servos.sim.floating:
            return "obstacle_height needs a floating-base robot"
        return None

    def _apply(self, changed: set[str]) -> None:
        self._apply_clock(changed)
        if "obstacle_height" in changed and self.servos is not None:
            self._set_obstacle(float(self.table["obstacle_height"]))
        self._apply_interface(changed)

    # ------------------------------------------------------------------ hooks
    def autostart_retry_period(self) -> float:
        return 3600.0 if self.model_error else 1.0  # a bad file does not fix itself: one line, not one a second

    def hw_configure(self) -> tuple[bool, str]:
        if self.model_error:
            return False, self.model_error
        return True, f"MuJoCo model of {self.source_name}: {self.n} servo(s) {self.joints}, torque off"

    def hw_cleanup(self) -> None:
        if self.servos is None:
            return
        self.servos.reset()
        self.servos.set_enable(0.0)
        self.stepper_error = ""
        self.goal = self.servos.goal[self.perm]
        self.gate.goal = self.goal.copy()
        self._read()

    def _on_reset(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        if self.servos is None:
            response.success, response.message = False, f"no model: {self.model_error}"
            return response
        was = self.stepper_error
        self.servos.reset()
        self.servos.set_enable(1.0 if self.active else 0.0)
        self.stepper_error = ""
        self.traj = self.pending = None
        self.goal = self.servos.goal[self.perm]
        self.gate.goal = self.goal.copy()
        self._t_ns = None
        self._read()
        response.success = True
        response.message = (
            "simulation reset: the robot is back in its start pose (initial_position), velocity 0, "
            "goal = start pose, torque "
            + ("on" if self.active else "off (node not active)")
            + (f" (physics had diverged: {was})" if was else "")
        )
        self.get_logger().warning(response.message)
        return response

    def _limit_rows(self) -> tuple[np.ndarray | None, np.ndarray]:
        return (None, self.perm) if self.servos is None else (self.servos.p, self.perm)

    def hw_read(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.state

    def hw_write_goal(self, goal: np.ndarray) -> None:
        self.goal = np.asarray(goal, dtype=np.float64)

    def hw_write_kp(self, kp: np.ndarray) -> None:
        if self.servos is not None:
            self.servos.set_kp(self._model(kp))

    def hw_torque(self, enable: bool) -> tuple[bool, str]:
        if self.servos is None:
            return False, f"no model: {self.model_error}"
        self.servos.set_enable(1.0 if enable else 0.0)
        return True, f"torque {'enabled' if enable else 'disabled'} on {self.n} simulated joint(s)"

    def hw_reboot(self) -> tuple[bool, str]:
        if self.servos is None:
            return False, f"no model: {self.model_error}"
        self.servos.set_enable(0.0)
        if np.isfinite(self.state[0]).all():
            self.goal = self.state[0].copy()
        return True, "simulated servos rebooted: torque off, goal = present position"

    def hw_supply_voltage(self) -> float:
        from servo_ff.models.params import P_VIN

        return float(np.mean(self.servos.p[:, P_VIN])) if self.servos is not None else math.nan

    def hw_diagnostics(self) -> list[DiagnosticStatus]:
        if self.servos is None:
            return [
                DiagnosticStatus(
                    level=DiagnosticStatus.ERROR,
                    name=diag_name(self, "model"),
                    hardware_id=hardware_id(self, "mujoco"),
                    message=self.model_error,
                )
            ]
        s = self.servos
        bad = bool(self.stepper_error)
        level = DiagnosticStatus.ERROR if bad else DiagnosticStatus.OK
        state = (
            f"physics diverged ({self.stepper_error}); outputs stopped, call {self.names['reset']}"
            if bad
            else "torque on"
            if s.enable.any()
            else "torque off"
        )
        out = [
            DiagnosticStatus(
                level=level,
                name=diag_name(self, "physics"),
                hardware_id=hardware_id(self, "mujoco"),
                message=state,
                values=[
                    *self.clock_values(),
                    KeyValue(key="model", value=self.source_name),
                    KeyValue(key="energy_J", value=f"{s.energy.sum():.3f}"),
                ],
            )
        ]
        pos, vel, eff = self.state
        for i, name in enumerate(self.joints):
            params = s.params[name]
            out.append(
                DiagnosticStatus(
                    level=level,
                    name=diag_name(self, name),
                    hardware_id=hardware_id(self, f"mujoco/{name}"),
                    message=state,
                    values=[
                        KeyValue(key="servo", value=f"{params.actuator}/{params.model}"),
                        KeyValue(key="position_rad", value=f"{pos[i]:.5f}"),
                        KeyValue(key="goal_rad", value=f"{self.goal[i]:.5f}"),
                        KeyValue(key="velocity_rad_s", value=f"{vel[i]:.5f}"),
                        KeyValue(key="effort_Nm", value=f"{eff[i]:.5f}"),
                        KeyValue(key="kp", value=f"{self.kp[i]:g}"),
                        KeyValue(key="energy_J", value=f"{s.energy[self.perm[i]]:.3f}"),
                        KeyValue(key="supply_V", value=f"{self.hw_supply_voltage():g}"),
                    ],
                )
            )
        return out


__all__ = ["MujocoSimNode", "TOPIC_FOOT_FORCES", "TOPIC_IMU", "mujoco_specs"]
