"""A quasi-static stepping-in-place pattern for a 2×6-leg humanoid (ours, for the Schwarz & Behnke (Compliant Robot
Behavior) §5.2 experiment).

Three smooth channels drive the legs (every move is a quintic minimum-jerk segment, so q̇d and q̈d are analytic):

* lateral shift s ∈ [−1, 1] (+1 = trunk over the left foot): both hip rolls = −φ·s and both ankle rolls = +φ·s
  (a parallelogram: the trunk translates sideways by ≈ L·sin φ, trunk and feet stay level);
* crouch of each leg a + Δ·lift (lift ∈ [0, 1]): hip pitch = −(·), knee = 2(·), ankle pitch = −(·) (the foot
  stays parallel to the trunk; lift = 1 raises it by 2·l·(cos a − cos(a + Δ)) ≈ 6 cm for this robot).

One *step* = lift one foot and set it down while the trunk rests over the other foot; between steps the weight
shifts across. The left-foot support coefficient c_left fades linearly over each shift (Schwarz & Behnke §5.2) and is 1
or 0 while a foot is in the air. Arms and head hold a fixed pose. Joint names follow ``urdf/humanoid20.urdf``:
``{l,r}_{hip_roll,hip_pitch,knee,ankle_pitch,ankle_roll}``; other joints hold their pose.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..trajectories import minimum_jerk_waypoints as _chain


@dataclass(frozen=True)
class SteppingParams:
    crouch: float = 0.50  # a [rad]: knee = 2a while standing
    shift: float = 0.17  # φ [rad] hip/ankle roll at full shift (≈ 6.7 cm trunk shift for 0.40 m legs)
    lift: float = 0.25  # Δ [rad] extra crouch of the swing leg (≈ 6 cm foot clearance)
    t_stand: float = 1.0  # [s] initial stand
    t_first_shift: float = 1.2  # [s] centre → first support side
    t_shift: float = 2.0  # [s] one support side → the other
    t_lift: float = 1.2  # [s] lift the swing foot
    t_lower: float = 1.2  # [s] set it down
    t_settle: float = 0.5  # [s] both feet down, weight still over the support foot, before the next shift
    t_end: float = 2.0  # [s] back to centre and stand
    arm_pose: tuple[float, float, float] = (0.0, 0.15, -0.4)  # shoulder pitch, |shoulder roll|, elbow
    stride: float = 0.0  # d [m] forward step (0: in place); each swing foot lands d ahead of the trunk
    leg_link: float = 0.21  # l [m] thigh = shank length (urdf/humanoid20.urdf), for the sagittal leg IK


class GaitTrajectory(NamedTuple):
    t: np.ndarray  # (T,) [s]
    q: np.ndarray  # (T, J) [rad]
    dq: np.ndarray  # (T, J) [rad/s]
    ddq: np.ndarray  # (T, J) [rad/s²]
    c_left: np.ndarray  # (T,) left-foot support coefficient
    left_swing: np.ndarray  # (T,) bool: left foot scheduled in the air
    right_swing: np.ndarray  # (T,) bool
    n_steps: int


def _linear(t: np.ndarray, points: list[tuple[float, float]]) -> np.ndarray:
    ts, vs = zip(*points)
    return np.interp(t, ts, vs)


def sagittal_leg(x: np.ndarray, theta: np.ndarray, link: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(hip pitch, knee, ankle pitch) [rad] of a leg with two ``link`` [m] segments that puts the foot ``x`` [m]
    ahead of the hip at the height of the in-place pose of half-knee angle ``theta`` (hip −θ, knee 2θ, ankle −θ),
    the foot parallel to the trunk: hip = −(θ' + β), knee = 2θ', ankle = β − θ' with β = atan2(x, z),
    cos θ' = √(x² + z²) / 2l, z = 2l cos θ."""
    z = 2 * link * np.cos(theta)
    reach = np.hypot(x, z) / (2 * link)
    if (reach >= 1.0).any():
        raise ValueError(f"stride too long: the leg would need {2 * link * reach.max():.3f} m > {2 * link:.3f} m")
    half_knee, beta = np.arccos(reach), np.arctan2(x, z)
    return -(half_knee + beta), 2 * half_knee, beta - half_knee


