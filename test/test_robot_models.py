"""Robot models from published figures: urdf/op3.urdf and urdf/so101.urdf against the source tables of
urdf/menagerie_robots.py (copied from MuJoCo Menagerie's op3.xml / so101.xml), read back from the URDF text and
cross-checked through MuJoCo and pinocchio; the XM430-W350 preset against the e-manual's figures; and
``menagerie:<name>`` robots (the optional package mujoco-menagerie): its error lines and its loading path."""

from __future__ import annotations

import importlib.util
import math
import re
import shutil
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from generated_text import assert_same_generated_text

ROOT = Path(__file__).resolve().parents[1]
OP3, SO101, SO_ARM100 = (ROOT / "urdf" / f for f in ("op3.urdf", "so101.urdf", "so_arm100.urdf"))
SMALL_MJCF = ROOT / "test" / "data" / "menagerie_arm.xml"


def _module(name: str, path: Path):
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


MR = _module("menagerie_robots", ROOT / "urdf" / "menagerie_robots.py")
GEN = _module("urdf_generate", ROOT / "urdf" / "generate.py")


def mj_rotation(quat) -> np.ndarray:
    """MuJoCo's own quaternion → matrix (normalised first): an implementation independent of the generator's."""
    import mujoco

    q = np.asarray(quat if quat is not None else (1, 0, 0, 0), dtype=float)
    out = np.zeros(9)
    mujoco.mju_quat2Mat(out, q / np.linalg.norm(q))
    return out.reshape(3, 3)


def source_inertia(b) -> np.ndarray:
    """The source's inertia in the body frame: fullinertia as written, or diaginertia turned by its quat."""
    if len(b.inertia) == 6:
        ixx, iyy, izz, ixy, ixz, iyz = b.inertia
        return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    r = mj_rotation(b.iquat)
    return r @ np.diag(b.inertia) @ r.T


def urdf_tables(path: Path) -> tuple[dict, dict]:
    """link → (mass, com, inertia 3x3) and joint → (type, parent, child, xyz, rpy, axis, limits), as the URDF says."""
    root = ET.parse(path).getroot()
    vec = lambda e, k, d="0 0 0": np.array([float(x) for x in (e.get(k) if e is not None else d).split()])  # noqa: E731
    links = {}
    for ln in root.findall("link"):
        inertial = ln.find("inertial")
        if inertial is None:
            continue
        i = {k: float(v) for k, v in inertial.find("inertia").attrib.items()}
        tensor = np.array(
            [[i["ixx"], i["ixy"], i["ixz"]], [i["ixy"], i["iyy"], i["iyz"]], [i["ixz"], i["iyz"], i["izz"]]]
        )
        assert not vec(inertial.find("origin"), "rpy").any(), ln.get("name")  # inertia given in the link frame
        links[ln.get("name")] = (float(inertial.find("mass").get("value")), vec(inertial.find("origin"), "xyz"), tensor)
    joints = {}
    for j in root.findall("joint"):
        lim = j.find("limit")
        joints[j.get("name")] = (
            j.get("type"),
            j.find("parent").get("link"),
            j.find("child").get("link"),
            vec(j.find("origin"), "xyz"),
            vec(j.find("origin"), "rpy"),
            vec(j.find("axis"), "xyz", "1 0 0"),
            None if lim is None else {k: float(v) for k, v in lim.attrib.items()},
        )
    return links, joints


def check_against_source(path: Path, bodies) -> dict:
    """Every body: the URDF link's mass, centre of mass and inertia, its joint's frame and axis equal the table."""
    links, joints = urdf_tables(path)
    by_child = {j[2]: (name, j) for name, j in joints.items()}
    for b in bodies:
        if b.mass == 0:  # the source gives no inertial (so_arm100's fixed Base): none in the URDF either
            assert b.name not in links and b.parent is None
            continue
        mass, com, inertia = links[b.name]
        assert mass == b.mass, b.name
        np.testing.assert_array_equal(com, b.com, err_msg=b.name)
        np.testing.assert_allclose(inertia, source_inertia(b), rtol=1e-7, atol=1e-14, err_msg=b.name)
        if b.parent is None:
            assert b.name not in by_child
            continue
        name, (kind, parent, _, xyz, rpy, axis, lim) = by_child[b.name]
        assert parent == b.parent and name == (b.joint or f"{b.name}_fixed"), b.name
        np.testing.assert_allclose(xyz, b.pos, rtol=0, atol=1e-15, err_msg=b.name)  # so101.xml's 5.55112e-17: 0
        np.testing.assert_allclose(MR.rpy_matrix(rpy), mj_rotation(b.quat), atol=1e-8, err_msg=b.name)
        if b.joint is not None:
            assert kind == "revolute"
            np.testing.assert_array_equal(axis, b.axis, err_msg=b.joint)
            if b.range is not None:
                assert (lim["lower"], lim["upper"]) == b.range, b.joint
    return links


