"""The walk node's balance feedback (ros/imu_balance.py, dynamics/walk_balance.py) on the OP3 in MuJoCo, closed loop,
ROS-free: does it keep plain high-gain P walking (issue 21's controller (a))?

Run: python bench/walk_balance.py [--steps 12]

Rule (committed before the first run; nothing tuned after it). ``simulate_walk`` (placo at 0.1 m/s, ``--steps``
steps, 0.48 s hold in the stance, 8 ms goals, 1 ms physics, quantisation 4096, one period of latency) under plain P,
with the trunk IMU's offsets (the simulated IMU, its noise included) added to the desired positions from the walk
start, updated every 0.1 s (the walk node's: one trajectory message) unless said. Gain sets (rad/rad, s):

* ``none``: no feedback;
* ``angle``: ankle pitch and roll 0.3;
* ``rate``: ankle pitch and roll rate 0.05 s;
* ``all``: angle 0.3 and rate 0.05 s on pitch and roll, hips' share 0.5 of each.

Runs: each set at k_P 800 (the XM430 factory gain) under the servo file's law (config/servos_op3.yaml) and under the
XM430's factory position mode (``firmware xm430_position``); at k_P 3000 (servo file's law) ``none``, ``rate`` and
``rate`` updated every 8 ms (each control period). Reported per run: fell (time from the walk start) or stood, the
trunk's x travel and the plan's CoM travel over the same time, and their ratio.

Last line: RESULT kp800_<set>=S|F … fw800_<set>=S|F … kp3000_none=S|F kp3000_none_ratio=… kp3000_rate=S|F
kp3000_rate_ratio=… kp3000_rate8ms=S|F kp3000_rate8ms_ratio=… (S stood, F fell; ratio = trunk travel / planned
travel up to the end or the fall).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from servo_ff.dynamics.walk_balance import BalanceGains  # noqa: E402
from servo_ff.dynamics.walk_sim import simulate_walk  # noqa: E402

SETS = {
    "none": None,
    "angle": BalanceGains(ankle_pitch=0.3, ankle_roll=0.3),
    "rate": BalanceGains(ankle_pitch_rate=0.05, ankle_roll_rate=0.05),
    "all": BalanceGains(0.3, 0.05, 0.3, 0.05, hip_pitch=0.5, hip_roll=0.5),
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=12, help="steps walked (default 12)")
    a = ap.parse_args(argv)
    runs = [(f"kp800_{k}", 800.0, None, k, 0.1) for k in SETS]
    runs += [(f"fw800_{k}", 800.0, "xm430_position", k, 0.1) for k in SETS]
    runs += [("kp3000_none", 3000.0, None, "none", 0.1), ("kp3000_rate", 3000.0, None, "rate", 0.1)]
    runs += [("kp3000_rate8ms", 3000.0, None, "rate", 0.008)]
    print(f"OP3, placo 0.1 m/s, {a.steps} steps, plain P; balance offsets from the trunk IMU")
    head = ("run", "k_P", "law", "set", "update", "outcome", "travel", "plan", "ratio")
    print("{:<16} {:>6} {:<15} {:<6} {:>7}  {:<14} {:>7} {:>7} {:>6}".format(*head))
    out = {}
    for name, kp, fw, key, period in runs:
        r = simulate_walk("high", a.steps, kp_high=kp, firmware=fw, balance=SETS[key], balance_period=period)
        ratio = r.travel / r.planned if r.planned else float("nan")
        what = f"fell {r.fell_at:.2f} s" if r.fell else "stood"
        print(f"{name:<16} {kp:>6g} {fw or 'servo file':<15} {key:<6} {period:>6g}s  {what:<14} "
              f"{r.travel:>7.3f} {r.planned:>7.3f} {ratio:>6.2f}", flush=True)  # fmt: skip
        out[name] = "F" if r.fell else "S"
        if name.startswith("kp3000"):
            out[f"{name}_ratio"] = f"{ratio:.2f}"
    print("RESULT " + " ".join(f"{k}={v}" for k, v in out.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
