"""Which transaction a reply belongs to (pure logic, no I/O): reply timing, windows and late replies.

Protocol 2.0 status packets carry no transaction number, but they arrive in order: every reply to an earlier
instruction arrives before any reply to a later one, and the replies of one sync read come in the order of its
ID list. This module turns that into rules:

* :class:`Timing` — a reply's slot = Return Delay Time + its wire time at the baud rate (10 bits/byte); a
  transaction waits for the remaining slots after the last frame it saw, plus a margin (the USB adapter's
  latency timer and scheduling), never a fixed constant.
* :class:`Window` — one transaction's replies by ID, per-slot deadline, outcome per servo (``ok``, ``corrupt``,
  ``wrong_length``, ``timeouts``); a garbled frame is charged to the servo whose slot it sits in, never to every
  servo that is missing. A reply for the last position ends the transaction: the missing ones cannot follow (a
  reply of another length does not, and a garbled frame moves it on by one slot at most: either may not be what
  its length or ID byte says).
* :class:`Ledger` — earlier transactions whose later replies may still arrive. A reply that *can* be one of
  those (right ID, right length, after the last reply seen from that transaction) is late: discarded and
  counted, never taken as this cycle's data. Once one reply of the current transaction is seen (right ID and
  length: one of another length, an error status included, may be an earlier transaction's whose ledger entry is
  gone, a resync marker's), earlier ones are closed. Within the current transaction the newest valid reply of a
  servo wins.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

BITS_PER_BYTE = 10  # 8N1
STATUS_OVERHEAD = 11  # header 4, ID, LEN 2, INST, ERR, CRC 2


@dataclass
class CommStats:
    """Per-servo communication counters (see :mod:`.transactions` for what each one means)."""

    ok: int = 0
    timeouts: int = 0  # no reply (nor a garbled frame) in its slot
    corrupt: int = 0  # a garbled frame (bad CRC or impossible LEN) in its slot
    late: int = 0  # replies that arrived after their transaction had ended: discarded
    wrong_length: int = 0
    status_errors: int = 0  # status packets whose error number ≠ 0
    retries: int = 0
    skipped: int = 0  # reads in which the servo was not asked (skipped after consecutive misses)
    unreached: int = 0  # Protocol 1.0 BULK_READs whose answer chain broke at a servo before it: not its miss
    probes: int = 0  # re-probes (PING) while skipped
    misses: int = 0  # consecutive transactions without any reply
    skipping: bool = False
    last_error: str = ""

    @property
    def failures(self) -> int:
        return self.timeouts + self.corrupt + self.wrong_length + self.status_errors


def wire_s(n_bytes: int, baud: float) -> float:
    """Time [s] ``n_bytes`` take on the wire at ``baud`` (10 bits per byte)."""
    return n_bytes * BITS_PER_BYTE / baud


def max_reply_len(data_len: int) -> int:
    """Largest LEN field of a status packet with ``data_len`` data bytes (stuffing adds ≤ 1 per 3 body bytes)."""
    return data_len + 4 + (data_len + 2) // 3


@dataclass(frozen=True)
class Timing:
    """Reply timing: ``baud`` [bit/s], ``return_delay_s`` (Return Delay Time) and ``margin_s`` added once per wait."""

    baud: float
    return_delay_s: float = 500e-6
    margin_s: float = 0.018

    def __post_init__(self) -> None:
        for k in ("baud", "return_delay_s", "margin_s"):
            v = getattr(self, k)
            if not (math.isfinite(v) and v >= 0) or (k == "baud" and v <= 0):
                raise ValueError(f"timing.{k} must be finite and >= 0 (baud > 0), got {v}")

    def slot_s(self, data_len: int) -> float:
        """One servo's reply [s]: its return delay + the status packet's wire time."""
        return self.return_delay_s + wire_s(STATUS_OVERHEAD + data_len, self.baud)

    def first_deadline(self, t_sent: float, n: int, data_len: int, inst_len: int) -> float:
        """Deadline [s, monotonic] of a transaction of ``n`` replies sent at ``t_sent`` (instruction on the wire
        first), before any reply has arrived."""
        return t_sent + wire_s(inst_len, self.baud) + n * self.slot_s(data_len) + self.margin_s

    def expected_s(self, n: int, data_len: int, inst_len: int) -> float:
        """Time [s] a complete transaction takes on the wire, without the margin."""
        return wire_s(inst_len, self.baud) + n * self.slot_s(data_len)


class Window:
    """The replies of one transaction (``ids`` in request order, ``data_len`` bytes each), sent at ``t_sent``."""

    def __init__(
        self, ids, data_len: int, timing: Timing, t_sent: float, inst_len: int, pos: dict[int, int] | None = None
    ):
        self.ids = tuple(ids)
        self.pos = {i: k for k, i in enumerate(self.ids)} if pos is None else pos  # id → position (read only)
        self.n = len(self.ids)
        self.data_len = data_len
        self.slot = timing.slot_s(data_len)
        self.margin = timing.margin_s
        self.deadline = timing.first_deadline(t_sent, self.n, data_len, inst_len)
        self.data: dict[int, bytes] = {}
        self.err: dict[int, int] = {}
        self.stamp: dict[int, float] = {}  # arrival time of each kept reply [s, monotonic]
        self.outcome: dict[int, str] = {}
        self.last = -1  # highest position that produced a frame
        self.loose: list[int] = []  # garbled frames of unknown servo: position of the frame before each
        self.unattributed = 0
        self.shadowed = 0  # replies it would take (its ids, its length) that went to an earlier transaction
        self.finished = False
        self.pending = None  # its ledger entry, if replies may still come

    @property
    def done(self) -> bool:
        return self.last == self.n - 1 or len(self.outcome) == self.n

    def _advance(self, p: int, t: float) -> None:
        if p > self.last:
            self.last = p
        self.deadline = t + (self.n - 1 - self.last) * self.slot + self.margin

    def accepts(self, err: int, params: bytes) -> bool:
        """A status packet this transaction takes as its data: its length (an error status: any length)."""
        return len(params) == self.data_len or bool(err & 0x7F)

    def packet(self, i: int, err: int, params: bytes, t: float) -> None:
        """A CRC-valid status packet from expected id ``i``; the newest valid one wins. Only one of this
        transaction's length moves it on: one of another length (counted ``wrong_length``, or kept as an error
        status: Protocol 1.0's alarm bits come with every reply while they last) may be an earlier transaction's
        (a resync marker's, a single-servo one's), and this one's replies may still follow."""
        if self.accepts(err, params):
            self.data[i], self.err[i], self.stamp[i] = params, err, t
            self.outcome[i] = "ok"
        elif self.outcome.get(i) != "ok":
            self.outcome[i] = "wrong_length"
        if len(params) == self.data_len:
            self._advance(self.pos[i], t)

    def bad(self, id_byte: int, t: float, move: bool = True) -> None:
        """A garbled frame whose ID byte reads ``id_byte``: charged to that servo if it is still waiting. It moves
        the transaction on by one slot at most (it sits in the next one at least): its ID byte may be garbled too,
        and read as a later servo's it would end the transaction before the replies still to come, which would then
        be owed by nobody. ``move`` False (earlier transactions still owe replies, so the frame may be one of
        theirs, its ID byte garbled to a servo whose reply they already had): it moves nothing; the slot it took
        would otherwise be skipped, and this transaction's own reply there, still to come, owed by nobody."""
        p = self.pos.get(id_byte)
        if p is not None and id_byte not in self.outcome:
            self.outcome[id_byte] = "corrupt"
            self._advance(min(p, self.last + 1) if move else self.last, t)
        else:
            self.loose.append(self.last)
            self._advance(self.last, t)  # the deadline from here, the position kept

    def finish(self) -> dict[int, str]:
        """Resolve the garbled frames of unknown servo (charged only when one slot is empty around them) and
        mark the rest as timeouts; returns {id: outcome}."""
        if self.finished:
            return self.outcome
        self.finished = True
        got = {self.pos[i] for i in self.outcome}
        for q in self.loose:
            r = next((p for p in range(q + 1, self.n) if p in got), self.n)
            empty = [p for p in range(q + 1, r) if p not in got]
            if len(empty) == 1:
                self.outcome[self.ids[empty[0]]] = "corrupt"
                got.add(empty[0])
            else:
                self.unattributed += 1
        for i in self.ids:
            self.outcome.setdefault(i, "timeouts")
        return self.outcome


