"""cmd_vel end to end over DDS on the simulated OP3: turn, step left, walk backward and halt, under placo and the CPG
(issue 21: the walk node's steering and halt, as ``servo-ff up sim_op3 [gait:=cpg]`` + ``ros2 topic pub /cmd_vel``).

Run: python bench/steer_dds.py

Pre-registered (this docstring was committed before the first run of this bench; nothing below is tuned to it):

* Graph: ``op3_mission.run_op3`` under (c) "ff" (low-gain P 0.35 × 800 = k_P 280 + feed-forward), flat ground, the
  real nodes over DDS (MuJoCo sim node lockstep on /clock, feed-forward node, walk node; cmd_vel and the halt
  published by the probe node), fresh nodes per cell, once: ``op3_graph()`` (placo, its engine process) and
  ``op3_graph("cpg")`` (the authors' CPG scaled to the OP3, ``gait: op3_cpg``).
* Commands (REP-103: +linear.y left, +angular.z counter-clockwise): the CPG, bench/cpg_steer.py's rule: gcv 0.5 of
  each axis's top (:meth:`.CpgEngine.tops` on urdf/op3.urdf): turn left angular.z +0.273 rad/s, step left linear.y
  +0.041 m/s, walk backward linear.x −0.083 m/s; placo, half its per-step maximum over its step period (WalkParams'
  defaults, the walk node's; :meth:`.WalkEngine.beyond_reach`'s reach): angular.z +0.5 × max_dtheta / T = +0.417
  rad/s, linear.y +0.5 × max_dy / T = +0.031 m/s, linear.x −0.5 × max_dx_backward / T = −0.031 m/s (T 0.48 s).
* N = 16 steps per command (cpg_steer's), then the halt (cmd_vel ``angular.x = -1``), then ≈ 2 s standing; the
  timing (``run_op3``'s ``halt=(t_halt, t_end)``, s from the walk start on the sim's clock):
  - CPG: t_halt such that the engine (ticking ``lead`` = horizon + 4 ticks + ½ publish_period ahead of the sim's
    clock, the walk node's defaults: ``run_op3``'s ``withdraw`` rule) takes the halt at the phase centre where
    cpg_steer's ROS-free plan withdraws the command (:func:`.robot_graph.cpg_stop`); t_end: that plan's halt + 2 s
    (``gait_states(..., hold=2.0)``). The DDS run then walks the plan cpg_steer walks ROS-free.
  - placo: t_halt = the end of step N (``WalkParams.step_windows``) less the same ``lead``; its engine process
    samples up to publish_period + engine_lead more ahead, so the halt may land up to ≈ 1 step later; t_end: the
    end of step N + walk_halt's halt bound (2 (double + single support) + the end double support, 1.76 s) +
    publish_period + engine_lead + 2 s.
* Measured per cell (the ``tap`` after each sim period): the trunk (the MuJoCo root body, the free joint's) yaw
  change [rad, unwrapped] and its x, y travel [m] from the walk start to the run's end, x, y in the frame of the
  trunk's heading at the walk start; fell: run_op3's rule (tilt > 0.6 rad; the run ends there); the steps walked
  (the walk node's planned support coefficient entering single support, 0 or 1, as the sim's clock passes it); the
  plan's stand time (the walk node's desired pose at the sim's clock unchanged, within 1e-6 rad, from there to the
  end) and halt_s = that − t_halt; still: did not fall, the plan stands over the whole last 1 s, and the trunk's
  pitch and roll ranges over the last 1 s are each < 0.02 rad (walk_halt's rest bound); the ranges are reported.
* Against: the CPG cells, cpg_steer's ROS-free figure for the same command (its ``run``, called here, measured to
  its run's end = the plan's halt + 0.5 s; the DDS trunk at that same time also printed); placo, the nominal
  command × steps walked × T (no ROS-free figure exists).
* Sign: a cell whose own axis (yaw for the turn, y for the step left, x backward) is measured with the sign opposite
  to its command's is a sign error: a bug, reported (``sign_errors``), not tuned away. A fall is reported.
* rtf: Σ simulated s / Σ wall s of the six runs (``run_op3``'s sim_s, wall_s).

Last line: RESULT {gait}_{command}_{axis}=… (the own axis at the run's end; axis yaw_rad, y_m or x_m) …
cpg_{command}_rosfree=… {gait}_{command}_fell=0|1 {gait}_{command}_still=0|1 … sign_errors=k falls=k rtf=…
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import NamedTuple

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

N_STEPS = 16
STAND = 2.0  # [s] after the halt
REST = 0.02  # [rad] pitch and roll range over the last 1 s (walk_halt's)
STILL_TOL = 1e-6  # [rad] the plan's pose unchanged
#: command → (axis judged: 0 x, 1 y, 2 yaw; the sign commanded)
COMMANDS = {"turn": (2, 1.0), "lateral": (1, 1.0), "backward": (0, -1.0)}
AXES = ("x_m", "y_m", "yaw_rad")


class Cell(NamedTuple):
    gait: str
    name: str
    cmd: tuple[float, float, float]
    got: np.ndarray  # (x [m], y [m], yaw [rad]) walk start → run end
    at_rosfree: np.ndarray  # the same at the ROS-free run's end time (CPG), else NaN
    nominal: np.ndarray  # command × steps × T
    fell: bool
    steps: int
    halt_s: float  # [s] the halt's publication → the plan standing
    stood_s: float  # [s] the plan standing before the run's end
    pitch_range: float  # [rad] last 1 s
    roll_range: float
    still: bool
    sim_s: float
    wall_s: float


def _walk_defaults() -> dict:
    from servo_ff.nodes.walk_params import walk_specs  # noqa: PLC0415

    return {s.name: s.default for s in walk_specs()}


def commands(gait: str) -> dict[str, tuple[float, float, float]]:
    """The rule's cmd_vel (linear.x, linear.y, angular.z) per command for ``gait`` ("placo", "cpg")."""
    if gait == "cpg":
        from servo_ff.dynamics.nimbro_cpg_engine import op3_cpg_engine  # noqa: PLC0415
        from servo_ff.dynamics.walk_sim import OP3_URDF  # noqa: PLC0415

        e = op3_cpg_engine(OP3_URDF)
        _, ty, tz = e.tops(0.0)
        return {"turn": (0.0, 0.0, 0.5 * tz), "lateral": (0.0, 0.5 * ty, 0.0), "backward": (-0.5 * e.tops(-1)[0], 0, 0)}
    from servo_ff.dynamics.walk_pattern import WalkParams  # noqa: PLC0415

    p = WalkParams()
    T = p.step_period
    return {
        "turn": (0.0, 0.0, 0.5 * p.max_dtheta / T),
        "lateral": (0.0, 0.5 * p.max_dy / T, 0.0),
        "backward": (-0.5 * p.max_dx_backward / T, 0.0, 0.0),
    }


