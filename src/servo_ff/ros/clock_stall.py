"""Whether a node's ROS clock stands — a simulation stopped, ``/clock`` gone — seen from a status published on the
steady clock: the ages a status reports on the ROS clock are then frozen at the last clock, and the status says so
(before: the walk and feed-forward nodes went on saying "walking" / "ok" every second with fresh-looking ages)."""

from __future__ import annotations

import time


class ClockStall:
    """The ROS clock's reading at each status, and since when (steady) it has not moved."""

    def __init__(self) -> None:
        self.last_ns: int | None = None
        self.since = time.monotonic()

    def standing(self, ros_ns: int) -> float | None:
        """[s, steady] the ROS clock has stood at ``ros_ns`` (0, no clock yet: since this watch began); None when
        it moved since the previous call."""
        now = time.monotonic()
        if ros_ns == 0:
            return now - self.since
        if ros_ns != self.last_ns:
            self.last_ns, self.since = ros_ns, now
            return None
        return now - self.since
