"""Test helpers: a hand-made Dynamixel peer on a pty for deterministic faults (no mocks of the SDK), and the wait
for a virtual bus to serve every state read a client sent (before the truth audit)."""

import os
import select
import threading
import tty

from servo_ff.bus import truth as tr
from servo_ff.bus.dynamixel import protocol as pr
from servo_ff.bus.dynamixel.stream import StreamDecoder
from servo_ff.ros.harness import wait_for


def wait_served(vb, bus, addr: int, timeout: float = 30.0) -> None:
    """Poll until the virtual bus ``vb`` has received every state read of ``addr`` the client ``bus`` sent (the
    audit skips reads the bus never served, and a loaded machine may leave some queued on the pty)."""
    wait_for(
        lambda: len(tr.reads_of(vb.truth.arrays(), addr)) >= bus.state_reads,
        timeout,
        "the virtual bus to serve every state read",
    )


class FakeServos:
    """A pty whose 'servos' answer every sync read with ``replies`` (bytes) — deterministic faults. The thread
    stops and is joined before the fds close (a thread blocked on a closed fd would read a reused one)."""

    def __init__(self, replies: bytes):
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        self.device = os.ttyname(self.slave)
        self.replies = replies
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        dec = StreamDecoder()
        while not self._stop.is_set():
            if not select.select([self.master], [], [], 0.01)[0]:
                continue
            for p in dec.feed(os.read(self.master, 1024)):
                if p.instruction == pr.INST_SYNC_READ:
                    os.write(self.master, self.replies)

    def __enter__(self) -> "FakeServos":
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(2.0)
        os.close(self.master)
        os.close(self.slave)
