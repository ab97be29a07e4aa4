"""The actuator parameters a command works with: ``--servo``/``--model`` preset, ``--params`` file, and
``--firmware`` law (name, JSON/YAML file, or ``key=value,...`` over the file's or preset's law)."""

from __future__ import annotations

import argparse
import sys

from servo_ff.models.firmware import FIRMWARE_LAWS, firmware_from_spec
from servo_ff.models.params import ActuatorParams, ParameterError, load_params

DEFAULT_SERVO, DEFAULT_MODEL = "mx106", "m4"  # --servo/--model not given (a preset without m4: its best model)


def add_preset_arguments(p: argparse.ArgumentParser, servo_help: str, model_help: str) -> None:
    """``--servo``/``--model`` (default: the mx106 m4 preset), which ``--params`` replaces: :func:`preset_of`."""
    p.add_argument("--servo", default=None, help=f"{servo_help} (default {DEFAULT_SERVO}; not with --params)")
    p.add_argument(
        "--model",
        default=None,
        help=f"{model_help} (default {DEFAULT_MODEL}, or the best the preset has; not with --params)",
    )


def preset_of(args: argparse.Namespace) -> ActuatorParams | None:
    """The ``--servo``/``--model`` preset, or None with ``--params`` (the file gives the actuator); a --servo or
    --model given beside --params is refused in one line (before: accepted and ignored, nothing said)."""
    from servo_ff.models.presets import default_model, preset, preset_models

    if args.params:
        given = [f"--{k} {getattr(args, k)}" for k in ("servo", "model") if getattr(args, k) is not None]
        if given:
            raise ValueError(f"{', '.join(given)}: not used with --params {args.params} (the file gives the actuator)")
        return None
    servo = args.servo or DEFAULT_SERVO
    if args.model is None and default_model(servo) != DEFAULT_MODEL:  # before: "no … file for model m4; valid: m1"
        model = default_model(servo)
        print(f"--model not given and preset {servo} has no {DEFAULT_MODEL}: {model}, the best it has "
              f"({', '.join(preset_models(servo))})", file=sys.stderr)  # fmt: skip
        return preset(servo, model)
    return preset(servo, args.model or DEFAULT_MODEL)


def add_firmware_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--firmware",
        metavar="SPEC",
        help=f"firmware law: a name ({', '.join(FIRMWARE_LAWS)}), a .json/.yaml file with a firmware "
        "object, or key=value pairs over the servo's law, e.g. kp=16,current_limit=1.2 (keys: "
        "control, vin, kp, error_gain, max_pwm, current_limit, goal_velocity_limit)",
    )


def resolve_params(
    params_path: str | None, preset_params: ActuatorParams | None, firmware: str | None
) -> ActuatorParams:
    """Parameters from ``params_path`` (else ``preset_params``) with the ``firmware`` spec applied."""
    if params_path is None:
        if preset_params is None:
            raise ParameterError("give --params FILE or a preset")
        return (
            preset_params
            if not firmware
            else preset_params.with_(firmware=firmware_from_spec(firmware, base=preset_params.firmware))
        )
    if not firmware:
        return load_params(params_path)
    if "=" in firmware and not firmware.endswith((".json", ".yaml", ".yml")):
        try:  # key=value pairs go over the file's own law when it has one
            base = load_params(params_path).firmware
        except ParameterError:
            base = None
        return load_params(params_path, firmware=firmware_from_spec(firmware, base=base))
    return load_params(params_path, firmware=firmware_from_spec(firmware))
