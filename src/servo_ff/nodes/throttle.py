"""Throttled log lines: one message per kind per period, with the count of what was suppressed."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any


class Throttle:
    """At most one message per ``key`` every ``period`` seconds; counts what it suppressed."""

    def __init__(self, period: float = 1.0, clock: Callable[[], float] = time.monotonic):
        self.period = float(period)
        self.clock = clock
        self._last: dict[str, float] = {}
        self._suppressed: dict[str, int] = {}

    def __call__(self, key: str, log: Callable[[str], Any], message: str) -> bool:
        now = self.clock()
        if now - self._last.get(key, -math.inf) < self.period:
            self._suppressed[key] = self._suppressed.get(key, 0) + 1
            return False
        n = self._suppressed.pop(key, 0)
        self._last[key] = now
        text = message + (f" ({n} similar message(s) suppressed)" if n else "")
        # rclpy keys its logging context on the calling line and refuses a severity change there: one line each
        name = getattr(log, "__name__", "")
        if name == "error":
            log(text)
        elif name in ("warning", "warn"):
            log(text)
        elif name == "info":
            log(text)
        else:
            log(text)
        return True
