"""The error every parameter reader and schema raises: one line naming the file and key."""
from __future__ import annotations

import math
from typing import Any


class ParameterError(ValueError):
    """A parameter set or file is invalid; the message names the offending key."""


def check_finite_nonneg(key: str, value: Any) -> float:
    """``value`` as a finite float ≥ 0, or :class:`ParameterError` naming ``key``."""
    if isinstance(value, (bool, str)) or value is None:
        raise ParameterError(f"{key} must be a number, got {value!r}")
    try:
        v = float(value)
    except (TypeError, ValueError, OverflowError):
        raise ParameterError(f"{key} must be a number, got {value!r}") from None
    if not math.isfinite(v):
        raise ParameterError(f"{key} must be finite, got {v}")
    if v < 0:
        raise ParameterError(f"{key} must be >= 0, got {v}")
    return v
