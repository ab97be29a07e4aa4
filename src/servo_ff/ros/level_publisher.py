"""A level (std_msgs/Float64 whose value holds until the next message, e.g. the walk's support coefficient)
published when it changes, and at least every ``heartbeat`` seconds for a subscriber that joins late: the receiver
holds the same value at every instant as with one message per period, without a message (and a callback) per
period while the value stays."""

from __future__ import annotations

from std_msgs.msg import Float64

from .cdr_template import CdrTemplate


class LevelPublisher:
    """``send(t, value)``: published when ``value`` differs from the last one sent or ``heartbeat`` [s] after it
    (``t`` [s] on the caller's clock); ``sent`` counts the messages."""

    def __init__(self, publisher, heartbeat: float):
        self.publisher, self.heartbeat = publisher, heartbeat
        self._cdr = CdrTemplate(Float64(), [("data",)], stamp=None)
        self._last: float | None = None
        self._next = -float("inf")
        self.sent = 0

    def send(self, t: float, value: float) -> None:
        if value == self._last and t < self._next:
            return
        self._cdr.block(0)[0] = value
        self._cdr.publish(self.publisher)
        self._last, self._next = value, t + self.heartbeat
        self.sent += 1
