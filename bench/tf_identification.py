"""Benchmark for Maximo et al., Santana et al. and Wada et al.: the MX-28AT datasheet model and SRIVC identification.

    /work/venv/bin/python bench/tf_identification.py [--runs 100] [--img docs/img]

1. MX-28AT (Maximo et al. (Position Servo) Table 1): open-loop poles of Eq. 28, closed-loop step responses (Eq. 30
linear vs
   nonlinear with ±12 V saturation and 4096 counts/rev) for 95/195/395 counts.
2. MG995 (Santana et al. (MG995 Servomotor)): Table 3 from the identified Eq. 5 and the 5 V nonlinear steps.
3. SRIVC (Wada et al.) on the simulated 3rd-order D-P servo of Wada et al. §IV-A, output noise at 10 dB SNR, ``--runs``
   Monte Carlo runs: bias and spread of SRIVC against plain least squares (equation error, same SVF, same
   data), and how often YIC/R²_T picks the true structure among PID, PI, PD, D-P.
Last line: RESULT mx28_open_loop_poles=<p1>,<p2>,<p3> srivc_structure_hit_rate=<float>
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # tiny matrices: BLAS threads only contend (see report)
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections import Counter  # noqa: E402
from dataclasses import replace  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from tqdm import tqdm  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))  # this checkout's servo_ff, not the editable install's


from servo_ff.identification.controller_structure import select_controller_structure  # noqa: E402
from servo_ff.identification.hobby_servo import MG995_IDENTIFIED_DEN, physical_parameters_from_tf  # noqa: E402
from servo_ff.identification.prbs import prbs  # noqa: E402
from servo_ff.identification.srivc import srivc  # noqa: E402
from servo_ff.identification.tf_fit import fit_tf_ls, simulate_ct  # noqa: E402
from servo_ff.models import transfer_functions as tfm  # noqa: E402
from servo_ff.models.datasheet import MX28AT_DATASHEET  # noqa: E402
from servo_ff.models.servo_nonlinear import cylinder_load_inertia, simulate_servo  # noqa: E402
from servo_ff.models.step_study import step_study  # noqa: E402
from servo_ff.workflows.tf_study import mx28_report, plot_bode, plot_steps, print_step_table  # noqa: E402

TRUE_NUM = np.array([1.409e4])  # Wada et al. §IV-A identified D-P servo (HSR-5990GT + load)
TRUE_DEN = np.array([1.0, 37.46, 1150.0, 1.399e4])
DT = 0.004  # 003: 4 ms sampling, 8 s records
NAMES = ["a2", "a1", "a0", "b0"]


def reference_steps(n: int = 2000, dt: float = DT) -> np.ndarray:
    """Wada et al. Fig. 5: 0.8 s steps of 0.15 and 0.3 rad."""
    u = np.zeros(n)
    seg = int(round(0.8 / dt))
    for k, lev in enumerate([0, 0.15, 0, 0.3, 0, 0.15, 0, 0.3, 0, 0.15, 0]):
        u[k * seg : (k + 1) * seg] = lev
    return u


def section_mx28(img: Path | None) -> np.ndarray:
    print("== MX-28AT datasheet model (Maximo et al., Table 1, P = 32 -> K_p^c = 4, Vs = 12 V) ==")
    r = mx28_report()
    poles = r["poles"]
    print(
        "open-loop poles U->theta (Eq. 28), Table 1 values (L = 2.03 mH) [rad/s]: "
        + ", ".join(f"{p.real:.4g}" for p in poles)
    )
    p_alt = tfm.poles_sorted(tfm.voltage_to_angle_tf(replace(MX28AT_DATASHEET, L=2.03e-4)))
    print(
        "  with L = 0.203 mH (matches the paper's stated 0, 161, 4.01e4):  " + ", ".join(f"{p.real:.4g}" for p in p_alt)
    )
    print("  paper states: 0, 161, 4.01e4 (magnitudes)")
    cl = r["closed"]
    print("closed loop (Eq. 30) poles: " + ", ".join(f"{p.real:.4g}" for p in tfm.poles_sorted(cl)))
    w, mag, ph = r["bode"]
    print("| omega [rad/s] | " + " | ".join(f"{x:.0f}" for x in w) + " |")
    print("| |G| [dB]      | " + " | ".join(f"{x:.2f}" for x in mag) + " |")
    print("| phase [deg]   | " + " | ".join(f"{x:.1f}" for x in ph) + " |")
    labels = [f"{c} cnt" for c in tfm.VALIDATION_STEPS_COUNTS]
    print_step_table(r["steps"], labels)
    if img:
        plot_steps(
            r["steps"],
            labels,
            img / "tf_mx28_steps.png",
            "MX-28AT steps, Vs = 12 V",
            unit_scale=4096 / (2 * math.pi),
            unit="counts",
        )
        plot_bode(cl, img / "tf_mx28_bode.png", "MX-28AT closed loop (Eq. 30), P = 32", r["bode"])
    return poles


def section_mg995(img: Path | None) -> None:
    print("\n== MG995 (Santana et al.): Table 3 from the identified Eq. 5, 5 V saturation ==")
    hm = physical_parameters_from_tf(MG995_IDENTIFIED_DEN)
    ds = hm.datasheet
    print(
        f"N={ds.N:.4f} Kt={ds.Kt:.5g} Kw={ds.Kw:.6g} eta={ds.eta:.5f} bm={ds.bm:.5g} Jm={ds.Jm:.5g} "
        f"KP={hm.KP:.4f}  (paper: 275.6923, 5.8857e-3, 169.9029, 0.81156, 2.49797e-7, 6.3173e-7, 16.6742)"
    )
    # load validation (Santana et al. §5.7): simulated PRBS experiment with the cylinder load, nonlinear (5 V), SRIVC
    # n=2/m=0,
    # against the calculated Eq. 23 with J_eq = J_cyl + m d² + J_m η N²
    J_l = cylinder_load_inertia(0.1, 0.022, 0.05)
    calc = tfm.closed_loop_tf(ds, hm.KP, J_l=J_l, include_inductance=False)
    dt = 0.002
    u = prbs(6000, dt, amplitude=math.radians(10), clock=0.07, seed=11)
    sim = simulate_servo(ds, u, dt, Kp=hm.KP, Vs=5.0, J_l=J_l, counts_per_rev=None, include_inductance=False)
    y = sim.theta[0] + math.radians(0.2) * np.random.default_rng(12).standard_normal(u.size)
    ident = srivc(u, y, dt, 2, 0)
    cden = calc.den[0][0] / calc.den[0][0][0]
    print(
        f"load J_l = {J_l:.4g} kg m^2: calculated Eq. 23 den {np.round(cden, 3).tolist()}, identified from a "
        f"simulated 10 deg PRBS (5 V saturation {100 * sim.saturated.mean():.0f} % of samples, 0.2 deg noise) "
        f"den {np.round(ident.den, 3).tolist()}, R2_T {ident.r2t:.4f}"
    )
    amps = np.radians([10.0, 20.0, 40.0, 60.0])
    st = step_study(ds, amps, Kp=hm.KP, Vs=5.0, dt=1e-3, duration=1.0, counts_per_rev=None, include_inductance=False)
    labels = [f"{a:.0f} deg" for a in np.degrees(amps)]
    print_step_table(st, labels)
    if img:
        plot_steps(
            st, labels, img / "tf_mg995_steps.png", "MG995 steps, 5 V saturation", unit_scale=180 / math.pi, unit="deg"
        )


def section_srivc(runs: int, img: Path | None, seed: int = 2026) -> float:
    print(f"\n== SRIVC vs least squares, 3rd-order D-P servo (Wada et al. §IV-A), 10 dB SNR, {runs} runs ==")
    rng = np.random.default_rng(seed)
    u = reference_steps()
    x = simulate_ct(TRUE_NUM, TRUE_DEN, u, DT)
    sd = np.std(x) / math.sqrt(10.0)  # SNR = 10 log10(var x / var w) = 10 dB
    truth = np.r_[TRUE_DEN[1:], TRUE_NUM]
    sr, ls, picks = [], [], Counter()
    ls_unstable = 0
    t0 = time.perf_counter()
    for _ in tqdm(range(runs), desc="Monte Carlo", leave=False):
        y = x + sd * rng.standard_normal(x.size)
        sr.append(srivc(u, y, DT, 3, 0).theta)
        mod_ls = fit_tf_ls(u, y, DT, 3, 0, require_stable=False)
        ls_unstable += int(np.any(mod_ls.poles().real >= 0))
        ls.append(mod_ls.theta)
        picks[select_controller_structure(u, y, DT).structure] += 1
    elapsed = time.perf_counter() - t0
    sr, ls = np.array(sr), np.array(ls)
    print(
        "| param | true | SRIVC mean | SRIVC bias % | SRIVC std | SRIVC bias/SE | LS mean | LS bias % | LS std "
        "| LS bias/SE |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for k, name in enumerate(NAMES):
        row = [name, f"{truth[k]:.5g}"]
        for est in (sr, ls):
            mean, std = est[:, k].mean(), est[:, k].std(ddof=1)
            bias = mean - truth[k]
            row += [
                f"{mean:.5g}",
                f"{100 * bias / truth[k]:+.2f}",
                f"{std:.4g}",
                f"{bias / (std / math.sqrt(runs)):+.1f}",
            ]
        print("| " + " | ".join(row) + " |")
    t_sr = np.abs(sr.mean(0) - truth) / (sr.std(0, ddof=1) / math.sqrt(runs))
    t_ls = np.abs(ls.mean(0) - truth) / (ls.std(0, ddof=1) / math.sqrt(runs))
    print(
        f"SRIVC unbiased (|bias| < 3 SE for all parameters): {bool(np.all(t_sr < 3))}; "
        f"LS biased parameters (|bias| > 3 SE): {[n for n, t in zip(NAMES, t_ls) if t > 3]}; "
        f"LS unstable fits: {ls_unstable}/{runs}"
    )
    hit = picks["D-P"] / runs
    print(
        "structure picked by YIC/R2_T: "
        + ", ".join(f"{k} {v}" for k, v in picks.most_common())
        + f"  -> hit rate {hit:.2f} (true: D-P, n=3 m=0)"
    )
    print(f"Monte Carlo time {elapsed:.1f} s ({runs} runs x (SRIVC + LS + 4 structures))")
    if img:
        from servo_ff.workflows.tf_study import _plt

        plt = _plt()
        fig, axes = plt.subplots(1, 2, figsize=(7, 3))
        for ax, k in zip(axes, (0, 2)):
            ax.hist(ls[:, k], bins=20, alpha=0.6, label="LS (equation error)")
            ax.hist(sr[:, k], bins=20, alpha=0.6, label="SRIVC")
            ax.axvline(truth[k], color="k", lw=1.5, label="true")
            ax.set_xlabel(NAMES[k])
        axes[0].legend(fontsize=7)
        fig.suptitle(f"{runs} runs, 10 dB SNR: SRIVC vs LS", fontsize=10)
        fig.tight_layout()
        fig.savefig(img / "tf_srivc_mc.png", dpi=80)
        plt.close(fig)
    return hit


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--img", default="docs/img", help="PNG directory ('' to skip plots)")
    args = ap.parse_args()
    img = Path(args.img) if args.img else None
    if img:
        img.mkdir(parents=True, exist_ok=True)
    poles = section_mx28(img)
    section_mg995(img)
    hit = section_srivc(args.runs, img)
    print(f"RESULT mx28_open_loop_poles={','.join(f'{p.real:.4g}' for p in poles)} srivc_structure_hit_rate={hit:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
