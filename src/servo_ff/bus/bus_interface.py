"""The bus interface the hardware node (and every bench and test) uses, whatever the protocol: one class per
protocol (its row of :data:`~.families.FAMILIES`), each with one read and one write transaction per cycle where the
protocol allows, the same fault handling, per-servo :class:`~.transactions.CommStats` and diagnostics."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

import numpy as np

from . import control_table as ct
from .bus_types import BusConfig, Health, JointState
from .families import load
from .transactions import CommStats


class ServoBus(Protocol):
    """What a bus offers: open/close (a context manager), discovery, one-transaction state read and goal write,
    the slower health read, torque, reboot (or the protocol's equivalent) and statistics. Positions in [rad]
    (REP-103), velocities [rad/s], currents [A], efforts [N·m]; failed servos read NaN with ``valid`` False."""

    config: BusConfig
    table: ct.ControlTable
    ids: list[int]
    missing: list[int]
    refused: dict[int, str]
    stats: dict[int, CommStats]
    transactions: int
    cycles: int

    def open(self) -> ServoBus: ...
    def close(self) -> None: ...
    def __enter__(self) -> ServoBus: ...
    def __exit__(self, *exc) -> None: ...
    def connect(self) -> tuple[list[int], list[int]]: ...
    def setup(self, ids: Iterable[int] | None = None, leave_out: bool = False) -> None: ...
    def ping(self, servo_id: int) -> int | None: ...
    def read_state(self) -> JointState: ...
    def write_goals(self, goals: np.ndarray, p_gains: np.ndarray | None = None) -> None: ...
    def cycle(self, goals: np.ndarray, p_gains: np.ndarray | None = None) -> JointState: ...
    def read_health(self) -> Health: ...
    def torque(self, enable: bool, ids: Iterable[int] | None = None) -> None: ...
    def clear_shutdown(self, ids: Iterable[int] | None = None) -> None: ...
    def reboot(self, servo_id: int) -> None: ...
    def servo_status(self, servo_id: int) -> str: ...
    def stats_summary(self) -> str: ...


def bus_class(protocol: str) -> type:
    """The bus class of ``protocol`` (ValueError listing the known protocols, or naming a missing vendor SDK)."""
    return load(protocol, "bus_class")


def make_bus(config: BusConfig) -> ServoBus:
    """A (closed) bus for ``config.protocol``."""
    return bus_class(config.protocol)(config)
