"""The register memory of a Protocol 2.0 servo (:class:`RegisterMemory2`): the firmware's byte-wise READ and WRITE
rules on the shared :class:`servo_ff.bus.registers.RegisterMemory` — whole writable items only, EEPROM locked while
torque is on, Goal Position within the position limits in position mode, indirect addresses resolved (Indirect
Data n reads/writes the address held in Indirect Address n); refusals are Protocol 2.0 error numbers.
"""

from __future__ import annotations

from collections.abc import Sequence

from .. import control_table as ct
from ..registers import RegisterMemory
from . import protocol as pr


class RegisterMemory2(RegisterMemory):
    """:class:`~servo_ff.bus.registers.RegisterMemory` with the Protocol 2.0 firmware's rules; ``indirect`` = (Indirect
    Data 1 address, count, Indirect Address 1 address) of the table, or None."""

    no_action_error = pr.ERR_INSTRUCTION

    def __init__(self, table: ct.ControlTable, ids: Sequence[int]):
        super().__init__(table, ids)
        # the indirect bank of this table: Indirect Data 1 address, count, Indirect Address 1 address (XL330/XC330:
        # 20 at 208/168; MX(2.0)/XM/XL430: 28 at 224/168; none in Protocol 1.0 tables)
        n_ind = sum(1 for it in table.items if it.name.startswith("Indirect Data "))
        self.indirect = (
            (table.item("Indirect Data 1").address, n_ind, table.item("Indirect Address 1").address) if n_ind else None
        )

    # ------------------------------------------------------------------ byte-wise, as the instructions see it
    def _resolve(self, k: int, addr: int) -> int:
        """Indirect Data n reads/writes the address held in Indirect Address n."""
        if self.indirect is not None and self.indirect[0] <= addr < self.indirect[0] + self.indirect[1]:
            a = self.indirect[2] + 2 * (addr - self.indirect[0])
            return int.from_bytes(self.mem[k, a : a + 2].tobytes(), "little")
        return addr

    def read(self, k: int, addr: int, length: int) -> tuple[int, bytes]:
        """``(protocol error, data)`` of a READ of servo ``k``."""
        if addr + length > ct.TABLE_SIZE or length <= 0:
            return pr.ERR_DATA_RANGE, b""
        ind = self.indirect
        if ind is None or addr + length <= ind[0] or addr >= ind[0] + ind[1]:
            return 0, self.mem[k, addr : addr + length].tobytes()
        out = bytearray()
        for a in range(addr, addr + length):
            t = self._resolve(k, a)
            out.append(int(self.mem[k, t]) if t < ct.TABLE_SIZE else 0)
        return 0, bytes(out)

    def write(self, k: int, addr: int, data: bytes) -> int:
        """Apply a WRITE to servo ``k``; returns the protocol error number (0 = done)."""
        n = len(data)
        if n == 0 or addr + n > ct.TABLE_SIZE:
            return pr.ERR_DATA_RANGE
        targets = [self._resolve(k, a) for a in range(addr, addr + n)]
        if any(t >= ct.TABLE_SIZE for t in targets):
            return pr.ERR_ACCESS
        pos = {t: b for t, b in zip(targets, data)}
        touched = {}
        for t in pos:
            it = self.table.at(t)
            if it is not None:
                touched[it.name] = it
        torque_on = self.value(k, "Torque Enable") != 0
        new_vals = {}
        for it in touched.values():  # whole items only, writable, EEPROM (and indirect addresses) with torque off
            if not all(a in pos for a in range(it.address, it.address + it.size)):
                return pr.ERR_DATA_LENGTH
            if not it.writable:
                return pr.ERR_ACCESS
            if it.eeprom and torque_on and it.name != "Torque Enable":
                return pr.ERR_ACCESS
            raw = bytes(pos[a] for a in range(it.address, it.address + it.size))
            new_vals[it.name] = (it, int.from_bytes(raw, "little", signed=it.signed))
        err = self._refuse(k, {name: v for name, (_it, v) in new_vals.items()})
        if err:
            return err
        for it, _v in new_vals.values():
            for a in range(it.address, it.address + it.size):
                self.mem[k, a] = pos[a]
        if "ID" in new_vals:
            old = self.ids[k]
            self.ids[k] = new_vals["ID"][1]
            del self.index[old]
            self.index[self.ids[k]] = k
        # Torque Enable 0 → 1: the servo holds its Goal Position register (as the firmware does)
        return 0

    def _refuse(self, k: int, new: dict[str, int]) -> int:
        """The firmware's checks of the item values a write would store (0: accepted)."""
        if "Goal Position" in new and self.value(k, "Operating Mode") == ct.OPERATING_MODES["position"]:
            if not self.value(k, "Min Position Limit") <= new["Goal Position"] <= self.value(k, "Max Position Limit"):
                return pr.ERR_DATA_LIMIT
        if "Torque Enable" in new and new["Torque Enable"] not in (0, 1):
            return pr.ERR_DATA_RANGE
        if new.get("Torque Enable") == 1 and self.value(k, "Hardware Error Status") & self.value(k, "Shutdown"):
            return pr.ERR_RESULT_FAIL  # shutdown latched: only REBOOT restores torque
        if "ID" in new:
            new_id = new["ID"]
            if not 0 <= new_id <= pr.MAX_ID or (new_id in self.index and self.index[new_id] != k):
                return pr.ERR_DATA_RANGE
        return 0
