"""`servo-ff up so100` as a user runs it with no arm: `servo-ff virtual-bus --protocol sts --ids 1-6` (another
process, the stock-protocol pty) and the bring-up (hardware node on protocol sts + the waypoint walker, two more
processes): joint_states of the six joints over DDS, the arm visits its waypoints and ends at rest."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]


def test_up_so100_on_the_virtual_sts_bus(tmp_path):
    pytest.importorskip("rclpy")
    pytest.importorskip("scservo_sdk")
    from sensor_msgs.msg import JointState

    from servo_ff.bringup import python_env
    from servo_ff.bus.virtual_process import spawn_virtual_bus
    from servo_ff.ros.harness import RosHarness, wait_for

    cfg = yaml.safe_load((ROOT / "config" / "so100.yaml").read_text())
    joints = cfg["/**"]["ros__parameters"]["joints"]
    walker = cfg["servo_walker"]["ros__parameters"]
    rest = np.array(walker["waypoints"][-len(joints) :])  # the last pose: back at rest
    fast = tmp_path / "fast.yaml"  # shorter segments: the same motion in about 5 s
    fast.write_text(
        "servo_walker:\n  ros__parameters:\n    segment_time: 0.6\n    dwell_time: 0.2\n"
        # the virtual bus is another Python process: on a loaded box it answers after the 3 ms reply margin of the
        # config's 1 ms latency timer (a real STS3215 answers in microseconds), its late replies are discarded as
        # they should be, and the node counts the bus lost ('no servo answered for 50 cycles', shake run at load 9)
        "servo_hardware:\n  ros__parameters:\n    timeout_ms: 50.0\n"
    )
    with spawn_virtual_bus(["--protocol", "sts", "--ids", "1-6"]) as vb:
        h = RosHarness(salt=29)
        env = python_env()
        env["ROS_DOMAIN_ID"] = str(h.domain)
        cmd = [sys.executable, "-m", "servo_ff", "up", "so100", "--arg", f"port:={vb.device}"]
        cmd += ["--arg", f"namespace:={h.ns}", "--params-file", str(fast)]
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            probe = h.make_node("so100_probe")
            states: list[JointState] = []
            probe.create_subscription(JointState, "joint_states", states.append, 100)
            wait_for(lambda: states, 60.0, "joint_states from the so100 bring-up")
            assert list(states[-1].name) == joints

            def moved() -> float:  # the largest range of one joint so far [rad]
                path = np.array([m.position for m in states])
                return float((path.max(axis=0) - path.min(axis=0)).max())

            # first it moves (it may start at rest: "back at rest" alone was met before the waypoints began)
            wait_for(lambda: moved() > 1.0, 90.0, "the arm moving through its waypoints")
            wait_for(
                lambda: np.abs(np.array(states[-1].position) - rest).max() < 0.05,
                90.0,
                "the arm back at rest after its waypoints",
            )
        except TimeoutError as e:  # the bring-up's own lines say why
            proc.terminate()
            raise AssertionError(f"{e}; the bring-up said:\n{proc.communicate(timeout=20)[0][-3000:]}") from None
        finally:
            if proc.poll() is None:
                proc.terminate()
            out = proc.communicate(timeout=20)[0] if proc.stdout and not proc.stdout.closed else ""
            h.shutdown()
    assert "playing waypoints" in out and "has no parameter" not in out, out[-3000:]
