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
import time
from typing import Any

import numpy as np
from diagnostic_msgs.msg import DiagnosticStatus, KeyValue
from rclpy.exceptions import ParameterUninitializedException
from sensor_msgs.msg import Imu
from std_msgs.msg import Float64, Float64MultiArray
from std_srvs.srv import Trigger

from servo_ff.dynamics.mujoco_sensors import support_coefficient
from servo_ff.io.paths import resolve_path

from .common import ParameterTable, ParamSpec, per_joint
from .servo_base import ServoInterfaceNode, servo_interface_specs, validate_interface
from .sim_node import SimNode, sim_time_specs

TOPIC_IMU = "imu/data"
TOPIC_FOOT_FORCES = "foot_forces"


def mujoco_specs() -> list[ParamSpec]:
    """Parameters of the MuJoCo backend besides the servo interface (read-only ones fix the model)."""
    return [
        ParamSpec("backend", "mujoco", "physics backend of servo_sim_node", read_only=True, choices=("mujoco",)),
        ParamSpec("robot_description", "", "URDF XML (takes precedence over urdf_path / mjcf_path)", read_only=True),
        ParamSpec("urdf_path", "", "URDF file of the robot", read_only=True),
        ParamSpec("mjcf_path", "", "MJCF file of the robot (its own base, ground and sensors)", read_only=True),
        ParamSpec(
            "servo_config",
            "",
            "servo YAML: servo type, friction model (and kp) per joint (servo_ff.dynamics.servo_map)",
            read_only=True,
        ),
        ParamSpec(
            "floating_base",
            False,
            "URDF: free joint on the root link, ground plane, collision geometry "
            "(legged robots); false: root welded to the world (arms)",
            read_only=True,
        ),
        ParamSpec(
            "feet",
            [""],
            "foot links (floating base; empty: the servo YAML's feet:, else links named *foot*; first = left)",
            read_only=True,
        ),
        ParamSpec(
            "initial_position",
            [0.0],
            "joint positions at start-up and reset (floating base: the robot "
            "is placed upright on the ground in this pose)",
            "rad",
            lo=-1e3,
            hi=1e3,
            per_joint=True,
            read_only=True,
        ),
        ParamSpec(
            "physics_dt",
            0.001,
            "MuJoCo time step (each control period is split into equal steps <= this)",
            "s",
            lo=1e-5,
            hi=0.1,
            read_only=True,
        ),
        ParamSpec(
            "counts_per_rev",
            0,
            "encoder quantisation, counts per revolution (0: off; Dynamixel: 4096)",
            lo=0,
            hi=1 << 24,
            read_only=True,
        ),
        ParamSpec(
            "latency",
            0,
            "control periods between a goal and the firmware acting on it (bus cycle)",
            lo=0,
            hi=1000,
            read_only=True,
        ),
        ParamSpec("position_noise", 0.0, "std of the noise on positions read", "rad", lo=0.0, hi=1.0, read_only=True),
        ParamSpec(
            "velocity_noise", 0.0, "std of the noise on velocities read", "rad/s", lo=0.0, hi=100.0, read_only=True
        ),
        ParamSpec("gyro_noise", 0.0, "std of the gyro noise", "rad/s", lo=0.0, hi=100.0, read_only=True),
        ParamSpec("accel_noise", 0.0, "std of the accelerometer noise", "m/s²", lo=0.0, hi=1000.0, read_only=True),
        ParamSpec("noise_seed", 0, "seed of the noise", lo=0, hi=2**31 - 1, read_only=True),
        *sim_time_specs(),
        ParamSpec(
            "lockstep",
            False,
            "with publish_clock: one control period per goal message received (and after lockstep_timeout without one)",
            read_only=True,
        ),
        ParamSpec(
            "lockstep_timeout",
            0.02,
            "lockstep: wall time after which the simulation steps without a goal",
            "s",
            lo=1e-4,
            hi=10.0,
        ),
        ParamSpec(
            "realtime",
            True,
            "follow the node clock: advance the whole periods elapsed (late ticks catch up, "
            "at most max_catch_up); false: exactly 1/rate_hz per tick",
        ),
        ParamSpec("max_catch_up", 0.05, "largest time advanced in one tick", "s", lo=1e-4, hi=10.0),
        ParamSpec(
            "support_topic",
            "support_coefficient",
            "topic of the measured support coefficient (Float64)",
            read_only=True,
        ),
        ParamSpec(
            "obstacle_height",
            0.0,
            "a box this high under obstacle_foot, placed when set while running "
            "(0: none); for Schwarz & Behnke's obstacle experiment",
            "m",
            lo=0.0,
            hi=0.5,
        ),
        ParamSpec("obstacle_foot", "", "foot link the obstacle goes under (empty: the second foot)", read_only=True),
    ]


