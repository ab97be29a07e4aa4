"""The walk engine's stale-command rule (ROS-free), one place for the walk node (per trajectory message) and the
engine process (:mod:`.walk_worker`, per sample): a ``cmd_vel`` older than ``cmd_timeout`` [s] becomes a zero command
(``step_in_place``: the walk steps in place) or the halt request (``halt``: as ``angular.x = -1``, the walk stops
after the step in progress). The engine is a :class:`.walk_pattern.WalkEngine` or a :class:`.nimbro_cpg_engine
.CpgEngine` (``cmd``, ``set_cmd``, ``halt_requested``, ``set_halt``)."""

from __future__ import annotations

#: what a stale cmd_vel does (the walk node's ``on_cmd_timeout``)
ON_CMD_TIMEOUT = ("step_in_place", "halt")


def check_on_cmd_timeout(on_timeout: str) -> str:
    """``on_timeout`` itself, or a ValueError naming it when it is not one of :data:`ON_CMD_TIMEOUT`."""
    if on_timeout not in ON_CMD_TIMEOUT:
        raise ValueError(f"on_timeout {on_timeout!r} is not one of {', '.join(ON_CMD_TIMEOUT)}")
    return on_timeout


def expire_command(engine, t: float, cmd_time: float | None, cmd_timeout: float, on_timeout: str) -> bool:
    """At time ``t`` [s], a command given at ``cmd_time`` [s] (None: never) older than ``cmd_timeout`` [s]: the
    engine's halt requested (``on_timeout`` "halt", unless it already is) or its command zeroed (else, unless it
    already is zero). True when the rule acted."""
    if cmd_time is None or t - cmd_time <= cmd_timeout:
        return False
    if on_timeout == "halt":
        if engine.halt_requested:
            return False
        engine.set_halt(True)
        return True
    if not any(engine.cmd):
        return False
    engine.set_cmd(0.0, 0.0, 0.0)
    return True
