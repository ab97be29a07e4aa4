"""The transfer-function studies behind ``servo-ff tf`` and ``bench/tf_identification.py``: the MX-28 datasheet
model report (open-loop poles, closed loop, Bode, step study; seed papers on the MX-28 and MG995 models), its
tables and plots, and the headed time-series CSV they read."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..models.datasheet import MX28AT_DATASHEET


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def read_series(path: Path, dt: float | None, columns=("u", "y")) -> tuple[dict[str, np.ndarray], float]:
    """Columns of a headed CSV and the sample time (from ``t`` or ``dt``)."""
    if not path.is_file():
        raise FileNotFoundError(f"no such CSV file: {path}")
    try:
        data = np.genfromtxt(path, delimiter=",", names=True, dtype=float, encoding="utf-8")
    except Exception as e:  # malformed text
        raise ValueError(f"{path}: cannot parse as CSV with a header row ({e})") from None
    names = data.dtype.names or ()
    out = {}
    for c in columns:
        if c not in names:
            raise ValueError(f"{path}: missing column {c!r} (has {', '.join(names) or 'none'})")
        col = np.atleast_1d(data[c]).astype(float)
        if not np.all(np.isfinite(col)):
            raise ValueError(f"{path}: column {c!r} has empty or non-finite values")
        out[c] = col
    if "t" in names:
        t = np.atleast_1d(data["t"]).astype(float)
        d = np.diff(t)
        if t.size < 2 or not np.all(np.isfinite(t)) or np.any(d <= 0) or np.ptp(d) > 1e-6 * np.mean(d) + 1e-12:
            raise ValueError(f"{path}: column 't' must be uniformly increasing")
        dt = float(np.mean(d))
    elif dt is None:
        raise ValueError(f"{path}: no 't' column; pass --dt")
    return out, float(dt)


def _fmt_poly(c) -> str:
    return "[" + ", ".join(f"{x:.6g}" for x in np.asarray(c).reshape(-1)) + "]"


def mx28_report(P=32.0, I=0.0, D=0.0, Vs=12.0, inductance=None, J_l=0.0, dt=1e-3):
    """Everything ``tf mx28`` prints: open-loop poles, closed loop, Bode at 2^i rad/s, step study."""
    from ..models import step_study as _study
    from ..models import transfer_functions as tfm

    ds = MX28AT_DATASHEET if inductance is None else _with_L(MX28AT_DATASHEET, inductance)
    Kp, Ki, Kd = tfm.mx28_si_gains(P, I, D, Vs)
    open_loop = tfm.voltage_to_angle_tf(ds, J_l)
    closed = tfm.closed_loop_tf(ds, Kp, Ki, Kd, J_l)
    reduced = tfm.closed_loop_tf(ds, Kp, Ki, Kd, J_l, include_inductance=False)
    w, mag, ph = _study.bode_arrays(closed, tfm.VALIDATION_OMEGAS)
    steps = _study.step_study(
        ds, tfm.counts_to_rad(tfm.VALIDATION_STEPS_COUNTS), Kp=Kp, Ki=Ki, Kd=Kd, Vs=Vs, J_l=J_l, dt=dt, duration=0.5
    )
    return dict(
        ds=ds,
        gains=(Kp, Ki, Kd),
        open_loop=open_loop,
        closed=closed,
        reduced=reduced,
        poles=tfm.poles_sorted(open_loop),
        bode=(w, mag, ph),
        steps=steps,
    )


def _with_L(ds, L):
    from dataclasses import replace

    return replace(ds, L=float(L))


def print_step_table(steps, amplitudes_label) -> None:
    print(
        f"{'step':>8} {'model':>9} {'rise [ms]':>9} {'overshoot %':>11} {'settle [ms]':>11} {'final':>9} "
        f"{'sat [ms]':>8}"
    )
    for k, lab in enumerate(amplitudes_label):
        for name, met, sat in (
            ("linear", steps.metrics_linear[k], 0.0),
            ("nonlinear", steps.metrics_nonlinear[k], steps.saturated_time[k]),
        ):
            print(
                f"{lab:>8} {name:>9} {1e3 * met['rise_time']:9.1f} {met['overshoot']:11.2f} "
                f"{1e3 * met['settling_time']:11.1f} {met['final_value']:9.4f} {1e3 * sat:8.0f}"
            )


def plot_steps(steps, labels, path: Path, title: str, unit_scale=1.0, unit="rad") -> None:
    plt = _plt()
    fig, axes = plt.subplots(2, 1, figsize=(6, 5), sharex=True)
    for k, lab in enumerate(labels):
        (line,) = axes[0].plot(steps.t, steps.linear[k] * unit_scale, "--", lw=1)
        axes[0].plot(steps.t, steps.nonlinear[k] * unit_scale, color=line.get_color(), lw=1.3, label=lab)
        axes[1].plot(steps.t, steps.volts[k], color=line.get_color(), lw=1, label=lab)
    axes[0].set_ylabel(f"angle [{unit}]")
    axes[0].set_title(title + " (dashed: linear TF, solid: nonlinear)")
    axes[0].legend(fontsize=8)
    axes[1].set_ylabel("motor voltage [V]")
    axes[1].set_xlabel("time [s]")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=80)
    plt.close(fig)


def plot_bode(sys, path: Path, title: str, points=None) -> None:
    from ..models import step_study as _study

    plt = _plt()
    w = np.logspace(-0.5, 2.6, 300)
    _, mag, ph = _study.bode_arrays(sys, w)
    fig, axes = plt.subplots(2, 1, figsize=(6, 4.5), sharex=True)
    axes[0].semilogx(w, mag)
    axes[1].semilogx(w, ph)
    if points is not None:
        axes[0].semilogx(points[0], points[1], "o")
        axes[1].semilogx(points[0], points[2], "o")
    axes[0].set_ylabel("magnitude [dB]")
    axes[1].set_ylabel("phase [deg]")
    axes[1].set_xlabel("omega [rad/s]")
    axes[0].set_title(title)
    for a in axes:
        a.grid(True, which="both", lw=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=80)
    plt.close(fig)
