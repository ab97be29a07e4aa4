"""The servo layer for MuJoCo: every driven joint is its own simulated servo (Duclusaud et al. §IV-E), ROS-free.

MuJoCo integrates; per physics step the layer only sets each driven joint's

* motor torque — the firmware law ``firmware_1`` (P gain, duty or current limits; Eq. 11–15) of the joint's
  parameter set, applied as ``qfrc_applied`` (other joints' entries are left alone);
* friction — the budget ``friction_budget_1`` (Eq. 10, any of M1–M6) from this step's motor torque and the
  previous step's external torque, written to ``dof_frictionloss`` (budget − K_v|θ̇|) and ``dof_damping``
  (K_v), so that MuJoCo's constraint solver clips friction to the budget as Algorithm 1 does (as Rhoban/bam's
  ``MujocoController``); the armature goes to ``dof_armature``.

These are the core model's own scalar functions (:mod:`servo_ff.models.scalar`), compiled with numba into one
loop over the joints (numpy fallback without numba). Options (:class:`ServoOptions`): encoder quantisation,
command latency in control periods, seeded sensor noise. A non-finite state (or MuJoCo resetting one) raises
:class:`PhysicsDiverged` and blocks every reading until :meth:`MujocoServos.reset`.

Use from your own loop (RL)::

    servos = MujocoServos.from_description("robot.urdf", "servos.yaml", base="floating")
    m, d = servos.model, servos.data
    for _ in range(steps):
        servos.command(policy(obs))           # once per control period (bus cycle)
        for _ in range(substeps):
            servos.before_step()              # torque + friction for this physics step
            mujoco.mj_step(m, d)
            servos.after_step()               # external torque for the next budget; divergence check
        obs = servos.joint_state(), servos.imu()
"""

from __future__ import annotations

import logging
import math
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import mujoco
import numpy as np

from ..errors import ServoFFError
from ..models import slots
from ..models.kernels import HAVE_NUMBA
from .mujoco_model import SimModel, SimModelError, build_model
from .mujoco_sensors import ImuReading, Odometry, foot_forces, free_joint_odometry, imu_reading, support_coefficient
from .mujoco_servo_kernels import KERNELS, post_step_py, pre_step_py
from .servo_map import ServoMap, load_servo_map, servo_yaml_feet, servo_yaml_robot, servo_yaml_solref

log = logging.getLogger(__name__)
_RESET_WARNINGS = np.array(
    [int(getattr(mujoco.mjtWarning, w)) for w in ("mjWARN_BADQACC", "mjWARN_BADQPOS", "mjWARN_BADQVEL")]
)


class PhysicsDiverged(ServoFFError, RuntimeError):
    """The physics state went non-finite (or MuJoCo reset it); readings are refused until ``reset()``."""


@dataclass(frozen=True)
class ServoOptions:
    """Realism options; all off by default.

    ``counts_per_rev``: encoder quantisation (4096 for Dynamixel MX/X): the goal register holds whole counts,
    the firmware's error and every position reading use the encoder count nearest the true angle.
    ``latency``: control periods between :meth:`~MujocoServos.command` and the goal reaching the firmware
    (the bus cycle's delay; 1 = applied one period late). Noise (standard deviations, seeded by ``seed``) is
    added to what is read — positions (before quantisation), velocities, gyro, accelerometer — never to the
    firmware's own encoder.
    """

    counts_per_rev: int | None = None
    latency: int = 0
    position_noise: float = 0.0  # [rad]
    velocity_noise: float = 0.0  # [rad/s]
    gyro_noise: float = 0.0  # [rad/s]
    accel_noise: float = 0.0  # [m/s²]
    seed: int = 0

    def __post_init__(self) -> None:
        if self.counts_per_rev is not None and not (int(self.counts_per_rev) == self.counts_per_rev > 0):
            raise ValueError(f"counts_per_rev must be a positive integer or None, got {self.counts_per_rev}")
        if not (int(self.latency) == self.latency >= 0):
            raise ValueError(f"latency must be a whole number of control periods >= 0, got {self.latency}")
        for key in ("position_noise", "velocity_noise", "gyro_noise", "accel_noise"):
            v = getattr(self, key)
            if not (math.isfinite(v) and v >= 0):
                raise ValueError(f"{key} must be a finite standard deviation >= 0, got {v}")

    @property
    def resolution(self) -> float:
        """[rad] per encoder count (0: no quantisation)."""
        return 2 * math.pi / self.counts_per_rev if self.counts_per_rev else 0.0


class JointState(NamedTuple):
    position: np.ndarray  # [rad]
    velocity: np.ndarray  # [rad/s]
    effort: np.ndarray  # motor torque of the last physics step [N·m]


