"""A dynamic walk over Rhoban's placo (ROS-free): LIPM walk pattern generator, footstep planner, swing-foot
trajectories and whole-body kinematics, as placo's walking examples use them, turned into what the feed-forward
node takes — desired joint positions on a time grid and the left-foot support coefficient.

:class:`WalkEngine` holds the placo robot, its kinematics solver and the walk tasks. ``plan(cmd, n_steps)`` plans a
whole walk of ``n_steps`` steps at a constant ``cmd_vel`` from standing to standing (tests, bench);
``start()``/``tick()`` walk on-line, re-planning the footsteps at each support change from the latest
``set_cmd`` (the walk node). One step (support change) lasts ``single_support_duration +
double_support_duration``.

Halt (``set_halt(True)``): at once if placo allows a re-plan (a single support: the step in progress is kept),
else at the next single support, the footsteps are re-planned with a zero step and one step (placo's repetitive
planner then closes with the other foot beside the landing one, and ``make_supports(…, end=True)`` ends in double
support); at the trajectory's end (``t_end``) the engine holds that sample: the same joints every tick, both feet in
support. ``set_halt(False)`` during the halt cancels it while placo can still re-plan (the single support where the
halt was planned); later, the halt completes and the walk starts again from the standing robot (a fresh plan from
its feet and CoM, as :meth:`WalkEngine.start`). A halt requested before the first tick holds the walking stance.

placo needs frames ``trunk``, ``left_foot`` and ``right_foot``: they are added to the URDF text as fixed frames on the
links named in :class:`WalkFrames` (the file is not changed).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np


@dataclass(frozen=True)
class WalkFrames:
    """Links of the URDF that play placo's ``trunk``, ``left_foot`` and ``right_foot`` (defaults: urdf/op3.urdf)."""

    trunk: str = "body_link"
    left_foot: str = "l_sole"
    right_foot: str = "r_sole"


@dataclass(frozen=True)
class WalkParams:
    """Gait parameters (SI units). Defaults: the ROBOTIS OP3 (urdf/op3.urdf), step period 0.48 s.

    Stance: ROBOTIS's own OP3 walk (ROBOTIS-GIT/ROBOTIS-OP3 3bc2bd5, op3_walking_module/config/param.yaml): z_offset
    0.035 m below the straight leg puts the ankle 0.185 m below the hip pitch axis (knees 1.14 rad), which placo's
    CoM height 0.242 m gives; hip_pitch_offset 7° is the trunk pitch. Timing: the swing's joint accelerations load
    each XM430 with its armature (0.045 kg·m², op3.xml) on top of gravity: at 0.30 s single support and 3 cm
    clearance the knee needed 0.045 × 130 rad/s² ≈ 5.8 N·m (99th percentile), more than the servo's 4.1 N·m stall
    torque; 0.40 s and 2 cm need 3.4 N·m (docs/walking.md)."""

    dt: float = 0.01  # [s] grid of the joint trajectory (and placo's planning step)
    single_support: float = 0.40  # [s] one foot in the air
    double_support_ratio: float = 0.2  # double support between steps / single support
    startend_double_support_ratio: float = 2.0  # first and last double support / single support
    planned_timesteps: int = 48  # LIPM preview horizon [dt]
    com_height: float = 0.242  # [m] above the soles: ROBOTIS's stance, knees 1.14 rad (docstring)
    foot_height: float = 0.02  # [m] swing-foot clearance
    trunk_pitch: float = 0.122  # [rad] forward lean of the trunk: ROBOTIS's hip_pitch_offset, 7°
    foot_rise_ratio: float = 0.2  # part of the swing spent rising / falling vertically
    foot_length: float = 0.12  # [m] support polygon (op3.urdf's foot box 0.127 × 0.078)
    foot_width: float = 0.07  # [m]
    feet_spacing: float = 0.10  # [m] lateral distance of the soles (placo needs > foot_width + 0.01)
    zmp_margin: float = 0.01  # [m] ZMP kept this far inside the support polygon
    max_dx_forward: float = 0.06  # [m] per step
    max_dx_backward: float = 0.03  # [m]
    max_dy: float = 0.03  # [m]
    max_dtheta: float = 0.4  # [rad]
    #: on-line walk: footsteps planned ahead at each re-plan. 3 (1.44 s, ≈ 10 LIPM time constants 1/ω) gives the
    #: joint trajectory of 6 within 3.5e-5 rad (2 % of an XM430 count) at 41 ms per re-plan instead of 157 ms
    #: (2: 0.9e-3 rad; docs/simulation.md#where-the-time-goes-and-the-bound-real-time-factor)
    plan_steps: int = 3
    posture: dict[str, float] = field(
        default_factory=lambda: {
            "l_sho_pitch": 0.0,
            "r_sho_pitch": 0.0,
            "l_sho_roll": 0.7,
            "r_sho_roll": -0.7,
            "l_el": 0.5,
            "r_el": -0.5,
            "head_pan": 0.0,
            "head_tilt": 0.0,
        }
    )  # [rad] joints outside the legs held here (soft task); names absent from the robot are ignored
    #: [rad] (lower, upper) per joint: the IK's range, within the URDF's (the gait only; the URDF is not changed).
    #: A one-sided joint's physical side where the URDF's goal range allows both (a knee bent forward)
    ik_ranges: dict[str, tuple[float, float]] = field(default_factory=dict)

    @property
    def step_period(self) -> float:
        """[s] time from one foot's lift-off to the other's (one support change)."""
        return self.single_support * (1.0 + self.double_support_ratio)

    def step_windows(self, n_steps: int, obstacle_step: int = 0) -> tuple[np.ndarray, float]:
        """([s from the walk start] the end of each of the first ``n_steps`` steps, [s] the middle of step
        ``obstacle_step``'s single support): the walk's first double support, then one step period per step."""
        t_first = self.single_support * self.startend_double_support_ratio
        ends = t_first + np.arange(1, n_steps + 1) * self.step_period
        return ends, t_first + obstacle_step * self.step_period + 0.5 * self.single_support


