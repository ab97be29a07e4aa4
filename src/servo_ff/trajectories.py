"""Reference trajectories with analytic θd, θ̇d, θ̈d (rad, rad/s, rad/s²) on a uniform time grid.

* the four identification trajectories of Duclusaud et al. (Extended Friction Models) §V-A:
  :func:`accelerated_oscillations`,
  :func:`sub_oscillations`, :func:`raise_and_lower`, :func:`lift_and_drop` (which also releases the torque);
* a Schwarz & Behnke-style reference (§5.1, Fig. 2): walking-like sines, then a fast sine and kick segments —
  :func:`schwarz_behnke_reference`.

Every function returns a :class:`Trajectory`; ``torque_enable`` is 1 except where a trajectory releases the
H-bridge. Angles follow bam's bench: θ = 0 is the pendulum hanging down.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np


class Trajectory(NamedTuple):
    t: np.ndarray  # [s]
    q: np.ndarray  # θd [rad]
    dq: np.ndarray  # θ̇d [rad/s]
    ddq: np.ndarray  # θ̈d [rad/s²]
    torque_enable: np.ndarray  # 1 powered, 0 released
    name: str


def time_grid(duration: float, dt: float) -> np.ndarray:
    """t = 0, dt, …, < duration [s]."""
    if not (np.isfinite(duration) and np.isfinite(dt)) or duration <= 0 or dt <= 0 or dt > duration / 2:
        raise ValueError(
            f"duration and dt must be positive and finite with dt <= duration/2, got duration={duration}, dt={dt}"
        )
    return np.arange(int(round(duration / dt))) * dt


def _positive(**values: float) -> None:
    for k, v in values.items():
        if not (np.isfinite(v) and v > 0):
            raise ValueError(f"{k} must be positive and finite, got {v}")


def _traj(t, q, dq, ddq, name, enable=None) -> Trajectory:
    en = np.ones_like(t) if enable is None else enable.astype(float)
    return Trajectory(t, q, dq, ddq, en, name)


def minimum_jerk(t: np.ndarray, t0: float, t1: float, q0: float, q1: float) -> tuple[np.ndarray, ...]:
    """Quintic minimum-jerk move q0 → q1 on [t0, t1], constant outside; returns (q, q̇, q̈)."""
    T = t1 - t0
    s = np.clip((t - t0) / T, 0.0, 1.0)
    inside = (t > t0) & (t < t1)
    d = q1 - q0
    q = q0 + d * (10 * s**3 - 15 * s**4 + 6 * s**5)
    dq = np.where(inside, d * (30 * s**2 - 60 * s**3 + 30 * s**4) / T, 0.0)
    ddq = np.where(inside, d * (60 * s - 180 * s**2 + 120 * s**3) / T**2, 0.0)
    return q, dq, ddq


def linear_move(t: np.ndarray, t0: float, t1: float, q0: float, q1: float, blend: float) -> tuple[np.ndarray, ...]:
    """q0 → q1 on [t0, t1] at constant velocity, with constant-acceleration blends of ``blend`` seconds at both
    ends (a trapezoidal velocity profile); returns (q, q̇, q̈)."""
    T = t1 - t0
    if not 0 < 2 * blend <= T:
        raise ValueError(f"linear_move: need 0 < 2·blend <= duration, got blend={blend}, duration={T}")
    v = (q1 - q0) / (T - blend)
    a = v / blend
    tau = np.clip(t - t0, 0.0, T)
    rise = np.minimum(tau, blend)
    fall = np.clip(tau - (T - blend), 0.0, blend)
    q = q0 + 0.5 * a * rise**2 + v * np.clip(tau - blend, 0.0, T - 2 * blend) + (v * fall - 0.5 * a * fall**2)
    inside = (t > t0) & (t < t1)
    dq = np.where(inside, a * rise - a * fall, 0.0)
    ddq = np.where(inside, np.where(tau < blend, a, np.where(tau > T - blend, -a, 0.0)), 0.0)
    return q, dq, ddq


def minimum_jerk_waypoints(t: np.ndarray, points: list[tuple[float, float]]) -> tuple[np.ndarray, ...]:
    """Chain minimum-jerk moves through (time, position) waypoints (hold before/after); returns (q, q̇, q̈)."""
    q = np.full_like(t, points[0][1])
    dq = np.zeros_like(t)
    ddq = np.zeros_like(t)
    for (ta, qa), (tb, qb) in zip(points[:-1], points[1:]):
        if qb == qa:
            continue
        m = minimum_jerk(t, ta, tb, qa, qb)
        q += m[0] - qa
        dq += m[1]
        ddq += m[2]
    return q, dq, ddq


def joint_waypoints(
    poses: np.ndarray, dt: float, segment_s: float, dwell_s: float, loops: int = 1
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A multi-joint motion through joint-space ``poses`` (K, J) [rad]: a rest of ``dwell_s`` [s] at each pose and a
    minimum-jerk move of ``segment_s`` [s] between consecutive poses; ``loops`` > 1 moves from the last pose back
    to the first and plays them again. Returns t (T,) [s] on a ``dt`` grid from 0, q, q̇, q̈ (T, J); it ends on the
    last pose, at rest."""
    poses = np.asarray(poses, dtype=float)
    if poses.ndim != 2 or poses.size == 0 or not np.isfinite(poses).all():
        raise ValueError(f"poses must be a non-empty finite (K, J) array [rad], got shape {poses.shape}")
    _positive(dt=dt, segment_s=segment_s)
    if not (np.isfinite(dwell_s) and dwell_s >= 0) or loops < 1:
        raise ValueError(f"need dwell_s >= 0 [s] and loops >= 1, got dwell_s={dwell_s}, loops={loops}")
    seq = np.concatenate([poses] * loops)
    period = dwell_s + segment_s
    t = np.arange(int(round(((len(seq) - 1) * period + dwell_s) / dt)) + 1) * dt
    q = np.repeat(seq[:1], len(t), axis=0)
    dq, ddq = np.zeros_like(q), np.zeros_like(q)
    for k, (a, b) in enumerate(zip(seq[:-1], seq[1:])):
        t0 = k * period + dwell_s
        m = minimum_jerk(t[:, None], t0, t0 + segment_s, a, b)
        q += m[0] - a
        dq += m[1]
        ddq += m[2]
    return t, q, dq, ddq


