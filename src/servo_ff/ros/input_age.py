"""The age of the last good message a node holds from one topic (the feed-forward node's IMU orientation, support
coefficient and supply voltage, the walk node's IMU reading): one older than the node's timeout for that input is
stale — a warning when it becomes so, an info line when a fresh one comes again, and its age for diagnostics.

A message's time is its arrival, or its ``header.stamp`` when the message has one set, earlier than its arrival by
no more than :func:`stamp_bound` (:func:`reading_time`): a reading that waited in a queue or a pipeline is as old as
its measurement. A stamp further back reads as another clock's (a driver stamping boot time, a node without
``use_sim_time`` beside a simulation): the arrival is used, said once."""

from __future__ import annotations

from collections.abc import Callable

STAMP_BOUND_MIN = 1.0  # [s] a header stamp earlier than its arrival by more than this (or 10 × the timeout) …
STAMP_BOUND_TIMEOUTS = 10.0  # … is taken as another clock's


def stamp_bound(timeout: float) -> float:
    """[s] the furthest a header stamp may lie before its arrival and count: max(1 s, 10 × ``timeout``)."""
    return max(STAMP_BOUND_MIN, STAMP_BOUND_TIMEOUTS * timeout)


def reading_time(arrival: float, stamp: float | None, bound: float) -> tuple[float, bool]:
    """(the time [s, node clock] a message's content is from, whether its stamp reads as another clock's): its
    ``stamp`` [s] when set (not None, > 0), earlier than its ``arrival`` [s] and by at most ``bound`` [s]; else its
    arrival (a stamp ahead of the node's clock is not trusted beyond it; one more than ``bound`` back is foreign)."""
    if stamp is None or not 0.0 < stamp < arrival:
        return arrival, False
    if arrival - stamp > bound:
        return arrival, True
    return stamp, False


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
        self.foreign_stamps = 0  # messages whose header stamp read as another clock's

    def taken(self, arrival: float, stamp: float | None = None, timeout: float = 0.0) -> None:
        """A good message arrived at ``arrival`` [s] with header ``stamp`` [s] (None: it has none), judged by
        :func:`reading_time` within :func:`stamp_bound` of ``timeout`` [s]."""
        bound = stamp_bound(timeout)
        self.at, foreign = reading_time(arrival, stamp, bound)
        if foreign:
            self.foreign_stamps += 1
            if self.foreign_stamps == 1:
                self._warning(
                    f"{self.topic}: header stamp {arrival - stamp:.3g} s before its arrival (more than {bound:g} s): "
                    f"taken as another clock's; the {self.whats}' ages are judged by their arrival"
                )

    def reset(self) -> bool:
        """Forget the last message (the node's clock jumped back, :mod:`.clock_jump`): none yet, not stale. Whether
        there was one."""
        had, self.at, self.stale = self.at is not None, None, False
        return had

    def state(self, now: float, timeout: float) -> str | None:
        """At ``now`` [s]: None before the first, ``<age> s old`` or, older than ``timeout`` [s],
        ``stale: <age> s old, the last one held``; going stale is said once, and a fresh one after it."""
        if self.at is None:
            return None
        age = now - self.at
        if age > timeout and not self.stale:
            self.stale = True
            limit = f"{self.timeout_name} {timeout:g} s"
            self._warning(f"{self.topic}: the last {self.what} is {age:.3g} s old ({limit}): {self.held}")
        elif age <= timeout and self.stale:
            self.stale = False
            self._info(f"{self.topic}: {self.whats} again")
        return f"stale: {age:.3f} s old, the last one held" if self.stale else f"{age:.3f} s old"


def reset_ages(*ages: InputAge) -> list[str]:
    """Reset each of ``ages`` (the clock jumped back); what was dropped, one phrase per input that had a message."""
    return [f"the age of {age.topic} (none yet)" for age in ages if age.reset()]
