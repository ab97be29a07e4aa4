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


class Bound(NamedTuple):
    """A key's search interval [lo, hi] (SI units) and whether CMA-ES searches it in log(value) (``log``: for
    bounds a decade or more apart; needs lo > 0, :class:`Box`)."""

    lo: float
    hi: float
    log: bool = False


class SearchKey(NamedTuple):
    """One searched key: name, bounds (SI units) and whether it is searched in log space (:class:`Bound`)."""

    key: str
    lo: float
    hi: float
    log: bool = False


#: Packed indices each searched key writes (the registry's; M3/M4's symmetric load terms fill two slots).
KEY_INDICES: dict[str, tuple[int, ...]] = KEY_SLOTS
#: Firmware constants fitted where the firmware has a target-velocity clamp (Feetech STS; bam's
#: STS3215Actuator fits ``error_gain_ratio`` in [0.1, 10] and ``max_velocity`` in [0.1, 10] × the default):
#: key → (low, high, searched in log space) with low and high as factors of the firmware row's value.
FIRMWARE_KEY_FACTORS: dict[str, Bound] = {
    "error_gain": Bound(0.1, 10.0, log=True),
    "goal_velocity_limit": Bound(0.1, 10.0, log=True),
}
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

    kt: Bound  # [N·m/A]
    R: Bound  # [Ω]
    armature: Bound  # [kg·m²]
    source: str
    q_offset: tuple[float, float] = BAM_Q_OFFSET_BOUNDS  # [rad]
    max_load_friction: float = 0.5  # upper bound of the load-dependent friction coefficients [-]


