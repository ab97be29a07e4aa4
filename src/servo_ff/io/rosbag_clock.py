"""One clock for every stream of a rosbag2 read (used by :mod:`.rosbag`).

The header stamps are used when every stream that is resampled carries them (joint states, a JointState goal, a
JointTrajectory, the supply: non-zero stamps; a JointTrajectory stamped zero starts when it is received) and they
agree: the median (stamp − receive time) of each topic within ``dt`` of the others'. Otherwise — a
Float64MultiArray goal or a Bool torque enable (no header), a zero stamp, or stamps that disagree (said in one line:
a driver that stamps at the bus read, goals stamped for when they are meant) — every stream is timed by its receive
time, and a JointTrajectory starts when it is received. Streams without a header on the header clock (the gains)
are placed by the joint states' median (stamp − receive time). A JointTrajectory that ended before it arrived is
not followed, as a JointTrajectoryController refuses it — tested on the clock used."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import numpy as np

from .servo_log import LogError

JOINT_STATE = "sensor_msgs/msg/JointState"
_log = logging.getLogger(__name__)


def _median_offset(pairs: list[tuple[int, int]]) -> int:
    """Median (stamp − receive time) [ns] of (stamp, receive) pairs."""
    return int(np.median(np.array([s - r for s, r in pairs], dtype=np.int64)))


def choose_clock(src: str, streams: Mapping[str, Any], topics: Mapping[str, str | None], dt: float) -> tuple[bool, int]:
    """(header stamps?, the joint states' median stamp − receive time [ns]) for ``streams`` as
    :func:`.rosbag_streams.read_streams` returns them."""
    js_off = _median_offset([(r[0], r[1]) for r in streams["js"]])
    use_header = not streams["enable"] and not (streams["goal"] and streams["goal_kind"] != JOINT_STATE)
    offsets: dict[str, int] = {}
    for key, rows in (("js", streams["js"]), ("goal", streams["goal"]), ("volts", streams["volts"])):
        if rows and use_header:
            if any(r[0] <= 0 for r in rows):
                use_header = False  # a stream without stamps: the receive times of all
            else:
                offsets[topics[key]] = _median_offset([(r[0], r[1]) for r in rows])
    starts = [(p[0], recv) for p, recv in streams["traj"] if p[0] > 0]  # zero: starts when received
    if starts and use_header:
        offsets[topics["goal"]] = _median_offset(starts)
    if use_header and max(offsets.values()) - min(offsets.values()) > dt * 1e9:
        _log.warning(
            "%s: header stamps disagree (median stamp − receive time: %s; more than dt = %g s apart): every stream "
            "is timed by its receive time",
            src,
            ", ".join(f"{t} {o * 1e-9:+.3f} s" for t, o in offsets.items()),
            dt,
        )
        use_header = False
    return use_header, js_off


def on_one_clock(src: str, streams: Mapping[str, Any], topics: Mapping[str, str | None], dt: float) -> dict:
    """``streams`` with one time per row [ns] on the clock :func:`choose_clock` picks: ``js`` (t, position,
    velocity), ``goal`` (t, value), ``traj`` pieces (start, …; stale ones dropped, counted in one line), ``volts``,
    ``enable`` (t, value), ``gains`` (t, values)."""
    header, js_off = choose_clock(src, streams, topics, dt)
    off = js_off if header else 0  # receive time → the clock used

    def t(row) -> int:
        return row[0] if header else row[1]

    traj, stale = [], 0
    for piece, recv in streams["traj"]:
        start = piece[0] if header and piece[0] > 0 else recv + off
        if len(piece[1]) and start + int(piece[1][-1] * 1e9) < recv + off:  # ended before it arrived
            stale += 1  # a JointTrajectoryController refuses it
            continue
        traj.append((start, *piece[1:]))
    g_topic = topics["goal"]
    if stale:
        clock = "header stamps" if header else "receive times"
        if not traj:
            raise LogError(
                f"{src}: topic {g_topic}: every message ended before it was received (on the {clock}): "
                "nothing a JointTrajectoryController follows"
            )
        _log.warning(
            "%s: %d message(s) of %s ended before they were received (on the %s): not followed (as a JTC)",
            src,
            stale,
            g_topic,
            clock,
        )
    return {
        "js": [(t(r), *r[2:]) for r in streams["js"]],
        "goal": [(t(r), r[2]) for r in streams["goal"]],
        "traj": traj,
        "volts": [(t(r), r[2]) for r in streams["volts"]],
        "enable": [(t(r), r[2]) for r in streams["enable"]],
        "gains": [(recv + off, values) for recv, values in streams["gains"]],
        "joint": streams["joint"],
    }


__all__ = ["choose_clock", "on_one_clock"]
