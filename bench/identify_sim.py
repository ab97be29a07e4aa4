"""Simulated identification wall time: `servo-ff up identify` (sim servos + feed-forward + ILC + α fit, ending
with α set on the feed-forward node) on today's wall-clock sim and with ``realtime:=false`` (the ILC node drives
/clock one sample at a time in lockstep with the sim node: use_sim_time, realtime false), side by side in one run.

Both runs use config/identify.yaml (200 Hz, the 10 s 002-style reference, 1 s settling) with the ILC stopping at
0.02 rad windowed error (Eq. 28); each is timed from `up` start to its exit (ILC, then the fit, then α set on the
feed-forward node). The last line is ``RESULT speedup=<wall/lockstep> ...``.

    .venv/bin/python bench/identify_sim.py [--threshold 0.02] [--max-iterations 20]
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))


def run(realtime: bool, threshold: float, max_iterations: int, domain: int) -> dict:
    from servo_ff.nodes.bringup import python_env

    with tempfile.TemporaryDirectory(prefix="identify_sim_") as d:
        params = Path(d) / "bench.yaml"
        params.write_text(f"servo_ilc:\n  ros__parameters:\n    threshold: {threshold}\n"
                          f"    max_iterations: {max_iterations}\n")
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
    errors = [float(x) for x in re.findall(r"ILC iteration \d+: q_max = ([0-9.]+) rad", out)]
    alpha = re.search(r"α̂\(pendulum_1\) = (\[[^\]]*\])", out)
    return {"mode": "wall clock (today)" if realtime else "realtime:=false (lockstep /clock)", "code": proc.returncode,
            "wall": wall, "trials": len(errors), "final": errors[-1] if errors else float("nan"),
            "alpha": alpha.group(1) if alpha else "-", "set": "alpha.pendulum_1 set on servo_feedforward" in out,
            "tail": out.strip().splitlines()[-3:]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threshold", type=float, default=0.02)
    ap.add_argument("--max-iterations", type=int, default=20)
    a = ap.parse_args()
    domain = 1 + (os.getpid() * 7) % 100
    rows = [run(True, a.threshold, a.max_iterations, domain), run(False, a.threshold, a.max_iterations, domain)]
    print(f"identify bring-up (sim, config/identify.yaml, ILC to <= {a.threshold} rad), {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.2f}")
    print(f"{'mode':36s} {'exit':>4s} {'trials':>6s} {'final q_max':>11s} {'wall [s]':>9s} {'s/trial':>8s}  "
          f"α set  α̂")
    for r in rows:
        per = r["wall"] / max(r["trials"], 1)
        print(f"{r['mode']:36s} {r['code']:4d} {r['trials']:6d} {r['final']:11.4f} {r['wall']:9.1f} {per:8.2f}  "
              f"{'yes' if r['set'] else 'no':5s}  {r['alpha']}")
        if r["code"] != 0:
            print("   " + "\n   ".join(r["tail"]))
    wall, fast = rows[0]["wall"], rows[1]["wall"]
    per_wall = wall / max(rows[0]["trials"], 1)
    per_fast = fast / max(rows[1]["trials"], 1)
    print(f"RESULT speedup={wall / fast:.2f} wall_s={wall:.1f} lockstep_s={fast:.1f} "
          f"per_trial_speedup={per_wall / per_fast:.2f} trials={rows[0]['trials']},{rows[1]['trials']} "
          f"exit={rows[0]['code']},{rows[1]['code']}")
    return 0 if all(r["code"] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
