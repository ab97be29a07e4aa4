"""``scservo_sdk`` packet handler and sync read that take their replies through :class:`~.port.StsPortHandler`.

* :class:`StsPacketHandler` — the SDK's ``protocol_packet_handler`` (its packet builders: ping, read, write,
  reg-write, action, sync read/write, unchanged) whose ``txRxPacket`` accepts only the addressed servo's reply
  of the length the instruction implies, within its slot; a late reply of an earlier transaction is discarded,
  never returned. Little-endian words (``SCS_END`` 0, as ``scservo_sdk.PacketHandler(0)`` sets for STS/SMS).
* :class:`TolerantSyncRead` — a ``GroupSyncRead`` that keeps every reply that arrived, by ID (the SDK's stops at
  the first missing one), with each reply's error (status) byte and arrival time.
"""

from __future__ import annotations

import time

import numpy as np
import scservo_sdk as scs
from scservo_sdk.protocol_packet_handler import PKT_ID, PKT_INSTRUCTION, PKT_LENGTH, PKT_PARAMETER0

from ..select_port import single_request
from ..sync_read_group import WindowedSyncRead
from .port import StsPortHandler, StsWindow

COMM_SUCCESS = scs.COMM_SUCCESS


class StsPacketHandler(scs.protocol_packet_handler):
    """Protocol handler of the STS (little-endian words) with windowed single-servo transactions."""

    def __init__(self) -> None:
        scs.SCS_SETEND(0)  # STS/SMS store words low byte first (memory table address 2 "END" = 0)

    def txRxPacket(self, port, txpacket):
        """One single-servo transaction through :meth:`StsPortHandler.receive`: returns ``(status packet as a list,
        result, error byte)``; other ports: the SDK's own method."""
        if not isinstance(port, StsPortHandler):
            return super().txRxPacket(port, txpacket)
        sid, inst = txpacket[PKT_ID], txpacket[PKT_INSTRUCTION]
        n = txpacket[PKT_PARAMETER0 + 1] if inst == scs.INST_READ else 0
        read = inst == scs.INST_READ and sid != scs.BROADCAST_ID
        req = single_request(port, txpacket, sid, read, n, PKT_PARAMETER0, 1)
        result = self.txPacket(port, txpacket)
        if result != COMM_SUCCESS:
            return None, result, 0
        if sid == scs.BROADCAST_ID:
            port.is_using = False
            return None, result, 0
        w = StsWindow((sid,), req.m, req.timing, time.monotonic(), txpacket[PKT_LENGTH] + 4)
        outcome = port.receive_one(w, read=read)
        if outcome == "ok":
            err, params = w.err[sid], req.item(w.data[sid])
            return [0xFF, 0xFF, sid, len(params) + 2, err, *params, 0], COMM_SUCCESS, err
        return None, (scs.COMM_RX_TIMEOUT if outcome == "timeouts" else scs.COMM_RX_CORRUPT), 0


class TolerantSyncRead(WindowedSyncRead, scs.GroupSyncRead):
    """``GroupSyncRead`` (SYNC_READ 0x82) whose replies go through :meth:`StsPortHandler.receive`: per-slot
    deadline, late replies of earlier transactions discarded, garbled frames charged to their own servo.

    After ``txRxPacket()``: ``received[id]`` = data bytes, ``errors[id]`` = status byte, ``stamps[id]`` = arrival
    time [s, monotonic], ``failed[id]`` = "timeouts" | "corrupt" | "wrong_length" for the servos without valid
    data; in the common case (every reply in the first chunk, in order) ``block`` (k, data_length) uint8 and
    ``block_err`` (k,) instead of the dictionaries. ``serial`` counts the instructions sent."""

    rx_timeout, rx_corrupt = scs.COMM_RX_TIMEOUT, scs.COMM_RX_CORRUPT

    def __init__(self, port, ph, start_address, data_length):
        super().__init__(port, ph, start_address, data_length)
        self.serial = 0
        self.received: dict[int, bytes] = {}
        self.errors: dict[int, int] = {}
        self.stamps: dict[int, float] = {}
        self.failed: dict[int, str] = {}
        self.block: np.ndarray | None = None
        self._head: np.ndarray | None = None  # expected FF FF id LEN of each reply
        self._head_ids: tuple = ()
        self._pos: tuple | None = None

    def rxPacket(self):
        ids = tuple(self.param)
        w = StsWindow(ids, self.data_length, self.port.timing, self.t_sent, 8 + len(ids), self._positions(ids))
        return self._receive(w)

    def _whole_block(self, data: bytes, t: float) -> bool:
        """Every reply in the first chunk, in request order, checksums right: ``block`` and ``block_err`` set."""
        ids = self.param
        k, n = len(ids), self.data_length
        if len(data) != k * (6 + n):
            return False
        rows = np.frombuffer(data, dtype=np.uint8).reshape(k, 6 + n)
        if self._head is None or self._head_ids != ids:
            self._head_ids = tuple(ids)
            self._head = np.array([[0xFF, 0xFF, i, n + 2] for i in ids], dtype=np.uint8)
        checksum = (~rows[:, 2:-1].sum(axis=1, dtype=np.uint32)).astype(np.uint8)
        if not (np.array_equal(rows[:, :4], self._head) and np.array_equal(checksum, rows[:, -1])):
            return False
        self.block = rows[:, 5 : 5 + n]
        self.block_err = rows[:, 4]
        self.block_ids = tuple(ids)
        self.block_stamp = t
        self.failed = {}
        self.window.last = k - 1
        self.port.scanner.stats.packets += k
        return True

    def isAvailable(self, scs_id, address, data_length):
        if self.block is not None:
            return scs_id in self.block_ids and self._in_range(address, data_length)
        return scs_id in self.received and self._in_range(address, data_length)

    def _in_range(self, address: int, data_length: int) -> bool:
        return self.start_address <= address and address + data_length <= self.start_address + self.data_length

    def getData(self, scs_id, address, data_length):
        if not self.isAvailable(scs_id, address, data_length):
            return 0
        if self.block is not None:
            row = self.block[self.block_ids.index(scs_id)].tobytes()
        else:
            row = self.received[scs_id]
        k = address - self.start_address
        return int.from_bytes(row[k : k + data_length], "little")
