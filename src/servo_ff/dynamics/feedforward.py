"""The ROS-free feed-forward tick of Schwarz & Behnke (Compliant Robot Behavior) §3.3/§5.2: desired trajectory + IMU +
battery → goal positions.

Per tick (:meth:`FeedForwardController.tick`):

1. gravity in the trunk frame from the IMU quaternion (x, y, z, w) — a non-finite reading keeps the last good
   one and logs a warning;
2. τ from inverse dynamics at the *desired* (q, q̇, q̈) — support foot fixed, double support blended by
   c_left (:mod:`.inverse_dynamics`), or a fixed base for arms;
3. q_d = q + (α̂0 τ + α̂1 q̇ + α̂2 sgn(q̇)(1−β) + α̂3 sgn(q̇)β + α̂4 q̈)/(k_P·U_bat) (Schwarz & Behnke Eq. 19, via
   :func:`servo_ff.models.schwarz_behnke.goal_position_from_torque`), U_bat the measured supply voltage — a
   non-finite reading, one below ``min_supply_fraction``·``u_nominal`` (a sag or a dead sensor: Eq. 19 divides
   by U_bat) or above the supply range keeps the last good one and logs a warning;
4. q_d clamped to the URDF limits; every clamp is counted per joint (:attr:`clamp_counts`) and logged.

q is the desired position (002 uses the model for feed-forward only; the servo's own P loop is the feedback);
q̇, q̈ come from the trajectory, never from differentiating measurements; :func:`desired_motion_bounds` and
:func:`check_desired_motion` give the physical bounds a desired trajectory is held to (URDF velocity limits,
else a configured bound).
"""

from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import Literal

import numpy as np

from ..models.schema import FEEDFORWARD_FIELDS, FIRMWARE_FIELDS
from ..models.schwarz_behnke import goal_position_from_torque
from .alpha import AlphaTable, load_alpha
from .eq19_kernel import eq19_clamped
from .eq19_kernel import warm_up as warm_up_eq19
from .inverse_dynamics import (
    STANDARD_GRAVITY,
    double_support_torques,
    fixed_base_torques,
    gravity_from_imu,
    set_gravity,
)
from .robot import Robot, load_robot

log = logging.getLogger(__name__)

Mode = Literal["floating", "fixed"]


