"""Writes urdf/humanoid20.urdf, urdf/arm2.urdf, urdf/arm2r.urdf, urdf/op3.urdf, urdf/so101.urdf,
urdf/so_arm100.urdf and urdf/nimbro_op.urdf (run: python urdf/generate.py).

nimbro_op is the NimbRo-OP from its authors' own model: source table urdf/nimbro_tables.py, writer
urdf/nimbro_robot.py.

op3, so101 and so_arm100 are MuJoCo Menagerie's models as URDF: their source tables (every figure copied from
op3.xml / so101.xml / so_arm100.xml, files and commits cited there) are urdf/menagerie_tables.py, their writers
urdf/menagerie_robots.py. The others are our own
models, not copies: every number below is either a published specification (cited) or a stated estimate;
inertias are those of solid boxes with the stated dimensions and masses (I = m/12·(b² + c²)).
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent


def _sibling(name: str):
    """urdf/``name``.py, loaded by path (this script runs as a file, not from a package)."""
    import importlib.util
    import sys

    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def _menagerie_robots():
    """urdf/menagerie_robots.py (op3, so101, so_arm100)."""
    return _sibling("menagerie_robots")


def op3() -> str:
    return _menagerie_robots().op3()


def nimbro_op() -> str:
    """urdf/nimbro_op.urdf: the NimbRo-OP from its authors' model (urdf/nimbro_tables.py, urdf/nimbro_robot.py)."""
    return _sibling("nimbro_robot").nimbro_op()


def so101() -> str:
    return _menagerie_robots().so101()


def so_arm100() -> str:
    return _menagerie_robots().so_arm100()


CITATION = """
  humanoid20: a TeenSize Dynamixel humanoid with 20 actuated joints (2x6 legs, 2x3 arms, 2 head), written for
  servo_ff from published specifications; NOT copied from any existing URDF.

  Published facts used:
  * NimbRo-OP (M. Schwarz, M. Schreiber, S. Schueller, M. Missura, S. Behnke, "NimbRo-OP Humanoid TeenSize
    Open Platform", 7th Workshop on Humanoid Soccer Robots, Humanoids 2012; and Schwarz & Behnke, seed 002
    section 5): total height 0.95 m, total mass 6.6 kg, 20 DOF (6 per leg, 3 per arm, 2 neck), Dynamixel
    MX-106 actuators in the legs, MX-64 in arms and neck.
  * ROBOTIS e-Manual MX-106(2.0): 153 g, 40.2 x 65.1 x 46 mm, stall torque 8.4 N.m @ 12 V (10.0 N.m @ 14.8 V),
    no-load speed 45 rpm @ 12 V (4.7 rad/s), 4096 counts/rev.
  * ROBOTIS e-Manual MX-64(2.0): 126 g, 40.2 x 61.1 x 41 mm, stall torque 6.0 N.m @ 12 V,
    no-load speed 63 rpm @ 12 V (6.6 rad/s).
  Estimates (ours, stated): the split of the 6.6 kg over the links (servo masses from the e-Manual plus
  brackets/structure/electronics), segment lengths chosen to give 0.95 m standing height with thigh = shank
  = 0.21 m (leg length 0.51 m from hip pitch axis to sole), hip spacing 0.11 m, shoulder spacing 0.24 m;
  inertias of solid boxes. Effort limits: the MX-106 stall torque at 14.8 V (10 N.m) for legs, MX-64 at 12 V
  (6 N.m) for arms/neck; velocity limits: no-load speeds above.
  Frames follow REP-103 (x forward, y left, z up). Positive knee = flexion (leg contracts, as in seed 002
  Fig. 5); a crouch is hip_pitch = -a, knee = 2a, ankle_pitch = -a.
"""

