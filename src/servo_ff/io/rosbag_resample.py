"""A rosbag2's streams on one uniform grid (:func:`resample_bag`, ``rosbag._resample``): measurements (joint states)
by linear interpolation, but never across a recorder gap (:mod:`.sample_gaps`: the log's ``segments`` are the
stretches around it); commands (goal, supply, torque enable) by zero-order hold, a goal stream silent for longer
than its gap bound said in one line (commands not sent are no measurement gap: the last goal is held, as the servo
holds it)."""

from __future__ import annotations

import logging
import math
from typing import Any

import numpy as np

from ..trajectory_receipt import ReplacedTrajectories
from .sample_gaps import Spans, gap_bound, measured_spans
from .servo_log import LogError, ServoLog, check_dt

_log = logging.getLogger(__name__)


def _check_positions(src: str, topic: str, js: np.ndarray) -> None:
    """Finite stamps and positions, stamps strictly increasing (LogError naming the topic and message)."""
    for j, key in ((0, "header.stamp"), (1, "position")):
        bad = ~np.isfinite(js[:, j])
        if bad.any():
            raise LogError(f"{src}: topic {topic} message {int(np.argmax(bad))}: {key} is not finite")
    step = np.diff(js[:, 0])
    if (step <= 0).any():
        i = int(np.argmax(step <= 0)) + 1
        raise LogError(f"{src}: topic {topic}: timestamps not strictly increasing at message {i}")


def _speed(src: str, topic: str, js: np.ndarray, t: np.ndarray, position: np.ndarray, spans: Spans, dt: float):
    """Speed [rad/s] on the grid ``t``: the recorded velocities interpolated, or (some or all not finite) the
    positions' central differences within each stretch between gaps (some not finite: said in one line)."""
    recorded = np.isfinite(js[:, 2])  # velocity field empty or NaN: derived from position
    if recorded.all():
        return np.interp(t, js[:, 0], js[:, 2])
    if recorded.any():
        n_bad, first = int((~recorded).sum()), int(np.argmax(~recorded))
        _log.warning(f"{src}: topic {topic}: {n_bad} of {len(recorded)} velocities are not finite "
                     f"(first: message {first}): the speed is derived from the positions instead")  # fmt: skip
    speed = np.gradient(position, dt)
    for a, b in spans:  # never a difference across a gap
        if b - a > 1:
            speed[a:b] = np.gradient(position[a:b], dt)
    return speed


def _say_held_goals(src: str, topic: str, goal: np.ndarray, t: np.ndarray, spans: Spans, dt: float) -> None:
    """One line when, on a used sample, the newest goal message is older than the goal stream's gap bound."""
    if len(goal) < 2:
        return
    bound = gap_bound(goal[:, 0], dt)
    idx = np.clip(np.searchsorted(goal[:, 0], t + 1e-6, side="right") - 1, 0, None)
    age = t - goal[idx, 0]
    used = np.zeros(len(t), bool)
    for a, b in spans:
        used[a:b] = True
    stale = used & (age > bound)
    if stale.any():
        k = int(np.argmax(np.where(stale, age, -np.inf)))
        _log.warning(
            "%s: topic %s: no goal message for up to %.3f s (at %.3f s; %d samples longer than %.3g s without one): "
            "the last goal is held there",
            src,
            topic,
            age[k],
            t[k] - t[0],
            int(stale.sum()),
            bound,
        )


def resample_bag(
    src: str,
    streams: dict[str, list],
    goal_rows: list,
    traj: tuple[ReplacedTrajectories, float] | None,
    m: dict[str, Any],
    dt: float,
    joint_states_topic: str,
    g_topic: str,
    v_topic: str | None,
) -> ServoLog:
    """The bag's streams (rows of integer-ns stamps) on the grid ``t0, t0 + dt, …`` [s] over the overlap of the
    joint states and the goals, ``t`` from 0; ``m``: the bench metadata (clean_meta)."""
    dt = check_dt(dt, where=src)  # before: dt 0 an OverflowError traceback, NaN "cannot convert float NaN to integer"
    js_rows, volt_rows, enable_rows = streams["js"], streams["volts"], streams["enable"]
    base = js_rows[0][0]

    def rel(rows: list, width: int) -> np.ndarray:  # integer ns → seconds since the first joint state
        return np.asarray([((r[0] - base) * 1e-9, *r[1:]) for r in rows], float).reshape(len(rows), width)

    js = rel(js_rows, 3)
    _check_positions(src, joint_states_topic, js)
    if traj is None:
        goal = rel(goal_rows, 2)
        goal = goal[np.argsort(goal[:, 0], kind="stable")]
        if not np.isfinite(goal).all():
            raise LogError(f"{src}: topic {g_topic} message {int(np.argmax(~np.isfinite(goal).all(1)))}: not finite")
    t0, t1 = max(js[0, 0], goal[0, 0] if traj is None else traj[1]), js[-1, 0]
    if t1 - t0 < dt:
        raise LogError(f"{src}: topics {joint_states_topic} and {g_topic} overlap for less than dt={dt} s")
    t = t0 + np.arange(int(math.floor((t1 - t0) / dt + 1e-6)) + 1) * dt
    if t0 > js[0, 0]:
        _log.warning(
            "%s: %.3g s of %s before the first goal message are not used", src, t0 - js[0, 0], joint_states_topic
        )

    def hold(series: np.ndarray, default: float) -> np.ndarray:
        if len(series) == 0:
            return np.full(len(t), default)
        idx = np.searchsorted(series[:, 0], t + 1e-6, side="right") - 1  # 1 µs stamp jitter
        return np.where(idx >= 0, series[np.clip(idx, 0, None), 1], series[0, 1])

    position = np.interp(t, js[:, 0], js[:, 1])
    segments = measured_spans(src, f"topic {joint_states_topic}", js[:, 0], t, dt, t0)
    spans = ((0, len(t)),) if segments is None else segments
    speed = _speed(src, joint_states_topic, js, t, position, spans, dt)
    volts = hold(rel(volt_rows, 2), m["vin"])
    if not np.isfinite(volts).all():
        raise LogError(f"{src}: topic {v_topic}: voltage is not finite")
    enable = (hold(rel(enable_rows, 2), 1.0) > 0.5).astype(float)  # no torque topic: powered throughout
    if traj is None:
        _say_held_goals(src, g_topic, goal, t, spans, dt)
    return ServoLog(
        t=t - t0,
        position=position,
        speed=speed,
        goal_position=hold(goal, goal[0, 1])
        if traj is None
        else traj[0].positions(t + 1e-6)[:, 0],  # 1 µs stamp jitter
        torque_enable=enable,
        input_volts=volts,
        **m,
        source=src,
        segments=segments,
    )


__all__ = ["resample_bag"]
