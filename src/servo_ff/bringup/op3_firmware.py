"""The OP3 mission under another firmware row for every servo (ROS-free): the servo YAML the sim node gets and the
α̂ file the feed-forward node gets, both from one description, ``config/servos_op3.yaml`` with its ``firmware:`` key
set (:mod:`servo_ff.dynamics.servo_map`).

The α̂ follows the law the servos run (Schwarz & Behnke Eq. 16–19: the goal offset from the torque through the motor
model): a voltage (PWM) law gets Eq. 19's α̂ (:func:`servo_ff.dynamics.alpha.alpha_table_from_actuator`), a
current-based law the current law's (:mod:`servo_ff.dynamics.alpha_current`), each from the joint's own parameter
set in that servo YAML (:func:`servo_ff.bringup.servo_alpha.servo_alpha_table`, as the ROS-free walk and the
bring-ups given a ``servo_config``).
"""

from __future__ import annotations

from pathlib import Path

import yaml

from servo_ff.dynamics.alpha import save_alpha
from servo_ff.dynamics.servo_map import servo_yaml_robot
from servo_ff.io.paths import share_file
from servo_ff.models.firmware import firmware_row

from .servo_alpha import servo_alpha_table


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


def op3_firmware_files(firmware: str, folder: Path, joints: list[str], u_nominal: float) -> tuple[Path, Path]:
    """(servo YAML, α̂ file) for the OP3 mission with every servo on the row ``firmware``, written to ``folder``."""
    servo_yaml = op3_servo_yaml(firmware, folder)
    law = firmware_row(firmware)
    info = {
        "source": f"servo_ff.bringup.servo_alpha.servo_alpha_table({servo_yaml.name}, u_nominal={u_nominal}): "
        f"{law.control}-based law of the firmware row {firmware}, not fitted"
    }
    alpha = save_alpha(
        servo_alpha_table(servo_yaml, joints, u_nominal), Path(folder) / f"alpha_op3_{firmware}.yaml", info
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


__all__ = ["op3_firmware_files", "op3_firmware_params", "op3_servo_yaml"]