def _derivatives(q: np.ndarray, dt: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(q, q̇, q̈) on a ``dt`` grid by second-order central differences (the IK joints of a forward gait)."""
    dq = np.gradient(q, dt, edge_order=2)
    return q, dq, np.gradient(dq, dt, edge_order=2)


def stepping_in_place(
    joint_names: Sequence[str], n_steps: int = 40, dt: float = 0.008, p: SteppingParams = SteppingParams()
) -> GaitTrajectory:
    """The desired trajectory for ``n_steps`` steps (first swing foot: right) on a grid of ``dt`` [s]; with
    ``p.stride`` > 0 a quasi-static forward walk: each swing foot lands ``stride`` ahead of the hip and the next
    weight shift carries the trunk over it (:func:`sagittal_leg`)."""
    if n_steps < 1:
        raise ValueError(f"n_steps must be >= 1, got {n_steps}")
    shift_pts, c_pts = [(0.0, 0.0), (p.t_stand, 0.0)], [(0.0, 0.5), (p.t_stand, 0.5)]
    lift_pts = {"l": [(0.0, 0.0)], "r": [(0.0, 0.0)]}
    swing_windows = {"l": [], "r": []}
    t = p.t_stand + p.t_first_shift
    side = 1.0  # first support: left
    shift_pts.append((t, side))
    c_pts.append((t, 1.0))
    x_pts = {"l": [(0.0, 0.0)], "r": [(0.0, 0.0)]}  # foot ahead of the hip [m] (stride > 0)

    def move_x(leg: str, ta: float, tb: float, to: float) -> None:
        x_pts[leg] += [(ta, x_pts[leg][-1][1]), (tb, to)]

    for k in range(n_steps):
        swing = "r" if side > 0 else "l"
        stance = "l" if swing == "r" else "r"
        swing_time = p.t_lift + p.t_lower
        lift_pts[swing] += [(t, 0.0), (t + p.t_lift, 1.0), (t + swing_time, 0.0)]
        swing_windows[swing].append((t, t + swing_time))
        move_x(swing, t + 0.2 * swing_time, t + 0.5 * swing_time, p.stride)  # forward while high
        t += swing_time + p.t_settle
        if k < n_steps - 1:
            shift_pts += [(t, side), (t + p.t_shift, -side)]
            c_pts += [(t, 1.0 if side > 0 else 0.0), (t + p.t_shift, 0.0 if side > 0 else 1.0)]
            move_x(swing, t, t + p.t_shift, 0.0)  # the trunk moves over the new support foot
            move_x(stance, t, t + p.t_shift, -p.stride)
            side = -side
            t += p.t_shift
    shift_pts += [(t, side), (t + p.t_end / 2, 0.0)]
    for leg in "lr":
        move_x(leg, t, t + p.t_end / 2, x_pts[leg][-1][1] - p.stride / 2)  # trunk between the feet
    c_pts += [(t, 1.0 if side > 0 else 0.0), (t + p.t_end / 2, 0.5)]
    duration = t + p.t_end
    tt = np.arange(int(round(duration / dt))) * dt
    s = _chain(tt, shift_pts)
    lifts = {k: _chain(tt, v + [(duration, 0.0)]) for k, v in lift_pts.items()}

    J = len(joint_names)
    q = np.zeros((len(tt), J))
    dq = np.zeros_like(q)
    ddq = np.zeros_like(q)
    idx = {n: i for i, n in enumerate(joint_names)}

    def put(name: str, coef: float, chan, offset: float = 0.0) -> None:
        if name in idx:
            i = idx[name]
            q[:, i] = offset + coef * chan[0]
            dq[:, i] = coef * chan[1]
            ddq[:, i] = coef * chan[2]

    for side_name, sign in (("l", 1.0), ("r", -1.0)):
        put(f"{side_name}_hip_roll", -p.shift, s)
        put(f"{side_name}_ankle_roll", p.shift, s)
        lf = lifts[side_name]
        if p.stride == 0.0:
            put(f"{side_name}_hip_pitch", -p.lift, lf, -p.crouch)
            put(f"{side_name}_knee", 2 * p.lift, lf, 2 * p.crouch)
            put(f"{side_name}_ankle_pitch", -p.lift, lf, -p.crouch)
        else:
            x = _chain(tt, x_pts[side_name] + [(duration, x_pts[side_name][-1][1])])[0]
            legs = sagittal_leg(x, p.crouch + p.lift * lf[0], p.leg_link)
            for joint, angle in zip(("hip_pitch", "knee", "ankle_pitch"), legs):
                put(f"{side_name}_{joint}", 1.0, _derivatives(angle, dt))
        sp, sr, el = p.arm_pose
        for n, v in (
            (f"{side_name}_shoulder_pitch", sp),
            (f"{side_name}_shoulder_roll", sign * sr),
            (f"{side_name}_elbow", el),
        ):
            if n in idx:
                q[:, idx[n]] = v
    c_left = np.clip(_linear(tt, c_pts), 0.0, 1.0)

    def windows(w):
        m = np.zeros(len(tt), dtype=bool)
        for a, b in w:
            m |= (tt >= a) & (tt < b)
        return m

    return GaitTrajectory(tt, q, dq, ddq, c_left, windows(swing_windows["l"]), windows(swing_windows["r"]), n_steps)
