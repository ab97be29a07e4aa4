"""The trunk orientation (sensor_msgs/Imu on ``imu/data``) a feed-forward node hands to
:meth:`FeedForwardController.tick`, the counterpart of :mod:`servo_ff.ros.support_input`.

Each message is taken serialized (orientation and its covariance's element 0 read in place,
:func:`servo_ff.ros.cdr_template.cdr_imu`; other encodings through rclpy) and checked: an orientation the IMU declares
absent (REP-145, :mod:`servo_ff.dynamics.imu_reading`) or one the gravity direction cannot come from is refused, and
the last good one is held. A taken orientation is pending for the next tick (which consumes it; the controller holds
the last good gravity). One older than the node's ``imu_timeout`` (by its header stamp, or its arrival) stays in use
and is reported: a line when it goes stale and when orientations come again, and its age in the node's diagnostics
(:class:`servo_ff.ros.input_age.InputAge`)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from sensor_msgs.msg import Imu

from servo_ff.dynamics.imu_reading import declared_absent

from .cdr_template import cdr_imu
from .input_age import InputAge
from .joint_command_cdr import deserialized


class ImuInput:
    """Orientations from ``topic``; ``check(quat, g)`` raises ValueError (or FloatingPointError) for one the
    controller cannot take (:func:`servo_ff.dynamics.inverse_dynamics.gravity_from_imu`)."""

    def __init__(self, topic: str, check: Callable, info: Callable[[str], object], warning: Callable[[str], object]):
        self.topic, self._check = topic, check
        self.pending: np.ndarray | None = None  # (x, y, z, w) for the next tick
        held = "the feed-forward holds the last one"
        self.age = InputAge(topic, "orientation", "orientations", "imu_timeout", held, info, warning)

    def take(self, data: bytes, now: float, timeout: float) -> str | None:
        """One serialized Imu arrived at ``now`` [s]: its orientation pending for the next tick (None), or the refusal
        (the last good one held); ``timeout``: ``imu_timeout`` [s] (the bound of a header stamp's lag)."""
        read = cdr_imu(data)  # (stamp, orientation, its covariance[0]) in place, no message built
        if read is None:  # an encoding other than little-endian CDR: rclpy's message
            try:
                msg = deserialized(data, Imu)
            except ValueError as e:
                return f"{self.topic}: {e}; ignored"
            o, st = msg.orientation, msg.header.stamp
            read = (st.sec + st.nanosec * 1e-9, (o.x, o.y, o.z, o.w), msg.orientation_covariance[0])
        quat = np.array(read[1])
        why = declared_absent("orientation", read[2])
        if why is None:
            try:
                self._check(quat, 9.80665)
            except (ValueError, FloatingPointError) as e:
                why = str(e)
        if why:
            return (
                f"IMU orientation {quat.tolist()} on {self.topic} rejected ({why}); holding the last good gravity "
                "direction"
            )
        self.pending = quat
        self.age.taken(now, read[0], timeout)
        return None

    @property
    def stale(self) -> bool:
        return self.age.stale
