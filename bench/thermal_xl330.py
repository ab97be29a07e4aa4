"""The winding thermal model identified from the real XL330 recordings' Present Temperature.

The eight recordings of ../shared/data/xl330 were made one after the other (file names give the wall-clock start;
kp 100 then kp 400, 6 s each) and carry the servo's Present Temperature (integer °C, 27 → 34 °C over 93 s). The
current is not logged (the ``load`` column is Present PWM): it is estimated by the DC-motor law from the logged duty,
supply and speed, I = (duty·V − kt·θ̇)/R, with the XL330-M288 datasheet kt and R (the identify prior). R_th and C
are fitted (identification/thermal_fit.py) on the first six recordings in time and the model then predicts the last
two (held out) from the sixth's end; ambient = the first reading.

Run: python bench/thermal_xl330.py
Last line: RESULT R_th=<K/W> C=<J/K> heldout_rms_K=<K> constant_rms_K=<K>
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from _paths import no_data  # noqa: E402

from servo_ff.identification.datasheet_prior import datasheet_prior  # noqa: E402
from servo_ff.identification.thermal_fit import (  # noqa: E402
    ThermalSegment,
    fit_thermal,
    motor_current,
    simulate_segments,
)
from servo_ff.models.thermal import ThermalParams  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "xl330" / "raw"


def segment(path: Path, kt: float, R: float, dt: float = 0.05) -> ThermalSegment:
    """One recording on a ``dt`` grid: session start [s] from its file name, temperature and estimated current."""
    h, m, s = map(int, re.search(r"(\d+)h(\d+)m(\d+)", path.name).groups())
    e = json.loads(path.read_text())["entries"]
    t = np.array([x["timestamp"] for x in e])
    duty = np.array([x["load"] for x in e], float)
    duty = np.where(duty > 32767, duty - 65536, duty) / 885.0
    amps = motor_current(duty, np.array([x["input_volts"] for x in e]), np.array([x["speed"] for x in e]), kt, R)
    amps = np.where(np.array([x["torque_enable"] for x in e], bool), amps, 0.0)
    grid = np.arange(t[0], t[-1], dt)
    temp = np.interp(grid, t, np.array([x["temp"] for x in e], float))
    # RMS current over each grid cell keeps the heat (I² averaged, not I)
    i2 = np.interp(grid, t, amps**2)
    return ThermalSegment(3600 * h + 60 * m + s + float(t[0]), dt, np.round(temp), np.sqrt(i2))


def profile_rth(train, R: float, ambient: float) -> None:
    """Training RMS with R_th held at each of a few values and C refitted: how flat the fit is in R_th, against
    the 1 °C quantisation's own RMS (1/√12 = 0.29 K)."""
    from scipy.optimize import minimize_scalar

    logged = np.concatenate([s.temp for s in train])
    print("R_th profile (C refitted; training RMS [K]; quantisation alone 0.29 K):")
    for rth in (2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 1e4):

        def rms(log_c: float, rth: float = rth) -> float:
            sim = simulate_segments(train, R, ThermalParams(rth, float(np.exp(log_c))), ambient, ambient)
            return float(np.sqrt(np.mean((np.concatenate(sim) - logged) ** 2)))

        r = minimize_scalar(rms, bounds=(np.log(0.5), np.log(1e3)), method="bounded")
        c = float(np.exp(r.x))
        print(f"  R_th {rth:7g} K/W: C {c:5.2f} J/K, τ {rth * c:7.0f} s, RMS {r.fun:.3f} K")


def gaps(segs) -> None:
    """Temperature change across each gap between recordings (no logged current: the model can only cool)."""
    for a, b in zip(segs, segs[1:]):
        gap = b.start - (a.start + len(a.temp) * a.dt)
        if gap > 2.0:
            print(f"  gap {gap:.0f} s (no data): {a.temp[-1]:g} → {b.temp[0]:g} °C")


def main() -> int:
    files = sorted(DATA.glob("*.json"))
    if not files:
        return no_data(DATA, "no *.json recordings")
    prior = datasheet_prior("xl330")
    kt, R = prior.kt, prior.R
    segs = [segment(f, kt, R) for f in files]
    t0 = segs[0].start
    segs = [ThermalSegment(s.start - t0, s.dt, s.temp, s.amps) for s in segs]
    print(
        f"{len(segs)} recordings, {segs[-1].start + len(segs[-1].temp) * segs[-1].dt:.0f} s of session; current from "
        f"the datasheet kt {kt:.3f} N·m/A, R {R:.2f} Ω; "
        f"Present Temperature {segs[0].temp[0]:g} → {segs[-1].temp[-1]:g} °C"
    )
    for s, f in zip(segs, files):
        print(
            f"  {f.name}: t0 {s.start:5.1f} s, RMS current {np.sqrt(np.mean(s.amps**2)):.2f} A, "
            f"T {s.temp.min():g}..{s.temp.max():g} °C"
        )
    train, held = segs[:6], segs[6:]
    fit = fit_thermal(train, R)
    th = fit.params
    print(
        f"\nfit on the first 6: R_th {th.resistance:.2f} K/W, C {th.capacity:.2f} J/K (τ {th.time_constant:.0f} s), "
        f"ambient {fit.ambient:g} °C; training RMS {fit.rms:.2f} K (constant temperature: {fit.rms_constant:.2f} K)"
    )
    if th.resistance > 0.99e4 or th.capacity > 0.99e6:
        print("  R_th or C ended on its bound: these recordings do not identify it (too short to see the servo cool)")
    profile_rth(train, R, fit.ambient)
    gaps(segs)
    sim = simulate_segments(segs, R, th, fit.ambient, float(segs[0].temp[0]))
    pred = np.concatenate(sim[6:])
    logged = np.concatenate([s.temp for s in held])
    rms = float(np.sqrt(np.mean((pred - logged) ** 2)))
    const = float(np.sqrt(np.mean((logged - train[-1].temp[-1]) ** 2)))
    print(
        f"held out (last 2 recordings): predicted {pred[0]:.1f} → {pred[-1]:.1f} °C, logged {logged[0]:g} → "
        f"{logged[-1]:g} °C; RMS {rms:.2f} K (holding the last training reading: {const:.2f} K)"
    )
    print(f"RESULT R_th={th.resistance:.3f} C={th.capacity:.3f} heldout_rms_K={rms:.3f} constant_rms_K={const:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
