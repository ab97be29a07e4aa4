"""The ROS-free core logs with Python :mod:`logging` (``servo_ff.bus.dynamixel.bus``, ``servo_ff.bus.feetech.bus``, …);
inside a node those lines go to the node's rclpy logger, hence to the console *and* ``/rosout``, instead of
stderr alone. :func:`forward_core_logs` installs one :class:`RosLogHandler` on the ``servo_ff`` logger per
process; every node that calls it is registered, and a record goes to the node registered for the longest
prefix of its logger name (else the first registered), prefixed with that logger name. A destroyed node is
unregistered (the handler goes once none is left, and stderr takes the lines again)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence

from rclpy.node import Node

ROOT = "servo_ff"


class RosLogHandler(logging.Handler):
    """Forwards ``servo_ff.*`` records to the rclpy logger of a registered node."""

    def __init__(self) -> None:
        super().__init__()
        self.nodes: list[tuple[Node, tuple[str, ...]]] = []
        self._lock = threading.Lock()

    def target(self, name: str) -> Node | None:
        best, depth = None, -1
        with self._lock:
            for node, prefixes in self.nodes:
                for p in prefixes:
                    if (name == p or name.startswith(p + ".")) and len(p) > depth:
                        best, depth = node, len(p)
            if best is None and self.nodes:  # no node claims it: the first one logs it (never dropped)
                best = self.nodes[0][0]
        return best

    def emit(self, record: logging.LogRecord) -> None:
        node = self.target(record.name)
        if node is None:
            return
        try:
            text = f"{record.name}: {record.getMessage()}"
            if record.exc_info:
                text += "\n" + logging.Formatter().formatException(record.exc_info)
            log = node.get_logger()
            # rclpy keys a call site to one severity: one call per level
            if record.levelno >= logging.ERROR:
                log.error(text)
            elif record.levelno >= logging.WARNING:
                log.warning(text)
            elif record.levelno >= logging.INFO:
                log.info(text)
            else:
                log.debug(text)
        except Exception:  # noqa: BLE001 (logging must never raise into the caller)
            self.handleError(record)


_handler: RosLogHandler | None = None


def forward_core_logs(node: Node, prefixes: Sequence[str] = (ROOT,)) -> RosLogHandler:
    """Forward the ``servo_ff`` loggers (those under ``prefixes``) to ``node``'s rclpy logger until it is
    destroyed. The ``servo_ff`` logger is set to INFO when it has no level of its own (rclpy's default)."""
    global _handler
    root = logging.getLogger(ROOT)
    if _handler is None or _handler not in root.handlers:
        _handler = RosLogHandler()
        root.addHandler(_handler)
        if root.level == logging.NOTSET:
            root.setLevel(logging.INFO)
    handler = _handler
    with handler._lock:
        handler.nodes.append((node, tuple(prefixes)))
    destroy = node.destroy_node

    def destroy_node(*args, **kwargs):
        with handler._lock:
            handler.nodes[:] = [(n, p) for n, p in handler.nodes if n is not node]
            empty = not handler.nodes
        if empty:
            root.removeHandler(handler)
        return destroy(*args, **kwargs)

    node.destroy_node = destroy_node
    return handler
