"""What each bring-up starts: the single table read by ``launch/*.launch.py`` (launch_ros) and by
``servo-ff up`` (plain subprocesses, for machines without the launch packages).

Importing this module needs neither rclpy nor launch; :func:`launch_description` imports launch lazily.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from servo_ff.io.paths import PACKAGE, share_dir


@dataclass(frozen=True)
class NodeLaunch:
    """One node of a bring-up: ROS executable (setup.py entry point), Python module (``up``), node name,
    config file (in ``config/``), parameter overrides coming from bring-up arguments, and whether the bring-up
    ends when this node exits (the one-shot fit of ``replay`` and ``identify``: ``servo-ff up`` then exits with
    its code, the launch file shuts down)."""

    executable: str
    module: str
    name: str
    config: str
    overrides: Mapping[str, Any] = field(default_factory=dict)
    ends_bringup: bool = False

    def ros_args(self, config_dir: Path) -> list[str]:
        args = ["--ros-args", "-r", f"__node:={self.name}", "--params-file", str(config_dir / self.config)]
        for k, v in self.overrides.items():
            args += ["-p", f"{k}:={_ros_literal(v)}"]
        return args


def _ros_literal(v: Any) -> str:
    if isinstance(v, str):
        return v if v else "''"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(_ros_literal(x) for x in v) + "]"
    return repr(v)


SIM = ("servo_sim_node", "servo_ff.nodes.sim_node", "servo_sim")
HARDWARE = ("servo_hardware_node", "servo_ff.nodes.hardware_node", "servo_hardware")
FEEDFORWARD = ("servo_feedforward_node", "servo_ff.nodes.feedforward_node", "servo_feedforward")
ILC = ("servo_ilc_node", "servo_ff.nodes.ilc_node", "servo_ilc")
FIT = ("servo_fit_node", "servo_ff.nodes.fit_node", "servo_fit")

#: bring-up name → (description, {argument: (default, description)})
BRINGUPS: dict[str, tuple[str, dict[str, tuple[str, str]]]] = {
    "robot": ("Dynamixel hardware + feed-forward", {}),
    "sim": ("simulated servos (stepper) + feed-forward", {}),
    "identify": ("sim or hardware servos + ILC + α fit → α on the feed-forward node, then exit",
                 {"source": ("sim", "servo backend: sim or hardware"),
                  "realtime": ("true", "false (source sim): as fast as possible, the ILC node drives /clock in "
                                       "lockstep with the sim node (use_sim_time, realtime false)")}),
    "replay": ("α fit from a rosbag2 recording, then exit",
               {"bag": ("", "path of the rosbag2 directory (or .mcap/.db3) to fit from"),
                "goal_topic": ("", "goal topic in the bag (empty: the one command-like topic of a goal type)")}),
}


def plan(bringup: str, **args: str) -> list[NodeLaunch]:
    """The nodes of ``bringup`` with its arguments resolved (defaults from :data:`BRINGUPS`)."""
    if bringup not in BRINGUPS:
        raise ValueError(f"unknown bring-up {bringup!r}; valid: {', '.join(BRINGUPS)}")
    declared = BRINGUPS[bringup][1]
    unknown = sorted(set(args) - set(declared))
    if unknown:
        raise ValueError(f"bring-up {bringup} has no argument(s) {', '.join(unknown)}; valid: "
                         f"{', '.join(declared) or 'none'}")
    a = {k: str(args.get(k, d)) for k, (d, _) in declared.items()}
    cfg = f"{bringup}.yaml"
    if bringup == "robot":
        return [NodeLaunch(*HARDWARE, cfg), NodeLaunch(*FEEDFORWARD, cfg)]
    if bringup == "sim":
        return [NodeLaunch(*SIM, cfg), NodeLaunch(*FEEDFORWARD, cfg)]
    if bringup == "identify":
        if a["source"] not in ("sim", "hardware"):
            raise ValueError(f"identify: source must be 'sim' or 'hardware', got {a['source']!r}")
        if a["realtime"] not in ("true", "false"):
            raise ValueError(f"identify: realtime must be 'true' or 'false', got {a['realtime']!r}")
        lockstep = a["realtime"] == "false"
        if lockstep and a["source"] != "sim":
            raise ValueError("identify: realtime:=false needs source:=sim (hardware runs on wall time)")
        servo = SIM if a["source"] == "sim" else HARDWARE
        # until the sim node owns /clock (real_time_factor), the ILC node drives it one sample at a time
        fast = {"use_sim_time": True, "realtime": False} if lockstep else {}
        return [NodeLaunch(*servo, cfg, fast), NodeLaunch(*FEEDFORWARD, cfg),
                NodeLaunch(*ILC, cfg, {"drive_clock": True} if lockstep else {}),
                NodeLaunch(*FIT, cfg, ends_bringup=True)]
    # replay
    if not a["bag"]:
        raise ValueError("replay: argument bag (rosbag2 directory) is required")
    goal = {"goal_topic": a["goal_topic"]} if a["goal_topic"] else {}
    return [NodeLaunch(*FIT, cfg, {"source": "bag", "bag_path": a["bag"], **goal}, ends_bringup=True)]


def config_dir() -> Path:
    """``config/`` of the source tree, else the installed share directory."""
    return share_dir() / "config"


def python_command(node: NodeLaunch, config: Path | None = None) -> list[str]:
    """Command line ``servo-ff up`` runs for ``node`` (no installed entry points needed)."""
    return [sys.executable, "-m", node.module, *node.ros_args(config or config_dir())]


def python_env() -> dict[str, str]:
    """Environment for node subprocesses: this source tree first on PYTHONPATH."""
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join([src, *filter(None, [env.get("PYTHONPATH")])])
    return env


def launch_description(bringup: str):
    """launch_ros description of ``bringup`` (used by ``launch/<bringup>.launch.py``)."""
    from launch import LaunchDescription
    from launch.actions import DeclareLaunchArgument, OpaqueFunction, RegisterEventHandler, Shutdown
    from launch.event_handlers import OnProcessExit
    from launch.substitutions import LaunchConfiguration
    from launch_ros.actions import Node

    declared = BRINGUPS[bringup][1]

    def nodes(context, *_, **__):
        args = {k: LaunchConfiguration(k).perform(context) for k in declared}
        cfg = config_dir()
        out = []
        for n in plan(bringup, **args):
            node = Node(package=PACKAGE, executable=n.executable, name=n.name, output="screen", emulate_tty=True,
                        parameters=[str(cfg / n.config), dict(n.overrides)])
            out.append(node)
            if n.ends_bringup:  # the one-shot fit ended (its exit code says how): the launch ends with it
                out.append(RegisterEventHandler(OnProcessExit(target_action=node, on_exit=[
                    Shutdown(reason=f"{n.name} finished")])))
        return out

    return LaunchDescription([
        *(DeclareLaunchArgument(k, default_value=d, description=text) for k, (d, text) in declared.items()),
        OpaqueFunction(function=nodes),
    ])