def accelerated_oscillations(
    duration: float = 6.0,
    dt: float = 0.005,
    amplitude: float = 1.0,
    f0: float = 0.3,
    f1: float = 2.0,
    offset: float = 0.0,
) -> Trajectory:
    """Duclusaud et al. §V-A.1: constant amplitude, frequency rising linearly f0 → f1 [Hz] (a chirp)."""
    _positive(amplitude=amplitude, f0=f0, f1=f1)
    t = time_grid(duration, dt)
    k = (f1 - f0) / duration
    phase = 2 * np.pi * (f0 * t + 0.5 * k * t**2)
    w = 2 * np.pi * (f0 + k * t)
    dw = 2 * np.pi * k
    q = offset + amplitude * np.sin(phase)
    dq = amplitude * w * np.cos(phase)
    ddq = amplitude * (dw * np.cos(phase) - w**2 * np.sin(phase))
    return _traj(t, q, dq, ddq, "accelerated_oscillations")


def sub_oscillations(
    duration: float = 6.0,
    dt: float = 0.005,
    amplitude: float = 1.0,
    f_slow: float = 0.25,
    sub_amplitude: float = 0.15,
    f_fast: float = 2.5,
    offset: float = 0.0,
) -> Trajectory:
    """Duclusaud et al. §V-A.2: a large slow oscillation plus a small fast one."""
    _positive(amplitude=amplitude, f_slow=f_slow, sub_amplitude=sub_amplitude, f_fast=f_fast)
    t = time_grid(duration, dt)
    ws, wf = 2 * np.pi * f_slow, 2 * np.pi * f_fast
    q = offset + amplitude * np.sin(ws * t) + sub_amplitude * np.sin(wf * t)
    dq = amplitude * ws * np.cos(ws * t) + sub_amplitude * wf * np.cos(wf * t)
    ddq = -amplitude * ws**2 * np.sin(ws * t) - sub_amplitude * wf**2 * np.sin(wf * t)
    return _traj(t, q, dq, ddq, "sub_oscillations")