ARM_CITATION = """
  arm2: a planar 2-joint arm (shoulder pitch + elbow pitch about y) on a fixed base, for fixed-base
  inverse-dynamics tests. Each link is a uniform box, 0.20 m long; masses 0.35 kg (upper arm, includes one
  MX-106 of 153 g, ROBOTIS e-Manual) and 0.25 kg (forearm). Estimates, ours.
"""

ARM2R_CITATION = """
  arm2r: the 2R arm of Duclusaud et al., Extended Friction Models for the Physics Simulation of Servo
  Actuators, section VI-B, rebuilt for servo_ff: an MX-106 shoulder and an MX-64 elbow, both pitch axes (y),
  hanging along -z at q = 0, fixed base; link lengths 0.18 m (shoulder-elbow and elbow-tip).
  Masses, centres of mass and inertias are those of the CAD export of that arm in Rhoban/bam
  (2R/2r_mx_mix/robot.xml, commit f81cb09), re-expressed in this frame (link along -z, joint axis y):
  * upper arm (bracket + the MX-64 elbow servo, 126 g by the ROBOTIS e-Manual): 0.2114 kg, COM 0.138 m from
    the shoulder, principal inertias 6.02e-4 / 5.62e-4 / 8.0e-5 kg.m2 (x / y = joint axis / z = along link);
  * forearm (segment + end weight): 1.0466 kg, COM 0.177 m from the elbow, inertias 1.98e-3 / 3.35e-3 /
    1.43e-3 kg.m2.
  The MX-106 shoulder servo sits in the fixed base. Effort and velocity limits: ROBOTIS e-Manual (MX-106:
  10 N.m at 14.8 V, 4.7 rad/s; MX-64: 6 N.m at 12 V, 6.6 rad/s); position limits those of the CAD model
  (+-110 deg shoulder, +-150 deg elbow).
"""


def box_inertia(m: float, sx: float, sy: float, sz: float) -> tuple[float, float, float]:
    return m / 12 * (sy**2 + sz**2), m / 12 * (sx**2 + sz**2), m / 12 * (sx**2 + sy**2)


def link(
    name: str, mass: float, com: tuple[float, float, float], size: tuple[float, float, float], collision: bool = False
) -> str:
    ixx, iyy, izz = box_inertia(mass, *size)
    c = " ".join(f"{v:.4f}" for v in com)
    s = " ".join(f"{v:.4f}" for v in size)
    geom = f"""
    <visual><origin xyz="{c}"/><geometry><box size="{s}"/></geometry></visual>"""
    if collision:
        geom += f"""
    <collision><origin xyz="{c}"/><geometry><box size="{s}"/></geometry></collision>"""
    return f"""
  <link name="{name}">
    <inertial>
      <origin xyz="{c}" rpy="0 0 0"/>
      <mass value="{mass:.4f}"/>
      <inertia ixx="{ixx:.6e}" ixy="0" ixz="0" iyy="{iyy:.6e}" iyz="0" izz="{izz:.6e}"/>
    </inertial>{geom}
  </link>"""


def joint(
    name: str,
    parent: str,
    child: str,
    xyz: tuple[float, float, float],
    axis: str,
    lower: float,
    upper: float,
    effort: float,
    velocity: float,
) -> str:
    ax = {"x": "1 0 0", "y": "0 1 0", "z": "0 0 1"}[axis]
    o = " ".join(f"{v:.4f}" for v in xyz)
    return f"""
  <joint name="{name}" type="revolute">
    <parent link="{parent}"/><child link="{child}"/>
    <origin xyz="{o}" rpy="0 0 0"/><axis xyz="{ax}"/>
    <limit lower="{lower:.4f}" upper="{upper:.4f}" effort="{effort}" velocity="{velocity}"/>
  </joint>"""


def fixed(name: str, parent: str, child: str, xyz: tuple[float, float, float]) -> str:
    o = " ".join(f"{v:.4f}" for v in xyz)
    return f"""
  <joint name="{name}" type="fixed">
    <parent link="{parent}"/><child link="{child}"/><origin xyz="{o}" rpy="0 0 0"/>
  </joint>"""