def timing(gait: str, cmd: tuple[float, float, float]) -> tuple[float, float, float, float]:
    """(t_halt, t_end, the ROS-free run's end (CPG; else NaN), step period T) [s from the walk start]: the rule's."""
    w = _walk_defaults()
    if gait == "cpg":
        from servo_ff.bringup.robot_graph import cpg_stop  # noqa: PLC0415
        from servo_ff.dynamics.nimbro_cpg_engine import op3_cpg_engine  # noqa: PLC0415
        from servo_ff.dynamics.nimbro_cpg_plan import gait_states  # noqa: PLC0415
        from servo_ff.dynamics.walk_sim import OP3_URDF  # noqa: PLC0415

        e = op3_cpg_engine(OP3_URDF)
        p = e.params
        lead = w["horizon"] + 4 * p.dt + 0.5 * w["publish_period"]
        t_halt = cpg_stop(e, cmd[0], N_STEPS, lead)[0]
        gx, gy, gz = e.gcv3(*cmd)
        end = float(gait_states(gx, N_STEPS, p, hold=STAND, gcv_y=gy, gcv_z=gz).t[-1])
        rosfree = float(gait_states(gx, N_STEPS, p, hold=0.5, gcv_y=gy, gcv_z=gz).t[-1])
        return t_halt, end, rosfree, p.step_period
    from servo_ff.dynamics.walk_pattern import WalkParams  # noqa: PLC0415

    p = WalkParams()
    lead = w["horizon"] + 4 * p.dt + 0.5 * w["publish_period"]
    t_step = float(p.step_windows(N_STEPS)[0][-1])
    bound = 2 * (p.double_support_ratio * p.single_support + p.single_support)
    bound += p.startend_double_support_ratio * p.single_support
    return t_step - lead, t_step + bound + w["publish_period"] + w["engine_lead"] + STAND, math.nan, p.step_period


def _yaw(q_wxyz) -> float:
    w, x, y, z = (float(v) for v in q_wxyz)
    return math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))


