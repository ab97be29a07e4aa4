"""Why (c) stands in front of the 15 mm board but does not step onto it (issue 21, a diagnosis, ROS-free): the
board cells of ``bench/op3_cpg_obstacle.py`` (OP3, the CPG scaled) and ``bench/nimbro_cpg_obstacle.py`` (NimbRo-OP,
its CPG) at their slowest speed, (a) and (c), walked again through ``simulate_walk`` with the same arguments (their
rules and outputs unchanged) and a read-only probe (``simulate_walk(probe=…)``, every 8 ms control period), plus
the same walks on flat ground.

Run: python bench/board_contact.py [--robots op3,nimbro] [--steps-shown N]

Per swing (the plan's steps: start, swinging foot), with the edge at x_e (the board's near edge; on flat ground the
same rule's virtual edge, 5 mm ahead of the soles at the walk start):

* ``reach``: the swing sole's furthest x − x_e over the step [mm] (< 0: it never got over the edge);
* ``over``: the height of the swing sole's underside straight over x_e when its toe first got 1 mm past x_e [mm]
  (8 ms periods: the toe's height as it crosses the edge's line); if it never got past, ``<`` and its lowest height
  at its closest approach; ``astride``/``beyond``: its toe / heel was already past x_e at the step's start;
* ``lift``: the swing sole's highest lowest-corner height over the step [mm] (on flat ground: its lift);
* each of the three as walked (world), as planned (``plan``: forward kinematics of the plan's joint angles, trunk
  upright, the stance sole flat at z 0 with its toe where the real stance toe is) and as the joints went (``q``:
  the same with the measured joint angles): plan → q is the servos' lag, q → world the trunk's lean (and any rocking
  of the stance foot);
* ``touch``: the swing foot's first board contact in the step: its face (letter as ``faces``), when (share of the
  step, 0 at its start) and the contact point's height [mm];
* ``faces``: the board faces the swing foot / the stance foot touched during the step (MuJoCo's contact list, the
  normal out of the board: ``dynamics.board_contact.contact_face``; t top, f front, e edge (a normal between
  both), s side, - none; E: the point on the near top edge line whatever the normal, e.g. a tilted sole on the edge);
* ``stance``: the stance toe − x_e at the step's end [mm], its heel − x_e [mm] and its sole's tilt [rad, toe up +]
  (toe on the top and heel behind the edge: the foot bridges the edge); ``trunk``: trunk x from the walk start
  [mm]; ``pitch``: trunk pitch at the step's end [rad, forward +].

Per run: each foot's first contact with the board (time from the walk start, step, face, contact point − edge).
Contacts are read every control period (8 ms), not every 1 ms physics step: a touch shorter than that can be missed.

Last line: RESULT {robot}_{a|c}_first=face@step (the first board contact's face and step) {robot}_{a|c}_over_mm=…
(the first swing's ``over`` as walked, ``<`` if it never got over) {robot}_{a|c}_top_swings=k/n (swings whose swing
foot touched the board's top) {robot}_{a|c}_stance_toe_mm, _travel_mm (the last step's stance toe − x_e, trunk x)
{robot}_{a|c}_flat_lift_mm=w/p (median over the flat run's swings of ``lift`` as walked / as planned)
{robot}_{a|c}_flat_over_mm=w/p (the flat run's first swing's ``over``, walked / planned).
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path

import mujoco
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "src"))

import nimbro_cpg_obstacle as nc  # noqa: E402 (its speeds)
import nimbro_obstacle as nb  # noqa: E402 (its gains and step count)
import op3_cpg_obstacle as oc  # noqa: E402 (its speeds)
import op3_obstacle_sweep as sw  # noqa: E402 (its cells' simulate_walk arguments)

from servo_ff.dynamics.board_contact import body_over, box_contacts, colliding_geoms  # noqa: E402
from servo_ff.dynamics.mujoco_model import BOARD_GAP, sole_front  # noqa: E402
from servo_ff.dynamics.walk_balance import trunk_pitch_roll  # noqa: E402

HEIGHT = 0.015  # [m] the board
CROSS = 0.001  # [m] a toe this far past the edge has crossed it (a toe against the face penetrates it < 0.2 mm)
VARIANTS = ("world", "plan", "swing", "q")  # as walked; the plan's joints; the swing leg's measured; all measured
LETTER = {"on_edge": "E", "top": "t", "front": "f", "edge": "e", "side": "s", "back": "b"}


def walk_args(robot: str, vx: float, n_steps: int | None = None) -> dict:
    """``simulate_walk``'s arguments of the benches' cells (``sw.run_cell`` / ``nb.walk``, gait "cpg") but the
    controller, obstacle and probe; ``n_steps``: steps commanded (None: the benches' 16)."""
    if robot == "op3":
        n = sw.N_STEPS if n_steps is None else n_steps
        return {"n_steps": n, "vx": vx, "plan_grid": 1e-6, **sw.robotis_ready(vx, n, "cpg")}
    from servo_ff.dynamics.nimbro_cpg import CpgConfig, gcv_for_speed  # noqa: PLC0415
    from servo_ff.dynamics.nimbro_cpg_plan import cpg_plan  # noqa: PLC0415
    from servo_ff.dynamics.nimbro_walk import NIMBRO_FRAMES, NIMBRO_SERVOS, NIMBRO_URDF, nimbro_walk_params  # noqa: PLC0415

    n = nb.N_STEPS if n_steps is None else n_steps
    return {
        "n_steps": n, "vx": vx, "kp_high": nb.KP_HIGH, "params": nimbro_walk_params(), "urdf": NIMBRO_URDF,
        "servos": NIMBRO_SERVOS, "alpha": None, "frames": NIMBRO_FRAMES, "plan_grid": 1e-6, "desired": "plan",
        "ready": cpg_plan(NIMBRO_URDF, gcv_for_speed(vx, CpgConfig()), n), "obstacle_step": 4,
    }  # fmt: skip


@dataclass
class Probe:
    """Reads the sim every control period (``simulate_walk``'s probe): the feet against the edge as walked, as the
    plan's and the measured joint angles put them (trunk upright), the board contacts, the trunk."""

    plan: object  # the WalkPlan walked
    board: bool
    rows: list = field(default_factory=list)  # per period: t, trunk x, pitch, then per foot (L, R) 3 × Over
    contacts: list = field(default_factory=list)  # per period: [(foot index, face, pos)]
    edge: float = math.nan  # [m] x_e
    _fk: object = None

    def __call__(self, t: float, sv) -> None:
        m, d = sv.model, sv.data
        if self._fk is None:
            self._fk = mujoco.MjData(m)
            self.feet = list(sv.sim.feet[:2])  # left, right
            self.perm = [self.plan.joints.index(j) for j in sv.joint_names]
            self.qadr, self.root = sv.qadr, sv.sim.root_body
            self.geom = int(m.geom("obstacle").id) if self.board else -1
            self.legs = [leg_joints(m, f, sv.qadr) for f in self.feet]
        if t < 0:
            return
        if math.isnan(self.edge):  # the board is placed at t = 0, before this period's physics
            b = self.geom
            self.edge = m.geom_pos[b][0] - m.geom_size[b][0] if self.board else sole_front(m, d, self.feet) + BOARD_GAP
        stance = 0 if np.interp(t, self.plan.t, self.plan.c_left) > 0.5 else 1
        q_plan = np.array([np.interp(t, self.plan.t, self.plan.q[:, i]) for i in self.perm])
        q = np.array(d.qpos[self.qadr])
        q_swing = q_plan.copy()
        q_swing[self.legs[1 - stance]] = q[self.legs[1 - stance]]
        world = [body_over(m, d, f, self.edge) for f in self.feet]
        row = [t, float(d.xpos[self.root][0]), trunk_pitch_roll((*d.xquat[self.root][1:], d.xquat[self.root][0]))[0]]
        row += [world] + [self.flat_stance(m, x, stance, world) for x in (q_plan, q_swing, q)]
        tilt = [math.asin(d.geom_xmat[colliding_geoms(m, f)[0]][6]) for f in self.feet]  # the sole's x axis' z
        self.rows.append(row + [tilt])
        cs = box_contacts(m, d, self.geom, self.feet) if self.board else []
        self.contacts.append([(self.feet.index(c.body), "on_edge" if c.near_edge else c.face, c.pos) for c in cs])

    def flat_stance(self, m, q: np.ndarray, stance: int, world: list) -> list:
        """Both feet (Over) with the joints at ``q`` and the stance sole flat on z 0, its toe at the real stance
        toe's x (the whole robot turned so that the stance sole's box is level: its pitch and roll alone)."""
        fk = self._fk
        fk.qpos[:] = 0.0
        fk.qpos[3] = 1.0  # the floating base's quaternion (w first)
        fk.qpos[self.qadr] = q
        mujoco.mj_kinematics(m, fk)
        sole = colliding_geoms(m, self.feet[stance])[0]
        r = fk.geom_xmat[sole].reshape(3, 3)
        yaw = math.atan2(r[1, 0], r[0, 0])
        level = np.array([[math.cos(yaw), -math.sin(yaw), 0.0], [math.sin(yaw), math.cos(yaw), 0.0], [0.0, 0.0, 1.0]])
        quat = np.zeros(4)
        mujoco.mju_mat2Quat(quat, (level @ r.T).ravel())  # base rotation that levels the sole, its yaw kept
        fk.qpos[3:7] = quat
        mujoco.mj_kinematics(m, fk)
        s = body_over(m, fk, self.feet[stance], 0.0)
        dx, dz = world[stance].front - s.front, -s.z_low
        out = []
        for f in self.feet:
            o = body_over(m, fk, f, self.edge - dx)
            out.append(type(o)(o.z_over + dz, o.z_low + dz, o.front + dx, o.rear + dx))
        return out


def leg_joints(m, foot: int, qadr: np.ndarray) -> list[int]:
    """Indices into the servos' joints (``qadr`` order) of the hinges between the trunk and body ``foot``."""
    adr, body = [], foot
    while body > 0:
        adr += [int(m.jnt_qposadr[j]) for j in range(m.body_jntadr[body], m.body_jntadr[body] + m.body_jntnum[body])
                if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE]  # fmt: skip
        body = int(m.body_parentid[body])
    return [i for i, a in enumerate(qadr) if a in adr]


def run(robot: str, controller: str, vx: float, board: bool, height: float = HEIGHT, n_steps: int | None = None):
    """One walk (its WalkRun and Probe); ``height`` [m]: the board's; ``n_steps``: as :func:`walk_args`."""
    from servo_ff.dynamics.walk_sim import simulate_walk  # noqa: PLC0415

    args = walk_args(robot, vx, n_steps)
    probe = Probe(args["ready"][0], board)
    shape = "board" if board else "foot_box"
    r = simulate_walk(controller, obstacle=height if board else 0.0, obstacle_shape=shape, probe=probe, **args)
    return r, probe


def swings(p: Probe) -> list[dict]:
    """Per step of the plan walked before the run ended: the module docstring's columns."""
    t = np.array([r[0] for r in p.rows])
    starts = [s for s, _ in p.plan.steps] + [math.inf]
    out = []
    for k, (t0, side) in enumerate(p.plan.steps):
        w = np.flatnonzero((t >= t0) & (t < starts[k + 1]))
        if len(w) == 0:
            break
        f = 0 if side == "left" else 1
        row = {"step": k + 1, "foot": side[0].upper(), "t0": t0}
        for i, name in enumerate(VARIANTS):
            o = [p.rows[j][3 + i][f] for j in w]
            front = np.array([x.front for x in o])
            row[f"reach_{name}"] = 1e3 * (front.max() - p.edge)
            cross = np.flatnonzero(front > p.edge + CROSS)
            if o[0].rear > p.edge:
                row[f"over_{name}"] = "beyond"
            elif o[0].front > p.edge + CROSS:
                row[f"over_{name}"] = "astride"
            elif len(cross):
                row[f"over_{name}"] = f"{1e3 * o[cross[0]].z_over:.1f}"
            else:
                row[f"over_{name}"] = f"<{1e3 * o[int(front.argmax())].z_low:.1f}"
            row[f"lift_{name}"] = 1e3 * max(x.z_low for x in o)
        period = (starts[k + 1] if math.isfinite(starts[k + 1]) else t[w[-1]]) - t0
        hit = next(((j, c) for j in w for c in p.contacts[j] if c[0] == f), None)
        row["touch"] = f"{LETTER[hit[1][1]]} {(t[hit[0]] - t0) / period:.2f} {1e3 * hit[1][2][2]:4.1f}" if hit else "-"
        faces = [sorted({LETTER[c[1]] for j in w for c in p.contacts[j] if c[0] == g}) for g in (f, 1 - f)]
        row["faces"] = "/".join("".join(x) or "-" for x in faces)
        end = p.rows[w[-1]]
        row["stance"] = 1e3 * (end[3][1 - f].front - p.edge)
        row["heel"] = 1e3 * (end[3][1 - f].rear - p.edge)
        row["tilt"] = end[7][1 - f]
        row["trunk"] = 1e3 * (end[1] - p.rows[0][1])
        row["pitch"] = end[2]
        out.append(row)
    return out


def first_contacts(p: Probe) -> list[str]:
    """Each foot's first contact with the board: time, step, face, contact point − (edge, top) [mm]."""
    starts = np.array([s for s, _ in p.plan.steps])
    out = []
    for g, name in enumerate(("left", "right")):
        hit = next(((r[0], c) for r, cs in zip(p.rows, p.contacts) for c in cs if c[0] == g), None)
        if hit is None:
            out.append(f"{name}: no contact")
            continue
        t, (_, face, pos) = hit
        step = int(np.searchsorted(starts, t, side="right"))
        out.append(f"{name}: {t:.3f} s, step {step}, {face} (x − edge {1e3 * (pos[0] - p.edge):+.1f} mm, "
                   f"z {1e3 * pos[2]:.1f} mm)")  # fmt: skip
    return out


def table(rows: list[dict], shown: int) -> str:
    """The per-swing rows (module docstring), the first ``shown``."""
    v = "/".join(VARIANTS)
    lines = [f"step foot | reach mm world/plan | over mm {v} | lift mm {v} | touch | faces sw/st | stance: toe−edge mm "
             "heel mm tilt rad | trunk mm | pitch rad"]  # fmt: skip
    for r in rows[:shown]:
        over = " ".join(f"{r[f'over_{k}']:>6}" for k in VARIANTS)
        lift = " ".join(f"{r[f'lift_{k}']:5.1f}" for k in VARIANTS)
        lines.append(
            f"{r['step']:4d} {r['foot']:>4} | {r['reach_world']:+6.1f} {r['reach_plan']:+6.1f} | {over} | {lift} | "
            f"{r['touch']:>11} | {r['faces']:>5} | {r['stance']:+6.1f} {r['heel']:+7.1f} {r['tilt']:+.3f} | "
            f"{r['trunk']:+6.1f} | {r['pitch']:+.3f}"
        )
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--robots", default="op3,nimbro", help="comma-separated: op3, nimbro")
    ap.add_argument("--steps-shown", type=int, default=20, help="table rows per run")
    a = ap.parse_args()
    robots = [x for x in a.robots.split(",") if x]
    bad = [x for x in robots if x not in ("op3", "nimbro")]
    if bad:
        print(f"board_contact.py: --robots: unknown {', '.join(bad)} (op3, nimbro)", file=sys.stderr)
        return 2
    keys = []
    for robot in robots:
        vx = oc.SPEEDS[0] if robot == "op3" else nc.SPEEDS[0]
        for c, tag in (("high", "a"), ("ff", "c")):
            res = {}
            for board in (True, False):
                r, p = run(robot, c, vx, board)
                rows = swings(p)
                where = "15 mm board" if board else "flat ground"
                fell = f"fell at {r.fell_at:.2f} s" if r.fell else "stood"
                print(f"\n{robot} ({tag}) {vx:.4f} m/s, {where}: {fell}, trunk travel {1e3 * r.travel:.1f} mm, "
                      f"edge x {1e3 * p.edge:.1f} mm")  # fmt: skip
                if board:
                    print("first contacts: " + "; ".join(first_contacts(p)))
                print(table(rows, a.steps_shown))
                med = " / ".join(f"{np.median([x[f'lift_{k}'] for x in rows]):.1f}" for k in VARIANTS)
                print(f"median lift over the swings, {'/'.join(VARIANTS)}: {med} mm")
                res[board] = (r, p, rows)
            keys.append(record(robot, tag, res))
    print("\nRESULT " + " ".join(keys))
    return 0


def record(robot: str, tag: str, res: dict) -> str:
    """The RESULT keys of one robot and controller (module docstring)."""
    _, p, rows = res[True]
    starts = np.array([s for s, _ in p.plan.steps])
    hit = next(((r[0], c) for r, cs in zip(p.rows, p.contacts) for c in cs), None)
    first = f"{hit[1][1]}@{int(np.searchsorted(starts, hit[0], side='right'))}" if hit else "none"
    top = sum("t" in r["faces"].split("/")[0] for r in rows)
    _, _, flat = res[False]
    lift = (np.median([r[f"lift_{k}"] for r in flat]) for k in ("world", "plan"))
    k = f"{robot}_{tag}"
    return (f"{k}_first={first} {k}_over_mm={rows[0]['over_world']} {k}_top_swings={top}/{len(rows)} "
            f"{k}_stance_toe_mm={rows[-1]['stance']:+.0f} {k}_travel_mm={rows[-1]['trunk']:+.0f} "
            f"{k}_flat_lift_mm={'/'.join(f'{x:.1f}' for x in lift)} "
            f"{k}_flat_over_mm={flat[0]['over_world']}/{flat[0]['over_plan']}")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
