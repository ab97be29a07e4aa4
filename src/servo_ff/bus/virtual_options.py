"""Options and counters of the virtual bus (:class:`~.virtual_bus.VirtualBus`).

:class:`VirtualBusOptions` groups what the bus is (servo ids, control table, actuator parameters, loads), how it
talks (Return Delay Time, baud, wire time, a link to the pty), its supply, faults, thermal model and clock.
``VirtualBus(**keywords)`` and ``servo-ff virtual-bus`` flags map onto it (:meth:`VirtualBusOptions.of`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from ..models.params import ActuatorParams
from ..models.presets import preset, preset_servo
from ..models.servo_bank import ServoLoad
from . import control_table as ct
from .families import family
from .faults import Faults
from .packet_common import MAX_ID
from .thermal import ThermalOptions


@dataclass(frozen=True)
class Clock:
    """Physics advances by wall-clock time in sub-steps ≤ ``dt_max`` [s], at most ``max_catch_up`` [s] at once
    (a longer stall is counted as a clock jump), and on an idle tick every ``idle_tick`` [s]."""

    dt_max: float = 1e-3
    max_catch_up: float = 0.25
    idle_tick: float = 0.005

    def __post_init__(self) -> None:
        if not (self.dt_max > 0 and self.max_catch_up >= self.dt_max):
            raise ValueError(f"need dt_max > 0 and max_catch_up >= dt_max, got {self.dt_max}, {self.max_catch_up}")


@dataclass(frozen=True)
class VirtualBusOptions:
    """``ids`` (0..252), ``model`` (control table, :func:`.control_table.control_table`), ``params`` (one
    ActuatorParams for all servos; default ``preset(model, friction_model)``), ``loads`` (one :class:`ServoLoad`
    or id → load), ``supply_voltage`` [V] (default: params' vin), ``return_delay`` (2 µs units; default the
    table's 250), ``baud`` (what the Baud Rate register reports; ``wire_time`` also delays replies by 10 bits a
    byte), ``link`` (a symlink to the pty), ``echo`` (every instruction sent back to the client ahead of its replies,
    as an adapter without direction control), ``truth`` (keep a :class:`.truth.TruthRecord`)."""

    ids: Sequence[int] = range(1, 7)
    model: str = "mx106"
    params: ActuatorParams | None = None
    friction_model: str = "m4"
    loads: ServoLoad | Mapping[int, ServoLoad] | None = None
    supply_voltage: float | None = None
    return_delay: int | None = None
    baud: int = 1_000_000
    wire_time: bool = False
    link: str | None = None
    echo: bool = False
    truth: bool = False
    faults: Faults = field(default_factory=Faults)
    thermal: ThermalOptions = field(default_factory=ThermalOptions)
    clock: Clock = field(default_factory=Clock)

    _THERMAL = {
        "temperature": "ambient",
        "thermal": "enabled",
        "thermal_resistance": "resistance",
        "thermal_capacity": "capacity",
    }

    @classmethod
    def of(cls, **kw: Any) -> VirtualBusOptions:
        """Options from flat keywords: this class's fields, plus ``temperature``, ``thermal`` (bool),
        ``thermal_resistance``, ``thermal_capacity`` (→ :class:`ThermalOptions`) and ``dt_max``,
        ``max_catch_up``, ``idle_tick`` (→ :class:`Clock`); ``faults=None`` means none."""
        thermal = {
            cls._THERMAL[k]: kw.pop(k)
            for k in list(kw)
            if k in cls._THERMAL and not (k == "thermal" and isinstance(kw[k], ThermalOptions))
        }
        clock = {k: kw.pop(k) for k in list(kw) if k in {f.name for f in fields(Clock)}}
        if thermal:
            kw["thermal"] = ThermalOptions(**thermal)
        if clock:
            kw["clock"] = Clock(**clock)
        if kw.get("faults", 0) is None:
            del kw["faults"]
        return cls(**kw)

    def __post_init__(self) -> None:
        ids = [int(i) for i in self.ids]
        object.__setattr__(self, "ids", ids)
        if not ids:
            raise ValueError("ids: at least one servo id is needed")
        bad = [i for i in ids if not 0 <= i <= MAX_ID]
        if bad:
            raise ValueError(f"ids: {bad} outside 0..{MAX_ID}")
        if len(set(ids)) != len(ids):
            raise ValueError(f"ids: duplicates in {ids}")
        table = ct.control_table(self.model)  # an unknown model names the valid ones
        if self.return_delay is not None and not 0 <= self.return_delay <= 254:
            raise ValueError(f"return_delay must be 0..254 (2 µs units), got {self.return_delay}")
        if family(table.protocol).baud_grid is None:  # a grid by formula (Protocol 1.0) is checked by its bus
            codes = ct.BAUD_CODES if table.baud_codes is None else table.baud_codes
            if self.baud not in codes:
                raise ValueError(f"baud {self.baud} is not a {table.name} rate; valid: {', '.join(map(str, codes))}")
        v = self.supply_voltage
        if v is not None and not (math.isfinite(v) and v > 0):
            raise ValueError(f"supply_voltage must be > 0, got {v}")
        if isinstance(self.loads, Mapping):
            unknown = sorted(set(self.loads) - set(ids))
            if unknown:
                raise ValueError(f"loads given for unknown ids {unknown}; bus ids: {ids}")

    def actuator(self) -> ActuatorParams:
        """``params``, or the identified preset of ``model``."""
        if self.params is not None:
            return self.params
        # the preset modelling the table's servo (presets.PRESET_ALIASES); the XM430's is not identified
        servo = None if self.model.startswith("xm430") else preset_servo(self.model)
        if servo is None:
            raise ValueError(f"model {self.model!r} has no identified preset; pass params= (or --params FILE)")
        return preset(servo, self.friction_model if servo in ("mx64", "mx106", "xl330") else "m1")

    def load_of(self, dxl_id: int) -> ServoLoad:
        if self.loads is None:
            return ServoLoad.fixed_inertia(0.0)
        if isinstance(self.loads, Mapping):
            return self.loads.get(dxl_id, ServoLoad())
        return self.loads


@dataclass
class BusStats:
    instructions: dict[str, int] = field(default_factory=dict)
    replies: int = 0
    dropped: int = 0  # replies suppressed by drop_rate
    corrupted: int = 0  # replies with flipped bytes
    held: int = 0  # replies held back by late_s (late_rate)
    held_s: float = 0.0  # [s, emulator] replies' waits before they left: Return Delay Time, wire time, late_s
    overflow: int = 0  # replies lost because nobody read the pty
    errors: dict[int, int] = field(default_factory=dict)  # error number → count of status packets
    physics_steps: int = 0
    clock_jumps: int = 0
    internal_errors: int = 0  # exceptions caught in the serve loop (logged with a traceback)
