"""Per-joint α̂ of Schwarz & Behnke (Compliant Robot Behavior) Eq. 19 (α̂0..α̂3, optional α̂4 of Eq. 14) and Stribeck
shape (q̇_s, δ of Eq. 9).

File format (YAML or JSON; the identification output of one servo is accepted as the ``default``)::

    default:              # optional: every joint not listed below
      alpha: [a0, a1, a2, a3]        # or 5 values with α̂4
      dq_s: 0.1                      # rad/s   (optional, 002 default 0.1)
      delta: 1.0                     #         (optional, 002 default 1)
    joints:
      l_knee: {alpha: [a0, a1, a2, a3, a4], dq_s: 1.6, delta: 1.3}
      r_knee: [a0, a1, a2, a3]       # short form

A top-level ``alpha`` (with optional ``dq_s``/``delta``) is the same as ``default``. A joint name the robot does
not have, a joint with no α and no default, a wrong length, a non-finite value or one outside its admissible
range (``servo_ff.models.schema.ALPHA_FIELDS``: α̂0 ≥ 1e-3, α̂1..α̂4 ≥ 0, q̇_s and δ bounded) raise
:class:`AlphaError` naming the file and key. Files pass the size, depth and no-alias limits of
:mod:`servo_ff.safe_parse`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ServoFFError
from ..models.errors import ParameterError
from ..models.params import ActuatorParams
from ..models.schema import ALPHA_FIELDS, check_field
from ..models.schwarz_behnke import DEFAULT_DELTA, DEFAULT_DQ_S, alpha_hat_from_actuator, stribeck_shape_from_actuator
from ..safe_parse import describe, parse_json, parse_yaml, read_text

N_ALPHA = 5  # α̂0..α̂4 (α̂4 = 0 when a file gives four)


class AlphaError(ServoFFError, ValueError):
    """An α file or mapping is invalid; the message names the file and key."""


@dataclass(frozen=True)
class AlphaTable:
    """α̂ (J, 5), q̇_s (J,), δ (J,) in the order of ``joint_names``."""

    joint_names: tuple[str, ...]
    alpha: np.ndarray
    dq_s: np.ndarray
    delta: np.ndarray

    def to_dict(self) -> dict[str, Any]:
        return {
            "joints": {
                n: {
                    "alpha": [float(v) for v in self.alpha[i]],
                    "dq_s": float(self.dq_s[i]),
                    "delta": float(self.delta[i]),
                }
                for i, n in enumerate(self.joint_names)
            }
        }


def _entry(src: str, key: str, value: Any) -> tuple[list[float], float, float]:
    if isinstance(value, Mapping):
        unknown = set(value) - {"alpha", "dq_s", "delta"}
        if unknown:
            raise AlphaError(f"{src}: {key} has unknown key(s) {sorted(unknown)}; expected alpha, dq_s, delta")
        if "alpha" not in value:
            raise AlphaError(f"{src}: {key} has no 'alpha'")
        alpha, dq_s, delta = value["alpha"], value.get("dq_s", DEFAULT_DQ_S), value.get("delta", DEFAULT_DELTA)
    else:
        alpha, dq_s, delta = value, DEFAULT_DQ_S, DEFAULT_DELTA
    if not isinstance(alpha, Sequence) or isinstance(alpha, str) or len(alpha) not in (4, 5):
        raise AlphaError(f"{src}: {key}.alpha must be a list of 4 (α̂0..α̂3) or 5 (..α̂4) numbers, got {describe(alpha)}")
    try:
        out = [check_field(ALPHA_FIELDS, f"alpha{i}", a, name=f"{key}.alpha[{i}]") for i, a in enumerate(alpha)]
        out += [0.0] * (N_ALPHA - len(out))
        shape = [
            check_field(ALPHA_FIELDS, name, v, name=f"{key}.{name}") for name, v in (("dq_s", dq_s), ("delta", delta))
        ]
    except ParameterError as e:
        raise AlphaError(f"{src}: {e}") from None
    return out, shape[0], shape[1]


def alpha_table_from_mapping(
    data: Mapping[str, Any], joint_names: Sequence[str], source: str = "<mapping>"
) -> AlphaTable:
    """Build an :class:`AlphaTable` for ``joint_names`` from a parsed file (see module docstring)."""
    if not isinstance(data, Mapping):
        raise AlphaError(f"{source}: expected a mapping at the top level, got {type(data).__name__}")
    default = data.get("default")
    if default is None and "alpha" in data:
        default = {k: data[k] for k in ("alpha", "dq_s", "delta") if k in data}
    joints = data.get("joints", {}) or {}
    if not isinstance(joints, Mapping):
        raise AlphaError(f"{source}: 'joints' must be a mapping joint name → α entry")
    unknown = [n for n in joints if n not in joint_names]
    if unknown:
        raise AlphaError(f"{source}: unknown joint name(s) {unknown}; the robot's joints are {', '.join(joint_names)}")
    rows = []
    for n in joint_names:
        if n in joints:
            rows.append(_entry(source, f"joints.{n}", joints[n]))
        elif default is not None:
            rows.append(_entry(source, "default", default))
        else:
            raise AlphaError(f"{source}: no α for joint {n!r} and no 'default' entry")
    return AlphaTable(
        tuple(joint_names),
        np.array([r[0] for r in rows]),
        np.array([r[1] for r in rows]),
        np.array([r[2] for r in rows]),
    )


def load_alpha(path: str | Path, joint_names: Sequence[str]) -> AlphaTable:
    """Read α̂ from a YAML or JSON file for the robot's ``joint_names``."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"alpha file not found: {path}")
    text = read_text(path, AlphaError, what="α file")
    if path.suffix.lower() == ".json":
        data = parse_json(text, str(path), AlphaError)
    else:
        data = parse_yaml(text, str(path), AlphaError)
    return alpha_table_from_mapping(data, joint_names, source=str(path))


def save_alpha(
    table: AlphaTable, path: str | Path, info: Mapping[str, Any] | None = None, as_default: bool = False
) -> Path:
    """Write ``table`` as YAML (or JSON by suffix); ``info`` (e.g. how it was fitted) goes under ``fit``, which
    readers ignore. ``as_default``: the one row of ``table`` is written as the ``default`` entry (every joint of
    the robot), not under its joint's name."""
    from ..io.atomic import atomic_write_text

    path = Path(path)
    doc: dict[str, Any] = table.to_dict()
    if as_default:
        if len(table.joint_names) != 1:
            raise ValueError(f"{path}: a default entry is one α, got {len(table.joint_names)} joints")
        doc = {"default": doc["joints"][table.joint_names[0]]}
    if info:
        doc["fit"] = dict(info)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() == ".json":
        atomic_write_text(path, json.dumps(doc, indent=2))
    else:
        import yaml

        atomic_write_text(path, yaml.safe_dump(doc, sort_keys=False))
    return path


def alpha_table_from_actuator(params: ActuatorParams, joint_names: Sequence[str]) -> AlphaTable:
    """Every joint gets the α̂ implied by one Duclusaud et al. parameter set (``alpha_hat_from_actuator``, with α̂4 from
    the armature) and its Stribeck shape (q̇_s = ``dtheta_stribeck``, δ = ``alpha``; 002 defaults for M1/M3)."""
    a = alpha_hat_from_actuator(params, with_inertia=True)
    dq_s, delta = stribeck_shape_from_actuator(params)
    J = len(joint_names)
    return AlphaTable(tuple(joint_names), np.tile(a, (J, 1)), np.full(J, float(dq_s)), np.full(J, float(delta)))
