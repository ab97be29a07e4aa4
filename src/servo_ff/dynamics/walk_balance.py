"""Balance feedback for the placo walk (ROS-free): the trunk's measured pitch/roll and their rates (IMU) → offsets on
the legs' planned joint positions, as real walking stacks do (ROBOTIS OP3's walking module and the Darwin-OP walk
add gyro × gain to hip roll, knee, ankle pitch and ankle roll; Rhoban's walks have a similar IMU loop).

Corrections are expressed in the world frame and turned into joint offsets through each joint axis's component
(URDF), so the same gains serve mirrored legs:

* δ_pitch = k_ap·(θ − θ_ref) + k_ap_rate·ω_y: the feet turn toe-down (about +y, relative to the shanks) when the
  trunk pitches forward, which moves the centre of pressure forward and pushes the trunk back; the hips turn the
  trunk back by ``hip_pitch``·δ_pitch;
* δ_roll = k_ar·φ + k_ar_rate·ω_x: the feet turn about +x when the trunk rolls right, and the hips roll the trunk
  back by ``hip_roll``·δ_roll.

θ_ref is the walk's planned trunk pitch, φ_ref = 0. Each offset is held within ±``limit`` [rad].

A reading is refused (ValueError naming why, :mod:`.imu_reading`) when its orientation is not finite, has a zero
norm or is declared absent (covariance element 0 = −1, REP-145), or, with a rate gain, when its angular velocity is
not finite or declared absent; the angular velocity is not read while both rate gains are 0.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .imu_reading import declared_absent, rates_refusal, unit_quaternion


@dataclass(frozen=True)
class BalanceGains:
    """Gains of the balance feedback (0 everywhere: off). Units: rad per rad, rad per rad/s."""

    ankle_pitch: float = 0.0  # [rad/rad] trunk pitch error → feet pitch
    ankle_pitch_rate: float = 0.0  # [rad/(rad/s)] trunk pitch rate → feet pitch
    ankle_roll: float = 0.0  # [rad/rad] trunk roll → feet roll
    ankle_roll_rate: float = 0.0  # [rad/(rad/s)]
    hip_pitch: float = 0.0  # hips' share of δ_pitch (trunk turned back relative to the legs)
    hip_roll: float = 0.0  # hips' share of δ_roll
    limit: float = 0.2  # [rad] largest offset on one joint

    @property
    def enabled(self) -> bool:
        return any((self.ankle_pitch, self.ankle_pitch_rate, self.ankle_roll, self.ankle_roll_rate))

    @property
    def uses_rates(self) -> bool:
        """The angular velocity is read (a rate gain is not 0)."""
        return bool(self.ankle_pitch_rate or self.ankle_roll_rate)


@dataclass(frozen=True)
class BalanceJoints:
    """The legs' joints the feedback moves (defaults: urdf/op3.urdf)."""

    ankle_pitch: tuple[str, ...] = ("l_ank_pitch", "r_ank_pitch")
    ankle_roll: tuple[str, ...] = ("l_ank_roll", "r_ank_roll")
    hip_pitch: tuple[str, ...] = ("l_hip_pitch", "r_hip_pitch")
    hip_roll: tuple[str, ...] = ("l_hip_roll", "r_hip_roll")


def trunk_pitch_roll(quat_xyzw) -> tuple[float, float]:
    """(pitch, roll) [rad] of an orientation quaternion (x, y, z, w); pitch positive forward (about +y, REP-103),
    roll positive to the right (about +x)."""
    x, y, z, w = (float(v) for v in quat_xyzw)
    pitch = math.asin(max(-1.0, min(1.0, 2.0 * (w * y - z * x))))
    roll = math.atan2(2.0 * (w * x + y * z), 1.0 - 2.0 * (x * x + y * y))
    return pitch, roll


def joint_axes(urdf: str | Path) -> dict[str, np.ndarray]:
    """Joint name → unit axis (in the joint frame, which for these legs is parallel to the trunk's at q = 0)."""
    root = ET.parse(str(urdf)).getroot()
    out = {}
    for j in root.findall("joint"):
        ax = j.find("axis")
        v = np.array([float(s) for s in (ax.get("xyz") if ax is not None else "1 0 0").split()])
        out[j.get("name")] = v / max(float(np.linalg.norm(v)), 1e-12)
    return out


class BalanceFeedback:
    """Offsets [rad] on ``joints`` (their order) from the trunk's IMU reading; see the module docstring."""

    def __init__(
        self, urdf: str | Path, joints: list[str], gains: BalanceGains, which: BalanceJoints | None = None
    ) -> None:
        which = which or BalanceJoints()
        axes = joint_axes(urdf)
        self.gains = gains
        self.n = len(joints)
        self.pitch = np.zeros(self.n)  # joint offset per unit δ_pitch
        self.roll = np.zeros(self.n)
        for names, row, comp, share in (
            (which.ankle_pitch, self.pitch, 1, 1.0),
            (which.ankle_roll, self.roll, 0, 1.0),
            (which.hip_pitch, self.pitch, 1, gains.hip_pitch),
            (which.hip_roll, self.roll, 0, gains.hip_roll),
        ):
            for name in names:
                if name not in joints:
                    raise ValueError(f"{urdf}: balance joint {name!r} is not one of the walk's joints")
                row[joints.index(name)] = share * float(np.sign(axes[name][comp]))
        self.clamped = 0  # offsets held at ±limit so far

    def offsets(self, quat_xyzw, gyro, pitch_ref: float, covariance0: tuple[float, float] = (0.0, 0.0)) -> np.ndarray:
        """Joint offsets for an IMU reading: orientation (x, y, z, w), angular velocity (trunk frame) [rad/s],
        element 0 of their covariances (−1: not given). ValueError naming why a reading cannot be used."""
        g = self.gains
        absent = declared_absent("orientation", covariance0[0])
        if absent:
            raise ValueError(absent)
        pitch, roll = trunk_pitch_roll(unit_quaternion(quat_xyzw))
        d_pitch = g.ankle_pitch * (pitch - pitch_ref)
        d_roll = g.ankle_roll * roll
        if g.uses_rates:
            why = rates_refusal(gyro, covariance0[1])
            if why:
                raise ValueError(why)
            d_pitch += g.ankle_pitch_rate * float(gyro[1])
            d_roll += g.ankle_roll_rate * float(gyro[0])
        out = d_pitch * self.pitch + d_roll * self.roll
        held = np.clip(out, -g.limit, g.limit)
        self.clamped += int(np.count_nonzero(held != out))
        return held