def quantize(x: np.ndarray, resolution: float) -> np.ndarray:
    """Nearest multiple of ``resolution`` (0: unchanged)."""
    return np.round(np.asarray(x) / resolution) * resolution if resolution > 0 else np.asarray(x, dtype=float)


def switch_off_actuators(m: mujoco.MjModel, joints: Sequence[str]) -> tuple[str, ...]:
    """The model's own actuators on ``joints`` (an MJCF's position servos, e.g. Menagerie's) get zero gain and bias,
    so that only the servo layer drives those joints; returns their names (logged)."""
    ids = {int(m.joint(n).id) for n in joints}
    off = []
    for a in range(m.nu):
        if m.actuator_trntype[a] == mujoco.mjtTrn.mjTRN_JOINT and int(m.actuator_trnid[a, 0]) in ids:
            m.actuator_gainprm[a, :] = 0.0
            m.actuator_biasprm[a, :] = 0.0
            off.append(m.actuator(a).name or f"actuator {a}")
    if off:
        log.info("%d actuator(s) of the model switched off, the servo layer drives their joints: %s", len(off), off)
    return tuple(off)


class MujocoServos:
    """The simulated servos of one MuJoCo model/data pair (see the module docstring for the loop)."""

    def __init__(
        self, sim: SimModel, servos: ServoMap, options: ServoOptions = ServoOptions(), backend: str = "auto"
    ) -> None:
        self.sim, self.model, self.data = sim, sim.model, sim.data
        self._feet = np.asarray(sim.feet, dtype=np.int64)  # foot body ids, as the contact kernel takes them
        self.options = options
        m = self.model
        hinges = set(sim.joint_names)
        for name in servos.joint_names:
            if name not in hinges:
                kind = (
                    "not a joint of the model"
                    if mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, name) < 0
                    else "not a hinge (servo models are rotary)"
                )
                raise SimModelError(f"{sim.source}: joint {name!r} is {kind}")
        self.joint_names: tuple[str, ...] = servos.joint_names
        self.qadr = np.array([m.joint(n).qposadr[0] for n in self.joint_names], dtype=np.int64)
        self.dadr = np.array([m.joint(n).dofadr[0] for n in self.joint_names], dtype=np.int64)
        rows = []
        for name in self.joint_names:
            js = servos.joints[name]
            row = js.params.packed()
            if js.kp is not None:
                row[slots.KP] = js.kp
            rows.append(row)
        self.p = np.ascontiguousarray(rows, dtype=float).reshape(len(rows), -1)
        self.params = {n: servos.joints[n].params for n in self.joint_names}
        self.disabled_actuators = switch_off_actuators(m, self.joint_names)
        m.dof_armature[self.dadr] = self.p[:, slots.ARM]
        m.dof_damping[self.dadr] = self.p[:, slots.KV]
        self.dof_servo = np.full(m.nv, -1, dtype=np.int64)
        self.dof_servo[self.dadr] = np.arange(len(self.dadr))
        if backend not in ("auto", "numba", "numpy"):
            raise ValueError(f"backend must be 'auto', 'numba' or 'numpy', got {backend!r}")
        if backend == "numba" and not HAVE_NUMBA:
            raise RuntimeError("backend='numba' requested but numba is not installed")
        self._pre, self._post = (pre_step_py, post_step_py) if backend == "numpy" or not HAVE_NUMBA else KERNELS
        self._qpos, self._qvel, self._qfrc = self.data.qpos, self.data.qvel, self.data.qfrc_applied
        self._bias, self._constraint = self.data.qfrc_bias, self.data.qfrc_constraint
        self._frictionloss = m.dof_frictionloss
        self._rng = np.random.default_rng(options.seed)
        n = len(self.joint_names)
        self.enable = np.ones(n)
        self.energy, self.energy_drawn = np.zeros(n), np.zeros(n)
        self.tau_m, self.volts, self.tau_ext = np.zeros(n), np.zeros(n), np.zeros(n)
        self.set_initial_state()
        self._clear()

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_description(
        cls,
        source: str | Path | None,
        servos: str | Path | Mapping[str, Any] | ServoMap,
        base: str | None = None,
        feet: Sequence[str] | None = None,
        dt: float = 0.001,
        options: ServoOptions = ServoOptions(),
        obstacle_slot: bool = False,
        **kw,
    ) -> MujocoServos:
        """URDF/MJCF (path or text, or ``menagerie:<name>[/<entry>]``) + servo YAML (path, dict or
        :class:`ServoMap`) → the layer. ``source`` None: the YAML's ``robot:``. The YAML's ``feet:`` is used when
        ``feet`` is not given, its ``contact_solref:`` for a URDF's contacts; every hinge joint must have a servo (or
        be null)."""
        if source is None:
            source = None if isinstance(servos, ServoMap) else servo_yaml_robot(servos)
            if source is None:
                raise SimModelError("no robot description: give one, or robot: in the servo YAML")
        if feet is None and not isinstance(servos, ServoMap):
            feet = servo_yaml_feet(servos)
        elif feet is None:
            feet = servos.feet
        solref = None if isinstance(servos, ServoMap) else servo_yaml_solref(servos)
        sim = build_model(source, base=base, feet=feet, dt=dt, obstacle_slot=obstacle_slot, solref=solref)
        smap = servos if isinstance(servos, ServoMap) else load_servo_map(servos, sim.joint_names)
        missing = [n for n in sim.joint_names if n not in smap.joints and n not in smap.passive]
        if missing:
            raise SimModelError(f"{sim.source}: joint {missing[0]!r} has no servo in the servo map")
        return cls(sim, smap, options, **kw)

    def set_initial_state(self) -> None:
        """The present qpos/qvel become what :meth:`reset` returns to."""
        self._initial = (self.data.qpos.copy(), self.data.qvel.copy())

    def _clear(self) -> None:
        self.diverged: str | None = None
        self.tau_ext[:] = 0.0
        self.tau_m[:] = 0.0
        self.volts[:] = 0.0
        self.hold_present()
        self._warnings = self._warning_counts()
        self._t_before = self.data.time

    def hold_present(self) -> None:
        """The firmware's goal, internal target (slew-limited toward the goal; Feetech STS) and the goals in flight
        := the present position: torque coming on starts from where the joint is, not from a target or a goal
        left behind."""
        hold = quantize(self._qpos[self.qadr], self.options.resolution)
        self.goal = hold.copy()
        self.target = hold.copy()
        self._queue = deque(hold.copy() for _ in range(self.options.latency))

    def reset(self, qpos: np.ndarray | None = None, qvel: np.ndarray | None = None) -> None:
        """Back to the initial state (or the given full qpos/qvel): clears a divergence, goals hold the pose."""
        qpos = self._initial[0] if qpos is None else np.array(qpos, dtype=float)  # copies: may alias data
        qvel = self._initial[1] if qvel is None else np.array(qvel, dtype=float)
        mujoco.mj_resetData(self.model, self.data)
        self.data.qpos[:] = qpos
        self.data.qvel[:] = qvel
        mujoco.mj_forward(self.model, self.data)
        self._clear()

    # ------------------------------------------------------------------ commands
    def _per_joint(self, name: str, values) -> np.ndarray:
        a = np.broadcast_to(np.asarray(values, dtype=float), (len(self.joint_names),)).copy()
        bad = np.flatnonzero(~np.isfinite(a))
        if bad.size:
            raise ValueError(f"{name} for joint {self.joint_names[bad[0]]!r} is not finite ({a[bad[0]]})")
        return a

    def command(self, goals) -> None:
        """One control period's goal positions [rad] (joint order); they reach the firmware ``latency``
        periods later, rounded to encoder counts when quantisation is on."""
        g = np.array(goals, dtype=np.float64)  # a copy: the queue must not alias the caller's array
        n = len(self.joint_names)
        # the per-period path (500 Hz in the sim node): one check, a dot with zeros (NaN iff a goal is not finite)
        if g.shape != (n,) or not math.isfinite(g.dot(np.zeros(n))):
            g = self._per_joint("goal", goals)  # the full check, naming the joint (raises for a bad goal)
        res = self.options.resolution
        if res > 0:  # quantize() in place: the same operations, the same result, no temporaries
            np.multiply(np.round(np.divide(g, res, out=g), out=g), res, out=g)
        self._queue.append(g)
        self.goal = self._queue.popleft()

    def set_kp(self, kp) -> None:
        """Firmware P gain(s), register units (one value or one per joint); effective immediately."""
        k = self._per_joint("kp", kp)
        if (k < 0).any():
            raise ValueError("kp must be >= 0")
        self.p[:, slots.KP] = k

    def set_enable(self, enable) -> None:
        """Torque enable per joint (1 on, 0 the H-bridge released: no motor torque, friction stays)."""
        e = self._per_joint("enable", enable)
        if ((e < 0) | (e > 1)).any():
            raise ValueError("enable must be in [0, 1]")
        self.enable = e

    # ------------------------------------------------------------------ stepping
    def before_step(self) -> None:
        """Set this physics step's motor torques (qfrc_applied) and friction (frictionloss) — call before
        ``mj_step``."""
        if self.diverged:
            raise PhysicsDiverged(self.diverged)
        self._t_before = self.data.time  # MuJoCo's own reset of a diverged state zeroes data.time
        self._pre(
            self.p,
            self._qpos,
            self._qvel,
            self.qadr,
            self.dadr,
            self.goal,
            self.target,
            self.enable,
            self.tau_ext,
            self.options.resolution,
            self.model.opt.timestep,
            self._qfrc,
            self._frictionloss,
            self.tau_m,
            self.volts,
            self.energy,
            self.energy_drawn,
        )

    def after_step(self) -> None:
        """After ``mj_step``: the external torque each servo felt (for the next budget); a non-finite state, or
        MuJoCo's own reset of one, raises :class:`PhysicsDiverged`."""
        d = self.data
        bad = self._post(
            d.efc_type,
            d.efc_id,
            d.efc_force,
            self._bias,
            self._constraint,
            self.dadr,
            self.dof_servo,
            self.tau_ext,
            self._qpos,
            self._qvel,
        )
        if bad >= 0:
            self._diverge(f"t = {self._t_before + self.model.opt.timestep:.4f} s: {self._describe(bad)} is not finite")
        counts = self._warning_counts()
        if counts != self._warnings:
            kind = next(i for i, (a, b) in enumerate(zip(counts, self._warnings)) if a != b)
            info = int(d.warning[int(_RESET_WARNINGS[kind])].lastinfo)
            what = self._describe(info if kind == 1 else self.model.nq + info)
            self._diverge(
                f"t = {self._t_before + self.model.opt.timestep:.4f} s: MuJoCo found {what} non-finite or huge "
                f"({('qacc', 'qpos', 'qvel')[kind]} check) and reset the state"
            )

    def step(self, n: int = 1) -> None:
        """``n`` physics steps with the current goals."""
        for _ in range(n):
            self.before_step()
            mujoco.mj_step(self.model, self.data)
            self.after_step()

    def _warning_counts(self) -> tuple[int, ...]:
        return tuple(self.data.warning.number[_RESET_WARNINGS].tolist())

    def _diverge(self, message: str) -> None:
        self.diverged = f"physics diverged at {message}; call reset()"
        raise PhysicsDiverged(self.diverged)

    def _describe(self, index: int) -> str:
        m = self.model
        if index < m.nq:
            joint = int(np.searchsorted(m.jnt_qposadr, index, side="right") - 1)
            return f"qpos[{index}] (joint {m.joint(joint).name or joint!r})"
        dof = index - m.nq
        return f"qvel[{dof}] (joint {m.joint(int(m.dof_jntid[dof])).name or int(m.dof_jntid[dof])!r})"

    # ------------------------------------------------------------------ readings
    def _check(self) -> None:
        if self.diverged:
            raise PhysicsDiverged(self.diverged)

    def joint_state(self) -> JointState:
        """Positions (noise, then encoder counts), velocities (+ noise) and motor torques of the driven joints."""
        self._check()
        o, n = self.options, len(self.joint_names)
        pos = self._qpos[self.qadr].copy()
        vel = self._qvel[self.dadr].copy()
        if o.position_noise:
            pos += self._rng.normal(0.0, o.position_noise, n)
        if o.velocity_noise:
            vel += self._rng.normal(0.0, o.velocity_noise, n)
        return JointState(quantize(pos, o.resolution), vel, self.tau_m.copy())

    def imu(self, body: int | None = None) -> ImuReading:
        """The IMU on ``body`` (default: the trunk / root body), gyro and accelerometer noise added."""
        self._check()
        r = imu_reading(self.model, self.data, self.sim.root_body if body is None else body)
        o = self.options
        gyro = r.angular_velocity + (self._rng.normal(0.0, o.gyro_noise, 3) if o.gyro_noise else 0.0)
        acc = r.linear_acceleration + (self._rng.normal(0.0, o.accel_noise, 3) if o.accel_noise else 0.0)
        return ImuReading(r.orientation, gyro, acc)

    def odometry(self) -> Odometry:
        """The floating base's pose (world = odom frame) and twist (base frame), from its free joint."""
        self._check()
        return free_joint_odometry(self.model, self.data, self.sim.root_body)

    def foot_forces(self) -> np.ndarray:
        """Normal ground force [N] on each foot (``sim.feet`` order)."""
        self._check()
        return foot_forces(self.model, self.data, self._feet)

    def support_coefficient(self) -> float:
        """Schwarz & Behnke's c from the first two feet's contact forces (first = left)."""
        if len(self.sim.feet) != 2:
            raise ValueError(f"support coefficient needs two feet, this model has {len(self.sim.feet)}")
        return support_coefficient(self.foot_forces())


__all__ = ["JointState", "MujocoServos", "PhysicsDiverged", "ServoOptions", "quantize"]