# ------------------------------------------------------------------------------------------------ ROBOTIS OP3
OP3_JOINTS = (
    "head_pan head_tilt l_sho_pitch l_sho_roll l_el r_sho_pitch r_sho_roll r_el l_hip_yaw l_hip_roll l_hip_pitch "
    "l_knee l_ank_pitch l_ank_roll r_hip_yaw r_hip_roll r_hip_pitch r_knee r_ank_pitch r_ank_roll"
).split()  # op3.xml's 20 joints, in its file order


@pytest.mark.parametrize("bodies", ["OP3_BODIES", "SO101_BODIES", "SO_ARM100_BODIES"])
def test_a_drawn_box_does_not_turn_with_the_last_ulp_of_its_inertia(bodies):
    """eigh leaves each principal axis's sign to rounding. Another BLAS rounds ``r·diag·rᵀ`` differently by an ulp
    of the largest entry, and the near-zero products change sign: before equivalent_box fixed the signs, such noise
    turned 9 OP3 boxes (hip yaw, knees, elbows, shoulder pitch, head pan) by π in 110 of 20 × 20 trials."""
    rng = np.random.default_rng(0)
    for b in getattr(MR, bodies):
        if b.mass == 0:
            continue
        inertia = MR.inertia_tensor(b)
        axes, size = MR.equivalent_box(b.mass, inertia)
        assert np.allclose(axes.T @ axes, np.eye(3), atol=1e-12) and np.linalg.det(axes) > 0
        for _ in range(20):
            e = rng.uniform(-2, 2, (3, 3)) * np.spacing(np.abs(inertia).max())
            axes2, size2 = MR.equivalent_box(b.mass, inertia + (e + e.T) / 2)
            assert np.allclose(size2, size, rtol=1e-6), b.name
            assert np.abs(axes2 - axes).max() < 1e-6, (b.name, axes, axes2)


def test_a_generated_file_differs_from_its_commit_by_more_than_the_last_digits_is_caught():
    text = SO101.read_text()
    assert_same_generated_text(text.replace("0.28249560251446881", "0.28249560251446898"), text)
    m = re.search(r'mass value="([0-9.]+)"', text)
    moved = text.replace(m.group(0), f'mass value="{float(m.group(1)) * (1 + 1e-9)!r}"', 1)
    with pytest.raises(AssertionError, match="line"):
        assert_same_generated_text(moved, text)
    with pytest.raises(AssertionError, match="shoulder_pan"):
        assert_same_generated_text(text.replace("shoulder_pan", "shoulder_pen", 1), text)


def test_generated_files_are_what_generate_py_writes():
    assert_same_generated_text(GEN.op3(), OP3.read_text())
    assert_same_generated_text(GEN.so101(), SO101.read_text())
    assert_same_generated_text(GEN.so_arm100(), SO_ARM100.read_text())
    assert "13d6c48b8f59d2c4badee7756b4ea3532613cddf" in SO_ARM100.read_text().split("-->")[0]
    assert "361161b2b9b901d8f4133cb113aa6b26c8ca1bdc" in OP3.read_text().split("-->")[0]
    assert "191a7ba5e6d5ca0af05303bf725a644bcceffb0c" in SO101.read_text().split("-->")[0]


