"""`servo-ff up sim_nimbro_op` over DDS against the ROS-free ``simulate_walk`` of the same gait (issue 21).

Run: python bench/nimbro_up.py [--vx 0.05] [--walk 10] [--controller ff] [--gait placo|cpg]

DDS: the bring-up as shipped (four processes, config/sim_nimbro_op.yaml; ``lockstep_timeout`` 5 s of wall time as
test_up_sim_op3_walks_under_cmd_vel, so that a loaded machine does not step the sim without a goal), a probe
publishing cmd_vel ``vx`` and reading ``odom`` (the trunk): travel in x over ``walk`` s of sim time from the walk's
start (start_delay 0.5 + approach_time 2.0 s), fell when the trunk tilts > 0.6 rad (``walk_sim.FALL_TILT``).
ROS-free: ``simulate_walk`` of the NimbRo-OP (bench/nimbro_obstacle.py's ``walk``) at ``vx``, ``walk`` / 0.42 s steps,
the same controller (ff: (c), 0.35 × 53.125 + feed-forward; low: (b), feedforward:=false; high: (a), also
gain:=53.125). ``--gait cpg``: the NimbRo-OP's own CPG, ``gait:=cpg`` over DDS (servo_walk_node gait nimbro_cpg) and
``simulate_walk(ready=cpg_plan(...))`` of the same vx ROS-free (its steps then its own stop), ``walk`` / 0.417 s steps.

Last line: RESULT dds_travel_m=… dds_fell=0|1 rosfree_travel_m=… rosfree_planned_m=… rosfree_fell=0|1 steps=…
"""

from __future__ import annotations

import argparse
import math
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

T_WALK = 2.5  # [s of sim time] start_delay 0.5 + approach_time 2.0 (config/sim_nimbro_op.yaml)
FALL_TILT = 0.6  # [rad] walk_sim.FALL_TILT
KP_HIGH = 53.125  # (a): nimbro_obstacle.KP_HIGH


def _tilt(x: float, y: float, z: float, w: float) -> float:
    """[rad] angle of the trunk's z axis from the vertical."""
    return math.acos(max(-1.0, min(1.0, 1.0 - 2.0 * (x * x + y * y))))


def run_dds(vx: float, walk_s: float, controller: str, gait: str = "placo") -> tuple[float, bool, float]:
    """(travel [m], fell, sim s walked) of `servo-ff up sim_nimbro_op gait:=<gait>` under cmd_vel ``vx`` for
    ``walk_s`` s."""
    from geometry_msgs.msg import Twist
    from nav_msgs.msg import Odometry

    from servo_ff.bringup import python_env
    from servo_ff.ros.harness import RosHarness, wait_for

    h = RosHarness(salt=61)
    env = python_env()
    env["ROS_DOMAIN_ID"] = str(h.domain)
    with tempfile.TemporaryDirectory() as tmp:
        patient = Path(tmp) / "patient.yaml"
        patient.write_text("servo_sim:\n  ros__parameters:\n    lockstep_timeout: 5.0\n")
        cmd = [sys.executable, "-m", "servo_ff", "up", "sim_nimbro_op", "--arg", f"namespace:={h.ns}"]
        cmd += ["--arg", f"feedforward:={'true' if controller == 'ff' else 'false'}", "--params-file", str(patient)]
        cmd += ["--arg", f"gain:={KP_HIGH}"] if controller == "high" else []
        cmd += ["--arg", f"gait:={gait}"]
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            probe = h.make_node("nimbro_up_probe")
            pub = probe.create_publisher(Twist, "cmd_vel", 10)
            forward = Twist()
            forward.linear.x = vx
            odom: list[tuple[float, float, float]] = []  # (sim s, x, tilt)

            def on_odom(m: Odometry) -> None:
                p, q = m.pose.pose.position, m.pose.pose.orientation
                odom.append((m.header.stamp.sec + m.header.stamp.nanosec * 1e-9, p.x, _tilt(q.x, q.y, q.z, q.w)))

            probe.create_subscription(Odometry, "odom", on_odom, 100)
            wait_for(lambda: pub.publish(forward) or (odom and odom[-1][0] >= T_WALK), 300.0, "the walk's start")
            t0, x0, _ = odom[-1]

            def done() -> bool:
                pub.publish(forward)
                return odom[-1][0] >= t0 + walk_s or odom[-1][2] > FALL_TILT

            wait_for(done, 1200.0, f"{walk_s} s of walking under cmd_vel")
            window = [o for o in odom if o[0] >= t0]
            fell = any(o[2] > FALL_TILT for o in window)
            return window[-1][1] - x0, fell, window[-1][0] - t0
        finally:
            proc.terminate()
            out = proc.communicate(timeout=30)[0]
            h.shutdown()
            (Path(tempfile.gettempdir()) / "nimbro_up.log").write_text(out)  # the four nodes' output
            if "has no parameter" in out or "Traceback" in out:
                print(out[-3000:], file=sys.stderr)


def run_rosfree(vx: float, n_steps: int, controller: str, gait: str = "placo"):
    """``simulate_walk`` of the NimbRo-OP (bench/nimbro_obstacle.py's, its ``gait``), flat ground."""
    from nimbro_obstacle import KP_HIGH, walk

    return walk(controller, n_steps, vx, KP_HIGH, gait=gait)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vx", type=float, default=0.05, help="cmd_vel forward [m/s]")
    ap.add_argument("--walk", type=float, default=10.0, help="sim time walked over DDS [s]")
    ap.add_argument("--controller", choices=("ff", "low", "high"), default="ff")
    ap.add_argument("--gait", choices=("placo", "cpg"), default="placo", help="sim_nimbro_op's gait:=")
    a = ap.parse_args()
    from servo_ff.dynamics.nimbro_cpg import CpgConfig
    from servo_ff.dynamics.nimbro_walk import nimbro_walk_params

    period = CpgConfig().step_period if a.gait == "cpg" else nimbro_walk_params().step_period
    steps = round(a.walk / period)
    travel, fell, walked = run_dds(a.vx, a.walk, a.controller, a.gait)
    print(f"DDS: {travel:.3f} m in {walked:.2f} s of walking, fell: {fell}")
    r = run_rosfree(a.vx, steps, a.controller, a.gait)
    print(f"ROS-free simulate_walk, {steps} steps: {r.travel:.3f} m (plan {r.planned:.3f} m), fell at {r.fell_at} s")
    print(
        f"RESULT dds_travel_m={travel:.3f} dds_fell={int(fell)} rosfree_travel_m={r.travel:.3f} "
        f"rosfree_planned_m={r.planned:.3f} rosfree_fell={int(r.fell)} steps={steps}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
