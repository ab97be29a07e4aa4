"""Named parameter presets: ``preset(servo, model)``.

* ``mx64``, ``mx106``, ``xl320``, ``xl330`` × ``m1``…``m6`` and ``sts3215`` (``m1``): every parameter file
  Rhoban/bam publishes for these servos (``bam/params/``, commit 1b5a1ce), shipped as package data in
  ``models/data/bam/<servo>/<model>.json`` and identified on a pendulum bench (Duclusaud et al., Extended
  Friction Models for the Physics Simulation of Servo Actuators, §VI) under the firmware law of the servo's
  row in :data:`~servo_ff.models.firmware.FIRMWARE_TABLE`.
* ``mx28`` (MX-28AT, ``m1``): Maximo, Ribeiro, Afonso, Modeling of a Position Servo Used in Robotics
  Applications, Table 1, mapped to the output shaft (:mod:`.datasheet`); Coulomb friction 0 as in its §3.2,
  which bounds it to 0.04–0.06 N·m and neglects it.
* ``mg995`` (``m1``): Santana, Maximo, Góes, Physical Modeling and Parameters Identification of the MG995
  Servomotor, Table 3, mapped the same way, 5 V supply.
* ``xm430`` (XM430-W350, ``m1``): NOT identified. kt and R from the ROBOTIS e-manual's stall torque, stall
  current and no-load speed at 12 V by Maximo et al.'s datasheet method (:func:`.datasheet.motor_from_servo`);
  armature and Coulomb friction are MuJoCo Menagerie's op3.xml joint settings (0.045 kg·m², 0.03 N·m); viscous
  friction is the gearbox loss that gives the e-manual's no-load speed. Firmware: the ``xm430`` row (current-based
  position control).
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

from .datasheet import (
    MG995_DATASHEET,
    MX28AT_DATASHEET,
    XM430_W350_COULOMB,
    XM430_W350_DATASHEET,
    MotorDatasheet,
    motor_from_servo,
    output_armature,
    output_torque_constant,
    output_viscous_friction,
)
from .params import FIRMWARE_LAWS, MODEL_NAMES, ActuatorParams, ParameterError

BAM_SERVOS: tuple[str, ...] = ("mx64", "mx106", "xl320", "xl330", "sts3215")
_DATASHEET: dict[str, MotorDatasheet] = {
    "mx28": MX28AT_DATASHEET,
    "mg995": MG995_DATASHEET,
    "xm430": motor_from_servo(XM430_W350_DATASHEET),
}
_COULOMB: dict[str, float] = {"xm430": XM430_W350_COULOMB}  # [N·m]; the others: 0 (Maximo et al. §3.2)
SERVO_NAMES: tuple[str, ...] = (*BAM_SERVOS, *_DATASHEET)
#: the one table of other names of a preset's servo: hardware control tables (servo_ff.bus tables/*.yaml) whose
#: servo a preset models (bam's MX-64/MX-106 were identified on Protocol 1.0 firmware, its XL330 on an XL330-M288;
#: mx28, mx64, mx106, xm430 and sts3215 are tables and presets alike), and datasheet names. A table not here has no
#: preset (XM430-W210, XC330, XL330-M077, XL430, AX-12A, STS3250). Looked up without case, "-" and "_".
PRESET_ALIASES: dict[str, str] = {
    "xl330-m288": "xl330",
    "mx64-p1": "mx64",
    "mx106-p1": "mx106",
    "mx28at": "mx28",
    "xm430-w350": "xm430",
}
DEFAULT_MODEL = "m4"


def _key(name: str) -> str:
    return name.lower().replace("-", "").replace("_", "")


_ALIASES = {_key(k): v for k, v in PRESET_ALIASES.items()}


def preset_servo(name: str) -> str | None:
    """The preset servo name of ``name`` (a preset's own name, a hardware control table or a datasheet name of one,
    :data:`PRESET_ALIASES`); None when no preset models it."""
    key = _ALIASES.get(_key(name), _key(name))
    return key if key in SERVO_NAMES else None


def preset_models(servo: str) -> tuple[str, ...]:
    """The friction models published for ``servo`` (any name :func:`preset_servo` knows; () when none)."""
    name = preset_servo(servo)
    return () if name is None else ("m1",) if name in _DATASHEET else _bam_models(name)


def default_model(servo: str) -> str:
    """:data:`DEFAULT_MODEL`, or the best (highest) model ``servo``'s preset has when it has no m4 (STS3215, the
    datasheet presets: m1)."""
    models = preset_models(servo)
    return DEFAULT_MODEL if not models or DEFAULT_MODEL in models else max(models, key=lambda m: int(m[1:]))


def _bam_dir(servo: str):
    return resources.files(__package__).joinpath("data", "bam", servo)


@cache
def _bam_models(servo: str) -> tuple[str, ...]:
    return tuple(sorted(f.name[:-5] for f in _bam_dir(servo).iterdir() if f.name.endswith(".json")))


def available_presets() -> list[tuple[str, str]]:
    """All valid ``(servo, model)`` pairs."""
    return [(s, m) for s in BAM_SERVOS for m in _bam_models(s)] + [(s, "m1") for s in _DATASHEET]


def from_datasheet(actuator: str, ds: MotorDatasheet, coulomb: float = 0.0) -> ActuatorParams:
    """M1 parameters at the output shaft from motor datasheet values (see :mod:`.datasheet`)."""
    return ActuatorParams(
        actuator=actuator,
        model="m1",
        kt=output_torque_constant(ds),
        R=ds.R,
        armature=output_armature(ds),
        friction={"friction_base": coulomb, "friction_viscous": output_viscous_friction(ds)},
        firmware=FIRMWARE_LAWS[actuator],
    )


def preset(servo: str, model: str = "m4") -> ActuatorParams:
    """The preset for ``servo`` and friction ``model``; unknown names raise with the list of valid ones."""
    name, servo = servo, preset_servo(servo)
    model = model.lower()
    if servo is None:
        raise ParameterError(f"unknown servo preset {name!r}; valid presets: {', '.join(SERVO_NAMES)}")
    if model not in MODEL_NAMES:
        raise ParameterError(f"unknown friction model {model!r}; valid models: {', '.join(MODEL_NAMES)}")
    if servo in _DATASHEET:
        if model != "m1":
            raise ParameterError(f"preset {servo} exists for model m1 only (datasheet model); valid: m1")
        return from_datasheet(servo, _DATASHEET[servo], _COULOMB.get(servo, 0.0))
    if model not in _bam_models(servo):
        raise ParameterError(
            f"no published {servo} parameter file for model {model}; valid: {', '.join(_bam_models(servo))}"
        )
    return _bam_preset(servo, model)


@cache
def _bam_preset(servo: str, model: str) -> ActuatorParams:
    data = json.loads(_bam_dir(servo).joinpath(f"{model}.json").read_text())
    return ActuatorParams.from_bam_dict(data, source=f"preset {servo}/{model}")