class FeedForwardController:
    """Holds the pinocchio model/data, α̂, k_P, the last good IMU and voltage readings and the clamp counts.

    ``kp`` is the servo P gain in register units (scalar or per joint), ``u_nominal`` the voltage used until
    the first good reading [V]. ``mode="floating"`` roots the dynamics at the support foot (frames
    ``left_foot``/``right_foot``), ``mode="fixed"`` treats the URDF root as welded (arms).
    """

    def __init__(
        self,
        robot: Robot | str | Path,
        alpha: AlphaTable | str | Path,
        kp,
        *,
        mode: Mode = "floating",
        left_foot: str = "l_sole",
        right_foot: str = "r_sole",
        u_nominal: float = 15.0,
        g: float = STANDARD_GRAVITY,
        min_supply_fraction: float = 0.5,
    ) -> None:
        self.robot = robot if isinstance(robot, Robot) else load_robot(robot)
        names = self.robot.joint_names
        self.alpha = alpha if isinstance(alpha, AlphaTable) else load_alpha(alpha, names)
        if tuple(self.alpha.joint_names) != tuple(names):
            raise ValueError(f"alpha table joints {self.alpha.joint_names} do not match the robot's {names}")
        kp = np.broadcast_to(np.asarray(kp, dtype=float), (len(names),)).copy()
        if not (np.isfinite(kp).all() and (kp > 0).all()):
            raise ValueError(f"kp must be finite and > 0 for every joint, got {kp}")
        if not (np.isfinite(u_nominal) and u_nominal > 0):
            raise ValueError(f"u_nominal must be finite and > 0, got {u_nominal}")
        frac = FEEDFORWARD_FIELDS["min_supply_fraction"]
        if not (np.isfinite(min_supply_fraction) and frac.lo <= min_supply_fraction <= frac.hi):
            raise ValueError(f"min_supply_fraction must be in [{frac.lo:g}, {frac.hi:g}], got {min_supply_fraction}")
        if mode not in ("floating", "fixed"):
            raise ValueError(f"mode must be 'floating' or 'fixed', got {mode!r}")
        self.kp = kp
        self.mode = mode
        self.g = float(g)
        self.model = (self.robot.floating if mode == "floating" else self.robot.fixed).copy()
        self.data = self.model.createData()
        if mode == "floating":
            self.left_frame = self.robot.frame_id(left_foot)
            self.right_frame = self.robot.frame_id(right_foot)
        self.u_nominal = float(u_nominal)
        self.min_supply_fraction = float(min_supply_fraction)
        self.forget_inputs()
        self.clamp_counts = np.zeros(len(names), dtype=np.int64)
        self.n_ticks = 0
        self.bad_imu = 0
        self.bad_voltage = 0
        self._alpha4 = bool(np.any(self.alpha.alpha[:, 4] != 0.0))
        self.tau = np.zeros(len(names))  # last feed-forward torque [N·m]
        warm_up_eq19()  # compile / load the tick's kernel here, not in the first control cycle

    # -- sensor readings: hold the last good value -------------------------------------------------------

    def forget_inputs(self) -> None:
        """The held inputs as before the first: upright gravity [m/s², base frame], ``u_nominal`` [V]."""
        self.gravity = np.array([0.0, 0.0, -self.g])  # last good gravity in the base frame
        self.u_bat = self.u_nominal  # last good supply voltage [V]

    def update_imu(self, quat_xyzw) -> np.ndarray:
        """New IMU orientation (x, y, z, w) → gravity in the base frame; a bad reading keeps the last good."""
        try:
            self.gravity = gravity_from_imu(quat_xyzw, self.g)
        except ValueError as e:
            self.bad_imu += 1
            log.warning(
                "IMU orientation %s rejected (%s); holding last good gravity %s (%d bad so far)",
                np.asarray(quat_xyzw).tolist(),
                e,
                self.gravity.round(4).tolist(),
                self.bad_imu,
            )
        return self.gravity

    def supply_refusal(self, u_bat: float) -> str | None:
        """Why a supply reading [V] is refused, or None: non-finite, below ``min_supply_fraction``·``u_nominal``
        (never ≤ 0) or above the supply range of the parameter description (``firmware.vin``)."""
        u = float(u_bat)
        floor = self.min_supply_fraction * self.u_nominal
        hi = FIRMWARE_FIELDS["vin"].hi
        if not np.isfinite(u):
            return "not finite"
        if u <= 0 or u < floor:
            return f"below {self.min_supply_fraction:g} × u_nominal = {floor:.3g} V" if floor > 0 else "not positive"
        if u > hi:
            return f"above the {hi:g} V supply range"
        return None

    def update_voltage(self, u_bat: float) -> float:
        """New supply voltage [V]; a reading :meth:`supply_refusal` refuses keeps the last good value (warning)."""
        reason = self.supply_refusal(u_bat)
        if reason is None:
            self.u_bat = float(u_bat)
        else:
            self.bad_voltage += 1
            log.warning(
                "supply voltage %r V rejected (%s); holding last good %.3f V (%d bad so far)",
                u_bat,
                reason,
                self.u_bat,
                self.bad_voltage,
            )
        return self.u_bat

    # -- the tick ------------------------------------------------------------------------------------------
    def _vector(self, name: str, x) -> np.ndarray:
        a = np.asarray(x, dtype=float)
        n = self.robot.n_joints
        if a.shape != (n,):
            raise ValueError(f"{name} must have shape ({n},) in joint order {self.robot.joint_names}, got {a.shape}")
        if not math.isfinite(a.sum()):  # one reduction: NaN/inf anywhere makes the sum non-finite
            bad = [self.robot.joint_names[i] for i in np.flatnonzero(~np.isfinite(a))]
            raise ValueError(f"{name} is non-finite for joint(s) {bad}")
        return a

    def _vectors(self, q, dq, ddq) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The three desired vectors checked as :meth:`_vector` does, with one shape test and one reduction when
        they are fine (the slow path names the bad one)."""
        a, b, c = (np.asarray(x, dtype=float) for x in (q, dq, ddq))
        n = self.robot.n_joints
        if a.shape == b.shape == c.shape == (n,) and math.isfinite(a.sum() + b.sum() + c.sum()):
            return a, b, c
        return self._vector("q_des", a), self._vector("dq_des", b), self._vector("ddq_des", c)

    def torques(self, q, dq, ddq, *, c_left: float | None = None) -> np.ndarray:
        """Feed-forward torques τ [N·m] at the desired state with the current gravity estimate; ``c_left`` (1 = left
        single support, 0.5 = double, 0 = right) is required with a floating base and ignored with a fixed one."""
        set_gravity(self.model, self.gravity)
        if self.mode == "fixed":
            return fixed_base_torques(self.model, self.data, self.robot.configuration(q), dq, ddq)
        if c_left is None:  # no default: a caller that forgets it must not load one leg with the whole robot
            raise ValueError(
                "c_left (left-foot support coefficient, 0.5 = double support) is required with a floating base"
            )
        c = float(c_left)
        if not (math.isfinite(c) and 0.0 <= c <= 1.0):
            raise ValueError(f"c_left (left-foot support coefficient) must be in [0, 1], got {c_left}")
        return double_support_torques(
            self.model,
            self.data,
            q,
            dq,
            ddq,
            self.left_frame,
            self.right_frame,
            c,
            q_full=self.robot.configuration(q, floating=True),
        )

    def tick(self, q_des, dq_des, ddq_des, *, imu_quat=None, u_bat=None, c_left: float | None = None) -> np.ndarray:
        """Goal positions [rad] for one control cycle (Eq. 19), inside the URDF limits and always finite; ``c_left``:
        see :meth:`torques` (required with a floating base)."""
        q, dq, ddq = self._vectors(q_des, dq_des, ddq_des)
        if imu_quat is not None:
            self.update_imu(imu_quat)
        if u_bat is not None:
            self.update_voltage(u_bat)
        tau = self.torques(q, dq, ddq, c_left=c_left)
        self.tau = tau
        if eq19_clamped is not None:  # Eq. 19 and the clamp in one compiled loop; anything odd: the numpy path
            goal, out = np.empty(len(q)), np.empty(len(q))
            a = self.alpha
            lo, hi = self.robot.lower, self.robot.upper
            counts = self.clamp_counts
            to_log = eq19_clamped(
                q, tau, dq, ddq, a.alpha, self._alpha4, self.kp, self.u_bat, a.dq_s, a.delta, lo, hi, goal, out, counts
            )
            if to_log >= 0:  # clamps counted in the loop: Python only for a count to log (1, 2, 4, …)
                self.n_ticks += 1
                if to_log:
                    self._log_clamps(goal, out, out != goal)
                return out
        goal = goal_position_from_torque(
            q,
            tau,
            dq,
            ddq if self._alpha4 else None,
            self.alpha.alpha if self._alpha4 else self.alpha.alpha[:, :4],
            self.kp,
            self.u_bat,
            self.alpha.dq_s,
            self.alpha.delta,
        )
        if not np.isfinite(goal).all():  # cannot happen with finite inputs; never send it
            raise FloatingPointError(f"non-finite goal {goal} from finite inputs (τ={tau})")
        self.n_ticks += 1
        return self._clamp(goal)

    def _clamp(self, goal: np.ndarray) -> np.ndarray:
        out = np.minimum(np.maximum(goal, self.robot.lower), self.robot.upper)
        if (out != goal).any():
            self._count_clamps(goal, out)
        return out

    def _count_clamps(self, goal: np.ndarray, out: np.ndarray) -> None:
        """Count (and log at counts 1, 2, 4, 8, …) every joint whose goal was clamped to the URDF limits."""
        hit = out != goal
        self.clamp_counts += hit
        self._log_clamps(goal, out, hit)

    def _log_clamps(self, goal: np.ndarray, out: np.ndarray, hit: np.ndarray) -> None:
        """Log the joints clamped (``hit``) whose count is now 1, 2, 4, 8, …: every clamp is counted, the log stays
        readable."""
        lo, hi = self.robot.lower, self.robot.upper
        for i in np.flatnonzero(hit):
            c = int(self.clamp_counts[i])
            if c & (c - 1) == 0:
                log.warning(
                    "goal for %s clamped %.4f → %.4f rad (URDF limits [%.4f, %.4f]); %d clamp(s) so far",
                    self.robot.joint_names[i],
                    goal[i],
                    out[i],
                    lo[i],
                    hi[i],
                    c,
                )

    def clamp_report(self) -> dict[str, int]:
        """Clamp count per joint (only joints that were clamped)."""
        return {n: int(c) for n, c in zip(self.robot.joint_names, self.clamp_counts) if c}


def desired_motion_bounds(robot: Robot, max_velocity, max_acceleration) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Per-joint bounds on the desired |q̇| [rad/s] and |q̈| [rad/s²] in the robot's joint order, and where each
    velocity bound comes from: the URDF ``<limit velocity>`` where it is finite and > 0, else ``max_velocity``
    (scalar or per joint); ``max_acceleration`` (scalar or per joint; a URDF has no acceleration limit)."""
    n = robot.n_joints
    vpar = np.broadcast_to(np.asarray(max_velocity, dtype=float), (n,))
    amax = np.broadcast_to(np.asarray(max_acceleration, dtype=float), (n,)).copy()
    urdf = np.asarray(robot.velocity, dtype=float)
    has = np.isfinite(urdf) & (urdf > 0)
    vmax = np.where(has, urdf, vpar)
    source = ["URDF velocity limit" if h else "max_velocity" for h in has]
    return vmax, amax, source


