"""Instruction handlers of the virtual STS bus (FT-SCS protocol), looked up in :data:`HANDLERS`.

Parameters are one-byte addresses and lengths: READ ``[addr, len]``, WRITE / REG_WRITE ``[addr, data…]``,
SYNC_READ (0x82) ``[addr, len, id…]`` (each listed servo answers in turn), SYNC_WRITE (0x83)
``[addr, len, (id, data × len)…]``. A handler gets the bus (``regs``, ``silent``, ``answers``, ``send_status``,
``truth``), the servo indices the packet addresses (every servo for the broadcast id), the parameters, the
instruction and whether it was broadcast. An unknown instruction, or a malformed one, gets no reply (the STS has
no instruction error); SYNC instructions are taken on the broadcast id only.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from .. import protocol1 as p1


def ping(bus, targets: list[int], prm: bytes, inst: int, bcast: bool) -> None:
    for k in sorted(targets, key=lambda k: bus.regs.ids[k]):
        if bus.answers(k, inst):
            bus.send_status(k)


def read(bus, targets: list[int], prm: bytes, inst: int, bcast: bool) -> None:
    if bcast or len(prm) != 2:
        return
    k = targets[0]
    data = bus.regs.read(k, prm[0], prm[1])
    if data is not None and bus.answers(k, inst):
        bus.send_status(k, data)


def write(bus, targets: list[int], prm: bytes, inst: int, bcast: bool) -> None:
    """WRITE and REG_WRITE (held until ACTION)."""
    if len(prm) < 2:
        return
    addr, data = prm[0], bytes(prm[1:])
    for k in targets:
        if bus.silent[k]:
            continue
        answers = bus.answers(k, inst)  # the level before this write decides (e.g. writing Status Return Level)
        sid = bus.regs.ids[k]  # the reply carries the id the packet addressed, even when it wrote a new ID
        if inst == p1.INST_REG_WRITE:
            bus.regs.register(k, addr, data)
        else:
            bus.regs.write(k, addr, data)
        if answers and not bcast:
            bus.send_status(k, sid=sid)


def action(bus, targets: list[int], prm: bytes, inst: int, bcast: bool) -> None:
    for k in targets:
        if bus.silent[k] or k not in bus.regs.registered:
            continue
        bus.regs.action(k)
        if not bcast and bus.answers(k, inst):
            bus.send_status(k)


def sync_read(bus, targets: list[int], prm: bytes, inst: int, bcast: bool) -> None:
    if len(prm) < 3:
        return
    addr, length = prm[0], prm[1]
    if bus.truth is not None:
        bus.truth.begin_read(addr, length, len(prm) - 2, time.monotonic())
    for i in prm[2:]:
        k = bus.regs.index.get(i)
        if k is not None and bus.answers(k, inst):
            data = bus.regs.read(k, addr, length)
            if data is not None:
                bus.send_status(k, data)
    if bus.truth is not None:
        bus.truth.end_read()


def sync_write(bus, targets: list[int], prm: bytes, inst: int, bcast: bool) -> None:
    if len(prm) < 2:
        return
    addr, length = prm[0], prm[1]
    body = prm[2:]
    if length == 0 or len(body) % (length + 1):
        return  # malformed: dropped
    if bus.truth is not None:
        bus.truth.sync_write(addr, length, bytes(body), time.monotonic())
    for j in range(0, len(body), length + 1):
        k = bus.regs.index.get(body[j])
        if k is not None and not bus.silent[k]:
            bus.regs.write(k, addr, bytes(body[j + 1 : j + 1 + length]))


Handler = Callable[..., None]
#: instruction → (handler, broadcast only)
HANDLERS: dict[int, tuple[Handler, bool]] = {
    p1.INST_PING: (ping, False),
    p1.INST_READ: (read, False),
    p1.INST_WRITE: (write, False),
    p1.INST_REG_WRITE: (write, False),
    p1.INST_ACTION: (action, False),
    p1.INST_SYNC_READ: (sync_read, True),
    p1.INST_SYNC_WRITE: (sync_write, True),
}


def execute(bus, pkt: p1.Packet1) -> None:
    """Run one instruction packet against ``bus`` (replies are queued by ``bus.send_status``)."""
    bcast = pkt.id == p1.BROADCAST_ID
    if not bcast and pkt.id not in bus.regs.index:
        return
    handler, broadcast_only = HANDLERS.get(pkt.code, (None, False))
    if handler is None or (broadcast_only and not bcast):
        return
    targets = list(range(bus.regs.n)) if bcast else [bus.regs.index[pkt.id]]
    handler(bus, targets, pkt.params, pkt.code, bcast)
