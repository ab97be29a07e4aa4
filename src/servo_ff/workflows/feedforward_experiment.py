"""The Schwarz & Behnke (Compliant Robot Behavior) §5.2 comparison, packaged: run (a)/(b)/(c), tabulate tracking and
energy, plot the knee (Fig. 5), and time the feed-forward tick."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pinocchio as pin

from ..dynamics.alpha import AlphaTable
from ..dynamics.feedforward import FeedForwardController
from ..dynamics.gait import stepping_in_place
from ..dynamics.inverse_dynamics import double_support_torques, set_gravity, support_foot_torques
from ..dynamics.mujoco_humanoid import (
    CONTROLLERS,
    GAIN_RATIO,
    HUMANOID_URDF,
    KP_HIGH,
    SimResult,
    default_alpha,
    simulate,
)
from ..dynamics.robot import Robot, load_robot
from ..models.params import ActuatorParams
from ..models.presets import preset

KNEE = "l_knee"  # 002 reports the left knee


def run_experiment(
    n_steps: int = 40,
    kp_high: float = KP_HIGH,
    progress: bool = False,
    controllers=("high", "low", "ff"),
    alpha: AlphaTable | None = None,
) -> dict[str, SimResult]:
    robot = load_robot(HUMANOID_URDF)
    return {
        c: simulate(c, n_steps=n_steps, kp_high=kp_high, robot=robot, progress=progress, alpha=alpha)
        for c in controllers
    }


def alpha_from_ilc(
    robot: Robot,
    params: ActuatorParams,
    kp: float,
    joint: str = "l_hip_pitch",
    dt: float = 0.005,
    gain: float = 0.8,
    threshold: float = 0.02,
    progress: bool = False,
) -> tuple[AlphaTable, dict]:
    """α̂ by Schwarz & Behnke's own procedure (§5.1) on a simulated single-joint bench: the leg below ``joint`` hangs
    from a fixed trunk as a pendulum (its mass and centre-of-mass distance from the URDF), driven by the simulated
    servo ``params`` at register gain ``kp``; Arimoto ILC (Eq. 20–21, λ = ``gain``, learning shift = the
    command-to-reaction lag of a plain P run, Schwarz & Behnke §5.1) learns the command for the Schwarz &
    Behnke-style reference trajectory, then least squares (Eq. 22–27, with α̂4) fits α̂ with q̇_s, δ fixed to the
    preset's Stribeck shape (Schwarz & Behnke fix them by hand). ILC stops at Schwarz & Behnke's criterion,
    windowed error ≤ ``threshold`` (0.02 rad, D = 25 ms). Every joint gets these α̂."""
    import pinocchio as pin

    from ..identification.alpha_data import data_from_ilc, fit_alpha_data, pendulum_torque
    from ..identification.alpha_fit import command_reaction_lag
    from ..identification.ilc import run_ilc
    from ..identification.pendulum import simulated_servo
    from ..models.stepper import PendulumLoad
    from ..trajectories import schwarz_behnke_reference

    m = robot.fixed
    d = m.createData()
    jid = m.getJointId(joint)
    pin.forwardKinematics(m, d, robot.configuration(np.zeros(robot.n_joints)))
    sub = list(m.subtrees[jid])
    mass = sum(m.inertias[b].mass for b in sub)
    com = sum(m.inertias[b].mass * d.oMi[b].act(m.inertias[b].lever) for b in sub) / mass
    length = float(np.linalg.norm(com - d.oMi[jid].translation))
    servo = params.with_(firmware=params.firmware.with_(kp=kp))
    load = PendulumLoad(mass=mass, length=length)
    ref = schwarz_behnke_reference(dt)
    execute = simulated_servo(servo, load, dt, theta0=float(ref.q[0]))
    lag = command_reaction_lag(ref.q, execute(ref.q), dt)  # closed-loop lag under P control: ILC's shift
    ilc = run_ilc(
        execute,
        ref.q,
        dt,
        gain=gain,
        delay=lag,
        threshold=threshold,
        max_iterations=60,
        filter_hz=10.0,
        progress=progress,
    )
    dq_s = params.friction.get("dtheta_stribeck", 0.1)
    delta = params.friction.get("alpha", 1.0)
    data = data_from_ilc(
        ilc.commands, ilc.measured, ilc.errors, params.firmware.vin, kp, dt, iteration=len(ilc.commands) - 1
    )
    fit = fit_alpha_data(data, pendulum_torque(mass, length), with_inertia=True, dq_s=dq_s, delta=delta)
    J = robot.n_joints
    table = AlphaTable(robot.joint_names, np.tile(fit.alpha, (J, 1)), np.full(J, fit.dq_s), np.full(J, fit.delta))
    info = {
        "joint": joint,
        "mass": mass,
        "length": length,
        "ilc_shift": lag,
        "ilc_iterations": int(len(ilc.errors) - 1),
        "ilc_error": float(ilc.errors[-1]),
        "fit": fit.as_dict(),
    }
    return table, info


def summary_rows(results: dict[str, SimResult]) -> list[dict]:
    """One row per controller: gain, steps done, tracking RMS/max (all joints, knee), energy (all, knee)."""
    rows = []
    for c, r in results.items():
        k = r.joint_names.index(KNEE)
        rows.append(
            {
                "controller": CONTROLLERS[c],
                "key": c,
                "fell": r.fell,
                "t_end": float(r.t[-1]) if len(r.t) else 0.0,
                "rms": r.rms(),
                "max": r.max_error(),
                "knee_rms": r.rms([k]),
                "knee_max": r.max_error([k]),
                "energy": float(r.energy.sum()),
                "knee_energy": float(r.energy[k]),
                "energy_drawn": float(r.energy_drawn.sum()),
                "clamps": int(r.clamp_counts.sum()),
            }
        )
    return rows


def format_table(results: dict[str, SimResult], kp_high: float) -> str:
    head = (
        "| controller | k_P | stood all steps | RMS [rad] | max [rad] | knee RMS [rad] | knee max [rad] | "
        "E all [J] | E knee [J] | E drawn all [J] | clamps |"
    )
    lines = [head, "|" + "---|" * 11]
    for row in summary_rows(results):
        kp = kp_high if row["key"] == "high" else GAIN_RATIO * kp_high
        stood = "no, fell at %.1f s" % row["t_end"] if row["fell"] else "yes"
        lines.append(
            f"| {row['controller']} | {kp:.2f} | {stood} | {row['rms']:.4f} | {row['max']:.4f} | "
            f"{row['knee_rms']:.4f} | {row['knee_max']:.4f} | {row['energy']:.0f} | "
            f"{row['knee_energy']:.0f} | {row['energy_drawn']:.0f} | {row['clamps']} |"
        )
    return "\n".join(lines)


def plot_knee(results: dict[str, SimResult], path: str | Path, window: tuple[float, float] = (0.0, 16.0)) -> Path:
    """Left-knee target vs measured for (a), (b), (c) — like Schwarz & Behnke Fig. 5 (leg contracts with positive
    angle)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(len(results), 1, figsize=(8, 2.3 * len(results)), sharex=True)
    for ax, (c, r) in zip(np.atleast_1d(axes), results.items()):
        k = r.joint_names.index(KNEE)
        m = (r.t >= window[0]) & (r.t <= window[1])
        ax.plot(r.t[m], r.q_des[m, k], "k--", lw=1.2, label="target")
        ax.plot(r.t[m], r.q[m, k], "C0", lw=1.2, label="measured")
        if c == "ff":
            ax.plot(r.t[m], r.goal[m, k], "C3:", lw=1.0, label="goal sent (Eq. 19)")
        title = CONTROLLERS[c] + (f" — fell at {r.t[-1]:.1f} s" if r.fell else "")
        if not m.any():
            title += " (nothing in the plotted window)"
        ax.set_title(title, fontsize=9)
        ax.set_ylabel("left knee [rad]")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="upper right")
    np.atleast_1d(axes)[-1].set_xlabel("time [s]")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def pinocchio_calls(model, data, q_full, v, a, frames) -> None:
    """The pinocchio calls of one double-support tick and nothing else (the anchor of the tick's timing):
    joint Jacobians once, then per support foot its Jacobian and placement, forward kinematics to second order,
    its acceleration and the RNEA."""
    pin.computeJointJacobians(model, data, q_full)
    for f in frames:
        pin.getFrameJacobian(model, data, f, pin.ReferenceFrame.LOCAL)
        pin.updateFramePlacement(model, data, f)
        pin.forwardKinematics(model, data, q_full, v, a)
        pin.getFrameAcceleration(model, data, f, pin.ReferenceFrame.LOCAL)
        pin.rnea(model, data, q_full, v, a)


