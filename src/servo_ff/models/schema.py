"""The one description of every actuator parameter: name, unit, admissible (physical) range, meaning.

It drives validation of :class:`~servo_ff.models.params.ActuatorParams` and
:class:`~servo_ff.models.firmware.FirmwareLaw` (a value outside its range is refused with the key, the value and
the range), the ROS parameter declarations of the nodes (``ros.parameters.actuator_specs``) and the parameter
tables of the documentation. Ranges are wide physical bounds for servo-class actuators — a value outside them
is a mistake (or would make the simulation non-finite), not an unusual servo. Identification search boxes
(``identification.simulation_fit``) lie inside them.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from .errors import ParameterError


class FieldSpec(NamedTuple):
    unit: str
    lo: float
    hi: float
    description: str
    lo_open: bool = False  # True: lo itself is refused (> lo)
    none_is_inf: bool = False  # an absent limit: inf (JSON null, ROS 0)


_N = "N·m"
#: Motor, offsets and friction coefficients (bam's JSON keys; Duclusaud et al. Eq. 3, 6–10, 12–13).
ACTUATOR_FIELDS: dict[str, FieldSpec] = {
    "kt": FieldSpec("N·m/A", 0.0, 50.0, "torque constant at the output (gear ratio included)", lo_open=True),
    "R": FieldSpec("Ω", 0.01, 1000.0, "motor winding resistance"),
    "armature": FieldSpec("kg·m²", 1e-8, 10.0, "apparent rotor inertia at the output"),
    "q_offset": FieldSpec(
        "rad", -math.pi, math.pi, "encoder zero vs. load zero: the load is evaluated at θ + q_offset"
    ),
    "dtheta_max": FieldSpec("rad/s", 0.0, 1000.0, "simulator velocity clamp (bam: 100)", lo_open=True),
    "friction_base": FieldSpec(_N, 0.0, 50.0, "Coulomb friction K_c"),
    "friction_viscous": FieldSpec("N·m·s/rad", 0.0, 50.0, "viscous friction K_v"),
    "friction_stribeck": FieldSpec(_N, 0.0, 50.0, "Stribeck Coulomb friction K_c^s"),
    "load_friction_base": FieldSpec("–", 0.0, 10.0, "load-dependent friction K_l (M3/M4)"),
    "load_friction_stribeck": FieldSpec("–", 0.0, 10.0, "Stribeck load-dependent friction K_l^s (M4)"),
    "load_friction_motor": FieldSpec("–", 0.0, 10.0, "motor-side load friction K_m (M5/M6)"),
    "load_friction_external": FieldSpec("–", 0.0, 10.0, "external-side load friction K_e (M5/M6)"),
    "load_friction_motor_stribeck": FieldSpec("–", 0.0, 10.0, "Stribeck motor-side load friction K_m^s"),
    "load_friction_external_stribeck": FieldSpec("–", 0.0, 10.0, "Stribeck external-side load friction K_e^s"),
    "load_friction_motor_quad": FieldSpec("1/(N·m)", 0.0, 10.0, "quadratic motor-side friction K_m^q (M6)"),
    "load_friction_external_quad": FieldSpec("1/(N·m)", 0.0, 10.0, "quadratic external-side friction K_e^q (M6)"),
    "dtheta_stribeck": FieldSpec("rad/s", 1e-3, 100.0, "Stribeck velocity v_s"),
    "alpha": FieldSpec("–", 0.05, 50.0, "Stribeck exponent"),
}

#: Firmware law fields (Duclusaud et al. Eq. 11–15; register-unit gains).
FIRMWARE_FIELDS: dict[str, FieldSpec] = {
    "vin": FieldSpec("V", 0.0, 100.0, "supply voltage", lo_open=True),
    "kp": FieldSpec(
        "firmware-law gain",
        0.0,
        1e5,
        "P gain as the law uses it (MX: Position P Gain register / 16, the "
        "Protocol 1.0 unit bam identified with; X-series, STS: the register)",
    ),
    "error_gain": FieldSpec("duty or A per (register·rad)", 0.0, 1e3, "turns kp·error into a duty (A)", lo_open=True),
    "max_pwm": FieldSpec("–", 0.0, 1.0, "duty-cycle limit", lo_open=True),
    "current_limit": FieldSpec(
        "A", 0.0, 100.0, "current limit (voltage law: duty window; current law: I_heat)", lo_open=True, none_is_inf=True
    ),
    "goal_velocity_limit": FieldSpec(
        "rad/s", 0.0, 1000.0, "firmware target speed limit (Feetech STS)", lo_open=True, none_is_inf=True
    ),
}


#: α̂ of Schwarz & Behnke Eq. 19 and the Stribeck shape of Eq. 9, per joint (``servo_ff.dynamics.alpha``, the
#: feed-forward node's ``alpha.<joint>``, ``stribeck_dq_s``, ``stribeck_delta``). α̂ = α / error_gain is
#: register-scaled: α̂·regressor / (k_P·U_bat) is the goal offset [rad]. Every α̂ of a physical servo is ≥ 0
#: (α̂0 = R/(kt·error_gain) > 0: a negative or zero α̂0 would push the goal against the torque the motion needs);
#: the bounds hold every preset with a wide margin (the largest, XL330's α̂0, is ≈ 3.6e3).
_AU = "rad·V·register"
ALPHA_FIELDS: dict[str, FieldSpec] = {
    # α̂0 ≥ 1e-3: 570× below the smallest preset's (MG995, 0.57); a fit on a gain or supply wrong by 1e12 gives 1e-12
    "alpha0": FieldSpec(f"{_AU}/(N·m)", 1e-3, 1e5, "α̂0: output torque → goal offset (R/(kt·error_gain))"),
    "alpha1": FieldSpec(f"{_AU}·s/rad", 0.0, 1e5, "α̂1: velocity term (back-EMF + viscous friction)"),
    "alpha2": FieldSpec(_AU, 0.0, 1e5, "α̂2: Coulomb friction term, sgn(q̇)(1 − β)"),
    "alpha3": FieldSpec(_AU, 0.0, 1e5, "α̂3: static (Stribeck) friction term, sgn(q̇)β"),
    "alpha4": FieldSpec(f"{_AU}·s²/rad", 0.0, 1e5, "α̂4: acceleration term (rotor inertia, Eq. 14)"),
    "dq_s": FieldSpec("rad/s", 1e-6, 100.0, "Stribeck velocity q̇_s (Eq. 9)"),
    "delta": FieldSpec("–", 1e-3, 10.0, "Stribeck exponent δ (Eq. 9)"),
}

#: The feed-forward node's supply and desired-motion bounds (``nodes/feedforward_node.py``).
FEEDFORWARD_FIELDS: dict[str, FieldSpec] = {
    "u_nominal": FieldSpec(
        "V",
        0.1,
        FIRMWARE_FIELDS["vin"].hi,
        "nominal supply voltage: used until the first "
        "good servo_supply reading and the reference of min_supply_fraction",
    ),
    "min_supply_fraction": FieldSpec(
        "–",
        0.0,
        1.0,
        "a supply reading below this fraction of u_nominal (or above "
        f"{FIRMWARE_FIELDS['vin'].hi:g} V) is refused and the last good one held",
    ),
    "max_velocity": FieldSpec(
        "rad/s",
        0.0,
        ACTUATOR_FIELDS["dtheta_max"].hi,
        "largest desired |q̇| of a joint whose URDF has no velocity limit",
        lo_open=True,
    ),
    "max_acceleration": FieldSpec("rad/s²", 0.0, 1e6, "largest desired |q̈| of a joint", lo_open=True),
}
#: The servo bus supply a log, bag, ILC record, live topic or a fit's given vin may state (Eq. 19 scales every α̂ by
#: it): the one description of its range. Narrower than the firmware law's ``vin`` (0, 100] V, which a simulated
#: actuator may take: a servo bus runs on 3.7 V (XL330) to 25.2 V (24 V servos on a charged 6S pack), and a reading
#: outside 3-30 V is a mistake — another pack's topic, decivolts or millivolts (present_input_voltage is in 0.1 V:
#: an XL330's 7.4 V reads 74, inside (0, 100]) — that would scale every α̂ 10× or 1000×.
SUPPLY_FIELD = FieldSpec("V", 3.0, 30.0, "servo bus supply voltage of a fit's data (a plausible servo supply)")
SUPPLY_RANGE: tuple[float, float] = (SUPPLY_FIELD.lo, SUPPLY_FIELD.hi)
assert FIRMWARE_FIELDS["vin"].lo < SUPPLY_FIELD.lo and SUPPLY_FIELD.hi <= FIRMWARE_FIELDS["vin"].hi


def implausible_supply(volts: float) -> str | None:
    """Why ``volts`` [V] is no servo supply (not finite, outside :data:`SUPPLY_FIELD`), or None; the line says why
    the range is narrower than the firmware law's vin."""
    lo, hi = SUPPLY_RANGE
    if not math.isfinite(volts):
        return f"{volts} V is not finite"
    if not lo <= volts <= hi:
        unit = " (decivolts?)" if volts > hi and lo <= volts / 10 <= hi else ""
        unit = " (millivolts?)" if volts > hi and lo <= volts / 1000 <= hi else unit
        return (
            f"{volts:g} V is outside the plausible servo supply {lo:g}-{hi:g} V{unit} (narrower than the firmware "
            f"law's vin {range_text(FIRMWARE_FIELDS['vin'])}: servo buses run on 3.7-25.2 V, a reading outside it "
            "is another pack's, decivolts or millivolts)"
        )
    return None


