"""Instruction handlers of the virtual bus: one function per Protocol 2.0 instruction, looked up in :data:`HANDLERS`.

A handler gets the bus (its register memory ``regs``, the scheduled faults' ``silent`` flags, ``answers``,
``send_status``, ``reply``, ``reboot`` and ``truth``), the servo indices the packet addresses (every servo for
the broadcast id), the parameter bytes and the instruction. SYNC and BULK instructions are broadcast only; an
instruction without a handler (or a broadcast-only one sent to one id) is answered with an Instruction Error.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from . import protocol as pr


def _u16(b: bytes, j: int) -> int:
    return b[j] | b[j + 1] << 8


def ping(bus, targets: list[int], prm: bytes, inst: int, bcast: bool) -> None:
    regs = bus.regs
    for k in sorted(targets, key=lambda k: regs.ids[k]):
        if bus.answers(k, inst):
            bus.send_status(k, 0, regs.item_bytes(k, "Model Number") + regs.item_bytes(k, "Firmware Version"))


def read(bus, targets: list[int], prm: bytes, inst: int, bcast: bool) -> None:
    if bcast:
        return
    k = targets[0]
    if len(prm) != 4:
        return bus.reply(k, inst, pr.ERR_DATA_LENGTH)
    err, data = bus.regs.read(k, _u16(prm, 0), _u16(prm, 2))
    bus.reply(k, inst, err, data)


def write(bus, targets: list[int], prm: bytes, inst: int, bcast: bool) -> None:
    """WRITE and REG_WRITE (held until ACTION)."""
    if len(prm) < 3:
        for k in targets:
            bus.reply(k, inst, pr.ERR_DATA_LENGTH, broadcast=bcast)
        return
    addr, data = _u16(prm, 0), bytes(prm[2:])
    for k in targets:
        answers = bus.answers(k, inst)  # the level before this write decides (e.g. writing Status Return Level)
        if inst == pr.INST_REG_WRITE:
            bus.regs.register(k, addr, data)
            err = 0
        elif bus.silent[k]:
            continue
        else:
            err = bus.regs.write(k, addr, data)
        if answers and not bcast:
            bus.send_status(k, err)


def action(bus, targets: list[int], prm: bytes, inst: int, bcast: bool) -> None:
    for k in targets:
        bus.reply(k, inst, bus.regs.action(k), broadcast=bcast)


def reboot(bus, targets: list[int], prm: bytes, inst: int, bcast: bool) -> None:
    for k in targets:
        bus.reply(k, inst, 0, broadcast=bcast)
        if not bus.silent[k]:
            bus.reboot(k)


def sync_read(bus, targets: list[int], prm: bytes, inst: int, bcast: bool) -> None:
    if len(prm) < 5:
        return
    addr, length = _u16(prm, 0), _u16(prm, 2)
    if bus.truth is not None:
        bus.truth.begin_read(addr, length, len(prm) - 4, time.monotonic())
    for i in prm[4:]:
        k = bus.regs.index.get(i)
        if k is not None and bus.answers(k, inst):
            bus.send_status(k, *bus.regs.read(k, addr, length))
    if bus.truth is not None:
        bus.truth.end_read()


def sync_write(bus, targets: list[int], prm: bytes, inst: int, bcast: bool) -> None:
    if len(prm) < 4:
        return
    addr, length = _u16(prm, 0), _u16(prm, 2)
    body = prm[4:]
    if length == 0 or len(body) % (length + 1):
        return  # malformed: the firmware drops it (no status for broadcast)
    if bus.truth is not None:
        bus.truth.sync_write(addr, length, bytes(body), time.monotonic())
    for j in range(0, len(body), length + 1):
        k = bus.regs.index.get(body[j])
        if k is not None and not bus.silent[k]:
            bus.regs.write(k, addr, body[j + 1 : j + 1 + length])


def bulk_read(bus, targets: list[int], prm: bytes, inst: int, bcast: bool) -> None:
    if len(prm) % 5:
        return
    for j in range(0, len(prm), 5):
        k = bus.regs.index.get(prm[j])
        if k is not None and bus.answers(k, inst):
            bus.send_status(k, *bus.regs.read(k, _u16(prm, j + 1), _u16(prm, j + 3)))


def bulk_write(bus, targets: list[int], prm: bytes, inst: int, bcast: bool) -> None:
    j = 0
    while j + 5 <= len(prm):
        i, addr, length = prm[j], _u16(prm, j + 1), _u16(prm, j + 3)
        data = prm[j + 5 : j + 5 + length]
        if len(data) != length:
            break
        k = bus.regs.index.get(i)
        if k is not None and not bus.silent[k]:
            bus.regs.write(k, addr, data)
        j += 5 + length


Handler = Callable[..., None]
#: instruction → (handler, broadcast only)
HANDLERS: dict[int, tuple[Handler, bool]] = {
    pr.INST_PING: (ping, False),
    pr.INST_READ: (read, False),
    pr.INST_WRITE: (write, False),
    pr.INST_REG_WRITE: (write, False),
    pr.INST_ACTION: (action, False),
    pr.INST_REBOOT: (reboot, False),
    pr.INST_SYNC_READ: (sync_read, True),
    pr.INST_SYNC_WRITE: (sync_write, True),
    pr.INST_BULK_READ: (bulk_read, True),
    pr.INST_BULK_WRITE: (bulk_write, True),
}


def execute(bus, pkt: pr.Packet) -> None:
    """Run one instruction packet against ``bus`` (replies are queued by ``bus.send_status``)."""
    bcast = pkt.id == pr.BROADCAST_ID
    if not bcast and pkt.id not in bus.regs.index:
        return
    targets = list(range(bus.regs.n)) if bcast else [bus.regs.index[pkt.id]]
    handler, broadcast_only = HANDLERS.get(pkt.instruction, (None, False))
    if handler is None or (broadcast_only and not bcast):
        for k in targets:
            bus.reply(k, pkt.instruction, pr.ERR_INSTRUCTION, broadcast=bcast)
        return
    handler(bus, targets, pkt.params, pkt.instruction, bcast)
