"""Warm starts of nested friction models (Duclusaud et al. §III: M1 ⊂ M2, M3 ⊂ M4 ⊂ M5 ⊂ M6; M2 ⊂ M4): a fitted
smaller model is a point of the larger one's space, so the larger fit starts from its optimum. Which models nest
in which is the registry's ``warm_from`` (:data:`servo_ff.models.friction_models.MODELS`)."""

from __future__ import annotations

from collections.abc import Mapping

from ..models.friction_models import FRICTION_KEYS, MODELS
from ..models.params import ActuatorParams

#: model → the nested models that warm-start it, largest first (the registry's ``warm_from``).
NESTED: dict[str, tuple[str, ...]] = {name: row.warm_from for name, row in MODELS.items() if row.warm_from}


def _warm_from(model: str, p: ActuatorParams) -> dict[str, float]:
    """Values of ``model``'s keys taken from a fitted nested model ``p`` (its optimum is one of ``model``'s): its own
    keys, and each key of ``model`` whose slots one of ``p``'s keys fills (M3/M4's symmetric load terms → M5/M6's
    directional ones)."""
    x0 = {"kt": p.kt, "R": p.R, "armature": p.armature, "q_offset": p.q_offset, **p.friction}
    x0.update(error_gain=p.firmware.error_gain, goal_velocity_limit=p.firmware.goal_velocity_limit)
    for key in MODELS[model].keys:
        if key in p.friction:
            continue
        wider = [k for k in p.friction if set(FRICTION_KEYS[key].slots) < set(FRICTION_KEYS[k].slots)]
        if wider:
            x0[key] = p.friction[wider[0]]
    return x0


def warm_starts(model: str, previous: Mapping[str, ActuatorParams]) -> list[dict[str, float]]:
    """One warm start per already-fitted nested model of ``model`` (M1 ⊂ M2, M3 ⊂ M4 ⊂ M5 ⊂ M6; M2 ⊂ M4),
    largest nested model first; :func:`fit_model` evaluates them all and starts from the best."""
    return [_warm_from(model, previous[prev]) for prev in NESTED.get(model, ()) if prev in previous]


def warm_start(model: str, previous: Mapping[str, ActuatorParams]) -> dict[str, float]:
    """The warm start from the largest already-fitted nested model of ``model`` ({} when none)."""
    starts = warm_starts(model, previous)
    return starts[0] if starts else {}