def joint_motion_bounds(
    urdf: str | Path, joints: list[str], max_velocity: float = math.inf, max_acceleration: float = math.inf
) -> tuple[np.ndarray, np.ndarray]:
    """(|q̇| [rad/s], |q̈| [rad/s²]) bounds of ``joints`` (that order) of ``urdf`` by the feed-forward node's rule
    (:func:`desired_motion_bounds`): what a trajectory for it is held within (the walk node, ``walk_sim``)."""
    robot = load_robot(urdf)
    vmax, amax, _ = desired_motion_bounds(robot, max_velocity, max_acceleration)
    cols = [robot.joint_names.index(j) for j in joints]
    return vmax[cols], amax[cols]


def check_desired_motion(
    dq: np.ndarray, ddq: np.ndarray, vmax: np.ndarray, amax: np.ndarray, names, vsource=None, where: str = ""
) -> str | None:
    """Why desired velocities ``dq`` / accelerations ``ddq`` (points × joints, or one point) are refused — the
    first |value| beyond its joint's bound, naming point (or ``where`` the values are), joint and bound — or None."""
    for label, arr, bound, unit in (("velocity", dq, vmax, "rad/s"), ("acceleration", ddq, amax, "rad/s²")):
        a = np.atleast_2d(np.asarray(arr, dtype=float))
        over = ~(np.abs(a) <= bound)  # NaN counts as beyond
        if over.any():
            k, j = (int(i) for i in np.argwhere(over)[0])
            why = f" ({vsource[j]})" if label == "velocity" and vsource is not None else ""
            at = where or f"point {k}"
            return f"{at} {label} of {names[j]} is {a[k, j]:.6g} {unit}, beyond its bound {bound[j]:g} {unit}{why}"
    return None