class _Pending:
    """An earlier transaction whose replies after position ``last`` may still arrive."""

    __slots__ = ("pos", "data_len", "last", "n", "t_end")

    def __init__(self, ids: tuple[int, ...], data_len: int, last: int, t_end: float):
        self.pos = {i: k for k, i in enumerate(ids)}
        self.n = len(ids)
        self.data_len = data_len
        self.last = last
        self.t_end = t_end

    def take(self, i: int, data_len: int | None, consume: bool = True) -> bool:
        p = self.pos.get(i)
        if p is None or p <= self.last or (data_len is not None and data_len != self.data_len):
            return False
        if consume:
            self.last = p
        return True


class Ledger:
    """Earlier transactions (oldest first) whose replies may still arrive. A reply later than ``horizon_s`` after
    its transaction ended is taken as never coming (after an outage, replies would otherwise be discarded until
    every pending transaction is used up); at most ``maxlen`` entries (``overflow`` counts the ones forgotten)."""

    def __init__(self, horizon_s: float = 0.5, maxlen: int = 4096):
        self._q: deque[_Pending] = deque()
        self.horizon_s = horizon_s
        self.maxlen = maxlen
        self.expired = 0
        self.peak = 0
        self.overflow = 0

    @property
    def forgotten(self) -> int:
        """Transactions forgotten while their replies may still come (expired, or beyond ``maxlen``)."""
        return self.expired + self.overflow

    @property
    def last_end(self) -> float:
        """When the newest transaction still waiting for replies ended [s, time.monotonic]; −inf: none waits."""
        return self._q[-1].t_end if self._q else -math.inf

    def __bool__(self) -> bool:
        return bool(self._q)

    def __len__(self) -> int:
        return len(self._q)

    def data_lens(self) -> set[int]:
        return {o.data_len for o in self._q}

    def expire(self, now: float) -> None:
        """Forget the transactions that ended more than ``horizon_s`` before ``now``."""
        q = self._q
        while q and now - q[0].t_end > self.horizon_s:
            q.popleft()
            self.expired += 1

    def add(self, w: Window, now: float) -> _Pending | None:
        """After ``w`` ended (at ``now``): keep it if replies after its last frame are still missing."""
        if w.last < w.n - 1:
            p = _Pending(w.ids, w.data_len, w.last, now)
            if len(self._q) >= self.maxlen:
                self._q.popleft()
                self.overflow += 1
            self._q.append(p)
            self.peak = max(self.peak, len(self._q))
            return p
        return None

    def remove(self, p: _Pending | None) -> None:
        """Forget one earlier transaction (a single-servo one after its settle time)."""
        if p is not None and p in self._q:
            self._q.remove(p)

    def owed_lengths(self, i: int) -> set[int]:
        """Data lengths of the earlier transactions that still owe servo ``i`` a reply (a reply of one of them from
        ``i`` would be taken as late)."""
        return {o.data_len for o in self._q if o.pos.get(i, -1) > o.last}

    def owed_before(self, p: _Pending | None) -> bool:
        """True if a transaction older than ``p`` (pending) still owes replies: ``p``'s may come after theirs."""
        return p is not None and bool(self._q) and self._q[0] is not p

    def late(self, i: int, data_len: int | None) -> bool:
        """True if a reply from ``i`` (``data_len`` bytes; None: unknown, a garbled frame) can belong to an earlier
        transaction; it is then consumed from the oldest that can own it, and the ones before are closed."""
        for j, o in enumerate(self._q):
            if o.take(i, data_len):
                for _ in range(j):
                    self._q.popleft()
                if o.last == o.n - 1:
                    self._q.popleft()
                return True
        return False

    def could_own(self, i: int) -> bool:
        """True if a garbled frame reading ID ``i`` can be an earlier transaction's; nothing is consumed (its ID
        byte may be garbled too, and must not close positions a real late reply still needs)."""
        return any(o.take(i, None, consume=False) for o in self._q)

    def clear(self) -> None:
        """A reply of the current transaction arrived: no earlier reply can follow it."""
        self._q.clear()


