"""Actuator parameter sets: one typed, immutable, validated schema shared by the core, the CLI, YAML and ROS.

An :class:`ActuatorParams` holds, in SI units:

* the motor (output side, gearbox included): ``kt`` [N·m/A = V·s/rad], ``R`` [Ω], ``armature`` [kg·m²];
* a friction model ``model`` (a row of the registry :mod:`.friction_models`: ``m1``…``m6``, Duclusaud et al.
  (Extended Friction Models) Eq. 3, 6–10) and its coefficients, named as in Rhoban/bam's JSON files so that a bam
  file means the same thing here;
* the firmware law (:class:`FirmwareLaw`): supply voltage, P gain in register units, the gain that turns
  ``kp·error`` into a PWM duty cycle, and the duty / current limits.

Every model is a special case of the most general budget (M6), so the kernels work on one packed
vector (:meth:`ActuatorParams.packed`, layout :mod:`.slots`) whatever the model.
"""

from __future__ import annotations

import dataclasses
import json
import math
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..safe_parse import as_float, parse_json, parse_yaml, read_text
from . import slots
from .errors import ParameterError
from .firmware import _INF_WHEN_ABSENT, FIRMWARE_LAWS, FirmwareLaw, firmware_from_mapping
from .friction_models import FRICTION_KEYS, LAW_CURRENT, LAW_VOLTAGE, MODEL_NAMES, MODELS, N_PACKED, Slot
from .schema import ACTUATOR_FIELDS, check_field
from .thermal import ThermalParams

MODEL_TITLES: dict[str, str] = {name: row.title for name, row in MODELS.items()}
#: bam JSON friction keys used by each model (Duclusaud et al. Eq. 3, 6, 7, 8, 9, 10), from the registry.
MODEL_FRICTION_KEYS: dict[str, tuple[str, ...]] = {name: row.keys for name, row in MODELS.items()}
MOTOR_KEYS: tuple[str, ...] = ("kt", "R", "armature")
DTHETA_MAX = 100.0  # [rad/s] bam's Simulator.step clamp


def __getattr__(name: str) -> int:
    """``P_<NAME>``: the former name of packed slot ``slots.<NAME>`` (e.g. ``P_KP`` is ``slots.KP``)."""
    if name.startswith("P_") and name[2:] in Slot.__members__:
        return int(Slot[name[2:]])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def unknown_firmware_error(actuator: str, source: str) -> ParameterError:
    """The error for an actuator without a firmware law: lists the known laws and how to give one."""
    return ParameterError(
        f"{source}: actuator {actuator!r} has no known firmware law; known laws: "
        f"{', '.join(FIRMWARE_LAWS)}; or give one as a 'firmware' object in the file "
        "(control, vin, kp, error_gain, max_pwm, current_limit, goal_velocity_limit) "
        "or with --firmware"
    )


