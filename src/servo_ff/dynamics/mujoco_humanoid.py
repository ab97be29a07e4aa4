"""Closed-loop MuJoCo simulation of the humanoid stepping in place under three servo controllers (Schwarz & Behnke
(Compliant Robot Behavior) §5.2).

What is simulated
-----------------
* Rigid-body robot compiled by MuJoCo's URDF importer from the same ``urdf/humanoid20.urdf`` that pinocchio
  reads (a free joint added at the trunk, a ground plane; the feet boxes are the only collision geometry).
* Every joint is the foundation's simulated servo (Duclusaud et al. (Extended Friction Models)) through the MuJoCo servo
  layer (:mod:`.mujoco_servos`): the MX-106 M4 parameters
  (``preset("mx106", "m4")``), the firmware voltage law ``firmware_torque`` (duty = clip(k_P·error_gain·(θd−θ),
  ±max_pwm), τ_m = kt/R·U − kt²/R·θ̇) applied as a generalised force, the armature as ``dof_armature``, and the
  friction budget ``friction_budget`` applied through ``dof_frictionloss`` (budget minus the viscous part) and
  ``dof_damping`` (viscous K_v), updated every physics step from that step's motor torque and the previous
  step's external torque (Duclusaud et al. §IV-E, as Rhoban/bam's MuJoCo controller does).
* Goals are sent at the 125 Hz control rate of NimbRo-OP; the servo law runs every physics step.
* Electrical energy per joint E = ∫ U·I dt with I = (U − kt·θ̇)/R (signed: braking returns energy), and
  E_drawn = ∫ max(U·I, 0) dt (nothing returned).

Not simulated: bus latency and encoder quantisation, the MX-64 servos of the real arms/neck (all joints are
MX-106 here), battery sag (U_bat is a constant 15 V "measurement"), IMU noise (the IMU reads the true trunk
orientation), foot-contact sensing (the support coefficient follows the gait schedule), and any balance
controller — the quasi-static gait must stand on its own.

Controllers: (a) high-gain P, k_P = 53.125 (Schwarz & Behnke's "k_p = 1.0" = the MX-106(2.0) factory Position P Gain
850, KPP = 850/128, in the Protocol-1 register units P = 8·KPP that bam's firmware law uses); (b) low-gain P,
k_P = 0.35·53.125 = 18.6; (c) (b) plus the feed-forward goal of Schwarz & Behnke Eq. 19
(:class:`~servo_ff.dynamics.feedforward.FeedForwardController`). The Protocol-1 default P = 32 (the gain bam's
presets were identified at) is the other natural "1.0"; pass ``kp_high=32`` (README reports both).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np

from ..models.params import ActuatorParams
from ..models.presets import preset
from .alpha import AlphaTable, alpha_table_from_actuator
from .feedforward import FeedForwardController
from .gait import GaitTrajectory, SteppingParams, stepping_in_place
from .mujoco_model import SimModel, build_model, place_on_ground
from .mujoco_sensors import foot_forces  # noqa: F401  (re-exported: the experiment's former helper)
from .mujoco_servos import MujocoServos, PhysicsDiverged
from .robot import Robot, load_robot
from .servo_map import uniform_servo_map

log = logging.getLogger(__name__)

REPO = Path(__file__).resolve().parents[3]
HUMANOID_URDF = REPO / "urdf" / "humanoid20.urdf"
#: Schwarz & Behnke's "k_p = 1.0": the MX-106(2.0) factory Position P Gain 850 (KPP = 850/128 = 6.64, e-Manual) in the
#: Protocol-1 register units of bam's firmware law (K_P = P/8 → P = 6.64·8 = 53.125). bam identified its MX
#: presets at the Protocol-1 default 32, which simulate() also accepts (kp_high=32): see docs/feedforward.md.
KP_HIGH = 850 / 128 * 8
GAIN_RATIO = 0.35  # Schwarz & Behnke §5.2: k_p = 1.0 vs 0.35
Controller = Literal["high", "low", "ff"]
CONTROLLERS: dict[str, str] = {"high": "(a) high-gain P", "low": "(b) low-gain P", "ff": "(c) low-gain P + FF"}


@dataclass
class SimResult:
    controller: str
    joint_names: tuple[str, ...]
    t: np.ndarray  # (T,) control ticks [s]
    q_des: np.ndarray  # (T, J) desired [rad]
    q: np.ndarray  # (T, J) measured [rad]
    goal: np.ndarray  # (T, J) goal sent [rad]
    energy: np.ndarray  # (J,) ∫U·I dt [J]
    fell: bool
    clamp_counts: np.ndarray = field(default_factory=lambda: np.zeros(0))
    n_steps: int = 0
    foot_force: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))  # (T, 2) normal force L, R [N]
    swing: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), bool))  # (T, 2) scheduled swing L, R
    energy_drawn: np.ndarray = field(default_factory=lambda: np.zeros(0))  # (J,) ∫max(U·I, 0) dt [J]

    @property
    def error(self) -> np.ndarray:
        return self.q - self.q_des

    def rms(self, joints=None) -> float:
        e = self.error if joints is None else self.error[:, joints]
        return float(np.sqrt(np.mean(e**2)))

    def max_error(self, joints=None) -> float:
        e = self.error if joints is None else self.error[:, joints]
        return float(np.max(np.abs(e)))


def build_mujoco(urdf: Path | str = HUMANOID_URDF, dt: float = 0.001) -> SimModel:
    """URDF → the floating-base model (free trunk, ground plane, the feet boxes the only colliding geoms)."""
    return build_model(urdf, base="floating", feet=("l_foot", "r_foot"), dt=dt)


def place_standing(sim: SimModel, qadr: np.ndarray, q0: np.ndarray) -> float:
    """Joints at ``q0``, trunk upright with the lowest foot corner on the ground; returns the trunk height."""
    return place_on_ground(sim, qadr, q0)


def default_alpha(robot: Robot, params: ActuatorParams) -> AlphaTable:
    """α̂ for (c), derived from the servo's physics (not tuned on the result): Schwarz & Behnke Eq. 13/14 with α0 = R/kt,
    α1 = kt + R/kt·K_v, α2 = R/kt·K_c, α3 = R/kt·(K_c + K_c^s), α4 = R/kt·J_m of the MX-106 M4 preset, divided by
    the firmware's error gain (k_ctrl of Eq. 16) — ``alpha_hat_from_actuator``."""
    return alpha_table_from_actuator(params, robot.joint_names)


