"""The parameters of ``servo_sim_node`` with ``backend: mujoco``: their one description, and the model-defining
subset read before the table is declared (the joint list comes from the model)."""

from __future__ import annotations

from typing import Any

from rclpy.exceptions import ParameterUninitializedException

from servo_ff.io.paths import resolve_path
from servo_ff.ros.common import ParamSpec
from servo_ff.ros.robot_description import timeout_spec, wait_robot_description
from servo_ff.ros.sim_clock import sim_time_specs

#: parameters that define the model, read at start-up before the rest is declared
BOOT_KEYS = (
    "robot_description",
    "robot_description_timeout",
    "urdf_path",
    "mjcf_path",
    "servo_config",
    "floating_base",
    "feet",
    "physics_dt",
    "counts_per_rev",
    "latency",
    "position_noise",
    "velocity_noise",
    "gyro_noise",
    "accel_noise",
    "noise_seed",
    "obstacle_foot",
)


def mujoco_specs() -> list[ParamSpec]:
    """Parameters of the MuJoCo backend besides the servo interface (read-only ones fix the model)."""
    from servo_ff.dynamics.mujoco_model import OBSTACLE_SHAPES

    return [
        ParamSpec("backend", "mujoco", "physics backend of servo_sim_node", read_only=True, choices=("mujoco",)),
        ParamSpec(
            "robot_description",
            "",
            "URDF XML (takes precedence over urdf_path / mjcf_path; none of the three and no robot: in the servo "
            "YAML: the robot_description topic)",
            read_only=True,
        ),
        timeout_spec(),
        ParamSpec(
            "urdf_path",
            "",
            "URDF file of the robot, or menagerie:<name>[/<entry>] (a MuJoCo Menagerie robot)",
            read_only=True,
        ),
        ParamSpec(
            "mjcf_path",
            "",
            "MJCF file of the robot (its own base, ground and sensors), or menagerie:<name>[/<entry>]; none of "
            "robot_description, urdf_path, mjcf_path: the servo YAML's robot:, else the robot_description topic",
            read_only=True,
        ),
        ParamSpec(
            "servo_config",
            "",
            "servo YAML: servo type, friction model (and kp, firmware row) per joint (servo_ff.dynamics.servo_map)",
            read_only=True,
        ),
        ParamSpec(
            "floating_base",
            False,
            "URDF: free joint on the root link, ground plane, collision geometry "
            "(legged robots); false: root welded to the world (arms)",
            read_only=True,
        ),
        ParamSpec(
            "feet",
            [""],
            "foot links (floating base; empty: the servo YAML's feet:, else links named *foot*; first = left)",
            read_only=True,
        ),
        ParamSpec(
            "initial_position",
            [0.0],
            "joint positions at start-up and reset (floating base: the robot "
            "is placed upright on the ground in this pose)",
            "rad",
            lo=-1e3,
            hi=1e3,
            per_joint=True,
            read_only=True,
        ),
        ParamSpec(
            "physics_dt",
            0.001,
            "MuJoCo time step (each control period is split into equal steps <= this)",
            "s",
            lo=1e-5,
            hi=0.1,
            read_only=True,
        ),
        ParamSpec(
            "counts_per_rev",
            0,
            "encoder quantisation, counts per revolution (0: off; Dynamixel: 4096)",
            lo=0,
            hi=1 << 24,
            read_only=True,
        ),
        ParamSpec(
            "latency",
            0,
            "control periods between a goal and the firmware acting on it (bus cycle)",
            lo=0,
            hi=1000,
            read_only=True,
        ),
        ParamSpec("position_noise", 0.0, "std of the noise on positions read", "rad", lo=0.0, hi=1.0, read_only=True),
        ParamSpec(
            "velocity_noise", 0.0, "std of the noise on velocities read", "rad/s", lo=0.0, hi=100.0, read_only=True
        ),
        ParamSpec("gyro_noise", 0.0, "std of the gyro noise", "rad/s", lo=0.0, hi=100.0, read_only=True),
        ParamSpec("accel_noise", 0.0, "std of the accelerometer noise", "m/s²", lo=0.0, hi=1000.0, read_only=True),
        ParamSpec("noise_seed", 0, "seed of the noise", lo=0, hi=2**31 - 1, read_only=True),
        *sim_time_specs(as_fast_batch=0.01),
        ParamSpec(
            "support_topic",
            "support_coefficient",
            "topic of the measured support coefficient (Float64)",
            read_only=True,
        ),
        ParamSpec(
            "obstacle_height",
            0.0,
            "a box this high under obstacle_foot, placed when set while running "
            "(0: none); for Schwarz & Behnke's obstacle experiment",
            "m",
            lo=0.0,
            hi=0.5,
        ),
        ParamSpec("obstacle_foot", "", "foot link the obstacle goes under (empty: the second foot)", read_only=True),
        ParamSpec(
            "obstacle_shape",
            "foot_box",
            "the obstacle_height obstacle: foot_box (a box under obstacle_foot's footprint) or board (a board across "
            "the path, 0.4 m wide, 1 m long, its near edge 5 mm ahead of the feet when obstacle_height is set)",
            read_only=True,
            choices=OBSTACLE_SHAPES,
        ),
        ParamSpec(
            "odom_frame", "odom", "frame of the floating base's pose on odom (nav_msgs/Odometry)", read_only=True
        ),
    ]


