"""Why the OP3 falls on the one-foot obstacle (issue 21): ``dynamics.walk_sim``'s walk, instrumented, ROS-free.

    PYTHONPATH=src python tools/op3_obstacle_trace.py [--controller ff] [--height 0.015] [--support plan|contact]
        [--shape foot_box|board] [--vx 0.05]

The loop of :func:`servo_ff.dynamics.walk_sim.simulate_walk` (same plan, servo layer, box at mid-swing of the right
foot's 5th swing, ``--vx`` 0.05 m/s, 16 steps), printing every ``--every`` control periods from just before the box:
trunk roll (positive to the right), the support coefficient the feed-forward uses (``c_plan``, the walk's plan) and the
one measured from the MuJoCo foot forces (``c_meas``), the right foot's force, how far the CoM is (+y, to the left)
beyond the left sole's outer edge, the right sole's inner edge and the box's inner edge, each foot's roll; then the
peak motor torque of the ankle-roll servos. ``--support contact``
feeds the feed-forward the measured coefficient (one period old) instead of the plan's. ``--shape board``: the board
across the path (``mujoco_model.place_board``, at the walk start, 0.05 m/s as the bench), printed from 0.2 s before the
first foot touches it, with the sagittal columns: trunk pitch (forward positive), the left foot's force, how far the
CoM is behind the heel of the rearmost loaded sole (positive: behind it, outside the support polygon), and the angle
[rad] between the gravity the feed-forward used (from the IMU orientation) and the true gravity in the trunk frame.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from op3_energy_terms import known_speed  # noqa: E402

from servo_ff.dynamics.feedforward import FeedForwardController  # noqa: E402
from servo_ff.dynamics.mujoco_humanoid import GAIN_RATIO  # noqa: E402
from servo_ff.dynamics.mujoco_model import place_board, place_obstacle, place_on_ground  # noqa: E402
from servo_ff.dynamics.mujoco_servos import MujocoServos, PhysicsDiverged, ServoOptions  # noqa: E402
from servo_ff.dynamics.walk_balance import trunk_pitch_roll  # noqa: E402
from servo_ff.dynamics.walk_pattern import WalkEngine  # noqa: E402
from servo_ff.dynamics.walk_sim import FALL_TILT, OP3_ALPHA, OP3_SERVOS, OP3_URDF, settled_plan, touches  # noqa: E402


def trace(
    controller: str,
    height: float,
    support: str,
    n_steps: int = 16,
    vx: float = 0.05,
    dt: float = 0.008,
    shape: str = "foot_box",
):
    """(rows, fall time [s], box time [s], peak |τ| of l/r ankle roll [N·m], trunk x travel [m], first touch of the
    obstacle [s]); rows as printed by ``main`` (the sagittal columns after the lateral ones)."""
    engine = WalkEngine(OP3_URDF)
    plan, q_stand = settled_plan(engine.plan((vx, 0.0, 0.0), n_steps), engine.q_stand)
    sv = MujocoServos.from_description(
        OP3_URDF, OP3_SERVOS, base="floating", options=ServoOptions(4096, latency=1), obstacle_slot=height > 0
    )
    p, data = engine.params, sv.data
    t_box = p.single_support * (p.startend_double_support_ratio + 0.5) + 5 * p.step_period if height > 0 else math.inf
    if shape == "board" and height > 0:
        t_box = 0.0
    perm = [plan.joints.index(j) for j in sv.joint_names]
    place_on_ground(sv.sim, sv.qadr, q_stand[perm])
    sv.set_initial_state()
    sv.reset()
    kp = 800.0 if controller == "high" else GAIN_RATIO * 800.0
    sv.set_kp(kp)
    t = np.arange(-0.48, plan.t[-1] + 1e-9, dt)
    tc = np.clip(t, 0.0, None)

    def grid(x: np.ndarray) -> np.ndarray:
        return np.stack([np.interp(tc, plan.t, x[:, i]) for i in range(x.shape[1])], axis=1)

    q, dq, ddq = grid(plan.q), grid(plan.dq), grid(plan.ddq)
    dq[t < 0], ddq[t < 0] = 0.0, 0.0
    c_plan = np.interp(tc, plan.t, plan.c_left)
    u = float(sv.params[sv.joint_names[0]].firmware.vin)
    ff = FeedForwardController(OP3_URDF, OP3_ALPHA, kp, u_nominal=u) if controller == "ff" else None
    if ff is not None:
        fperm = [plan.joints.index(j) for j in ff.robot.joint_names]
        f2s = [ff.robot.joint_names.index(j) for j in sv.joint_names]
    ank = [list(sv.joint_names).index(j) for j in ("l_ank_roll", "r_ank_roll")]
    fl, fr = sv.sim.feet[:2]
    m = sv.model
    sole = [
        next(g for g in range(m.ngeom) if m.geom_bodyid[g] == b and abs(m.geom_size[g][1] - 0.039) < 1e-6)
        for b in (fl, fr)
    ]
    box = int(m.geom("obstacle").id) if height > 0 else -1
    trunk, steps = sv.sim.root_body, int(round(dt / sv.model.opt.timestep))
    rows, peak, c_meas, fell, placed, touch = [], np.zeros(2), 0.5, math.nan, False, math.nan
    x0 = math.nan
    for k in range(len(t)):
        if math.isnan(x0) and t[k] >= 0:
            x0 = float(data.qpos[0])
        if not placed and t[k] >= t_box:
            if shape == "board":
                place_board(m, data, box, sv.sim.feet, height)
            else:
                place_obstacle(m, data, box, sv.sim.feet, "", height)
            placed = True
        goal = q[k, perm]
        c = c_plan[k] if support == "plan" else c_meas
        if ff is not None:
            w, x, y, z = data.xquat[trunk]
            goal = np.asarray(ff.tick(q[k, fperm], dq[k, fperm], ddq[k, fperm], imu_quat=(x, y, z, w), c_left=c))[f2s]
        sv.command(goal)
        try:
            sv.step(steps)
        except PhysicsDiverged:
            fell = t[k]
            break
        force = sv.foot_forces()
        c_meas = float(sv.support_coefficient())
        if placed and math.isnan(touch) and touches(m, data, box, sv.sim.feet):
            touch = float(t[k])
        pitch = trunk_pitch_roll(tuple(data.xquat[trunk][[1, 2, 3, 0]]))[0]
        g_true = data.xmat[trunk].reshape(3, 3).T @ np.array([0.0, 0.0, -9.80665])
        g_err = angle(ff.gravity, g_true) if ff is not None else math.nan
        loaded = [g for g, f in zip(sole, force) if f > 5.0]
        heel = min((data.geom_xpos[g][0] - m.geom_size[g][0] for g in loaded), default=math.nan)
        _, roll = trunk_pitch_roll(tuple(data.xquat[trunk][[1, 2, 3, 0]]))
        com_y = data.subtree_com[trunk][1]  # +y: left; the soles' edges as if flat (their half width 0.039 m)
        foot_roll = [math.atan2(data.xmat[b][7], data.xmat[b][8]) for b in (fl, fr)]
        outer_l, inner_r = data.geom_xpos[sole[0]][1] + 0.039, data.geom_xpos[sole[1]][1] + 0.039
        inner_box = data.geom_xpos[box][1] + m.geom_size[box][1] if placed else math.nan
        if t[k] >= 0:
            peak = np.maximum(peak, np.abs(sv.tau_m[ank]))
        rows.append(
            (t[k], roll, c_plan[k], c_meas, force[1], com_y - outer_l, com_y - inner_r, com_y - inner_box, *foot_roll,
             pitch, force[0], heel - data.subtree_com[trunk][0], g_err)
        )  # fmt: skip
        if data.xmat[trunk][8] < math.cos(FALL_TILT):
            fell = t[k]
            break
    return rows, fell, t_box, peak, float(data.qpos[0]) - x0, touch


def angle(a: np.ndarray, b: np.ndarray) -> float:
    """[rad] between two vectors."""
    return float(math.atan2(np.linalg.norm(np.cross(a, b)), float(np.dot(a, b))))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--controller", default="ff", choices=("high", "low", "ff"))
    ap.add_argument("--height", type=float, default=0.015, help="box [m] (0: flat)")
    ap.add_argument("--support", default="plan", choices=("plan", "contact"))
    ap.add_argument("--every", type=int, default=4, help="print every n-th control period")
    ap.add_argument("--shape", default="foot_box", choices=("foot_box", "board"))
    ap.add_argument("--vx", type=float, default=0.05, help="forward speed [m/s] (the sweep's: 0.02, 0.035, 0.05, 0.08)")
    a = ap.parse_args()
    if not known_speed(a.vx):
        return 2
    rows, fell, t_box, peak, travel, touch = trace(a.controller, a.height, a.support, vx=a.vx, shape=a.shape)
    print(
        "t [s] | trunk roll | c_plan | c_meas | F_right [N] | CoM y beyond: left sole's outer edge | right sole's "
        "inner edge | box's inner edge [m] | foot roll l | r [rad] | trunk pitch | F_left [N] | CoM x behind the "
        "rearmost loaded heel [m] | feed-forward's gravity error [rad]"
    )
    start = touch - 0.2 if a.shape == "board" and not math.isnan(touch) else t_box
    for r in rows[:: a.every]:
        if r[0] >= min(start, rows[-1][0] - 1.0) - 0.1:
            print(" | ".join(f"{v:.3f}" for v in r))
    print(
        f"{a.controller}, {1000 * a.height:g} mm at {a.vx:g} m/s, support from the {a.support}: "
        + (f"fell at {fell:.2f} s ({fell - t_box:+.2f} s after the box)" if not math.isnan(fell) else "stood")
        + f"; travel {travel:.3f} m; first touch {touch:.2f} s; peak |τ| ankle roll l/r {peak[0]:.2f}/{peak[1]:.2f} N·m"
        " (stall 4.1)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
