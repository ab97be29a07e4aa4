"""Robot description → MuJoCo model, the per-joint servo YAML, their one-line errors, and the 2R arm."""

import re
from pathlib import Path

import mujoco
import numpy as np
import pytest

from servo_ff.dynamics.arm2r import ARM2R_URDF, L1, L2, TRIANGLE, compare, fk_2r, ik_2r, make_arm, run_arm
from servo_ff.dynamics.mujoco_model import SimModelError, build_model
from servo_ff.dynamics.mujoco_servos import MujocoServos
from servo_ff.dynamics.servo_map import ServoMapError, load_servo_map
from servo_ff.models.params import P_KP

ROOT = Path(__file__).resolve().parents[1]
HUMANOID = ROOT / "urdf" / "humanoid20.urdf"
HUMANOID_YAML = ROOT / "config" / "servos_humanoid.yaml"


def one_line(excinfo) -> str:
    msg = str(excinfo.value)
    assert "\n" not in msg
    return msg


def test_humanoid_yaml_maps_mx106_legs_and_mx64_arms():
    s = MujocoServos.from_description(HUMANOID, HUMANOID_YAML, base="floating")
    assert len(s.joint_names) == 20 and s.sim.floating
    kind = {n: s.params[n].actuator for n in s.joint_names}
    assert {kind[n] for n in s.joint_names if any(k in n for k in ("hip", "knee", "ankle"))} == {"mx106"}
    assert {kind[n] for n in s.joint_names if any(k in n for k in ("shoulder", "elbow", "neck", "head"))} == {"mx64"}
    assert {s.params[n].model for n in s.joint_names} == {"m4"}
    mx64 = s.joint_names.index("l_elbow")
    assert s.model.dof_armature[s.dadr[mx64]] == s.params["l_elbow"].armature  # per-joint armature
    assert s.model.dof_armature[s.dadr[0]] != s.model.dof_armature[s.dadr[s.joint_names.index("l_knee")]]
    # floating base: a free joint, a ground plane, the feet collide with it
    assert s.model.jnt_type[0] == mujoco.mjtJoint.mjJNT_FREE
    assert [s.model.body(b).name for b in s.sim.feet] == ["l_foot", "r_foot"]


def test_yaml_precedence_kp_passive_and_files(tmp_path):
    names = ["l_knee", "r_knee", "l_elbow", "camera"]
    (tmp_path / "mine.json").write_text((ROOT / "src/servo_ff/models/data/bam/mx64/m2.json").read_text())
    doc = {
        "kp": 20,
        "servos": {
            "*_knee": {"preset": "mx106/m4", "kp": 12},
            "r_knee": "mx106/m1",
            "l_elbow": {"file": "mine.json"},
            "camera": None,
        },
    }
    path = tmp_path / "servos.yaml"
    import yaml

    path.write_text(yaml.safe_dump(doc))
    m = load_servo_map(path, names)
    assert m.joint_names == ("l_knee", "r_knee", "l_elbow") and m.passive == ("camera",)
    assert (m.joints["l_knee"].params.model, m.joints["l_knee"].kp) == ("m4", 12.0)
    assert (m.joints["r_knee"].params.model, m.joints["r_knee"].kp) == ("m1", 20.0)  # exact name beats pattern
    assert (m.joints["l_elbow"].params.actuator, m.joints["l_elbow"].params.model) == ("mx64", "m2")
    arm = make_arm("m4", 11.0)
    assert arm.p[:, P_KP].tolist() == [11.0, 11.0]  # kp reaches the firmware law


@pytest.mark.parametrize(
    "servos, pattern",
    [
        ({"*_knee": "mx106/m4"}, "joint 'l_elbow' has no servo"),
        ({"*": "mx106/m4", "l_kne": "mx106/m4"}, "'l_kne' names no joint"),
        ({"*": "mx999/m4"}, "servos\\['\\*'\\].*unknown servo preset"),
        ({"*": {"preset": "mx64/m4", "kp": "fast"}}, "kp must be a number"),
        ({"*": {"preset": "mx64/m4", "kp": True}}, "kp must be a number, got True"),  # not kp 1
        ({"*": {"preset": "mx64/m4", "file": "x.json"}}, "exactly one of"),
    ],
)
def test_servo_yaml_errors_are_one_line(servos, pattern):
    with pytest.raises(ServoMapError) as e:
        load_servo_map({"servos": servos}, ["l_knee", "l_elbow"])
    assert re.search(pattern, one_line(e))


def test_a_servo_yaml_file_is_read_with_the_limits_of_every_yaml(tmp_path):
    """Nested 3000 deep: one line naming the file (before: a RecursionError traceback)."""
    deep = tmp_path / "deep.yaml"
    deep.write_text("servos: " + "[" * 3000 + "]" * 3000)
    with pytest.raises(ServoMapError) as e:
        load_servo_map(deep, ["l_knee"])
    assert one_line(e).startswith(f"{deep}: malformed YAML (nested more than")


def test_urdf_without_inertial_on_a_moving_link_names_joint_and_link():
    text = ARM2R_URDF.read_text()
    start = text.index("<inertial>", text.index('<link name="forearm">'))
    bad = text[:start] + text[text.index("</inertial>", start) + len("</inertial>") :]
    with pytest.raises(SimModelError) as e:
        build_model(bad)
    assert "'elbow'" in one_line(e) and "'forearm'" in one_line(e)
    build_model(text)  # the file itself is fine (and the text form is accepted, as robot_description)