#: the feed-forward node's default max_velocity [rad/s] and max_acceleration [rad/s²], which the walk node's points
#: are held within by default too
MAX_VELOCITY, MAX_ACCELERATION = 20.0, 1000.0


def check_field(table: dict[str, FieldSpec], key: str, value: Any, name: str | None = None) -> float:
    """``value`` as a float inside the range of ``key``, or :class:`ParameterError` naming key (or ``name``),
    value and range. ``inf`` is accepted for limits that may be absent."""
    spec = table[key]
    key = name or key
    if isinstance(value, (bool, str)) or value is None:
        raise ParameterError(f"{key} must be a number, got {_short(value)}")
    try:
        v = float(value)
    except OverflowError:
        raise ParameterError(f"{key}={_short(value)} is too large for a float") from None
    except (TypeError, ValueError):
        raise ParameterError(f"{key} must be a number, got {_short(value)}") from None
    if spec.none_is_inf and v == math.inf:
        return v
    if not math.isfinite(v):
        raise ParameterError(f"{key} must be finite, got {v}")
    below = v <= spec.lo if spec.lo_open else v < spec.lo
    if below or v > spec.hi:
        left = "(" if spec.lo_open else "["
        raise ParameterError(f"{key}={v:g} is outside its admissible range {left}{spec.lo:g}, {spec.hi:g}] {spec.unit}")
    return v


def range_text(spec: FieldSpec) -> str:
    """``(0, 50] N·m/A``: the admissible range as the error messages and parameter descriptions write it."""
    return f"{'(' if spec.lo_open else '['}{spec.lo:g}, {spec.hi:g}] {spec.unit}"


def _short(value: Any, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 5]}…({len(text)} chars)"


__all__ = [
    "FieldSpec",
    "ACTUATOR_FIELDS",
    "FIRMWARE_FIELDS",
    "ALPHA_FIELDS",
    "FEEDFORWARD_FIELDS",
    "SUPPLY_FIELD",
    "SUPPLY_RANGE",
    "implausible_supply",
    "check_field",
    "range_text",
]