def raise_and_lower(duration: float = 6.0, dt: float = 0.005, amplitude: float = 1.5) -> Trajectory:
    """Duclusaud et al. §V-A.3: raise the mass in 1 s, hold 0.5 s, lower it slowly to rest (static plateaus until
    backdriven)."""
    _positive(amplitude=amplitude)
    if duration <= 2.5:
        raise ValueError(
            f"raise_and_lower needs duration > 2.5 s (1 s raise, 0.5 s hold, slow lowering), got {duration}"
        )
    t = time_grid(duration, dt)
    q, dq, ddq = minimum_jerk_waypoints(t, [(0.0, 0.0), (1.0, amplitude), (1.5, amplitude), (duration - 0.5, 0.0)])
    return _traj(t, q, dq, ddq, "raise_and_lower")


def lift_and_drop(
    duration: float = 6.0, dt: float = 0.005, amplitude: float = 1.5, release_time: float = 2.5
) -> Trajectory:
    """Duclusaud et al. §V-A.4: lift the mass, hold, then release the H-bridge (torque_enable = 0) and let it fall."""
    _positive(amplitude=amplitude)
    if not 1.0 < release_time < duration:
        raise ValueError(f"release_time must lie after the 1 s lift and before the end, got {release_time}")
    t = time_grid(duration, dt)
    q, dq, ddq = minimum_jerk_waypoints(t, [(0.0, 0.0), (1.0, amplitude), (release_time, amplitude)])
    enable = t < release_time
    return _traj(t, q, dq, ddq, "lift_and_drop", enable)


def schwarz_behnke_reference(dt: float = 0.005, offset: float = 0.0) -> Trajectory:
    """A Schwarz & Behnke-style reference (§5.1, Fig. 2), 10 s at rest-to-rest: walking-like oscillations (0–5 s:
    a(1 − cos ωt) with a = 0.25 rad, 1 Hz), a fast one (5–7 s: a = 0.3 rad, 2 Hz), a kick (minimum-jerk
    wind-up to +0.2 rad, swing to −0.5 rad in 0.2 s, return in 0.3 s), then linear segments (0 → 0.4 rad and
    back, at constant velocity with 0.1 s blends, 8.1–9.8 s) — static, slow, fast and constant-velocity
    motion in both directions. Position and velocity are continuous."""
    t = time_grid(10.0, dt)
    q = np.full_like(t, offset)
    dq = np.zeros_like(t)
    ddq = np.zeros_like(t)
    segs: list[tuple[float, float, float, float]] = [(0.0, 5.0, 0.25, 1.0), (5.0, 7.0, 0.3, 2.0)]
    for t0, t1, amp, f in segs:
        inside = (t >= t0) & (t < t1)
        w = 2 * np.pi * f
        tau = t - t0
        q += np.where(inside, amp * (1 - np.cos(w * tau)), 0.0)
        dq += np.where(inside, amp * w * np.sin(w * tau), 0.0)
        ddq += np.where(inside, amp * w**2 * np.cos(w * tau), 0.0)
    kick = minimum_jerk_waypoints(t, [(7.0, 0.0), (7.5, 0.2), (7.7, -0.5), (8.0, 0.0)])
    ramp_out = linear_move(t, 8.1, 8.9, 0.0, 0.4, 0.1)  # linear segments (constant velocity 0.57 rad/s)
    ramp_back = linear_move(t, 9.0, 9.8, 0.0, -0.4, 0.1)
    for part in (kick, ramp_out, ramp_back):
        q += part[0]
        dq += part[1]
        ddq += part[2]
    return _traj(t, q, dq, ddq, "schwarz_behnke_reference")


IDENTIFICATION_TRAJECTORIES: dict[str, Callable[..., Trajectory]] = {
    "accelerated_oscillations": accelerated_oscillations,
    "sub_oscillations": sub_oscillations,
    "raise_and_lower": raise_and_lower,
    "lift_and_drop": lift_and_drop,
}
TRAJECTORIES: dict[str, Callable[..., Trajectory]] = {
    **IDENTIFICATION_TRAJECTORIES,
    "schwarz_behnke_reference": schwarz_behnke_reference,
}


def trajectory(name: str, **kwargs) -> Trajectory:
    """Trajectory by name; unknown names raise with the list of valid ones."""
    if name not in TRAJECTORIES:
        raise ValueError(f"unknown trajectory {name!r}; valid trajectories: {', '.join(TRAJECTORIES)}")
    return TRAJECTORIES[name](**kwargs)
