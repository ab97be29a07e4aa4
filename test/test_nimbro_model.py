"""urdf/nimbro_op.urdf (the NimbRo-OP, Schwarz & Behnke's robot) against its source table urdf/nimbro_tables.py
(figures copied from its authors' nimbro_op.xml and dimensions.h), read back from the URDF text and through pinocchio
and MuJoCo; config/servos_nimbro_op.yaml (MX-106 legs, MX-64 elsewhere, bam M4, the 15 V PWM law) and its α̂."""

from __future__ import annotations

import importlib.util
import math
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from generated_text import assert_same_generated_text

ROOT = Path(__file__).resolve().parents[1]
URDF = ROOT / "urdf" / "nimbro_op.urdf"
SERVOS = ROOT / "config" / "servos_nimbro_op.yaml"
TOTAL = 6.460126  # [kg] the sum of nimbro_op.xml's 21 link masses


def _module(name: str, path: Path):
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])
    return sys.modules[name]


T = _module("nimbro_tables", ROOT / "urdf" / "nimbro_tables.py")
GEN = _module("urdf_generate", ROOT / "urdf" / "generate.py")


def _vec(e, key: str) -> tuple[float, ...]:
    return tuple(float(x) for x in e.get(key).split())


def _urdf():
    root = ET.parse(URDF).getroot()
    links = {ln.get("name"): ln for ln in root.findall("link")}
    joints = {j.get("name"): j for j in root.findall("joint")}
    return links, joints


def test_the_file_is_what_generate_py_writes_and_cites_its_source():
    assert_same_generated_text(GEN.nimbro_op(), URDF.read_text())
    head = URDF.read_text().split("-->")[0]
    assert "NimbRo/nimbro-op-ros" in head and "b1f777a296f0e0e382e9942d02e2ac5cca8fcd31" in head
    assert "robots/nimbro_op.xml" in head and "dimensions.h" in head