def test_floating_base_feet_without_collision_name_the_link():
    text = HUMANOID.read_text()
    start = text.index("<collision>", text.index('<link name="r_foot">'))
    bad = text[:start] + text[text.index("</collision>", start) + len("</collision>") :]
    with pytest.raises(SimModelError) as e:
        build_model(bad, base="floating")
    assert "'r_foot'" in one_line(e) and "collision" in one_line(e)
    with pytest.raises(SimModelError, match="'l_toe' does not exist"):
        build_model(text, base="floating", feet=["l_toe"])
    build_model(bad, base="fixed")  # a fixed base needs no feet


def test_missing_file_mjcf_base_and_non_hinge_errors(tmp_path):
    with pytest.raises(SimModelError, match="no such"):
        build_model(tmp_path / "nope.urdf")
    mjcf = """<mujoco><worldbody><body><freejoint/><geom size="0.1" mass="1"/>
      <body><joint name="j" type="slide"/><geom size="0.05" mass="0.1"/></body></body></worldbody></mujoco>"""
    sim = build_model(mjcf)
    assert sim.floating and sim.joint_names == ()
    with pytest.raises(SimModelError, match="free joint"):
        build_model(mjcf, base="fixed")
    with pytest.raises(SimModelError, match="'j' is not a hinge"):
        MujocoServos(sim, load_servo_map({"servos": {"*": "mx64/m4"}}, ["j"]))


def test_2r_ik_fk_and_the_urdf_geometry():
    q = ik_2r(np.array(TRIANGLE), elbow=-1.0)
    np.testing.assert_allclose(fk_2r(q), TRIANGLE, atol=1e-12)
    with pytest.raises(ValueError, match="reach"):
        ik_2r(np.array([0.5, 0.0]))
    arm = make_arm("m4", 32.0)
    m, d = arm.model, arm.data
    d.qpos[arm.qadr] = q[1]
    mujoco.mj_kinematics(m, d)
    fore = m.body("forearm").id
    tip = d.xpos[fore] + d.xmat[fore].reshape(3, 3) @ [0.0, 0.0, -L2]  # the fused tip link
    np.testing.assert_allclose(tip[[0, 2]], TRIANGLE[1], atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(d.xpos[fore]), L1, atol=1e-12)
    assert not arm.sim.floating and m.nq == 2
    assert [arm.params[n].actuator for n in arm.joint_names] == ["mx106", "mx64"]


def test_2r_m1_and_m4_trajectories_differ_but_both_trace_the_path():
    m1, m4 = run_arm("m1", 32.0, loops=1), run_arm("m4", 32.0, loops=1)
    d = compare(m1, m4)
    assert 0.002 < d.ee_max < 0.05 and d.ee_rms < d.ee_max
    assert compare(m4, m4).ee_max == 0.0
    for r in (m1, m4):
        assert r.tracking_rms() < 0.03  # within 3 cm of the triangle at the high gain


def test_hold_present_leaves_no_target_or_goal_in_flight_behind():
    """Torque coming on (the sim node's torque_enable) starts from where the joints are: the firmware's goal, its
    slew-limited internal target and the goals still in flight (latency) all := the present position."""
    from servo_ff.dynamics.mujoco_servos import ServoOptions, quantize

    arm = make_arm("m4", 32.0, options=ServoOptions(latency=2, counts_per_rev=4096))
    arm.command([0.8, -0.6])
    arm.command([0.8, -0.6])
    arm.step(5)
    arm.set_enable(0.0)
    arm.step(200)  # released: the arm falls away from the goal it was heading for
    present = quantize(arm.data.qpos[arm.qadr], arm.options.resolution)
    assert np.abs(present - [0.8, -0.6]).max() > 0.1
    arm.hold_present()
    np.testing.assert_array_equal(arm.goal, present)
    np.testing.assert_array_equal(arm.target, present)
    assert [q.tolist() for q in arm._queue] == [present.tolist()] * 2


def test_the_imu_reads_the_state_at_the_start_of_the_last_physics_step():
    """What ``imu/data`` is stamped with (one physics step before the period's end, ``mujoco_outputs``): after
    ``mj_step`` the orientation, velocity and acceleration the IMU reads are those of the state the step started
    from — the positions after it are one step further on."""
    from servo_ff.dynamics.mujoco_sensors import imu_reading

    arm = make_arm("m4", 32.0)
    arm.command([1.2, -0.9])
    arm.step(30)  # swinging
    m, body = arm.model, arm.model.nbody - 1  # the last link
    start = mujoco.MjData(m)
    start.qpos[:], start.qvel[:], start.time = arm.data.qpos, arm.data.qvel, arm.data.time
    arm.step(1)
    mujoco.mj_forward(m, start)  # the state the step started from, its derived quantities computed afresh
    end = mujoco.MjData(m)
    end.qpos[:], end.qvel[:] = arm.data.qpos, arm.data.qvel
    mujoco.mj_forward(m, end)
    w, x, y, z = start.xquat[body]
    got = imu_reading(m, arm.data, body)
    np.testing.assert_allclose(got.orientation, [x, y, z, w], atol=1e-12)
    np.testing.assert_allclose(got.angular_velocity, imu_reading(m, start, body).angular_velocity, atol=1e-9)
    w2, x2, y2, z2 = end.xquat[body]
    assert np.abs(np.array([x2, y2, z2, w2]) - got.orientation).max() > 1e-6  # moving: the end differs