def _boot_value(node, name: str, default: Any) -> Any:
    """A parameter's override before the table is declared (the joint list depends on the model)."""
    node.declare_parameter(name, default)
    try:
        return node.get_parameter(name).value
    except ParameterUninitializedException:
        return default
    finally:
        node.undeclare_parameter(name)


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
        self.period_ns = int(round(1e9 / v["rate_hz"]))
        self._t_ns = None
        self.stepper_error = ""
        self.lockstep = bool(v["lockstep"]) and bool(v["publish_clock"])
        self._last_step_wall = 0.0
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
        self.owns_clock = bool(v["publish_clock"])
        self.sim_time_ns = 0
        if self.owns_clock:
            self._own_clock()
        elif self.get_parameter("use_sim_time").value:
            self.create_timer(3.0, self._check_clock, clock=self._steady)
        if not self.model_error:  # a model error is one line at configure
            sm = self.servos.sim
            self.get_logger().info(
                f"MuJoCo: {self.source_name}, {'floating' if sm.floating else 'fixed'} base, {self.n} servo(s), "
                f"{v['rate_hz']:g} Hz control, {self.servos.model.opt.timestep * 1e3:g} ms physics, "
                f"{len(sm.feet)} feet; "
                + (
                    f"owning /clock at real_time_factor {v['real_time_factor']:g}"
                    + (" (lockstep)" if self.lockstep else "")
                    if self.owns_clock
                    else "following the node clock"
                )
            )

    # ------------------------------------------------------------------ model
    def _boot(self) -> dict[str, Any]:
        keys = {
            "robot_description": "",
            "urdf_path": "",
            "mjcf_path": "",
            "servo_config": "",
            "floating_base": False,
            "feet": [""],
            "physics_dt": 0.001,
            "counts_per_rev": 0,
            "latency": 0,
            "position_noise": 0.0,
            "velocity_noise": 0.0,
            "gyro_noise": 0.0,
            "accel_noise": 0.0,
            "noise_seed": 0,
            "obstacle_foot": "",
        }
        return {k: _boot_value(self, k, d) for k, d in keys.items()}

    def _build(self, b: dict[str, Any]) -> None:
        from servo_ff.dynamics.mujoco_servos import MujocoServos, ServoOptions

        if b["robot_description"].strip():
            source, self.source_name = b["robot_description"], "robot_description"
        elif b["urdf_path"] or b["mjcf_path"]:
            if b["urdf_path"] and b["mjcf_path"]:
                raise ValueError("set urdf_path or mjcf_path, not both")
            raw = b["urdf_path"] or b["mjcf_path"]
            path = resolve_path(raw)
            if not path.is_file():
                raise FileNotFoundError(f"{'urdf_path' if b['urdf_path'] else 'mjcf_path'} {raw!r}: file not found")
            source, self.source_name = path, path.name
        else:
            raise ValueError("backend mujoco needs robot_description, urdf_path or mjcf_path")
        if not b["servo_config"]:
            raise ValueError("backend mujoco needs servo_config (a servo YAML: servo type per joint)")
        cfg = resolve_path(b["servo_config"])
        if not cfg.is_file():
            raise FileNotFoundError(f"servo_config {b['servo_config']!r}: file not found")
        self.options = ServoOptions(
            counts_per_rev=int(b["counts_per_rev"]) or None,
            latency=int(b["latency"]),
            position_noise=b["position_noise"],
            velocity_noise=b["velocity_noise"],
            gyro_noise=b["gyro_noise"],
            accel_noise=b["accel_noise"],
            seed=b["noise_seed"],
        )
        mjcf = bool(b["mjcf_path"]) and not b["robot_description"].strip()
        base = None if mjcf else ("floating" if b["floating_base"] else "fixed")
        feet = [f for f in b["feet"] if f] or None
        self.servos = MujocoServos.from_description(
            source,
            cfg,
            base=base,
            feet=feet,
            dt=float(b["physics_dt"]),
            options=self.options,
            obstacle_slot=base == "floating",
        )
        self.joint_order = list(self.servos.joint_names)
        self._obstacle_foot = b["obstacle_foot"]
        m = self.servos.model
        self._obstacle_geom = int(m.geom("obstacle").id) if base == "floating" else -1

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
        js = self.servos.joint_state()
        self.state = (js.position[self.perm], js.velocity[self.perm], js.effort[self.perm])

    def _step(self) -> bool:
        from servo_ff.dynamics.mujoco_servos import PhysicsDiverged

        if self.servos is None:
            return False
        if self.stepper_error:
            return False
        try:
            self.servos.command(self._model(self.goal))
            self.servos.step(self.substeps)
            self._read()
        except PhysicsDiverged as e:
            self.stepper_error = str(e)
            self.state = (np.full(self.n, np.nan),) * 3
            self.get_logger().error(f"{e}: outputs stopped; call {self.names['reset']} to bring the robot back")
            self._publish_diagnostics()
            return False
        self._last_step_wall = time.monotonic()
        return True

    def publish_state(self, stamp) -> bool:
        if self.stepper_error or not super().publish_state(stamp):
            return False
        s = self.servos
        imu = s.imu()
        msg = self._imu
        msg.header.stamp = stamp
        msg.header.frame_id = s.model.body(s.sim.root_body).name
        q, w, a = imu.orientation, imu.angular_velocity, imu.linear_acceleration
        if not (np.isfinite(q).all() and np.isfinite(w).all() and np.isfinite(a).all()):
            return True
        msg.orientation.x, msg.orientation.y, msg.orientation.z, msg.orientation.w = map(float, q)
        msg.angular_velocity.x, msg.angular_velocity.y, msg.angular_velocity.z = map(float, w)
        msg.linear_acceleration.x, msg.linear_acceleration.y, msg.linear_acceleration.z = map(float, a)
        self.pub_imu.publish(msg)
        if s.sim.feet:
            f = s.foot_forces()
            self.pub_feet.publish(Float64MultiArray(data=f.tolist()))
            if len(f) == 2:
                self.pub_support.publish(Float64(data=support_coefficient(f)))
        return True

    def _start_loop(self) -> None:
        if not self.owns_clock:
            return super()._start_loop()
        self._stop_loop()
        if not self.lockstep:  # paced on the wall clock: each callback catches up to real_time_factor × wall time
            rtf = float(self.table["real_time_factor"])
            self._pace = (time.monotonic(), self.sim_time_ns)
            self.timer = self.create_timer(
                min(self.period / rtf, 0.002) if rtf > 0 else 0.0, self._tick_paced, clock=self._steady
            )
            return
        self._last_step_wall = time.monotonic()
        timeout = float(self.table["lockstep_timeout"])
        self.timer = self.create_timer(timeout / 2, self._lockstep_timer, clock=self._steady)

    def _tick_paced(self) -> None:
        """Owned clock: step whole periods until the simulated time reaches real_time_factor × the wall time
        since the start (at most max_catch_up per call; a simulation slower than that re-anchors, i.e. runs
        slower than asked); as fast as possible (0): periods for about 2 ms of wall time, then the executor
        serves the subscriptions."""
        rtf = float(self.table["real_time_factor"])
        now = time.monotonic()
        if rtf <= 0:
            while time.monotonic() - now < 0.002 and self.active:
                before = self.sim_time_ns
                self._tick_owned()
                if self.sim_time_ns == before:
                    return
            return
        wall0, sim0 = self._pace
        due = (sim0 + int(rtf * (now - wall0) * 1e9) - self.sim_time_ns) // self.period_ns
        cap = max(1, int(self.table["max_catch_up"] / self.period))
        if due > cap:
            self._pace = (now - cap * self.period / rtf, self.sim_time_ns)  # re-anchored: lost time not made up
            due = cap
        for _ in range(due):
            before = self.sim_time_ns
            self._tick_owned()
            if self.sim_time_ns == before:
                return

    def _diagnostics_while_stopped(self) -> None:
        if self.stepper_error:
            self._publish_diagnostics()

    def _lockstep_timer(self) -> None:
        if time.monotonic() - self._last_step_wall >= self.table["lockstep_timeout"]:
            self._last_step_wall = time.monotonic()
            self._tick_owned()

    def _on_commands(self, msg) -> None:
        super()._on_commands(msg)
        if self.lockstep and self.active:
            self._tick_owned()

    def _on_joint_command(self, msg) -> None:
        super()._on_joint_command(msg)
        if self.lockstep and self.active:
            self._tick_owned()

    def _set_obstacle(self, height: float) -> None:
        """A box ``height`` high under the obstacle foot's present footprint (its top at ``height``): the foot's
        collision box in x, in y 5 mm narrower on the side of the other foot (the feet may stand edge to edge)."""
        import mujoco

        s = self.servos
        if s is None or self._obstacle_geom < 0 or not s.sim.feet:
            return
        m, d = s.model, s.data
        feet = list(s.sim.feet)
        foot = int(m.body(self._obstacle_foot).id) if self._obstacle_foot else feet[1 if len(feet) > 1 else 0]
        g = self._obstacle_geom
        if height <= 0:
            m.geom_pos[g] = [0.0, 0.0, -10.0]
        else:
            fg = next(i for i in range(m.ngeom) if m.geom_bodyid[i] == foot and m.geom_contype[i])
            x, y = d.geom_xpos[fg][:2]
            hx, hy = m.geom_size[fg][:2] if m.geom_type[fg] == mujoco.mjtGeom.mjGEOM_BOX else m.geom_aabb[fg][3:5]
            other = [f for f in feet if f != foot]
            out = float(np.sign(y - d.xpos[other[0]][1])) if other else 0.0
            size = [hx, hy - 0.0025 * abs(out), height / 2]
            m.geom_size[g] = size
            m.geom_aabb[g] = [0.0, 0.0, 0.0, *size]
            m.geom_rbound[g] = float(np.linalg.norm(size))
            m.geom_pos[g] = [x, y + 0.0025 * out, height / 2]
        mujoco.mj_forward(m, d)

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
        if "real_time_factor" in changed and self.active and not self.lockstep:
            self._start_loop()
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
                    name=f"{self.get_name()}: model",
                    hardware_id="mujoco",
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
                name=f"{self.get_name()}: physics",
                hardware_id="mujoco",
                message=state,
                values=[
                    KeyValue(key="sim_time_s", value=f"{self.now_s():.3f}"),
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
                    name=f"{self.get_name()}: {name}",
                    hardware_id=f"mujoco/{name}",
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
    return MujocoSimNode(**kwargs) if backend == "mujoco" else SimNode(**kwargs)


__all__ = ["MujocoSimNode", "TOPIC_FOOT_FORCES", "TOPIC_IMU", "mujoco_specs", "sim_node_factory"]