@dataclass
class RxCounters:
    """Bus-level receive counters (per-servo ones are in :class:`CommStats`)."""

    late: int = 0  # CRC-valid replies of earlier transactions, discarded
    late_garbled: int = 0  # garbled frames of earlier transactions
    stray: int = 0  # CRC-valid packets no transaction could own (other IDs, instruction echoes)
    unattributed: int = 0  # garbled frames whose servo could not be told
    tx_failures: int = 0  # sync-read instructions that could not be written


def route_packet(
    ledger: Ledger,
    window: Window | None,
    counters: RxCounters,
    stats,
    i: int,
    inst: int,
    err: int,
    params: bytes,
    t: float,
) -> None:
    """Give one CRC-valid packet to an earlier transaction (late), the current one, or count it as stray."""
    if inst != 0x55:
        counters.stray += 1
    elif ledger and ledger.late(i, len(params)):
        counters.late += 1
        if window is not None and i in window.pos and len(params) == window.data_len:
            window.shadowed += 1
        st = stats.get(i) if stats is not None else None
        if st is not None:
            st.late += 1
    elif window is not None and i in window.pos:
        if ledger and len(params) == window.data_len:
            ledger.clear()  # this transaction's reply: every earlier one has ended
        window.packet(i, err, params, t)
    else:
        counters.stray += 1


def route_bad(ledger: Ledger, window: Window | None, counters: RxCounters, id_byte: int, t: float) -> None:
    """Give one garbled frame (intact header, ID byte ``id_byte``) to an earlier transaction or the current one."""
    if ledger and ledger.could_own(id_byte):
        counters.late_garbled += 1
    elif window is not None:
        window.bad(id_byte, t, move=not ledger)  # owed earlier replies: it may be theirs, ID byte garbled
    else:
        counters.unattributed += 1
