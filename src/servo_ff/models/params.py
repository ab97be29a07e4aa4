"""Actuator parameter sets: one typed, immutable, validated schema shared by the core, the CLI, YAML and ROS.

An :class:`ActuatorParams` holds, in SI units:

* the motor (output side, gearbox included): ``kt`` [N·m/A = V·s/rad], ``R`` [Ω], ``armature`` [kg·m²];
* a friction model ``model`` in ``m1``…``m6`` (Duclusaud et al. (Extended Friction Models) Eq. 3, 6–10) and its
  coefficients, named as in Rhoban/bam's JSON files so that a bam file means the same thing here;
* the firmware law (:class:`FirmwareLaw`): supply voltage, P gain in register units, the gain that turns
  ``kp·error`` into a PWM duty cycle, and the duty / current limits.

Every model is a special case of the most general budget (M6), so the kernels work on one packed
vector (:meth:`ActuatorParams.packed`, layout ``P_*``) whatever the model.
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
from .errors import ParameterError
from .firmware import _INF_WHEN_ABSENT, FIRMWARE_LAWS, FirmwareLaw, firmware_from_mapping
from .schema import ACTUATOR_FIELDS, check_field
from .thermal import ThermalParams

MODEL_NAMES: tuple[str, ...] = ("m1", "m2", "m3", "m4", "m5", "m6")
MODEL_TITLES: dict[str, str] = {
    "m1": "Coulomb-viscous (M1)",
    "m2": "Stribeck (M2)",
    "m3": "Load-dependent (M3)",
    "m4": "Stribeck load-dependent (M4)",
    "m5": "Directional (M5)",
    "m6": "Quadratic (M6)",
}

_STRIBECK_SHAPE = ("dtheta_stribeck", "alpha")
#: bam JSON friction keys used by each model (Duclusaud et al. Eq. 3, 6, 7, 8, 9, 10).
MODEL_FRICTION_KEYS: dict[str, tuple[str, ...]] = {
    "m1": ("friction_base", "friction_viscous"),
    "m2": ("friction_base", "friction_viscous", "friction_stribeck", *_STRIBECK_SHAPE),
    "m3": ("friction_base", "friction_viscous", "load_friction_base"),
    "m4": (
        "friction_base",
        "friction_viscous",
        "load_friction_base",
        "friction_stribeck",
        "load_friction_stribeck",
        *_STRIBECK_SHAPE,
    ),
    "m5": (
        "friction_base",
        "friction_viscous",
        "friction_stribeck",
        "load_friction_motor",
        "load_friction_external",
        "load_friction_motor_stribeck",
        "load_friction_external_stribeck",
        *_STRIBECK_SHAPE,
    ),
    "m6": (
        "friction_base",
        "friction_viscous",
        "friction_stribeck",
        "load_friction_motor",
        "load_friction_external",
        "load_friction_motor_stribeck",
        "load_friction_external_stribeck",
        "load_friction_motor_quad",
        "load_friction_external_quad",
        *_STRIBECK_SHAPE,
    ),
}
FRICTION_KEYS: tuple[str, ...] = MODEL_FRICTION_KEYS["m6"] + ("load_friction_base", "load_friction_stribeck")
MOTOR_KEYS: tuple[str, ...] = ("kt", "R", "armature")

# Packed layout used by every kernel (models/kernels.py). Order is part of the core API.
P_KT, P_R, P_ARM = 0, 1, 2
P_KC, P_KV, P_KCS = 3, 4, 5  # Coulomb, viscous, Stribeck-Coulomb
P_KM, P_KE, P_KMS, P_KES = 6, 7, 8, 9  # load-dependent (motor/external, base/Stribeck)
P_KMQ, P_KEQ = 10, 11  # quadratic (motor, external)
P_VS, P_ALPHA = 12, 13  # Stribeck velocity [rad/s], exponent
P_VIN, P_KP, P_EGAIN, P_MAXPWM, P_IMAX, P_LAW = 14, 15, 16, 17, 18, 19
P_QOFF = 20  # q_offset [rad]: the load is evaluated at θ + q_offset (bam)
P_VMAX = 21  # simulator velocity clamp |θ̇| ≤ dtheta_max [rad/s] (bam: 100)
P_GVMAX = 22  # firmware goal-velocity limit [rad/s] (inf: none; Feetech STS)
N_PACKED = 23
DTHETA_MAX = 100.0  # [rad/s] bam's Simulator.step clamp
LAW_VOLTAGE, LAW_CURRENT = 0.0, 1.0


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
        f = self.friction
        p = np.zeros(N_PACKED)
        p[P_KT], p[P_R], p[P_ARM] = self.kt, self.R, self.armature
        p[P_KC] = f["friction_base"]
        p[P_KV] = f["friction_viscous"]
        p[P_KCS] = f.get("friction_stribeck", 0.0)
        if self.model in ("m3", "m4"):  # |Kl τm − Kl τe| = Kl·|τm − τe|  (Eq. 7–8)
            p[P_KM] = p[P_KE] = f["load_friction_base"]
            p[P_KMS] = p[P_KES] = f.get("load_friction_stribeck", 0.0)
        elif self.model in ("m5", "m6"):
            p[P_KM], p[P_KE] = f["load_friction_motor"], f["load_friction_external"]
            p[P_KMS], p[P_KES] = f["load_friction_motor_stribeck"], f["load_friction_external_stribeck"]
            p[P_KMQ] = f.get("load_friction_motor_quad", 0.0)
            p[P_KEQ] = f.get("load_friction_external_quad", 0.0)
        p[P_VS] = f.get("dtheta_stribeck", 1.0)
        p[P_ALPHA] = f.get("alpha", 1.0)
        fw = self.firmware
        p[P_VIN], p[P_KP], p[P_EGAIN], p[P_MAXPWM] = fw.vin, fw.kp, fw.error_gain, fw.max_pwm
        p[P_IMAX] = fw.current_limit
        p[P_LAW] = LAW_VOLTAGE if fw.control == "voltage" else LAW_CURRENT
        p[P_QOFF] = self.q_offset
        p[P_VMAX] = self.dtheta_max
        p[P_GVMAX] = fw.goal_velocity_limit
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
        try:
            fw = firmware or base.with_(**fw_keys)
        except TypeError as e:
            raise ParameterError(f"{source}: {e}") from None
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
