"""How one node of a bring-up is started (:class:`NodeLaunch`, a row of :func:`servo_ff.bringup.table.plan`):
its ROS arguments and parameter files for ``servo-ff up`` (plain ``python -m`` subprocesses) and launch_ros, and
how the bring-up ends with its one-shot node. Needs neither rclpy nor launch."""

from __future__ import annotations

import hashlib
import os
import signal
import stat
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from servo_ff.errors import ServoFFError
from servo_ff.io.paths import share_dir

from .params_check import check_config, check_kinds, node_params


@dataclass(frozen=True)
class NodeLaunch:
    """One node of a bring-up: ROS executable (setup.py entry point), Python module (``up``), node name,
    config file (in ``config/``), parameter overrides coming from bring-up arguments, namespace, an extra
    parameter file (both bring-up arguments), and whether the bring-up ends when this node exits (the one-shot
    fit of ``replay`` and ``identify``: ``servo-ff up`` then exits with its code, the launch file shuts down)."""

    executable: str
    module: str
    name: str
    config: str
    overrides: Mapping[str, Any] = field(default_factory=dict)
    namespace: str = ""
    params_file: str = ""
    ends_bringup: bool = False
    alpha_follows: str = ""  # the sim node whose actuator_file this (feed-forward) node's α̂ follows: actuator_files

    def actuator_files(self, params_file: Path) -> list[Path]:
        """The one rule that gives the feed-forward node the sim's actuator: when ``params_file`` gives the sim
        (``alpha_follows``) an ``actuator_file`` and this node none of its own α̂ source (``alpha_file``,
        ``actuator_file``, ``servo``, ``model``), a parameter file setting this node's ``actuator_file`` to it
        (given right after ``params_file``: its α̂ is then that actuator's); else none."""
        if not self.alpha_follows:
            return []
        path = node_params(params_file, self.alpha_follows).get("actuator_file")
        if not path or node_params(params_file, self.name).keys() & {"alpha_file", "actuator_file", "servo", "model"}:
            return []
        return [self.own_params({"actuator_file": path})]

    def own_params(self, values: Mapping[str, Any]) -> Path:
        """A parameter file giving this node ``values``, keyed as :meth:`matching` keys its sections."""
        return _write_params({f"/**/{self.name}" if self.namespace else self.name: {"ros__parameters": dict(values)}})

    def parameter_files(self, config_dir: Path) -> list[Path]:
        """The node's parameter files in precedence order (later wins): the bring-up YAML, ``params_file`` (both
        with their node sections as ``/**/<node>`` when a namespace is set), the argument overrides (keyed the same
        way, so a ``--params-file`` after them wins with a namespace and without: before, only with one)."""
        if self.params_file:  # the argument's file, checked as --params-file before any node gets it
            check_config(Path(self.params_file))  # (before: under ros2 launch every node died on a bad one, exit 0)
            check_kinds(Path(self.params_file), config_dir / self.config, self.name)
        files = [config_dir / self.config] + ([Path(self.params_file)] if self.params_file else [])
        files = [self.matching(f) for f in files] + (
            self.actuator_files(Path(self.params_file)) if self.params_file else []
        )
        if self.overrides:  # keyed as the files before it: rcl keeps `servo_sim` (= /servo_sim) and /**/servo_sim
            files.append(self.own_params(self.overrides))  # apart, and the later KIND won, not the later file
        return files

    def matching(self, params_file: Path) -> Path:
        """``params_file`` with its node sections matching this node in its namespace (``servo_sim`` →
        ``/**/servo_sim``: rcl reads a bare ``servo_sim`` as ``/servo_sim``, which a namespaced node ignores)."""
        if not self.namespace:
            return params_file
        return _write_params(_any_namespace(yaml.safe_load(params_file.read_text()) or {}))

    def ros_args(self, config_dir: Path) -> list[str]:
        args = ["--ros-args", "-r", f"__node:={self.name}"]
        if self.namespace:
            args += ["-r", f"__ns:={self.namespace}"]
        for f in self.parameter_files(config_dir):
            args += ["--params-file", str(f)]
        return args


def _any_namespace(doc: dict) -> dict:
    """A parameter YAML whose node sections match the node in any namespace (``servo_sim`` → ``/**/servo_sim``)."""
    return {k if k.startswith("/") else f"/**/{k}": v for k, v in doc.items()}


def scratch_dir() -> Path:
    """The temporary directory of the files a bring-up writes for its nodes (parameter overrides, α̂ files): this
    user's own (``servo_ff_bringup-<uid>``, mode 0700). One that is a link, or that another user owns or can write
    to, is refused (ScratchError): files planted there would reach the nodes as their parameters (before: a shared
    ``servo_ff_bringup`` whose files were reused unread)."""
    uid = os.getuid() if hasattr(os, "getuid") else None
    d = Path(tempfile.gettempdir()) / f"servo_ff_bringup-{uid if uid is not None else 'user'}"
    d.mkdir(mode=0o700, exist_ok=True)
    st = d.lstat()
    if uid is not None and (
        not stat.S_ISDIR(st.st_mode) or st.st_uid != uid or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    ):
        raise ScratchError(
            f"{d}: not a private directory of this user (owner uid {st.st_uid}, mode {stat.filemode(st.st_mode)}): "
            "the bring-up's parameter files are written there; remove it"
        )
    return d


def _write_params(doc: dict) -> Path:
    """``doc`` as a parameter file in :func:`scratch_dir`, named by its content; written (atomically) unless a file
    of that name holds that content already."""
    text = yaml.safe_dump(doc, sort_keys=True)
    d = scratch_dir()
    path = d / f"{hashlib.sha1(text.encode()).hexdigest()[:16]}.yaml"
    if not path.is_file() or path.read_text() != text:
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text)
        tmp.replace(path)
    return path


def _ros_literal(v: Any) -> str:
    if isinstance(v, str):
        return v if v else "''"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(_ros_literal(x) for x in v) + "]"
    return repr(v)


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


class ScratchError(ServoFFError, OSError):
    """The bring-up's scratch directory is not this user's own."""


#: a node's exit codes after a Ctrl-C: 0 (its clean stop), killed by SIGINT, or 128 + SIGINT (servo_ff.interrupt)
CLEAN_EXITS = (0, -signal.SIGINT, 128 + signal.SIGINT)


def node_ended(name: str, returncode: int | None) -> str:
    """Shutdown reason when ``name``, a node that runs for the whole bring-up, ended by itself: the bring-up stops
    (as ``servo-ff up`` stops it); with an exit code other than a clean stop's (:data:`CLEAN_EXITS`: a Ctrl-C that
    reached it before the launch) BringupFailed, so that ``ros2 launch`` exits non-zero (before: the others ran on,
    and the launch exited 0 at the Ctrl-C)."""
    if returncode in CLEAN_EXITS:
        return f"{name} ended (exit code {returncode}): the bring-up stops"
    raise BringupFailed(f"{name} ended with exit code {returncode} while the bring-up ran: the bring-up stops")


class BringupFailed(ServoFFError, RuntimeError):
    """The node that ends a bring-up exited with an error: raised inside ``ros2 launch``'s event loop, which then
    shuts down and exits with code 1 (``ros2 launch`` has no other way to return a node's failure)."""


def one_shot_ended(name: str, returncode: int | None) -> str:
    """Shutdown reason when the node ending the bring-up exited with ``returncode`` 0; BringupFailed otherwise."""
    if returncode:
        raise BringupFailed(f"{name} exited with code {returncode}: the bring-up failed (its error line says why)")
    return f"{name} finished"