def test_op3_every_body_equals_op3_xml():
    links = check_against_source(OP3, MR.OP3_BODIES)
    total = sum(m for m, _, _ in links.values())
    assert total == pytest.approx(3.14747, abs=1e-9)  # op3.xml's bodies; ROBOTIS states 3.5 kg with battery
    assert 3.0 < total < 3.6
    _, joints = urdf_tables(OP3)
    revolute = [n for n, j in joints.items() if j[0] == "revolute"]
    assert sorted(revolute) == sorted(OP3_JOINTS) and len(revolute) == 20
    for n in revolute:  # op3.xml gives no range: ROBOTIS's kinematics' (in π); XM430-W350 e-manual at 12 V
        lo, hi = (round(v * math.pi, 6) for v in MR.OP3_ROBOTIS_RANGE_PI[n])
        assert joints[n][6] == {"lower": lo, "upper": hi, "effort": 4.1, "velocity": 4.8171}
    # ROBOTIS op3_kinematics_dynamics.cpp: l_knee −0.1π…0.7π about +y, r_knee −0.7π…0.1π about −y (forward only)
    assert (joints["l_knee"][6]["lower"], joints["l_knee"][6]["upper"]) == (-0.314159, 2.199115)
    assert (joints["r_knee"][6]["lower"], joints["r_knee"][6]["upper"]) == (-2.199115, 0.314159)
    # the foot boxes, as op3.xml's class "foot"; the only collision geometry
    root = ET.parse(OP3).getroot()
    boxes = [
        (ln.get("name"), [float(v) for v in c.find("geometry/box").get("size").split()])
        for ln in root.findall("link")
        for c in ln.findall("collision")
    ]
    assert boxes == [(f.body, [2 * h for h in f.half]) for f in MR.OP3_FEET]


def test_op3_in_mujoco_and_pinocchio_has_op3_xml_s_masses_inertias_and_axes():
    pytest.importorskip("mujoco")
    pin = pytest.importorskip("pinocchio")
    from servo_ff.dynamics.mujoco_model import build_model

    sim = build_model(OP3, base="floating", feet=("l_ank_roll_link", "r_ank_roll_link"))
    m = sim.model
    assert sim.joint_names == tuple(OP3_JOINTS)
    assert m.body_mass.sum() == pytest.approx(3.14747, abs=1e-9)
    for b in MR.OP3_BODIES:
        body = m.body(b.name)
        assert body.mass[0] == pytest.approx(b.mass, rel=1e-12)
        np.testing.assert_allclose(body.ipos, b.com, atol=1e-12)
        # principal inertias and their axes: MuJoCo's (body_inertia, body_iquat) rebuild op3.xml's tensor
        r = mj_rotation(body.iquat)
        np.testing.assert_allclose(r @ np.diag(body.inertia) @ r.T, source_inertia(b), rtol=1e-6, atol=1e-13)
        if b.joint:
            np.testing.assert_allclose(m.joint(b.joint).axis, b.axis, atol=1e-12)
    feet = [g for g in range(m.ngeom) if m.geom_contype[g] and m.geom_bodyid[g] > 0]
    np.testing.assert_allclose(m.geom_size[feet], [f.half for f in MR.OP3_FEET], atol=1e-12)

    model = pin.buildModelFromUrdf(str(OP3), pin.JointModelFreeFlyer())
    assert sum(i.mass for i in model.inertias) == pytest.approx(3.14747, abs=1e-9)
    for b in MR.OP3_BODIES:
        inertia = model.inertias[model.getJointId(b.joint or "root_joint")]
        assert inertia.mass == pytest.approx(b.mass, rel=1e-12)
        np.testing.assert_allclose(inertia.lever, b.com, atol=1e-12)
        np.testing.assert_allclose(inertia.inertia, source_inertia(b), rtol=1e-6, atol=1e-13)
    for name in ("l_sole", "r_sole"):
        assert model.existFrame(name)


