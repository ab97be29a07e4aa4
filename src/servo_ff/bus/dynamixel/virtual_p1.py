"""The virtual bus speaking Dynamixel Protocol 1.0 byte for byte (MX-64/MX-106 on 1.0 firmware, AX-12A):
:class:`VirtualBus1`, the protocol-specific packet layer over the parts of :class:`servo_ff.bus.virtual_bus.VirtualBus`.

Reused unchanged: the pty transport, the serve loop, the servo bank physics advanced by wall-clock time, reply
faults (drop, corrupt, late), scheduled faults (silence, overload, supply sag), the thermal model and the truth
record. Specific to 1.0 (ROBOTIS e-manual, "Protocol 1.0" and the MX/AX control tables):

* framing :mod:`servo_ff.bus.protocol1` (``FF FF ID LEN INST/ERR params CHECKSUM``);
* instructions PING, READ, WRITE, REG_WRITE/ACTION, SYNC_WRITE and BULK_READ (MX only: an AX answers it with an
  instruction error; answered in a chain: a servo that does not answer silences the ones after it); REBOOT, RESET
  and anything else → instruction error; broadcast instructions get no status;
* the status error byte: instruction errors of this packet (range, angle limit, instruction) or'ed with the
  servo's alarm bits — input voltage (supply outside Min/Max Voltage Limit), overheating (above Temperature Limit,
  thermal model), overload (scheduled ``overload_at`` or :meth:`inject_overload`) — the bits the Shutdown register
  (18) selects cut the output as the 1.0 firmware does: Torque Limit (34) := 0, Torque Enable (24) left as it is
  (:meth:`VirtualBus1._apply_shutdown`). Overload stays latched until Torque Limit is written non-zero or Torque
  Enable is written (the 1.0 bus's reboot equivalent), the other two last as long as their cause;
* Status Return Level (16) and Return Delay Time (5); no EEPROM lock while torque is on (1.0 has Lock, 47);
* registers → the firmware law: Goal Position in the table's units, P Gain (28) = bam kp, or on the AX the
  Compliance Slope as P = 1024 / slope; Torque Limit (34, "PWM Limit") 0–1023 = 0–100 % duty.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import numpy as np

from ...models import slots
from .. import control_table as ct
from .. import protocol1 as p1
from ..registers import RegisterMemory
from ..virtual_bus import VirtualBus
from ..virtual_options import VirtualBusOptions
from ..virtual_servos import VirtualServos
from .p1_units import BULK_READ_MODELS, baud_code, p_of_slope

log = logging.getLogger(__name__)
TORQUE_FULL_SCALE = 1023  # Torque Limit / Max Torque: 1023 = 100 %


class RegisterMemory1(RegisterMemory):
    """The register memory with the 1.0 firmware's rules: byte-wise writes (the 1.0 tables list L and H bytes),
    read-only items, EEPROM items while Lock (47) = 1, and addresses past the table → Range Error; a Goal Position
    outside CW/CCW Angle Limit (unless both are 0: wheel mode) → Angle Limit Error; nothing is written then."""

    no_action_error = p1.ERR_INSTRUCTION  # ACTION without REG_WRITE (e-manual, Instruction Error)

    def __init__(self, table: ct.ControlTable, ids):
        super().__init__(table, ids)
        self.size = max(it.address + it.size for it in table.items)
        self.on_torque_write: Callable[[int], None] | None = None

    def read(self, k: int, addr: int, length: int) -> tuple[int, bytes]:
        if length <= 0 or addr + length > self.size:
            return p1.ERR_RANGE, b""
        return 0, self.mem[k, addr : addr + length].tobytes()

    def write(self, k: int, addr: int, data: bytes) -> int:
        n = len(data)
        if n == 0 or addr + n > self.size:
            return p1.ERR_RANGE
        touched = {}
        for a in range(addr, addr + n):
            it = self.table.at(a)
            if it is not None:
                touched[it.name] = it
        locked = "Lock" in self.table.by_name and self.value(k, "Lock") != 0
        if any(not it.writable or (it.eeprom and locked) for it in touched.values()):
            return p1.ERR_RANGE
        row = self.mem[k].copy()
        row[addr : addr + n] = np.frombuffer(bytes(data), dtype=np.uint8)
        new = {
            name: int.from_bytes(row[it.address : it.address + it.size].tobytes(), "little")
            for name, it in touched.items()
        }
        err = self._refuse1(k, new)
        if err:
            return err
        for it in touched.values():  # reserved bytes between items are not stored
            self.mem[k, it.address : it.address + it.size] = row[it.address : it.address + it.size]
        if "ID" in new and new["ID"] != self.ids[k]:
            del self.index[self.ids[k]]
            self.ids[k] = new["ID"]
            self.index[self.ids[k]] = k
        if ("Torque Enable" in new or new.get("PWM Limit", 0) != 0) and self.on_torque_write is not None:
            self.on_torque_write(k)
        return 0

    def _refuse1(self, k: int, new: dict[str, int]) -> int:
        if "Goal Position" in new:
            lo, hi = self.value(k, "Min Position Limit"), self.value(k, "Max Position Limit")
            if (lo or hi) and not lo <= new["Goal Position"] <= hi:
                return p1.ERR_ANGLE_LIMIT
        if new.get("Torque Enable", 0) not in (0, 1):
            return p1.ERR_RANGE
        if "ID" in new and (new["ID"] > p1.MAX_ID or self.index.get(new["ID"], k) != k):
            return p1.ERR_RANGE
        return 0


def _sign_magnitude(v: np.ndarray, bit: int) -> np.ndarray:
    mag = np.minimum(np.abs(v), (1 << bit) - 1).astype(np.int64)
    return np.where(v < 0, (1 << bit) | mag, mag)


class VirtualServos1(VirtualServos):
    """The servo bank wired to a 1.0 table: units and encodings from the table (sign-magnitude speed and load)."""

    def inputs(self) -> None:
        """As the 2.0 bank; Torque Limit (34) 0 frees the motor as torque off does (e-manual: "the motor loses its
        torque because the value becomes 0"; not a 0 V drive, which would brake it through its back-EMF)."""
        r, b, t = self.regs, self.bank, self.regs.table
        b.goal = t.position_to_rad(r.get("Goal Position"))
        b.enable = ((r.get("Torque Enable") != 0) & (r.get("PWM Limit") != 0)).astype(np.float64)
        if "Position P Gain" in t.by_name:
            b.packed[:, slots.KP] = r.get("Position P Gain") / t.p_gain_per_kp
        else:  # AX: P = 1024 / Compliance Slope (the steeper of CW/CCW; the margins are not emulated)
            slope = np.minimum(r.get("CW Compliance Slope"), r.get("CCW Compliance Slope"))
            b.packed[:, slots.KP] = [p_of_slope(s) for s in slope]
        b.packed[:, slots.MAXPWM] = np.maximum(np.minimum(self.max_pwm, r.get("PWM Limit") / TORQUE_FULL_SCALE), 1e-6)

    def publish(self, vin: float, temp: np.ndarray, elapsed: float) -> None:
        r, b, t = self.regs, self.bank, self.regs.table
        bit = t.sign_bit or 10
        load = np.rint(b.tau_m / (t.stall_torque or 1.0) / t.load_unit)
        r.set("Present Load", _sign_magnitude(load, bit))
        r.set("Present Velocity", _sign_magnitude(np.rint(b.dtheta / t.velocity_unit), bit))
        top = t.item("Max Position Limit").default
        r.set("Present Position", np.clip(np.rint(b.theta / t.rad_per_count + t.center), 0, top))
        r.set("Present Input Voltage", min(round(vin / t.voltage_unit), 255))
        r.set("Present Temperature", np.clip(np.rint(temp), 0, 255))
        r.set("Moving", (np.abs(b.dtheta) > 10 * t.velocity_unit).astype(np.int64))
        if "Realtime Tick" in t.by_name:
            r.set("Realtime Tick", int(elapsed * 1000) % 32768)
        if "Current" in t.by_name:  # MX: I = 4.5 mA · (value − 2048)
            r.set("Current", np.clip(np.rint(2048 + self.amps() / 4.5e-3), 0, 4095))


class VirtualBus1(VirtualBus):
    """N emulated Protocol 1.0 servos on a pty (see the module). ``VirtualBus1(options)`` or
    ``VirtualBus1(**keywords)`` as :class:`servo_ff.bus.virtual_bus.VirtualBus`, with a ``dxl1`` table as ``model``."""

    registers_class = RegisterMemory1
    servos_class = VirtualServos1
    decoder_class = p1.StreamDecoder1
    instruction_names = p1.INSTRUCTION_NAMES
    title = "Dynamixel"
    #: BULK_READ answered in a chain, as the firmware does (False: each listed servo answers on its own)
    bulk_read_chain = True

    def _check_table(self, o: VirtualBusOptions) -> None:
        if self.table.protocol != "dxl1":
            raise ValueError(f"servo {o.model} ({self.table.name}) speaks protocol {self.table.protocol}, not dxl1")

    def _baud_code(self, baud: int) -> int:
        return baud_code(baud, self.table)

    def _registers_set(self) -> None:
        self.regs.on_torque_write = self._torque_written
        self.alarm = np.zeros(self.n, dtype=np.int64)  # alarm bits (Hardware Error Status layout = 1.0 bits)

    @property
    def hw_error(self) -> np.ndarray:
        """Alarm bits per servo (a copy; bits 0, 2, 5 as in Hardware Error Status and the 1.0 error byte)."""
        return self.alarm.copy()

    def _apply_shutdown(self, hw: np.ndarray) -> None:
        """Alarms := ``hw`` with overheating while the temperature is above its limit; a bit Shutdown (18) selects
        sets Torque Limit (34) to 0 and leaves Torque Enable (24) alone, as long as the alarm lasts; the 0 stays
        until Torque Limit is written (ROBOTIS e-manual, AX-12A and MX-28 (1.0) control tables,
        https://emanual.robotis.com/docs/en/dxl/ax/ax-12a/#torque-limit : "If the function of Alarm Shutdown is
        triggered, the motor loses its torque because the value becomes 0. Once error conditions are resolved and
        this value is changed to the value other than 0, the motor can be operated again"; Alarm Shutdown (18),
        https://emanual.robotis.com/docs/en/dxl/mx/mx-28/#alarm-led17-shutdown18 : the output becomes 0 % — unlike
        2.0, where Torque Enable is cleared)."""
        hot = self.thermal.overheated(self.regs.get("Temperature Limit"))
        self.alarm[:] = np.where(hot, hw | ct.HW_OVERHEATING, hw & ~ct.HW_OVERHEATING)
        trip = (self.alarm & self.regs.get("Shutdown")) != 0
        if trip.any():
            self.regs.set("PWM Limit", 0, trip)

    def _torque_written(self, k: int) -> None:
        """A write of Torque Enable, or of Torque Limit non-zero, releases a latched overload (its cause is checked
        again by the physics)."""
        self.alarm[k] &= ~ct.HW_OVERLOAD

    def reboot(self, k: int) -> None:
        raise NotImplementedError("Protocol 1.0 MX/AX firmware has no REBOOT instruction")

    def brown_out(self, dxl_id: int) -> None:
        """``dxl_id`` restarts by itself (a supply brown-out): the RAM area (from Torque Enable, 24) back to its
        defaults (torque off, P gain / compliance; Torque Limit (34) := Max Torque (14), as at power-on), alarms
        cleared, goal = present position; the EEPROM (ID, return delay, limits) is kept."""
        with self._lock:
            k = self._k(dxl_id)
            ram = self.table.item("Torque Enable").address
            self.regs.mem[k, ram:] = np.frombuffer(self.table.defaults(dxl_id), dtype=np.uint8)[ram:]
            self.regs.set("PWM Limit", self.regs.value(k, "Max Torque"), [k])
            self.regs.registered.pop(k, None)
            self.alarm[k] = 0
            self.servos.bank.reboot([k])
            self.regs.set("Goal Position", int(self.table.rad_to_position(self.servos.bank.theta[k])), [k])
            self.servos.inputs()
            self._publish(self.servos.bank.supply_voltage)

    # ------------------------------------------------------------------ packet handling
    def answers(self, k: int, inst: int) -> bool:
        """Status Return Level (16): 0 → PING only, 1 → PING and READ (BULK_READ), 2 → all."""
        if self.silent[k]:
            return False
        if inst == p1.INST_PING:
            return True
        level = self.regs.value(k, "Status Return Level")
        return level >= 2 or (level == 1 and inst in (p1.INST_READ, p1.INST_BULK_READ))

    def send_status(self, k: int, error: int, params: bytes = b"") -> None:
        """A status packet of servo k: its alarm bits or'ed into the error byte, reply faults, Return Delay Time."""
        error |= int(self.alarm[k]) & 0x7F
        self.emit_status(k, error, p1.encode(self.ids[k], error, params), params)

    def _instruction(self, pkt: p1.Packet1) -> int:
        return pkt.code

    def _execute(self, pkt: p1.Packet1) -> None:
        execute1(self, pkt)


# ---------------------------------------------------------------------- instruction handlers (Protocol 1.0)
def _ping(bus: VirtualBus1, targets, prm: bytes, inst: int, bcast: bool) -> None:
    for k in targets:
        bus.reply(k, inst, 0, broadcast=bcast)


def _read(bus: VirtualBus1, targets, prm: bytes, inst: int, bcast: bool) -> None:
    if bcast:
        return
    k = targets[0]
    if len(prm) != 2:
        return bus.reply(k, inst, p1.ERR_RANGE)
    bus.reply(k, inst, *bus.regs.read(k, prm[0], prm[1]))


def _write(bus: VirtualBus1, targets, prm: bytes, inst: int, bcast: bool) -> None:
    """WRITE and REG_WRITE (held until ACTION)."""
    for k in targets:
        answers = bus.answers(k, inst)  # the level before this write decides
        if len(prm) < 2:
            err = p1.ERR_RANGE
        elif inst == p1.INST_REG_WRITE:
            bus.regs.register(k, prm[0], bytes(prm[1:]))
            err = 0
        elif bus.silent[k]:
            continue
        else:
            err = bus.regs.write(k, prm[0], bytes(prm[1:]))
        if answers and not bcast:
            bus.send_status(k, err)


def _action(bus: VirtualBus1, targets, prm: bytes, inst: int, bcast: bool) -> None:
    for k in targets:
        bus.reply(k, inst, bus.regs.action(k), broadcast=bcast)


def _sync_write(bus: VirtualBus1, targets, prm: bytes, inst: int, bcast: bool) -> None:
    if len(prm) < 2:
        return
    addr, length, body = prm[0], prm[1], prm[2:]
    if length == 0 or len(body) % (length + 1):
        return  # malformed: dropped (no status for broadcast)
    if bus.truth is not None:
        bus.truth.sync_write(addr, length, bytes(body), time.monotonic())
    for j in range(0, len(body), length + 1):
        k = bus.regs.index.get(body[j])
        if k is not None and not bus.silent[k]:
            bus.regs.write(k, addr, body[j + 1 : j + 1 + length])


def _bulk_read(bus: VirtualBus1, targets, prm: bytes, inst: int, bcast: bool) -> None:
    """``0x00, [length, id, address]…``: the listed servos answer in list order (MX); an AX answers an
    instruction error. In a chain (``bus.bulk_read_chain``, the firmware's way): each servo sends its status packet
    once the one listed before it has sent its own (ROBOTIS e-manual, Protocol 1.0, Bulk Read,
    https://emanual.robotis.com/docs/en/dxl/protocol1/#bulk-read: ID 2 monitors the status packet of ID 1, the
    preceding device, on the bus and sends its own when that one is complete), so a servo that does not answer
    (silent, absent, Status Return Level 0) silences every one after it. Reply faults (drop, corrupt, late) act
    between the bus and the host: the chain goes on."""
    if len(prm) < 4 or (len(prm) - 1) % 3:
        return
    triples = [(prm[j], prm[j + 1], prm[j + 2]) for j in range(1, len(prm), 3)]
    mx = bus.table.model_number in BULK_READ_MODELS
    if bus.truth is not None and mx:
        bus.truth.begin_read(triples[0][2], triples[0][0], len(triples), time.monotonic())
    for length, i, addr in triples:
        k = bus.regs.index.get(i)
        if k is not None and bus.answers(k, inst):
            bus.send_status(k, *(bus.regs.read(k, addr, length) if mx else (p1.ERR_INSTRUCTION,)))
        elif bus.bulk_read_chain:
            break  # the next one waits for a status packet that never comes
    if bus.truth is not None:
        bus.truth.end_read()


#: instruction → (handler, broadcast only)
HANDLERS1 = {
    p1.INST_PING: (_ping, False),
    p1.INST_READ: (_read, False),
    p1.INST_WRITE: (_write, False),
    p1.INST_REG_WRITE: (_write, False),
    p1.INST_ACTION: (_action, False),
    p1.INST_SYNC_WRITE: (_sync_write, True),
    p1.INST_BULK_READ: (_bulk_read, True),
}


def execute1(bus: VirtualBus1, pkt: p1.Packet1) -> None:
    """Run one Protocol 1.0 instruction packet against ``bus`` (replies are queued by ``bus.send_status``)."""
    bcast = pkt.id == p1.BROADCAST_ID
    if not bcast and pkt.id not in bus.regs.index:
        return
    targets = sorted(range(bus.regs.n), key=lambda k: bus.regs.ids[k]) if bcast else [bus.regs.index[pkt.id]]
    handler, broadcast_only = HANDLERS1.get(pkt.code, (None, False))
    if handler is None or (broadcast_only and not bcast):
        for k in targets:
            bus.reply(k, pkt.code, p1.ERR_INSTRUCTION, broadcast=bcast)
        return
    handler(bus, targets, pkt.params, pkt.code, bcast)
