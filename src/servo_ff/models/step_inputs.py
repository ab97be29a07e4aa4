"""The stepper's inputs, checked: every array finite and of a shape that broadcasts to (batch, joints), the packed
parameter rows admissible, a load's gravity amplitude, external torque and inertia as arrays, the time step
positive — ValueError naming the argument otherwise. :func:`static_inputs` checks the parameter rows and a static
load once for many calls (a sim period then costs the kernel, not the checks)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import slots
from .loads import ExternalLoad, PendulumLoad
from .params import N_PACKED, pack


def finite_array(name: str, x, shape=None) -> np.ndarray:
    """``x`` as float64, finite, broadcast to ``shape`` when given; ValueError naming ``name`` otherwise."""
    a = np.asarray(x, dtype=np.float64)
    if not np.isfinite(a).all():
        bad = np.argwhere(~np.isfinite(a))
        where = tuple(int(i) for i in bad[0]) if a.ndim else ()
        raise ValueError(f"{name} contains non-finite values (first at index {where}: {a[where] if where else a})")
    if shape is not None and a.shape == tuple(shape):  # what broadcast_to gives, without its cost: read-only
        a = a.view()
        a.flags.writeable = False
    elif shape is not None:
        try:
            a = np.broadcast_to(a, shape)
        except ValueError:
            raise ValueError(f"{name} has shape {np.shape(x)}, which does not broadcast to {shape}") from None
    return a


def broadcast_2d(**arrays) -> tuple[tuple[int, ...], tuple[int, int]]:
    """The common shape of ``arrays`` and the same as (batch, joints); ValueError naming them otherwise."""
    try:
        shape = np.broadcast_shapes(*(np.shape(a) for a in arrays.values()))
    except ValueError:
        shapes = ", ".join(f"{k} {np.shape(v)}" for k, v in arrays.items())
        raise ValueError(f"shapes do not broadcast together: {shapes}") from None
    if len(shape) > 2:
        raise ValueError(f"state arrays must be shaped (batch, joints), (joints,) or scalar; got {shape}")
    two = (1,) * (2 - len(shape)) + tuple(shape)
    return shape, (two[0], two[1])


def load_arrays(load, shape, shape2, n_steps: int | None):
    """gravity amplitude (B,J), tau_ext (B,J) or (T,B,J), load inertia (B,J)."""
    if load is None:
        load = ExternalLoad(inertia=0.0)
    if isinstance(load, PendulumLoad):
        if (
            (np.asarray(load.length) < 0).any()
            or (np.asarray(load.mass) < 0).any()
            or (np.asarray(load.arm_mass) < 0).any()
        ):
            raise ValueError("PendulumLoad: mass, arm_mass and length must be >= 0")
        grav = finite_array("load.gravity", load.gravity_torque_amplitude(), shape2)
        inertia = finite_array("load.inertia", load.inertia(), shape2)
        tau_ext = np.broadcast_to(0.0, shape2 if n_steps is None else (n_steps, *shape2))
    elif isinstance(load, ExternalLoad):
        grav = np.zeros(shape2)
        inertia = finite_array("load.inertia", load.inertia, shape2)
        if n_steps is None:
            tau_ext = finite_array("load.tau_ext", load.tau_ext, shape).reshape(shape2)
        else:
            tau_ext = finite_array("load.tau_ext", load.tau_ext, (n_steps, *shape)).reshape(n_steps, *shape2)
    else:
        raise TypeError(f"load must be PendulumLoad or ExternalLoad, got {type(load).__name__}")
    if (inertia < 0).any():
        raise ValueError("load.inertia must be >= 0")
    return grav, tau_ext, inertia


def check_enable(en: np.ndarray) -> np.ndarray:
    """Torque enable in [0, 1] (NaN passes here: :func:`finite_array` names it)."""
    if en.ndim == 0:  # the usual scalar: no array operations
        if float(en) < 0 or float(en) > 1:
            raise ValueError("enable must be in [0, 1] (1 powered, 0 H-bridge released)")
        return en
    if ((en < 0) | (en > 1)).any():
        raise ValueError("enable must be in [0, 1] (1 powered, 0 H-bridge released)")
    return en


def check_inertia(p: np.ndarray, inertia: np.ndarray) -> None:
    """Load inertia + armature > 0 for every joint [kg·m²]."""
    if not (inertia + p[..., slots.ARM] > 0).all():
        raise ValueError("load.inertia + armature must be > 0 for every joint (a massless joint has no dynamics)")


_LIMIT_COLS = np.array([slots.IMAX, slots.GVMAX])
_FINITE_COLS = np.array([k for k in range(N_PACKED) if k not in (slots.IMAX, slots.GVMAX)])
_SIGNED_COLS = np.array([k for k in range(N_PACKED) if k != slots.QOFF])  # every column but q_offset is >= 0
_POSITIVE_COLS = np.array([slots.KT, slots.R, slots.VS, slots.ALPHA, slots.VIN, slots.VMAX])


#: the bytes of small packed-parameter arrays already found admissible (a one-joint rollout's checks cost more than
#: its 200 steps); keyed by content, so a changed array is checked again
_ADMISSIBLE: dict[bytes, None] = {}
_ADMISSIBLE_MAX_BYTES, _ADMISSIBLE_MAX_KEYS = 64 * N_PACKED * 8, 256


def packed_rows(params, shape2) -> np.ndarray:
    """Packed parameter rows (:func:`~.params.pack`) admissible and broadcast to (batch, joints, N_PACKED)."""
    p = pack(params)
    if p.shape[-1] != N_PACKED:
        raise ValueError(f"params: expected packed length {N_PACKED}, got {p.shape}")
    key = p.tobytes() if p.nbytes <= _ADMISSIBLE_MAX_BYTES and p.dtype == np.float64 else None
    if key is None or key not in _ADMISSIBLE:
        _check_packed(p)
        if key is not None:
            if len(_ADMISSIBLE) >= _ADMISSIBLE_MAX_KEYS:
                _ADMISSIBLE.clear()
            _ADMISSIBLE[key] = None
    try:
        return np.broadcast_to(p, (*shape2, N_PACKED))
    except ValueError:
        raise ValueError(f"params shape {p.shape} does not broadcast to {(*shape2, N_PACKED)}") from None


def _check_packed(p: np.ndarray) -> None:
    """ValueError unless every packed coefficient is admissible."""
    finite = p[..., _FINITE_COLS] if p.ndim else p  # +inf allowed in the limits: "no limit"
    if not np.isfinite(finite).all() or np.isnan(p[..., _LIMIT_COLS]).any():
        raise ValueError("params contains non-finite values")
    if (p[..., _SIGNED_COLS] < 0).any() or not (p[..., _POSITIVE_COLS] > 0).all():
        raise ValueError(
            "params: packed coefficients must be >= 0 (q_offset excepted) and kt, R, "
            "dtheta_stribeck, alpha, vin, dtheta_max > 0"
        )
    law = p[..., slots.LAW]
    if not ((law == 0.0) | (law == 1.0)).all():
        raise ValueError("params: the control-law slot must be 0 (voltage) or 1 (current)")


def check_dt(dt: float) -> float:
    """A positive finite time step [s]."""
    dt = float(dt)
    if not np.isfinite(dt) or dt <= 0:
        raise ValueError(f"dt must be a positive finite time step in seconds, got {dt}")
    return dt


class StaticInputs(NamedTuple):
    """What :func:`steps` checks once per call, checked once for many calls (:func:`static_inputs`): the packed
    parameter rows (1, J, N_PACKED) and a static load's gravity amplitude, external torque and inertia (1, J)."""

    packed: np.ndarray
    gravity: np.ndarray
    tau_ext: np.ndarray
    inertia: np.ndarray


def static_inputs(params, load: PendulumLoad | ExternalLoad | None, n: int) -> StaticInputs:
    """The parameter rows and a static (θ-independent) load of ``n`` joints, checked as :func:`steps` checks
    them (ValueError naming what is wrong), for :func:`steps_static`."""
    shape, shape2 = (n,), (1, n)
    p = np.ascontiguousarray(packed_rows(params, shape2))
    grav, tau_ext, inertia = load_arrays(load, shape, shape2, None)
    check_inertia(p, inertia)
    return StaticInputs(p, *(np.ascontiguousarray(a, dtype=np.float64) for a in (grav, tau_ext, inertia)))
