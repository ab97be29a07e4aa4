"""Throttled log lines: one message per kind per period, with the count of what was suppressed. A kind is a
source and a reason (:func:`reason_kind`): two different refusals of one source within a period both get a line."""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable
from typing import Any

_VALUES = re.compile(r"'[^']*'|\"[^\"]*\"|\[[^\]]*\]|[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|nan|inf)\b", re.IGNORECASE)


def reason_kind(reason: str) -> str:
    """What a refusal reason says, without its values (numbers, quoted strings, lists): repeats of one reason with
    other values share a kind; different reasons do not."""
    return _VALUES.sub("#", reason)


def throttle_key(source: str, reason: str) -> str:
    """The throttle key of a refusal: its source (a topic, a parameter) and its reason's kind."""
    return f"{source}|{reason_kind(reason)}"


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
