"""The virtual Dynamixel Protocol 2.0 bus: :class:`VirtualBus2`, the 2.0 packet layer over the shared
:class:`servo_ff.bus.virtual_bus.VirtualBus` (pty, serve loop, physics, faults, thermal model, truth record).

It answers byte for byte as N servos: PING, READ, WRITE, SYNC_READ, SYNC_WRITE, BULK_READ, BULK_WRITE, REBOOT (and
REG_WRITE/ACTION) (:mod:`.instructions`), status packets with the error byte (bit 7 alert while Hardware Error
Status ≠ 0), Status Return Level and Return Delay Time honoured, EEPROM lock while torque is on, indirect addresses
168–/224– (:mod:`.registers`); framing and streaming decoder :mod:`.protocol`, :mod:`.stream`.
``VirtualBus(ids=..., model="mx106")`` builds one (the ``dxl2`` row of :data:`servo_ff.bus.families.FAMILIES`).
"""

from __future__ import annotations

import numpy as np

from .. import control_table as ct
from ..virtual_bus import VirtualBus
from . import protocol as pr
from .instructions import execute
from .registers import RegisterMemory2
from .stream import StreamDecoder
from .stream import warm_up as stream_warm_up


class VirtualBus2(VirtualBus):
    """N emulated Protocol 2.0 servos on a pty (see the module); built as :class:`~servo_ff.bus.virtual_bus.VirtualBus`
    is, with a ``dxl2`` table as ``model``."""

    registers_class = RegisterMemory2
    decoder_class = StreamDecoder
    instruction_names = pr.INSTRUCTION_NAMES
    title = "Dynamixel"

    def _warm_up(self) -> None:
        super()._warm_up()
        stream_warm_up()

    @property
    def goal(self) -> np.ndarray:
        """Goal positions [rad] (the Goal Position registers)."""
        return ct.counts_to_rad(self.regs.get("Goal Position"))

    # ------------------------------------------------------------------ packet handling
    def answers(self, k: int, inst: int) -> bool:
        """Status Return Level: 0 → PING only, 1 → PING and reads, 2 → all."""
        if self.silent[k]:
            return False
        if inst == pr.INST_PING:
            return True
        level = self.regs.value(k, "Status Return Level")
        if level == 0:
            return False
        if level == 1:
            return inst in (pr.INST_READ, pr.INST_SYNC_READ, pr.INST_BULK_READ)
        return True

    def send_status(self, k: int, error: int, params: bytes = b"") -> None:
        """A status packet of servo k: the alert bit while a hardware error is latched, then :meth:`emit_status`."""
        if self.regs.value(k, "Hardware Error Status"):
            error |= pr.ERR_ALERT
        self.emit_status(k, error & 0x7F, pr.encode_status(self.ids[k], error, params), params)

    def _instruction(self, pkt: pr.Packet) -> int | None:
        """The instruction of ``pkt`` (None: not an instruction, e.g. our own echo or another device's status)."""
        return None if pkt.is_status else pkt.instruction

    def _execute(self, pkt: pr.Packet) -> None:
        """Run the instruction ``pkt`` (the protocol's handler table)."""
        execute(self, pkt)
