"""What each bring-up starts: the single table read by ``launch/*.launch.py`` (launch_ros) and by
``servo-ff up`` (plain subprocesses, for machines without the launch packages).

Importing this module needs neither rclpy nor launch; :func:`launch_description` imports launch lazily.

Bring-up arguments (``ros2 launch … port:=/dev/ttyUSB1``, ``servo-ff up … --arg port:=/dev/ttyUSB1``) become
parameters of the nodes they concern, written to a node-specific parameter file (``/**/<node>:``) given after
the bring-up's YAML: they override it. (A plain ``-p port:=…`` cannot: ROS applies a node's own YAML section
after the ``/**`` entries that ``-p`` writes to.) ``namespace`` puts every node of the bring-up under it; the
YAML's node sections then still apply (they are rewritten as ``/**/<node>`` for that run).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from servo_ff.io.paths import PACKAGE

from .node_launch import NodeLaunch, config_dir, node_ended, one_shot_ended

SIM = ("servo_sim_node", "servo_ff.nodes.sim_node", "servo_sim")
HARDWARE = ("servo_hardware_node", "servo_ff.nodes.hardware_node", "servo_hardware")
FEEDFORWARD = ("servo_feedforward_node", "servo_ff.nodes.feedforward_node", "servo_feedforward")
ILC = ("servo_ilc_node", "servo_ff.nodes.ilc_node", "servo_ilc")
FIT = ("servo_fit_node", "servo_ff.nodes.fit_node", "servo_fit")
WALKER = ("servo_walker_node", "servo_ff.nodes.walker_node", "servo_walker")
WALK = ("servo_walk_node", "servo_ff.nodes.walk_node", "servo_walk")
#: robot_description (transient local), /tf and /tf_static: the bring-up's one URDF (its YAML section's urdf_path)
DESCRIPTION = ("servo_state_publisher_node", "servo_ff.nodes.state_publisher_node", "servo_state_publisher")

COMMON_ARGS = {
    "namespace": ("", "namespace of every node of the bring-up (two robots or buses side by side)"),
    "params_file": ("", "extra parameter YAML given to every node after the bring-up's own (its values win)"),
}
MUJOCO_ARGS = {
    "urdf": ("", "your robot's URDF (empty: the YAML's), published on robot_description for the sim and feed-forward"),
    "servo_config": ("", "your servo YAML: servo type / friction model per joint (empty: the YAML's)"),
}
FEEDFORWARD_ARG = {
    "feedforward": ("true", "false: the feed-forward node passes the desired positions (plain P control)"),
}
#: the placo walk bring-ups (sim + feed-forward + servo_walk_node under cmd_vel): one code path, their own YAML
WALK_BRINGUPS = ("sim_op3", "sim_nimbro_op")
#: the bring-ups whose feed-forward α̂ follows the servo YAML the sim runs (servo_alpha.servo_config_alpha)
SERVO_ALPHA_BRINGUPS = (*WALK_BRINGUPS, "sim_humanoid")

HARDWARE_ARGS = {
    "port": ("", "serial port of the servo bus (empty: the YAML's)"),
    "baud": ("", "baud rate of the servo bus (empty: the YAML's)"),
}

#: bring-up name → (description, {argument: (default, description)})
BRINGUPS: dict[str, tuple[str, dict[str, tuple[str, str]]]] = {
    "robot": ("Dynamixel hardware + feed-forward", {**HARDWARE_ARGS, **COMMON_ARGS}),
    "sim": ("simulated servos (stepper) + feed-forward", dict(COMMON_ARGS)),
    "so100": (
        "SO-101 arm: six Feetech STS3215 on their bus (protocol sts) visiting joint-space waypoints",
        {**HARDWARE_ARGS, "loops": ("", "times the waypoints are visited (empty: the YAML's)"), **COMMON_ARGS},
    ),
    "identify": (
        "sim or hardware servos + ILC + α fit → α on the feed-forward node, then exit",
        {
            "source": ("sim", "servo backend: sim or hardware"),
            "realtime": (
                "true",
                "false (source sim): as fast as possible on sim time: the sim node owns "
                "/clock (real_time_factor 0), the ILC node on use_sim_time, each ILC trial "
                "one JointTrajectory",
            ),
            **HARDWARE_ARGS,
            **COMMON_ARGS,
        },
    ),
    "sim_humanoid": (
        "MuJoCo humanoid (sim node backend mujoco) + feed-forward + walking-stack stand-in",
        {
            **MUJOCO_ARGS,
            "support": (
                "schedule",
                "support coefficient the feed-forward node uses: schedule (the walker's, as a "
                "walking stack would) or contacts (the sim's, from the foot forces)",
            ),
            "n_steps": ("", "steps the walker makes (empty: the YAML's)"),
            **FEEDFORWARD_ARG,
            **COMMON_ARGS,
        },
    ),
    "sim_op3": (
        "MuJoCo ROBOTIS OP3 + feed-forward + placo walking engine (servo_walk_node) under cmd_vel",
        {
            **MUJOCO_ARGS,
            **FEEDFORWARD_ARG,
            "gain": ("", "servo P gain of sim and feed-forward, register units (empty: the YAML's, 280 = 0.35 x 800)"),
            "gait": (
                "placo",
                "placo or cpg (the NimbRo-OP's CPG scaled to the OP3 by dynamic similarity: servo_walk_node gait "
                "op3_cpg; cmd_vel up to 0.0567 m/s)",
            ),
            **COMMON_ARGS,
        },
    ),
    "sim_nimbro_op": (
        "MuJoCo NimbRo-OP (Schwarz & Behnke's robot) + feed-forward + placo walk with its gait (or its own CPG) "
        "under cmd_vel",
        {
            **MUJOCO_ARGS,
            **FEEDFORWARD_ARG,
            "gain": ("", "servo P gain of sim and feed-forward, register units (empty: the YAML's, 0.35 x 53.125)"),
            "gait": (
                "placo",
                "placo (its gait on placo) or cpg (the NimbRo-OP's own CPG: servo_walk_node gait nimbro_cpg)",
            ),
            **COMMON_ARGS,
        },
    ),
    "sim_arm": (
        "MuJoCo 2R arm (MX-106 shoulder, MX-64 elbow) tracing its triangle path",
        {
            **MUJOCO_ARGS,
            "gain": ("high", "servo P gain: low (8), high (32) or a number (register units)"),
            **COMMON_ARGS,
        },
    ),
    "sim_so100": (
        "MuJoCo SO-101 arm (six STS3215) visiting joint-space waypoints: rest, reach, grasp, lift, place",
        {
            **MUJOCO_ARGS,
            "gain": ("", "servo P gain, register units (empty: the YAML's, 32 = the STS3215 default)"),
            "loops": ("", "loops of the waypoint sequence (empty: the YAML's)"),
            **COMMON_ARGS,
        },
    ),
    "replay": (
        "α fit from a rosbag2 recording, then exit",
        {
            "bag": ("", "path of the rosbag2 directory (or .mcap/.db3) to fit from"),
            "goal_topic": ("", "goal topic in the bag (empty: the one command-like topic of a goal type)"),
            **COMMON_ARGS,
        },
    ),
}


def _hardware_overrides(a: Mapping[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if a.get("port"):
        out["port"] = a["port"]
    if a.get("baud"):
        try:
            out["baud"] = int(a["baud"])
        except ValueError:
            raise ValueError(f"baud must be an integer (bit/s), got {a['baud']!r}") from None
    return out


def _gain(bringup: str, value: str, named: Mapping[str, float]) -> float:
    """A P gain argument [register units]: one of the ``named`` gains or a finite number >= 0."""
    try:
        kp = named[value] if value in named else float(value)
    except ValueError:
        kp = math.nan
    if not (math.isfinite(kp) and kp >= 0):
        names = ", ".join(named)
        raise ValueError(f"{bringup}: gain must be {names + ' or ' if names else ''}a number >= 0, got {value!r}")
    return kp


def _loops(bringup: str, text: str) -> dict[str, int]:
    """The walker's ``loops`` override from the bring-up argument (empty: none)."""
    if not text:
        return {}
    try:
        loops = int(text)
    except ValueError:
        raise ValueError(f"{bringup}: loops must be an integer, got {text!r}") from None
    if loops < 1:
        raise ValueError(f"{bringup}: loops must be at least 1, got {loops}")
    return {"loops": loops}