def test_op3_stands_on_its_xm430s():
    """config/servos_op3.yaml (20 × xm430/m1, current-based position control): 2 s holding q = 0 on the ground,
    the trunk stays at its height (within 2 mm; the servos' sag) and upright (within 0.05 rad)."""
    mujoco = pytest.importorskip("mujoco")
    from servo_ff.dynamics.mujoco_model import place_on_ground
    from servo_ff.dynamics.mujoco_servos import MujocoServos
    from servo_ff.models.presets import preset

    servos = MujocoServos.from_description(None, ROOT / "config" / "servos_op3.yaml", base="floating")  # its robot:
    assert servos.joint_names == tuple(OP3_JOINTS)
    assert all(p == preset("xm430", "m1") for p in servos.params.values())
    q0 = np.zeros(20)
    height = place_on_ground(servos.sim, servos.qadr, q0)
    servos.set_initial_state()
    servos.reset()
    m, d = servos.model, servos.data
    for k in range(2000):
        if k % 8 == 0:
            servos.command(q0)
        servos.before_step()
        mujoco.mj_step(m, d)
        servos.after_step()
    assert d.qpos[2] == pytest.approx(height, abs=2e-3)
    tilt = 2 * math.acos(min(1.0, abs(d.qpos[3])))
    assert tilt < 0.05 and np.abs(d.qpos[servos.qadr]).max() < 0.05


def test_op3_contact_is_op3_xml_s(tmp_path):
    """op3.xml's default class gives every geom solref (0.004, 1) (Menagerie's scene: the floor too); friction,
    condim and solimp are MuJoCo's defaults there. servos_op3.yaml's contact_solref puts that on the URDF's foot
    boxes, the ground and the obstacle (before: MuJoCo's 0.02; walking, the loaded feet sank 0.9 mm instead of 0.1)."""
    pytest.importorskip("mujoco")
    from servo_ff.dynamics.mujoco_model import SimModelError
    from servo_ff.dynamics.mujoco_servos import MujocoServos
    from servo_ff.dynamics.servo_map import ServoMapError

    yaml_op3 = ROOT / "config" / "servos_op3.yaml"
    servos = MujocoServos.from_description(None, yaml_op3, base="floating", obstacle_slot=True)
    m = servos.model
    colliding = [g for g in range(m.ngeom) if m.geom_contype[g] or m.geom_conaffinity[g]]
    assert len(colliding) == 4 + 2  # two boxes per foot, the ground, the obstacle
    np.testing.assert_array_equal(m.geom_solref[colliding], [[0.004, 1.0]] * 6)
    np.testing.assert_allclose(m.geom_friction[colliding], [[1.0, 0.005, 1e-4]] * 6)
    np.testing.assert_array_equal(m.geom_condim[colliding], 3)
    np.testing.assert_allclose(m.geom_solimp[colliding], [[0.9, 0.95, 0.001, 0.5, 2.0]] * 6)
    text = yaml_op3.read_text().replace("robot: ../urdf/op3.urdf", f"robot: {OP3}")
    for bad, line in (("[0.001, 1]", "needs a time constant >= 2·dt"), ("0.004", "contact_solref must be")):
        (tmp_path / "s.yaml").write_text(text.replace("contact_solref: [0.004, 1]", f"contact_solref: {bad}"))
        with pytest.raises((SimModelError, ServoMapError), match=line) as e:
            MujocoServos.from_description(None, tmp_path / "s.yaml", base="floating")
        assert "\n" not in str(e.value)


def test_contact_solref_a_mjcf_does_not_take_is_one_line(caplog):
    """contact_solref is for a URDF's contacts: with an MJCF (its own contact kept) the key is not applied, and
    says so in one warning naming the file, not silently."""
    pytest.importorskip("mujoco")
    import logging

    from servo_ff.dynamics.mujoco_servos import MujocoServos

    spec = {"servos": {"*": "sts3215/m1"}, "contact_solref": [0.004, 1]}
    with caplog.at_level(logging.WARNING, logger="servo_ff"):
        servos = MujocoServos.from_description(SMALL_MJCF, spec)
    assert servos.model.geom_solref[0].tolist() == [0.02, 1.0]  # the MJCF's own (MuJoCo's default)
    lines = [r.getMessage() for r in caplog.records if "contact_solref" in r.getMessage()]
    assert len(lines) == 1 and "menagerie_arm.xml" in lines[0] and "not applied" in lines[0], lines


def test_contact_solref_true_is_no_time_constant():
    """YAML's ``true`` is a Python int: [true, 1] was taken as a 1 s time constant."""
    pytest.importorskip("mujoco")
    from servo_ff.dynamics.mujoco_servos import MujocoServos
    from servo_ff.dynamics.servo_map import ServoMapError

    spec = {"servos": {"*": "xm430/m1"}, "contact_solref": [True, 1]}
    with pytest.raises(ServoMapError, match="contact_solref must be"):
        MujocoServos.from_description(OP3, spec, base="floating")


