"""The sim_arm bring-up's nodes in-process (its own module: the humanoid of test_mujoco_node.py is torn down
first, so nothing else runs as fast as it can beside the arm's real-time-factor-2 simulation)."""

from __future__ import annotations

import numpy as np
import pytest
from nodes_harness import RosHarness, wait_for

pytest.importorskip("rclpy")
pytest.importorskip("mujoco")
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from test_mujoco_node import ARM, ROOT, stamp  # noqa: E402

from servo_ff.nodes.sim_node import MujocoSimNode  # noqa: E402


def arm_triangle_rms() -> dict:
    """The sim_arm bring-up's two nodes in-process: the walker plays the triangle on servo/joint_trajectory, the
    MuJoCo sim node follows it; the end effector tracks the path, closer at the high gain."""
    from servo_ff.dynamics.arm2r import fk_2r
    from servo_ff.nodes.walker_node import WalkerNode

    rms = {}
    h = RosHarness(salt=16)
    try:
        for gain in (8.0, 32.0):
            sim = h.add(
                MujocoSimNode(
                    "servo_sim",
                    **h.node_kwargs(),
                    parameter_overrides=[
                        Parameter("urdf_path", value=str(ARM)),
                        Parameter("servo_config", value=str(ROOT / "config" / "servos_arm2r.yaml")),
                        Parameter("rate_hz", value=100.0),
                        Parameter("publish_clock", value=True),
                        Parameter("real_time_factor", value=2.0),
                        Parameter("counts_per_rev", value=4096),
                        Parameter("latency", value=1),
                        Parameter("kp", value=[gain]),
                    ],
                )
            )
            # the probe matched (a state received) before the walker starts: on a loaded box a subscription made
            # after it missed the triangle's first seconds (141 states kept of ≈ 500)
            probe = h.make_node(f"arm_probe_{int(gain)}")
            rows, seen, playing = [], [], []

            def on_js(m, rows=rows, seen=seen, playing=playing):
                seen.append(True)
                walker = playing[0] if playing else None
                if walker is not None and walker.pattern is not None:
                    t = stamp(m) - walker.t_start
                    if 1.0 <= t <= walker.pattern.end:
                        rows.append((np.array(m.position), walker.pattern.sample(t)))

            probe.create_subscription(JointState, "joint_states", on_js, 1000)
            wait_for(lambda seen=seen: seen, 60.0, "the arm's joint_states at the probe")
            walker = WalkerNode(
                "servo_walker",
                **h.node_kwargs(),
                parameter_overrides=[
                    Parameter("use_sim_time", value=True),
                    Parameter("pattern", value="triangle"),
                    Parameter("loops", value=1),
                    Parameter("start_delay", value=0.2),
                    Parameter("approach_time", value=1.0),
                    Parameter("trajectory_topic", value="servo/joint_trajectory"),
                    Parameter("horizon", value=2.0),
                ],
            )
            playing.append(walker)  # before it runs: every state from its start is judged
            h.add(walker)
            wait_for(lambda w=walker: w.finished, 180.0, "the triangle")
            q = np.array([r[0] for r in rows])
            qd = np.array([r[1] for r in rows])
            assert len(rows) > 200, len(rows)
            rms[gain] = float(np.sqrt(np.mean(np.sum((fk_2r(q) - fk_2r(qd)) ** 2, axis=-1))))
            for n in (walker, sim, probe):
                h.remove(n)
    finally:
        h.shutdown()
    return rms


def test_arm_traces_its_triangle_at_low_and_high_gain(compiled_mujoco_kernels, tmp_path):
    """Run in a fresh process: after the humanoid node tests in this process the arm's walker never finished
    (some rclpy/executor state outlives their harness), while the same code in its own process always does."""
    import json
    import os
    import subprocess
    import sys

    out = tmp_path / "rms.json"
    env = dict(os.environ)
    here = str(ROOT / "test")
    env["PYTHONPATH"] = os.pathsep.join([here, str(ROOT / "src"), env.get("PYTHONPATH", "")])
    code = (
        "import json, test_mujoco_zarm as t; "
        f"json.dump({{str(k): v for k, v in t.arm_triangle_rms().items()}}, open({str(out)!r}, 'w'))"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=here, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rms = {float(k): v for k, v in json.loads(out.read_text()).items()}
    assert rms[32.0] < rms[8.0] and rms[32.0] < 0.03, rms  # metres
