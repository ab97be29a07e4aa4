"""Register memory of the virtual STS bus: :class:`~servo_ff.bus.registers.RegisterMemory` (one control table
per servo, vectorised item access) with the STS rules.

* Values are sign-magnitude where the table says so: :meth:`StsRegisterMemory.get` decodes, :meth:`~.set`
  encodes (the memory holds the raw bytes the servo sends).
* Writes are byte-wise, as the firmware takes them: bytes of read-only or unused addresses are not written; a value
  the firmware does not take (an ID in use, Torque Enable 128 = "set the present position as 2048", not emulated,
  …) leaves its item unchanged. The STS has no instruction errors: its replies carry the status bits only.
* EPROM (addresses 0–39) is writable with torque on; its items act at once. ``flash`` is the image kept over a
  power-off: an EPROM write reaches it only while Lock (55) is 0 (:meth:`~.power_cycle` restores from it).
* Torque Enable 0 clears the latched protections (over-current, overload: :data:`.status.LATCHED`); Torque Enable 1
  is not taken while a status bit that the Shutdown (Unloading Condition) register selects is set.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .. import control_table as ct
from ..registers import RegisterMemory
from . import status

_UNSIGNED = {1: "u1", 2: "<u2", 4: "<u4"}
TORQUE_VALUES = (0, 1, 2)  # off, on, damping (128 = set the present position as 2048: not emulated)


def encode_many(table: ct.ControlTable, item: ct.Item, values) -> np.ndarray:
    """Signed ``values`` → raw fields of ``item`` (sign-magnitude with the magnitude clipped, or clipped unsigned)."""
    v = np.asarray(values, dtype=np.int64)
    if not item.signed:
        return np.clip(v, 0, (1 << (8 * item.size)) - 1)
    sign = table.sign_bit_of(item)
    if sign is None:
        half = 1 << (8 * item.size - 1)
        return np.clip(v, -half, half - 1) & ((1 << (8 * item.size)) - 1)
    mag = np.minimum(np.abs(v), (1 << sign) - 1)
    return np.where(v < 0, (1 << sign) | mag, mag)


class StsRegisterMemory(RegisterMemory):
    """``(n, TABLE_SIZE)`` bytes of STS servos ``ids``; ``flash`` (n, EPROM size) the saved EPROM image."""

    no_action_error = 0  # the STS has no instruction errors (its handler runs ACTION only where one is pending)

    def __init__(self, table: ct.ControlTable, ids: Sequence[int]):
        super().__init__(table, ids)
        self.eeprom_end = min(i.address for i in table.items if not i.eeprom)  # 40: Torque Enable
        self.end = max(i.address + i.size for i in table.items)
        self.flash = self.mem[:, : self.eeprom_end].copy()

    # ------------------------------------------------------------------ by item name (vectorised)
    def _span(self, name: str) -> tuple[int, int, str]:
        span = self._spans.get(name)
        if span is None:
            it = self.table.item(name)
            span = self._spans[name] = (it.address, it.size, _UNSIGNED[it.size])
        return span

    def get(self, name: str) -> np.ndarray:
        """Item ``name`` of every servo (int64, sign-magnitude decoded)."""
        return self.table.decode(name, self.column(name))

    def value(self, k: int, name: str) -> int:
        return int(self.table.decode(name, self.column(name)[k]))

    def set(self, name: str, values, servos=None) -> None:
        """Item ``name`` := ``values`` (encoded; magnitudes clipped to the field) for ``servos`` (default all)."""
        super().set(name, encode_many(self.table, self.table.item(name), values), servos)

    def save_flash(self) -> None:
        """The present EPROM values become the ones kept over a power-off (the bus's start-up configuration)."""
        self.flash[:] = self.mem[:, : self.eeprom_end]

    # ------------------------------------------------------------------ byte-wise, as the instructions see it
    def read(self, k: int, addr: int, length: int) -> bytes | None:
        """The bytes of a READ of servo ``k`` (unused addresses read 0); None if it runs past the memory."""
        if length <= 0 or addr + length > ct.TABLE_SIZE:
            return None
        return self.mem[k, addr : addr + length].tobytes()

    def write(self, k: int, addr: int, data: bytes) -> None:
        """Apply a WRITE to servo ``k`` (see the module notes)."""
        if not data or addr + len(data) > ct.TABLE_SIZE:
            return
        staged: dict[str, tuple[ct.Item, bytearray]] = {}
        for a, byte in enumerate(data, start=addr):
            it = self.table.at(a)
            if it is None or not it.writable:
                continue
            if it.name not in staged:
                staged[it.name] = (it, bytearray(self.mem[k, it.address : it.address + it.size].tobytes()))
            staged[it.name][1][a - it.address] = byte
        locked = self.value(k, "Lock") != 0
        for name, (it, raw) in staged.items():
            value = int(self.table.decode(it, int.from_bytes(raw, "little")))
            if not self._takes(k, name, value):
                continue
            self.mem[k, it.address : it.address + it.size] = np.frombuffer(bytes(raw), dtype=np.uint8)
            if it.eeprom and not locked:
                self.flash[k, it.address : it.address + it.size] = self.mem[k, it.address : it.address + it.size]
            if name == "ID":
                self._renumber(k, value)

    def _takes(self, k: int, name: str, value: int) -> bool:
        """Whether the firmware takes ``value`` for item ``name`` of servo ``k`` (and its side effects)."""
        if name == "Torque Enable":
            if value not in TORQUE_VALUES:
                return False
            hw = self.value(k, "Hardware Error Status")
            if value == 0:
                self.set("Hardware Error Status", hw & ~status.LATCHED, [k])
                return True
            return not hw & self.value(k, "Shutdown")
        if name == "ID":
            return 0 <= value <= 0xFD and (value not in self.index or self.index[value] == k)
        if name in ("Lock", "Status Return Level"):
            return value in (0, 1)
        if name == "Baud Rate":
            return value in (self.table.baud_codes or {}).values()
        return True

    def _renumber(self, k: int, new_id: int) -> None:
        old = self.ids[k]
        if old != new_id:
            self.ids[k] = new_id
            del self.index[old]
            self.index[new_id] = k

    # ------------------------------------------------------------------ power cycle
    def power_cycle(self, k: int) -> None:
        """Power off and on: the EPROM from ``flash``, the SRAM back to its defaults, Torque Limit = PWM Limit (Max
        Torque Limit), nothing registered; the ID may revert to the saved one."""
        defaults = np.frombuffer(self.table.defaults(self.ids[k]), dtype=np.uint8)
        self.mem[k, self.eeprom_end :] = defaults[self.eeprom_end :]
        self.mem[k, : self.eeprom_end] = self.flash[k]
        self.set("Torque Limit", self.value(k, "PWM Limit"), [k])
        self.registered.pop(k, None)
        saved = self.value(k, "ID")
        if saved != self.ids[k] and saved not in self.index:
            self._renumber(k, saved)
        elif saved != self.ids[k]:
            self.set("ID", self.ids[k], [k])