# ------------------------------------------------------------------------------------------------ SO-101
def test_so101_every_body_equals_so101_xml():
    links = check_against_source(SO101, MR.SO101_BODIES)
    cam = links["camera_mount"]  # not in the source's inertials: 12 g (its mesh mass) as a stated box
    assert cam[0] == 0.012 and "our estimate" in SO101.read_text().split("-->")[0]
    assert sum(m for m, _, _ in links.values()) == pytest.approx(0.644006, abs=1e-9)
    _, joints = urdf_tables(SO101)
    revolute = [n for n, j in joints.items() if j[0] == "revolute"]
    assert revolute == ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"]
    assert all(joints[n][6]["effort"] == 1.9 and joints[n][6]["velocity"] == 4.7 for n in revolute)


def check_arm_in_mujoco_and_pinocchio(path: Path, bodies, fused: dict[str, float]) -> None:
    """Body frames at q = 0 composed from the source's body pos/quat with MuJoCo's quaternion maths, masses,
    principal inertias and ranges in MuJoCo, and inertias in pinocchio (``fused``: mass welded onto a body)."""
    import mujoco
    import pinocchio as pin

    from servo_ff.dynamics.mujoco_model import build_model

    sim = build_model(path)
    m, d = sim.model, sim.data
    mujoco.mj_kinematics(m, d)
    frames = {}
    for b in bodies:
        p, r = frames.get(b.parent, (np.zeros(3), np.eye(3)))
        frames[b.name] = (p + r @ np.asarray(b.pos, dtype=float), r @ mj_rotation(b.quat))
    model = pin.buildModelFromUrdf(str(path))
    for b in bodies[1:]:
        body = m.body(b.name)
        np.testing.assert_allclose(d.xpos[body.id], frames[b.name][0], atol=1e-9, err_msg=b.name)
        np.testing.assert_allclose(d.xmat[body.id].reshape(3, 3), frames[b.name][1], atol=1e-9, err_msg=b.name)
        assert body.mass[0] == pytest.approx(b.mass + fused.get(b.name, 0.0), rel=1e-12)
        np.testing.assert_allclose(m.joint(b.joint).range, b.range, atol=0)
        if b.name not in fused:
            np.testing.assert_allclose(np.sort(body.inertia), np.linalg.eigvalsh(source_inertia(b)), rtol=1e-6)
            inertia = model.inertias[model.getJointId(b.joint)]
            assert inertia.mass == pytest.approx(b.mass, rel=1e-12)
            np.testing.assert_allclose(inertia.inertia, source_inertia(b), rtol=1e-6, atol=1e-13)


def test_so101_in_mujoco_and_pinocchio_matches_so101_xml_kinematics_and_inertias():
    pytest.importorskip("mujoco")
    pytest.importorskip("pinocchio")
    check_arm_in_mujoco_and_pinocchio(SO101, MR.SO101_BODIES, {"gripper": 0.012})  # the welded camera mount


def test_so_arm100_every_body_equals_so_arm100_xml():
    mujoco = pytest.importorskip("mujoco")
    pytest.importorskip("pinocchio")
    links = check_against_source(SO_ARM100, MR.SO_ARM100_BODIES)
    assert sum(m for m, _, _ in links.values()) == pytest.approx(0.6089654, abs=1e-9)
    for name, euler in MR.SO_ARM100_EULER.items():  # the euler frames, by MuJoCo's own conversion
        q = np.zeros(4)
        mujoco.mju_euler2Quat(q, np.asarray(euler, dtype=float), "xyz")
        body = next(b for b in MR.SO_ARM100_BODIES if b.name == name)
        np.testing.assert_allclose(body.quat, q, atol=1e-15)
    _, joints = urdf_tables(SO_ARM100)
    assert [n for n, j in joints.items() if j[0] == "revolute"] == [
        "Rotation",
        "Pitch",
        "Elbow",
        "Wrist_Pitch",
        "Wrist_Roll",
        "Jaw",
    ]
    check_arm_in_mujoco_and_pinocchio(SO_ARM100, MR.SO_ARM100_BODIES, {})
    from servo_ff.dynamics.mujoco_servos import MujocoServos

    servos = MujocoServos.from_description(None, ROOT / "config" / "servos_so_arm100.yaml")  # its robot:
    assert len(servos.joint_names) == 6 and not servos.sim.floating


