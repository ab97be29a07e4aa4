"""Synthetic bench logs: the four Duclusaud et al. trajectories over a grid of pendulum masses, lengths and P gains
(Duclusaud et al. Table I), simulated with any parameter set in ONE batched rollout, with optional measurement noise and
encoder quantisation (4096 counts/rev on Dynamixel MX)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np

from ..io.servo_log import DEFAULT_DT, ServoLog
from ..models import slots
from ..models.params import ActuatorParams
from ..models.stepper import PendulumLoad, rollout
from ..trajectories import IDENTIFICATION_TRAJECTORIES, Trajectory, trajectory

#: Duclusaud et al. Table I, Dynamixel column.
TABLE1_MASSES: tuple[float, ...] = (0.5, 1.0, 1.5)  # [kg]
TABLE1_LENGTHS: tuple[float, ...] = (0.1, 0.15, 0.2)  # [m]
TABLE1_KPS: tuple[float, ...] = (4.0, 8.0, 16.0, 32.0)  # register units of an MX, whose default kp is 32


def table1_kps(default_kp: float) -> tuple[float, ...]:
    """Table I's P gains for a servo of default gain ``default_kp`` (register units): the same fractions 1/8, 1/4,
    1/2, 1 of it (4…32 for an MX's 32, 50…400 for an XL330's 400: the MX numbers on an XL330 barely move it)."""
    return tuple(k * default_kp / TABLE1_KPS[-1] for k in TABLE1_KPS)


def quantize(position: np.ndarray, counts_per_rev: int) -> np.ndarray:
    """Round angles [rad] to the encoder resolution 2π/counts."""
    if counts_per_rev <= 0:
        raise ValueError(f"counts_per_rev must be > 0, got {counts_per_rev}")
    q = 2 * np.pi / counts_per_rev
    return np.round(position / q) * q


def bench_grid(
    masses: Sequence[float] = TABLE1_MASSES,
    lengths: Sequence[float] = TABLE1_LENGTHS,
    kps: Sequence[float] = TABLE1_KPS,
    trajectories: Sequence[str] = tuple(IDENTIFICATION_TRAJECTORIES),
) -> list[dict]:
    """Every (trajectory, mass, length, kp) combination as dicts."""
    for name in trajectories:
        if name not in IDENTIFICATION_TRAJECTORIES:
            raise ValueError(f"unknown trajectory {name!r}; valid: {', '.join(IDENTIFICATION_TRAJECTORIES)}")
    return [
        dict(trajectory=tr, mass=m, length=l, kp=kp)
        for tr, m, l, kp in itertools.product(trajectories, masses, lengths, kps)
    ]


def bench_refusal(
    grid: Sequence[dict], dt: float, duration: float, arm_mass: float, noise: float, speed_noise: float
) -> str | None:
    """Why these settings would write logs no reader takes or silently differ from what was asked (a kp of 0, an
    infinite speed noise, a NaN noise read as none), or None: gains, ``dt`` and ``duration`` finite and > 0;
    masses, lengths, ``arm_mass`` and both noises finite and >= 0."""
    for key, value in (("dt", dt), ("duration", duration)):
        if not (math.isfinite(value) and value > 0):
            return f"{key} must be finite and > 0, got {value}"
    for key, value in (("arm_mass", arm_mass), ("noise", noise), ("speed_noise", speed_noise)):
        if not (math.isfinite(value) and value >= 0):
            return f"{key} must be finite and >= 0, got {value}"
    for g in grid:
        if not (math.isfinite(g["kp"]) and g["kp"] > 0):
            return f"kp must be finite and > 0, got {g['kp']}"
        for key in ("mass", "length"):
            if not (math.isfinite(g[key]) and g[key] >= 0):
                return f"{key} must be finite and >= 0, got {g[key]}"
    return None


def simulate_logs(
    params: ActuatorParams,
    grid: Sequence[dict],
    dt: float = DEFAULT_DT,
    duration: float = 6.0,
    arm_mass: float = 0.0,
    vin: float | None = None,
    noise: float = 0.0,
    speed_noise: float = 0.0,
    counts_per_rev: int | None = None,
    substeps: int = 1,
    seed: int = 0,
) -> list[ServoLog]:
    """Simulate one log per grid entry (all in one batched :func:`rollout`).

    ``noise``/``speed_noise``: Gaussian measurement noise std [rad], [rad/s]; ``counts_per_rev``: quantise the
    recorded position; ``substeps``: integrate at dt/substeps and record every ``substeps``-th state.
    The goal is sent at each recording step (held between substeps), as a bus loop would.
    """
    if not grid:
        raise ValueError("grid is empty")
    if substeps < 1:
        raise ValueError(f"substeps must be >= 1, got {substeps}")
    refusal = bench_refusal(grid, dt, duration, arm_mass, noise, speed_noise)
    if refusal:
        raise ValueError(refusal)
    vin = params.firmware.vin if vin is None else float(vin)
    trajs: dict[str, Trajectory] = {}
    for g in grid:
        if g["trajectory"] not in trajs:
            trajs[g["trajectory"]] = trajectory(g["trajectory"], duration=duration, dt=dt)
    goals = np.stack([trajs[g["trajectory"]].q for g in grid], axis=1)  # (T, L)
    enable = np.stack([trajs[g["trajectory"]].torque_enable for g in grid], axis=1)
    packed = np.tile(params.packed(), (len(grid), 1))
    packed[:, slots.KP] = [g["kp"] for g in grid]
    packed[:, slots.VIN] = vin
    load = PendulumLoad(
        mass=np.array([g["mass"] for g in grid], float),
        length=np.array([g["length"] for g in grid], float),
        arm_mass=arm_mass,
    )
    res = rollout(
        packed,
        goals[0],
        0.0,
        np.repeat(goals, substeps, axis=0),
        dt / substeps,
        load,
        enable=np.repeat(enable, substeps, axis=0),
    )
    pos, vel = res.theta[::substeps], res.dtheta[::substeps]
    rng = np.random.default_rng(seed)
    if noise > 0:
        pos = pos + rng.normal(0.0, noise, pos.shape)
    if speed_noise > 0:
        vel = vel + rng.normal(0.0, speed_noise, vel.shape)
    if counts_per_rev:
        pos = quantize(pos, counts_per_rev)
    t = np.arange(goals.shape[0]) * dt
    logs = []
    for j, g in enumerate(grid):
        logs.append(
            ServoLog(
                t=t,
                position=pos[:, j].copy(),
                speed=vel[:, j].copy(),
                goal_position=goals[:, j],
                torque_enable=enable[:, j],
                input_volts=np.full(len(t), vin),
                mass=g["mass"],
                arm_mass=arm_mass,
                length=g["length"],
                kp=g["kp"],
                vin=vin,
                motor=params.actuator,
                trajectory=g["trajectory"],
                source=f"sim:{params.actuator}/{params.model}/{g['trajectory']}"
                f"_m{g['mass']}_l{g['length']}_kp{g['kp']:g}",
            )
        )
    return logs


def log_filename(log: ServoLog, index: int) -> str:
    """File stem without dots: index, trajectory, mass [g], length [mm], kp."""
    return f"{index:03d}_{log.trajectory}_m{log.mass * 1e3:.0f}g_l{log.length * 1e3:.0f}mm_kp{log.kp:g}"


__all__ = [
    "simulate_logs",
    "bench_grid",
    "quantize",
    "log_filename",
    "TABLE1_MASSES",
    "TABLE1_LENGTHS",
    "TABLE1_KPS",
    "table1_kps",
]
