"""The unfinished-frame buffer every streaming decoder keeps between reads (Protocol 2.0, 1.0 and FT-SCS)."""

from __future__ import annotations


class FrameBuffer:
    """Mixin for a decoder dataclass with ``_buf: bytearray`` (bytes of a frame not complete yet) and ``stats``
    (with ``incomplete`` and ``discarded_bytes`` counters)."""

    _buf: bytearray

    @property
    def pending(self) -> int:
        return len(self._buf)

    def drop_partial(self) -> int:
        """Forget buffered bytes of an unfinished frame (e.g. after an idle gap); returns how many."""
        n = len(self._buf)
        if n:
            self.stats.incomplete += 1
            self.stats.discarded_bytes += n
            self._buf.clear()
        return n
