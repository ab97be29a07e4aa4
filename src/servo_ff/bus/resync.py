"""Resync after a stall: when the ledger forgets earlier transactions by time (no reply of any later one came for
``late_horizon_s``: an outage, or a responder that stalled with the instructions queued) or beyond its ``maxlen``, their
replies may still come, ahead of every later one, and nothing tells them apart. Until a marker (a READ of a length no
other transaction of the bus uses: ``marker_lengths`` less ``reply_lengths``, in turn) is answered, no reply is taken as
its transaction's (``unsynced``: :meth:`.SelectPort.receive` closes its window at once); the marker is sent before the
next instruction and waited for up to ``late_horizon_s``; what arrives before its reply is late. ``resyncs`` /
``resync_failures`` count them.
"""

from __future__ import annotations

import time


class MarkerResync:
    """The resync of :class:`.select_port.SelectPort` (state set in its ``_init_receive``: ``ledger``, ``stats``,
    ``counters``, ``resyncs``, ``resync_failures``, ``_open_markers``, ``_read_fails``, ``reply_lengths``)."""

    marker_lengths: tuple[int, ...] = ()  # READ lengths (from address 0) no other transaction of the bus uses

    def _marker(self, servo_id: int, n: int) -> bytes:
        """The instruction packet READ ``n`` bytes from address 0 of ``servo_id``."""
        raise NotImplementedError

    def _replies(self, data: bytes):
        """``(id, params)`` of each status frame in ``data``, in stream order; ``params`` None for a garbled one."""
        raise NotImplementedError

    def _resync(self) -> bool:
        """Send one marker and wait (up to ``late_horizon_s``) for its reply; everything before it is late. True:
        every earlier instruction has been answered (or its reply lost): the next reply is the next instruction's.
        Markers take every (servo, length) pair in turn (of :meth:`_marker_ids`), passing over the pairs sent since
        the last marker answered (:meth:`_next_marker`): an old marker's reply never passes for the new one's."""
        ids = self._marker_ids()
        lengths = self.marker_choices()
        k = self.resyncs
        self.resyncs += 1
        self.ledger.clear()
        if not lengths:
            self.resync_failures += 1
            return False
        marker = self._next_marker(ids, lengths, k)
        if self.writePort(self._marker(*marker)) <= 0 or not self._await_marker(marker):
            self.resync_failures += 1
            return False
        self._open_markers.clear()  # replies come in order: every earlier marker has been answered or lost
        self.rx_stream.drop_partial()  # nothing was sent after the marker: what follows is noise
        return True

    def _marker_ids(self) -> list[int]:
        """The servos a marker may go to: those not skipped whose last transaction was answered (no sync-read miss,
        no single-servo READ failed since), else those not skipped, else every one. Before, a servo gone silent
        after connect took every other marker at its set-up, each waiting ``late_horizon_s`` in vain (STS, margin
        100 ms: 3 of 7 markers, set-up 7.5 s)."""
        stats = self.stats or {}
        live = sorted(i for i, st in stats.items() if not st.skipping)
        heard = [i for i in live if stats[i].misses == 0 and not self._read_fails.get(i, 0)]
        return heard or live or sorted(stats) or [1]

    def _next_marker(self, ids: list[int], lengths: tuple[int, ...], k: int) -> tuple[int, int]:
        """The ``k``-th (id, length) pair of ``ids`` × ``lengths`` in turn, or the next one not sent since the last
        marker answered (their replies may still come, and would pass for it): the turn alone does not ensure that
        once ``ids`` changes (servos skipped during the outage that leaves the markers unanswered: a pair repeated
        within 40 markers). Every pair open: they are forgotten."""
        n = len(ids)
        for j in range(n * len(lengths)):
            pair = ids[(k + j) % n], lengths[((k + j) // n) % len(lengths)]
            if pair not in self._open_markers:
                break
        else:
            self._open_markers.clear()
        self._open_markers.add(pair)
        return pair

    def reserve_lengths(self, *lengths: int) -> None:
        """Data lengths the bus's transactions use (its sync reads, known before any is sent): never a marker's."""
        self.reply_lengths.update(lengths)

    def marker_choices(self) -> tuple[int, ...]:
        """The marker lengths in turn: :attr:`marker_lengths` less every length the bus's own transactions use
        (:attr:`reply_lengths`), so that no late reply of theirs can pass for a marker's."""
        return tuple(n for n in self.marker_lengths if n not in self.reply_lengths)

    def _await_marker(self, marker: tuple[int, int]) -> bool:
        """Read until the reply (id, length) ``marker`` (True) or ``late_horizon_s``; what comes before it is late."""
        stats = self.stats or {}
        deadline = time.monotonic() + self.ledger.horizon_s
        while True:
            data = self.read_available(wait=True, deadline=deadline)
            if not data:
                return False
            for i, params in self._replies(data):
                if params is None:
                    self.counters.late_garbled += 1
                    continue
                if (i, len(params)) == marker:
                    return True
                self.counters.late += 1
                st = stats.get(i)
                if st is not None:
                    st.late += 1
