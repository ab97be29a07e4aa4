"""Warm starts of nested friction models (Duclusaud et al. §III: M1 ⊂ M2, M3 ⊂ M4 ⊂ M5 ⊂ M6; M2 ⊂ M4): a fitted
smaller model is a point of the larger one's space, so the larger fit starts from its optimum."""

from __future__ import annotations

from collections.abc import Mapping

from ..models.params import ActuatorParams

NESTED: dict[str, tuple[str, ...]] = {
    "m2": ("m1",),
    "m3": ("m1",),
    "m4": ("m3", "m2", "m1"),
    "m5": ("m4", "m3", "m2", "m1"),
    "m6": ("m5", "m4", "m3", "m2", "m1"),
}


def _warm_from(model: str, p: ActuatorParams) -> dict[str, float]:
    """Values of ``model``'s keys taken from a fitted nested model ``p`` (its optimum is one of ``model``'s)."""
    x0 = {"kt": p.kt, "R": p.R, "armature": p.armature, "q_offset": p.q_offset, **p.friction}
    x0.update(error_gain=p.firmware.error_gain, goal_velocity_limit=p.firmware.goal_velocity_limit)
    f = p.friction
    if model in ("m5", "m6") and "load_friction_base" in f:  # symmetric load terms → directional ones
        x0.update(load_friction_motor=f["load_friction_base"], load_friction_external=f["load_friction_base"])
        if "load_friction_stribeck" in f:
            x0.update(
                load_friction_motor_stribeck=f["load_friction_stribeck"],
                load_friction_external_stribeck=f["load_friction_stribeck"],
            )
    return x0


def warm_starts(model: str, previous: Mapping[str, ActuatorParams]) -> list[dict[str, float]]:
    """One warm start per already-fitted nested model of ``model`` (M1 ⊂ M2, M3 ⊂ M4 ⊂ M5 ⊂ M6; M2 ⊂ M4),
    largest nested model first; :func:`fit_model` evaluates them all and starts from the best."""
    return [_warm_from(model, previous[prev]) for prev in NESTED.get(model, ()) if prev in previous]


def warm_start(model: str, previous: Mapping[str, ActuatorParams]) -> dict[str, float]:
    """The warm start from the largest already-fitted nested model of ``model`` ({} when none)."""
    starts = warm_starts(model, previous)
    return starts[0] if starts else {}
