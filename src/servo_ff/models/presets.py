"""Named parameter presets: ``preset(servo, model)``.

* ``mx64`` / ``mx106`` × ``m1``…``m6``: the parameter files published with Rhoban/bam
  (``bam/params/{mx64,mx106}/m*.json``, commit 1b5a1ce), identified on a pendulum bench under the
  firmware constants in :data:`~servo_ff.models.params.FIRMWARE_LAWS` (seed 004 §VI, Table I).
* ``mx28`` (MX-28AT, ``m1``): seed 000 Table 1 mapped to the output shaft (:mod:`.datasheet`);
  Coulomb friction 0 as in seed 000 §3.2, which bounds it to 0.04–0.06 N·m and neglects it.
* ``mg995`` (``m1``): seed 001 Table 3 mapped the same way, 5 V supply.
"""
from __future__ import annotations

from .datasheet import (MG995_DATASHEET, MX28AT_DATASHEET, MotorDatasheet, output_armature,
                        output_torque_constant, output_viscous_friction)
from .params import FIRMWARE_LAWS, MODEL_NAMES, ActuatorParams, ParameterError

_BAM: dict[tuple[str, str], dict[str, float]] = {
    ("mx64", "m1"): {"kt": 1.6224667906987444, "R": 3.949433673232461, "armature": 0.011951238325312509, "friction_base": 0.09038677246291783, "friction_viscous": 0.011691602145974832},
    ("mx64", "m2"): {"kt": 1.6204381558934768, "R": 3.8944216519292354, "armature": 0.011923664899375061, "friction_base": 0.05611931763075957, "friction_stribeck": 0.08186411549068562, "dtheta_stribeck": 1.1202509555217797, "alpha": 2.9999999999758256, "friction_viscous": 0.019180846406029385},
    ("mx64", "m3"): {"kt": 1.631491787799071, "R": 3.5708899455080743, "armature": 0.011237906702031345, "friction_base": 0.10216727649779266, "load_friction_base": 0.07580074806755707, "friction_viscous": 0.0006300275797440622},
    ("mx64", "m4"): {"kt": 1.6631556605652682, "R": 3.1560000816605682, "armature": 0.010961212217454795, "friction_base": 0.061549466501679174, "friction_stribeck": 0.02389528618121147, "load_friction_base": 1.9611119490261663e-10, "load_friction_stribeck": 0.23428996680337053, "dtheta_stribeck": 1.5205782308422509, "alpha": 1.3344007931759223, "friction_viscous": 0.014754905791636505},
    ("mx64", "m5"): {"kt": 1.587432589063179, "R": 2.4143487051532198, "armature": 0.011728935143844849, "friction_base": 0.07501958219691603, "friction_stribeck": 0.022233160228709636, "load_friction_motor": 0.3847995899952685, "load_friction_external": 1.6148277731274518e-11, "load_friction_motor_stribeck": 0.030123950049619153, "load_friction_external_stribeck": 0.1658962964406309, "dtheta_stribeck": 0.7461716797150073, "alpha": 1.2930393293009845, "friction_viscous": 0.014908872960620413},
    ("mx64", "m6"): {"kt": 1.6016832750318712, "R": 2.3164043271967447, "armature": 0.012265893049213158, "friction_base": 6.217919698787649e-07, "friction_stribeck": 0.12269525980968875, "load_friction_motor": 0.3114720375111298, "load_friction_external": 2.0462014258729542e-08, "load_friction_motor_stribeck": 0.18774381222411038, "load_friction_external_stribeck": 0.014065853481003015, "load_friction_motor_quad": 0.006908512882777861, "load_friction_external_quad": 0.009999980627672081, "dtheta_stribeck": 2.575277366960116, "alpha": 0.8409018066017007, "friction_viscous": 0.02533701181690149},
    ("mx106", "m1"): {"kt": 2.1913757006745245, "R": 2.9649903987776804, "armature": 0.026609234235148084, "friction_base": 0.10352026623606064, "friction_viscous": 0.03520238029013507},
    ("mx106", "m2"): {"kt": 2.190958566263214, "R": 2.9609045764726725, "armature": 0.026838831911873175, "friction_base": 2.768555173702711e-06, "friction_stribeck": 0.11742121471961874, "dtheta_stribeck": 1.8487805494299074, "alpha": 1.7413892741330947, "friction_viscous": 0.059589394457307716},
    ("mx106", "m3"): {"kt": 2.204165397088512, "R": 2.653346939680077, "armature": 0.02484689556730746, "friction_base": 0.1133532996239035, "load_friction_base": 0.10824037267470683, "friction_viscous": 0.01194450384263248},
    ("mx106", "m4"): {"kt": 2.23138890457851, "R": 2.3717487904639545, "armature": 0.02457397334336701, "friction_base": 6.653380436533205e-13, "friction_stribeck": 0.10491060771568866, "load_friction_base": 0.009150334028953775, "load_friction_stribeck": 0.22235912179095094, "dtheta_stribeck": 1.6232949773728853, "alpha": 1.323485668999259, "friction_viscous": 0.05096082506010955},
    ("mx106", "m5"): {"kt": 2.2087822411811935, "R": 2.0142427292798475, "armature": 0.026018155628771758, "friction_base": 1.8812712661235184e-10, "friction_stribeck": 0.12242747179820507, "load_friction_motor": 0.20763710226562626, "load_friction_external": 0.022684350817709906, "load_friction_motor_stribeck": 0.19519320110890795, "load_friction_external_stribeck": 0.08490162305974122, "dtheta_stribeck": 1.7457130513692263, "alpha": 1.138313248724122, "friction_viscous": 0.05066487276724427},
    ("mx106", "m6"): {"kt": 2.209828156174588, "R": 2.033661749312417, "armature": 0.026016184370993383, "friction_base": 1.0232526438525893e-05, "friction_stribeck": 0.12195409579603411, "load_friction_motor": 0.19800553725822115, "load_friction_external": 0.022215529897348624, "load_friction_motor_stribeck": 0.19859970173941574, "load_friction_external_stribeck": 0.08710328264676681, "load_friction_motor_quad": 0.009999930103371748, "load_friction_external_quad": 7.326919843140997e-05, "dtheta_stribeck": 1.7463251741328727, "alpha": 1.142827788004191, "friction_viscous": 0.05071566473605552},
}

