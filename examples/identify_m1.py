"""Identify a servo's Coulomb-viscous model M1 from bam-style JSON bench logs.

No bench at hand, so the logs are made by the project's own simulator: an MX-64 with known parameters on bam's
pendulum bench (two masses, two P gains, quantised to 4096 counts/rev), written as bam JSON files into a
temporary folder, read back as a shared data set would be, and fitted by CMA-ES on the simulation MAE (Duclusaud
et al., Extended Friction Models §V). ``SERVO_FF_EXAMPLE_SHORT=1`` runs a small budget (test/test_examples.py).
Point ``read_logs`` at your own folder of bam logs to identify a real servo.

    python examples/identify_m1.py
"""

import os
import tempfile
from pathlib import Path

from servo_ff.identification.simulation_fit import fit_model
from servo_ff.identification.synthetic import bench_grid, log_filename, simulate_logs
from servo_ff.io.bam_logs import write_bam_json
from servo_ff.io.logs import read_logs
from servo_ff.models.presets import preset

short = bool(os.environ.get("SERVO_FF_EXAMPLE_SHORT"))
truth = preset("mx64", "m1")
grid = bench_grid(
    masses=(0.5, 1.5), lengths=(0.15,), kps=(4, 16), trajectories=("accelerated_oscillations", "lift_and_drop")
)
logs = simulate_logs(truth, grid, duration=4.0, noise=0.001, counts_per_rev=4096, seed=1)

with tempfile.TemporaryDirectory() as folder:
    for i, log in enumerate(logs):
        write_bam_json(log, Path(folder) / f"{log_filename(log, i)}.json")
    logs = read_logs([folder])
print(f"{len(logs)} logs of {logs[0].t[-1]:.1f} s each")

res = fit_model(logs, "m1", "mx64", max_evals=300 if short else 3000, progress=False, seed=0)
print(f"train MAE {res.train_mae * 1e3:.2f} mrad after {res.evaluations} simulations ({res.stop})")
print(f"{'parameter':>18} {'identified':>11} {'truth':>11}")
for key in ("kt", "R", "armature"):
    print(f"{key:>18} {getattr(res.params, key):11.5g} {getattr(truth, key):11.5g}")
for key in ("friction_base", "friction_viscous"):
    print(f"{key:>18} {res.params.friction[key]:11.5g} {truth.friction[key]:11.5g}")
