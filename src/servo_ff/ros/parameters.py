"""Node parameters declared once, from a table: :class:`ParamSpec` rows (name, default, unit, range, meaning) give
``rcl_interfaces/ParameterDescriptor`` declarations and the on-set validation of :class:`ParameterTable`
(non-finite numbers, out-of-range values, unknown choices, arrays of the wrong length and sets the ROS-free core
refuses are rejected with a reason naming the key, and every refusal is logged, throttled); :func:`actuator_specs`
generates the ``actuator.*`` rows from the core schema (``servo_ff.models.schema``). The docs' parameter tables
are generated from the same rows (:mod:`servo_ff.nodes.param_docs`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor, SetParametersResult
from rclpy.node import Node
from rclpy.parameter import Parameter

from servo_ff.models.friction_models import MODEL_NAMES
from servo_ff.models.params import ActuatorParams, ParameterError
from servo_ff.models.schema import ACTUATOR_FIELDS, FIRMWARE_FIELDS, FieldSpec
from servo_ff.models.thermal import THERMAL_FIELDS

from .throttle import Throttle, throttle_key


# ----------------------------------------------------------------------------------------------- parameters
@dataclass(frozen=True)
class ParamSpec:
    """One declared parameter. ``lo``/``hi`` bound numbers (element-wise for arrays); ``per_joint`` arrays must
    have one entry per joint or exactly one (broadcast); ``choices`` restricts strings."""

    name: str
    default: Any
    description: str
    unit: str = ""
    lo: float | None = None
    hi: float | None = None
    read_only: bool = False
    choices: tuple[str, ...] | None = None
    per_joint: bool = False
    lo_open: bool = False  # True: lo itself is refused (> lo)

    def descriptor(self) -> ParameterDescriptor:
        text = self.description + (f" [{self.unit}]" if self.unit else "")
        if self.choices:
            text += f" (one of: {', '.join(self.choices)})"
        if self.per_joint:
            text += " (one value per joint, in `joints` order, or one value for all)"
        d = ParameterDescriptor(name=self.name, description=text, read_only=self.read_only)
        if self.lo is not None or self.hi is not None:
            lo = -math.inf if self.lo is None else self.lo
            hi = math.inf if self.hi is None else self.hi
            if isinstance(self.default, bool):
                pass
            elif isinstance(self.default, int):
                d.integer_range = [
                    IntegerRange(from_value=int(max(lo, -(2**62))), to_value=int(min(hi, 2**62)), step=0)
                ]
            elif isinstance(self.default, float):
                d.floating_point_range = [FloatingPointRange(from_value=float(lo), to_value=float(hi), step=0.0)]
            d.additional_constraints = f"every value in {'(' if self.lo_open else '['}{lo}, {hi}]"
        return d

    def check(self, value: Any, n_joints: int | None = None) -> str | None:
        """Reason the value is refused, or None."""
        if isinstance(value, str):
            if self.choices and value not in self.choices:
                return f"{self.name}={value!r} is not one of {', '.join(self.choices)}"
            return None
        if isinstance(value, bool):
            return None
        if isinstance(value, (int, float)):
            values = [value]
        elif isinstance(value, (list, tuple, np.ndarray)) and not any(isinstance(v, str) for v in value):
            values = list(value)
            if self.per_joint and n_joints is not None and len(values) not in (1, n_joints):
                return f"{self.name} has {len(values)} values; expected {n_joints} (one per joint) or 1"
        else:
            return None
        for i, v in enumerate(values):
            where = f"{self.name}[{i}]" if len(values) > 1 or self.per_joint else self.name
            if not math.isfinite(float(v)):
                return f"{where}={v} is not finite"
            if self.lo is not None and (v < self.lo or (self.lo_open and v == self.lo)):
                return (
                    f"{where}={v} is {'not above' if self.lo_open else 'below'} its minimum {self.lo}"
                    f"{' ' + self.unit if self.unit else ''}"
                )
            if self.hi is not None and v > self.hi:
                return f"{where}={v} is above its maximum {self.hi}{' ' + self.unit if self.unit else ''}"
        return None


def field_param(
    name: str, spec: FieldSpec, default: Any, per_joint: bool = False, description: str | None = None, **kwargs: Any
) -> ParamSpec:
    """A parameter declared from its row of the core schema (:mod:`servo_ff.models.schema`: unit, admissible
    range, meaning), so that the range is written once."""
    return ParamSpec(
        name,
        default,
        description or spec.description,
        unit=spec.unit,
        lo=spec.lo,
        hi=spec.hi,
        lo_open=spec.lo_open,
        per_joint=per_joint,
        **kwargs,
    )


#: ``actuator.*`` keys a servo node does not declare: its P gain is its own ``kp`` parameter (one owner)
NOT_ACTUATOR_PARAMETERS = ("firmware.kp",)


def actuator_specs(params: ActuatorParams, prefix: str = "actuator.") -> list[ParamSpec]:
    """``actuator.*`` parameter specs generated from the core schema (:mod:`servo_ff.models.schema`: unit,
    admissible range, meaning), defaults from ``params``; no ``firmware.kp`` (the node's ``kp`` is the gain)."""
    specs = []
    for name, value in params.to_ros_parameters(prefix).items():
        key = name[len(prefix) :]
        if key in NOT_ACTUATOR_PARAMETERS:
            continue
        if key == "model":
            specs.append(
                ParamSpec(
                    name,
                    value,
                    "friction model (Duclusaud et al. Eq. 3, 6-10)",
                    read_only=True,
                    choices=MODEL_NAMES,
                )
            )
        elif key == "firmware.control":
            specs.append(ParamSpec(name, value, "firmware position law", choices=("voltage", "current")))
        elif isinstance(value, str):
            specs.append(ParamSpec(name, value, f"actuator {key}", read_only=True))
        else:
            table, field = (
                (FIRMWARE_FIELDS, key[len("firmware.") :]) if key.startswith("firmware.") else (ACTUATOR_FIELDS, key)
            )
            if key.startswith("thermal."):
                table, field = THERMAL_FIELDS, key[len("thermal.") :]
            f = table[field]
            unit = f"{f.unit}, 0 = none" if f.none_is_inf else f.unit
            specs.append(
                ParamSpec(
                    name,
                    float(value),
                    f.description,
                    unit=unit,
                    lo=0.0 if f.none_is_inf else f.lo,
                    hi=f.hi,
                    lo_open=f.lo_open and not f.none_is_inf,
                )
            )
    return specs


class ParameterTable:
    """Declares ``specs`` on ``node`` and validates every later update.

    ``validate(candidate) -> reason | None`` sees the whole parameter set as it would be after the update
    (cross-parameter checks, core schema); ``apply(changed_names)`` runs after a successful update.
    """

    def __init__(
        self,
        node: Node,
        specs: Sequence[ParamSpec],
        validate: Callable[[dict[str, Any]], str | None] | None = None,
        apply: Callable[[set[str]], None] | None = None,
        n_joints: Callable[[dict[str, Any]], int | None] | None = None,
    ):
        self.node = node
        self.specs = {s.name: s for s in specs}
        node.__dict__.setdefault("parameter_tables", []).append(self)  # what a node declares (docs are generated)
        self._validate = validate
        self._apply = apply
        self._n_joints = n_joints or (lambda values: len(values["joints"]) if "joints" in values else None)
        self._ready = False
        self.throttle = Throttle(1.0)
        _log_refusals(node, self)
        node.add_on_set_parameters_callback(self._on_set)
        if hasattr(node, "add_post_set_parameters_callback"):
            node.add_post_set_parameters_callback(self._post_set)
        for s in specs:
            node.declare_parameter(s.name, s.default, s.descriptor())
        self.values: dict[str, Any] = {s.name: self._py(node.get_parameter(s.name).value) for s in specs}
        reason = self._full_check(self.values)
        if reason:
            raise ValueError(f"{node.get_name()}: invalid parameter: {reason}")
        self._ready = True

    @staticmethod
    def _py(v: Any) -> Any:
        if isinstance(v, (np.ndarray, tuple)) or type(v).__name__ == "array":
            return list(v)
        return v

    def _full_check(self, values: Mapping[str, Any]) -> str | None:
        n = self._n_joints(dict(values))
        for name, v in values.items():
            spec = self.specs.get(name)
            if spec is not None:
                reason = spec.check(v, n)
                if reason:
                    return reason
        if self._validate is not None:
            try:
                return self._validate(dict(values))
            except (ParameterError, ValueError, OSError) as e:
                return str(e)
        return None

    def _on_set(self, params: list[Parameter]) -> SetParametersResult:
        params = [p for p in params if p.name in self.specs]
        if not params:
            return SetParametersResult(successful=True)
        candidate = dict(getattr(self, "values", {}))
        for p in params:
            candidate[p.name] = self._py(p.value)
        if not self._ready:  # during declaration: per-parameter checks only (others are not declared yet)
            for p in params:
                spec = self.specs.get(p.name)
                reason = spec.check(self._py(p.value)) if spec else None
                if reason:
                    return SetParametersResult(successful=False, reason=reason)
            return SetParametersResult(successful=True)
        reason = self._full_check(candidate)
        if reason:  # logged by the set_parameters wrapper (_log_refusals), as every other refusal
            return SetParametersResult(successful=False, reason=reason)
        return SetParametersResult(successful=True)

    def _post_set(self, params: list[Parameter]) -> None:
        params = [p for p in params if p.name in self.specs]
        if not self._ready or not params:
            return
        for p in params:
            self.values[p.name] = self._py(p.value)
        if self._apply is not None:
            self._apply({p.name for p in params})

    def __getitem__(self, name: str) -> Any:
        return self.values[name]


def _log_refusals(node: Node, table: ParameterTable) -> None:
    """Every refused parameter change of ``node`` — by rclpy (read-only, wrong type, descriptor range,
    undeclared) or by a ParameterTable callback — is logged with the parameter name(s) and the reason, throttled
    per parameter and reason (the count of suppressed repeats is logged), not only returned in the service reply. Wraps
    the node's ``set_parameters`` / ``set_parameters_atomically`` (the parameter services call the latter).
    Throttled per parameter and reason: two different refusals of one parameter within a period both get a line."""
    if getattr(node, "_servo_ff_refusal_log", None) is not None:
        return
    node._servo_ff_refusal_log = table

    def log(params, reason: str) -> None:
        names = ", ".join(p.name for p in params) or "(none)"
        key = throttle_key(f"parameter:{names}", reason)
        throttle = getattr(node, "throttle", None)
        throttle = throttle if isinstance(throttle, Throttle) else table.throttle
        throttle(key, node.get_logger().warning, f"parameter change refused: {names}: {reason}")

    set_atomic, set_each = node.set_parameters_atomically, node.set_parameters

    def set_parameters_atomically(parameter_list):
        try:
            result = set_atomic(parameter_list)
        except Exception as e:
            log(parameter_list, f"{type(e).__name__}: {e}")
            raise
        if not result.successful:
            log(parameter_list, result.reason)
        return result

    def set_parameters(parameter_list):
        try:
            results = set_each(parameter_list)
        except Exception as e:
            log(parameter_list, f"{type(e).__name__}: {e}")
            raise
        for p, r in zip(parameter_list, results):
            if not r.successful:
                log([p], r.reason)
        return results

    node.set_parameters_atomically = set_parameters_atomically
    node.set_parameters = set_parameters


def per_joint(values: Sequence[float], n: int, name: str) -> np.ndarray:
    """Broadcast a per-joint parameter (length n or 1) to an (n,) array."""
    a = np.asarray(values, dtype=np.float64).reshape(-1)
    if a.size == 1:
        return np.full(n, a[0])
    if a.size != n:
        raise ValueError(f"{name} has {a.size} values; expected {n} (one per joint) or 1")
    return a


def actuator_from_values(values: Mapping[str, Any], prefix: str = "actuator.") -> ActuatorParams:
    """Rebuild the core parameter set from the node's ``actuator.*`` parameters (raises ParameterError)."""
    return ActuatorParams.from_ros_parameters({k: v for k, v in values.items() if k.startswith(prefix)}, prefix)


# ----------------------------------------------------------------------------------------------- goals


def undeclared_overrides(node: Node) -> list[str]:
    """Names given to ``node`` at start-up (``--params-file``, ``-p``, ``parameter_overrides``) that it does not
    declare: rclpy ignores them without a word, so a misspelt or renamed parameter would run on its default."""
    given = getattr(node, "_parameter_overrides", {}) or {}
    return sorted(n for n in given if not node.has_parameter(n) and not n.startswith("qos_overrides."))


def warn_undeclared_overrides(node: Node) -> list[str]:
    """Log one warning naming every undeclared start-up parameter of ``node`` (see :func:`undeclared_overrides`)."""
    names = undeclared_overrides(node)
    if names:
        kp = [n for n in names if n.endswith(".firmware.kp")]
        node.get_logger().warning(
            f"{node.get_name()} has no parameter(s) {', '.join(names)}: ignored (misspelt or renamed? "
            "`ros2 param list` shows what it declares)"
            + (f"; {kp[0]}: the P gain is the parameter kp" if kp and node.has_parameter("kp") else "")
        )
    return names


def servo_preset_specs(purpose: str, model: str = "m4") -> list[ParamSpec]:
    """``servo`` (servo type: a preset or a hardware control table that names one, ``PRESET_ALIASES``) and ``model``
    (friction model m1..m6, default ``model``): the published parameter file (:func:`servo_ff.models.presets.preset`)
    a node takes ``purpose`` from."""
    from servo_ff.models.presets import PRESET_ALIASES, SERVO_NAMES

    return [
        ParamSpec(
            "servo",
            "mx64",
            f"servo type whose published parameter file gives {purpose} (a preset, or a hardware control table "
            "whose servo one models: xl330-m288, mx106-p1, …)",
            read_only=True,
            choices=(*SERVO_NAMES, *PRESET_ALIASES),
        ),
        ParamSpec(
            "model", model, "friction model (m1..m6) of that parameter file", read_only=True, choices=tuple(MODEL_NAMES)
        ),
    ]
