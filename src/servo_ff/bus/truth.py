"""Truth record of the virtual bus: every sync read it received, what it did with each reply, every sync write.

A client's k-th sync read of an address is the bus's k-th one (instruction packets are never faulted), so a state
entry reported valid can be checked against the reply the bus actually sent for that very transaction: same
payload, intact, and not sent before the instruction. Columns are compact arrays (a 20,000-cycle run of 16
servos is a few MB); :meth:`TruthRecord.save` writes them to ``.npz``, :func:`load` reads them back.
"""

from __future__ import annotations

import time
from array import array

import numpy as np

WIDTH = 16  # payload bytes kept per reply / write (zero-padded)


class TruthRecord:
    """Append-only columns; ``reading`` is the index of the sync read being answered (−1 outside one)."""

    def __init__(self) -> None:
        self.t0 = time.monotonic()
        self.rd_t, self.rd_addr, self.rd_len, self.rd_n = array("d"), array("i"), array("i"), array("i")
        self.rp_read, self.rp_id, self.rp_fate, self.rp_late = array("i"), array("B"), array("B"), array("B")
        self.rp_t, self.rp_len, self.rp_data = array("d"), array("H"), bytearray()
        self.wr_t, self.wr_id, self.wr_addr, self.wr_len, self.wr_data = (
            array("d"),
            array("B"),
            array("i"),
            array("i"),
            bytearray(),
        )
        self.reading = -1

    def begin_read(self, addr: int, length: int, n_ids: int, t: float) -> None:
        self.reading = len(self.rd_t)
        self.rd_t.append(t)
        self.rd_addr.append(addr)
        self.rd_len.append(length)
        self.rd_n.append(n_ids)

    def end_read(self) -> None:
        self.reading = -1

    def reply(self, dxl_id: int, fate: int, late: bool, t: float, params: bytes) -> None:
        """One status packet of the current sync read, sent at ``t`` (NaN: dropped); ``params``: its data as encoded
        (before any fault)."""
        if self.reading < 0:
            return
        self.rp_read.append(self.reading)
        self.rp_id.append(dxl_id)
        self.rp_fate.append(fate)
        self.rp_late.append(1 if late else 0)
        self.rp_t.append(t)
        self.rp_len.append(len(params))
        self.rp_data += params[:WIDTH].ljust(WIDTH, b"\0")

    def sync_write(self, addr: int, length: int, body: bytes, t: float) -> None:
        """A SYNC_WRITE's (id, data…) blocks as received."""
        for j in range(0, len(body) - length, length + 1):
            self.wr_t.append(t)
            self.wr_id.append(body[j])
            self.wr_addr.append(addr)
            self.wr_len.append(length)
            self.wr_data += bytes(body[j + 1 : j + 1 + length])[:WIDTH].ljust(WIDTH, b"\0")

    def arrays(self) -> dict[str, np.ndarray]:
        """The columns as arrays, cut to whole rows. Each is copied without exporting its buffer: while a view of
        ``array`` exists, the bus thread's append raises BufferError (the reply is lost mid-row and the columns
        stay misaligned: every later reply audited against its neighbour's truth)."""
        out = {"t0": np.array(self.t0)}
        for k in (
            "rd_t",
            "rd_addr",
            "rd_len",
            "rd_n",
            "rp_read",
            "rp_id",
            "rp_fate",
            "rp_late",
            "rp_t",
            "rp_len",
            "wr_t",
            "wr_id",
            "wr_addr",
            "wr_len",
        ):
            col = getattr(self, k)[:]  # a copy in one C call: never a view of the column the bus appends to
            out[k] = np.frombuffer(col, dtype=col.typecode) if len(col) else np.zeros(0, dtype=col.typecode)
        for k in ("rp_data", "wr_data"):
            raw = bytes(getattr(self, k))
            out[k] = np.frombuffer(raw[: len(raw) // WIDTH * WIDTH], dtype=np.uint8).reshape(-1, WIDTH)
        for group in ("rd_", "rp_", "wr_"):  # taken while the bus appends a row field by field: whole rows only
            keys = [k for k in out if k.startswith(group)]
            n = min(len(out[k]) for k in keys)
            for k in keys:
                out[k] = out[k][:n]
        return out

    def save(self, path: str) -> None:
        np.savez(path, **self.arrays())


def load(path: str) -> dict[str, np.ndarray]:
    """The arrays of a saved :class:`TruthRecord`."""
    with np.load(path) as z:
        return {k: z[k] for k in z.files}


def reads_of(truth: dict[str, np.ndarray], addr: int) -> np.ndarray:
    """Indices (into ``rd_*``) of the sync reads of ``addr``, in the order the bus received them."""
    return np.flatnonzero(truth["rd_addr"] == addr)


class Audit:
    """Client state entries checked against the truth record (see :func:`audit_states`)."""

    def __init__(self) -> None:
        self.checked = 0  # valid entries checked
        self.stale_valid = 0  # valid entries whose transaction got no intact reply with that payload
        self.before_sent = 0  # valid entries stamped before the bus sent their reply
        self.intact_invalid = 0  # intact, on-time replies the client reported invalid
        self.held_invalid = 0  # intact replies held back (late fault) and reported invalid: expected
        self.unserved = 0  # client reads the bus never served (it was stopped first)
        self.examples: list[str] = []


def audit_states(truth: dict[str, np.ndarray], records, addr: int, decode, offset: int = 0) -> Audit:
    """Check ``records`` = iterable of ``(serial, ids, valid, values, stamps)`` — ``serial`` the client's 1-based
    count of sync reads of ``addr``, ``values`` an (n, m) array of what it reported per id — against the truth:
    ``decode(payload bytes) -> m values`` must reproduce the reported values from the intact reply the bus sent
    for that very transaction. ``offset``: sync reads of ``addr`` the bus had served before the client started."""
    reads = reads_of(truth, addr)
    index = {(int(r), int(i)): k for k, (r, i) in enumerate(zip(truth["rp_read"], truth["rp_id"]))}
    a = Audit()
    for serial, ids, valid, values, stamps in records:
        if offset + serial - 1 >= len(reads):  # the bus stopped before it served this instruction
            a.unserved += 1
            continue
        r = int(reads[offset + serial - 1])
        for j, i in enumerate(ids):
            k = index.get((r, int(i)))
            intact = k is not None and truth["rp_fate"][k] == 0
            if not valid[j]:
                if intact:
                    if truth["rp_late"][k]:
                        a.held_invalid += 1
                    else:
                        a.intact_invalid += 1
                continue
            a.checked += 1
            n = int(truth["rp_len"][k]) if k is not None else 0
            if not intact or not np.array_equal(decode(bytes(truth["rp_data"][k][:n])), values[j]):
                a.stale_valid += 1
                if len(a.examples) < 5:
                    fate = "none" if k is None else ("intact" if intact else "not intact")
                    a.examples.append(
                        f"read {serial} id {i}: reported {values[j]}, truth {fate}"
                        + (f" {decode(bytes(truth['rp_data'][k][:n]))}" if k is not None else "")
                    )
            elif stamps is not None and stamps[j] < truth["rp_t"][k]:
                a.before_sent += 1
    return a
