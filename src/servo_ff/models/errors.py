"""The error every parameter reader and schema raises: one line naming the file and key."""

from __future__ import annotations

from ..errors import ServoFFError


class ParameterError(ServoFFError, ValueError):
    """A parameter set or file is invalid; the message names the offending key."""
