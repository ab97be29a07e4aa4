"""The friction-model registry: the one place a friction model is defined (Duclusaud et al. (Extended Friction
Models) Eq. 3, 6–10; bam's ``models`` dict in ``bam/model.py``).

* :class:`Slot` (:mod:`.slots`): the packed coefficient vector every backend consumes (numpy stepper, numba
  kernels, MuJoCo servo kernels, scalar reference), one slot per coefficient of the most general budget (M6,
  Eq. 10) plus the motor and firmware constants;
* :data:`FRICTION_KEYS`: each coefficient of bam's JSON files, the slots it fills, its identification search
  bounds (with their source) and the value its slots take when a model lacks it;
* :data:`MODELS`: one row per model — name, title, its coefficients (search order) and the smaller models whose
  fit warm-starts it.

Every model is M6 with the coefficients it lacks at their neutral value, so the kernels evaluate one formula.
Adding a model made of existing terms is one row of :data:`MODELS`; a new term also needs a slot, a key and its
place in each kernel (docs/models.md, "Adding a friction model").
"""

from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple

from . import slots

#: The packed layout (:mod:`.slots`, plain ints for the kernels) as an IntEnum: names, iteration, typing.
Slot = IntEnum("Slot", [(name, value) for name, value in vars(slots).items() if name.isupper()])
N_PACKED = len(Slot)
LAW_VOLTAGE, LAW_CURRENT = 0.0, 1.0
#: Slots of the load-dependent terms (Eq. 7–10): a model filling one is load-dependent.
LOAD_SLOTS = frozenset({slots.KM, slots.KE, slots.KMS, slots.KES, slots.KMQ, slots.KEQ})

_BAM = "Rhoban/bam @1b5a1ce bam/model.py"
_BAM_LOAD = f"{_BAM} (max_load_friction; XL320: 1.0)"


class FrictionKey(NamedTuple):
    """One friction coefficient (a key of bam's JSON): the packed slots it fills and its search box."""

    slots: tuple[int, ...]  # M3/M4's symmetric load terms fill the motor and the external slot
    lo: float  # identification search bounds (SI units of models/schema.py)
    hi: float
    source: str  # where the bounds come from
    load_bound: bool = False  # hi is the actuator's max_load_friction (identification.search_space.BoundsRow)
    neutral: float = 0.0  # value of its slots in a model without this key
    log: bool = False  # searched in log(value) (bounds a decade or more apart, lo > 0: identification.search_space)


#: bam JSON friction keys → slots, search bounds (bam's Model.set_actuator unless stated) and neutral value.
FRICTION_KEYS: dict[str, FrictionKey] = {
    "friction_base": FrictionKey((slots.KC,), 0.0, 0.2, _BAM),
    "friction_viscous": FrictionKey((slots.KV,), 0.0, 1.0, _BAM),
    "friction_stribeck": FrictionKey((slots.KCS,), 0.0, 0.2, _BAM),
    "load_friction_base": FrictionKey((slots.KM, slots.KE), 0.0, 0.5, _BAM_LOAD, load_bound=True),
    "load_friction_stribeck": FrictionKey((slots.KMS, slots.KES), 0.0, 1.0, _BAM),
    "load_friction_motor": FrictionKey((slots.KM,), 0.0, 0.5, _BAM_LOAD, load_bound=True),
    "load_friction_external": FrictionKey((slots.KE,), 0.0, 0.5, _BAM_LOAD, load_bound=True),
    "load_friction_motor_stribeck": FrictionKey((slots.KMS,), 0.0, 1.0, _BAM),
    "load_friction_external_stribeck": FrictionKey((slots.KES,), 0.0, 1.0, _BAM),
    "load_friction_motor_quad": FrictionKey((slots.KMQ,), 0.0, 0.01, _BAM),
    "load_friction_external_quad": FrictionKey((slots.KEQ,), 0.0, 0.01, _BAM),
    "dtheta_stribeck": FrictionKey(
        (slots.VS,),
        0.01,
        5.0,
        f"wider than {_BAM} (0.1, 3.0): bam's published xl330 m2 (4.17) and m5 (3.19) files lie above it",
        neutral=1.0,
        log=True,
    ),
    "alpha": FrictionKey(
        (slots.ALPHA,),
        0.5,
        10.0,
        f"wider than {_BAM} (1.0, 10.0): bam's published mx64 m6 (0.84) and xl330 m4 (0.76) files lie below it",
        neutral=1.0,
        log=True,
    ),
}


class FrictionModel(NamedTuple):
    """One friction model: its bam name, title, coefficients and the nested models that warm-start its fit."""

    name: str
    title: str
    keys: tuple[str, ...]  # FRICTION_KEYS it uses, in identification search order
    warm_from: tuple[str, ...] = ()  # smaller models whose optimum is one of its points, largest first

    @property
    def load_dependent(self) -> bool:
        """True when the budget depends on the motor / external torque (Eq. 7–10)."""
        return any(s in LOAD_SLOTS for k in self.keys for s in FRICTION_KEYS[k].slots)


_CV = ("friction_base", "friction_viscous")  # Coulomb-viscous, every model (Eq. 3)
_SHAPE = ("dtheta_stribeck", "alpha")  # Stribeck velocity and exponent (Eq. 6)
_DIRECTIONAL = (  # directional load terms (Eq. 9)
    "load_friction_motor",
    "load_friction_external",
    "load_friction_motor_stribeck",
    "load_friction_external_stribeck",
)
_QUAD = ("load_friction_motor_quad", "load_friction_external_quad")  # Eq. 10
_ROWS = (  # name, title, coefficients in identification search order, nested models (largest first)
    FrictionModel("m1", "Coulomb-viscous (M1)", _CV),
    FrictionModel("m2", "Stribeck (M2)", (*_CV, "friction_stribeck", *_SHAPE), ("m1",)),
    FrictionModel("m3", "Load-dependent (M3)", (*_CV, "load_friction_base"), ("m1",)),
    FrictionModel(
        "m4",
        "Stribeck load-dependent (M4)",
        (*_CV, "load_friction_base", "friction_stribeck", "load_friction_stribeck", *_SHAPE),
        ("m3", "m2", "m1"),
    ),
    FrictionModel(
        "m5", "Directional (M5)", (*_CV, "friction_stribeck", *_DIRECTIONAL, *_SHAPE), ("m4", "m3", "m2", "m1")
    ),
    FrictionModel(
        "m6",
        "Quadratic (M6)",
        (*_CV, "friction_stribeck", *_DIRECTIONAL, *_QUAD, *_SHAPE),
        ("m5", "m4", "m3", "m2", "m1"),
    ),
)
#: The registry: model name → row.
MODELS: dict[str, FrictionModel] = {row.name: row for row in _ROWS}
MODEL_NAMES: tuple[str, ...] = tuple(MODELS)


#: Every key identification searches → the packed slots it writes (motor, offset and firmware keys, then the
#: friction keys).
KEY_SLOTS: dict[str, tuple[int, ...]] = {
    "kt": (slots.KT,),
    "R": (slots.R,),
    "armature": (slots.ARM,),
    "q_offset": (slots.QOFF,),
    "error_gain": (slots.EGAIN,),
    "goal_velocity_limit": (slots.GVMAX,),
} | {k: f.slots for k, f in FRICTION_KEYS.items()}

__all__ = [
    "FRICTION_KEYS",
    "KEY_SLOTS",
    "LAW_CURRENT",
    "LAW_VOLTAGE",
    "LOAD_SLOTS",
    "MODELS",
    "MODEL_NAMES",
    "N_PACKED",
    "FrictionKey",
    "FrictionModel",
    "Slot",
]
