"""The walk node's balance input: each trunk IMU reading (sensor_msgs/Imu: orientation and angular velocity) gives
the ankle and hip offsets of :class:`servo_ff.dynamics.walk_balance.BalanceFeedback`, added to every point of the
next published trajectory while the reading is younger than ``imu_timeout`` — by its header stamp, or its arrival
(:func:`servo_ff.ros.input_age.reading_time`: a stamp from another clock is said once and the arrival used). A
reading the offsets cannot come from (REP-145's "not given", a zero or non-finite quaternion, a rate that is not
there while a rate gain is used: :mod:`servo_ff.dynamics.imu_reading`) is refused with a throttled line naming the
topic, and the last good offsets stand while they are fresh. A stale reading gives no offset: said once, and said
again when a fresh one comes (:class:`~.input_age.InputAge`). No reading at all ``imu_timeout`` after the walk's start
(a wrong ``imu_topic``, an IMU driver not up) is the same: said once, a warning naming the topic (before: the walk went
on open-loop, unsaid, its status OK), and its first reading is said when it comes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .input_age import InputAge


class ImuBalance:
    """``balance`` (a :class:`~servo_ff.dynamics.walk_balance.BalanceFeedback`) fed from ``topic``; ``logger()``
    the node's logger (called at each line)."""

    def __init__(self, balance: Any, topic: str, logger: Callable[[], Any]):
        self.balance, self.topic, self._log = balance, topic, logger
        self.offset = np.zeros(balance.n)  # [rad] the offsets of the last good reading
        self.age = InputAge(topic, "reading", "readings", "imu_timeout", "no balance offset", self._info, self._warning)
        self.clamp_logged = 0
        self.missing = False  # no reading ``imu_timeout`` after the walk's start (said once), until the first

    # one method per severity: rclpy keys a logging call site (function, file, line) to one severity, and two lambdas
    # on one line were one site — the first info after a warning raised, and the walk node ended (an IMU pausing)
    def _info(self, text: str) -> None:
        self._log().info(text)

    def _warning(self, text: str) -> None:
        self._log().warning(text)

    def take(self, msg: Any, now: float, trunk_pitch: float, timeout: float) -> None:
        """One Imu arrived at ``now`` [s]: its offsets about the gait's ``trunk_pitch`` [rad], or a refusal;
        ``timeout``: ``imu_timeout`` [s] (the bound of a header stamp's lag)."""
        o, w, st = msg.orientation, msg.angular_velocity, msg.header.stamp
        cov0 = (msg.orientation_covariance[0], msg.angular_velocity_covariance[0])
        try:
            off = self.balance.offsets((o.x, o.y, o.z, o.w), (w.x, w.y, w.z), trunk_pitch, cov0)
        except ValueError as e:  # the last good offsets stand until imu_timeout
            self._log().warning(f"{self.topic}: {e}; no balance offset from this reading", throttle_duration_sec=5.0)
            return
        self.offset = off
        self.age.taken(now, st.sec + st.nanosec * 1e-9, timeout)
        if self.missing:
            self.missing = False
            self._info(f"{self.topic}: a first reading: balance offsets from now on")
        if self.balance.clamped > self.clamp_logged:
            self._log().warning(
                f"balance offsets held at ±{self.balance.gains.limit} rad ({self.balance.clamped} so far)",
                throttle_duration_sec=5.0,
            )
            self.clamp_logged = self.balance.clamped

    def offset_at(self, now: float, timeout: float, start: float | None = None) -> np.ndarray | None:
        """The offsets [rad] to add at ``now`` [s]; None before the first reading (none ``timeout`` [s] after the
        walk's ``start`` [s]: said once) or when it is older than ``timeout``."""
        if self.age.at is None:
            if start is not None and now - start > timeout and not self.missing:
                self.missing = True
                self._warning(
                    f"{self.topic}: no reading in {now - start:.3g} s of walking (imu_timeout {timeout:g} s): no "
                    "balance offset, the walk is open-loop until one comes"
                )
            return None
        if self.age.state(now, timeout) is None or self.age.stale:
            return None
        return self.offset
