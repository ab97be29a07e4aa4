"""Identification of friction models M1–M6 (+ kt, R, armature, q_offset) from logs by simulation MAE (CMA-ES with
IPOP restarts; Duclusaud et al., Extended Friction Models for the Physics Simulation of Servo Actuators, §V), set up
and checked before anything is written: ``servo-ff identify`` parses its flags into :class:`IdentifyOptions` and
calls :func:`prepare`, :func:`identify` and :func:`summary` (a node would translate its parameters the same way).

Every input is checked first: unreadable or degenerate logs (too short, no motion, constant goal, torque never
on), a split with fewer than 2 logs, an actuator without a firmware law or search bounds, a training log whose
torque-off swings give an inadmissible armature (:mod:`~servo_ff.identification.swing_armature`) raise one
:class:`ValueError` line naming the file (or the option, by its flag) and the reason.

Where the training logs (never a validation log) hold a torque-off half-swing of ≥ 0.1 rad, the armature is held at
its free-swing estimate instead of searched (``swing_armature``; summary.json's ``armature_from_swing``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..identification.cmaes_search import DEFAULT_AGREE, DEFAULT_STARTS
from ..identification.datasheet_prior import DatasheetPrior, datasheet_prior
from ..identification.search_space import FIRMWARE_KEY_FACTORS, FIRMWARE_KEYS_SOURCE, firmware_keys
from ..identification.simulation_fit import FitResult, bounds_row, check_split, identify_models, split_logs
from ..identification.swing_armature import SwingHold, swing_armature
from ..io.logs import read_logs
from ..io.servo_log import ServoLog, check_identifiable
from ..models.firmware import FIRMWARE_TABLE, FirmwareLaw, firmware_from_spec
from ..models.params import MODEL_NAMES, ActuatorParams, ParameterError, load_params, unknown_firmware_error
from .fit_options import bag_options


@dataclass(frozen=True)
class IdentifyOptions:
    """What to fit and how; each field is the CLI flag of the same name (``--max-evals`` for ``max_evals``)."""

    models: tuple[str, ...] = MODEL_NAMES
    actuator: str | None = None  # servo type (None: the params file's, else the logs' 'motor')
    params: str | None = None  # parameter file: its firmware law, and the search-box reference
    firmware: str | None = None  # firmware law spec (firmware_from_spec)
    validation: float = 0.25  # validation fraction of the logs (0: fit on every log)
    max_evals: int = 4000  # candidate evaluations per model and independent search
    starts: int = DEFAULT_STARTS  # independent IPOP searches per model; the lowest training MAE is kept
    patience: int = 30  # generations without a 0.1 % improvement before a CMA-ES run restarts
    restarts: int | None = None  # IPOP restarts per model (None: until the budget is spent)
    stall_restarts: int = 2  # converged after this many restarts in a row improve < 0.1 %
    population: int | None = None  # first CMA-ES population (None: 4 + 3 ln n)
    fit_q_offset: bool = True
    datasheet_prior: bool = True  # bound kt and R by the datasheet's stall torque and no-load speed
    prior_factor: float = 1.25  # datasheet box ×/÷ this factor
    fit_firmware: bool = True  # fit the error gain and target-velocity clamp where the law has a clamp
    dt: float = 0.005  # [s] resampling period
    joint: str | None = None  # the joint of rosbag2 logs whose joint_states name several (None: their one joint)
    joints: tuple[str, ...] = ()  # the order of rosbag2 Float64MultiArray goals and gains (a controller's joints)
    topics: tuple[tuple[str, str], ...] = ()  # rosbag2 topic options (fit_options.TOPIC_OPTIONS), name and value
    seed: int = 0  # seed of the split and of CMA-ES
    warm_start: bool = True  # start nested models from the nested fits (False: mid-box)
    swing_armature: bool = True  # hold the armature at the training logs' torque-off swing estimate, where they swing


@dataclass(frozen=True)
class Setup:
    """What the fit runs with, resolved (and checked) before anything is written."""

    actuator: str
    firmware: FirmwareLaw
    firmware_source: str
    reference: ActuatorParams | None
    bounds_source: str
    prior: DatasheetPrior | None = None
    swing: SwingHold = SwingHold(None, "not resolved")  # the armature held from the training logs' free swing


def check_options(opts: IdentifyOptions) -> None:
    """One :class:`ValueError` line naming the first bad option (by its flag)."""
    for flag, v, least in (
        ("--max-evals", opts.max_evals, 1),
        ("--starts", opts.starts, 1),
        ("--patience", opts.patience, 1),
        ("--restarts", opts.restarts, 0),
        ("--population", opts.population, 2),
        ("--stall-restarts", opts.stall_restarts, 0),
    ):
        if v is not None and v < least:
            raise ValueError(f"{flag} must be >= {least}, got {v}")
    if not 0.0 <= opts.validation < 1.0:
        raise ValueError(f"--validation must be in [0, 1), got {opts.validation}")
    unknown = [m for m in opts.models if m not in MODEL_NAMES]
    if unknown:
        raise ValueError(f"unknown model(s) {', '.join(unknown)}; valid models: {', '.join(MODEL_NAMES)}")


def _load_reference(path: str, firmware_spec: str | None) -> ActuatorParams:
    """The ``--params`` file; an unknown actuator without a firmware object needs ``--firmware``."""
    try:
        return load_params(path)
    except ParameterError:
        if firmware_spec is None or Path(path).suffix.lower() in (".yaml", ".yml"):
            raise
        return ActuatorParams.load_json(path, firmware=firmware_from_spec(firmware_spec))


def resolve(opts: IdentifyOptions, logs: Sequence[ServoLog]) -> Setup:
    """Actuator, firmware law (and its source) and search-box reference from the options, the file and the logs."""
    ref = _load_reference(opts.params, opts.firmware) if opts.params else None
    actuator = opts.actuator or (ref.actuator if ref else "") or logs[0].motor
    if not actuator:
        raise ValueError(f"{logs[0].source}: the log has no 'motor' key; pass --servo or --params")
    row = FIRMWARE_TABLE.get(actuator)
    if opts.firmware:
        base = ref.firmware if ref else (row.law if row else None)
        fw, source = firmware_from_spec(opts.firmware, base), f"--firmware {opts.firmware}"
    elif ref is not None:
        table = FIRMWARE_TABLE.get(ref.actuator)
        fw = ref.firmware
        source = (
            f"{opts.params}: {ref.actuator} row, {table.source}"
            if table and table.law == fw
            else f"{opts.params}: its firmware object"
        )
    elif row is not None:
        fw, source = row.law, f"{actuator} row: {row.source}"
    else:
        raise unknown_firmware_error(actuator, f"--servo {actuator}" if opts.actuator else logs[0].source)
    if not (opts.prior_factor > 1 and math.isfinite(opts.prior_factor)):
        raise ValueError(f"--prior-factor must be > 1, got {opts.prior_factor}")
    prior = datasheet_prior(actuator, opts.prior_factor) if opts.datasheet_prior else None
    row = bounds_row(actuator, ref)
    train = split_logs(logs, opts.validation, opts.seed)[0]  # identify_models' split: never a validation log
    swing = swing_armature(train, row.armature, opts.swing_armature)
    return Setup(actuator, fw, source, ref, row.source, prior, swing)


def check_one_actuator(logs: Sequence[ServoLog]) -> None:
    """One identification is of one actuator: logs whose ``motor`` keys differ are refused, naming a log of each."""
    by_motor: dict[str, str] = {}
    for log in logs:
        if log.motor:
            by_motor.setdefault(log.motor, log.source)
    if len(by_motor) > 1:
        named = ", ".join(f"{src} is {motor}" for motor, src in by_motor.items())
        raise ValueError(f"logs of different actuators ({named}): identify one actuator at a time")


def prepare(paths: Sequence[str | Path], opts: IdentifyOptions) -> tuple[list[ServoLog], Setup]:
    """Check the options, read and check the logs (files or folders) and resolve the set-up: everything that can
    fail on bad input, before any output exists."""
    check_options(opts)
    bag = bag_options(dict(opts.topics), opts.joint, opts.joints)
    logs = read_logs(paths, dt=opts.dt, **bag)  # bags only
    if bag and not any(lg.joint for lg in logs):  # before: accepted, no effect, nothing said
        named = [k for k, v in opts.topics if v] + ["joint"] * bool(opts.joint) + ["joints"] * bool(opts.joints)
        flags = ", ".join(f"--{k.replace('_', '-')}" for k in named)  # the flags are the option names
        raise ValueError(f"{flags}: options of rosbag2 logs, and none of the {len(logs)} logs is one: drop them")
    check_identifiable(logs)
    check_one_actuator(logs)
    check_split(logs, opts.validation)
    return logs, resolve(opts, logs)


def identify(
    logs: Sequence[ServoLog],
    setup: Setup,
    opts: IdentifyOptions,
    progress: bool = False,
    callback: Callable[[str, FitResult], None] | None = None,
) -> dict[str, FitResult]:
    """Fit every model of ``opts.models`` (model → :class:`FitResult`); ``callback(model, result)`` as each ends."""
    return identify_models(
        logs,
        opts.models,
        actuator=setup.actuator,
        firmware=setup.firmware,
        validation_fraction=opts.validation,
        seed=opts.seed,
        max_evals=opts.max_evals,
        starts=opts.starts,
        warm=opts.warm_start,
        progress=progress,
        reference=setup.reference,
        callback=callback,
        patience=opts.patience,
        restarts=opts.restarts,
        population=opts.population,
        fit_q_offset=opts.fit_q_offset,
        stall_restarts=opts.stall_restarts,
        prior=setup.prior,
        fit_firmware=opts.fit_firmware,
        fixed=setup.swing.fixed,
    )


def prior_summary(setup: Setup, enabled: bool) -> dict[str, Any]:
    """summary.json's statement of the datasheet prior (or why there is none)."""
    if setup.prior is not None:
        return setup.prior.to_dict()
    reason = "--no-datasheet-prior" if not enabled else f"no datasheet row for {setup.actuator}"
    return {"kind": "none", "reason": reason}