# ------------------------------------------------------------------------------------------------ XM430-W350
def test_xm430_preset_from_the_e_manual_figures():
    """kt = τ_s/I_s and R = V/I_s (4.1 N·m, 2.3 A at 12 V); the model's no-load speed is the e-manual's 46 rpm;
    the firmware row is current-based position control (P gain 800/128 per count, 2.69 mA units, 1193 limit)."""
    from servo_ff.models.datasheet import XM430_W350_DATASHEET, motor_from_servo
    from servo_ff.models.firmware import FIRMWARE_TABLE
    from servo_ff.models.presets import preset

    p = preset("xm430", "m1")
    assert p is not None and preset("XM430-W350", "m1") == p
    assert p.kt == pytest.approx(4.1 / 2.3, rel=1e-12) and p.R == pytest.approx(12.0 / 2.3, rel=1e-12)
    motor = motor_from_servo(XM430_W350_DATASHEET)
    assert motor.eta == pytest.approx(4.1 / 2.3 / (12.0 / (46 * 2 * math.pi / 60)), rel=1e-12)  # Eq. 13
    kv = p.friction["friction_viscous"]
    stall = p.kt / p.R * 12.0
    no_load = p.kt * 12.0 / (p.kt**2 + p.R * kv)  # τ = kt/R·V − (kt²/R + K_v)·ω = 0
    assert stall == pytest.approx(4.1, rel=1e-12) and no_load == pytest.approx(46 * 2 * math.pi / 60, rel=1e-12)
    assert (p.armature, p.friction["friction_base"]) == (0.045, 0.03)  # op3.xml's joint defaults, stated
    fw, source = FIRMWARE_TABLE["xm430"]
    assert (fw.control, fw.vin, fw.kp, fw.max_pwm) == ("current", 12.0, 800.0, 1.0)
    assert fw.error_gain == pytest.approx(4096 / (2 * math.pi) / 128 * 2.69e-3, rel=1e-12)
    assert fw.current_limit == pytest.approx(1193 * 2.69e-3, rel=1e-12)
    assert "not identified" in source and "Operating Mode(11) = 5" in source
    assert FIRMWARE_TABLE["xm430_position"].law.control == "voltage"
    from servo_ff.models.params import ParameterError
    from servo_ff.models.schwarz_behnke import alpha_hat_from_actuator

    with pytest.raises(ParameterError, match=r"^xm430: the α̂ of Schwarz & Behnke Eq\. 19 assumes a voltage"):
        alpha_hat_from_actuator(p)  # the feed-forward's α̂ is a voltage-law result: refused, not silently wrong


# ------------------------------------------------------------------------------------------------ menagerie:
def test_menagerie_without_the_package_is_one_line(monkeypatch):
    pytest.importorskip("mujoco")
    from servo_ff.dynamics.mujoco_model import SimModelError, build_model

    monkeypatch.setitem(sys.modules, "mujoco_menagerie", None)  # import fails as when it is not installed
    with pytest.raises(SimModelError) as e:
        build_model("menagerie:robotis_op3")
    assert str(e.value) == (
        "menagerie:robotis_op3: needs the optional package mujoco-menagerie (pip install mujoco-menagerie), "
        "which is not installed"
    )


