"""The search space of simulation-MAE identification (Duclusaud et al., Extended Friction Models for the Physics
Simulation of Servo Actuators, §V): which keys a model searches, their bounds per actuator (one table, each row
citing its source), and how candidate values are written into packed parameter arrays."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from ..io.servo_log import LogBatch
from ..models import slots
from ..models.friction_models import FRICTION_KEYS, KEY_SLOTS, MODELS
from ..models.params import MODEL_NAMES, ActuatorParams, FirmwareLaw, ParameterError

#: Packed indices each searched key writes (the registry's; M3/M4's symmetric load terms fill two slots).
KEY_INDICES: dict[str, tuple[int, ...]] = KEY_SLOTS
#: Firmware constants fitted where the firmware has a target-velocity clamp (Feetech STS; bam's
#: STS3215Actuator fits ``error_gain_ratio`` in [0.1, 10] and ``max_velocity`` in [0.1, 10] × the default):
#: key → (low, high) as factors of the firmware row's value.
FIRMWARE_KEY_FACTORS: dict[str, tuple[float, float]] = {"error_gain": (0.1, 10.0), "goal_velocity_limit": (0.1, 10.0)}
FIRMWARE_KEYS_SOURCE = (
    "Rhoban/bam @1b5a1ce bam/feetech/actuator.py STS3215Actuator.initialize (error_gain_ratio, max_velocity)"
)

_BAM = "Rhoban/bam @1b5a1ce"
#: Friction search bounds, key → (low, high, source), shared by every actuator: the registry's
#: (:data:`servo_ff.models.friction_models.FRICTION_KEYS`, bam's ``Model.set_actuator`` unless stated).
FRICTION_BOUNDS: dict[str, tuple[float, float, str]] = {k: (f.lo, f.hi, f.source) for k, f in FRICTION_KEYS.items()}
#: Load-dependent friction keys whose upper bound is the actuator's ``max_load_friction``.
LOAD_FRICTION_KEYS = tuple(k for k, f in FRICTION_KEYS.items() if f.load_bound)
#: bam/model.py: Model.set_actuator creates q_offset = Parameter(0, -0.1, 0.1) for every actuator [rad].
BAM_Q_OFFSET_BOUNDS = (-0.1, 0.1)
#: Actuators without a row are searched in [ref/factor, ref·factor] around a reference parameter set.
REFERENCE_BOUNDS_FACTOR = 4.0


class BoundsRow(NamedTuple):
    """Search box of one actuator (output-side SI units) and where it comes from."""

    kt: tuple[float, float]  # [N·m/A]
    R: tuple[float, float]  # [Ω]
    armature: tuple[float, float]  # [kg·m²]
    source: str
    q_offset: tuple[float, float] = BAM_Q_OFFSET_BOUNDS  # [rad]
    max_load_friction: float = 0.5  # upper bound of the load-dependent friction coefficients [-]


_MX = BoundsRow(
    (1.0, 3.0),
    (1.0, 5.0),
    (0.001, 0.05),
    f"{_BAM} bam/dynamixel/actuator.py MXActuator.initialize; q_offset bam/model.py",
)
#: One row per actuator with published bounds. Actuators without a row are searched around a reference
#: parameter set (``--params``, or the actuator's preset): kt, R, armature in [ref/4, 4·ref].
SEARCH_BOUNDS: dict[str, BoundsRow] = {
    "mx64": _MX,
    "mx106": _MX,
    "xl320": BoundsRow(
        (0.25, 1.5),
        (3.0, 40.0),
        (0.0001, 0.01),
        f"{_BAM} bam/dynamixel/actuator.py XL320Actuator.initialize (max_load_friction 1.0); q_offset bam/model.py",
        max_load_friction=1.0,
    ),
    "xl330": BoundsRow(
        (0.1, 3.0),
        (2.0, 5.0),
        (0.0001, 0.05),
        f"{_BAM} bam/dynamixel/actuator.py XL330Actuator.initialize; q_offset bam/model.py",
    ),
    "sts3215": BoundsRow(
        (0.05, 2.5),
        (0.1, 10.0),
        (0.00001, 0.04),
        f"{_BAM} bam/feetech/actuator.py STS3215Actuator.initialize, q_offset (-0.2, 0.2) "
        "included (bam's Model.set_actuator re-creates it at (-0.1, 0.1) afterwards); bam also "
        "fits error_gain_ratio and max_velocity there, held at the firmware row here",
        q_offset=(-0.2, 0.2),
    ),
}


def bounds_row(actuator: str, reference: ActuatorParams | None = None) -> BoundsRow:
    """The actuator's :data:`SEARCH_BOUNDS` row, else one built around ``reference`` (or the actuator's preset)."""
    if actuator in SEARCH_BOUNDS:
        return SEARCH_BOUNDS[actuator]
    if reference is None:
        from ..models.presets import SERVO_NAMES, preset

        if actuator in SERVO_NAMES:
            reference = preset(actuator, "m1")
    if reference is None:
        raise ParameterError(
            f"no kt/R/armature bounds for actuator {actuator!r} (known: "
            f"{', '.join(SEARCH_BOUNDS)}); pass a reference parameter set (--params FILE)"
        )
    f = REFERENCE_BOUNDS_FACTOR
    box = {k: (getattr(reference, k) / f, getattr(reference, k) * f) for k in ("kt", "R", "armature")}
    if box["armature"][1] <= 0:
        raise ParameterError(f"reference for {actuator!r} has armature 0: no armature bounds can be built from it")
    q = max(BAM_Q_OFFSET_BOUNDS[1], 2 * abs(reference.q_offset))
    return BoundsRow(
        box["kt"],
        box["R"],
        box["armature"],
        f"reference parameter set ({reference.actuator} {reference.model}) ×/÷ {f:g}; friction and "
        "q_offset as bam/model.py",
        q_offset=(-q, q),
    )


def firmware_keys(firmware: FirmwareLaw | None) -> list[str]:
    """Firmware constants to fit: the error gain and the target-velocity clamp where the law has a clamp."""
    if firmware is None or not math.isfinite(firmware.goal_velocity_limit):
        return []
    return list(FIRMWARE_KEY_FACTORS)


def search_space(
    model: str,
    actuator: str,
    reference: ActuatorParams | None = None,
    fit_q_offset: bool = False,
    prior=None,
    firmware: FirmwareLaw | None = None,
) -> list[tuple[str, float, float]]:
    """(key, low, high) for kt, R, armature, the model's friction keys and (``fit_q_offset``) q_offset [rad].

    Bounds: :data:`SEARCH_BOUNDS` / :func:`bounds_row` for the motor keys and :data:`FRICTION_BOUNDS` for the
    friction keys; a ``reference`` whose friction value exceeds a bound widens that bound to twice the value.
    ``prior`` (a :class:`~servo_ff.identification.datasheet_prior.DatasheetPrior`) replaces the kt and R rows by
    its box. ``firmware`` with a target-velocity clamp adds its error gain and clamp (:func:`firmware_keys`).
    """
    if model not in MODEL_NAMES:
        raise ParameterError(f"unknown friction model {model!r}; valid models: {', '.join(MODEL_NAMES)}")
    row = bounds_row(actuator, reference)
    kt, r = (prior.kt_range(), prior.R_range()) if prior is not None else (row.kt, row.R)
    out = [("kt", *kt), ("R", *r), ("armature", *row.armature)]
    for k in MODELS[model].keys:
        lo, hi = FRICTION_KEYS[k].lo, FRICTION_KEYS[k].hi
        if FRICTION_KEYS[k].load_bound:
            hi = row.max_load_friction
        if reference is not None and k in reference.friction and reference.friction[k] > hi:
            hi = 2 * reference.friction[k]
        out.append((k, lo, hi))
    if fit_q_offset:
        out.append(("q_offset", *row.q_offset))
    for k in firmware_keys(firmware):
        lo, hi = FIRMWARE_KEY_FACTORS[k]
        v = getattr(firmware, k)
        out.append((k, lo * v, hi * v))
    return out


def params_from_vector(
    model: str, actuator: str, firmware: FirmwareLaw, keys: Sequence[str], values: np.ndarray
) -> ActuatorParams:
    """An :class:`ActuatorParams` from a vector of searched values (refuses non-finite values).

    ``q_offset`` [rad] is optional among ``keys`` (0 when absent)."""
    values = np.asarray(values, float)
    if not np.isfinite(values).all():
        bad = [k for k, v in zip(keys, values) if not math.isfinite(v)]
        raise ParameterError(f"non-finite fitted parameter(s): {', '.join(bad)}")
    d = dict(zip(keys, map(float, values)))
    fw = {k: d.pop(k) for k in FIRMWARE_KEY_FACTORS if k in d}
    if fw:
        firmware = firmware.with_(**fw)
    return ActuatorParams(
        actuator=actuator,
        model=model,
        kt=d.pop("kt"),
        R=d.pop("R"),
        armature=d.pop("armature"),
        q_offset=d.pop("q_offset", 0.0),
        friction=d,
        firmware=firmware,
    )


def pack_candidates(base: np.ndarray, keys: Sequence[str], values: np.ndarray, batch: LogBatch) -> np.ndarray:
    """Packed parameters (pop, logs, N_PACKED): copies of ``base`` with the candidate ``values`` (pop, k)
    written at their ``P_*`` indices and each log's firmware kp / supply voltage [V]."""
    values = np.atleast_2d(values)
    n_pop, n_logs = values.shape[0], batch.kp.shape[0]
    p = np.broadcast_to(base, (n_pop, n_logs, base.shape[-1])).copy()
    for j, key in enumerate(keys):
        for idx in KEY_INDICES[key]:
            p[:, :, idx] = values[:, j, None]
    p[:, :, slots.KP] = batch.kp
    p[:, :, slots.VIN] = batch.vin
    return p
