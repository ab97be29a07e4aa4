"""The README demo: the servo_ff pipeline in simulation, no robot and no ROS install needed.

Run with ``./run demo`` (or ``python -m servo_ff.demo --out out/demo``). Each stage prints what it did and
where its files are.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from servo_ff.cli import main as cli


def stage(title: str) -> None:
    print(f"\n=== {title}", flush=True)


def run(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    stage("1. simulated MX-106 (bam m4 preset) on the pendulum bench (Duclusaud et al., Algorithm 1)")
    rc = cli(["simulate", "--servo", "mx106", "--model", "m4", "--out", str(out)])
    rc |= cli(["simulate", "--servo", "mx106", "--model", "m4", "--trajectory", "lift_and_drop", "--out", str(out)])
    stage("2. drive/backdrive diagrams, Coulomb-viscous (M1) vs quadratic (M6) (Duclusaud et al. Fig. 2/4)")
    for model in ("m1", "m6"):
        rc |= cli(
            [
                "plot",
                "drive-backdrive",
                "--servo",
                "mx106",
                "--model",
                model,
                "--out",
                str(out / f"drive_backdrive_mx106_{model}.png"),
            ]
        )
    stage(
        "3. the mission over ROS 2 (real rclpy nodes over DDS, ≈ 90 s): servo_sim_node → servo_ilc_node (ILC, "
        "Schwarz & Behnke §4.1) → servo_fit_node (α least squares, §4.2; sets α on the feed-forward node) → "
        "servo_feedforward_node (Eq. 19) → tracking: high-gain P / low-gain P / low-gain P + feed-forward"
    )
    try:
        from servo_ff.bringup.demo_pipeline import run_demo
    except ImportError as e:  # rclpy missing: say so instead of a traceback
        print(f"skipped: ROS 2 Python packages are not importable here ({e}); `./run demo` installs them")
        return rc | 1
    result = run_demo(out / "nodes")
    print(result.table())
    print(f"plot: {result.plot}")
    stage(
        "4. the humanoid over ROS 2 (≈ 1 min): servo_walker_node (stepping gait → desired trajectory + support "
        "coefficient) → servo_feedforward_node → servo_sim_node backend mujoco (20 servos, quantisation, bus "
        "latency) → joint_states / imu/data / contacts back; 2 steps each of (a) high-gain P, (b) low-gain P, "
        "(c) low-gain P + feed-forward (the 40-step table: bench/humanoid_mission.py)"
    )
    from servo_ff.bringup.demo_pipeline import run_humanoid_act

    _, table, plot = run_humanoid_act(out / "humanoid")
    print(table)
    print(f"plot: {plot}")
    stage(
        "5. the ROBOTIS OP3 walking over ROS 2 (≈ 10 s): servo_walk_node (placo, cmd_vel 0.1 m/s) → "
        "servo_feedforward_node → servo_sim_node backend mujoco (20 × XM430); 8 steps of (c) low-gain P "
        "(k_P 280 = 0.35 × the XM430's factory 800) + feed-forward (the experiments: bench/op3_mission.py)"
    )
    from servo_ff.bringup.demo_op3 import run_op3_act

    _, table, plot = run_op3_act(out / "op3")
    print(table)
    print(f"plot: {plot}")
    print(f"\ndemo finished: files in {out}/")
    return rc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", default="out/demo", help="output folder")
    args = ap.parse_args(argv)
    return run(Path(args.out))


if __name__ == "__main__":
    sys.exit(main())
