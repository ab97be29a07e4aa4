"""The age of the last good message a node holds from one topic (the feed-forward node's IMU orientation, support
coefficient and supply voltage, the walk node's IMU reading): one older than the node's timeout for that input is
stale — a warning when it becomes so, an info line when good ones come again, and its age for diagnostics.

A message's time is its arrival, or its ``header.stamp`` when the message has one set and it is earlier
(:func:`reading_time`): a reading that waited in a queue or a pipeline is as old as its measurement."""

from __future__ import annotations

from collections.abc import Callable


def reading_time(arrival: float, stamp: float | None) -> float:
    """The time [s, node clock] a message's content is from: its ``stamp`` [s] when set (not None, > 0) and earlier
    than its ``arrival`` [s], else its arrival (a stamp ahead of the node's clock is not trusted beyond it)."""
    return stamp if stamp is not None and 0.0 < stamp < arrival else arrival


class InputAge:
    """When the last good ``what`` (singular; ``whats``: plural) from ``topic`` was taken, judged against the
    parameter ``timeout_name``; ``held`` ends the warning (what the node does meanwhile)."""

    def __init__(
        self,
        topic: str,
        what: str,
        whats: str,
        timeout_name: str,
        held: str,
        info: Callable[[str], object],
        warning: Callable[[str], object],
    ):
        self.topic, self.what, self.whats, self.timeout_name, self.held = topic, what, whats, timeout_name, held
        self._info, self._warning = info, warning
        self.at: float | None = None  # [s, node clock] of the last good message taken
        self.stale = False

    def taken(self, at: float) -> None:
        """A good message from ``at`` [s] (:func:`reading_time`); the line saying they come again if it was stale."""
        self.at = at
        if self.stale:
            self.stale = False
            self._info(f"{self.topic}: {self.whats} again")

    def state(self, now: float, timeout: float) -> str | None:
        """At ``now`` [s]: None before the first, ``<age> s old`` or, older than ``timeout`` [s] (said once when it
        becomes so), ``stale: <age> s old, the last one held``."""
        if self.at is None:
            return None
        age = now - self.at
        if not self.stale and age > timeout:
            self.stale = True
            limit = f"{self.timeout_name} {timeout:g} s"
            self._warning(f"{self.topic}: the last {self.what} is {age:.3g} s old ({limit}): {self.held}")
        return f"stale: {age:.3f} s old, the last one held" if self.stale else f"{age:.3f} s old"
