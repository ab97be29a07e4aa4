"""ROS-free state of a chain of simulated servos: positions, velocities, goals, per-joint P gains, torque
enable, advanced by :func:`servo_ff.models.stepper.step` (seed 004 Algorithm 1) over all joints at once.

No physics lives here: the stepper computes everything; this object only holds the state between ticks and
the per-joint packed parameter rows (the firmware P gain ``P_KP`` differs per joint).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from servo_ff.models.motor import goal_slew
from servo_ff.models.params import P_GVMAX, P_KP, P_VIN, ActuatorParams
from servo_ff.models.stepper import ExternalLoad, PendulumLoad, step


class UrdfGravity:
    """Load of each simulated joint from a fixed-base URDF: gravity τ_e = −g(q) (RNEA at zero velocity and
    acceleration, :func:`servo_ff.dynamics.inverse_dynamics.fixed_base_torques`) and the diagonal of the joint-
    space inertia M(q) (pinocchio CRBA). Coupling between joints (off-diagonal M, Coriolis) is left out: each
    servo sees its own link chain's inertia and the gravity of the whole configuration. URDF joints the sim does
    not drive stay at 0."""

    def __init__(self, urdf_path, joints):
        import pinocchio as pin

        from servo_ff.dynamics.inverse_dynamics import fixed_base_torques
        from servo_ff.dynamics.robot import load_robot

        self._pin, self._rnea = pin, fixed_base_torques
        self.robot = load_robot(urdf_path)
        self.idx = self.robot.index(list(joints))
        self.model = self.robot.fixed
        self.data = self.model.createData()
        self.q = np.zeros(self.robot.n_joints)
        self.zero = np.zeros(self.model.nv)

    def at(self, theta: np.ndarray) -> ExternalLoad:
        self.q[self.idx] = theta
        cfg = self.robot.configuration(self.q)
        g = self._rnea(self.model, self.data, cfg, self.zero, self.zero)
        m = self._pin.crba(self.model, self.data, cfg)
        return ExternalLoad(inertia=np.diag(m)[self.idx].copy(), tau_ext=-g[self.idx])


def load_inertia(load: PendulumLoad | ExternalLoad | UrdfGravity | None, n: int, theta) -> np.ndarray:
    """Load inertia per joint [kg·m²] (armature excluded) at ``theta`` (URDF: the diagonal of M(q) there;
    non-finite angles read as 0)."""
    if isinstance(load, UrdfGravity):
        th = np.asarray(theta, dtype=np.float64)
        return np.asarray(load.at(np.where(np.isfinite(th), th, 0.0)).inertia, dtype=np.float64)
    if isinstance(load, PendulumLoad):
        return np.broadcast_to(load.inertia(), (n,)).astype(np.float64)
    if isinstance(load, ExternalLoad):
        return np.broadcast_to(np.asarray(load.inertia, dtype=np.float64), (n,)).copy()
    return np.zeros(n)


@dataclass
class SimServos:
    params: ActuatorParams
    n: int
    load: PendulumLoad | ExternalLoad | UrdfGravity | None = None
    theta: np.ndarray | None = None  # [rad]
    backend: str = "auto"
    dtheta: np.ndarray = field(init=False)
    goal: np.ndarray = field(init=False)
    target: np.ndarray = field(init=False)  # firmware's internal target (= goal unless goal_velocity_limit)
    effort: np.ndarray = field(init=False)  # motor torque [N·m]
    enabled: bool = True
    hardware_error: int = 0

    def __post_init__(self) -> None:
        self.theta = np.zeros(self.n) if self.theta is None else np.array(self.theta, dtype=np.float64)
        self.dtheta = np.zeros(self.n)
        self.goal = self.theta.copy()
        self.target = self.theta.copy()
        self.effort = np.zeros(self.n)
        self.set_params(self.params, np.full(self.n, self.params.firmware.kp))

    def set_params(self, params: ActuatorParams, kp: np.ndarray | None = None) -> None:
        kp = self.packed[:, P_KP].copy() if kp is None else np.asarray(kp, dtype=np.float64)
        self.params = params
        self.packed = np.tile(params.packed(), (self.n, 1))
        self.packed[:, P_KP] = kp

    @property
    def kp(self) -> np.ndarray:
        return self.packed[:, P_KP]

    def set_kp(self, kp: np.ndarray) -> None:
        kp = np.asarray(kp, dtype=np.float64)
        if kp.shape != (self.n,) or not np.isfinite(kp).all() or (kp < 0).any():
            raise ValueError(f"kp must be {self.n} finite values >= 0, got {kp}")
        self.packed[:, P_KP] = kp

    @property
    def supply_voltage(self) -> float:
        return float(self.packed[0, P_VIN])

    def advance(self, dt: float, substeps: int = 1) -> None:
        """Advance all joints by ``dt`` seconds in ``substeps`` stepper steps toward the held goal."""
        h = dt / substeps
        enable = 1.0 if self.enabled else 0.0
        for _ in range(substeps):
            load = self.load.at(self.theta) if isinstance(self.load, UrdfGravity) else self.load
            self.target = goal_slew(self.target, self.goal, self.packed[:, P_GVMAX], h)
            r = step(self.packed, self.theta, self.dtheta, self.target, h, load=load, enable=enable,
                     backend=self.backend)
            self.theta, self.dtheta, self.effort = r.theta, r.dtheta, r.tau_m

    def warm_up(self, dt: float) -> None:
        """One discarded step: compiles / loads the numba kernel before the node's timers start (a first-call
        JIT compile inside a timer callback would stall the executor for seconds)."""
        load = self.load.at(self.theta) if isinstance(self.load, UrdfGravity) else self.load
        step(self.packed, self.theta, self.dtheta, self.goal, dt, load=load, enable=1.0, backend=self.backend)

    def reset(self, theta0: np.ndarray) -> None:
        """Back to the start-up state whatever happened before (a refused, even non-finite, state included):
        θ = ``theta0``, θ̇ = 0, goal = internal target = ``theta0``, no effort, errors cleared, torque on."""
        theta0 = np.array(theta0, dtype=np.float64).reshape(self.n)
        if not np.isfinite(theta0).all():
            raise ValueError(f"reset position must be finite, got {theta0}")
        self.theta = theta0.copy()
        self.dtheta = np.zeros(self.n)
        self.goal = theta0.copy()
        self.target = theta0.copy()
        self.effort = np.zeros(self.n)
        self.hardware_error = 0
        self.enabled = True

    def reboot(self) -> None:
        """Like a Dynamixel REBOOT: hardware error cleared, torque off, goal set to the present position."""
        self.hardware_error = 0
        self.enabled = False
        self.goal = self.theta.copy()
        self.target = self.theta.copy()