_DATASHEET: dict[str, MotorDatasheet] = {"mx28": MX28AT_DATASHEET, "mg995": MG995_DATASHEET}

SERVO_NAMES: tuple[str, ...] = ("mx64", "mx106", "mx28", "mg995")


def available_presets() -> list[tuple[str, str]]:
    """All valid ``(servo, model)`` pairs."""
    return sorted(_BAM) + [(s, "m1") for s in _DATASHEET]


def from_datasheet(actuator: str, ds: MotorDatasheet, coulomb: float = 0.0) -> ActuatorParams:
    """M1 parameters at the output shaft from motor datasheet values (see :mod:`.datasheet`)."""
    return ActuatorParams(actuator=actuator, model="m1", kt=output_torque_constant(ds), R=ds.R,
                          armature=output_armature(ds),
                          friction={"friction_base": coulomb, "friction_viscous": output_viscous_friction(ds)},
                          firmware=FIRMWARE_LAWS[actuator])


def preset(servo: str, model: str = "m4") -> ActuatorParams:
    """The preset for ``servo`` and friction ``model``; unknown names raise with the list of valid ones."""
    servo = servo.lower().replace("-", "").replace("_", "")
    if servo == "mx28at":
        servo = "mx28"
    model = model.lower()
    if servo not in SERVO_NAMES:
        raise ParameterError(f"unknown servo preset {servo!r}; valid presets: {', '.join(SERVO_NAMES)}")
    if model not in MODEL_NAMES:
        raise ParameterError(f"unknown friction model {model!r}; valid models: {', '.join(MODEL_NAMES)}")
    if servo in _DATASHEET:
        if model != "m1":
            raise ParameterError(f"preset {servo} exists for model m1 only (datasheet model); valid: m1")
        return from_datasheet(servo, _DATASHEET[servo])
    return ActuatorParams.from_bam_dict({**_BAM[(servo, model)], "model": model, "actuator": servo},
                                        source=f"preset {servo}/{model}")