def test_every_link_and_joint_equals_the_source_table():
    links, joints = _urdf()
    assert len(T.NIMBRO_LINKS) == 21 and len(T.NIMBRO_JOINTS) == 20
    for src in T.NIMBRO_LINKS:
        inertial = links[src.name].find("inertial")
        assert float(inertial.find("mass").get("value")) == src.mass, src.name
        assert _vec(inertial.find("origin"), "xyz") == src.com, src.name
        assert _vec(inertial.find("origin"), "rpy") == (0.0, 0.0, 0.0)
        i = inertial.find("inertia")
        assert tuple(float(i.get(k)) for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")) == src.inertia, src.name
    for src in T.NIMBRO_JOINTS:
        j = joints[src.name]
        assert j.get("type") == "revolute"
        assert (j.find("parent").get("link"), j.find("child").get("link")) == (src.parent, src.child)
        assert _vec(j.find("origin"), "xyz") == src.xyz and _vec(j.find("origin"), "rpy") == src.rpy, src.name
        assert _vec(j.find("axis"), "xyz") == src.axis, src.name
        lim = {k: float(v) for k, v in j.find("limit").attrib.items()}
        assert (lim["lower"], lim["upper"]) == T.joint_range(src.name)
        mx106 = src.name in T.LEG_JOINTS
        assert (lim["effort"], lim["velocity"]) == ((10.0, 4.7) if mx106 else (6.0, 6.6)), src.name
    # a few figures typed out from nimbro_op.xml, independently of the table
    assert T.NIMBRO_LINKS[0] == ("trunk_link", 1.8051, (-0.016856, -0.00019822, 0.019225),
                                 (0.016444, 1.4574e-05, 0.00048254, 0.013972, 5.0355e-06, 0.0064508))  # fmt: skip
    knee = next(j for j in T.NIMBRO_JOINTS if j.name == "left_knee_pitch")
    assert knee.xyz == (0, 0, -0.220000000000022) and knee.rpy[1] == -0.0084770792 and knee.axis == (0, 1, 0)


def test_joint_limits_are_the_goals_the_authors_stack_can_send():
    # config.yaml: left knee offset 1200 ticks, not inverted; right knee 2907, inverted; goal capped to 0…4095
    assert T.joint_range("left_knee_pitch") == (-1200 * math.pi / 2048, 2895 * math.pi / 2048)
    assert T.joint_range("right_knee_pitch") == (-1188 * math.pi / 2048, 2907 * math.pi / 2048)
    for j in T.NIMBRO_JOINTS:
        lo, hi = T.joint_range(j.name)
        assert lo < 0 < hi and hi - lo == pytest.approx(4095 * math.pi / 2048)


def test_feet_are_dimensions_h_boxes_with_sole_frames():
    links, joints = _urdf()
    for foot, side, sole in (("left_foot_link", 1, "l_sole"), ("right_foot_link", -1, "r_sole")):
        (col,) = links[foot].findall("collision")
        assert _vec(col.find("geometry/box"), "size") == (0.208, 0.132, 0.039)
        np.testing.assert_allclose(_vec(col.find("origin"), "xyz"), (0.0009, side * 0.011, -0.0195), atol=1e-15)
        j = joints[f"{sole}_joint"]
        assert j.get("type") == "fixed" and j.find("parent").get("link") == foot
        np.testing.assert_allclose(_vec(j.find("origin"), "xyz"), (0.0009, side * 0.011, -0.039), atol=1e-15)
    assert sum(len(ln.findall("collision")) for ln in links.values()) == 2  # the feet only


def test_pinocchio_and_mujoco_load_it_with_the_source_masses():
    pin = pytest.importorskip("pinocchio")
    pytest.importorskip("mujoco")
    from servo_ff.dynamics.mujoco_servos import MujocoServos
    from servo_ff.dynamics.robot_scale import NIMBRO_OP_LEG, hip_to_sole

    model = pin.buildModelFromUrdf(str(URDF), pin.JointModelFreeFlyer())
    assert sum(i.mass for i in model.inertias) == pytest.approx(TOTAL, abs=1e-9)
    assert model.nq == 7 + 20 and model.existFrame("l_sole") and model.existFrame("r_sole")
    for src in T.NIMBRO_LINKS[1:]:
        j = next(j for j in T.NIMBRO_JOINTS if j.child == src.name)
        inertia = model.inertias[model.getJointId(j.name)]
        assert inertia.mass == src.mass
        np.testing.assert_allclose(inertia.lever, src.com, atol=1e-15)
    # the leg robot_scale states for the NimbRo-OP (0.479 m hip pitch to sole) is this model's, to 0.2 mm
    for s, side in (("l", "left"), ("r", "right")):
        assert hip_to_sole(URDF, f"{side}_hip_pitch", f"{s}_sole") == pytest.approx(NIMBRO_OP_LEG, abs=2e-4)
    sv = MujocoServos.from_description(None, SERVOS, base="floating")  # the servo file's robot:
    assert sv.model.body_mass.sum() == pytest.approx(TOTAL, abs=1e-9)
    assert len(sv.joint_names) == 20


def test_servo_file_mx106_legs_mx64_elsewhere_pwm_law_at_15_v_and_its_alpha():
    from servo_ff.bringup.servo_alpha import servo_alpha_table
    from servo_ff.dynamics.alpha import alpha_table_from_actuator
    from servo_ff.dynamics.servo_map import load_servo_map
    from servo_ff.models.presets import preset

    joints = [j.name for j in T.NIMBRO_JOINTS]
    smap = load_servo_map(SERVOS, joints)
    mx106, mx64 = preset("mx106", "m4"), preset("mx64", "m4")
    for j in joints:
        assert smap.joints[j].params == (mx106 if j in T.LEG_JOINTS else mx64), j
        law = smap.joints[j].params.firmware
        assert (law.control, law.vin, law.error_gain, law.max_pwm) == ("voltage", 15.0, 0.158, 0.9625)
    alpha = servo_alpha_table(SERVOS, joints, 15.0)
    for k, j in enumerate(joints):
        own = alpha_table_from_actuator(mx106 if j in T.LEG_JOINTS else mx64, [j])
        np.testing.assert_array_equal(alpha.alpha[k], own.alpha[0])
    knee, elbow = joints.index("left_knee_pitch"), joints.index("left_elbow_pitch")
    assert not np.allclose(alpha.alpha[knee], alpha.alpha[elbow])  # two servos, two α̂


def test_a_short_walk_on_flat_ground_under_c_with_its_own_alpha_and_frames():
    """Four steps of (c) with the NimbRo-OP's gait: it stands, walks forward (more than a third of the plan's 0.063 m),
    and the energy of each step is kept (cumulative, per joint); the knees (MX-106) draw energy every step."""
    pytest.importorskip("placo")
    from servo_ff.dynamics.nimbro_walk import NIMBRO_FRAMES, NIMBRO_KNEES, NIMBRO_SERVOS, nimbro_walk_params
    from servo_ff.dynamics.walk_sim import simulate_walk

    run = simulate_walk("ff", 4, vx=0.05, kp_high=850 / 128 * 8, params=nimbro_walk_params(), urdf=URDF,
                        servos=NIMBRO_SERVOS, alpha=None, frames=NIMBRO_FRAMES)  # fmt: skip
    assert not run.fell and run.travel > run.planned / 3 > 0.02
    assert run.step_energy.shape == (5, 20) and not run.step_energy[0].any()
    knees = [run.joints.index(j) for j in NIMBRO_KNEES]
    assert (np.diff(run.step_energy[:, knees].sum(axis=1)) > 0).all()


def test_c_refuses_servos_on_two_supplies_in_one_line(tmp_path):
    """(c) with α̂ per joint (``alpha=None``) from a servo file whose laws run on 15 V (MX-106 legs) and 12 V (XM430
    arms): one line naming the file and both supplies, not the first servo's supply for every joint's α̂ and u_bat."""
    pytest.importorskip("placo")
    import yaml

    from servo_ff.dynamics.nimbro_walk import NIMBRO_FRAMES, nimbro_walk_params
    from servo_ff.dynamics.walk_sim import simulate_walk

    mixed = tmp_path / "mixed.yaml"
    mixed.write_text(yaml.safe_dump({"robot": str(URDF), "servos": {"*_hip_*": "mx106/m4", "*_knee_pitch": "mx106/m4",
                                     "*_ankle_*": "mx106/m4", "*": "xm430/m1"}}, sort_keys=False))  # fmt: skip
    with pytest.raises(ValueError, match=r"^mixed.yaml: the servos' laws run on different supplies \(12, 15 V\)"):
        simulate_walk("ff", 1, vx=0.05, params=nimbro_walk_params(), urdf=URDF, servos=mixed, alpha=None,
                      frames=NIMBRO_FRAMES)  # fmt: skip


def test_placo_walks_it_with_both_knees_bent_forward_from_its_documented_stance():
    """A knee is one-sided: the gait's IK range (NIMBRO_KNEE_RANGE, 0.05…π rad) keeps both knees bent forward for
    the whole walk, at the slow and the fast speed (with the URDF's −1.8…4.5 rad goal range the right knee bent
    backwards, to −0.735 rad, from t = 0.75 s at 0.05 m/s, and both at 0.095 m/s); the stance is the one
    nimbro_walk's docstring states: knees 0.177 rad, hip pitch axis to ankle 0.438 m."""
    pytest.importorskip("placo")
    from servo_ff.dynamics.nimbro_walk import NIMBRO_FRAMES, NIMBRO_KNEE_RANGE, NIMBRO_KNEES, nimbro_walk_params
    from servo_ff.dynamics.walk_pattern import WalkEngine

    for vx in (0.05, 0.095):
        e = WalkEngine(URDF, nimbro_walk_params(), NIMBRO_FRAMES)
        stand = dict(zip(e.joints, e.q_stand))
        for side, knee in zip(("left", "right"), NIMBRO_KNEES):
            assert stand[knee] == pytest.approx(0.177, abs=0.005)
            hip, ankle = (e.robot.get_T_world_frame(f"{side}_{link}")[:3, 3] for link in ("thigh_link", "ankle_link"))
            assert np.linalg.norm(hip - ankle) == pytest.approx(0.438, abs=1e-3)
        plan = e.plan((vx, 0.0, 0.0), 16)
        knees = plan.q[:, [plan.joints.index(k) for k in NIMBRO_KNEES]]
        assert knees.min() >= NIMBRO_KNEE_RANGE[0] - 1e-6 > 0  # both, every sample
        assert (knees.max(axis=0) > 0.6).all()  # each swing bends its knee forward (measured 0.74 rad)
