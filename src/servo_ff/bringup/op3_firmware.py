"""The OP3 mission under another firmware row for every servo (ROS-free): the servo YAML the sim node gets and the
α̂ file the feed-forward node gets, both from one description, ``config/servos_op3.yaml`` with its ``firmware:`` key
set (:mod:`servo_ff.dynamics.servo_map`).

The α̂ follows the law the servos run (Schwarz & Behnke Eq. 16–19: the goal offset from the torque through the motor
model): a voltage (PWM) law gets Eq. 19's α̂ (:func:`servo_ff.dynamics.alpha.alpha_table_from_actuator`), a
current-based law the current law's (:mod:`servo_ff.dynamics.alpha_current`), each from the joint's own parameter
set in that servo YAML (:func:`servo_ff.dynamics.walk_sim.firmware_alpha`, as the ROS-free walk). The bring-up
``sim_op3`` derives its feed-forward α̂ from a given ``servo_config`` the same way (:func:`servo_yaml_alpha`).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import yaml

from servo_ff.dynamics.alpha import AlphaTable, save_alpha
from servo_ff.dynamics.servo_map import ServoMapError, load_servo_map, servo_yaml_robot
from servo_ff.io.paths import share_file
from servo_ff.models.firmware import firmware_row


def op3_servo_yaml(firmware: str, folder: Path) -> Path:
    """``config/servos_op3.yaml`` with ``firmware: <firmware>`` (every servo's law replaced by that row of
    :data:`~servo_ff.models.firmware.FIRMWARE_TABLE`), written to ``folder``; an unknown row raises
    :class:`~servo_ff.models.errors.ParameterError` naming the valid rows, before anything is written."""
    firmware_row(firmware)
    src = share_file("config", "servos_op3.yaml")
    doc = yaml.safe_load(src.read_text(encoding="utf-8"))
    doc["robot"] = str(servo_yaml_robot(src))  # absolute: the copy lives elsewhere
    doc["firmware"] = firmware
    out = Path(folder) / f"servos_op3_{firmware}.yaml"
    out.write_text(
        f"# {src.name} under the firmware row {firmware} (servo_ff.bringup.op3_firmware)\n" + yaml.safe_dump(doc)
    )
    return out


def op3_alpha_table(servo_yaml: Path, joints: list[str], u_nominal: float) -> AlphaTable:
    """α̂ per joint of ``joints`` under each joint's own parameter set and firmware law in ``servo_yaml``, at the
    feed-forward node's supply ``u_nominal`` [V]."""
    from servo_ff.dynamics.walk_sim import firmware_alpha

    smap = load_servo_map(servo_yaml, joints)
    rows = [firmware_alpha(smap.joints[j].params, [j], u_nominal) for j in joints]
    return AlphaTable(
        tuple(joints),
        np.vstack([r.alpha for r in rows]),
        np.concatenate([r.dq_s for r in rows]),
        np.concatenate([r.delta for r in rows]),
    )


def op3_firmware_files(firmware: str, folder: Path, joints: list[str], u_nominal: float) -> tuple[Path, Path]:
    """(servo YAML, α̂ file) for the OP3 mission with every servo on the row ``firmware``, written to ``folder``."""
    servo_yaml = op3_servo_yaml(firmware, folder)
    law = firmware_row(firmware)
    info = {
        "source": f"servo_ff.bringup.op3_firmware.op3_alpha_table({servo_yaml.name}, u_nominal={u_nominal}): "
        f"{law.control}-based law of the firmware row {firmware}, not fitted"
    }
    alpha = save_alpha(
        op3_alpha_table(servo_yaml, joints, u_nominal), Path(folder) / f"alpha_op3_{firmware}.yaml", info
    )
    return servo_yaml, alpha


def op3_firmware_params(firmware: str | None, folder: Path) -> tuple[dict, dict]:
    """(sim node, feed-forward node) parameter overrides of the OP3 mission that put every servo on the row
    ``firmware``, their files written to ``folder`` (None: no overrides, the servo file's own law)."""
    if firmware is None:
        return {}, {}
    from servo_ff.dynamics.robot import load_robot

    vin = firmware_row(firmware).vin  # [V] the supply the sim's servos run on: the feed-forward node's u_nominal
    joints = list(load_robot(share_file("urdf", "op3.urdf")).joint_names)
    servo_yaml, alpha = op3_firmware_files(firmware, folder, joints, vin)
    return {"servo_config": str(servo_yaml)}, {"alpha_file": str(alpha)}


def servo_yaml_alpha(servo_yaml: Path, joints: list[str], folder: Path) -> tuple[Path, float, str]:
    """(α̂ file, ``u_nominal`` [V], the law in words) for the feed-forward node of servos described by ``servo_yaml``
    (a bring-up's ``servo_config``): each joint's α̂ under its own parameter set and firmware law
    (:func:`op3_alpha_table`) at the servos' one supply, written to ``folder`` (named by its content).

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
    table = op3_alpha_table(servo_yaml, joints, vin)
    words = f"{'/'.join(sorted({law.control for law in laws}))}-based law at {vin:g} V"
    digest = hashlib.sha1(repr((str(servo_yaml.resolve()), table.to_dict(), words)).encode()).hexdigest()[:16]
    info = {"source": f"servo_ff.bringup.op3_firmware.servo_yaml_alpha({servo_yaml}): {words}, not fitted"}
    return save_alpha(table, Path(folder) / f"alpha_{servo_yaml.stem}_{digest}.yaml", info), vin, words


__all__ = ["op3_alpha_table", "op3_firmware_files", "op3_firmware_params", "op3_servo_yaml", "servo_yaml_alpha"]
