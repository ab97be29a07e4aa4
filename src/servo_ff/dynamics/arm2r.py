"""The 2R arm of Duclusaud et al. §VI-B in MuJoCo: a triangle traced by IK, M1 vs M4 friction (ROS-free).

``urdf/arm2r.urdf``: an MX-106 shoulder and an MX-64 elbow, pitch axes, hanging along −z at q = 0; the
end effector in the arm's x–z plane is

    x = −(l1·sin q1 + l2·sin(q1 + q2)),   z = −(l1·cos q1 + l2·cos(q1 + q2)).

:func:`triangle_path` visits three corners with a minimum-jerk profile on each edge (rest at the corners, so
the joints stop and restart against static friction), the goals are the IK of that path at the control rate,
and :func:`run_arm` drives the arm through the MuJoCo servo layer with bam's parameter files for the chosen
friction model. :func:`compare` measures how far two runs' trajectories differ.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .mujoco_model import build_model
from .mujoco_servos import MujocoServos, ServoOptions
from .servo_map import load_servo_map

REPO = Path(__file__).resolve().parents[3]
ARM2R_URDF = REPO / "urdf" / "arm2r.urdf"
L1 = L2 = 0.18  # [m] shoulder–elbow, elbow–tip (urdf/arm2r.urdf)
#: Corners [m] (x, z) of the traced triangle, in front of and below the shoulder (ours: inside the reach,
#: loading both joints by up to about half their holding torque).
TRIANGLE = ((0.08, -0.28), (0.22, -0.16), (0.20, -0.26))
KP_LOW, KP_HIGH = 8.0, 32.0  # register units: a quarter of, and bam's identification gain (Protocol-1 default)


def fk_2r(q: np.ndarray, l1: float = L1, l2: float = L2) -> np.ndarray:
    """Joint angles (..., 2) → end-effector (..., 2) = (x, z) [m]."""
    q1, q12 = q[..., 0], q[..., 0] + q[..., 1]
    return np.stack([-(l1 * np.sin(q1) + l2 * np.sin(q12)), -(l1 * np.cos(q1) + l2 * np.cos(q12))], axis=-1)


def ik_2r(p: np.ndarray, l1: float = L1, l2: float = L2, elbow: float = 1.0) -> np.ndarray:
    """End effector (..., 2) = (x, z) → joint angles (..., 2); ``elbow`` ±1 picks the branch (sign of q2).
    A point out of reach raises ``ValueError``."""
    p = np.asarray(p, dtype=float)
    a, b = -p[..., 0], -p[..., 1]  # a = l1 sin q1 + l2 sin q12, b = l1 cos q1 + l2 cos q12
    c2 = (a**2 + b**2 - l1**2 - l2**2) / (2 * l1 * l2)
    if np.any(np.abs(c2) > 1.0):
        raise ValueError("ik_2r: a point is out of the arm's reach")
    q2 = elbow * np.arccos(c2)
    q1 = np.arctan2(a, b) - np.arctan2(l2 * np.sin(q2), l1 + l2 * np.cos(q2))
    return np.stack([q1, q2], axis=-1)


def triangle_path(
    dt: float, edge_s: float = 1.0, pause_s: float = 0.5, loops: int = 2, corners=TRIANGLE
) -> tuple[np.ndarray, np.ndarray]:
    """(t, p): the corners visited in order ``loops`` times, minimum-jerk along each straight edge in ``edge_s``
    seconds, ``pause_s`` at rest on each corner (and before the start)."""
    c = np.asarray(corners, dtype=float)
    pts = [np.repeat(c[:1], int(round(pause_s / dt)), axis=0)]
    n_edge = int(round(edge_s / dt))
    s = np.arange(1, n_edge + 1) / n_edge
    s = 10 * s**3 - 15 * s**4 + 6 * s**5
    for _ in range(loops):
        for i in range(len(c)):
            a, b = c[i], c[(i + 1) % len(c)]
            pts.append(a + s[:, None] * (b - a))
            pts.append(np.repeat(b[None], int(round(pause_s / dt)), axis=0))
    p = np.concatenate(pts)
    return np.arange(len(p)) * dt, p


class ArmRun(NamedTuple):
    model: str
    kp: float
    t: np.ndarray  # (T,) control ticks [s]
    q_des: np.ndarray  # (T, 2) goals [rad]
    q: np.ndarray  # (T, 2) measured at the tick, before that tick's goal [rad]
    ee_des: np.ndarray  # (T, 2) [m]
    ee: np.ndarray  # (T, 2) [m]

    def tracking_rms(self) -> float:
        """RMS end-effector distance to the path [m]."""
        return float(np.sqrt(np.mean(np.sum((self.ee - self.ee_des) ** 2, axis=1))))


def make_arm(
    model: str, kp: float, dt: float = 0.001, options: ServoOptions = ServoOptions(), urdf: Path | str = ARM2R_URDF
) -> MujocoServos:
    """The arm on a fixed base, MX-106 shoulder and MX-64 elbow with bam's ``model`` file, P gain ``kp``."""
    sim = build_model(urdf, base="fixed", dt=dt)
    servos = {
        "servos": {"shoulder": {"preset": f"mx106/{model}", "kp": kp}, "elbow": {"preset": f"mx64/{model}", "kp": kp}}
    }
    return MujocoServos(sim, load_servo_map(servos, sim.joint_names), options)


def run_arm(
    model: str,
    kp: float,
    dt: float = 0.001,
    control_dt: float = 0.01,
    loops: int = 2,
    options: ServoOptions = ServoOptions(),
    elbow: float = -1.0,
) -> ArmRun:
    """Trace the triangle with friction model ``model`` ("m1" … "m6") at gain ``kp``; start at rest on the first
    corner's IK pose."""
    ratio = int(round(control_dt / dt))
    if ratio < 1 or abs(ratio * dt - control_dt) > 1e-9:
        raise ValueError(f"control_dt ({control_dt}) must be a multiple of dt ({dt})")
    t, p = triangle_path(control_dt, loops=loops)
    q_des = ik_2r(p, elbow=elbow)
    arm = make_arm(model, kp, dt, options)
    arm.data.qpos[arm.qadr] = q_des[0]
    arm.set_initial_state()
    arm.reset()
    q = np.zeros_like(q_des)
    for k in range(len(t)):
        q[k] = arm.data.qpos[arm.qadr]
        arm.command(q_des[k])
        arm.step(ratio)
    return ArmRun(model, kp, t, q_des, q, fk_2r(q_des), fk_2r(q))


@dataclass(frozen=True)
class Difference:
    """How far two runs' trajectories are apart (same goals)."""

    joint_max: np.ndarray  # (2,) [rad]
    joint_rms: np.ndarray  # (2,) [rad]
    ee_max: float  # [m]
    ee_rms: float  # [m]


def compare(a: ArmRun, b: ArmRun) -> Difference:
    dq = a.q - b.q
    de = np.linalg.norm(a.ee - b.ee, axis=1)
    return Difference(
        np.abs(dq).max(axis=0), np.sqrt(np.mean(dq**2, axis=0)), float(de.max()), float(np.sqrt(np.mean(de**2)))
    )


__all__ = [
    "ARM2R_URDF",
    "ArmRun",
    "Difference",
    "KP_HIGH",
    "KP_LOW",
    "TRIANGLE",
    "compare",
    "fk_2r",
    "ik_2r",
    "make_arm",
    "run_arm",
    "triangle_path",
]