@dataclass(frozen=True)
class ActuatorParams:
    """One servo's motor, friction and firmware parameters (SI units, validated, immutable)."""

    actuator: str
    model: str
    kt: float
    R: float
    armature: float
    friction: Mapping[str, float] = field(default_factory=dict)
    firmware: FirmwareLaw = field(default_factory=FirmwareLaw)
    q_offset: float = 0.0  # [rad] encoder zero vs. load zero: the load is evaluated at θ + q_offset (bam)
    dtheta_max: float = DTHETA_MAX  # [rad/s] simulator velocity clamp (bam's Simulator.step: 100)
    thermal: ThermalParams | None = None  # winding thermal model (models/thermal.py); None: constant temperature

    def __post_init__(self) -> None:
        if self.model not in MODEL_NAMES:
            raise ParameterError(f"unknown friction model {self.model!r}; valid models: {', '.join(MODEL_NAMES)}")
        for key in (*MOTOR_KEYS, "q_offset", "dtheta_max"):
            object.__setattr__(self, key, check_field(ACTUATOR_FIELDS, key, getattr(self, key)))
        needed = MODEL_FRICTION_KEYS[self.model]
        missing = [k for k in needed if k not in self.friction]
        if missing:
            raise ParameterError(f"model {self.model} needs friction key(s) missing here: {', '.join(missing)}")
        unknown = [k for k in self.friction if k not in needed]
        if unknown:
            raise ParameterError(f"friction key(s) {', '.join(unknown)} are not used by model {self.model}")
        clean = {k: check_field(ACTUATOR_FIELDS, k, self.friction[k]) for k in needed}
        object.__setattr__(self, "friction", types.MappingProxyType(clean))  # read-only view: immutable

    def __hash__(self) -> int:  # friction is a dict, make the frozen object hashable anyway
        return hash(
            (
                self.actuator,
                self.model,
                self.kt,
                self.R,
                self.armature,
                tuple(sorted(self.friction.items())),
                self.firmware,
                self.q_offset,
                self.dtheta_max,
                self.thermal,
            )
        )

    # -------------------------------------------------------------- derived
    def with_(self, **changes: Any) -> ActuatorParams:
        """Copy with some fields changed (motor keys, friction keys, ``firmware=`` or ``model=``)."""
        friction = dict(self.friction)
        top = {}
        for k, v in changes.items():
            if k in FRICTION_KEYS:
                friction[k] = v
            else:
                top[k] = v
        return dataclasses.replace(self, friction=friction, **top)

    def packed(self) -> np.ndarray:
        """The packed coefficient vector (length ``N_PACKED``) every kernel consumes."""
        p = np.zeros(N_PACKED)
        for spec in FRICTION_KEYS.values():  # a coefficient the model lacks: its neutral value
            p[list(spec.slots)] = spec.neutral
        for key, value in self.friction.items():
            p[list(FRICTION_KEYS[key].slots)] = value
        p[slots.KT], p[slots.R], p[slots.ARM] = self.kt, self.R, self.armature
        fw = self.firmware
        p[slots.VIN], p[slots.KP], p[slots.EGAIN], p[slots.MAXPWM] = fw.vin, fw.kp, fw.error_gain, fw.max_pwm
        p[slots.IMAX] = fw.current_limit
        p[slots.LAW] = LAW_VOLTAGE if fw.control == "voltage" else LAW_CURRENT
        p[slots.QOFF] = self.q_offset
        p[slots.VMAX] = self.dtheta_max
        p[slots.GVMAX] = fw.goal_velocity_limit
        return p

    # -------------------------------------------------------------- bam JSON
    def to_bam_dict(self, with_firmware: bool = True) -> dict[str, Any]:
        """bam's flat JSON form (keys kt, R, armature, friction keys, model, actuator), plus a ``firmware``
        object (bam ignores it) so that a changed kp or supply survives a save/load."""
        d: dict[str, Any] = {"kt": self.kt, "R": self.R, "armature": self.armature, "q_offset": self.q_offset}
        d.update(self.friction)
        d["model"] = self.model
        d["actuator"] = self.actuator
        if self.dtheta_max != DTHETA_MAX:
            d["dtheta_max"] = self.dtheta_max
        if with_firmware:
            d["firmware"] = {k: (None if v == math.inf else v) for k, v in dataclasses.asdict(self.firmware).items()}
        if self.thermal is not None:
            d["thermal"] = self.thermal.to_dict()
        return d

    @classmethod
    def from_bam_dict(
        cls, data: Mapping[str, Any], *, firmware: FirmwareLaw | None = None, source: str = "parameters"
    ) -> ActuatorParams:
        """Build from bam's JSON dict (``q_offset`` and our ``dtheta_max`` optional); missing keys are named.

        The firmware law comes from ``firmware=``, else the dict's ``firmware`` object, else the actuator's row
        of :data:`FIRMWARE_LAWS`."""
        if not isinstance(data, Mapping):
            raise ParameterError(f"{source}: expected a JSON object, got {type(data).__name__}")
        for key in ("model", "actuator", *MOTOR_KEYS):
            if key not in data:
                raise ParameterError(f"{source}: missing key {key!r}")
        model = str(data["model"])
        if model not in MODEL_NAMES:
            raise ParameterError(f"{source}: unknown model {model!r}; valid models: {', '.join(MODEL_NAMES)}")
        _refuse_unknown_keys(data, model, source)
        actuator = str(data["actuator"])
        if firmware is None and data.get("firmware") is not None:
            firmware = firmware_from_mapping(data["firmware"], source)
        if firmware is None and actuator not in FIRMWARE_LAWS:
            raise unknown_firmware_error(actuator, source)
        fw = firmware or FIRMWARE_LAWS[actuator]
        thermal = data.get("thermal")
        thermal = None if thermal is None else ThermalParams.from_mapping(thermal, source)
        friction = {}
        for k in MODEL_FRICTION_KEYS[model]:
            if k not in data:
                raise ParameterError(f"{source}: model {model} needs key {k!r}, which is missing")
            friction[k] = data[k]
        try:
            return cls(
                actuator=actuator,
                model=model,
                kt=data["kt"],
                R=data["R"],
                armature=data["armature"],
                friction=friction,
                firmware=fw,
                q_offset=data.get("q_offset", 0.0),
                dtheta_max=data.get("dtheta_max", DTHETA_MAX),
                thermal=thermal,
            )
        except ParameterError as e:
            raise ParameterError(f"{source}: {e}") from None

    def save_json(self, path: str | Path) -> None:
        from ..io.atomic import atomic_write_text

        atomic_write_text(path, json.dumps(self.to_bam_dict(), indent=4) + "\n")

    @classmethod
    def load_json(cls, path: str | Path, *, firmware: FirmwareLaw | None = None) -> ActuatorParams:
        data = _parse_json(path)
        return cls.from_bam_dict(data, firmware=firmware, source=str(path))

    # -------------------------------------------------------------- ROS parameters / YAML
    def to_ros_parameters(self, prefix: str = "actuator.") -> dict[str, Any]:
        """Flat ``name → value`` dict usable as ROS 2 parameters (dots are ROS namespaces)."""
        out: dict[str, Any] = {f"{prefix}actuator": self.actuator, f"{prefix}model": self.model}
        out.update({f"{prefix}{k}": float(getattr(self, k)) for k in (*MOTOR_KEYS, "q_offset", "dtheta_max")})
        out.update({f"{prefix}{k}": float(v) for k, v in self.friction.items()})
        fw = self.firmware
        out.update(
            {
                f"{prefix}firmware.control": fw.control,
                f"{prefix}firmware.vin": fw.vin,
                f"{prefix}firmware.kp": fw.kp,
                f"{prefix}firmware.error_gain": fw.error_gain,
                f"{prefix}firmware.max_pwm": fw.max_pwm,
            }
        )
        out.update(
            {
                f"{prefix}firmware.{k}": (getattr(fw, k) if math.isfinite(getattr(fw, k)) else 0.0)
                for k in _INF_WHEN_ABSENT
            }
        )
        if self.thermal is not None:
            out.update({f"{prefix}thermal.{k}": v for k, v in self.thermal.to_dict().items()})
        return out

    @classmethod
    def from_ros_parameters(
        cls,
        params: Mapping[str, Any],
        prefix: str = "actuator.",
        source: str = "ROS parameters",
        firmware: FirmwareLaw | None = None,
    ) -> ActuatorParams:
        """Inverse of :meth:`to_ros_parameters` (``firmware.current_limit`` / ``goal_velocity_limit`` 0: none)."""
        flat = {k[len(prefix) :]: v for k, v in params.items() if k.startswith(prefix)}
        fw_keys = {k.split(".", 1)[1]: v for k, v in flat.items() if k.startswith("firmware.")}
        base = FIRMWARE_LAWS.get(str(flat.get("actuator", "")), FirmwareLaw())
        for key in _INF_WHEN_ABSENT:
            if key in fw_keys:
                fw_keys[key] = as_float(fw_keys[key], source, f"firmware.{key}", ParameterError) or math.inf
        fw = firmware or firmware_from_mapping(fw_keys, source, base=base)
        bam = {k: v for k, v in flat.items() if not k.startswith(("firmware.", "thermal."))}
        thermal = {k.split(".", 1)[1]: v for k, v in flat.items() if k.startswith("thermal.")}
        if thermal:
            bam["thermal"] = thermal
        return cls.from_bam_dict(bam, firmware=fw, source=source)

    def to_yaml(self, node_name: str = "/**") -> str:
        """YAML in the ``node: ros__parameters:`` convention, nested by the dotted names."""
        import yaml

        nested: dict[str, Any] = {}
        for k, v in self.to_ros_parameters().items():
            cur = nested
            *parents, leaf = k.split(".")
            for p in parents:
                cur = cur.setdefault(p, {})
            cur[leaf] = v
        return yaml.safe_dump({node_name: {"ros__parameters": nested}}, sort_keys=False)

    def save_yaml(self, path: str | Path, node_name: str = "/**") -> None:
        from ..io.atomic import atomic_write_text

        atomic_write_text(path, self.to_yaml(node_name))

    @classmethod
    def load_yaml(cls, path: str | Path, firmware: FirmwareLaw | None = None) -> ActuatorParams:
        """Read a YAML written by :meth:`save_yaml` (first node's ``ros__parameters``)."""
        doc = parse_yaml(_read_text(path), str(path), ParameterError)
        if not isinstance(doc, dict) or not doc:
            raise ParameterError(f"{path}: expected '<node>: ros__parameters: ...'")
        node = next(iter(doc.values()))
        if not isinstance(node, dict) or not isinstance(node.get("ros__parameters"), dict):
            raise ParameterError(f"{path}: missing key 'ros__parameters' (a mapping)")
        flat = _flatten(node["ros__parameters"])
        return cls.from_ros_parameters(flat, source=str(path), firmware=firmware)