_MX = BoundsRow(
    Bound(1.0, 3.0),
    Bound(1.0, 5.0),
    Bound(0.001, 0.05, log=True),
    f"{_BAM} bam/dynamixel/actuator.py MXActuator.initialize; q_offset bam/model.py",
)
#: One row per actuator with published bounds. Actuators without a row are searched around a reference
#: parameter set (``--params``, or the actuator's preset): kt, R, armature in [ref/4, 4·ref].
SEARCH_BOUNDS: dict[str, BoundsRow] = {
    "mx64": _MX,
    "mx106": _MX,
    "xl320": BoundsRow(
        Bound(0.25, 1.5),
        Bound(3.0, 40.0, log=True),
        Bound(0.0001, 0.01, log=True),
        f"{_BAM} bam/dynamixel/actuator.py XL320Actuator.initialize (max_load_friction 1.0); q_offset bam/model.py",
        max_load_friction=1.0,
    ),
    "xl330": BoundsRow(
        Bound(0.1, 3.0, log=True),
        Bound(2.0, 5.0),
        Bound(0.0001, 0.05, log=True),
        f"{_BAM} bam/dynamixel/actuator.py XL330Actuator.initialize; q_offset bam/model.py",
    ),
    "sts3215": BoundsRow(
        Bound(0.05, 2.5, log=True),
        Bound(0.1, 10.0, log=True),
        Bound(0.00001, 0.04, log=True),
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
    box = {k: Bound(getattr(reference, k) / f, getattr(reference, k) * f, log=True) for k in ("kt", "R", "armature")}
    if box["armature"].hi <= 0:
        raise ParameterError(f"reference for {actuator!r} has armature 0: no armature bounds can be built from it")
    q = max(BAM_Q_OFFSET_BOUNDS[1], 2 * abs(reference.q_offset))
    return BoundsRow(
        box["kt"],
        box["R"],
        box["armature"],
        f"reference parameter set ({reference.actuator} {reference.model}) ×/÷ {f:g} (log space); friction and "
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
) -> list[SearchKey]:
    """(key, low, high, log) for kt, R, armature, the model's friction keys and (``fit_q_offset``) q_offset [rad].

    Bounds and log flags: :data:`SEARCH_BOUNDS` / :func:`bounds_row` for the motor keys and the registry's
    :data:`~servo_ff.models.friction_models.FRICTION_KEYS` for the friction keys; a ``reference`` whose friction
    value exceeds a bound widens that bound to twice the value. ``prior`` (a
    :class:`~servo_ff.identification.datasheet_prior.DatasheetPrior`) replaces the kt and R rows by its box
    (×/÷ factor² wide: searched linearly). ``firmware`` with a target-velocity clamp adds its error gain and
    clamp (:func:`firmware_keys`). q_offset (signed) is searched linearly.
    """
    if model not in MODEL_NAMES:
        raise ParameterError(f"unknown friction model {model!r}; valid models: {', '.join(MODEL_NAMES)}")
    row = bounds_row(actuator, reference)
    if prior is not None:
        out = [SearchKey("kt", *prior.kt_range()), SearchKey("R", *prior.R_range())]
    else:
        out = [SearchKey("kt", *row.kt), SearchKey("R", *row.R)]
    out.append(SearchKey("armature", *row.armature))
    for k in MODELS[model].keys:
        f = FRICTION_KEYS[k]
        hi = row.max_load_friction if f.load_bound else f.hi
        if reference is not None and k in reference.friction and reference.friction[k] > hi:
            hi = 2 * reference.friction[k]
        out.append(SearchKey(k, f.lo, hi, f.log))
    if fit_q_offset:
        out.append(SearchKey("q_offset", *row.q_offset))
    for k in firmware_keys(firmware):
        b, v = FIRMWARE_KEY_FACTORS[k], getattr(firmware, k)
        out.append(SearchKey(k, b.lo * v, b.hi * v, b.log))
    return out


class Box:
    """The searched keys' box and the optimiser's coordinates u ∈ [0, 1]^n (vectorised over candidates).

    A linear key maps value = lo + u·(hi − lo); a log key (:attr:`SearchKey.log`) maps log(value) linearly, value =
    lo·(hi/lo)^u, so a step in u is a factor on the value whatever its decade. u = 0 and u = 1 give lo and hi
    exactly; values always lie in [lo, hi]. A log key needs lo > 0 (:class:`ParameterError` otherwise)."""

    def __init__(self, space: Sequence[SearchKey]) -> None:
        bad = [f"{s.key} [{s.lo:g}, {s.hi:g}]" for s in space if s.log and not 0 < s.lo <= s.hi]
        if bad:
            raise ParameterError(f"log-space search needs 0 < low <= high: {', '.join(bad)}")
        self.keys = [s.key for s in space]
        self.lo = np.array([s.lo for s in space], float)
        self.hi = np.array([s.hi for s in space], float)
        self.log = np.array([s.log for s in space], bool)
        self.span = self.hi - self.lo
        self._log_lo = np.log(np.where(self.log, self.lo, 1.0))
        self._log_span = np.where(self.log, np.log(np.where(self.log, self.hi, 1.0)) - self._log_lo, 0.0)
        self._coord_span = np.where(self.log, self._log_span, self.span)  # width of [0, 1] in the coordinate

    @property
    def log_keys(self) -> list[str]:
        """The keys searched in log space."""
        return [k for k, g in zip(self.keys, self.log) if g]

    def values(self, u: np.ndarray) -> np.ndarray:
        """Values (SI units) of normalised points ``u`` (..., n)."""
        u = np.asarray(u, float)
        x = np.where(self.log, np.exp(self._log_lo + u * self._log_span), self.lo + u * self.span)
        x = np.where(u <= 0.0, self.lo, np.where(u >= 1.0, self.hi, x))
        return np.clip(x, self.lo, self.hi)

    def unit(self, x: np.ndarray) -> np.ndarray:
        """Normalised points of values ``x`` (..., n) (SI units), clipped to [0, 1] (0 on an empty interval)."""
        x = np.clip(np.asarray(x, float), self.lo, self.hi)
        c = np.where(self.log, np.log(np.where(self.log, x, 1.0)) - self._log_lo, x - self.lo)
        w = self._coord_span
        return np.clip(np.divide(c, w, out=np.zeros(np.broadcast(c, w).shape), where=w > 0), 0.0, 1.0)

    def steps(self, u: np.ndarray, rel: float, floor: float) -> np.ndarray:
        """Normalised per-key steps at ``u``: a factor (1 + ``rel``) on the value (linear keys: ``rel`` × |value|),
        at least ``floor`` of the box, at most half of it."""
        w = np.where(self._coord_span > 0, self._coord_span, 1.0)
        lin = rel * np.abs(self.values(u)) / np.where(self.log, 1.0, w)
        step = np.where(self.log, math.log1p(rel) / w, lin)
        return np.clip(np.maximum(step, floor), 0.0, 0.5)


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