def _mujoco_overrides(bringup: str, a: Mapping[str, str]) -> tuple[dict, dict, dict]:
    """Overrides of the sim, feed-forward and walker nodes from the MuJoCo bring-ups' arguments."""
    sim: dict[str, Any] = {}
    ff: dict[str, Any] = {}
    walker: dict[str, Any] = {}
    if a["urdf"] and not Path(a["urdf"]).expanduser().is_file():  # the description node's (plan)
        raise FileNotFoundError(f"urdf {a['urdf']}: file not found")
    if a["servo_config"]:
        if not Path(a["servo_config"]).expanduser().is_file():
            raise FileNotFoundError(f"servo_config {a['servo_config']}: file not found")
        sim["servo_config"] = str(Path(a["servo_config"]).expanduser().resolve())
    if bringup in WALK_BRINGUPS and a["feedforward"] not in ("true", "false"):  # before any file is read for it
        raise ValueError(f"{bringup}: feedforward must be 'true' or 'false', got {a['feedforward']!r}")
    # the feed-forward α̂ follows the servos the sim runs (given or not); feedforward:=false: the node sends the
    # desired positions (plain P), no α̂ to follow
    if bringup in SERVO_ALPHA_BRINGUPS and a.get("feedforward") != "false":
        from .servo_alpha import servo_config_alpha

        ff.update(servo_config_alpha(bringup, sim.get("servo_config", ""), a["urdf"], a.get("params_file", "")))
    if bringup == "sim_arm":
        sim["kp"] = [_gain(bringup, a["gain"], {"low": 8.0, "high": 32.0})]
        return sim, ff, walker
    if bringup == "sim_so100":
        if a["gain"]:
            sim["kp"] = [_gain(bringup, a["gain"], {})]
        walker.update(_loops(bringup, a["loops"]))
        return sim, ff, walker
    if bringup in WALK_BRINGUPS:
        if a["gain"]:
            sim["kp"] = ff["kp"] = [_gain(bringup, a["gain"], {})]
        ff["enabled"] = a["feedforward"] == "true"
        if a["urdf"]:  # the walk engine plans on the robot the others read (robot_description), not the YAML's
            walker["urdf_path"] = str(Path(a["urdf"]).expanduser().resolve())
        if a.get("gait", "placo") not in ("placo", "cpg"):
            raise ValueError(f"{bringup}: gait must be 'placo' or 'cpg', got {a['gait']!r}")
        if a.get("gait") == "cpg":  # the CPG runs in the node (no placo engine process); the OP3's: scaled
            walker.update(gait="op3_cpg" if bringup == "sim_op3" else "nimbro_cpg", engine_process=False)
        return sim, ff, walker
    if a["support"] not in ("schedule", "contacts"):
        raise ValueError(f"sim_humanoid: support must be 'schedule' or 'contacts', got {a['support']!r}")
    if a["support"] == "contacts":
        sim["support_topic"] = "support_coefficient"
        walker["support_topic"] = "walker/support_coefficient"
    if a["n_steps"]:
        try:
            walker["n_steps"] = int(a["n_steps"])
        except ValueError:
            raise ValueError(f"sim_humanoid: n_steps must be an integer, got {a['n_steps']!r}") from None
    if a["feedforward"] not in ("true", "false"):
        raise ValueError(f"sim_humanoid: feedforward must be 'true' or 'false', got {a['feedforward']!r}")
    ff["enabled"] = a["feedforward"] == "true"
    return sim, ff, walker


