"""Candidate servo laws for bench/candidate_laws.py, and the per-step harness that runs them (not a bench itself).

A candidate adds keys (name, low, high, start) to M4's and changes the simulation in one of three ways: ``rows``
changes the packed parameter rows before each step of the stepper's Algorithm 1, ``load`` the pendulum it drives, or
``advance`` replaces the step (a second state: the gear backlash and compliance). At ``neutral()`` (the start values
unless a class says otherwise) a candidate is the baseline exactly. Units: rad, rad/s, N·m, V, A.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from servo_ff.identification.simulation_cost import mae_per_log
from servo_ff.identification.time_shift import MAX_DELAY, simulate_timed
from servo_ff.models import slots
from servo_ff.models.friction import applied_friction, friction_budget, stopping_torque
from servo_ff.models.motor import current_limited_duty, firmware_torque
from servo_ff.models.params import P_ARM, P_IMAX, P_KC, P_KT, P_QOFF, P_R, P_VIN, P_VMAX
from servo_ff.models.stepper import PendulumLoad, step

CU = 0.00393  # copper's temperature coefficient of resistance [1/K]


def raw_column(log, key: str) -> np.ndarray:
    """A raw recording's column on the log's grid (Present PWM signed and scaled to duty)."""
    entries = json.loads(Path(log.source).read_text())["entries"]
    t = np.array([e["timestamp"] for e in entries], float)
    v = np.array([e[key] for e in entries], float)
    if key == "load":
        v = np.where(v > 32767, v - 65536, v) / 885.0
    return np.interp(log.t, t, v)


def stacked_column(batch, logs, key: str) -> np.ndarray:
    """(T, logs) of a raw column, padded with its last value to the batch's length."""
    n = batch.position.shape[0]
    return np.stack([np.pad(raw_column(lg, key), (0, n - len(lg)), "edge") for lg in logs], axis=1)


class Candidate:
    """Extra keys (name, low, high, start) and a per-step change of the packed rows (or of the load, or of the whole
    step). ``rows`` sees ``state``: the step's input (theta, dtheta, goal, enable) and the previous step's output
    (volts, tau_m)."""

    keys: tuple[tuple[str, float, float, float], ...] = ()
    advance = None  # optional: (p, state, goal_k, enable_k, grav, inertia, dt, extra) → θ (pop, logs)

    def neutral(self) -> np.ndarray:
        """The extra values at which the candidate is the baseline exactly (default: the search's start)."""
        return np.array([k[3] for k in self.keys], float)

    def prepare(self, batch, logs) -> None:
        pass

    def load(self, batch, extra: np.ndarray) -> PendulumLoad:
        """The pendulum each (candidate, log) drives (default: the log's)."""
        return PendulumLoad(mass=batch.mass, length=batch.length, arm_mass=batch.arm_mass)

    def rows(self, p: np.ndarray, k: int, extra: np.ndarray, state: dict) -> np.ndarray:
        return p


class MeasuredSupply(Candidate):
    def prepare(self, batch, logs):
        self.volts = stacked_column(batch, logs, "input_volts")

    def rows(self, p, k, extra, state):
        q = p.copy()
        q[:, :, P_VIN] = self.volts[k]
        return q


class SupplySag(Candidate):
    keys = (("supply_resistance", 0.0, 3.0, 0.0),)

    def rows(self, p, k, extra, state):
        if "volts" not in state:
            return p
        q = p.copy()
        duty = state["volts"] / p[:, :, P_VIN]
        amps = state["tau_m"] / p[:, :, P_KT]
        q[:, :, P_VIN] = np.maximum(p[:, :, P_VIN] - extra[:, 0:1] * duty * amps, 0.5)
        return q


class CommandFriction(Candidate):
    """Coulomb friction K_c + K_d·|duty|: set by the command (the PWM duty), not by the motion."""

    keys = (("friction_per_duty", 0.0, 0.3, 0.0),)

    def rows(self, p, k, extra, state):
        if "volts" not in state:
            return p
        q = p.copy()
        q[:, :, P_KC] = p[:, :, P_KC] + extra[:, 0:1] * np.abs(state["volts"] / p[:, :, P_VIN])
        return q


