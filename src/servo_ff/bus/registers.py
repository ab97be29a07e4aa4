"""Register memory of the virtual bus: one control table per servo, built from :mod:`.control_table`.

:class:`RegisterMemory` is the single source of truth of every servo's registers: the servo physics reads its
inputs (goal, torque enable, P gain, PWM limit) and publishes its outputs (present position, …) by item name
(:meth:`~RegisterMemory.get`, :meth:`~RegisterMemory.set`), vectorised over the servos; REG_WRITE/ACTION and the
RAM reset of a reboot are here too. Each family adds what its instruction handlers call byte-wise, as its firmware
takes them: ``read(k, addr, length)`` and ``write(k, addr, data)`` (:class:`servo_ff.bus.dynamixel.registers.
RegisterMemory2`, :class:`servo_ff.bus.dynamixel.virtual_p1.RegisterMemory1`,
:class:`servo_ff.bus.feetech.registers.StsRegisterMemory`) and ``no_action_error``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from . import control_table as ct

_DTYPES = {(1, False): "u1", (1, True): "i1", (2, False): "<u2", (2, True): "<i2", (4, False): "<u4", (4, True): "<i4"}


class RegisterMemory:
    """``(n, TABLE_SIZE)`` bytes (``mem``) of servos ``ids`` with control table ``table``. ``ids``/``index``
    follow writes of the ID item; ``registered`` holds each servo's pending REG_WRITE (address, data)."""

    no_action_error: int  # the status error of an ACTION with no REG_WRITE pending (the family's code)

    def __init__(self, table: ct.ControlTable, ids: Sequence[int]):
        self.table = table
        self.ids = [int(i) for i in ids]
        self.index = {i: k for k, i in enumerate(self.ids)}
        self.n = len(self.ids)
        self.mem = np.stack([np.frombuffer(table.defaults(i), dtype=np.uint8) for i in self.ids]).copy()
        self.registered: dict[int, tuple[int, bytes]] = {}
        self._spans: dict[str, tuple[int, int, str]] = {}
        self._columns: dict[str, np.ndarray] = {}

    # ------------------------------------------------------------------ by item name (vectorised)
    def _span(self, name: str) -> tuple[int, int, str]:
        """(address, size, numpy dtype) of item ``name``."""
        span = self._spans.get(name)
        if span is None:
            it = self.table.item(name)
            span = self._spans[name] = (it.address, it.size, _DTYPES[it.size, it.signed])
        return span

    def column(self, name: str) -> np.ndarray:
        """Item ``name`` of every servo as a writable view into ``mem`` (cached: the physics reads and writes a
        dozen items per step)."""
        col = self._columns.get(name)
        if col is None:
            a, _size, dt = self._span(name)
            col = self._columns[name] = np.ndarray(
                (self.n,), dtype=dt, buffer=self.mem, offset=a, strides=(self.mem.strides[0],)
            )
        return col

    def get(self, name: str) -> np.ndarray:
        """Item ``name`` of every servo (a new int64 array, signed where the item is)."""
        return self.column(name).astype(np.int64)

    def value(self, k: int, name: str) -> int:
        """Item ``name`` of servo ``k``."""
        return int(self.column(name)[k])

    def set(self, name: str, values, servos=None) -> None:
        """Item ``name`` := ``values`` (one or one per selected servo; already rounded) for ``servos`` (indices or a
        mask; default all)."""
        col = self.column(name)
        if servos is None:
            col[:] = values
        else:
            col[servos] = values

    def item_bytes(self, k: int, name: str) -> bytes:
        a, size, _ = self._span(name)
        return self.mem[k, a : a + size].tobytes()

    # ------------------------------------------------------------------ REG_WRITE / ACTION, REBOOT
    def register(self, k: int, addr: int, data: bytes) -> None:
        """REG_WRITE: hold the write until ACTION."""
        self.registered[k] = (addr, bytes(data))
        self.set("Registered Instruction", 1, [k])

    def action(self, k: int) -> int:
        """ACTION: apply the registered write (``no_action_error`` if there is none)."""
        if k not in self.registered:
            return self.no_action_error
        addr, data = self.registered.pop(k)
        self.set("Registered Instruction", 0, [k])
        return self.write(k, addr, data)

    def reboot(self, k: int) -> None:
        """The RAM area back to its defaults (torque off, no hardware error, nothing registered)."""
        defaults = np.frombuffer(self.table.defaults(self.ids[k]), dtype=np.uint8)
        self.mem[k, ct.RAM_START :] = defaults[ct.RAM_START :]
        self.registered.pop(k, None)
