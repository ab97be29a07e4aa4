"""The NimbRo-OP's CPG gait (:mod:`.nimbro_cpg`) on line, one ``systemIterationTime`` per :meth:`CpgEngine.tick`
from the latest command (ROS-free): the walk node's engine interface (as :class:`.walk_pattern.WalkEngine`), the
state machine of :func:`.nimbro_cpg_plan.gait_tick` (the same as the batch plan's). The robot's joints of a gait state
come from ``pose_of`` with its :class:`.CpgConfig`: the NimbRo-OP's (:func:`.nimbro_cpg.pose`, the authors' values)
by default, the OP3's by dynamic similarity with :func:`op3_cpg_engine` (:mod:`.op3_cpg`).

cmd_vel becomes the gcv per axis (:meth:`CpgEngine.gcv3`, each from the gait's geometry, :mod:`.nimbro_cpg`):
linear.x ≥ 0 → vx / :func:`.speed_per_gcv` (0.080 m/s per gcv; the OP3's 0.0567), linear.x < 0 → vx /
:func:`.backward_speed_per_gcv` (0.234; 0.165), linear.y → vy / :func:`.lateral_speed_per_gcv` (0.116 m/s; 0.082),
angular.z → wz / :func:`.yaw_rate_per_gcv` (0.386 rad/s; 0.546), each limited to −1…1 and the three to their norm
‖gcv‖_2.4 ≤ 1 (:func:`.limit_gcv`); :meth:`CpgEngine.beyond_reach` says what is walked slower than commanded.
The walk, once started, steps in place while the command is zero. :meth:`CpgEngine.set_halt` (True) withdraws
the command (``gait_tick(s, None, cfg)``): gcv ramps down, and the walk halts near a phase centre once |gcv| <
stoppingVelocity (the authors' MotionLayer rule), goes into the halt pose over half a step
(:func:`.nimbro_cpg_plan.halt_blend`, not the authors' one-tick jump) and holds it (support coefficient 0.5).
``set_halt(False)`` before it has halted cancels the halt (the command latched again at the next phase centre);
after it, the walk starts again from the halt pose (DynamicGait::reset: :func:`.nimbro_cpg_plan.halt_state`, the
first step). A halt requested before :meth:`CpgEngine.start` halts at the first tick (it stands in the halt pose).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .nimbro_cpg import (
    CpgConfig,
    backward_speed_per_gcv,
    lateral_speed_per_gcv,
    limit_gcv,
    pose,
    speed_per_gcv,
    support_coefficient,
    yaw_rate_per_gcv,
)
from .nimbro_cpg_plan import gait_tick, halt_blend, halt_blend_duration, halt_state


class CpgSample(NamedTuple):
    """One tick's output: t [s] since start(), q [rad] (``joints`` order), the left leg's support coefficient."""

    t: float
    q: np.ndarray
    c_left: float


class CpgEngine:
    """The CPG walk of one robot; ``params``: its :class:`.CpgConfig` (``dt``: the 8 ms tick, ``step_period``: one
    foot's lift); ``pose_of(joints, phase, gcv_x, timer, cfg, gcv_y=…, gcv_z=…)`` [rad]: the robot's joints of a
    gait state (default :func:`.nimbro_cpg.pose`, the NimbRo-OP's URDF names ``left_hip_pitch``…)."""

    def __init__(self, urdf: str | Path, cfg: CpgConfig | None = None, pose_of: Callable = pose):
        import pinocchio as pin  # noqa: PLC0415 (optional dependency)

        self.params = cfg or CpgConfig()
        self.pose_of = pose_of
        self.joints = list(pin.buildModelFromUrdf(str(urdf)).names[1:])
        self.q_stand = pose_of(self.joints, 0.0, 0.0, self.params.first_step_duration, self.params)
        self.cmd = (0.0, 0.0, 0.0)
        self.state = None
        self.t = 0.0
        self.halt_requested = False  # set_halt: the command withdrawn, the walk to halt
        self._walked: deque[np.ndarray] = deque(maxlen=3)  # the last walking samples (the halt blend's start)
        self._blend: deque[np.ndarray] = deque()  # the poses into the halt pose still to come (halt_blend)

    def gcv(self, vx: float) -> float:
        """gcv.x [−1..1] for ``vx`` [m/s]: vx / speed_per_gcv forward, vx / backward_speed_per_gcv backward, limited
        to their norm limit 1."""
        if vx >= 0:
            return min(1.0, max(0.0, vx / speed_per_gcv(self.params)))
        return max(-1.0, vx / backward_speed_per_gcv(self.params))

    def tops(self, vx: float) -> tuple[float, float, float]:
        """Each axis's speed at gcv 1: linear.x [m/s] (forward, or backward for ``vx`` < 0), linear.y [m/s],
        angular.z [rad/s] (:mod:`.nimbro_cpg`'s functions per axis)."""
        p = self.params
        return (
            (speed_per_gcv(p) if vx >= 0 else backward_speed_per_gcv(p)),
            lateral_speed_per_gcv(p),
            yaw_rate_per_gcv(p),
        )

    def gcv3(self, vx: float, vy: float, wz: float) -> tuple[float, float, float]:
        """(gcv.x, gcv.y, gcv.z) for cmd_vel (m/s, m/s, rad/s): each axis / its :meth:`tops`, limited to −1…1 (the
        norm limit is the state machine's, :func:`.nimbro_cpg_plan.gait_tick`)."""
        _, ty, tz = self.tops(vx)
        return self.gcv(vx), max(-1.0, min(1.0, vy / ty)), max(-1.0, min(1.0, wz / tz))

    def beyond_reach(self, vx: float, vy: float, wz: float) -> list[str]:
        """The components of ``cmd_vel`` (m/s, m/s, rad/s) the gait walks slower than commanded, in words (empty:
        none): an axis beyond its top speed (:meth:`tops`), and the three beyond their norm limit together."""
        tops, out = self.tops(vx), []
        for n, v, top, u in zip(("linear.x", "linear.y", "angular.z"), (vx, vy, wz), tops, ("m/s", "m/s", "rad/s")):
            if abs(v) > top + 1e-12:
                g = {"linear.x": "gcv.x", "linear.y": "gcv.y"}.get(n, "gcv.z")
                at = f"{g} {math.copysign(1, v):g}: walked at that"
                out.append(f"{n} {v:g} {u} beyond {math.copysign(top, v):.4g} {u} ({at})")
        g = self.gcv3(vx, vy, wz)
        lim = limit_gcv(*g, self.params)
        if (g[1] or g[2]) and lim != g:
            k = lim[0] / g[0] if g[0] else lim[1] / g[1] if g[1] else lim[2] / g[2]
            out.append(
                f"cmd_vel beyond the CPG's norm limit ‖gcv‖_{self.params.gcv_norm_p:g} ≤ 1: walked at {k:.3g} of it"
            )
        return out

    def set_cmd(self, vx: float, vy: float, wz: float) -> None:
        """The velocity (REP-103) whose gcv (:meth:`gcv3`) the gait takes at its next phase centre."""
        for name, v in (("linear.x", vx), ("linear.y", vy), ("angular.z", wz)):
            if not math.isfinite(v):
                raise ValueError(f"cmd_vel {name} is not finite ({v})")
        self.cmd = (float(vx), float(vy), float(wz))

    def set_halt(self, requested: bool) -> None:
        """Request the halt (True: finish the step, stand in the halt pose) or walk on / again (False)."""
        self.halt_requested = bool(requested)

    @property
    def halted(self) -> bool:
        """True while the walk stands in the halt pose (halted and the halt pose reached, not started again)."""
        return self.state is not None and not self.state.walking and not self._blend

    def start(self) -> None:
        """Begin the walk from the halt pose at t = 0 (the first step's hip shift, then stepping)."""
        self.state, self.t = halt_state(self.params), 0.0
        self._walked.clear()
        self._blend.clear()

    def tick(self) -> CpgSample:
        """The sample at the current time, then advance one ``dt`` towards the current command. Once the state
        machine halts, the samples go into the halt pose in :func:`.halt_blend_duration` (:func:`.halt_blend`,
        support coefficient 0.5); a walk asked for meanwhile starts when the halt pose is reached."""
        s = self.state
        if s is None:
            raise RuntimeError("CpgEngine.tick before start()")
        p = self.params
        if self._blend:
            out = CpgSample(self.t, self._blend.popleft(), 0.5)
            self.t += p.dt
            return out
        if not s.walking and not self.halt_requested:
            s = halt_state(p)  # walking again from the halt pose: DynamicGait::reset
        phase = s.phase if s.walking else 0.0
        c = support_coefficient(phase, "left", p) if s.walking else 0.5
        q = self.pose_of(self.joints, phase, s.gcv, s.timer, p, gcv_y=s.gcv_y, gcv_z=s.gcv_z)
        out = CpgSample(self.t, q, c)
        gx, gy, gz = self.gcv3(*self.cmd)
        self.state = gait_tick(s, None if self.halt_requested else gx, p, (gy, gz))[0]
        if s.walking:
            self._walked.append(q)
            if not self.state.walking:  # halted in this tick: the halt pose reached by a blend, not a jump
                self._blend.extend(halt_blend(np.array(self._walked), self.q_stand, p.dt, halt_blend_duration(p)))
                self._walked.clear()
        self.t += p.dt
        return out


def op3_cpg_engine(urdf: str | Path) -> CpgEngine:
    """The CPG carried to the OP3 of ``urdf`` by dynamic similarity (:func:`.op3_cpg.op3_config`, its joints by
    :func:`.op3_cpg.pose`): the engine of ``op3_cpg_plan``'s walk (top speeds at gcv 1 on urdf/op3.urdf: 0.0567 m/s
    forward, 0.165 m/s backward, 0.082 m/s lateral, 0.546 rad/s turning)."""
    from .op3_cpg import op3_config  # noqa: PLC0415
    from .op3_cpg import pose as op3_pose  # noqa: PLC0415

    return CpgEngine(urdf, op3_config(urdf), partial(op3_pose, urdf=urdf))