def plan(bringup: str, **args: str) -> list[NodeLaunch]:
    """The nodes of ``bringup`` with its arguments resolved (defaults from :data:`BRINGUPS`); with the sim, the
    feed-forward node's α̂ follows an ``actuator_file`` a parameter file gives the sim (``alpha_follows``:
    :meth:`NodeLaunch.actuator_files`), but in :data:`SERVO_ALPHA_BRINGUPS` (servo_config's α̂)."""
    nodes = _plan(bringup, **args)
    if SIM[2] not in {n.name for n in nodes} or bringup in SERVO_ALPHA_BRINGUPS:
        return nodes
    follows = [n.name == FEEDFORWARD[2] for n in nodes]
    return [replace(n, alpha_follows=SIM[2]) if f else n for n, f in zip(nodes, follows, strict=True)]


def _plan(bringup: str, **args: str) -> list[NodeLaunch]:
    """:func:`plan`'s nodes before the feed-forward α̂ follows the sim's actuator."""
    if bringup not in BRINGUPS:
        raise ValueError(f"unknown bring-up {bringup!r}; valid: {', '.join(BRINGUPS)}")
    declared = BRINGUPS[bringup][1]
    unknown = sorted(set(args) - set(declared))
    if unknown:
        raise ValueError(
            f"bring-up {bringup} has no argument(s) {', '.join(unknown)}; valid: {', '.join(declared) or 'none'}"
        )
    a = {k: str(args.get(k, d)) for k, (d, _) in declared.items()}
    cfg = f"{bringup}.yaml"
    ns = a.get("namespace", "").strip()
    if ns and not ns.startswith("/"):
        ns = "/" + ns
    if ns and not re.fullmatch(r"(/[A-Za-z_][A-Za-z0-9_]*)+", ns):  # before: rcl's traceback in every node
        raise ValueError(
            f"namespace {a['namespace']!r} is not a ROS name (letters, digits and _ between single '/', no digit first)"
        )
    pf = a.get("params_file", "")
    if pf and not Path(pf).is_file():
        raise FileNotFoundError(f"params_file {pf}: file not found")

    def node(spec, overrides=None, ends: bool = False) -> NodeLaunch:
        return NodeLaunch(*spec, cfg, overrides or {}, ns, pf, ends_bringup=ends)

    hw = _hardware_overrides(a)
    urdf = {"urdf_path": str(Path(a["urdf"]).expanduser().resolve())} if a.get("urdf") else {}
    described = node(DESCRIPTION, urdf)  # the URDF of the bring-up: the others read robot_description
    on_hw = {"servo_node": HARDWARE[2]}  # whose kp the feed-forward node sets (default: servo_sim)
    if bringup == "robot":
        return [node(HARDWARE, hw), node(FEEDFORWARD, on_hw), described]
    if bringup == "sim":
        return [node(SIM), node(FEEDFORWARD), described]
    if bringup == "so100":
        return [node(HARDWARE, hw), node(WALKER, _loops(bringup, a["loops"])), described]
    if bringup in ("sim_humanoid", "sim_arm", "sim_so100", *WALK_BRINGUPS):
        sim, ff, walker = _mujoco_overrides(bringup, a)
        if bringup in WALK_BRINGUPS:
            return [node(SIM, sim), node(FEEDFORWARD, ff), node(WALK, walker), described]
        if bringup in ("sim_arm", "sim_so100"):
            return [node(SIM, sim), node(WALKER, walker), described]
        return [node(SIM, sim), node(FEEDFORWARD, ff), node(WALKER, walker), described]
    if bringup == "identify":
        if a["source"] not in ("sim", "hardware"):
            raise ValueError(f"identify: source must be 'sim' or 'hardware', got {a['source']!r}")
        if a["realtime"] not in ("true", "false"):
            raise ValueError(f"identify: realtime must be 'true' or 'false', got {a['realtime']!r}")
        fast = a["realtime"] == "false"
        if fast and a["source"] != "sim":
            raise ValueError("identify: realtime:=false needs source:=sim (hardware runs on wall time)")
        if not fast:
            if a["source"] == "sim":
                return [node(SIM), node(FEEDFORWARD), node(ILC), node(FIT, ends=True)]
            return [node(HARDWARE, hw), node(FEEDFORWARD, on_hw), node(ILC), node(FIT, ends=True)]
        # the ILC node times its trials on the sim's /clock (as fast as it steps); the feed-forward and fit nodes
        # act after the ILC (α fitted from its file, set on the feed-forward node): on wall time they are not
        # woken by every /clock message
        return [
            node(SIM, {"publish_clock": True, "real_time_factor": 0.0, "as_fast_batch": 0.002}),
            node(FEEDFORWARD),
            node(ILC, {"use_sim_time": True, "execution": "trajectory"}),
            node(FIT, ends=True),
        ]
    # replay
    if not a["bag"]:
        raise ValueError("replay: argument bag (rosbag2 directory) is required")
    from .replay_bag import replay_fit_overrides  # a record-sim bag: its joint, τ_o of its pendulum

    fit = {"source": "bag", "bag_path": a["bag"], **replay_fit_overrides(a["bag"])}
    if a["goal_topic"]:
        fit["goal_topic"] = a["goal_topic"]
    return [node(FIT, fit, ends=True)]