def test_menagerie_download_missing_is_one_line(monkeypatch, tmp_path):
    """No network here: the archive URL points at a missing local file, the package's DownloadError path."""
    pytest.importorskip("mujoco")
    pytest.importorskip("mujoco_menagerie")
    from servo_ff.dynamics.mujoco_model import SimModelError, build_model

    monkeypatch.delenv("MENAGERIE_ROOT", raising=False)
    monkeypatch.setenv("MENAGERIE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("MENAGERIE_BASE_URL", (tmp_path / "absent").as_uri())
    with pytest.raises(SimModelError) as e:
        build_model("menagerie:robotis_op3")
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("menagerie:robotis_op3: cannot download robot 'robotis_op3' (")
    assert msg.endswith("set MENAGERIE_ROOT to a Menagerie checkout or MENAGERIE_CACHE_DIR to a cache that holds it")
    with pytest.raises(SimModelError, match=r"^menagerie:robotis_op4: Unknown robot 'robotis_op4'\. Did you mean"):
        build_model("menagerie:robotis_op4")


def test_menagerie_robot_loads_from_the_cache_with_a_servo_yaml(monkeypatch, tmp_path):
    """A Menagerie root holding the small test MJCF as robotstudio_so101's scene: the servo YAML names it
    (robot: menagerie:robotstudio_so101); its own position actuators are switched off, the servos hold the goal."""
    mujoco = pytest.importorskip("mujoco")
    pytest.importorskip("mujoco_menagerie")
    from servo_ff.dynamics.mujoco_servos import MujocoServos

    (tmp_path / "robotstudio_so101").mkdir()
    shutil.copy(SMALL_MJCF, tmp_path / "robotstudio_so101" / "scene.xml")
    monkeypatch.setenv("MENAGERIE_ROOT", str(tmp_path))
    yaml_file = tmp_path / "servos.yaml"
    yaml_file.write_text("robot: menagerie:robotstudio_so101\nservos:\n  '*': sts3215/m1\n")
    servos = MujocoServos.from_description(None, yaml_file)
    assert servos.joint_names == ("shoulder", "elbow") and servos.sim.source == "scene.xml"
    assert servos.disabled_actuators == ("shoulder_act", "elbow_act")
    assert not servos.model.actuator_gainprm.any() and not servos.model.actuator_biasprm.any()
    np.testing.assert_allclose(servos.model.body_mass[2:], [0.1, 0.08])
    m, d = servos.model, servos.data
    for k in range(1000):
        if k % 10 == 0:
            servos.command([0.5, -0.3])
        servos.before_step()
        mujoco.mj_step(m, d)
        servos.after_step()
    # the STS3215 servos reach the goals (gravity sag < 10 mrad); kp 50 actuators at ctrl 0 would hold ≈ 0
    np.testing.assert_allclose(d.qpos[servos.qadr], [0.5, -0.3], atol=0.01)


def test_mujoco_backend_boots_from_the_servo_yaml_s_robot(monkeypatch, tmp_path):
    """servo_sim_node's model parameters: no robot_description / urdf_path / mjcf_path, the servo YAML's robot:
    menagerie:<name> is used (as an MJCF: its own base); mjcf_path: menagerie:<name> too."""
    pytest.importorskip("rclpy")
    pytest.importorskip("mujoco_menagerie")
    from servo_ff.nodes.mujoco_params import servos_from_boot

    (tmp_path / "robotstudio_so101").mkdir()
    shutil.copy(SMALL_MJCF, tmp_path / "robotstudio_so101" / "scene.xml")
    monkeypatch.setenv("MENAGERIE_ROOT", str(tmp_path))
    cfg = tmp_path / "servos.yaml"
    cfg.write_text("robot: menagerie:robotstudio_so101\nservos:\n  '*': sts3215/m1\n")
    boot = dict(
        robot_description="",
        urdf_path="",
        mjcf_path="",
        servo_config=str(cfg),
        floating_base=True,  # ignored for an MJCF: the file decides (no free joint here)
        feet=[""],
        physics_dt=0.001,
        counts_per_rev=4096,
        latency=1,
        position_noise=0.0,
        velocity_noise=0.0,
        gyro_noise=0.0,
        accel_noise=0.0,
        noise_seed=0,
        obstacle_foot="",
    )
    name, _, servos = servos_from_boot(boot)
    assert name == "menagerie:robotstudio_so101" and servos.joint_names == ("shoulder", "elbow")
    assert not servos.sim.floating
    name, _, servos = servos_from_boot({**boot, "mjcf_path": "menagerie:robotstudio_so101/scene"})
    assert servos.joint_names == ("shoulder", "elbow")
    cfg.write_text("servos:\n  '*': sts3215/m1\n")
    with pytest.raises(ValueError, match="robot: in the servo YAML"):
        servos_from_boot(boot)