class WalkSample(NamedTuple):
    t: float  # [s]
    q: np.ndarray  # (J,) [rad], WalkEngine.joints order
    c_left: float  # left-foot support coefficient (1: all weight on the left foot)
    zmp: np.ndarray  # (2,) [m] planned ZMP in the world
    com: np.ndarray  # (3,) [m] planned CoM in the world
    support: str  # "both", "left" or "right"


class WalkPlan(NamedTuple):
    """A whole walk on the grid ``t`` (T,): q, dq, ddq (T, J), c_left (T,), zmp (T, 2), com (T, 3), support (T,)
    of str; ``polygons[k]``: the support polygon (N, 2) at sample k; ``steps``: (t_start, side) of each single
    support."""

    joints: list[str]
    t: np.ndarray
    q: np.ndarray
    dq: np.ndarray
    ddq: np.ndarray
    c_left: np.ndarray
    zmp: np.ndarray
    com: np.ndarray
    support: np.ndarray
    polygons: list[np.ndarray]
    steps: list[tuple[float, str]]


def placo_urdf_text(urdf: str | Path, frames: WalkFrames) -> str:
    """The URDF's text with fixed frames ``trunk``, ``left_foot``, ``right_foot`` on ``frames``' links; a missing
    link is a ValueError naming the file and link."""
    text = Path(urdf).read_text()
    extra = []
    for name, parent in (("trunk", frames.trunk), ("left_foot", frames.left_foot), ("right_foot", frames.right_foot)):
        if f'<link name="{parent}"' not in text:
            raise ValueError(f"{urdf}: no link {parent!r} for placo's {name} frame")
        if f'<link name="{name}"' in text:
            continue
        extra.append(
            f'<joint name="{name}_placo_frame" type="fixed"><parent link="{parent}"/><child link="{name}"/></joint>'
            f'<link name="{name}"/>'
        )
    end = text.rindex("</robot>")
    return text[:end] + "\n".join(extra) + "\n" + text[end:]


def _placo():
    import placo  # noqa: PLC0415 (optional dependency: the walk only)

    return placo