def simulate(
    controller: Controller,
    n_steps: int = 40,
    dt: float = 0.001,
    control_dt: float = 0.008,
    params: ActuatorParams | None = None,
    kp_high: float = KP_HIGH,
    ratio: float = GAIN_RATIO,
    gait: SteppingParams = SteppingParams(),
    robot: Robot | None = None,
    alpha: AlphaTable | None = None,
    progress: bool = False,
) -> SimResult:
    """Run the stepping-in-place gait for ``n_steps`` steps under one controller ("high", "low", "ff")."""
    if controller not in CONTROLLERS:
        raise ValueError(f"controller must be one of {list(CONTROLLERS)}, got {controller!r}")
    params = params or preset("mx106", "m4")
    robot = robot or load_robot(HUMANOID_URDF)
    names = robot.joint_names
    ratio_steps = int(round(control_dt / dt))
    if ratio_steps < 1 or abs(ratio_steps * dt - control_dt) > 1e-9:
        raise ValueError(f"control_dt ({control_dt}) must be a multiple of dt ({dt})")
    traj: GaitTrajectory = stepping_in_place(names, n_steps, control_dt, gait)
    kp = kp_high if controller == "high" else ratio * kp_high
    sim = build_mujoco(robot.path, dt)
    _model, data = sim.model, sim.data
    servos = MujocoServos(sim, uniform_servo_map(names, params, kp))
    z0 = place_standing(sim, servos.qadr, traj.q[0])
    servos.set_initial_state()
    servos.reset()
    ff = None
    if controller == "ff":
        ff = FeedForwardController(robot, alpha or default_alpha(robot, params), kp, u_nominal=params.firmware.vin)
    trunk = sim.root_body  # the body carrying the free joint (URDF root, holds the IMU)
    T = len(traj.t)
    forces = np.zeros((T, 2))
    q_meas = np.zeros((T, len(names)))
    goals = np.zeros_like(q_meas)
    fell = False
    it = range(T)
    if progress:
        from tqdm import tqdm

        it = tqdm(it, desc=CONTROLLERS[controller], unit="tick", mininterval=1.0)
    last = T
    for k in it:
        q_meas[k] = data.qpos[servos.qadr]
        if ff is None:
            goal = traj.q[k]
        else:
            w, x, y, z = data.xquat[trunk]
            goal = ff.tick(
                traj.q[k],
                traj.dq[k],
                traj.ddq[k],
                imu_quat=(x, y, z, w),
                u_bat=params.firmware.vin,
                c_left=float(traj.c_left[k]),
            )
        goals[k] = goal
        forces[k] = servos.foot_forces()
        servos.command(goal)
        try:
            servos.step(ratio_steps)
        except PhysicsDiverged as e:
            log.warning("%s: %s", CONTROLLERS[controller], e)
            fell, last = True, k + 1
            break
        up = data.xmat[trunk].reshape(3, 3)[2, 2]
        if data.qpos[2] < 0.6 * z0 or up < np.cos(0.6):
            fell = True
            last = k + 1
            log.warning("%s: robot fell at t = %.2f s", CONTROLLERS[controller], traj.t[k])
            break
    return SimResult(
        controller,
        names,
        traj.t[:last],
        traj.q[:last],
        q_meas[:last],
        goals[:last],
        servos.energy.copy(),
        fell,
        ff.clamp_counts.copy() if ff else np.zeros(len(names), int),
        n_steps,
        forces[:last],
        np.stack([traj.left_swing, traj.right_swing], 1)[:last],
        servos.energy_drawn.copy(),
    )
