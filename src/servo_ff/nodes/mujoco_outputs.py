"""The topics of ``servo_sim_node``'s MuJoCo backend beyond the servo interface, each control period:
``imu/data`` (sensor_msgs/Imu of the root body, the options' noise as covariance; stamped with the start of the
last physics step, the state it reads), ``foot_forces`` (std_msgs/Float64MultiArray, N per foot) and
``support_coefficient`` (std_msgs/Float64, two feet) — the contact forces of that same step, unstamped — and
``odom`` (floating base, :mod:`servo_ff.ros.odometry_pub`; the state after the step, as ``/joint_states``).
Serialized once and written in place (:mod:`servo_ff.ros.cdr_template`): stamp and readings only. The contact
forces are read only while ``foot_forces`` or ``support_coefficient`` has a subscriber (asked of rclpy at most
every 5 ms, as ``odom``): the missions do not listen to them."""

from __future__ import annotations

from typing import Any

from sensor_msgs.msg import Imu
from std_msgs.msg import Float64, Float64MultiArray

from servo_ff.dynamics.mujoco_sensors import support_coefficient
from servo_ff.ros.cdr_template import CdrTemplate, Listened, all_finite
from servo_ff.ros.odometry_pub import OdometryPublisher

TOPIC_IMU = "imu/data"
TOPIC_FOOT_FORCES = "foot_forces"


class MujocoOutputs:
    """Publishers and message templates of the MuJoCo backend's own topics (``servos`` None: no model, nothing
    published but the publishers exist)."""

    def __init__(self, node: Any, servos: Any, options: Any, v: dict[str, Any]):
        self.servos = servos
        self.pub_imu = node.create_publisher(Imu, TOPIC_IMU, 100)
        self.pub_feet = node.create_publisher(Float64MultiArray, TOPIC_FOOT_FORCES, 100)
        self.pub_support = node.create_publisher(Float64, v["support_topic"], 100)
        imu = Imu()
        imu.orientation_covariance[0] = -1.0 if servos is None else 0.0
        o = options
        imu.angular_velocity_covariance[0::4] = [o.gyro_noise**2] * 3 if o else [0.0] * 3
        imu.linear_acceleration_covariance[0::4] = [o.accel_noise**2] * 3 if o else [0.0] * 3
        if servos is not None:
            imu.header.frame_id = servos.model.body(servos.sim.root_body).name
        vec = ("x", "y", "z")
        self._imu_cdr = CdrTemplate(
            imu,
            [
                tuple(f"orientation.{c}" for c in (*vec, "w")),
                tuple(f"angular_velocity.{c}" for c in vec),
                tuple(f"linear_acceleration.{c}" for c in vec),
            ],
        )
        n_feet = len(servos.sim.feet) if servos is not None else 0
        self._feet_cdr = CdrTemplate(Float64MultiArray(data=[0.0] * n_feet), ["data"], stamp=None)
        self._support_cdr = CdrTemplate(Float64(), [("data",)], stamp=None)
        self._feet_listened, self._support_listened = Listened(self.pub_feet), Listened(self.pub_support)
        self._step_ns = round(servos.model.opt.timestep * 1e9) if servos is not None else 0  # [ns] one physics step
        self.imu_published = 0  # imu/data messages sent: a new count after a period, a new message (imu_bytes)
        floating = servos is not None and servos.sim.floating
        self.odom = OdometryPublisher(node, servos, v["odom_frame"]) if floating else None

    def imu_bytes(self) -> bytes:
        """The last ``imu/data`` message published, serialized (for an in-process reader)."""
        return self._imu_cdr.data()

    def publish(self, stamp: Any) -> None:
        """The readings after a step that ended at ``stamp``; a non-finite IMU reading publishes none of them.

        ``imu/data`` is stamped one physics step earlier: MuJoCo's ``mj_step`` computes the kinematics, velocities
        and accelerations the IMU reads (``xquat``, ``cvel``, ``qacc``) from the state at the start of the step,
        then integrates (the odometry and ``/joint_states`` read the state after it)."""
        s = self.servos
        imu = s.imu()
        q, w, a = imu.orientation, imu.angular_velocity, imu.linear_acceleration
        if not all_finite(q, w, a):
            return
        msg = self._imu_cdr
        ns = stamp.sec * 1_000_000_000 + stamp.nanosec - self._step_ns
        msg.set_stamp(*divmod(ns, 1_000_000_000))
        msg.block(0)[:], msg.block(1)[:], msg.block(2)[:] = q, w, a
        msg.publish(self.pub_imu)
        self.imu_published += 1
        if self.odom is not None:
            self.odom.publish(stamp)
        if not s.sim.feet:
            return
        feet, support = self._feet_listened(), self._support_listened()
        if not (feet or support):
            return  # nobody listens: the contacts are not read (≈ 15 µs of a sim period)
        f = s.foot_forces()
        if feet:
            self._feet_cdr.block(0)[:] = f
            self._feet_cdr.publish(self.pub_feet)
        if support and len(f) == 2:
            self._support_cdr.block(0)[0] = support_coefficient(f)
            self._support_cdr.publish(self.pub_support)