class WalkEngine:
    """placo's walk for one robot. ``joints``: the actuated joints in placo's (URDF) order."""

    def __init__(self, urdf: str | Path, params: WalkParams | None = None, frames: WalkFrames | None = None):
        placo = _placo()
        self.params = p = params or WalkParams()
        self.robot = placo.HumanoidRobot(str(Path(urdf).parent), 0, placo_urdf_text(urdf, frames or WalkFrames()))
        self.joints = list(self.robot.joint_names())
        hp = placo.HumanoidParameters()
        hp.single_support_duration = p.single_support
        hp.single_support_timesteps = max(1, int(round(p.single_support / p.dt)))
        hp.double_support_ratio = p.double_support_ratio
        hp.startend_double_support_ratio = p.startend_double_support_ratio
        hp.planned_timesteps = p.planned_timesteps
        hp.walk_com_height = p.com_height
        hp.walk_foot_height = p.foot_height
        hp.walk_trunk_pitch = p.trunk_pitch
        hp.walk_foot_rise_ratio = p.foot_rise_ratio
        hp.foot_length = p.foot_length
        hp.foot_width = p.foot_width
        hp.feet_spacing = p.feet_spacing
        hp.zmp_margin = p.zmp_margin
        hp.foot_zmp_target_x = 0.0
        hp.foot_zmp_target_y = 0.0
        hp.walk_max_dx_forward = p.max_dx_forward
        hp.walk_max_dx_backward = p.max_dx_backward
        hp.walk_max_dy = p.max_dy
        hp.walk_max_dtheta = p.max_dtheta
        self.hp = hp
        self.omega = float(np.sqrt(9.80665 / p.com_height))  # [1/s] the LIPM's natural frequency
        self.solver = placo.KinematicsSolver(self.robot)
        self.solver.enable_velocity_limits(True)
        self.solver.dt = p.dt
        self.tasks = placo.WalkTasks()
        self.tasks.initialize_tasks(self.solver, self.robot)
        posture = {j: v for j, v in p.posture.items() if j in self.joints}
        if posture:
            task = self.solver.add_joints_task()
            task.set_joints(posture)
            task.configure("posture", "soft", 1.0)
        self._narrow_ranges(p.ik_ranges)
        self._start_mid_range()
        self.tasks.reach_initial_pose(np.eye(4), p.feet_spacing, p.com_height, p.trunk_pitch)
        self.q_stand = self.q()
        self.wpg = placo.WalkPatternGenerator(self.robot, hp)
        self.planner = placo.FootstepsPlannerRepetitive(hp)
        self.cmd = (0.0, 0.0, 0.0)
        self.trajectory = None
        self.t = 0.0
        self.last_replan = 0.0
        self.halt_requested = False  # set_halt: finish the step, stand in double support
        self._halting = False  # the trajectory is the halt's (ends in double support)
        self._held: WalkSample | None = None  # the sample held while halted

    def _narrow_ranges(self, ranges: dict[str, tuple[float, float]]) -> None:
        """placo's joint limits (the IK's bounds) narrowed to ``ranges`` [rad]: each the intersection with the URDF's;
        a joint not in the robot, a reversed range or an empty intersection is a ValueError naming the joint."""
        for j, (lo, hi) in ranges.items():
            if j not in self.joints:
                raise ValueError(f"ik_ranges: {j!r} is not a joint of the robot: {self.joints}")
            if np.isnan([lo, hi]).any():
                raise ValueError(f"ik_ranges: {j!r} {ranges[j]} is not a number")
            if not lo < hi:
                raise ValueError(f"ik_ranges: {j!r} {ranges[j]}: the lower bound must be below the upper one")
            u_lo, u_hi = (float(v) for v in self.robot.get_joint_limits(j))
            lo, hi = max(u_lo, float(lo)), min(u_hi, float(hi))
            if not lo < hi:
                raise ValueError(f"ik_ranges: {j!r} {ranges[j]} does not overlap its URDF range ({u_lo}, {u_hi}) rad")
            self.robot.set_joint_limits(j, lo, hi)

    def _start_mid_range(self) -> None:
        """The IK's first guess: every joint at the middle of its URDF range (0 where the range is symmetric or
        unbounded). From the straight-knee zero pose the stance IK could bend the knees either way, whichever way the
        last bits of placo's solution leaned; an asymmetric knee range (the OP3's, ROBOTIS) starts them bent forward."""
        for j in self.joints:
            lo, hi = (float(v) for v in self.robot.get_joint_limits(j))
            if np.isfinite(lo) and np.isfinite(hi) and hi - lo < 2 * np.pi - 1e-6:
                self.robot.set_joint(j, 0.5 * (lo + hi))
        self.robot.update_kinematics()

    def q(self) -> np.ndarray:
        """The robot's current joint positions [rad], ``joints`` order."""
        return np.array([self.robot.get_joint(j) for j in self.joints])

    def step_of(self, vx: float, vy: float, wz: float) -> tuple[float, float, float]:
        """``cmd_vel`` (m/s, m/s, rad/s) as a footstep displacement per step (m, m, rad), before placo's clipping."""
        T = self.params.step_period
        return vx * T, vy * T, wz * T

    def beyond_reach(self, vx: float, vy: float, wz: float) -> list[str]:
        """The components of ``cmd_vel`` (m/s, m/s, rad/s) beyond the gait's reach per axis, in words (empty: none):
        placo clips the step to ``max_dx_forward``/``max_dx_backward``, ``max_dy``, ``max_dtheta`` per step period
        (and a combined step further, by the feet's overlap: not said here)."""
        p, T = self.params, self.params.step_period
        out = []
        for name, v, top, unit in (
            ("linear.x", vx, p.max_dx_forward if vx >= 0 else p.max_dx_backward, "m/s"),
            ("linear.y", vy, p.max_dy, "m/s"),
            ("angular.z", wz, p.max_dtheta, "rad/s"),
        ):
            if abs(v) * T > top + 1e-12:
                out.append(f"{name} {v:g} {unit} beyond {top / T:.4g} {unit}")
        return out

    def set_cmd(self, vx: float, vy: float, wz: float) -> None:
        """The velocity the on-line walk heads for from its next re-plan (REP-103: x forward, y left, z up)."""
        for name, v in (("linear.x", vx), ("linear.y", vy), ("angular.z", wz)):
            if not np.isfinite(v):
                raise ValueError(f"cmd_vel {name} is not finite ({v})")
        self.cmd = (float(vx), float(vy), float(wz))

    def set_halt(self, requested: bool) -> None:
        """Request the halt (True: finish the step, close the feet, stand) or walk on / again (False)."""
        self.halt_requested = bool(requested)

    @property
    def halted(self) -> bool:
        """True while the engine holds its halt (standing in double support)."""
        return self._held is not None

    def _supports(self, n_steps: int):
        placo = self._placo
        self.planner.configure(*self.step_of(*self.cmd), n_steps)
        left = placo.flatten_on_floor(self.robot.get_T_world_left())
        right = placo.flatten_on_floor(self.robot.get_T_world_right())
        steps = self.planner.plan(placo.HumanoidRobot_Side.left, left, right)
        return placo.FootstepsPlanner.make_supports(steps, self.t, True, self.hp.has_double_support(), True)

    @property
    def _placo(self):
        return _placo()

    def start(self) -> None:
        """Begin the on-line walk from standing at t = 0 (stepping in place while cmd is zero)."""
        self.t = self.last_replan = 0.0
        self._held, self._halting = None, False
        self.trajectory = self.wpg.plan(self._supports(self.params.plan_steps), self.robot.com_world(), 0.0)

    def _walk_again(self) -> None:
        """A fresh plan from the standing robot's feet and CoM at ``self.t`` (after a halt)."""
        self._held, self._halting, self.last_replan = None, False, self.t
        self.trajectory = self.wpg.plan(self._supports(self.params.plan_steps), self.robot.com_world(), self.t)

    def _hold(self, s: WalkSample) -> WalkSample:
        """Halted: ``s`` held from now on (its time advancing)."""
        self._held, self._halting = s, False
        return s

    def tick(self) -> WalkSample:
        """The sample at the current time, then advance one ``dt`` (re-planning footsteps from the latest cmd
        when placo allows it: at a support change)."""
        tr = self.trajectory
        if tr is None:
            raise RuntimeError("WalkEngine.tick before start() or plan()")
        if self._held is not None:
            if self.halt_requested:
                s = self._held._replace(t=self.t)
                self.t += self.params.dt
                return s
            self._walk_again()
            tr = self.trajectory
        elif self.halt_requested and self.t == 0.0:  # before the walk's first tick: stand in the stance
            com = np.asarray(self.robot.com_world(), dtype=float)
            return self._hold(self._held_here(com))
        new_support = tr.get_support(self.t).t_start > self.last_replan + 1e-9
        # a halt requested or cancelled: re-planned at once where placo allows (a single support, mid-step too)
        if (new_support or self.halt_requested != self._halting) and self.wpg.can_replan_supports(tr, self.t):
            if self.halt_requested:
                self.trajectory = tr = self._replan(tr, (0.0, 0.0, 0.0), 1)  # the step in progress, then feet closed
            else:
                self.trajectory = tr = self._replan(tr, self.step_of(*self.cmd))
            self._halting, self.last_replan = self.halt_requested, self.t
        s = self._advance(tr)
        return self._hold(s) if self._halting and s.t >= tr.t_end - 1e-9 else s

    def _held_here(self, com: np.ndarray) -> WalkSample:
        """The robot as it stands (both feet down, the ZMP under the CoM, c = 0.5), at ``self.t``; t advances."""
        s = WalkSample(self.t, self.q(), 0.5, com[:2].copy(), com, "both")
        self.t += self.params.dt
        return s

    def _replan(self, tr, step: tuple[float, float, float], n_steps: int | None = None):
        """placo's re-plan at ``self.t`` from ``tr`` (one LIPM QP over all ``plan_steps`` footsteps: ≈ 40 ms at 3;
        ``n_steps`` 1 with a zero ``step``: the halt's)."""
        self.planner.configure(*step, n_steps or self.params.plan_steps)
        supports = self.wpg.replan_supports(self.planner, tr, self.t, self.last_replan)
        return self.wpg.replan(supports, tr, self.t)

    def _advance(self, tr) -> WalkSample:
        t = min(self.t, tr.t_end)
        self.tasks.update_tasks_from_trajectory(tr, t)
        self.robot.update_kinematics()
        self.solver.solve(True)
        zmp = np.asarray(tr.get_p_world_ZMP(t, self.omega), dtype=float)[:2]
        com = np.asarray(tr.get_p_world_CoM(t), dtype=float)
        if tr.support_is_both(t):
            support, c = "both", self._c_double(tr, t, zmp)
        else:
            support = "left" if tr.support_side(t) == self._placo.HumanoidRobot_Side.left else "right"
            c = 1.0 if support == "left" else 0.0
        s = WalkSample(self.t, self.q(), c, zmp, com, support)
        self.t += self.params.dt
        return s

    @staticmethod
    def _c_double(tr, t: float, zmp: np.ndarray) -> float:
        """Double support: the ZMP's place between the soles (1 at the left sole, 0 at the right)."""
        pl = np.asarray(tr.get_T_world_left(t))[:2, 3]
        pr = np.asarray(tr.get_T_world_right(t))[:2, 3]
        d = pl - pr
        return float(np.clip(np.dot(zmp - pr, d) / max(float(np.dot(d, d)), 1e-12), 0.0, 1.0))

    def plan(self, cmd: tuple[float, float, float], n_steps: int) -> WalkPlan:
        """A whole walk of ``n_steps`` steps at ``cmd`` = (vx, vy, wz) from standing to standing (first swing foot:
        left), on the grid ``dt``; the engine then stands where the walk ended."""
        if n_steps < 1:
            raise ValueError(f"n_steps must be ≥ 1, got {n_steps}")
        self.set_cmd(*cmd)
        self.t = self.last_replan = 0.0
        supports = self._supports(n_steps)
        self.trajectory = tr = self.wpg.plan(supports, self.robot.com_world(), 0.0)
        steps = [(float(s.t_start), "left" if s.side() == self._placo.HumanoidRobot_Side.left else "right")
                 for s in supports if not s.is_both()]  # fmt: skip
        samples, polygons = [], []
        n = int(np.floor(tr.t_end / self.params.dt + 1e-9)) + 1
        for _ in range(n):
            polygons.append(np.asarray(tr.get_support(self.t).support_polygon(), dtype=float).reshape(-1, 2))
            samples.append(self._advance(tr))
        return _as_plan(self.joints, samples, polygons, steps, self.params.dt)


def _as_plan(joints: list[str], samples: list[WalkSample], polygons, steps, dt: float) -> WalkPlan:
    q = np.array([s.q for s in samples])
    dq = np.gradient(q, dt, axis=0)
    return WalkPlan(
        joints,
        np.array([s.t for s in samples]),
        q,
        dq,
        np.gradient(dq, dt, axis=0),
        np.array([s.c_left for s in samples]),
        np.array([s.zmp for s in samples]),
        np.array([s.com for s in samples]),
        np.array([s.support for s in samples]),
        polygons,
        steps,
    )