MX106 = dict(effort=10.0, velocity=4.7)
MX64 = dict(effort=6.0, velocity=6.6)


def humanoid() -> str:
    parts = [link("trunk", 1.95, (0.0, 0.0, 0.12), (0.12, 0.20, 0.26))]
    # head: neck yaw servo bracket + head with camera
    parts += [
        joint("neck_yaw", "trunk", "neck", (0.0, 0.0, 0.27), "z", -2.0, 2.0, **MX64),
        link("neck", 0.15, (0.0, 0.0, 0.02), (0.04, 0.04, 0.05)),
        joint("head_pitch", "neck", "head", (0.0, 0.0, 0.05), "y", -0.8, 0.8, **MX64),
        link("head", 0.30, (0.01, 0.0, 0.06), (0.10, 0.10, 0.12)),
    ]
    for side, s in (("l", 1.0), ("r", -1.0)):
        # arm: 0.60 kg (3 MX-64 = 0.378 kg + structure)
        parts += [
            joint(f"{side}_shoulder_pitch", "trunk", f"{side}_shoulder", (0.0, s * 0.12, 0.22), "y", -3.0, 3.0, **MX64),
            link(f"{side}_shoulder", 0.15, (0.0, s * 0.02, 0.0), (0.04, 0.05, 0.04)),
            joint(
                f"{side}_shoulder_roll",
                f"{side}_shoulder",
                f"{side}_upper_arm",
                (0.0, s * 0.04, 0.0),
                "x",
                -0.4 if s > 0 else -2.0,
                2.0 if s > 0 else 0.4,
                **MX64,
            ),
            link(f"{side}_upper_arm", 0.27, (0.0, 0.0, -0.075), (0.045, 0.045, 0.15)),
            joint(f"{side}_elbow", f"{side}_upper_arm", f"{side}_forearm", (0.0, 0.0, -0.15), "y", -2.2, 0.1, **MX64),
            link(f"{side}_forearm", 0.18, (0.0, 0.0, -0.085), (0.04, 0.04, 0.17)),
        ]
        # leg: 1.50 kg (6 MX-106 = 0.918 kg + structure)
        parts += [
            joint(f"{side}_hip_yaw", "trunk", f"{side}_hip_yaw_link", (0.0, s * 0.055, -0.01), "z", -0.8, 0.8, **MX106),
            link(f"{side}_hip_yaw_link", 0.08, (0.0, 0.0, -0.02), (0.05, 0.05, 0.03)),
            joint(
                f"{side}_hip_roll",
                f"{side}_hip_yaw_link",
                f"{side}_hip_roll_link",
                (0.0, 0.0, -0.04),
                "x",
                -0.5 if s > 0 else -0.8,
                0.8 if s > 0 else 0.5,
                **MX106,
            ),
            link(f"{side}_hip_roll_link", 0.30, (0.0, 0.0, 0.0), (0.07, 0.05, 0.05)),
            joint(
                f"{side}_hip_pitch", f"{side}_hip_roll_link", f"{side}_thigh", (0.0, 0.0, 0.0), "y", -1.8, 0.6, **MX106
            ),
            link(f"{side}_thigh", 0.38, (0.0, 0.0, -0.11), (0.05, 0.06, 0.21)),
            joint(f"{side}_knee", f"{side}_thigh", f"{side}_shank", (0.0, 0.0, -0.21), "y", 0.0, 2.4, **MX106),
            link(f"{side}_shank", 0.33, (0.0, 0.0, -0.10), (0.05, 0.06, 0.21)),
            joint(
                f"{side}_ankle_pitch", f"{side}_shank", f"{side}_ankle_link", (0.0, 0.0, -0.21), "y", -1.2, 1.0, **MX106
            ),
            link(f"{side}_ankle_link", 0.28, (0.0, 0.0, 0.0), (0.07, 0.05, 0.05)),
            joint(
                f"{side}_ankle_roll",
                f"{side}_ankle_link",
                f"{side}_foot",
                (0.0, 0.0, 0.0),
                "x",
                -0.8 if s > 0 else -0.5,
                0.5 if s > 0 else 0.8,
                **MX106,
            ),
            link(f"{side}_foot", 0.13, (0.01, 0.0, -0.035), (0.20, 0.11, 0.02), collision=True),
            fixed(f"{side}_sole_joint", f"{side}_foot", f"{side}_sole", (0.01, 0.0, -0.045)),
            f'\n  <link name="{side}_sole"/>',
        ]
    return '<?xml version="1.0"?>\n<!--' + CITATION + '-->\n<robot name="humanoid20">' + "".join(parts) + "\n</robot>\n"


