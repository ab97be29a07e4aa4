"""P gains written only when they change (Protocol 1.0, Feetech STS), checked against what the servos read back.

A gain goes out in a SYNC_WRITE, which no servo answers: one lost on the wire (a garbled packet the servos ignore)
would leave the old gain in force for good while the node reports the new one. :class:`SentGains` keeps the
register value last sent per servo; a health read that gives the register back (Protocol 1.0: 24–43 covers P Gain /
Compliance Slope 28–29; STS: one 1-byte read of 21 after a write) calls :meth:`SentGains.check`, and a servo whose
register differs is forgotten, so that the next cycle writes its gain again (one log line the first time per servo).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

log = logging.getLogger(__name__)


class SentGains:
    """The P gain register value (or AX Compliance Slope) last sent to each servo, and the ones not read back yet."""

    def __init__(self, register: str):
        self.register = register  # named in the log line, e.g. "P Gain (28)"
        self.sent: dict[int, int] = {}
        self.unchecked: set[int] = set()  # sent, not yet read back
        self.rewrites: dict[int, int] = {}  # servo id → gain writes found lost (sent again)

    def changed(self, ids: Iterable[int], regs: Iterable[int]) -> list[int]:
        """Indices into ``ids`` of the servos whose register value ``regs`` differs from the one last sent."""
        return [k for k, (i, r) in enumerate(zip(ids, regs)) if self.sent.get(i) != int(r)]

    def note_sent(self, ids: Iterable[int], regs: Iterable[int]) -> None:
        for i, r in zip(ids, regs):
            self.sent[int(i)] = int(r)
            self.unchecked.add(int(i))

    def forget(self, i: int) -> None:
        """Servo ``i``'s gain is unknown (set-up, reboot): the next cycle writes it."""
        self.sent.pop(i, None)
        self.unchecked.discard(i)

    def check(self, i: int, read: int) -> bool:
        """Servo ``i``'s register read back as ``read``: True when it holds what was sent (or nothing was); else
        forgotten, so that the next cycle writes it again, and said once per servo (the count in ``rewrites``)."""
        want = self.sent.get(i)
        self.unchecked.discard(i)
        if want is None or int(read) == want:
            return True
        self.forget(i)
        n = self.rewrites[i] = self.rewrites.get(i, 0) + 1
        if n == 1:
            log.warning(
                "id %d: %s reads %d, %d was written (a lost write): writing it again (later ones counted, not logged)",
                i,
                self.register,
                int(read),
                want,
            )
        return False