class GoalSpeedFriction(Candidate):
    """Coulomb friction K_c + K_g·|θ̇d|: set by the commanded goal speed (the trajectory), not by θ̇."""

    keys = (("friction_per_goal_speed", 0.0, 0.05, 0.0),)

    def prepare(self, batch, logs):
        g = batch.goal_position
        self.goal_speed = np.abs(np.gradient(g, batch.dt, axis=0))

    def rows(self, p, k, extra, state):
        q = p.copy()
        q[:, :, P_KC] = p[:, :, P_KC] + extra[:, 0:1] * self.goal_speed[k]
        return q


class HotWinding(Candidate):
    def prepare(self, batch, logs):
        self.temp = stacked_column(batch, logs, "temp")

    def rows(self, p, k, extra, state):
        q = p.copy()
        q[:, :, P_R] = p[:, :, P_R] * (1 + CU * (self.temp[k] - 25.0))
        return q


class DriverCurrentLimit(Candidate):
    """The stall/saturation law: a current limit I_max in position mode that the Present PWM register does not show
    (the driver chops the current; the register keeps the law's duty). The neutral 3 A is above the stall current
    of the datasheet box at 7.4 V (inactive)."""

    keys = (("current_limit", 0.2, 3.0, 3.0),)

    def rows(self, p, k, extra, state):
        q = p.copy()
        q[:, :, P_IMAX] = extra[:, 0:1]
        return q


class BacklashCompliance(Candidate):
    """Gear backlash (total gap ``backlash`` [rad]) and compliance (``stiffness`` [N·m/rad], ``damping``
    [N·m·s/rad]) between the motor side (inertia: the armature; friction: the model's) and the output (the load's
    inertia and gravity). The encoder and so the firmware's error are on the output, the back-EMF on the motor side.
    Semi-implicit Euler in ``substeps`` sub-steps per sample."""

    keys = (("backlash", 0.0, 0.05, 0.0), ("stiffness", 2.0, 60.0, 60.0), ("damping", 0.0, 0.2, 0.05))
    substeps = 4

    def __init__(self):
        self.state: dict = {}

    def start(self, th, dth):
        self.state = {"phi": th.copy(), "dphi": dth.copy(), "th": th.copy(), "dth": dth.copy()}

    def advance(self, p, goal, enable, grav, inertia, dt, extra):
        s = self.state
        half_gap, k_s, c_s = extra[:, 0:1] / 2, extra[:, 1:2], extra[:, 2:3]
        j_m = np.maximum(p[..., P_ARM], 1e-5)
        h = dt / self.substeps
        for _ in range(self.substeps):
            tau_m, _ = firmware_torque(p, s["th"], s["dphi"], goal)
            tau_m = tau_m * enable
            d = s["phi"] - s["th"]
            engaged = np.abs(d) > half_gap
            tau_t = np.where(engaged, k_s * (d - np.sign(d) * half_gap) + c_s * (s["dphi"] - s["dth"]), 0.0)
            budget = friction_budget(p, tau_m, -tau_t, s["dphi"])
            tau_f = applied_friction(stopping_torque(j_m, h, s["dphi"], tau_m, -tau_t), budget)
            s["dphi"] = s["dphi"] + (tau_m - tau_t + tau_f) / j_m * h
            s["phi"] = s["phi"] + s["dphi"] * h
            tau_e = -grav * np.sin(s["th"] + p[..., P_QOFF])
            s["dth"] = s["dth"] + (tau_t + tau_e) / inertia * h
            s["th"] = s["th"] + s["dth"] * h
        return s["th"]


