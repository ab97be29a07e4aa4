"""The time parameters of every sim backend (:mod:`.sim_clock` keeps the time they describe)."""

from __future__ import annotations

from .common import ParamSpec


def sim_time_specs(as_fast_batch: float = 0.0) -> list[ParamSpec]:
    """The time parameters of every sim backend (``as_fast_batch``: that backend's default)."""
    return [
        ParamSpec(
            "publish_clock",
            False,
            "own the time: publish /clock, stamp and run on the simulated time "
            "(use_sim_time is set; a change of it is refused), step at real_time_factor",
            read_only=True,
        ),
        ParamSpec(
            "real_time_factor",
            1.0,
            "with publish_clock: simulated seconds per wall second (0: as fast as possible while active, 1 while "
            "inactive)",
            lo=0.0,
            hi=1000.0,
        ),
        ParamSpec(
            "as_fast_batch",
            float(as_fast_batch),
            "real_time_factor 0: wall time of periods stepped per callback (0: one period per callback; longer "
            "batches save executor overhead, but a subscriber slower than the sim, e.g. in the same executor, "
            "falls behind and loses states)",
            "s",
            lo=0.0,
            hi=0.1,
        ),
        ParamSpec(
            "lockstep",
            False,
            "with publish_clock: one control period per goal message received (and after lockstep_timeout without "
            "one); a JointState goal stamped with a state's stamp steps only as the answer to the latest state",
            read_only=True,
        ),
        ParamSpec(
            "lockstep_timeout",
            0.02,
            "lockstep: wall time after which the simulation steps without a goal (checked every half of it; "
            "a change applies at once)",
            "s",
            lo=1e-4,
            hi=10.0,
        ),
        ParamSpec(
            "realtime",
            True,
            "follow the node clock: advance the whole periods elapsed (late ticks catch up, "
            "at most max_catch_up); false: exactly 1/rate_hz per tick",
        ),
        ParamSpec(
            "max_catch_up",
            0.05,
            "largest time advanced in one tick (the rest of a longer step is dropped, said); following the node "
            "clock, a step of it of more than max(1 s, 2 × max_catch_up) is a jump forward: the trajectory dropped",
            "s",
            lo=1e-4,
            hi=10.0,
        ),
    ]
