"""The so100 bring-ups' arm, the SO-101: urdf/so101.urdf in the MuJoCo servo layer (ROS-free: six STS3215 servos,
joint order, masses of the source table, the file is what urdf/generate.py writes) and the sim_so100 bring-up's two
nodes in-process (the walker's waypoints on servo/joint_trajectory, followed by the MuJoCo sim node). Every figure
of the model against so101.xml: test_robot_models.py."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
import yaml
from generated_text import assert_same_generated_text

ROOT = Path(__file__).resolve().parents[1]
URDF = ROOT / "urdf" / "so101.urdf"
SERVOS = ROOT / "config" / "servos_so100.yaml"
BRINGUP = ROOT / "config" / "sim_so100.yaml"
JOINTS = ("shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper")
#: so101.xml's body masses (base 0.147 kg, fixed) + the camera mount's 12 g; the header comment and docs/so100.md
TOTAL_KG, BASE_KG = 0.147 + 0.100006 + 0.103 + 0.104 + 0.079 + 0.087 + 0.012 + 0.012, 0.147


def test_urdf_in_the_servo_layer_six_sts3215_in_order_with_the_documented_masses():
    pytest.importorskip("mujoco")
    from servo_ff.dynamics.mujoco_servos import MujocoServos
    from servo_ff.models.presets import preset

    servos = MujocoServos.from_description(URDF, SERVOS)
    assert servos.joint_names == JOINTS and not servos.sim.floating
    assert all(p == preset("sts3215", "m1") for p in servos.params.values())
    # the fixed base is fused into the world body: MuJoCo holds the moving links
    assert servos.model.body_mass.sum() == pytest.approx(TOTAL_KG - BASE_KG, abs=1e-6)
    links = ET.parse(URDF).getroot().findall("link")
    assert sum(float(m.get("value")) for m in (ln.find("inertial/mass") for ln in links) if m is not None) == (
        pytest.approx(TOTAL_KG, abs=1e-6)
    )
    comment = URDF.read_text().split("-->")[0]
    assert f"Total mass {TOTAL_KG:.6f} kg" in comment and "Feetech STS3215 datasheet" in comment
    for j in ET.parse(URDF).getroot().findall("joint[@type='revolute']"):
        limit = j.find("limit")
        assert float(limit.get("effort")) == 1.9 and float(limit.get("velocity")) == 4.7, j.get("name")
    # every inertia is physical (positive definite, triangle inequality)
    for k in range(1, servos.model.nbody):
        i = np.sort(servos.model.body_inertia[k])
        assert i[0] > 0 and i[0] + i[1] >= i[2], servos.model.body(k).name


def test_urdf_is_what_generate_py_writes():
    spec = importlib.util.spec_from_file_location("urdf_generate", ROOT / "urdf" / "generate.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    assert_same_generated_text(gen.so101(), URDF.read_text())
    assert re.findall(r'<joint name="(\w+)" type="revolute"', URDF.read_text()) == list(JOINTS)


def test_bringup_limits_are_the_urdf_s_and_its_waypoints_inside_them():
    from servo_ff.trajectories import joint_waypoints

    doc = yaml.safe_load(BRINGUP.read_text())
    assert tuple(doc["/**"]["ros__parameters"]["joints"]) == JOINTS
    poses = np.reshape(doc["servo_walker"]["ros__parameters"]["waypoints"], (-1, len(JOINTS)))
    limits = {j.get("name"): j.find("limit") for j in ET.parse(URDF).getroot().findall("joint")}
    lo = np.array([float(limits[n].get("lower")) for n in JOINTS])
    hi = np.array([float(limits[n].get("upper")) for n in JOINTS])
    sim = doc["servo_sim"]["ros__parameters"]
    np.testing.assert_array_equal(sim["position_min"], lo)
    np.testing.assert_array_equal(sim["position_max"], hi)
    _, q, dq, _ = joint_waypoints(poses, 0.01, 1.5, 0.5)
    assert (q >= lo).all() and (q <= hi).all()
    assert np.abs(dq).max() < 4.7  # rad/s, below the STS3215's no-load speed


def so100_waypoint_errors() -> dict:
    """sim_so100's two nodes in-process with config/sim_so100.yaml (real-time factor 2): the walker plays the YAML's
    waypoints on servo/joint_trajectory, the MuJoCo sim node follows. Returns the largest |q − q_desired| per joint
    over the whole motion, its RMS, and the final error to the last waypoint [rad]."""
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import JointState

    from servo_ff.nodes.sim_node import MujocoSimNode
    from servo_ff.nodes.walker_node import WalkerNode
    from servo_ff.ros.harness import RosHarness, wait_for

    doc = yaml.safe_load(BRINGUP.read_text())
    sim_values = dict(doc["servo_sim"]["ros__parameters"])
    # in the bring-up the sim reads the state publisher's robot_description; here it is given the same file
    sim_values.setdefault("urdf_path", doc["servo_state_publisher"]["ros__parameters"]["urdf_path"])
    for key in ("urdf_path", "servo_config"):
        sim_values[key] = str(ROOT / sim_values[key])
    sim_values["real_time_factor"] = 2.0
    walker_values = {**doc["/**"]["ros__parameters"], **doc["servo_walker"]["ros__parameters"], "horizon": 2.0}
    h = RosHarness(salt=18)
    try:
        sim = h.add(
            MujocoSimNode(
                "servo_sim",
                **h.node_kwargs(),
                parameter_overrides=[Parameter(k, value=v) for k, v in sim_values.items()],
            )
        )
        walker = h.add(
            WalkerNode(
                "servo_walker",
                **h.node_kwargs(),
                parameter_overrides=[Parameter(k, value=v) for k, v in walker_values.items()],
            )
        )
        probe = h.make_node("so100_probe")
        rows, last, last_t = [], [], [-1.0]

        def on_js(m):
            if walker.pattern is None or list(m.name) != list(JOINTS):
                return
            t = m.header.stamp.sec + m.header.stamp.nanosec * 1e-9 - walker.t_start
            if 0.0 <= t <= walker.pattern.end:
                rows.append((np.array(m.position), walker.pattern.sample(t)))
            last[:] = [np.array(m.position)]
            last_t[0] = t

        probe.create_subscription(JointState, "joint_states", on_js, 1000)
        wait_for(lambda: walker.finished, 180.0, "the waypoints")
        # the probe shares the executor: on a loaded machine its queue lags; the final error is at the end
        wait_for(lambda: last_t[0] >= walker.pattern.end, 60.0, "the probe's joint_states up to the end")
        final_goal = walker.pattern.q[-1]
        q = np.array([r[0] for r in rows])
        err = q - np.array([r[1] for r in rows])
        return {
            "samples": len(rows),
            "max": np.abs(err).max(axis=0).tolist(),
            "rms": np.sqrt(np.mean(err**2, axis=0)).tolist(),
            "final": (last[0] - final_goal).tolist(),
            "waypoint": final_goal.tolist(),
            "rejected": sim.gate.rejected,
            "reasons": list(sim.gate.recent),
            "trajectories": sim.trajectories,
            "messages": walker.messages,
            "end": walker.pattern.end,
        }
    finally:
        h.shutdown()


def test_sim_so100_follows_its_waypoints(compiled_mujoco_kernels, tmp_path):
    """Own process, as the 2R-arm test (test_mujoco_zarm.py). The STS3215 is a P-only servo: stiffness
    kp·error_gain·vin·kt/R = 17.8 N·m/rad against damping kt²/R + K_v = 0.61 N·m·s/rad, so it lags a ramp by
    34 ms, plus the one-period bus latency (10 ms) and half a period of goal hold: ≈ 50 ms. The fastest moves are
    shoulder_lift's, rest ↔ reach (−1.6 ↔ 0 rad in 1.5 s, minimum jerk, peak 2.0 rad/s): ≈ 0.1 rad. Measured (SO-101):
    max error 0.079 / 0.118 / 0.099 / 0.036 / 0.053 / 0.064 rad (shoulder_pan … gripper), RMS ≤ 0.047 rad, final
    error 0.025 rad at elbow_flex: gravity sag at the rest pose, τ_g / stiffness = 0.454 / 17.8 = 0.0255 rad, within
    the friction dead band (0.052 / 17.8 = 3 mrad) and half a count (0.8 mrad). Bounds: 0.2 rad max, 0.06 rad RMS,
    0.04 rad at the end; an ignored trajectory leaves 0.7–1.6 rad."""
    pytest.importorskip("rclpy")
    pytest.importorskip("mujoco")
    out = tmp_path / "so100.json"
    env = dict(os.environ)
    here = str(ROOT / "test")
    env["PYTHONPATH"] = os.pathsep.join([here, str(ROOT / "src"), env.get("PYTHONPATH", "")])
    code = f"import json, test_mujoco_so100 as t; json.dump(t.so100_waypoint_errors(), open({str(out)!r}, 'w'))"
    proc = subprocess.run([sys.executable, "-c", code], cwd=here, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    r = json.loads(out.read_text())
    assert r["samples"] > 500, r  # ≈ 12.5 s of joint_states at 100 Hz
    assert r["rejected"] == 0, r["reasons"]
    # every walker message followed: 4 per s until one holds the last point (horizon 2 s)
    assert r["trajectories"] == r["messages"] >= 4 * (r["end"] - 2.0) - 1, r
    assert max(r["max"]) < 0.2 and max(r["rms"]) < 0.06, r
    assert np.abs(r["final"]).max() < 0.04, r
    assert np.abs(r["waypoint"]).max() > 0.5  # the last waypoint is not the start pose q = 0
