"""One clock for every stream of a rosbag2 read (used by :mod:`.rosbag`).

When every /joint_states message carries a header stamp, those stamps are the clock. A stream without a header (a
Float64MultiArray goal, a Bool torque enable, the gains) is put on it through the joint states' (receive time →
stamp) pairs (linear interpolation, slope 1 beyond them): that absorbs a recorder's bursts, a simulation's
real-time factor and the drift between the two clocks. A stamped goal or supply keeps its stamps when their
median (stamp − mapped receive time) is within ``dt`` of zero; a goal whose stamps disagree (a driver that stamps at
the bus read, goals stamped for when they are meant) is mapped like an unstamped one, said in one line; the held
supply is mapped quietly. A JointTrajectory is taken on receipt, its points at stamp + time_from_start
(:func:`_trajectory_starts`, the servo nodes' :func:`servo_ff.trajectory_receipt.on_receipt`);
the trajectories' stamps are another clock (mapped, said) when their median is behind by more than ``dt`` or ahead
by more than the recording's span. A zero stamp is no stamp (:func:`has_stamp`; a
simulation's first message at sim time 0 is one when the next stamp continues it): such a goal or supply row is
mapped, such a /joint_states row left out, said in one line (a JointTrajectory stamped zero starts when it is
received). When no /joint_states message has a stamp, every stream is timed by its receive time. A JointTrajectory
that ended before it arrived is not followed, as a JointTrajectoryController refuses it — tested on the clock used.
A recorded /clock is not read: the joint states' stamps against their receive times already are that clock."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from .servo_log import LogError

JOINT_STATE = "sensor_msgs/msg/JointState"
_log = logging.getLogger(__name__)


def has_stamp(stamps: np.ndarray) -> np.ndarray:
    """Which of a stream's header ``stamps`` [ns] (in receive order) are stamps: every one above 0, and a 0 just
    before the first one above (a simulation's first message at sim time 0, before its clock moved) when that
    one continues it: no more than 1.5 median steps of the stamps after 0."""
    real = stamps > 0
    if real.sum() >= 2 and not real[0]:
        i = int(np.argmax(real))
        steps = np.diff(stamps[real])
        steps = steps[steps > 0]
        real[i - 1] = bool(steps.size) and stamps[i] <= 1.5 * float(np.median(steps))
    return real


def _stamped_states(src: str, topic: str, js: list[tuple]) -> list[tuple]:
    """The joint-state rows that carry a stamp (:func:`has_stamp`), the others left out (their time on the stamps'
    clock is unknown), said in one line with a 0 taken as sim time 0; all of them when none has a stamp."""
    stamps = np.array([r[0] for r in js], np.int64)
    real = has_stamp(stamps)
    zero = real & (stamps == 0)
    if not real.any() or (real.all() and not zero.any()):
        return js
    said = []
    if zero.any():
        nxt = int(stamps[np.argmax(stamps > 0)])
        said.append(f"the stamp 0 of its first message is sim time 0 (the next one, {nxt * 1e-9:.3f} s, continues it)")
    if not real.all():
        said.append(f"{int((~real).sum())} of {len(js)} message(s) have header stamp 0 while the others are stamped: "
                    "left out (no time on the stamps' clock)")  # fmt: skip
    _log.warning("%s: topic %s: %s", src, topic, "; ".join(said))
    return [r for r, ok in zip(js, real.tolist(), strict=True) if ok]


def receive_to_stamp(js: list[tuple]) -> Callable[[np.ndarray], np.ndarray]:
    """Receive time [ns] → the joint states' header clock [ns] from their (stamp, receive, …) rows (every one
    stamped)."""
    recv = np.array([r[1] for r in js], np.int64)
    order = np.argsort(recv, kind="stable")
    recv = recv[order]
    stamp = np.maximum.accumulate(np.array([r[0] for r in js], np.int64)[order])  # monotonic in receive order
    r0, s0 = int(recv[0]), int(stamp[0])
    xp, fp = (recv - r0).astype(float), (stamp - s0).astype(float)  # relative: float64 keeps the ns

    def mapped(t: np.ndarray) -> np.ndarray:
        x = (np.asarray(t, np.int64) - r0).astype(float)
        y = np.interp(x, xp, fp) + np.minimum(x, 0.0) + np.maximum(x - xp[-1], 0.0)
        return s0 + np.round(y).astype(np.int64)

    return mapped


def _agrees(stamps: list[int], mapped: np.ndarray, dt: float) -> tuple[bool, int]:
    """(median stamp − mapped receive time within ``dt``?, that median [ns])."""
    off = int(np.median(np.array(stamps, np.int64) - mapped))
    return abs(off) <= dt * 1e9, off


def _trajectory_stamps(traj: list, recv: np.ndarray, span: int, dt: float) -> tuple[bool, str, int]:
    """(are the JointTrajectory stamps on the joint states' clock?, why not, their median lead over their receipt
    ``recv`` [ns] on it). A stamp ahead is a scheduled start; they are another clock when their median is behind
    by more than ``dt`` [s] or ahead by more than the ``span`` [ns] recorded (a start the recording never
    reaches). A stamp 0 (start on receipt) is not judged."""
    off = int(np.median([p[0] - int(m) for (p, _), m in zip(traj, recv, strict=True) if p[0] > 0]))
    if off < -dt * 1e9:
        return False, f"behind by more than dt = {dt:g} s", off
    if off > span:
        return False, f"ahead by more than the {span * 1e-9:.3f} s recorded", off
    return True, "", off


def _trajectory_starts(
    src: str, topic: str | None, pieces: list, recv: np.ndarray, stamps: bool, dt: float
) -> tuple[list, int]:
    """(the pieces a JointTrajectoryController follows, as (receipt [ns], times after receipt [s], …), how many it
    refuses (ended before they arrived)). Every piece is taken on receipt; its points come at its stamp +
    time_from_start when ``stamps`` (a stamp ahead or behind its receipt shifts them by that lead), else (and for
    stamp 0) at receipt + time_from_start: :func:`servo_ff.trajectory_receipt.on_receipt` follows them from the
    state on receipt, as the servo nodes do. Stamps ahead by more than ``dt`` [s] are said in one line."""
    traj, stale, leads = [], 0, []
    for (piece, _), arrived in zip(pieces, recv.tolist(), strict=True):
        lead = piece[0] - arrived if stamps and piece[0] > 0 else 0  # [ns] stamp − receipt
        if lead > 0:
            leads.append(lead)
        ahead = piece[1] + lead * 1e-9  # the points' times after receipt [s]
        if len(ahead) and ahead[-1] < 0:  # ended before it arrived
            stale += 1  # a JointTrajectoryController refuses it
            continue
        traj.append((arrived, ahead, *piece[2:]))
    if leads and max(leads) > dt * 1e9:
        _log.warning(
            "%s: %d of %d message(s) of %s are stamped ahead of their receipt (up to %+.3f s): each replaces the one "
            "in progress when received and reaches its first point at its stamp, as a JointTrajectoryController",
            src,
            len(leads),
            len(pieces),
            topic,
            max(leads) * 1e-9,
        )
    return traj, stale


def on_one_clock(src: str, streams: Mapping[str, Any], topics: Mapping[str, str | None], dt: float) -> dict:
    """``streams`` with one time per row [ns] on the clock :func:`receive_to_stamp` gives: ``js`` (t, position,
    velocity), ``goal`` (t, value), ``traj`` pieces (start, …; stale ones dropped, counted in one line), ``volts``,
    ``enable`` (t, value), ``gains`` (t, values)."""
    js = _stamped_states(src, topics["js"], streams["js"])
    header = any(r[0] > 0 for r in js)  # then every row of js is stamped
    to_js = receive_to_stamp(js) if header else None

    def on_clock(recv: list[int]) -> np.ndarray:
        r = np.array(recv, np.int64)
        return to_js(r) if to_js is not None and len(r) else r

    def stream(key: str) -> list[int]:
        """Times of ``key``'s rows: their stamps when they agree with the clock, else their receive times mapped."""
        rows = streams[key]
        mapped = on_clock([r[1] for r in rows])
        stamps = np.array([r[0] for r in rows], np.int64)
        real = has_stamp(stamps) if header else np.zeros(len(rows), bool)
        if not real.any():
            return [int(x) for x in mapped]
        ok, off = _agrees(stamps[real].tolist(), mapped[real], dt)
        if ok:  # a row without a stamp: its receive time mapped
            return [int(x) for x in np.where(real, stamps, mapped)]
        if key == "goal":
            disagree[topics["goal"]] = (off, f"more than dt = {dt:g} s")
        return [int(x) for x in mapped]

    disagree: dict[str | None, tuple[int, str]] = {}
    t_goal, t_volts = stream("goal"), stream("volts")
    g_topic = topics["goal"]
    recv_traj = on_clock([recv for _, recv in streams["traj"]])
    traj_stamps = header and any(p[0] > 0 for p, _ in streams["traj"])
    if traj_stamps:
        stamps = np.array([r[0] for r in js], np.int64)
        traj_stamps, why, off = _trajectory_stamps(streams["traj"], recv_traj, int(np.ptp(stamps)), dt)
        if not traj_stamps:
            disagree[g_topic] = (off, why)
    if disagree:
        _log.warning(
            "%s: header stamps disagree with %s's (median stamp − receive time on its clock: %s): timed by its "
            "receive time, mapped onto %s's stamps",
            src,
            topics["js"],
            ", ".join(f"{t} {o * 1e-9:+.3f} s, {why}" for t, (o, why) in disagree.items()),
            topics["js"],
        )
    traj, stale = _trajectory_starts(src, g_topic, streams["traj"], recv_traj, traj_stamps, dt)
    if stale:
        clock = f"{topics['js']} stamps" if header else "receive times"
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
        "js": [(r[0] if header else r[1], *r[2:]) for r in js],
        "goal": [(t, r[2]) for t, r in zip(t_goal, streams["goal"], strict=True)],
        "traj": traj,
        "volts": [(t, r[2]) for t, r in zip(t_volts, streams["volts"], strict=True)],
        "enable": [
            (int(t), r[2]) for t, r in zip(on_clock([r[1] for r in streams["enable"]]), streams["enable"], strict=True)
        ],
        "gains": [
            (int(t), g[1]) for t, g in zip(on_clock([g[0] for g in streams["gains"]]), streams["gains"], strict=True)
        ],
        "joint": streams["joint"],
    }


__all__ = ["on_one_clock", "receive_to_stamp"]
