"""Firmware position laws: the servo model S(θ, θ̇, θd) of Duclusaud et al. (Duclusaud et al., Eq. 11–15), one row per
servo family, each row citing where its constants come from.

A law is data (:class:`FirmwareLaw`); the kernels read it from the packed parameter vector. A servo not in
:data:`FIRMWARE_TABLE` gets its law from a ``firmware`` object in its parameter file or from ``--firmware``
(:func:`firmware_from_spec`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from ..safe_parse import parse_document
from .errors import ParameterError
from .schema import FIRMWARE_FIELDS, check_field

#: Firmware limits written as None (JSON) or 0 (ROS parameters) when absent (inf).
_INF_WHEN_ABSENT = ("current_limit", "goal_velocity_limit")


@dataclass(frozen=True)
class FirmwareLaw:
    """Firmware position law in register units (Duclusaud et al. Eq. 12 and 14).

    Voltage law: ``duty = clip(kp·error_gain·(θd − θ), ±max_pwm)``, ``U = vin·duty``; with a finite
    ``current_limit`` the duty is first held in the window that keeps the motor current
    ``I = (duty·vin − kt·θ̇)/R`` within ±current_limit (bam's ``VoltageControlledActuator`` ``max_current``).
    Current law: ``I = clip(kp·error_gain·(θd − θ), I_min, I_max)`` with the back-EMF and heat limits of
    Eq. 14 (``current_limit`` = I_heat).
    ``goal_velocity_limit`` [rad/s]: the firmware moves its internal target toward the goal no faster than
    this (Feetech STS, bam's ``STS3215Actuator``); ``inf`` = the goal is used as sent.
    """

    control: str = "voltage"  # "voltage" | "current"
    vin: float = 15.0  # supply voltage [V]
    kp: float = 32.0  # P gain, register units
    error_gain: float = 0.158  # duty (or A) per (register kp · rad)
    max_pwm: float = 0.9625  # duty-cycle limit (0, 1]
    current_limit: float = math.inf  # [A]; inf = none
    goal_velocity_limit: float = math.inf  # [rad/s]; inf = none

    def __post_init__(self) -> None:
        if self.control not in ("voltage", "current"):
            raise ParameterError(f"firmware.control must be 'voltage' or 'current', got {self.control!r}")
        for key in FIRMWARE_FIELDS:
            object.__setattr__(self, key, check_field(FIRMWARE_FIELDS, key, getattr(self, key)))

    def with_(self, **changes: Any) -> FirmwareLaw:
        return dataclasses.replace(self, **changes)


class FirmwareRow(NamedTuple):
    law: FirmwareLaw
    source: str


_X_COUNTS_PER_RAD = 4096 / (2 * math.pi)  # X-series and MX (2.0) encoder: 4096 counts/rev
_X_PWM_FULL = 885  # X-series PWM Limit (36) full scale = 100 % duty (ROBOTIS e-manual)
_XM430_CURRENT_UNIT = 2.69e-3  # [A] per Goal/Present Current unit (ROBOTIS e-manual XM430-W350)
_XM430_CURRENT_LIMIT = 1193  # Current Limit(38) default and maximum [units]
STS_MAX_SPEED = 3400 * 2 * math.pi / 4096  # [rad/s] STS3215 max speed 3400 steps/s (bam STS3215Actuator)

#: One row per servo family: the law and its source. bam = Rhoban/bam @1b5a1ce (2026-07-24), the reference
#: implementation of Duclusaud et al.; its published parameter files were identified under these constants.
FIRMWARE_TABLE: dict[str, FirmwareRow] = {
    "mx64": FirmwareRow(
        FirmwareLaw("voltage", vin=15.0, kp=32.0, error_gain=0.158, max_pwm=0.9625),
        "bam MXActuator (error gain and duty limit measured with an oscilloscope)",
    ),
    "mx106": FirmwareRow(
        FirmwareLaw("voltage", vin=15.0, kp=32.0, error_gain=0.158, max_pwm=0.9625),
        "bam MXActuator (error gain and duty limit measured with an oscilloscope)",
    ),
    "mx28": FirmwareRow(
        FirmwareLaw("voltage", vin=12.0, kp=32.0, error_gain=_X_COUNTS_PER_RAD / (8 * 511), max_pwm=1.0),
        "Maximo et al., Modeling of a Position Servo Used in Robotics Applications, Eq. 32: "
        "PWM u_c = (P/8)·error_counts of 511",
    ),
    "mg995": FirmwareRow(
        FirmwareLaw("voltage", vin=5.0, kp=1.0, error_gain=16.6742 / 5.0, max_pwm=1.0),
        "Santana et al., Physical Modeling and Parameters Identification of the MG995 "
        "Servomotor, Table 3: U = K_P·(θr − θl), K_P = 16.67 V/rad, 5 V supply",
    ),
    "xl320": FirmwareRow(
        FirmwareLaw("voltage", vin=7.5, kp=32.0, error_gain=0.05048199, max_pwm=1.0),
        "bam XL320Actuator (error gain measured with an oscilloscope)",
    ),
    "xl330": FirmwareRow(
        FirmwareLaw("voltage", vin=7.5, kp=400.0, error_gain=_X_COUNTS_PER_RAD / (256 * _X_PWM_FULL), max_pwm=1.0),
        "bam XL330Actuator: position mode (3) drives PWM, kp divisor 256 (the e-manual states "
        "128), PWM full scale 885; Current Limit(38) acts only in current and current-based "
        "position modes (e-manual, bam edef2f4). Checked on bam's 8 real XL330 recordings: "
        "their Present PWM(124) follows this law (measured/predicted 0.976-1.001) and stays at "
        "-885 in a stall, where a 1.75 A limit would cap it near 730",
    ),
    "xm430": FirmwareRow(
        FirmwareLaw(
            "current",
            vin=12.0,
            kp=800.0,
            error_gain=_X_COUNTS_PER_RAD / 128 * _XM430_CURRENT_UNIT,
            max_pwm=1.0,
            current_limit=_XM430_CURRENT_LIMIT * _XM430_CURRENT_UNIT,
        ),
        "ROBOTIS e-manual XM430-W350 (ROBOTIS-GIT/emanual docs/en/dxl/x/xm430-w350.md) current-based position "
        "mode, Operating Mode(11) = 5: the position PID gives the target current, K_PP = Position P Gain(84)/128 "
        "(default 800), limited by Goal Current(102) <= Current Limit(38) = 1193 x 2.69 mA = 3.21 A; a current "
        "loop (taken as ideal) drives the PWM, limited by Goal PWM(100) <= PWM Limit(36) 885 = full duty at 12 V "
        "(_includes/en/dxl/control_table_current_position_pid_gain.md). Position D/I Gain(80, 82) and the Feedforward "
        "Gains(88, 90) are 0 at the factory and not modelled. Assumed: the PID output is in Goal Current units "
        "(2.69 mA) per encoder count, as its position-mode output is in PWM units: at rest both modes then hold "
        "alike within 4 % (an XL330 bench found 1.13x, Rhoban/bam issue 14); not identified on a bench",
    ),
    "xm430_position": FirmwareRow(
        FirmwareLaw("voltage", vin=12.0, kp=800.0, error_gain=_X_COUNTS_PER_RAD / (128 * _X_PWM_FULL), max_pwm=1.0),
        "ROBOTIS e-manual XM430-W350 position mode, Operating Mode(11) = 3 (the factory mode): K_PP = Position P "
        "Gain(84)/128 (default 800), PWM full scale 885, 12 V; not identified on a bench",
    ),
    "sts3215": FirmwareRow(
        FirmwareLaw("voltage", vin=7.4, kp=32.0, error_gain=0.166, max_pwm=0.97, goal_velocity_limit=STS_MAX_SPEED),
        "bam STS3215Actuator (7.4 V; error gain measured with an oscilloscope; internal "
        "target limited to 3400 steps/s)",
    ),
    "sts3250": FirmwareRow(
        FirmwareLaw("voltage", vin=12.0, kp=32.0, error_gain=0.166, max_pwm=0.97, goal_velocity_limit=STS_MAX_SPEED),
        "assumed: the STS3215 law (same Feetech STS firmware) at the STS3250's 12 V supply "
        "(Feetech datasheet); not identified on a bench",
    ),
}

#: name → law (the table without its sources).
FIRMWARE_LAWS: dict[str, FirmwareLaw] = {name: row.law for name, row in FIRMWARE_TABLE.items()}


def firmware_row(name: str) -> FirmwareLaw:
    """The law of the :data:`FIRMWARE_TABLE` row ``name``; an unknown name raises one line naming the valid rows."""
    if name not in FIRMWARE_LAWS:
        raise ParameterError(f"unknown firmware row {name!r}; valid rows: {', '.join(FIRMWARE_LAWS)}")
    return FIRMWARE_LAWS[name]


def firmware_from_mapping(data: Any, source: str, base: FirmwareLaw | None = None) -> FirmwareLaw:
    """A :class:`FirmwareLaw` from a JSON/YAML object; errors name ``source`` and the key (``firmware.kp``).

    Without ``base`` an absent or null limit is none (inf) and other absent keys take the class defaults; with
    ``base`` the object's keys are applied over ``base`` (the ROS-parameter form)."""
    if not isinstance(data, Mapping):
        raise ParameterError(f"{source}: firmware must be an object of {', '.join(_FIELDS)}")
    unknown = [k for k in data if k not in _FIELDS]
    if unknown:
        raise ParameterError(
            f"{source}: unknown firmware key(s) {', '.join(f'firmware.{k}' for k in unknown)}; "
            f"valid: {', '.join(_FIELDS)}"
        )
    fw = dict(data)
    for key in _INF_WHEN_ABSENT:
        if (base is None or key in fw) and fw.get(key) is None:
            fw[key] = math.inf
    try:
        return FirmwareLaw(**fw) if base is None else base.with_(**fw)
    except ParameterError as e:
        text = str(e)
        raise ParameterError(f"{source}: {text if text.startswith('firmware.') else 'firmware.' + text}") from None


def firmware_from_spec(spec: str, base: FirmwareLaw | None = None) -> FirmwareLaw:
    """``--firmware`` value: a law name (``sts3215``), a JSON/YAML file holding a firmware object, or
    ``key=value`` pairs separated by commas applied over ``base`` (``kp=16,current_limit=1.2``)."""
    if spec in FIRMWARE_LAWS:
        return FIRMWARE_LAWS[spec]
    path = Path(spec)
    if path.suffix.lower() in (".json", ".yaml", ".yml"):
        if not path.is_file():
            raise ParameterError(f"{spec}: no such firmware file")
        data = parse_document(path, ParameterError, what="parameter file")
        if isinstance(data, dict) and "firmware" in data:
            data = data["firmware"]
        return firmware_from_mapping(data, spec)
    if "=" not in spec:
        raise ParameterError(
            f"--firmware {spec!r}: not a known law ({', '.join(FIRMWARE_LAWS)}), not a .json/.yaml "
            "file, and not key=value pairs"
        )
    values: dict[str, Any] = {}
    for item in spec.split(","):
        key, _, text = item.partition("=")
        key = key.strip()
        if key not in _FIELDS:
            raise ParameterError(f"--firmware: unknown key {key!r}; valid: {', '.join(_FIELDS)}")
        if key == "control":
            values[key] = text.strip()
            continue
        try:
            values[key] = float(text)
        except ValueError:
            raise ParameterError(f"--firmware: {key} must be a number, got {text!r}") from None
    try:
        return (base or FirmwareLaw()).with_(**values)
    except ParameterError as e:
        raise ParameterError(f"--firmware: {e}") from None


_FIELDS = tuple(f.name for f in dataclasses.fields(FirmwareLaw))

__all__ = [
    "FirmwareLaw",
    "FirmwareRow",
    "FIRMWARE_TABLE",
    "FIRMWARE_LAWS",
    "STS_MAX_SPEED",
    "firmware_from_mapping",
    "firmware_from_spec",
    "firmware_row",
]
