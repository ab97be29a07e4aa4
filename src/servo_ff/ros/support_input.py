"""The left-foot support coefficient c_left (1 = all weight on the left foot, 0 = on the right) a floating-base
feed-forward node holds for :meth:`FeedForwardController.tick`. Until the first valid message on its topic the node
assumes double support (0.5): a robot that starts is standing on both feet, so its first goals load neither leg
alone. The assumption is said once (an info line naming the topic, at the first tick that uses it) and shown in the
node's diagnostics (``support``: assumed / received). A received one older than the node's ``support_timeout`` stays
in use and is reported stale (:class:`~servo_ff.ros.input_age.InputAge`). A fixed base (arms) ignores c_left."""

from __future__ import annotations

import math
from collections.abc import Callable

from .input_age import InputAge

DOUBLE_SUPPORT = 0.5  # c_left assumed before the first support coefficient


class SupportInput:
    """c_left from ``topic`` (std_msgs/Float64), double support until the first valid one; ``used`` False: fixed
    base, c_left unused (no assumption said)."""

    def __init__(self, topic: str, used: bool, info: Callable[[str], object], warning: Callable[[str], object]):
        self.topic, self.used, self._info = topic, used, info
        self.value = DOUBLE_SUPPORT
        self.received = False
        self._said = False
        held, what = "the feed-forward holds the last one", "support coefficient"
        self.age = InputAge(topic, what, f"{what}s", "support_timeout", held, info, warning)

    def reset(self) -> bool:
        """As before the first message (the clock jumped back): double support assumed; whether one was held."""
        had, self.value, self.received, self._said = self.received, DOUBLE_SUPPORT, False, False
        self.age.reset()
        return had

    def update(self, c: float, now: float) -> str | None:
        """Take one message's value at ``now`` [s]; None when taken, else the refusal (the last value held)."""
        c = float(c)
        if not (math.isfinite(c) and 0.0 <= c <= 1.0):
            return f"support coefficient {c} on {self.topic} rejected (must be in [0, 1]); holding {self.value}"
        self.value, self.received = c, True
        if self.used:  # a fixed base's is not judged (nor reported stale)
            self.age.taken(now)
        return None

    def for_tick(self) -> float:
        """c_left for this tick; the first tick on the assumed double support says so (once)."""
        if self.used and not self.received and not self._said:
            self._said = True
            self._info(f"no {self.topic} yet: double support ({DOUBLE_SUPPORT}) assumed")
        return self.value

    def state(self) -> str:
        """For diagnostics: ``received <c>``, ``assumed 0.5 (no <topic> yet)`` or ``unused (fixed base)``."""
        if not self.used:
            return "unused (fixed base)"
        return f"received {self.value:.3f}" if self.received else f"assumed {DOUBLE_SUPPORT} (no {self.topic} yet)"