def launch_description(bringup: str):
    """launch_ros description of ``bringup`` (used by ``launch/<bringup>.launch.py``): every argument of
    :data:`BRINGUPS` declared with DeclareLaunchArgument, read with LaunchConfiguration, and turned into node
    parameters by :func:`plan` (the same table ``servo-ff up`` uses)."""
    from launch.actions import DeclareLaunchArgument, LogInfo, OpaqueFunction, RegisterEventHandler, Shutdown
    from launch.event_handlers import OnProcessExit
    from launch.substitutions import LaunchConfiguration
    from launch_ros.actions import Node

    from launch import LaunchDescription

    declared = BRINGUPS[bringup][1]

    def nodes(context, *_, **__):
        args = {k: LaunchConfiguration(k).perform(context) for k in declared}
        cfg = config_dir()
        out = []
        for n in plan(bringup, **args):
            node = Node(
                package=PACKAGE,
                executable=n.executable,
                name=n.name,
                namespace=n.namespace or None,
                output="screen",
                emulate_tty=True,
                parameters=[str(f) for f in n.parameter_files(cfg)],
            )
            # any node ending stops the launch (as servo-ff up): the one-shot fit with its code, any other one
            # non-zero unless it stopped cleanly; not while the launch is stopping (a Ctrl-C)
            ended = one_shot_ended if n.ends_bringup else node_ended

            def on_exit(event, ctx, name=n.name, ended=ended) -> list:
                return [] if getattr(ctx, "is_shutdown", False) else [Shutdown(reason=ended(name, event.returncode))]

            out += [node, RegisterEventHandler(OnProcessExit(target_action=node, on_exit=on_exit))]
        unknown = sorted(set(context.launch_configurations) - set(declared))
        if unknown:  # (a parent launch file's arguments are seen here too: said, not refused)
            names = ", ".join(unknown)
            out.insert(
                0,
                LogInfo(
                    msg=f"{bringup}: argument(s) {names} not this bring-up's: ignored (valid: {', '.join(declared)})"
                ),
            )
        return out

    return LaunchDescription(
        [
            *(DeclareLaunchArgument(k, default_value=d, description=text) for k, (d, text) in declared.items()),
            OpaqueFunction(function=nodes),
        ]
    )
