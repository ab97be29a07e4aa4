"""Why plain P at the XM430's factory gain rocks and falls under the current-based law (issue 21), ROS-free:
``dynamics.walk_sim``'s walk of (a), instrumented at every 1 ms physics step.

    PYTHONPATH=src python tools/op3_stiff_p.py [--steps 12] [--controller high] [--firmware xm430,xm430_position]
        [--latency 1] [--damping 0] [--vin 12] [--trace]

One line per firmware row (and latency): the fall time; the knees' and ankle pitches' motor torque spectrum from the
walk start to the fall (the peak above 1 Hz and the power shares below 2.5 Hz, the gait's, 2.5–10 Hz and above 10 Hz,
after the mean is removed); the feet's contact chatter (touch-downs per second of either foot, 1 N with a 0.5 N
hysteresis; the plan makes 2.1 a second) and the RMS of their normal force above 10 Hz; the share of physics steps in
which a leg servo's firmware output is clipped (current law: at the supply voltage's back-EMF bound or the Current
Limit; voltage law: at the PWM limit). Diagnostics (not model changes): ``--damping`` adds a viscous joint damping
[N·m·s/rad] to every servo joint (the PWM mode's back-EMF damping is kt²/R = 0.61), ``--vin`` another supply [V]
(the current law's voltage bound moves away). ``--trace``: every 60 ms from the hold to the fall, the sagittal state:
how far the CoM is ahead of the rearmost sole's heel, the trunk height, the left knee's, ankle pitch's and hip pitch's
error (goal − position) and motor torque, the feet's forces and the trunk pitch (``PYTHONPATH=src python
tools/op3_stiff_p.py --controller low --firmware xm430 --trace``: why (b) falls before it walks).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from op3_energy_terms import known_firmware  # noqa: E402

from servo_ff.dynamics.mujoco_servos import MujocoServos  # noqa: E402
from servo_ff.dynamics.walk_balance import trunk_pitch_roll  # noqa: E402
from servo_ff.dynamics.walk_sim import simulate_walk  # noqa: E402
from servo_ff.models import slots  # noqa: E402
from servo_ff.models.firmware import firmware_row  # noqa: E402

HOLD = 0.48  # [s] simulate_walk's default hold before the walk starts
TORQUE_JOINTS = ("l_knee", "r_knee", "l_ank_pitch", "r_ank_pitch")


def clipped(p: np.ndarray, tau_m: np.ndarray, volts: np.ndarray, dtheta: np.ndarray) -> np.ndarray:
    """Per servo: the firmware's output sits on a limit (current law: I = τ_m/kt at the voltage bound
    (±U_max − kt·θ̇)/R or at ±I_max; voltage law: |U| at vin·max_pwm)."""
    kt, r, u_max = p[:, slots.KT], p[:, slots.R], p[:, slots.VIN] * p[:, slots.MAXPWM]
    i = tau_m / kt
    hi = np.minimum((u_max - kt * dtheta) / r, p[:, slots.IMAX])
    lo = np.maximum((-u_max - kt * dtheta) / r, -p[:, slots.IMAX])
    current = (np.abs(i - hi) < 1e-9) | (np.abs(i - lo) < 1e-9)
    return np.where(p[:, slots.LAW] == 1.0, current, np.abs(volts) >= u_max - 1e-9)


def instrumented(
    controller: str, steps: int, firmware: str | None, latency: int, damping: float = 0.0, vin: float | None = None
) -> dict:
    """One ``simulate_walk`` with per-physics-step samples of motor torque, clipping and foot forces; ``damping``
    [N·m·s/rad] added to every servo joint, ``vin`` [V] the servos' supply (None: the row's)."""
    law = firmware if firmware is None or vin is None else firmware_row(firmware).with_(vin=vin)  # local, not a row
    rows: list[tuple[float, np.ndarray, np.ndarray, np.ndarray, np.ndarray, tuple[float, ...]]] = []
    names: list[str] = []
    before = MujocoServos.before_step

    def sampling(self: MujocoServos) -> None:
        if not rows:
            self.model.dof_damping[self.dadr] = self.p[:, slots.KV] + damping
        before(self)
        d = self.data
        w = d.qvel[self.dadr]
        rows.append((float(d.time), self.tau_m.copy(), clipped(self.p, self.tau_m, self.volts, w),
                     self.foot_forces()[:2].copy(), self.goal - d.qpos[self.qadr], sagittal(self)))  # fmt: skip
        names[:] = list(self.joint_names)

    MujocoServos.before_step = sampling
    try:
        run = simulate_walk(controller, steps, firmware=law, latency=latency)
    finally:
        MujocoServos.before_step = before
    t = np.array([r[0] for r in rows]) - HOLD
    end = run.fell_at if run.fell else t[-1]
    sel = (t >= 0.0) & (t <= end)
    return {
        "run": run,
        "t": t[sel],
        "tau": np.array([r[1] for r in rows])[sel],
        "clip": np.array([r[2] for r in rows])[sel],
        "force": np.array([r[3] for r in rows])[sel],
        "tau_all": np.array([r[1] for r in rows]),
        "force_all": np.array([r[3] for r in rows]),
        "joints": names,
        "error": np.array([r[4] for r in rows]),
        "sagittal": np.array([r[5] for r in rows]),
        "t_all": t,
    }


def sagittal(sv: MujocoServos) -> tuple[float, float, float]:
    """(CoM ahead of the rearmost sole's heel [m], trunk height [m], trunk pitch [rad, forward positive])."""
    m, d = sv.model, sv.data
    trunk = sv.sim.root_body
    soles = [g for g in range(m.ngeom) if m.geom_bodyid[g] in sv.sim.feet[:2] and m.geom_contype[g]]
    heel = min(d.geom_xpos[g][0] - m.geom_size[g][0] for g in soles)
    w, x, y, z = d.xquat[trunk]
    return float(d.subtree_com[trunk][0] - heel), float(d.xpos[trunk][2]), trunk_pitch_roll((x, y, z, w))[0]


def print_trace(s: dict, every: float = 0.06) -> None:
    """The sagittal trace of :func:`instrumented`'s run from the hold to the fall (``--trace``)."""
    names = s["joints"]
    cols = [names.index(j) for j in ("l_knee", "l_ank_pitch", "l_hip_pitch")]
    t, run = s["t_all"], s["run"]
    end = run.fell_at if run.fell else t[-1]
    print("t [s from the walk start] | CoM ahead of the heel [m] | trunk z [m] | error knee / ankle pitch / hip pitch"
          " [rad] | τ_m [N·m] | feet [N] | pitch [rad]")  # fmt: skip
    for k in np.flatnonzero(np.isclose(np.mod(t + 1e-9, every), 0.0, atol=5e-4) & (t <= end + 1e-9)):
        ahead, z, pitch = s["sagittal"][k]
        e, tau = s["error"][k, cols], s["tau_all"][k, cols]
        print(f"{t[k]:+.2f} | {ahead:+.4f} | {z:.3f} | {' / '.join(f'{v:+.3f}' for v in e)} | "
              f"{' / '.join(f'{v:+.2f}' for v in tau)} | {s['force_all'][k][0]:.1f}, {s['force_all'][k][1]:.1f} | "
              f"{pitch:+.3f}")  # fmt: skip


def spectrum(x: np.ndarray, dt: float) -> tuple[float, float, float, float]:
    """(peak frequency above 1 Hz [Hz], power shares below 2.5 Hz, 2.5–10 Hz, above 10 Hz) of ``x`` (samples × n),
    each column's mean removed, powers summed over the columns."""
    x = x - x.mean(axis=0)
    f = np.fft.rfftfreq(len(x), dt)
    pw = (np.abs(np.fft.rfft(x * np.hanning(len(x))[:, None], axis=0)) ** 2).sum(axis=1)
    total = pw[f > 0].sum()
    above = f > 1.0
    return (
        float(f[above][np.argmax(pw[above])]),
        float(pw[(f > 0) & (f < 2.5)].sum() / total),
        float(pw[(f >= 2.5) & (f < 10)].sum() / total),
        float(pw[f >= 10].sum() / total),
    )


def touchdowns(force: np.ndarray, on: float = 1.0, off: float = 0.5) -> int:
    """Touch-downs of each foot (columns) with hysteresis: above ``on`` [N] after being below ``off``."""
    n = 0
    for col in force.T:
        down = col[0] > on
        for v in col[1:]:
            if not down and v > on:
                down, n = True, n + 1
            elif down and v < off:
                down = False
    return n


def high_pass_rms(x: np.ndarray, dt: float, cut: float = 10.0) -> float:
    """RMS of ``x`` (samples × n) above ``cut`` [Hz] (FFT mask), over the columns."""
    f = np.fft.rfftfreq(len(x), dt)
    spec = np.fft.rfft(x - x.mean(axis=0), axis=0)
    spec[f < cut] = 0.0
    return float(np.sqrt(np.mean(np.fft.irfft(spec, n=len(x), axis=0) ** 2)))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--controller", default="high", help="high, low or ff")
    ap.add_argument("--firmware", default="xm430,xm430_position", help="firmware rows, comma-separated")
    ap.add_argument("--latency", default="1", help="goal latencies [periods], comma-separated")
    ap.add_argument("--damping", type=float, default=0.0, help="extra joint damping [N·m·s/rad] (diagnostic)")
    ap.add_argument("--vin", type=float, default=None, help="servo supply [V] (diagnostic; default the row's)")
    ap.add_argument("--trace", action="store_true", help="the sagittal trace of each run, to its fall")
    a = ap.parse_args()
    if not all(known_firmware(fw) for fw in a.firmware.split(",")):
        return 2
    print(
        "firmware, latency | fell [s] | travel / planned [m] | torque peak [Hz] | <2.5 / 2.5-10 / >10 Hz | "
        "touch-downs/s | foot force >10 Hz RMS [N] | clipped: legs / knees+ankle pitch"
    )
    for fw in a.firmware.split(","):
        for lat in map(int, a.latency.split(",")):
            s = instrumented(a.controller, a.steps, fw, lat, a.damping, a.vin)
            if a.trace:
                print_trace(s)
            dt = float(np.median(np.diff(s["t"])))
            cols = [s["joints"].index(j) for j in TORQUE_JOINTS]
            legs = [i for i, j in enumerate(s["joints"]) if any(k in j for k in ("hip", "knee", "ank"))]
            peak, low, mid, high = spectrum(s["tau"][:, cols], dt)
            dur = s["t"][-1] - s["t"][0]
            r = s["run"]
            print(
                f"{fw}, {lat} | {r.fell_at:.2f} | {r.travel:.3f} / {r.planned:.3f} | {peak:.2f} | "
                f"{low:.2f} / {mid:.2f} / {high:.2f} | {touchdowns(s['force']) / dur:.2f} | "
                f"{high_pass_rms(s['force'], dt):.2f} | {s['clip'][:, legs].mean():.3f} / "
                f"{s['clip'][:, cols].mean():.3f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
