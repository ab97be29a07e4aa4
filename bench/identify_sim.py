"""Simulated identification wall time: `servo-ff up identify` (sim servos + feed-forward + ILC + α fit, ending
with α set on the feed-forward node) on the wall-clock sim (streamed trials) and with ``realtime:=false`` (the sim
owns /clock at real_time_factor 0, every node on use_sim_time, each ILC trial one JointTrajectory timed on the
sim's stamps), side by side in one run.

Both runs use config/identify.yaml (200 Hz, the 10 s Schwarz & Behnke-style reference, 1 s settling, 1 ms physics steps)
with the ILC stopping at 0.02 rad windowed error (Eq. 28); each is timed from `up` start to its exit (ILC, then the fit,
then α set on the feed-forward node). ``s/trial ILC`` is the median wall time between two ILC iterations (log
stamps: no start-up, no fit). The last line is ``RESULT speedup=<wall/fast> ...``.

    .venv/bin/python bench/identify_sim.py [--threshold 0.02] [--max-iterations 20]
"""

from __future__ import annotations

import argparse
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))


def run(realtime: bool, threshold: float, max_iterations: int, domain: int) -> dict:
    from servo_ff.bringup import python_env

    with tempfile.TemporaryDirectory(prefix="identify_sim_") as d:
        params = Path(d) / "bench.yaml"
        params.write_text(
            f"servo_ilc:\n  ros__parameters:\n    threshold: {threshold}\n    max_iterations: {max_iterations}\n"
        )
        env = python_env()
        env["ROS_DOMAIN_ID"] = str(domain)
        env.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        cmd = [sys.executable, "-m", "servo_ff", "up", "identify", "--params-file", str(params)]
        if not realtime:
            cmd += ["--arg", "realtime:=false"]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=d, env=env, capture_output=True, text=True, timeout=3600)
        wall = time.perf_counter() - t0
    out = proc.stdout + proc.stderr
    its = re.findall(r"\[(\d+\.\d+)\] \[[^\]]*servo_ilc\]: ILC iteration \d+: q_max = ([0-9.]+) rad", out)
    errors = [float(e) for _, e in its]
    stamps = [float(t) for t, _ in its]  # ROS log stamps: wall time (also under use_sim_time)
    per_trial = statistics.median(b - a for a, b in zip(stamps, stamps[1:])) if len(stamps) > 2 else math.nan
    alpha = re.search(r"α̂\(pendulum_1\) = (\[[^\]]*\])", out)
    return {
        "mode": "wall clock (streamed trials)" if realtime else "realtime:=false (sim time, trajectories)",
        "code": proc.returncode,
        "per_trial": per_trial,
        "wall": wall,
        "trials": len(errors),
        "final": errors[-1] if errors else float("nan"),
        "alpha": alpha.group(1) if alpha else "-",
        "set": "alpha.pendulum_1 set on servo_feedforward" in out,
        "tail": out.strip().splitlines()[-3:],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threshold", type=float, default=0.02)
    ap.add_argument("--max-iterations", type=int, default=20)
    a = ap.parse_args()
    domain = 1 + (os.getpid() * 7) % 100
    rows = [run(True, a.threshold, a.max_iterations, domain), run(False, a.threshold, a.max_iterations, domain)]
    print(
        f"identify bring-up (sim, config/identify.yaml, ILC to <= {a.threshold} rad), {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    print(
        f"{'mode':41s} {'exit':>4s} {'trials':>6s} {'final q_max':>11s} {'wall [s]':>9s} {'s/trial ILC':>11s}  α set  α̂"
    )
    for r in rows:
        print(
            f"{r['mode']:41s} {r['code']:4d} {r['trials']:6d} {r['final']:11.4f} {r['wall']:9.1f} "
            f"{r['per_trial']:11.2f}  {'yes' if r['set'] else 'no':5s}  {r['alpha']}"
        )
        if r["code"] != 0:
            print("   " + "\n   ".join(r["tail"]))
    wall, fast = rows[0]["wall"], rows[1]["wall"]
    print(
        f"RESULT speedup={wall / fast:.2f} wall_s={wall:.1f} fast_s={fast:.1f} "
        f"per_trial_speedup={rows[0]['per_trial'] / rows[1]['per_trial']:.2f} "
        f"trials={rows[0]['trials']},{rows[1]['trials']} exit={rows[0]['code']},{rows[1]['code']} "
        f"load={os.getloadavg()[0]:.2f}"
    )
    return 0 if all(r["code"] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
