"""Which supply voltage U_bat [V] a rosbag2's samples get (Schwarz & Behnke Eq. 19 scales every α̂ by it) and where
it came from (``ServoLog.vin_source``, printed by ``servo-ff fit``). In this order:

1. a vin given (``servo-ff fit --vin``, fit node ``vin``, ``read_rosbag(meta=…)``) wins, as a given kp does; a
   recorded series more than :data:`AGREE` away from it is said in one line;
2. the series of a named topic (``--supply-topic``) or of the servo node's own ``<namespace>/servo_supply``: a
   measurement (sag included), it wins over the ``/servo_ff/log_meta`` vin; a disagreement is one line;
3. the ``/servo_ff/log_meta`` vin, over a series found by type only (the one BatteryState of the bag) that differs
   from it by more than :data:`AGREE` (a robot's 24 V ``/battery_state`` main pack, not the servos' 15 V bus): the
   series is not used, said;
4. that series, said in one line naming it (a warning when no log_meta vin agrees with it: ``write_rosbag``
   records the supply on ``/battery_state`` beside its log_meta).

A reading that is not finite is no reading (the servo node publishes NaN on ``servo_supply`` until its first health
read, a BatteryState gives NaN for "not measured"): left out, counted in one line (:func:`left_unread`; before, one
such row refused the whole bag). Every reading used must be a plausible servo supply
(:data:`~servo_ff.models.schema.SUPPLY_FIELD`, 3-30 V: narrower than the firmware law's vin, why said in its line),
or the bag is refused naming the topic and message (before: any reading > 0 was used, 150 decivolts fitted α̂ 10×
too large). The fit node's live topics go by the same rules (:meth:`servo_ff.nodes.fit_live.FitLiveData._live_supply`).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..models.schema import implausible_supply
from ..safe_parse import as_float
from .rosbag_topics import OPTION, SERVO_SUPPLY, option_hint
from .servo_log import LogError

_log = logging.getLogger(__name__)
AGREE = 0.10  # relative difference [–] between two supplies that is said: a loaded bus sags a few %
META = "/servo_ff/log_meta"
VIN_HINT = "servo-ff fit --vin, fit node parameter vin"


def _differs(a: float, b: float) -> bool:
    return abs(a - b) > AGREE * b


def _vin(src: str, value: Any, where: str) -> float | None:
    """A vin [V] of ``where`` (given, log_meta) as a plausible float, None when absent; LogError naming it."""
    if value is None:
        return None
    v = as_float(value, src, f"vin ({where})", LogError)
    if (why := implausible_supply(v)) is not None:
        raise LogError(f"{src}: vin ({where}): {why}")
    return v


def check_series(src: str, topic: str, rows: list) -> None:
    """Every reading of ``rows`` ((t, volts)) a plausible servo supply, or LogError naming ``topic`` and message."""
    for i, (_, v) in enumerate(rows):
        if (why := implausible_supply(float(v))) is not None:
            raise LogError(
                f"{src}: topic {topic} message {i}: supply voltage {why}; name the servos' supply topic "
                f"({option_hint(OPTION['volts'])}) or give their voltage ({VIN_HINT})"
            )


def left_unread(src: str, topic: str, rows: list, say: Callable[[str], object] | None = None) -> list:
    """``rows`` ((t, volts)) without the readings that are not finite — the servo node's NaN before its first health
    read (``hardware_readings.hw_supply_voltage``), a BatteryState's "not measured" —, their count and the first
    one's message ``say``-ed in one line (None: logged)."""
    kept = [r for r in rows if math.isfinite(float(r[1]))]
    if len(kept) < len(rows):
        first = next(i for i, r in enumerate(rows) if not math.isfinite(float(r[1])))
        (say or _log.warning)(
            f"{src}: topic {topic}: {len(rows) - len(kept)} of {len(rows)} supply reading(s) not finite (the first: "
            f"message {first}; no reading yet: the servo node publishes NaN before its first health read): left out"
        )
    return kept


def supply_how(named: bool, topic: str | None, ns: str) -> str:
    """How the supply topic was chosen: ``named`` (an option), ``own`` (the servo node's), ``type`` (the one
    BatteryState)."""
    return "named" if named else "own" if topic == f"{ns}/{SERVO_SUPPLY}" else "type"


def bag_supply(
    src: str,
    rows: list,
    topic: str | None,
    how: str,
    given: Any,
    meta_vin: Any,
    ns: str = "",
    say: Callable[[str], object] | None = None,
) -> tuple[list, float | None, str]:
    """(the supply readings used — empty: the constant vin —, vin [V] or None when nothing tells it, its source) of
    the readings ``rows`` ((t, volts)) of ``topic`` (chosen ``how``: :func:`supply_how`), the ``given`` vin and
    the ``/servo_ff/log_meta`` vin ``meta_vin``, in the order of the module's rules. ``say``: where the lines of a
    given vin or of the servo node's series go (None: logged; the live fit throttles them)."""
    given, meta_vin = _vin(src, given, "given"), _vin(src, meta_vin, META)
    say = say or _log.warning
    rows = left_unread(src, topic or "?", rows, say if given is None else lambda _: None)  # a given vin: unused
    med = float(np.median([v for _, v in rows])) if rows else float("nan")
    if given is not None:
        if rows and _differs(med, given):
            say(f"{src}: vin {given:g} V (given) is used, not the recorded {topic} (median {med:.4g} V)")
        return [], given, "given"
    own = f"{ns}/{SERVO_SUPPLY}"
    if rows and how == "type" and meta_vin is not None and _differs(med, meta_vin):
        _log.warning(
            "%s: supply topic %s (median %.4g V) is not the servo node's %s and is not used: vin %g V of %s is "
            "(name it, %s, if it is the servos' supply)",
            src,
            topic,
            med,
            own,
            meta_vin,
            META,
            option_hint(OPTION["volts"]),
        )
        return [], meta_vin, META
    if rows:
        check_series(src, topic or "?", rows)
        if how == "type":  # the one BatteryState: said, a warning unless the log_meta vin agrees with it
            (_log.info if meta_vin is not None else _log.warning)(
                "%s: supply voltage from %s (median %.4g V), the one BatteryState topic, not the servo node's %s: if "
                "it is not the servos' supply, give theirs (%s) or name its topic (%s)",
                src,
                topic,
                med,
                own,
                VIN_HINT,
                option_hint(OPTION["volts"]),
            )
            return rows, med, f"recorded {topic}, the one BatteryState"
        if meta_vin is not None and _differs(med, meta_vin):
            say(f"{src}: the recorded {topic} (median {med:.4g} V) is used, not vin {meta_vin:g} V of {META}")
        return rows, med, f"recorded {topic}"
    return [], meta_vin, META if meta_vin is not None else ""


__all__ = ["AGREE", "bag_supply", "check_series", "left_unread", "supply_how"]
