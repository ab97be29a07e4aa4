"""Where the knees' energy goes under (a) high-gain P and (c) low-gain P + feed-forward, ROS-free (issue 21): per
knee, over whole steps from the walk start, E = ∫U·I dt split by definition and by gait phase, with the torque,
tracking, feed-forward and ground-reaction figures that explain it.

    PYTHONPATH=src python tools/knee_energy_split.py [--robot op3|nimbro] [--firmware ROW] [--steps 16] [--vx 0.05]
        [--desired walk_node|plan] [--drop a0,a1,a23,a4] [--static] [--latency 1] [--controllers high,ff]

The servo layer's winding model is U = R·I + kt·θ̇ (``models.scalar.firmware_1``), so U·I = I²R + kt·I·θ̇ exactly: E
= Joule + mechanical, nothing else. Per controller and knee: E, I²R, the mechanical work's positive (the motor
drives the joint) and negative (the joint drives the motor: regeneration, counted against E) parts, the I²R of the
current's fast part (I less its 40 ms moving mean: chatter), V_supply·|I| (a current sensor's reading times the
supply), U·I > 0 (the ``knees`` line: drawn from the supply, none returned), the motor torque kt·I [N·m] (mean, mean
|·|, RMS), knee − desired and goal − desired [rad], the rotor's torque along the desired motion (armature·q̈_des)
and the I²R that torque alone would cost; then per phase of that knee (stance: the plan's single support on its own
foot; swing: on the other; double: both) E, I²R, kt·I (mean, RMS, variance: the steady and the varying load), the
inverse dynamics' τ of (c), and in stance the ground reaction's moment about the knee axis (the foot's contact
forces about the knee joint's anchor: what the knee holds, less the shank's and foot's own weight and inertia).
``--drop``: (c) with α̂'s columns zeroed (a0 the torque term, a1 the q̇ term, a23 the friction terms, a4 the rotor-
inertia term); ``--static``: (c) given q̈ = 0 (no inertial feed-forward at all); ``--latency``: simulate_walk's bus
delay in control periods (default 1). The ``knees`` line sums both knees; the RESULT line gives (c) against (a) for
the knees and all joints. The robots: ``op3`` (the servo file's current-based law, or ``--firmware``, k_P 800 / 280)
and ``nimbro`` (``dynamics.nimbro_walk``, the MX-106 PWM law, k_P 53.125 / 18.6, α̂ per joint from the servo file:
``bench/nimbro_obstacle.py``'s walk)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import mujoco
import numpy as np

from servo_ff.bringup.op3_energy import step_end
from servo_ff.dynamics import walk_sim
from servo_ff.dynamics.feedforward import FeedForwardController
from servo_ff.dynamics.mujoco_servos import MujocoServos
from servo_ff.models import slots

sys.path.insert(0, str(Path(__file__).resolve().parent))
from op3_energy_terms import HOLD, known_firmware, known_speed, winding_current  # noqa: E402

CONTROL_DT = 0.008  # [s] simulate_walk's default control period
SMOOTH = 40  # [physics steps] the moving mean whose residual is the current's fast part
DROP = {"a0": (0,), "a1": (1,), "a23": (2, 3), "a4": (4,)}
PHASES = ("stance", "swing", "double")
SUMMED = ("E", "I2R", "mech+", "mech-", "fast_I2R", "Vbat|I|", "drawn", "arm_I2R", "stance_E", "swing_E", "double_E")


def robot_setup(robot: str) -> tuple[dict, tuple[str, str], float, walk_sim.WalkParams]:
    """(simulate_walk keyword arguments, knee joint names (left, right), kp_high, WalkParams) of ``robot``."""
    if robot == "op3":
        return {}, ("l_knee", "r_knee"), 800.0, walk_sim.WalkParams()
    from servo_ff.dynamics.nimbro_walk import (
        NIMBRO_FRAMES,
        NIMBRO_KNEES,
        NIMBRO_SERVOS,
        NIMBRO_URDF,
        nimbro_walk_params,
    )

    kw = dict(params=nimbro_walk_params(), urdf=NIMBRO_URDF, servos=NIMBRO_SERVOS, alpha=None, frames=NIMBRO_FRAMES)
    return kw, NIMBRO_KNEES, 850 / 128 * 8, nimbro_walk_params()


def grf_moment(sv: MujocoServos, joint: str, foot: int) -> float:
    """[N·m] the moment of ``foot``'s (body id) contact forces about ``joint``'s axis through its anchor."""
    m, d = sv.model, sv.data
    j = m.joint(joint).id
    anchor, axis, f6, moment = d.xanchor[j], d.xaxis[j], np.zeros(6), np.zeros(3)
    for k in range(d.ncon):
        con = d.contact[k]
        b1, b2 = m.geom_bodyid[con.geom1], m.geom_bodyid[con.geom2]
        if foot in (b1, b2):
            mujoco.mj_contactForce(m, d, k, f6)
            f = con.frame.reshape(3, 3).T @ f6[:3]  # on geom2's body, world frame
            moment += np.cross(con.pos - anchor, -f if b1 == foot else f)
    return float(axis @ moment)


def recorded_walk(
    controller: str,
    steps: int,
    vx: float,
    robot: str,
    firmware,
    desired: str,
    drop=(),
    static: bool = False,
    latency: int = 1,
):
    """One simulate_walk of ``steps`` + 2 steps (the tools' rule: the walk goes on past the window) with every
    physics step's knee U [V], I [A], θ [rad], θ̇ [rad/s], goal [rad], supply [V], armature [kg·m²] and ground
    reaction moment [N·m], all joints' U·I [W], and every feed-forward tick's knee τ [N·m] recorded; ``drop``: α̂
    columns zeroed in (c); ``static``: (c) given q̈ = 0. Returns (arrays, the plan, the run, knees, WalkParams)."""
    kw, knees, kp_high, params = robot_setup(robot)
    rec: dict[str, list] = {k: [] for k in ("t", "u", "i", "th", "dth", "goal", "vin", "arm", "grf", "uie")}
    ticks: list[np.ndarray] = []
    plans: list = []
    before, settle = MujocoServos.before_step, walk_sim.settled_plan
    init, tick = FeedForwardController.__init__, FeedForwardController.tick

    def record(self: MujocoServos) -> None:
        before(self)
        k = [self.joint_names.index(j) for j in knees]
        i = winding_current(self)
        rec["t"].append(float(self.data.time))
        for key, v in (("u", self.volts), ("i", i), ("goal", self.target), ("vin", self.p[:, slots.VIN])):
            rec[key].append(v[k].copy())
        rec["arm"].append(self.p[k, slots.ARM].copy())
        rec["th"].append(self.data.qpos[self.qadr[k]].copy())
        rec["dth"].append(self.data.qvel[self.dadr[k]].copy())
        rec["grf"].append([grf_moment(self, j, self.sim.feet[s]) for s, j in enumerate(knees)])
        rec["uie"].append(self.volts * i)

    def capture(*a, **k):
        out = settle(*a, **k)
        plans.append(out[0])
        return out

    def masked_init(self, *a, **k) -> None:
        init(self, *a, **k)
        for c in drop:
            self.alpha.alpha[:, c] = 0.0
        self._alpha4 = bool(np.any(self.alpha.alpha[:, 4] != 0.0))

    def record_tick(self, q, dq, ddq, **k):
        out = tick(self, q, dq, np.zeros_like(ddq) if static else ddq, **k)
        ticks.append(self.tau[[self.robot.joint_names.index(j) for j in knees]].copy())
        return out

    MujocoServos.before_step, walk_sim.settled_plan = record, capture
    FeedForwardController.__init__, FeedForwardController.tick = masked_init, record_tick
    try:
        run = walk_sim.simulate_walk(controller, steps + 2, vx=vx, kp_high=kp_high, firmware=firmware, desired=desired,
                                     latency=latency, **kw)  # fmt: skip
    finally:
        MujocoServos.before_step, walk_sim.settled_plan = before, settle
        FeedForwardController.__init__, FeedForwardController.tick = init, tick
    out = {k: np.array(v) for k, v in rec.items()}
    out["tau_ff"] = np.array(ticks)
    return out, plans[0], run, knees, params


def rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(x))))


def knee_figures(rec: dict, plan, params, k: int, joint: str, window: float, desired: str) -> dict[str, float]:
    """{figure: value} of knee ``k`` (0 left, 1 right) over [0, ``window``) s from the walk start (module docstring)."""
    dt = float(np.median(np.diff(rec["t"])))
    t = rec["t"] - HOLD
    sel = (t >= -1e-9) & (t < window - 1e-9)
    q, _, ddq = walk_sim.desired_motion(plan, t[sel], params.dt, desired)
    qd, ddqd = q[:, plan.joints.index(joint)], ddq[:, plan.joints.index(joint)]
    u, i, th, dth, goal, grf = (rec[x][sel, k] for x in ("u", "i", "th", "dth", "goal", "grf"))
    kt, r = np.linalg.lstsq(np.stack([dth, i], axis=1), u, rcond=None)[0]  # U = kt·θ̇ + R·I holds exactly
    tau, jq = kt * i, rec["arm"][sel, k] * ddqd
    mech = tau * dth
    own = np.interp(t[sel], plan.t, plan.c_left)
    own = own if k == 0 else 1.0 - own  # this knee's foot's share of the support
    phase = {"stance": own > 0.99, "swing": own < 0.01, "double": (own >= 0.01) & (own <= 0.99)}
    f = {
        "E": np.sum(u * i) * dt,
        "I2R": np.sum(i * i * r) * dt,
        "mech+": np.sum(np.maximum(mech, 0)) * dt,
        "mech-": np.sum(np.minimum(mech, 0)) * dt,
        "fast_I2R": np.sum((i - np.convolve(i, np.ones(SMOOTH) / SMOOTH, mode="same")) ** 2 * r) * dt,
        "Vbat|I|": np.sum(rec["vin"][sel, k] * np.abs(i)) * dt,
        "drawn": np.sum(np.maximum(u * i, 0.0)) * dt,
        "tau_mean": tau.mean(),
        "tau_abs": np.abs(tau).mean(),
        "tau_rms": rms(tau),
        "err_rms": rms(th - qd),
        "err_mean": np.mean(th - qd),
        "off_rms": rms(goal - qd),
        "arm_rms": rms(jq),
        "arm_I2R": np.sum((jq / kt) ** 2 * r) * dt,
    }
    tick = np.minimum(((t[sel] + HOLD) / CONTROL_DT + 1e-6).astype(int), max(len(rec["tau_ff"]) - 1, 0))
    for name, m in phase.items():
        f |= {
            f"{name}_share": m.mean(),
            f"{name}_E": np.sum((u * i)[m]) * dt,
            f"{name}_I2R": np.sum((i * i * r)[m]) * dt,
        }
        f |= {f"{name}_tau_mean": tau[m].mean(), f"{name}_tau_rms": rms(tau[m]), f"{name}_grf": grf[m].mean()}
        f |= {f"{name}_var": np.var(tau[m])}
        if len(rec["tau_ff"]):  # the inverse dynamics' τ of the tick in force at each physics step
            f |= {f"{name}_ff_mean": rec["tau_ff"][tick, k][m].mean(), f"{name}_ff_rms": rms(rec["tau_ff"][tick, k][m])}
    return {key: float(v) for key, v in f.items()}


def knee_lines(c: str, joint: str, f: dict[str, float]) -> list[str]:
    lines = [
        f"{c} {joint} | E {f['E']:.1f} J = I²R {f['I2R']:.1f} + mech+ {f['mech+']:.1f} {f['mech-']:+.1f} | fast I²R "
        f"{f['fast_I2R']:.1f} | Vbat·|I| {f['Vbat|I|']:.1f} J | kt·I mean {f['tau_mean']:+.3f}, |·| {f['tau_abs']:.3f},"
        f" RMS {f['tau_rms']:.3f} N·m | knee−des RMS {f['err_rms']:.4f}, mean {f['err_mean']:+.4f} rad | goal−des RMS "
        f"{f['off_rms']:.4f} rad | armature·q̈_des RMS {f['arm_rms']:.3f} N·m, its I²R {f['arm_I2R']:.1f} J"
    ]
    for p in PHASES:
        ff = f" | (c)'s ID τ mean {f[p + '_ff_mean']:+.3f}, RMS {f[p + '_ff_rms']:.3f}" if p + "_ff_mean" in f else ""
        grf = f" | ground reaction's moment about the knee, mean {f[p + '_grf']:+.3f} N·m" if p == "stance" else ""
        lines.append(
            f"   {p} ({f[p + '_share']:.0%}) | E {f[p + '_E']:.1f} J, I²R {f[p + '_I2R']:.1f} J | kt·I mean "
            f"{f[p + '_tau_mean']:+.3f}, RMS {f[p + '_tau_rms']:.3f} N·m, variance {f[p + '_var']:.2f} N²·m²{ff}{grf}"
        )
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--robot", default="op3", choices=("op3", "nimbro"))
    ap.add_argument("--firmware", default=None, help="firmware row for every servo (default: the servo file's)")
    ap.add_argument("--steps", type=int, default=16, help="whole steps from the walk start")
    ap.add_argument("--vx", type=float, default=0.05, help="m/s")
    ap.add_argument("--desired", default="walk_node", choices=walk_sim.DESIRED, help="walk_sim.desired_motion")
    ap.add_argument("--drop", default="", help="comma-separated α̂ columns to zero in (c): a0, a1, a23, a4")
    ap.add_argument("--static", action="store_true", help="(c) given q̈ = 0: no inertial feed-forward")
    ap.add_argument("--controllers", default="high,ff", help="comma-separated: high, low, ff")
    ap.add_argument("--latency", type=int, default=1, help="control periods of bus delay (simulate_walk's)")
    a = ap.parse_args()
    name = Path(sys.argv[0]).name
    bad = [d for d in filter(None, a.drop.split(",")) if d not in DROP]
    who = [c for c in a.controllers.split(",") if c not in walk_sim.CONTROLLERS]
    if bad or who or a.steps < 1:
        what = (
            f"--drop: unknown column {bad[0]!r}; one of {', '.join(DROP)}"
            if bad
            else f"--controllers: unknown controller {who[0]!r}; one of {', '.join(walk_sim.CONTROLLERS)}"
            if who
            else "--steps: at least 1"
        )
        print(f"{name}: {what}", file=sys.stderr)
        return 2
    if not (known_firmware(a.firmware) and known_speed(a.vx)):
        return 2
    drop = tuple(c for d in filter(None, a.drop.split(",")) for c in DROP[d])
    print(f"{a.robot}, firmware {a.firmware or 'the servo file'}, {a.steps} steps at {a.vx} m/s, desired {a.desired}; "
          f"(c) without {a.drop or 'nothing'}{', given q̈ = 0' if a.static else ''}")  # fmt: skip
    totals = {}
    for c in a.controllers.split(","):
        rec, plan, run, knees, params = recorded_walk(
            c, a.steps, a.vx, a.robot, a.firmware, a.desired, drop, a.static, a.latency
        )
        window = step_end(a.steps, params)
        if run.fell and run.fell_at < window:
            print(f"{c}: fell at {run.fell_at:.2f} s, within the {window:.2f} s window")
            continue
        figs = [knee_figures(rec, plan, params, k, j, window, a.desired) for k, j in enumerate(knees)]
        for j, f in zip(knees, figs):
            print("\n".join(knee_lines(c, j, f)))
        s = {key: sum(f[key] for f in figs) for key in SUMMED}
        t = rec["t"] - HOLD
        e_all = float(rec["uie"][(t >= -1e-9) & (t < window - 1e-9)].sum() * np.median(np.diff(rec["t"])))
        totals[c] = (s["E"], e_all)
        print(
            f"{c} knees | E {s['E']:.1f} J = I²R {s['I2R']:.1f} + mech+ {s['mech+']:.1f} {s['mech-']:+.1f} | stance "
            f"{s['stance_E']:.1f}, swing {s['swing_E']:.1f}, double {s['double_E']:.1f} J | fast I²R "
            f"{s['fast_I2R']:.1f} | Vbat·|I| {s['Vbat|I|']:.1f} J, U·I > 0 {s['drawn']:.1f} J | armature·q̈_des's I²R "
            f"{s['arm_I2R']:.1f} J | all "
            f"joints E {e_all:.1f} J"
        )
        print(
            f"{c} walk | swing foot touching in {run.swing_contact:.0%} of the single supports, soles slid "
            f"{run.slip:.3f} m, travel {run.travel:.3f} m (plan {run.planned:.3f}), trunk pitch mean "
            f"{np.nanmean(run.pitch):+.3f} rad"
        )
    for c, (k, e) in totals.items():
        if c != "high" and "high" in totals:
            ka, ea = totals["high"]
            print(f"RESULT ({c}) against (a): knees {k / ka - 1:+.1%}, all {e / ea - 1:+.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
