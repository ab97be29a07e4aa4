"""A virtual Feetech STS bus on a pseudo-terminal: N emulated STS servos answering the FT-SCS protocol byte for byte.

:class:`StsVirtualBus` is :class:`servo_ff.bus.virtual_bus.VirtualBus` (pty transport, serve loop, fault
injection, thermal model, clock, truth record, introspection) with the STS parts:

* framing :mod:`servo_ff.bus.protocol1` (``FF FF ID LEN INST params CHECKSUM``), instructions
  :mod:`.instructions`: PING, READ, WRITE, REG_WRITE/ACTION, SYNC_READ (0x82), SYNC_WRITE (0x83);
* registers :mod:`.registers` (sign-magnitude values, EPROM Lock, byte-wise writes), physics :mod:`.servos`
  (default model ``sts3215``: bam's STS3215 parameters under the sts3215 firmware law);
* the error byte of every status packet = the Status register (address 65: voltage, sensor, temperature, current,
  overload); a status bit that the Shutdown (Unloading Condition) register selects releases the torque;
  over-current and overload stay latched until Torque Enable is written 0 (the STS has no REBOOT);
* Status Return Level (8): 0 → only PING and READ / SYNC_READ are answered, 1 → every instruction; Return Delay
  Time (7, 2 µs) before each reply;
* :meth:`StsVirtualBus.power_cycle` restores the EPROM kept with Lock = 0 and the SRAM defaults (``brown_out(id)``,
  a servo that restarts by itself, is the same).

``sts3250`` (no identified parameters): the STS3215 parameters under the sts3250 law (12 V) unless ``params``.
"""

from __future__ import annotations

import dataclasses
import logging

import numpy as np

from ...models.firmware import FIRMWARE_LAWS
from ...models.params import ActuatorParams
from ...models.presets import preset
from .. import protocol1 as p1
from ..virtual_bus import VirtualBus
from ..virtual_options import VirtualBusOptions
from . import status
from .instructions import execute
from .registers import StsRegisterMemory
from .servos import StsServos

log = logging.getLogger(__name__)

DEFAULT_MODEL = "sts3215"


def sts_actuator(options: VirtualBusOptions) -> ActuatorParams:
    """``options.params``, else bam's STS3215 parameters (m1) under the firmware law of ``options.model``."""
    if options.params is not None:
        return options.params
    base = preset("sts3215", "m1")
    if options.model == "sts3215":
        return base
    if options.model not in FIRMWARE_LAWS:
        raise ValueError(f"model {options.model!r} has no firmware law; pass params= (or --params FILE)")
    return dataclasses.replace(base, actuator=options.model, firmware=FIRMWARE_LAWS[options.model])


class StsVirtualBus(VirtualBus):
    """N emulated STS servos on a pty (see the module notes); the constructor takes what
    :class:`~servo_ff.bus.virtual_bus.VirtualBus` takes (default model ``sts3215``)."""

    registers_class = StsRegisterMemory
    servos_class = StsServos
    decoder_class = p1.StreamDecoder1
    instruction_names = p1.INSTRUCTION_NAMES
    title = "Feetech"
    overload_bit = status.OVERLOAD

    def __init__(self, options: VirtualBusOptions | None = None, **keywords):
        if options is None:
            keywords.setdefault("model", DEFAULT_MODEL)
        super().__init__(options, **keywords)

    def _check_table(self, o: VirtualBusOptions) -> None:
        if self.table.protocol != "sts":
            raise ValueError(f"model {o.model} ({self.table.name}) speaks protocol {self.table.protocol}, not sts")

    def _actuator(self, o: VirtualBusOptions) -> ActuatorParams:
        return sts_actuator(o)

    def _baud_code(self, baud: int) -> int:
        return self.table.baud_codes[baud]

    def _registers_set(self) -> None:
        self.regs.save_flash()  # the configuration the servos were powered up with

    @property
    def enable(self) -> np.ndarray:
        """Torque enable per servo, 0.0 or 1.0 (Torque Enable = 1)."""
        return (self.regs.get("Torque Enable") == 1).astype(np.float64)

    # ------------------------------------------------------------------ faults and power
    def power_cycle(self, dxl_id: int) -> None:
        """Power ``dxl_id`` off and on: the saved EPROM (written with Lock = 0), SRAM defaults, torque off, goal =
        present position."""
        with self._lock:
            self.reboot(self._k(dxl_id))

    def reboot(self, k: int) -> None:
        """Servo index ``k`` powered off and on (the STS has no REBOOT instruction; see :meth:`power_cycle`)."""
        self.regs.power_cycle(k)
        self.servos.reboot(k)
        self._publish(self.servos.bank.supply_voltage)

    def _status_after_step(self, hw: np.ndarray, vin: float) -> None:
        """The status bits after a physics step: overload (fault schedule, in ``hw``), temperature (thermal model vs
        Temperature Limit), voltage (supply ``vin`` vs Min/Max Voltage Limit); then the Shutdown rule."""
        hot = self.thermal.overheated(self.regs.get("Temperature Limit"))
        hw = np.where(hot, hw | status.TEMPERATURE, hw & ~status.TEMPERATURE)
        vraw = vin / self.table.voltage_unit
        bad_v = (vraw < self.regs.get("Min Voltage Limit")) | (vraw > self.regs.get("Max Voltage Limit"))
        self._apply_shutdown(np.where(bad_v, hw | status.VOLTAGE, hw & ~status.VOLTAGE))

    def _apply_shutdown(self, hw: np.ndarray) -> None:
        """Status register := ``hw``; a bit the Shutdown (Unloading Condition) register selects releases the torque."""
        self.regs.set("Hardware Error Status", hw)
        trip = (hw & self.regs.get("Shutdown")) != 0
        if trip.any():
            self.regs.set("Torque Enable", 0, trip)

    # ------------------------------------------------------------------ register access
    def read_bytes(self, k: int, addr: int, length: int) -> bytes | None:
        return self.regs.read(k, addr, length)

    def write_bytes(self, k: int, addr: int, data: bytes) -> None:
        self.regs.write(k, addr, data)

    # ------------------------------------------------------------------ packet handling
    def answers(self, k: int, inst: int) -> bool:
        """Status Return Level: 0 → PING and reads only, 1 → every instruction; never while silent."""
        if self.silent[k]:
            return False
        if inst in (p1.INST_PING, p1.INST_READ, p1.INST_SYNC_READ):
            return True
        return self.regs.value(k, "Status Return Level") != 0

    def send_status(self, k: int, params: bytes = b"", sid: int | None = None) -> None:
        """A status packet of servo k (from id ``sid``, default its present ID) with its status bits as the error
        byte; reply faults, then Return Delay Time (and wire time) before it leaves."""
        error = self.regs.value(k, "Hardware Error Status") & 0x7F
        self.emit_status(k, error, p1.encode(self.ids[k] if sid is None else sid, error, params), params)

    def reply(self, k: int, inst: int, err: int = 0, data: bytes = b"", broadcast: bool = False) -> None:
        if not broadcast and self.answers(k, inst):
            self.send_status(k, data)

    def _instruction(self, pkt: p1.Packet1) -> int:
        return pkt.code

    def _execute(self, pkt: p1.Packet1) -> None:
        execute(self, pkt)
