"""The common base of every servo_ff error.

Each domain error derives from :class:`ServoFFError` and keeps the built-in base callers already catch
(``ValueError`` for bad input, ``OSError`` for a bus that does not answer, ``RuntimeError`` for a simulation or
bring-up that failed), so ``except ValueError`` still works where it did. Front-ends catch the base: the CLI
prints one line and exits 2, the nodes log one line and refuse the request. The error classes stay in the
module that raises them (:class:`~servo_ff.models.errors.ParameterError`,
:class:`~servo_ff.bus.bus_types.BusError`, ...); ``test/test_architecture.py`` checks that every one of
them derives from :class:`ServoFFError`.
"""

from __future__ import annotations


class ServoFFError(Exception):
    """Base of every error servo_ff raises on purpose; its message is one line naming the file/key/id at fault."""


__all__ = ["ServoFFError"]
