"""One bank of simulated servos advanced in time: the state the stepper needs between calls, for any front-end.

:class:`ServoBank` holds, per servo, the packed parameter row (the firmware P gain ``slots.KP``, PWM limit and supply
voltage may differ per servo), θ, θ̇, the goal, the firmware's internal target (a Feetech STS goal-velocity
limit slews it toward the goal, :func:`~servo_ff.models.motor.goal_slew`; without a limit it is the goal), the
torque enable, and the outputs (motor torque, voltage). :meth:`ServoBank.advance` runs
:func:`servo_ff.models.stepper.step` over the servos (Algorithm 1 of Duclusaud et al., "Extended friction models
for the physics simulation of servo actuators"; it applies ``q_offset``): no physics lives here.

Loads: a :class:`~servo_ff.models.stepper.PendulumLoad` or :class:`~servo_ff.models.stepper.ExternalLoad`, or a
load model evaluated at θ before every step: an object with ``at(theta) -> ExternalLoad`` (e.g. URDF gravity) or a
callable ``theta -> ExternalLoad | (tau_ext, inertia)``. :class:`ServoLoad` describes one servo's load (the
virtual bus's ``--load`` flag); :func:`pendulum_of` turns one per servo into a single batched pendulum load.

Used by the simulation node (:mod:`servo_ff.nodes.sim_backend`) and the virtual Dynamixel bus
(:mod:`servo_ff.bus.virtual_servos`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import kernels, slots
from .params import ActuatorParams
from .step_inputs import StaticInputs, static_inputs
from .stepper import ExternalLoad, PendulumLoad, step, steps, steps_static
from .thermal import WindingTemperature

#: A load: a stepper load, a model with ``at(theta)``, a callable of θ, or None (no load).
Load = Any


def load_at(load: Load, theta: np.ndarray) -> PendulumLoad | ExternalLoad | None:
    """The stepper load of ``load`` at ``theta``: stepper loads as they are, load models evaluated."""
    if load is None or isinstance(load, (PendulumLoad, ExternalLoad)):
        return load
    at = getattr(load, "at", None)
    out = at(theta) if at is not None else load(theta)
    if isinstance(out, tuple):
        tau_ext, inertia = out
        return ExternalLoad(inertia=inertia, tau_ext=tau_ext)
    return out


def load_inertia(load: Load, n: int, theta) -> np.ndarray:
    """Load inertia per servo [kg·m²] (armature excluded) at ``theta`` (a load model is evaluated there;
    non-finite angles read as 0)."""
    if load is not None and not isinstance(load, (PendulumLoad, ExternalLoad)):
        th = np.asarray(theta, dtype=np.float64)
        return np.asarray(load_at(load, np.where(np.isfinite(th), th, 0.0)).inertia, dtype=np.float64)
    if isinstance(load, PendulumLoad):
        return np.broadcast_to(load.inertia(), (n,)).astype(np.float64)
    if isinstance(load, ExternalLoad):
        return np.broadcast_to(np.asarray(load.inertia, dtype=np.float64), (n,)).copy()
    return np.zeros(n)


@dataclass(frozen=True)
class ServoLoad:
    """One servo's load: a pendulum (point ``mass`` [kg] at ``length`` [m] on an arm of ``arm_mass`` [kg],
    θ = 0 hanging down) and/or a fixed extra ``inertia`` [kg·m²] without gravity. The physics is
    :class:`~servo_ff.models.stepper.PendulumLoad`'s (:meth:`as_pendulum`)."""

    mass: float = 0.0
    length: float = 0.0
    arm_mass: float = 0.0
    inertia: float = 0.0

    @classmethod
    def pendulum(cls, mass: float, length: float, arm_mass: float = 0.0) -> ServoLoad:
        return cls(mass=mass, length=length, arm_mass=arm_mass)

    @classmethod
    def fixed_inertia(cls, inertia: float) -> ServoLoad:
        return cls(inertia=inertia)

    def __post_init__(self) -> None:
        for k in ("mass", "length", "arm_mass", "inertia"):
            v = getattr(self, k)
            if not (math.isfinite(v) and v >= 0):
                raise ValueError(f"load.{k} must be finite and >= 0, got {v}")

    def as_pendulum(self) -> PendulumLoad:
        return PendulumLoad(self.mass, self.length, self.arm_mass, self.inertia)

    @classmethod
    def parse(cls, spec: str) -> ServoLoad:
        """``pendulum:MASS,LENGTH[,ARM_MASS]`` or ``inertia:J`` (SI units)."""
        kind, _, rest = spec.partition(":")
        try:
            vals = [float(v) for v in rest.split(",")] if rest else []
        except ValueError:
            raise ValueError(f"--load {spec!r}: values must be numbers") from None
        if kind == "pendulum" and len(vals) in (2, 3):
            return cls.pendulum(*vals)
        if kind == "inertia" and len(vals) == 1:
            return cls.fixed_inertia(vals[0])
        raise ValueError(f"--load {spec!r}: expected 'pendulum:MASS,LENGTH[,ARM_MASS]' or 'inertia:J'")


