"""The NimbRo-OP's CPG gait (:mod:`.nimbro_cpg`) on line, one ``systemIterationTime`` per :meth:`CpgEngine.tick`
from the latest command (ROS-free): the walk node's engine interface (as :class:`.walk_pattern.WalkEngine`), the
state machine of :func:`.nimbro_cpg_plan.gait_tick` (the same as the batch plan's). The robot's joints of a gait state
come from ``pose_of`` with its :class:`.CpgConfig`: the NimbRo-OP's (:func:`.nimbro_cpg.pose`, the authors' values)
by default, the OP3's by dynamic similarity with :func:`op3_cpg_engine` (:mod:`.op3_cpg`).

cmd_vel's linear.x becomes gcv.x = vx / :func:`.nimbro_cpg.speed_per_gcv` (0.080 m/s per gcv; the OP3's 0.0567),
limited to 0…1
(their norm limit; backward walking is not in their forward-only configuration); linear.y and angular.z are not
supported (the gait's lateral and turning terms are left out) and ignored: :meth:`CpgEngine.beyond_reach` says so.
The walk, once started, steps in place while the command is zero. :meth:`CpgEngine.set_halt` (True) withdraws
the command (``gait_tick(s, None, cfg)``): gcv ramps down, and the walk halts near a phase centre once gcv <
stoppingVelocity (the authors' MotionLayer rule), then holds the halt pose (support coefficient 0.5).
``set_halt(False)`` before it has halted cancels the halt (the command latched again at the next phase centre);
after it, the walk starts again from the halt pose (DynamicGait::reset: :func:`.nimbro_cpg_plan.halt_state`, the
first step). A halt requested before :meth:`CpgEngine.start` halts at the first tick (it stands in the halt pose).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .nimbro_cpg import CpgConfig, pose, speed_per_gcv, support_coefficient
from .nimbro_cpg_plan import gait_tick, halt_state


class CpgSample(NamedTuple):
    """One tick's output: t [s] since start(), q [rad] (``joints`` order), the left leg's support coefficient."""

    t: float
    q: np.ndarray
    c_left: float


class CpgEngine:
    """The CPG walk of one robot; ``params``: its :class:`.CpgConfig` (``dt``: the 8 ms tick, ``step_period``: one
    foot's lift); ``pose_of(joints, phase, gcv_x, timer, cfg)`` [rad]: the robot's joints of a gait state (default
    :func:`.nimbro_cpg.pose`, the NimbRo-OP's URDF names ``left_hip_pitch``…)."""

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

    def gcv(self, vx: float) -> float:
        """gcv.x [0..1] for ``vx`` [m/s]: vx / speed_per_gcv, limited to their norm limit 1 and to forward (≥ 0)."""
        return min(1.0, max(0.0, vx / speed_per_gcv(self.params)))

    def beyond_reach(self, vx: float, vy: float, wz: float) -> list[str]:
        """The components of ``cmd_vel`` (m/s, m/s, rad/s) the gait does not follow, in words (empty: none)."""
        top = speed_per_gcv(self.params)
        out = [f"linear.x {vx:g} m/s beyond {top:.4g} m/s (gcv.x 1: walked at that)"] if vx > top + 1e-12 else []
        if vx < 0:
            out.append(f"linear.x {vx:g} m/s backward: not supported by the CPG (forward only: stepping in place)")
        out += [f"{n} {v:g}: not supported by the CPG (ignored)" for n, v in (("linear.y", vy), ("angular.z", wz)) if v]
        return out

    def set_cmd(self, vx: float, vy: float, wz: float) -> None:
        """The velocity (REP-103) whose gcv.x the gait takes at its next phase centre; only vx is followed."""
        for name, v in (("linear.x", vx), ("linear.y", vy), ("angular.z", wz)):
            if not math.isfinite(v):
                raise ValueError(f"cmd_vel {name} is not finite ({v})")
        self.cmd = (float(vx), float(vy), float(wz))

    def set_halt(self, requested: bool) -> None:
        """Request the halt (True: finish the step, stand in the halt pose) or walk on / again (False)."""
        self.halt_requested = bool(requested)

    @property
    def halted(self) -> bool:
        """True while the walk stands in the halt pose (halted, not started again)."""
        return self.state is not None and not self.state.walking

    def start(self) -> None:
        """Begin the walk from the halt pose at t = 0 (the first step's hip shift, then stepping)."""
        self.state, self.t = halt_state(self.params), 0.0

    def tick(self) -> CpgSample:
        """The sample at the current time, then advance one ``dt`` towards the current command."""
        s = self.state
        if s is None:
            raise RuntimeError("CpgEngine.tick before start()")
        if not s.walking and not self.halt_requested:
            s = halt_state(self.params)  # walking again from the halt pose: DynamicGait::reset
        phase = s.phase if s.walking else 0.0
        c = support_coefficient(phase, "left", self.params) if s.walking else 0.5
        out = CpgSample(self.t, self.pose_of(self.joints, phase, s.gcv, s.timer, self.params), c)
        self.state = gait_tick(s, None if self.halt_requested else self.gcv(self.cmd[0]), self.params)[0]
        self.t += self.params.dt
        return out


def op3_cpg_engine(urdf: str | Path) -> CpgEngine:
    """The CPG carried to the OP3 of ``urdf`` by dynamic similarity (:func:`.op3_cpg.op3_config`, its joints by
    :func:`.op3_cpg.pose`): the engine of ``op3_cpg_plan``'s walk (top speed gcv.x 1 = 0.0567 m/s on urdf/op3.urdf)."""
    from .op3_cpg import op3_config  # noqa: PLC0415
    from .op3_cpg import pose as op3_pose  # noqa: PLC0415

    return CpgEngine(urdf, op3_config(urdf), partial(op3_pose, urdf=urdf))