#: keys a parameter file may carry besides the friction coefficients of its model
_FILE_KEYS = ("model", "actuator", *MOTOR_KEYS, "q_offset", "dtheta_max", "firmware", "thermal")


def _refuse_unknown_keys(data: Mapping[str, Any], model: str, source: str) -> None:
    """One line naming ``source`` and every key the file's ``model`` does not read (a misspelt key, or another
    model's friction coefficient, would otherwise be dropped silently). bam's published files carry none."""
    used = {*_FILE_KEYS, *MODEL_FRICTION_KEYS[model]}
    unknown = [str(k) for k in data if k not in used]
    if not unknown:
        return
    other = [k for k in unknown if k in FRICTION_KEYS]
    if other:
        raise ParameterError(
            f"{source}: key(s) {', '.join(other)} are friction coefficients model {model} does not use "
            f"(it uses {', '.join(MODEL_FRICTION_KEYS[model])}); remove them or set 'model'"
        )
    raise ParameterError(
        f"{source}: unknown key(s) {', '.join(unknown)}; valid: {', '.join((*_FILE_KEYS, *FRICTION_KEYS))}"
    )


def _read_text(path: str | Path) -> str:
    return read_text(path, ParameterError, what="parameter file")


def _parse_json(path: str | Path) -> Any:
    return parse_json(_read_text(path), str(path), ParameterError)


def _flatten(d: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, Mapping):
            out.update(_flatten(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def load_params(path: str | Path, firmware: FirmwareLaw | None = None) -> ActuatorParams:
    """Load bam JSON (``.json``) or ROS-parameter YAML (``.yaml``/``.yml``); ``firmware`` replaces the file's
    law (and gives one to an actuator the table does not know)."""
    p = Path(path)
    if not p.exists():
        raise ParameterError(f"{p}: no such file")
    if p.suffix.lower() in (".yaml", ".yml"):
        params = ActuatorParams.load_yaml(p, firmware=firmware)
    else:
        params = ActuatorParams.load_json(p, firmware=firmware)
    return params


def pack(params: ActuatorParams | np.ndarray | list) -> np.ndarray:
    """Packed coefficients from one ActuatorParams, an array (..., N_PACKED), or a nested list of params."""
    if isinstance(params, ActuatorParams):
        return params.packed()
    if isinstance(params, np.ndarray):
        if params.shape[-1:] != (N_PACKED,):
            raise ValueError(f"params: packed array must end with length {N_PACKED}, got shape {params.shape}")
        return params
    return np.asarray([pack(p) for p in params])
