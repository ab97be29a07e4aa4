"""dynamics.robot_scale: a leg's hip-to-sole length from a URDF, against op3.xml's figures (the source tables of
urdf/op3.urdf) and a small leg whose numbers are set here; the height scaled by leg length; one clear error each."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import pytest

from servo_ff.dynamics.robot import RobotModelError
from servo_ff.dynamics.robot_scale import NIMBRO_OP_LEG, hip_to_sole, scaled_height

ROOT = Path(__file__).resolve().parents[1]
OP3 = ROOT / "urdf" / "op3.urdf"


def _tables():
    name = "menagerie_tables"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "urdf" / "menagerie_tables.py")
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])
    return sys.modules[name]


#: A leg whose hip pitch sits 0.03 m forward of and 0.05 m below the hip roll (offsets that are not the leg's
#: length), thigh 0.20 m down and 0.01 m back, shank 0.18 m, sole 0.04 m under the ankle: hip to sole 0.42 m.
LEG = """<robot name="leg">
  <link name="base"><inertial><mass value="1"/><inertia ixx="1e-3" iyy="1e-3" izz="1e-3" ixy="0" ixz="0" iyz="0"/>
  </inertial></link>
  <link name="hip"><inertial><mass value="0.1"/><inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/>
  </inertial></link>
  <link name="thigh"><inertial><mass value="0.3"/><inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/>
  </inertial></link>
  <link name="shank"><inertial><mass value="0.2"/><inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/>
  </inertial></link>
  <link name="sole"/>
  <joint name="hip_roll" type="revolute"><parent link="base"/><child link="hip"/><origin xyz="0 0.05 -0.1"/>
    <axis xyz="1 0 0"/><limit lower="-1" upper="1" effort="5" velocity="5"/></joint>
  <joint name="hip_pitch" type="revolute"><parent link="hip"/><child link="thigh"/><origin xyz="0.03 0 -0.05"/>
    <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="5" velocity="5"/></joint>
  <joint name="knee" type="revolute"><parent link="thigh"/><child link="shank"/><origin xyz="-0.01 0 -0.20"/>
    <axis xyz="0 1 0"/><limit lower="0" upper="2" effort="5" velocity="5"/></joint>
  <joint name="sole_joint" type="fixed"><parent link="shank"/><child link="sole"/><origin xyz="0 0 -0.22"/></joint>
</robot>
"""


def test_op3_hip_to_sole_is_op3_xml_s_thigh_shank_and_sole():
    t = _tables()
    pos = {b.name: b.pos for b in t.OP3_BODIES}
    for side in "lr":
        sole = next(p for n, _, p in t.OP3_SOLES if n == f"{side}_sole")
        want = -(pos[f"{side}_knee_link"][2] + pos[f"{side}_ank_pitch_link"][2] + pos[f"{side}_ank_roll_link"][2])
        want -= sole[2]
        assert want == pytest.approx(0.25065, abs=1e-9)  # 0.11015 + 0.110 + 0 + 0.0305
        assert hip_to_sole(OP3, f"{side}_hip_pitch", f"{side}_sole") == pytest.approx(want, abs=1e-9)


def test_hip_to_sole_is_vertical_and_counts_only_below_the_hip_pitch(tmp_path):
    urdf = tmp_path / "leg.urdf"
    urdf.write_text(LEG)
    assert hip_to_sole(urdf, "hip_pitch", "sole") == pytest.approx(0.42, abs=1e-12)
    assert hip_to_sole(urdf, "knee", "sole") == pytest.approx(0.22, abs=1e-12)


def test_hip_to_sole_unknown_names_and_a_sole_above_are_one_line_naming_them(tmp_path):
    urdf = tmp_path / "leg.urdf"
    urdf.write_text(LEG)
    with pytest.raises(RobotModelError, match=r"leg\.urdf: no joint named 'hip_yaw'"):
        hip_to_sole(urdf, "hip_yaw", "sole")
    with pytest.raises(RobotModelError, match=r"leg\.urdf has no frame/link named 'foot'"):
        hip_to_sole(urdf, "hip_pitch", "foot")
    with pytest.raises(RobotModelError, match=r"leg\.urdf: 'base' is not below 'hip_pitch'"):
        hip_to_sole(urdf, "hip_pitch", "base")


def test_scaled_height_is_proportional_to_leg_length():
    assert scaled_height(0.015, 0.5, 0.25) == pytest.approx(0.0075, rel=1e-15)
    assert scaled_height(0.0, 0.5, 0.25) == 0.0
    assert scaled_height(0.02, 0.25, 0.5) == pytest.approx(0.04, rel=1e-15)


def test_the_sweeps_h_star_is_the_urdf_s_leg_over_nimbro_op_s():
    """bench/_op3_scaled.h_star_mm: the paper's 15 mm × op3.urdf's hip-to-sole / NimbRo-OP's 0.479 m, rounded to
    0.01 mm: the 7.85 mm docs/experiments.md and the sweep's RESULT report."""
    name = "_op3_scaled"
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
    scaled = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(scaled)
    leg = hip_to_sole(OP3, "l_hip_pitch", "l_sole")
    assert scaled.h_star_mm() == round(1000 * scaled_height(0.015, NIMBRO_OP_LEG, leg), 2) == 7.85


@pytest.mark.parametrize(
    "args, what",
    [
        ((0.015, 0.0, 0.25), "leg_from"),
        ((0.015, 0.5, -0.25), "leg_to"),
        ((0.015, math.nan, 0.25), "leg_from"),
        ((0.015, 0.5, math.inf), "leg_to"),
        ((-0.001, 0.5, 0.25), "height"),
        ((math.nan, 0.5, 0.25), "height"),
    ],
)
def test_scaled_height_refuses_non_lengths(args, what):
    with pytest.raises(ValueError, match=rf"^{what} must be a finite length"):
        scaled_height(*args)