class StickBand(Candidate):
    """The stall law the recordings show: at rest the gear holds while the law's motor torque ramps from ×0.34 to
    ×2.5 of the gravity torque. A stick budget ``stick``·|τ_m − τ_e| (opposed torques add), weighted
    exp(−(θ̇/``stick_speed``)²), on top of the model's friction: one state, Algorithm 1 otherwise unchanged."""

    keys = (("stick", 0.0, 1.0, 0.0), ("stick_speed", 0.005, 0.5, 0.05))

    def start(self, th, dth):
        self.state = {"th": th.copy(), "dth": dth.copy()}

    def advance(self, p, goal, enable, grav, inertia, dt, extra):
        s = self.state
        tau_m, _ = firmware_torque(p, s["th"], s["dth"], goal)
        tau_m = tau_m * enable
        tau_e = -grav * np.sin(s["th"] + p[..., P_QOFF])
        j = inertia + p[..., P_ARM]
        stick = extra[:, 0:1] * np.abs(tau_m - tau_e) * np.exp(-((s["dth"] / extra[:, 1:2]) ** 2))
        budget = friction_budget(p, tau_m, tau_e, s["dth"]) + stick
        tau_f = applied_friction(stopping_torque(j, dt, s["dth"], tau_m, tau_e), budget)
        acc = (tau_m + tau_e + tau_f) / j
        dth = np.clip(s["dth"] + acc * dt, -p[..., P_VMAX], p[..., P_VMAX])
        s["th"], s["dth"] = s["th"] + dth * dt + 0.5 * acc * dt**2, dth
        return s["th"]


def law_duty(p: np.ndarray, state: dict) -> np.ndarray:
    """The voltage law's duty on this step's input (current-limit window, then ±max PWM), as the step computes it."""
    command = p[..., slots.KP] * p[..., slots.EGAIN] * (state["goal"] - state["theta"])
    duty = current_limited_duty(
        command, state["dtheta"], p[..., slots.VIN], p[..., slots.KT], p[..., slots.R], p[..., slots.IMAX]
    )
    return np.clip(duty, -p[..., slots.MAXPWM], p[..., slots.MAXPWM])


class PwmDeadband(Candidate):
    """The H-bridge's dead time: the effective duty sign(d)·max(|d| − d0, 0) [duty, 0–0.15], a loss that is a larger
    share of the small duties of a low gain. Applied as the supply scaled by the effective/law duty ratio, within the
    band as a zero gain (duty 0: the motor shorted, back-EMF braking as in the drive/brake H-bridge); d0 = 0 scales
    the supply by exactly 1 and zeroes no gain. Voltage law only."""

    keys = (("pwm_deadband", 0.0, 0.15, 0.0),)

    def rows(self, p, k, extra, state):
        a, d0 = np.abs(law_duty(p, state)), extra[:, 0:1]
        q = p.copy()
        q[:, :, slots.VIN] = p[:, :, slots.VIN] * np.divide(a - d0, a, out=np.ones_like(a), where=a > d0)
        q[:, :, slots.KP] = np.where((a > 0) & (a <= d0), 0.0, p[:, :, slots.KP])  # in the band: duty 0
        return q


class TorqueSaturation(Candidate):
    """The motor torque (the current) saturating smoothly: τ = τ_s·tanh(τ_law/τ_s), τ_s [N·m] searched over 0.2–2
    from 0.35 (about the torque the kp 400 stall holds: active from the start). Applied as R scaled by
    (τ_law/τ_s)/tanh(τ_law/τ_s) (a resistance that grows with the current scales both terms of Eq. 13); neutral
    τ_s = ∞ scales it by exactly 1. Voltage law only."""

    keys = (("torque_saturation", 0.2, 2.0, 0.35),)

    def neutral(self):
        return np.array([np.inf])

    def rows(self, p, k, extra, state):
        tau, _ = firmware_torque(p, state["theta"], state["dtheta"], state["goal"])
        x = np.abs(tau * state["enable"]) / extra[:, 0:1]
        shrink = np.divide(np.tanh(x), x, out=np.ones_like(x), where=x > 0)
        q = p.copy()
        q[:, :, slots.R] = p[:, :, slots.R] / shrink
        return q


class LoadScale(Candidate):
    """The pendulum's m·l scaled by ``load_scale`` (0.8–1.25): gravity torque and load inertia alike (the bench's
    0.49 kg at 0.10 m leaves out the arm and the horn); the armature is the model's."""

    keys = (("load_scale", 0.8, 1.25, 1.0),)

    def load(self, batch, extra):
        s = extra[:, 0:1]
        return PendulumLoad(mass=batch.mass * s, length=batch.length, arm_mass=batch.arm_mass * s)