def run_cell(gait: str, name: str, cmd: tuple[float, float, float], salt: int) -> Cell:
    """One command's DDS run and the rule's figures."""
    from servo_ff.bringup.op3_mission import _pitch, run_op3  # noqa: PLC0415
    from servo_ff.bringup.robot_graph import op3_graph  # noqa: PLC0415

    t_halt, t_end, t_rosfree, T = timing(gait, cmd)
    rows: list[tuple[float, ...]] = []  # t, x, y, yaw, pitch, roll, support, |Δ desired|

    def tap(t, quat, sim, walk) -> None:
        d, b = sim.servos.data, sim.servos.sim.root_body
        x, y, z, w = quat
        roll = math.atan2(2.0 * (w * x + y * z), 1.0 - 2.0 * (x * x + y * y))
        q = walk.desired(walk.t_walk + t)
        move = math.inf if q is None or not rows else float(np.abs(q - tap.q).max())
        tap.q = q
        c = walk.support(walk.t_walk + t)
        rows.append((t, float(d.xpos[b][0]), float(d.xpos[b][1]), _yaw(d.xquat[b]), _pitch(x, y, z, w), roll, c, move))

    tap.q = None
    graph = op3_graph("cpg" if gait == "cpg" else "placo")
    r = run_op3("ff", n_steps=N_STEPS, robot=graph, cmd=cmd, halt=(t_halt, t_end), tap=tap, salt=salt,
                log=lambda s: print(f"  {gait} {name}:{s}", flush=True))  # fmt: skip
    a = np.array(rows)
    a[:, 3] = np.unwrap(a[:, 3])
    yaw0 = a[0, 3]
    rot = np.array([[math.cos(yaw0), math.sin(yaw0)], [-math.sin(yaw0), math.cos(yaw0)]])  # world → start heading

    def pose_at(k: int) -> np.ndarray:
        return np.array([*(rot @ (a[k, 1:3] - a[0, 1:3])), a[k, 3] - yaw0])

    got = pose_at(len(a) - 1)
    at = pose_at(int(np.searchsorted(a[:, 0], t_rosfree - 1e-9))) if t_rosfree < a[-1, 0] else np.full(3, math.nan)
    single = np.isin(a[:, 6], (0.0, 1.0))
    steps = int(np.sum(single[1:] & (a[1:, 6] != a[:-1, 6])))
    moving = np.flatnonzero(a[:, 7] > STILL_TOL)
    t_stand = float(a[moving[-1] + 1, 0]) if moving.size and moving[-1] + 1 < len(a) else math.inf
    last = a[:, 0] >= a[-1, 0] - 1.0
    pr, rr = float(np.ptp(a[last, 4])), float(np.ptp(a[last, 5]))
    still = not r.fell and t_stand <= a[-1, 0] - 1.0 and pr < REST and rr < REST
    nominal = np.array(cmd) * steps * T
    return Cell(gait, name, cmd, got, at, nominal, r.fell, steps, t_stand - t_halt, float(a[-1, 0]) - t_stand,
                pr, rr, still, r.sim_s, r.wall_s)  # fmt: skip


def main() -> int:
    sys.path.insert(0, str(ROOT / "bench"))
    import cpg_steer  # noqa: PLC0415 (bench/cpg_steer.py: its ROS-free run)

    print(
        f"OP3 over DDS under (c), cmd_vel then the halt: {N_STEPS} steps per command, {STAND:g} s standing", flush=True
    )
    rosfree = {n: cpg_steer.run(n) for n in COMMANDS}
    cells, salt = [], 71
    for gait in ("placo", "cpg"):
        for name, cmd in commands(gait).items():
            cells.append(run_cell(gait, name, cmd, salt))
            salt += 1
    print("| gait | command | cmd_vel (x, y, ωz) | x m | y m | yaw rad | against | fell | steps | halt s | standing s "
          "| pitch / roll range last 1 s rad | still |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    errors, out = 0, []
    for c in cells:
        axis, sign = COMMANDS[c.name]
        key = f"{c.gait}_{c.name}"
        out.append(f"{key}_{AXES[axis]}={c.got[axis]:.4f}")
        if c.gait == "cpg":
            ref = rosfree[c.name]
            against = (f"ROS-free {ref.got[axis]:+.4f} (plan {ref.planned[axis]:+.4f}; DDS at its end "
                       f"{c.at_rosfree[axis]:+.4f})")  # fmt: skip
            out.append(f"cpg_{c.name}_rosfree={ref.got[axis]:.4f}")
        else:
            against = f"nominal {c.nominal[axis]:+.4f}"
        wrong = math.copysign(1, c.got[axis]) != sign or c.got[axis] == 0
        errors += wrong
        cmd = "(" + ", ".join(f"{v:+.4g}" for v in c.cmd) + ")"
        print(f"| {c.gait} | {c.name} | {cmd} | {c.got[0]:+.4f} | {c.got[1]:+.4f} | {c.got[2]:+.4f} | {against} | "
              f"{int(c.fell)} | {c.steps} | {c.halt_s:.2f} | {c.stood_s:.2f} | {c.pitch_range:.4f} / "
              f"{c.roll_range:.4f} | {int(c.still)} |" + (" SIGN ERROR" if wrong else ""))  # fmt: skip
        out += [f"{key}_fell={int(c.fell)}", f"{key}_still={int(c.still)}"]
    rtf = sum(c.sim_s for c in cells) / sum(c.wall_s for c in cells)
    print("RESULT " + " ".join(out) + f" sign_errors={errors} falls={sum(c.fell for c in cells)} rtf={rtf:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
