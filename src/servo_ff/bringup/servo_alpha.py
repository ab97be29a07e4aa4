"""The feed-forward α̂ of the servos a servo YAML describes (ROS-free): each joint's α̂ under its own parameter set
and firmware law (Schwarz & Behnke Eq. 19 for a voltage (PWM) law, :mod:`servo_ff.dynamics.alpha_current` for a
current-based one; :func:`servo_ff.dynamics.walk_sim.firmware_alpha`), at the servos' one supply.

The MuJoCo bring-ups with a feed-forward node (``table.SERVO_ALPHA_BRINGUPS``: ``sim_op3``, ``sim_nimbro_op``,
``sim_humanoid``) give that node this α̂ of the servo YAML their sim node runs (:func:`servo_config_alpha`:
``servo_config:=``, else the YAML's own) instead of their YAML's feed-forward α̂, so it follows the servos the sim
runs (not with ``feedforward:=false``: the servo YAML is then not read).
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path
from typing import Any

from servo_ff.dynamics.alpha import AlphaTable, save_alpha
from servo_ff.dynamics.servo_map import ServoMapError, load_servo_map
from servo_ff.io.paths import resolve_path

from .node_launch import config_dir, scratch_dir
from .params_check import node_params


def servo_alpha_table(servo_yaml: Path, joints: list[str], u_nominal: float) -> AlphaTable:
    """α̂ per joint of ``joints`` under each joint's own parameter set and firmware law in ``servo_yaml``, at the
    feed-forward node's supply ``u_nominal`` [V]."""
    from servo_ff.dynamics.walk_sim import servo_alpha

    smap = load_servo_map(servo_yaml, joints)
    return servo_alpha({j: smap.joints[j].params for j in joints}, joints, u_nominal)


def servo_yaml_alpha(servo_yaml: Path, joints: list[str], folder: Path) -> tuple[Path, float, str]:
    """(α̂ file, ``u_nominal`` [V], the law in words) for the feed-forward node of servos described by ``servo_yaml``
    (a bring-up's ``servo_config``): each joint's α̂ (:func:`servo_alpha_table`) at the servos' one supply, written
    to ``folder`` (named by its content).

    A joint without a servo (``null``) or servos on different supplies (the node has one ``u_nominal``) raise one
    :class:`~servo_ff.dynamics.servo_map.ServoMapError` line naming the file and the key."""
    servo_yaml = Path(servo_yaml)
    smap = load_servo_map(servo_yaml, joints)
    if smap.passive:
        raise ServoMapError(
            f"{servo_yaml.name}: servos: joint(s) {', '.join(smap.passive)} have no servo (null): the feed-forward "
            "node needs every joint's law for its α̂"
        )
    laws = [smap.joints[j].params.firmware for j in joints]
    supplies = sorted({law.vin for law in laws})
    if len(supplies) > 1:
        volts = ", ".join(f"{v:g}" for v in supplies)
        raise ServoMapError(
            f"{servo_yaml.name}: firmware: the servos' laws run on different supplies ({volts} V); the feed-forward "
            "node has one u_nominal: give every servo a law of one supply"
        )
    (vin,) = supplies
    table = servo_alpha_table(servo_yaml, joints, vin)
    words = f"{'/'.join(sorted({law.control for law in laws}))}-based law at {vin:g} V"
    digest = hashlib.sha1(repr((str(servo_yaml.resolve()), table.to_dict(), words)).encode()).hexdigest()[:16]
    info = {"source": f"servo_ff.bringup.servo_alpha.servo_yaml_alpha({servo_yaml}): {words}, not fitted"}
    return save_alpha(table, Path(folder) / f"alpha_{servo_yaml.stem}_{digest}.yaml", info), vin, words


def feedforward_params(params_file: str) -> dict[str, Any]:
    """The feed-forward node's parameters in a ``params_file`` (its ``/**`` section, then its own over it)."""
    return node_params(params_file, "servo_feedforward")


def _yaml_alpha_source(ff: dict[str, Any], yaml_name: str) -> str:
    """What a parameter YAML's feed-forward section takes its α̂ from (the node: ``alpha_file``, else the preset)."""
    if ff.get("alpha_file"):
        return f"{yaml_name}'s alpha_file {ff['alpha_file']}"
    return f"{yaml_name}'s servo {ff.get('servo', 'mx64')}/{ff.get('model', 'm4')}"


def servo_config_alpha(bringup: str, servo_config: str, urdf: str, params_file: str = "") -> dict[str, Any]:
    """The feed-forward node's ``alpha_file`` and ``u_nominal`` [V] of bring-up ``bringup`` following the laws of the
    servos the sim node runs (:func:`servo_yaml_alpha`): ``servo_config`` (the argument; empty: the ``params_file``'s
    ``servo_sim`` servo_config, else the bring-up YAML's) on the robot ``urdf`` (empty: the description node's
    ``urdf_path`` in the same order, the robot_description the node reads), instead of the bring-up YAML's α̂ (or the
    ``params_file``'s, when it sets one), said in one log line naming both files (INFO; WARNING when it replaces the
    ``params_file``'s α̂, one the user gave); a servo YAML that does not fit raises one line naming the file and the
    key."""
    from servo_ff.dynamics.robot import load_robot

    cfg = config_dir() / f"{bringup}.yaml"
    whose = ""  # servo_config given: the argument
    if not servo_config:
        theirs = node_params(params_file, "servo_sim").get("servo_config")
        servo_config = str(resolve_path(theirs or node_params(cfg, "servo_sim")["servo_config"]).resolve())
        whose = f"{'params_file ' + Path(params_file).name if theirs else cfg.name}'s servo_sim, "
    description = {**node_params(cfg, "servo_state_publisher"), **node_params(params_file, "servo_state_publisher")}
    robot = Path(urdf).expanduser() if urdf else resolve_path(description["urdf_path"])
    try:
        alpha, vin, law = servo_yaml_alpha(Path(servo_config), list(load_robot(robot).joint_names), scratch_dir())
    except ServoMapError as e:
        raise ServoMapError(f"{bringup}: servo_config {e}") from None
    ff, own = node_params(cfg, "servo_feedforward"), feedforward_params(params_file)
    users = bool({"alpha_file", "servo", "model"} & own.keys())  # the params_file's α̂ is the one replaced
    if users:
        replaced = _yaml_alpha_source({**ff, **own}, f"params_file {Path(params_file).name}")
    else:
        replaced = _yaml_alpha_source(ff, cfg.name)
    logging.getLogger(__name__).log(
        logging.WARNING if users else logging.INFO,  # the bring-up YAML's own α̂ replaced: as designed
        "%s: feed-forward α̂ from servo_config %s (%s): %s, u_nominal %g V, instead of %s",
        bringup, servo_config, whose + law, alpha, vin, replaced,
    )  # fmt: skip
    return {"alpha_file": str(alpha), "u_nominal": vin}


__all__ = ["feedforward_params", "node_params", "servo_alpha_table", "servo_config_alpha", "servo_yaml_alpha"]