def boot_values(node) -> dict[str, Any]:
    """The :data:`BOOT_KEYS` overrides of ``node`` (defaults from :func:`mujoco_specs`), each declared and
    undeclared again so that the table can declare it with its descriptor; no robot given: the URDF of the
    ``robot_description`` topic (ValueError naming it if none comes)."""
    defaults = {s.name: s.default for s in mujoco_specs()}
    out = {}
    for name in BOOT_KEYS:
        node.declare_parameter(name, defaults[name])
        try:
            out[name] = node.get_parameter(name).value
        except ParameterUninitializedException:
            out[name] = defaults[name]
        finally:
            node.undeclare_parameter(name)
    if not (out["robot_description"].strip() or out["urdf_path"] or out["mjcf_path"] or _yaml_robot(out)):
        out["robot_description"] = wait_robot_description(node, out["robot_description_timeout"])  # the topic's
    return out


def _yaml_robot(b: dict[str, Any]) -> bool:
    """The servo YAML of ``b`` names its robot (``robot:``)."""
    from servo_ff.dynamics.servo_map import servo_yaml_robot

    cfg = resolve_path(b["servo_config"]) if b["servo_config"] else None
    return cfg is not None and cfg.is_file() and servo_yaml_robot(cfg) is not None


def servos_from_boot(b: dict[str, Any]):
    """(source name, ServoOptions, MujocoServos) from the :data:`BOOT_KEYS` values ``b``; ValueError /
    FileNotFoundError naming the parameter for a missing or contradictory source."""
    from servo_ff.dynamics.menagerie import is_menagerie
    from servo_ff.dynamics.mujoco_servos import MujocoServos, ServoOptions
    from servo_ff.dynamics.servo_map import servo_yaml_robot

    if not b["servo_config"]:
        raise ValueError("backend mujoco needs servo_config (a servo YAML: servo type per joint)")
    cfg = resolve_path(b["servo_config"])
    if not cfg.is_file():
        raise FileNotFoundError(f"servo_config {b['servo_config']!r}: file not found")
    mjcf = False
    if b["robot_description"].strip():
        source, name = b["robot_description"], "robot_description"
    elif b["urdf_path"] or b["mjcf_path"]:
        if b["urdf_path"] and b["mjcf_path"]:
            raise ValueError("set urdf_path or mjcf_path, not both")
        key = "urdf_path" if b["urdf_path"] else "mjcf_path"
        source, name, mjcf = _robot_file(b[key], key)
        mjcf = mjcf or key == "mjcf_path"
    elif (robot := servo_yaml_robot(cfg)) is not None:
        source, name, mjcf = _robot_file(robot, f"{b['servo_config']}: robot")
    else:
        raise ValueError(
            "backend mujoco needs robot_description, urdf_path, mjcf_path (menagerie:<name> too) or robot: in the "
            "servo YAML"
        )
    mjcf = mjcf or is_menagerie(source)
    options = ServoOptions(
        counts_per_rev=int(b["counts_per_rev"]) or None,
        latency=int(b["latency"]),
        position_noise=b["position_noise"],
        velocity_noise=b["velocity_noise"],
        gyro_noise=b["gyro_noise"],
        accel_noise=b["accel_noise"],
        seed=b["noise_seed"],
    )
    base = None if mjcf else ("floating" if b["floating_base"] else "fixed")
    servos = MujocoServos.from_description(
        source,
        cfg,
        base=base,
        feet=[f for f in b["feet"] if f] or None,
        dt=float(b["physics_dt"]),
        options=options,
        obstacle_slot=base == "floating",
    )
    return name, options, servos


def _robot_file(raw: str, key: str):
    """(source, name, is MJCF) of a robot file parameter: ``menagerie:<name>[/<entry>]`` (resolved when the model is
    built) or an existing URDF/MJCF file (MJCF: a ``.xml`` whose root is ``<mujoco>``)."""
    from servo_ff.dynamics.menagerie import is_menagerie

    if is_menagerie(raw):
        return raw.strip(), raw.strip(), True
    path = resolve_path(raw)
    if not path.is_file():
        raise FileNotFoundError(f"{key} {raw!r}: file not found")
    with open(path, encoding="utf-8", errors="replace") as f:
        head = f.read(4096)
    return path, path.name, "<mujoco" in head