def pendulum_of(loads: Sequence[ServoLoad]) -> PendulumLoad:
    """One batched :class:`~servo_ff.models.stepper.PendulumLoad` from one :class:`ServoLoad` per servo."""
    cols = np.array([(ld.mass, ld.length, ld.arm_mass, ld.inertia) for ld in loads], dtype=np.float64)
    return PendulumLoad(*(cols[:, j].copy() for j in range(4)))


class ServoBank:
    """``n`` servos of one actuator model (``params``) under ``load``, advanced together.

    Inputs: ``goal`` [rad], ``enable`` (per servo, 0 releases the H-bridge), the packed rows ``packed``
    (:meth:`set_kp`, :attr:`supply_voltage`). State: ``theta`` [rad], ``dtheta`` [rad/s], ``target`` (the
    firmware's internal target), ``time`` [s]. Outputs: ``tau_m`` (``effort``) [N·m] and ``volts`` [V].
    Inputs and state are replaced, never written in place, by the bank (an array handed in stays the caller's).
    """

    def __init__(self, params: ActuatorParams, n: int, load: Load = None, theta=None, backend: str = "auto"):
        self.n = int(n)
        self.load = load
        self.backend = backend
        self.theta = np.zeros(self.n) if theta is None else np.array(theta, dtype=np.float64)
        self.dtheta = np.zeros(self.n)
        self.goal = self.theta.copy()
        self.target = self.theta.copy()
        self.enable = np.ones(self.n)
        self.tau_m = np.zeros(self.n)
        self.volts = np.zeros(self.n)
        self.time = 0.0
        self.params = params
        self.packed = np.tile(params.packed(), (self.n, 1))
        self._fixed: tuple[np.ndarray, Load, StaticInputs] | None = None  # (rows, load) checked, and the result
        self.thermal: WindingTemperature | None = None
        self._thermal_row(params)

    def _thermal_row(self, params: ActuatorParams) -> None:
        """Run the winding model of ``params.thermal`` (kept across a change of the other parameters)."""
        if params.thermal is None:
            self.thermal = None
        elif self.thermal is None or self.thermal.th != params.thermal:
            old = self.thermal
            self.thermal = WindingTemperature(params.thermal, self.n, params.thermal.reference)
            if old is not None:
                self.thermal.temp, self.thermal.ambient = old.temp, old.ambient
        if self.thermal is not None:
            self.packed[:, slots.R] = self.thermal.resistance(params.R)

    def set_ambient(self, ambient: float) -> None:
        """Ambient temperature [°C] of the thermal model; the windings start there."""
        if self.thermal is not None:
            self.thermal = WindingTemperature(self.thermal.th, self.n, ambient)
            self.packed[:, slots.R] = self.thermal.resistance(self.params.R)

    def _heat(self, dt: float) -> None:
        """Joule heat of the last step into the windings; R follows the temperature (a hot servo is weaker).
        The rows change only when R moved by 0.1 % (they are checked again after a change)."""
        th = self.thermal
        if th is None:
            return
        th.advance(dt, self.tau_m / self.packed[:, slots.KT], self.params.R)
        hot = th.resistance(self.params.R)
        if np.abs(hot - self.packed[:, slots.R]).max() > 1e-3 * self.params.R:
            self.packed[:, slots.R] = hot

    # ------------------------------------------------------------------ parameters
    def set_params(self, params: ActuatorParams, kp: np.ndarray | None = None) -> None:
        """New actuator parameters for every servo; the per-servo P gains stay unless ``kp`` is given."""
        kp = self.packed[:, slots.KP].copy() if kp is None else np.asarray(kp, dtype=np.float64)
        self.params = params
        self.packed = np.tile(params.packed(), (self.n, 1))
        self.packed[:, slots.KP] = kp
        self._thermal_row(params)

    @property
    def kp(self) -> np.ndarray:
        """bam's firmware P gain per servo (the Dynamixel register ÷ 16)."""
        return self.packed[:, slots.KP]

    def set_kp(self, kp: np.ndarray) -> None:
        kp = np.asarray(kp, dtype=np.float64)
        if kp.shape != (self.n,) or not np.isfinite(kp).all() or (kp < 0).any():
            raise ValueError(f"kp must be {self.n} finite values >= 0, got {kp}")
        self.packed[:, slots.KP] = kp

    @property
    def supply_voltage(self) -> float:
        return float(self.packed[0, slots.VIN])

    @supply_voltage.setter
    def supply_voltage(self, volts: float) -> None:
        self.packed[:, slots.VIN] = volts

    @property
    def effort(self) -> np.ndarray:
        """Motor torque [N·m] (``tau_m``)."""
        return self.tau_m

    @effort.setter
    def effort(self, value: np.ndarray) -> None:
        self.tau_m = value

    def load_inertia(self) -> np.ndarray:
        """Load inertia per servo [kg·m²] at the present θ (armature excluded)."""
        return load_inertia(self.load, self.n, self.theta)

    # ------------------------------------------------------------------ time
    def advance(self, dt: float, substeps: int = 1) -> int:
        """Advance every servo by ``dt`` seconds in ``substeps`` stepper steps toward the held goal (the inputs
        checked once: :func:`~servo_ff.models.stepper.steps`); returns the number of steps."""
        static = self.load is None or isinstance(self.load, (PendulumLoad, ExternalLoad))
        if static and self.backend != "numpy" and kernels.HAVE_NUMBA:  # parameters and load checked once
            r, self.target = steps_static(
                self._static_inputs(),
                self.theta,
                self.dtheta,
                self.goal,
                self.target,
                self.enable,
                dt / substeps,
                substeps,
                self.packed[:, slots.GVMAX],
            )
            self.theta, self.dtheta, self.tau_m, self.volts = r.theta, r.dtheta, r.tau_m, r.volts
            self.time += dt
            self._heat(dt)
            return substeps
        r, self.target = steps(
            self.packed,
            self.theta,
            self.dtheta,
            self.goal,
            dt / substeps,
            substeps,
            load=self.load if static else None,  # a load model is evaluated by load_of at each step's θ
            enable=self.enable,
            backend=self.backend,
            goal_rate=self.packed[:, slots.GVMAX],
            target=self.target,
            load_of=None if static else (lambda th: load_at(self.load, th)),
        )
        self.theta, self.dtheta, self.tau_m, self.volts = r.theta, r.dtheta, r.tau_m, r.volts
        self.time += dt
        self._heat(dt)
        return substeps

    def _static_inputs(self) -> StaticInputs:
        """The packed rows and the static load, checked again only when either changed (rows compared by value:
        :meth:`set_kp` and :attr:`supply_voltage` write them in place)."""
        if self._fixed is None or self._fixed[1] is not self.load or not np.array_equal(self._fixed[0], self.packed):
            self._fixed = (self.packed.copy(), self.load, static_inputs(self.packed, self.load, self.n))
        return self._fixed[2]

    def advance_to(self, t: float, dt_max: float) -> int:
        """Advance to time ``t`` [s] in equal steps of at most ``dt_max``; returns the number of steps (0 if
        ``t`` is not ahead of :attr:`time`)."""
        span = t - self.time
        if not span > 0:
            return 0
        steps = self.advance(span, max(1, math.ceil(span / dt_max - 1e-9)))
        self.time = t
        return steps

    def warm_up(self, dt: float) -> None:
        """One discarded step: compiles / loads the numba kernel before a real-time loop starts (a first-call
        JIT compile inside a timer callback would stall it for seconds)."""
        step(
            self.packed,
            self.theta,
            self.dtheta,
            self.goal,
            dt,
            load=load_at(self.load, self.theta),
            enable=1.0,
            backend=self.backend,
        )

    # ------------------------------------------------------------------ events
    def reset(self, theta0: np.ndarray) -> None:
        """Back to a start-up state whatever happened before (a refused, even non-finite, state included):
        θ = ``theta0``, θ̇ = 0, goal = internal target = ``theta0``, no effort, torque on."""
        theta0 = np.array(theta0, dtype=np.float64).reshape(self.n)
        if not np.isfinite(theta0).all():
            raise ValueError(f"reset position must be finite, got {theta0}")
        self.theta = theta0.copy()
        self.dtheta = np.zeros(self.n)
        self.goal = theta0.copy()
        self.target = theta0.copy()
        self.tau_m = np.zeros(self.n)
        self.volts = np.zeros(self.n)
        self.enable = np.ones(self.n)

    def reboot(self, servos=None) -> None:
        """Like a Dynamixel REBOOT of ``servos`` (indices; default all): torque off, goal and internal target set
        to the present position."""
        mask = np.zeros(self.n, dtype=bool)
        mask[slice(None) if servos is None else servos] = True
        self.enable = np.where(mask, 0.0, self.enable)
        self.goal = np.where(mask, self.theta, self.goal)
        self.target = np.where(mask, self.theta, self.target)


__all__ = ["ServoBank", "ServoLoad", "pendulum_of", "load_at", "load_inertia"]