def time_tick(n: int = 3000, c_left: float = 0.5) -> dict[str, float]:
    """Wall time [µs] of one 20-joint tick (best of three medians over ``n`` ticks): inverse dynamics alone,
    ID + Eq. 19 (the whole :meth:`FeedForwardController.tick`, incl. input checks and clamping). ``c_left`` = 0.5 is
    the worst case (double support: two support-foot solutions). ``pin_double_us``: the bare pinocchio calls of a
    double-support tick (:func:`pinocchio_calls`), timed call by call alternating with the tick
    (``tick_over_pinocchio`` = the median of the per-call ratios tick ÷ pinocchio: both see the same load)."""
    robot = load_robot(HUMANOID_URDF)
    ff = FeedForwardController(robot, default_alpha(robot, preset("mx106", "m4")), GAIN_RATIO * KP_HIGH)
    g = stepping_in_place(robot.joint_names, n_steps=4, dt=0.008)  # realistic states (inside the limits)
    idx = np.resize(np.arange(len(g.t)), n)
    qs, dqs, ddqs = g.q[idx], g.dq[idx], g.ddq[idx]
    lf, rf = robot.frame_id("l_sole"), robot.frame_id("r_sole")
    model, data = ff.model, ff.data
    set_gravity(model, ff.gravity)

    def bench(fn) -> float:  # best of 3 medians: the machine is shared, other load only adds time
        best = np.inf
        for _ in range(3):
            ts = np.empty(n)
            for i in range(n):
                t0 = time.perf_counter()
                fn(i)
                ts[i] = time.perf_counter() - t0
            best = min(best, float(np.median(ts)))
        return best * 1e6

    quat = (0.01, -0.02, 0.0, 1.0)
    out = {
        "id_single_us": bench(lambda i: support_foot_torques(model, data, qs[i], dqs[i], ddqs[i], lf)),
        "id_double_us": bench(lambda i: double_support_torques(model, data, qs[i], dqs[i], ddqs[i], lf, rf, c_left)),
        "tick_single_us": bench(lambda i: ff.tick(qs[i], dqs[i], ddqs[i], imu_quat=quat, u_bat=14.8, c_left=1.0)),
        "tick_double_us": bench(lambda i: ff.tick(qs[i], dqs[i], ddqs[i], imu_quat=quat, u_bat=14.8, c_left=c_left)),
    }
    # anchor: the same pinocchio calls with their inputs ready, alternating call by call with the whole tick
    q_full = [robot.configuration(q, floating=True) for q in qs]
    vs = np.concatenate([np.zeros((n, 6)), dqs], axis=1)
    accs = np.concatenate([np.zeros((n, 6)), ddqs], axis=1)
    t_pin, t_tick = np.empty(n), np.empty(n)
    for i in range(n):
        t0 = time.perf_counter()
        pinocchio_calls(model, data, q_full[i], vs[i], accs[i], (lf, rf))
        t1 = time.perf_counter()
        ff.tick(qs[i], dqs[i], ddqs[i], imu_quat=quat, u_bat=14.8, c_left=c_left)
        t2 = time.perf_counter()
        t_pin[i], t_tick[i] = t1 - t0, t2 - t1
    out["pin_double_us"] = float(np.median(t_pin)) * 1e6
    out["tick_double_alt_us"] = float(np.median(t_tick)) * 1e6
    out["tick_over_pinocchio"] = float(np.median(t_tick / t_pin))
    out["tick_over_pinocchio_p10"] = float(np.percentile(t_tick, 10) / np.percentile(t_pin, 10))  # least preempted
    return out
