"""``odom`` (nav_msgs/Odometry) of the MuJoCo sim's floating base: the pose of the base link in the ``odom_frame``
(the simulated world) and its twist in the base link's frame (REP-105, nav_msgs convention), exact from the
free joint (:func:`servo_ff.dynamics.mujoco_sensors.free_joint_odometry`), each control period, and the same pose
as the transform ``odom_frame`` → base link on ``/tf``, each while it has a subscriber (nobody listening: nothing
computed). Covariances are zero: it is the simulation's ground truth."""

from __future__ import annotations

from nav_msgs.msg import Odometry

from .cdr_template import CdrTemplate, Listened

TOPIC_ODOM = "odom"
_XYZ = ("x", "y", "z")


class OdometryPublisher:
    """Publishes ``servos.odometry()`` on :data:`TOPIC_ODOM` (serialized once, written in place)."""

    def __init__(self, node, servos, odom_frame: str):
        self.servos = servos
        msg = Odometry()
        msg.header.frame_id = odom_frame
        msg.child_frame_id = servos.model.body(servos.sim.root_body).name
        self.child_frame = msg.child_frame_id
        pose = tuple(f"pose.pose.position.{c}" for c in _XYZ) + tuple(
            f"pose.pose.orientation.{c}" for c in (*_XYZ, "w")
        )
        twist = tuple(f"twist.twist.linear.{c}" for c in _XYZ) + tuple(f"twist.twist.angular.{c}" for c in _XYZ)
        self._cdr = CdrTemplate(msg, [pose, twist])
        self.pub = node.create_publisher(Odometry, TOPIC_ODOM, 100)
        self._listened = Listened(self.pub)
        self.pub_tf = self._tf = self._tf_listened = None
        try:  # odom → base link on /tf as well (as an odometry source does), where tf2_msgs is installed
            from geometry_msgs.msg import TransformStamped
            from tf2_msgs.msg import TFMessage

            from .tf_template import TOPIC_TF, TfTemplate
        except ImportError:
            return
        tf = TransformStamped()
        tf.header.frame_id, tf.child_frame_id = odom_frame, self.child_frame
        self._tf = TfTemplate((0,), TFMessage(transforms=[tf]))
        self.pub_tf = node.create_publisher(TFMessage, TOPIC_TF, 100)
        self._tf_listened = Listened(self.pub_tf)

    def publish(self, stamp) -> None:
        tf = self._tf_listened is not None and self._tf_listened()
        if not tf and not self._listened():
            return  # nobody listens: ≈ 20 µs of the sim period saved (issue 25)
        o = self.servos.odometry()
        cdr = self._cdr
        cdr.set_stamp(stamp.sec, stamp.nanosec)
        cdr.block(0)[:3], cdr.block(0)[3:] = o.position, o.orientation
        cdr.block(1)[:3], cdr.block(1)[3:] = o.linear_velocity, o.angular_velocity
        self.pub.publish(cdr.data())
        if tf:
            self.pub_tf.publish(self._tf.data(cdr.block(0)[None, :], stamp))
