"""Transport of the virtual bus: a pseudo-terminal pair whose slave end the client opens as its serial port.

:class:`PtyTransport` opens the pair raw (no echo, no line discipline: bytes pass unchanged), optionally links a
stable path to it, waits for bytes, and writes replies — queued back-to-back replies leave in one write, as a USB
adapter's latency timer would batch them. ``echo=True`` plays a half-duplex adapter without direction control: every
byte the client writes comes back to it first, ahead of the servos' replies.
"""

from __future__ import annotations

import os
import select
import time
import tty
from types import SimpleNamespace


class PtyTransport:
    """``device``: the slave path (e.g. ``/dev/pts/7``) once :meth:`open`; ``link``: a symlink made to it;
    ``stats.overflow`` counts the writes lost because nobody read the pty; ``echo``: what the client writes is sent
    back to it as it is read."""

    def __init__(self, link: str | None = None, stats=None, echo: bool = False):
        self.link = link
        self.echo = echo
        self.device: str | None = None
        self.master = self.slave = -1
        self._out: list[bytes] = []
        self.stats = stats if stats is not None else SimpleNamespace(overflow=0)

    def open(self) -> str:
        if self.device is not None:
            return self.device
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        os.set_blocking(self.master, False)
        self.device = os.ttyname(self.slave)
        if self.link:
            try:
                os.unlink(self.link)
            except FileNotFoundError:
                pass
            os.symlink(self.device, self.link)
        return self.device

    def close(self) -> None:
        for fd in (self.master, self.slave):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self.master = self.slave = -1
        if self.link:
            try:
                os.unlink(self.link)
            except OSError:
                pass
        self.device = None

    def receive(self, timeout: float) -> bytes | None:
        """What the client wrote within ``timeout`` [s]: None if nothing (idle), ``b""`` if the port was readable
        without data (no client yet: EIO, then a pause of ``timeout``). Raises EOFError once the pty is closed."""
        try:
            r, _, _ = select.select([self.master], [], [], timeout)
        except (OSError, ValueError):
            raise EOFError("pty closed") from None
        if not r:
            return None
        try:
            data = os.read(self.master, 65536)
        except BlockingIOError:
            return b""
        except OSError:  # EIO when no slave is open: keep waiting
            time.sleep(timeout)
            return b""
        if self.echo and data:
            self.write(data)  # the adapter's echo leaves before any reply to it
        return data

    def queue(self, data: bytes) -> None:
        """Send with the next :meth:`flush` (in one write with whatever else is queued)."""
        self._out.append(data)

    def flush(self) -> None:
        if self._out:
            data = b"".join(self._out)
            self._out.clear()
            self.write(data)

    def write(self, data: bytes) -> None:
        try:
            os.write(self.master, data)
        except OSError:  # EAGAIN: nobody reads the pty and its buffer is full
            self.stats.overflow += 1
