"""The bus interface the hardware node (and every bench and test) uses, whatever the protocol, and the registry of
its implementations: one class per protocol, each with one read and one write transaction per cycle where the
protocol allows, the same fault handling, per-servo :class:`~.transactions.CommStats` and diagnostics.

=========  ==========================================  =============================================
protocol   servos                                      implementation
=========  ==========================================  =============================================
``dxl2``   Dynamixel Protocol 2.0 (MX 2.0 firmware, X)  :class:`servo_ff.bus.dynamixel.bus.DynamixelBus`
``dxl1``   Dynamixel Protocol 1.0 (MX 1.0 firmware, AX)  :class:`servo_ff.bus.dynamixel.bus_p1.DynamixelBus1`
``sts``    Feetech SCS/STS (STS3215, STS3250)           :class:`servo_ff.bus.feetech.bus.FeetechBus`
=========  ==========================================  =============================================
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import Protocol

import numpy as np

from . import control_table as ct
from .bus_types import BusConfig, Health, JointState
from .transactions import CommStats

#: protocol → "module:Class" of its bus (imported on use: each needs its own vendor SDK)
BUS_CLASSES: dict[str, str] = {
    "dxl2": "servo_ff.bus.dynamixel.bus:DynamixelBus",
    "dxl1": "servo_ff.bus.dynamixel.bus_p1:DynamixelBus1",
    "sts": "servo_ff.bus.feetech.bus:FeetechBus",
}


class ServoBus(Protocol):
    """What a bus offers: open/close (a context manager), discovery, one-transaction state read and goal write,
    the slower health read, torque, reboot (or the protocol's equivalent) and statistics. Positions in [rad]
    (REP-103), velocities [rad/s], currents [A], efforts [N·m]; failed servos read NaN with ``valid`` False."""

    config: BusConfig
    table: ct.ControlTable
    ids: list[int]
    missing: list[int]
    stats: dict[int, CommStats]
    transactions: int
    cycles: int

    def open(self) -> ServoBus: ...
    def close(self) -> None: ...
    def __enter__(self) -> ServoBus: ...
    def __exit__(self, *exc) -> None: ...
    def connect(self) -> tuple[list[int], list[int]]: ...
    def setup(self, ids: Iterable[int] | None = None) -> None: ...
    def ping(self, servo_id: int) -> int | None: ...
    def read_state(self) -> JointState: ...
    def write_goals(self, goals: np.ndarray, p_gains: np.ndarray | None = None) -> None: ...
    def cycle(self, goals: np.ndarray, p_gains: np.ndarray | None = None) -> JointState: ...
    def read_health(self) -> Health: ...
    def torque(self, enable: bool, ids: Iterable[int] | None = None) -> None: ...
    def reboot(self, servo_id: int) -> None: ...
    def servo_status(self, servo_id: int) -> str: ...
    def stats_summary(self) -> str: ...


def bus_class(protocol: str) -> type:
    """The bus class of ``protocol`` (ValueError listing the known protocols)."""
    if protocol not in BUS_CLASSES:
        raise ValueError(f"unknown bus protocol {protocol!r}; known: {', '.join(BUS_CLASSES)}")
    module, _, name = BUS_CLASSES[protocol].partition(":")
    try:
        return getattr(importlib.import_module(module), name)
    except ImportError as e:  # the protocol's vendor SDK is not installed
        raise ValueError(f"bus protocol {protocol} needs {module}, not importable: {e}") from None


def make_bus(config: BusConfig) -> ServoBus:
    """A (closed) bus for ``config.protocol``."""
    return bus_class(config.protocol)(config)
