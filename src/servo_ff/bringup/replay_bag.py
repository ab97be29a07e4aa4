"""``replay`` of a bag that ``servo-ff record-sim`` (:func:`servo_ff.io.rosbag_write.write_rosbag`) wrote: such a bag
records its pendulum (mass [kg], length [m]) on ``/servo_ff/log_meta`` and its joint under its own name ("joint"),
which no URDF has. The fit then takes τ_o from the bag's pendulum and fits the bag's joint: the plan's fit
overrides, said in one line."""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path

_log = logging.getLogger(__name__)


def _first(reader, topic: str):
    """The first message of ``topic`` (deserialized), or None."""
    conns = [c for c in reader.connections if c.topic == topic]
    for conn, _t, raw in reader.messages(connections=conns):
        return reader.deserialize(raw, conn.msgtype)
    return None


def recorded_pendulum(bag: str | Path) -> tuple[str, float, float] | None:
    """(joint, mass [kg], length [m]) of a servo_ff recording at ``bag``: its log_meta gives a pendulum
    (mass, length > 0) and its first joint_states message names one joint; else None (also for a bag that cannot
    be read: the fit node then says why)."""
    from rosbags.highlevel import AnyReader

    from servo_ff.io.rosbag import META_TOPIC, _typestore

    if not Path(bag).exists():
        return None
    try:
        with AnyReader([Path(bag)], default_typestore=_typestore()) as reader:
            meta_msg = _first(reader, META_TOPIC)
            if meta_msg is None:
                return None
            meta = json.loads(meta_msg.data)
            js = _first(reader, "/joint_states")
    except Exception:  # noqa: BLE001 - unreadable here: the fit node reads it and names what is wrong
        return None
    mass, length = float(meta.get("mass", 0) or 0), float(meta.get("length", 0) or 0)
    if js is None or len(js.name) != 1 or not (math.isfinite(mass) and math.isfinite(length)):
        return None
    return (str(js.name[0]), mass, length) if mass > 0 and length > 0 else None


def replay_fit_overrides(bag: str) -> dict[str, str]:
    """The fit node's ``joint`` and ``urdf_path`` ('': τ_o from the bag's pendulum) for a servo_ff recording at
    ``bag``; {} for any other bag (the YAML's joint and URDF stand)."""
    found = recorded_pendulum(bag)
    if found is None:
        return {}
    joint, mass, length = found
    _log.warning(
        "replay: %s is a servo-ff record-sim bag (joint %r, pendulum %g kg at %g m on /servo_ff/log_meta): fitting "
        "its joint with τ_o of its pendulum, not the YAML's joint and urdf_path",
        bag, joint, mass, length,
    )  # fmt: skip
    return {"joint": joint, "urdf_path": ""}


__all__ = ["recorded_pendulum", "replay_fit_overrides"]