class Timed(Candidate):
    """Time, not torque (servo_ff.identification.time_shift, the batched rollout): ``command_delay`` [s] (the goal
    reaches the firmware's loop late), ``measurement_delay`` [s] (the logged position is older than its stamp), or
    the firmware law evaluated every dt/``substeps`` (held between)."""

    substeps = 1

    def mae(self, packed: np.ndarray, batch, extra: np.ndarray) -> np.ndarray:
        delays = dict(zip((k[0] for k in self.keys), extra.T))
        theta = simulate_timed(packed, batch, substeps=self.substeps, **delays)
        return mae_per_log(theta, batch)


class CommandDelay(Timed):
    keys = (("command_delay", 0.0, MAX_DELAY, 0.0),)


class MeasurementDelay(Timed):
    keys = (("measurement_delay", 0.0, MAX_DELAY, 0.0),)


class BothDelays(Timed):
    keys = (("command_delay", 0.0, MAX_DELAY, 0.0), ("measurement_delay", 0.0, MAX_DELAY, 0.0))


class FirmwarePeriod(Timed):
    """The law evaluated every 1 ms (5 sub-steps of the log's 5 ms), the goal held between."""

    substeps = 5


class FirmwarePeriodDelays(Timed):
    """The 1 ms law with both delays."""

    keys = BothDelays.keys
    substeps = 5


CANDIDATES = {
    "baseline": Candidate,
    "measured_supply": MeasuredSupply,
    "supply_sag": SupplySag,
    "command_friction": CommandFriction,
    "goal_speed_friction": GoalSpeedFriction,
    "hot_winding": HotWinding,
    "current_limit": DriverCurrentLimit,
    "backlash_compliance": BacklashCompliance,
    "stick_band": StickBand,
    "command_delay": CommandDelay,
    "measurement_delay": MeasurementDelay,
    "both_delays": BothDelays,
    "firmware_1ms": FirmwarePeriod,
    "firmware_1ms_delays": FirmwarePeriodDelays,
    "pwm_deadband": PwmDeadband,
    "torque_saturation": TorqueSaturation,
    "load_scale": LoadScale,
}


def harness_mae(packed: np.ndarray, batch, cand: Candidate, extra: np.ndarray, trace: list | None = None) -> np.ndarray:
    """MAE (pop, logs) of the candidate's simulation stepped one sample at a time (a timed candidate: its batched
    rollout). ``trace``: gets θ (pop, logs) [rad] before each goal appended."""
    if isinstance(cand, Timed):
        return cand.mae(packed, batch, extra)
    load = cand.load(batch, extra)
    th = np.broadcast_to(batch.position[0], packed.shape[:2]).copy()
    dth = np.broadcast_to(batch.speed[0], packed.shape[:2]).copy()
    err = np.zeros(packed.shape[:2])
    state: dict = {}
    if cand.advance is not None:
        cand.start(th, dth)
        grav = np.broadcast_to(load.gravity_torque_amplitude(), th.shape)
        inertia = np.broadcast_to(load.inertia(), th.shape)
    for k in range(batch.position.shape[0]):
        if trace is not None:
            trace.append(th.copy())
        err += np.abs(th - batch.position[k]) * batch.mask[k]
        goal = np.broadcast_to(batch.goal_position[k], th.shape)
        enable = np.broadcast_to(batch.torque_enable[k], th.shape)
        if cand.advance is not None:
            th = cand.advance(packed, goal, enable, grav, inertia, batch.dt, extra)
        else:
            state.update(theta=th, dtheta=dth, goal=goal, enable=enable)
            r = step(cand.rows(packed, k, extra, state), th, dth, goal, batch.dt, load, enable=enable)
            th, dth = r.theta, r.dtheta
            state["volts"], state["tau_m"] = r.volts, r.tau_m
        if not np.isfinite(th).all():
            bad = ~np.isfinite(th)
            th = np.where(bad, 0.0, th)
            err[bad] = np.inf
            if cand.advance is not None:
                for key in cand.state:
                    cand.state[key] = np.where(bad, 0.0, cand.state[key])
            else:
                dth = np.where(bad, 0.0, dth)
    return err / batch.mask.sum(axis=0)