def firmware_fit_summary(setup: Setup, enabled: bool) -> dict[str, Any]:
    """summary.json's statement of the firmware constants fitted (error gain, target-velocity clamp)."""
    keys = firmware_keys(setup.firmware) if enabled else []
    if not keys:
        why = "--no-fit-firmware" if not enabled else "the firmware law has no target-velocity clamp"
        return {"keys": [], "reason": why}
    return {
        "keys": keys,
        "bounds_factor_of_law": {k: list(FIRMWARE_KEY_FACTORS[k][:2]) for k in keys},
        "source": FIRMWARE_KEYS_SOURCE,
    }


def finite_or_none(x: float | None) -> float | None:
    """``x`` as a JSON number, None where it is missing or not finite."""
    return None if x is None or not math.isfinite(x) else float(x)


def summary(opts: IdentifyOptions, setup: Setup, results: dict[str, FitResult]) -> dict[str, Any]:
    """summary.json: set-up, split, seed, budget and per-model MAEs and parameters (no NaN: null with a note)."""
    first = next(iter(results.values()))
    fw = {k: finite_or_none(v) if isinstance(v, float) else v for k, v in asdict(setup.firmware).items()}
    notes = ["kp and vin of the firmware law are taken from each log"]
    if not first.validation_logs:
        notes.append("validation_mae is null: no validation logs (--validation 0)")
    models = {}
    for m, r in results.items():
        models[m] = {
            "train_mae": finite_or_none(r.train_mae),
            "validation_mae": finite_or_none(r.validation_mae),
            "start_mae": finite_or_none(r.start_mae),
            "evaluations": r.evaluations,
            "generations": r.generations,
            "stop": r.stop,
            "runs": r.runs,
            "at_bound": r.at_bound,
            "log_space_keys": r.log_keys,
            "seconds": r.seconds,
            "params": r.params.to_bam_dict(),
        }
        if r.train_mae is not None and not math.isfinite(r.train_mae):
            notes.append(f"{m}: train_mae is null: the fitted model diverged on a training log")
    return {
        "actuator": setup.actuator,
        "firmware": {"law": fw, "source": setup.firmware_source},
        "bounds": setup.bounds_source,
        "datasheet_prior": prior_summary(setup, opts.datasheet_prior),
        "firmware_fit": firmware_fit_summary(setup, opts.fit_firmware),
        "armature_from_swing": setup.swing.to_dict(),
        "split": {
            "validation_fraction": opts.validation,
            "seed": opts.seed,
            "train": first.train_logs,
            "validation": first.validation_logs,
        },
        "seed": opts.seed,
        "budget": {
            "max_evals": opts.max_evals,
            "starts": opts.starts,
            "selection": (
                "lowest training MAE of the independent searches, stopping once two agree within "
                f"{DEFAULT_AGREE:g} (relative; no polish then), else one polish search from it"
            ),
            "patience": opts.patience,
            "restarts": opts.restarts,
            "stall_restarts": opts.stall_restarts,
            "population": opts.population,
            "tol": 1e-3,
        },
        "fit_q_offset": opts.fit_q_offset,
        "warm_start": opts.warm_start,
        "dt": opts.dt,
        "models": models,
        "notes": notes,
    }


__all__ = [
    "IdentifyOptions",
    "Setup",
    "check_options",
    "resolve",
    "prepare",
    "identify",
    "prior_summary",
    "firmware_fit_summary",
    "summary",
]