def arm() -> str:
    parts = [
        '\n  <link name="base"/>',
        joint("shoulder", "base", "upper_arm", (0.0, 0.0, 0.0), "y", -3.0, 3.0, **MX106),
        link("upper_arm", 0.35, (0.0, 0.0, -0.10), (0.04, 0.04, 0.20)),
        joint("elbow", "upper_arm", "forearm", (0.0, 0.0, -0.20), "y", -2.5, 2.5, **MX106),
        link("forearm", 0.25, (0.0, 0.0, -0.10), (0.04, 0.04, 0.20)),
        fixed("tip_joint", "forearm", "tip", (0.0, 0.0, -0.20)),
        '\n  <link name="tip"/>',
    ]
    return '<?xml version="1.0"?>\n<!--' + ARM_CITATION + '-->\n<robot name="arm2">' + "".join(parts) + "\n</robot>\n"


def inertial_link(name: str, mass: float, com_z: float, ixx: float, iyy: float, izz: float, length: float) -> str:
    """A link along −z with a CAD-given mass, centre of mass and principal inertias (a thin box as visual)."""
    return f"""
  <link name="{name}">
    <inertial>
      <origin xyz="0 0 {com_z:.4f}" rpy="0 0 0"/>
      <mass value="{mass:.4f}"/>
      <inertia ixx="{ixx:.6e}" ixy="0" ixz="0" iyy="{iyy:.6e}" iyz="0" izz="{izz:.6e}"/>
    </inertial>
    <visual><origin xyz="0 0 {-length / 2:.4f}"/><geometry><box size="0.0300 0.0300 {length:.4f}"/></geometry></visual>
  </link>"""


def arm2r() -> str:
    parts = [
        '\n  <link name="base"/>',
        joint("shoulder", "base", "upper_arm", (0.0, 0.0, 0.0), "y", -1.9199, 1.9199, **MX106),
        inertial_link("upper_arm", 0.2114, -0.138, 6.02e-4, 5.62e-4, 8.0e-5, 0.18),
        joint("elbow", "upper_arm", "forearm", (0.0, 0.0, -0.18), "y", -2.618, 2.618, **MX64),
        inertial_link("forearm", 1.0466, -0.177, 1.98e-3, 3.35e-3, 1.43e-3, 0.18),
        fixed("tip_joint", "forearm", "tip", (0.0, 0.0, -0.18)),
        '\n  <link name="tip"/>',
    ]
    return (
        '<?xml version="1.0"?>\n<!--' + ARM2R_CITATION + '-->\n<robot name="arm2r">' + "".join(parts) + "\n</robot>\n"
    )


if __name__ == "__main__":
    outputs = {
        "humanoid20.urdf": humanoid(),
        "arm2.urdf": arm(),
        "arm2r.urdf": arm2r(),
        "op3.urdf": op3(),
        "so101.urdf": so101(),
        "so_arm100.urdf": so_arm100(),
        "nimbro_op.urdf": nimbro_op(),
    }
    for name, text in outputs.items():
        (HERE / name).write_text(text)
    print("wrote", *(HERE / name for name in outputs))
