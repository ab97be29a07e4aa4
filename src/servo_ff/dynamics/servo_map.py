"""Which servo drives which joint: a YAML file (or dict) → one :class:`ActuatorParams` and P gain per joint.

.. code-block:: yaml

    robot: menagerie:robotis_op3  # the robot these servos drive (optional): menagerie:<name>[/<entry>] or a
                                  # URDF/MJCF path relative to this file; used when no description is given
    kp: 32                        # default P gain, register units (optional; else each preset's own)
    firmware: mx106               # default firmware row (models.firmware.FIRMWARE_TABLE) replacing each servo's
                                  # own law (optional; else the preset's or the file's)
    feet: [l_foot, r_foot]        # foot links of a floating-base robot (optional)
    contact_solref: [0.004, 1]    # URDF robot: MuJoCo solref (time constant [s], damping ratio) of its collision
                                  # geoms, the ground and the obstacle (optional; else MuJoCo's default 0.02, 1)
    servos:                       # exact joint names first, then patterns (fnmatch) in file order
      "*_knee": {preset: mx106/m4, kp: 18.6}
      "*_hip_*": {preset: mx106/m4, firmware: mx106}
      "*_ankle_*": mx106/m4
      "*_shoulder_*": mx64/m4
      l_elbow: {file: my_mx64.json}   # bam JSON or servo_ff YAML, relative to this file
      "*": mx64/m4
      camera_tilt: null               # this joint is not driven (passive)

Errors are one :class:`ServoMapError` line naming the file and the joint or key: a joint of the model that no
entry matches, an exact name that is not a joint of the model, an unknown preset or firmware row or a malformed
entry.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ServoFFError
from ..models.errors import ParameterError
from ..models.firmware import firmware_row
from ..models.params import ActuatorParams, load_params
from ..models.presets import preset


class ServoMapError(ServoFFError, ValueError):
    """The servo YAML does not fit the model; the message names the file and the joint or key."""


@dataclass(frozen=True)
class JointServo:
    params: ActuatorParams
    kp: float | None  # register units; None = the parameter set's own firmware kp


@dataclass(frozen=True)
class ServoMap:
    """Driven joints (model order) → their servo; ``passive`` joints have none."""

    joints: dict[str, JointServo]
    passive: tuple[str, ...] = ()
    feet: tuple[str, ...] | None = None

    @property
    def joint_names(self) -> tuple[str, ...]:
        return tuple(self.joints)


def _entry(
    value: Any, key: str, source: str, folder: Path | None, default_kp: float | None, default_fw: Any = None
) -> JointServo | None:
    where = f"{source}: servos[{key!r}]"
    if value is None:
        return None
    if isinstance(value, str):
        value = {"preset": value}
    if not isinstance(value, Mapping):
        raise ServoMapError(f"{where}: expected 'servo/model', a mapping or null, got {value!r}")
    unknown = set(value) - {"preset", "file", "kp", "firmware"}
    if unknown or ("preset" in value) == ("file" in value):
        raise ServoMapError(
            f"{where}: give exactly one of 'preset: servo/model' or 'file: path' (and optionally "
            f"'kp', 'firmware'); got keys {sorted(map(str, value))}"
        )
    try:
        if "preset" in value:
            servo, _, model = str(value["preset"]).partition("/")
            params = preset(servo, model or "m4")
        else:
            path = Path(str(value["file"]))
            params = load_params(path if path.is_absolute() or folder is None else folder / path)
        fw = value.get("firmware", default_fw)
        if fw is not None:
            params = dataclasses.replace(params, firmware=firmware_row(str(fw)))
    except ParameterError as e:
        raise ServoMapError(f"{where}: {e}") from None
    kp = value.get("kp", default_kp)
    if kp is not None:
        try:
            if isinstance(kp, bool):  # YAML true would read as kp 1
                raise TypeError
            kp = float(kp)
        except (TypeError, ValueError):
            raise ServoMapError(f"{where}: kp must be a number, got {kp!r}") from None
        if not kp >= 0 or kp == float("inf"):
            raise ServoMapError(f"{where}: kp must be a finite number >= 0, got {kp}")
    return JointServo(params, kp)


def _document(spec: str | Path | Mapping[str, Any]) -> tuple[Mapping[str, Any], str, Path | None]:
    if isinstance(spec, Mapping):
        return spec, "servo map", None
    from ..safe_parse import parse_yaml, read_text

    path = Path(spec)
    if not path.is_file():
        raise ServoMapError(f"{path}: no such servo YAML file")
    # the limits of every other YAML we read (size, depth, no anchors): before, a deep file raised RecursionError
    doc = parse_yaml(read_text(path, ServoMapError, what="servo YAML file"), str(path), ServoMapError)
    if not isinstance(doc, Mapping):
        raise ServoMapError(f"{path}: expected a mapping with a 'servos:' key")
    return doc, path.name, path.parent


def load_servo_map(spec: str | Path | Mapping[str, Any], joint_names: Sequence[str]) -> ServoMap:
    """Assign a servo to every joint of ``joint_names`` from a YAML path or an equivalent dict."""
    doc, source, folder = _document(spec)
    unknown = set(doc) - {"servos", "kp", "firmware", "feet", "robot", "contact_solref"}
    if unknown:
        raise ServoMapError(
            f"{source}: unknown key(s) {', '.join(sorted(map(str, unknown)))}; valid: servos, kp, firmware, feet, "
            "robot, contact_solref"
        )
    table = doc.get("servos")
    if not isinstance(table, Mapping) or not table:
        raise ServoMapError(f"{source}: missing 'servos:' (a mapping of joint name or pattern → servo/model)")
    default_kp, default_fw = doc.get("kp"), doc.get("firmware")
    if default_fw is not None:
        try:
            firmware_row(str(default_fw))
        except ParameterError as e:
            raise ServoMapError(f"{source}: firmware: {e}") from None
    names = list(joint_names)
    exact = {str(k): v for k, v in table.items() if not any(c in str(k) for c in "*?[")}
    for key in exact:
        if key not in names:
            raise ServoMapError(f"{source}: {key!r} names no joint of the model; joints: {', '.join(names)}")
    patterns = [(str(k), v) for k, v in table.items() if str(k) not in exact]
    entries: dict[str, JointServo] = {}
    passive = []
    cache: dict[str, JointServo | None] = {}
    for name in names:
        if name in exact:
            key, value = name, exact[name]
        else:
            match = next(((k, v) for k, v in patterns if fnmatch.fnmatchcase(name, k)), None)
            if match is None:
                raise ServoMapError(
                    f"{source}: joint {name!r} has no servo; add it (or a pattern matching it) "
                    "under 'servos:', or map it to null to leave it passive"
                )
            key, value = match
        if key not in cache:
            cache[key] = _entry(value, key, source, folder, default_kp, default_fw)
        if cache[key] is None:
            passive.append(name)
        else:
            entries[name] = cache[key]
    return ServoMap(entries, tuple(passive), servo_yaml_feet(doc if folder is None else spec))


def servo_yaml_feet(spec: str | Path | Mapping[str, Any]) -> tuple[str, ...] | None:
    """The ``feet:`` list of a servo YAML (None when absent), needed before the model is built."""
    doc, source, _ = _document(spec)
    feet = doc.get("feet")
    if feet is not None and (not isinstance(feet, list) or not all(isinstance(f, str) for f in feet)):
        raise ServoMapError(f"{source}: feet must be a list of link names, got {feet!r}")
    return tuple(feet) if feet is not None else None


def servo_yaml_solref(spec: str | Path | Mapping[str, Any]) -> tuple[float, float] | None:
    """The ``contact_solref:`` of a servo YAML, (time constant [s], damping ratio), both finite and positive; None
    when absent."""
    doc, source, _ = _document(spec)
    ref = doc.get("contact_solref")
    if ref is None:
        return None
    ok = (
        isinstance(ref, list)
        and len(ref) == 2
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in ref)
    )
    if not ok or not all(math.isfinite(v) and v > 0 for v in ref):
        raise ServoMapError(f"{source}: contact_solref must be [time constant s, damping ratio] > 0, got {ref!r}")
    return float(ref[0]), float(ref[1])


def servo_yaml_robot(spec: str | Path | Mapping[str, Any]) -> str | None:
    """The ``robot:`` of a servo YAML: ``menagerie:<name>[/<entry>]`` as written, a path made absolute against the
    YAML's folder, or None when absent."""
    doc, source, folder = _document(spec)
    robot = doc.get("robot")
    if robot is None:
        return None
    if not isinstance(robot, str) or not robot.strip():
        raise ServoMapError(f"{source}: robot must be menagerie:<name>[/<entry>] or a URDF/MJCF path, got {robot!r}")
    if robot.strip().startswith("menagerie:"):
        return robot.strip()
    path = Path(robot).expanduser()
    return str(path if path.is_absolute() or folder is None else folder / path)


def uniform_servo_map(joint_names: Sequence[str], params: ActuatorParams, kp: float | None = None) -> ServoMap:
    """Every joint the same servo (the humanoid experiment's MX-106 M4 everywhere)."""
    return ServoMap({n: JointServo(params, kp) for n in joint_names})


__all__ = [
    "JointServo",
    "ServoMap",
    "ServoMapError",
    "load_servo_map",
    "servo_yaml_feet",
    "servo_yaml_robot",
    "servo_yaml_solref",
    "uniform_servo_map",
]
