"""The stepper backend of ``servo_sim_node`` (:mod:`.sim_node`, the default): :class:`StepperBackend`, its
parameters (load, actuator source) and the load it simulates."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from diagnostic_msgs.msg import DiagnosticStatus, KeyValue

from servo_ff.io.paths import resolve_path
from servo_ff.models.params import ActuatorParams, ParameterError, load_params
from servo_ff.models.presets import DEFAULT_MODEL, default_model, preset, preset_models
from servo_ff.models.stepper import ExternalLoad, PendulumLoad, step_stability_refusal
from servo_ff.models.thermal import ThermalParams, thermal_warning
from servo_ff.ros.common import (
    ParameterTable,
    ParamSpec,
    actuator_from_values,
    actuator_specs,
    diag_name,
    hardware_id,
    per_joint,
)
from servo_ff.ros.parameters import servo_preset_specs
from servo_ff.ros.servo_diagnostics import sim_state, thermal_values
from servo_ff.ros.sim_clock import sim_time_specs

from .servo_base import servo_interface_specs, validate_interface
from .servo_ranges import servo_table
from .sim_backend import SimBackend, SimServos, UrdfGravity, load_inertia, substeps

LOAD_TYPES = ("pendulum", "none", "urdf")


def sim_specs() -> list[ParamSpec]:
    return [
        ParamSpec("load.type", "pendulum", "load on each joint", read_only=True, choices=LOAD_TYPES),
        ParamSpec("load.mass", [0.5], "pendulum end mass", "kg", lo=0.0, hi=1e3, per_joint=True),
        ParamSpec("load.length", [0.15], "pendulum length", "m", lo=0.0, hi=100.0, per_joint=True),
        ParamSpec("load.arm_mass", [0.0], "pendulum arm mass (uniform rod)", "kg", lo=0.0, hi=1e3, per_joint=True),
        ParamSpec(
            "load.inertia", [0.0], "extra load inertia for load.type none", "kg·m²", lo=0.0, hi=1e3, per_joint=True
        ),
        ParamSpec(
            "load.urdf_path",
            "",
            "fixed-base URDF for load.type urdf (gravity + diagonal inertia; `joints` must be URDF joints)",
            read_only=True,
        ),
        ParamSpec(
            "initial_position", [0.0], "position at start-up", "rad", lo=-1e3, hi=1e3, per_joint=True, read_only=True
        ),
        ParamSpec(
            "physics_dt",
            0.001,
            "largest stepper step (each tick is split into equal steps ≤ this)",
            "s",
            lo=1e-5,
            hi=0.1,
        ),
        *sim_time_specs(),
        ParamSpec("backend", "auto", "stepper backend", choices=("auto", "numba", "numpy"), read_only=True),
        ParamSpec("thermal_model", False, "run the winding model actuator.thermal.* (R rises with T)", read_only=True),
        ParamSpec(
            "ambient_temperature", 25.0, "ambient of the thermal model", "°C", lo=-50.0, hi=200.0, read_only=True
        ),
        ParamSpec("temperature_limit", 70.0, "servo temperature limit (diagnostics)", "°C", lo=0.0, hi=200.0),
        ParamSpec("temperature_warn_s", 60.0, "warn when the limit is predicted nearer than this", "s", lo=0.0, hi=1e6),
    ]


def sim_actuator(values: dict[str, Any]) -> ActuatorParams:
    """The simulated actuator from the node's parameters: its thermal row only with ``thermal_model``."""
    p = actuator_from_values(values)
    return p if values["thermal_model"] else p.with_(thermal=None)


def thermal_refusal(values: dict[str, Any], table: ParameterTable | None) -> str | None:
    """A run-time change of ``actuator.thermal.*`` without the winding model (``thermal_model`` false, read-only)
    would have no effect: refused, naming the parameter (start-up values are taken as they are)."""
    if table is None or values["thermal_model"]:
        return None
    changed = sorted(k for k in values if k.startswith("actuator.thermal.") and values[k] != table.values.get(k))
    if not changed:
        return None
    return (
        f"thermal_model is false: {', '.join(changed)} would have no effect (the winding model is not running; "
        "thermal_model is read-only: start the node with thermal_model:=true to use actuator.thermal.*)"
    )


def build_load(values: dict[str, Any], n: int) -> PendulumLoad | ExternalLoad | UrdfGravity:
    kind = values["load.type"]
    if kind == "pendulum":
        return PendulumLoad(
            mass=per_joint(values["load.mass"], n, "load.mass"),
            length=per_joint(values["load.length"], n, "load.length"),
            arm_mass=per_joint(values["load.arm_mass"], n, "load.arm_mass"),
        )
    if kind == "none":
        return ExternalLoad(inertia=per_joint(values["load.inertia"], n, "load.inertia"), tau_ext=np.zeros(n))
    if not values["load.urdf_path"]:
        raise ValueError("load.type urdf needs load.urdf_path")
    path = resolve_path(values["load.urdf_path"])
    if not path.is_file():
        raise FileNotFoundError(f"load.urdf_path {values['load.urdf_path']!r}: file not found ({path})")
    try:
        return UrdfGravity(path, values["joints"])
    except ImportError as e:
        raise ValueError(f"load.type urdf needs servo_ff.dynamics (pinocchio): {e}") from None


def source_specs(model: str = DEFAULT_MODEL) -> list[ParamSpec]:
    """Where the simulated actuator comes from: an identified file, else a published preset (``model``: the
    friction model's default)."""
    return [
        ParamSpec(
            "actuator_file",
            "",
            "identified actuator file (bam JSON or servo_ff YAML, e.g. <out>/m6.yaml of servo-ff identify): "
            "actuator, model and coefficients; empty: servo + model",
            read_only=True,
        ),
        *servo_preset_specs("the simulated actuator (without actuator_file)", model),
    ]


def source_model(given: dict[str, Any]) -> tuple[str, str]:
    """The ``model`` default for the parameters ``given``: m4, or — ``model`` not given, no ``actuator_file`` — the
    best model of the ``servo`` preset when it has no m4 (before: the sim stopped: STS3215 and the datasheet presets
    have m1 only), with the line saying so ("": none)."""
    servo = given.get("servo", next(s.default for s in source_specs() if s.name == "servo"))
    if "model" in given or given.get("actuator_file") or default_model(servo) == DEFAULT_MODEL:
        return DEFAULT_MODEL, ""
    model = default_model(servo)
    models = ", ".join(preset_models(servo))
    return model, f"model not set and preset {servo} has no {DEFAULT_MODEL}: {model}, the best it has ({models})"


def actuator_source(node: Any, values: dict[str, Any]) -> tuple[ActuatorParams, str]:
    """The actuator of ``actuator_file`` (its model from the file) or of the ``servo``/``model`` preset, and where
    it comes from. ``servo``/``model`` set explicitly against the file, or ``actuator.model`` set against the
    source (an identified YAML given as a parameter file without ``actuator_file``), are refused: never run a
    model other than the one asked for."""
    given = {k: p.value for k, p in (getattr(node, "_parameter_overrides", {}) or {}).items()}
    if values["actuator_file"]:
        path = resolve_path(values["actuator_file"])
        params, source = load_params(path), f"actuator_file {values['actuator_file']}"
        for key, own in (("servo", params.actuator), ("model", params.model)):
            if key in given and given[key] != own:
                raise ValueError(f"{key}={given[key]!r} contradicts {source} ({key} {own!r}): drop {key}")
    else:
        params, source = preset(values["servo"], values["model"]), f"preset {values['servo']}/{values['model']}"
        source += f" (the {params.actuator} preset)" if params.actuator != values["servo"] else ""
    model = given.get("actuator.model")
    if model is not None and model != params.model:
        raise ValueError(
            f"actuator.model={model!r} is not the model of the {source} ({params.model}): name the identified file "
            f"with actuator_file (its model comes from it), or set model: {model}"
        )
    return params, source


def hardware_servo_name(values: dict[str, Any], params: ActuatorParams) -> str:
    """The ``servo`` the hardware node would be given for this sim, whose control table's ranges the sim checks
    (:func:`.servo_ranges.servo_table`): the ``servo`` parameter as given (``mx106-p1``, not its preset ``mx106``),
    or with ``actuator_file`` the file's actuator (a ``servo`` given must equal it: :func:`actuator_source`)."""
    return params.actuator if values["actuator_file"] else values["servo"]


def stepper_specs(base: ActuatorParams) -> list[ParamSpec]:
    """The table declared after the actuator source: the servo interface, the simulation and every coefficient of
    ``base`` (its values the defaults; ``actuator.thermal.*`` always declared)."""
    base = base.with_(thermal=base.thermal or ThermalParams())
    return servo_interface_specs(kp=base.firmware.kp) + sim_specs() + actuator_specs(base)


def parameter_specs() -> list[ParamSpec]:
    """Every parameter of the stepper ``servo_sim_node`` in declaration order, with the defaults it has without
    overrides (the default ``servo``/``model`` preset); no node started."""
    d = {s.name: s.default for s in source_specs()}
    return source_specs() + stepper_specs(preset(d["servo"], d["model"]))


class StepperBackend(SimBackend):
    """``servo_sim_node``'s default backend: every joint a friction-model servo (:class:`SimServos`) with its load."""

    status_name = "stepper"

    def __init__(self) -> None:
        self.node: Any = None
        self.sim: SimServos | None = None
        self.source_text = ""  # where the actuator comes from

    def declare(self, node: Any) -> ParameterTable:
        """The actuator source, then every parameter (the source's coefficients as defaults); the servos built
        from them, torque off."""
        self.node = node
        model, said = source_model({k: p.value for k, p in (getattr(node, "_parameter_overrides", {}) or {}).items()})
        if said:
            node.get_logger().info(said)
        self.sel = ParameterTable(
            node,
            source_specs(model),
            validate=lambda v: (actuator_source(node, v), None)[1],
            n_joints=lambda v: None,
        )
        base, self.source_text = actuator_source(node, self.sel.values)
        self._servo_table = servo_table(hardware_servo_name(self.sel.values, base))  # kp, position range: as hardware
        table = ParameterTable(node, stepper_specs(base), validate=node._validate, apply=node._apply)
        v = table.values
        n = len(v["joints"])
        theta0 = per_joint(v["initial_position"], n, "initial_position")
        self.sim = SimServos(sim_actuator(v), n, build_load(v, n), theta=theta0, backend=v["backend"])
        self.sim.set_ambient(v["ambient_temperature"])
        self.sim.warm_up(1.0 / v["rate_hz"])
        self.sim.enabled = False  # torque comes on with the lifecycle transition activate, never here
        return table

    def servo_table(self):
        return self._servo_table

    def start(self, v: dict[str, Any]) -> str:
        self.sim.set_kp(self.node.kp)
        self.node.gate.goal = per_joint(v["initial_position"], self.node.n, "initial_position").copy()
        return (
            f"simulating {self.node.n} {self.sim.params.actuator}/{self.sim.params.model} servo(s) "
            f"({self.source_text}), kp {self.node.kp.tolist()}, {self.node.joints} at "
            f"{v['rate_hz']:g} Hz, load {v['load.type']}, supply {self.sim.supply_voltage:g} V, "
        )

    def step(self) -> bool:
        """One control period of physics; False (reported, nothing published) if the stepper refuses the state."""
        node = self.node
        try:
            self.sim.advance(node.period, node.substeps)
        except (ValueError, ParameterError) as e:  # e.g. a diverging state; report, do not publish garbage
            node.stepper_error = str(e)
            node.throttle(
                "sim",
                node.get_logger().error,
                f"stepper refused the state: {e}; call {node.names['reset']} to bring the simulation back",
            )
            return False
        node.stepper_error = ""
        return True

    # ------------------------------------------------------------------ parameters
    def validate(self, values: dict[str, Any]) -> str | None:
        reason = validate_interface(values)
        if reason:
            return reason
        reason = thermal_refusal(values, getattr(self.node, "table", None))
        if reason:
            return reason
        n = len(values["joints"])
        params = sim_actuator(values)  # ParameterError names the key and its admissible range
        load = build_load(values, n)
        theta0 = per_joint(values["initial_position"], n, "initial_position")
        sim = getattr(self, "sim", None)
        theta = sim.theta if sim is not None else theta0
        h = 1.0 / (values["rate_hz"] * substeps(values))  # the physics step this set would run with
        reason = step_stability_refusal(params, load_inertia(load, n, theta), h, values["joints"])
        if reason:
            return f"{reason}; lower physics_dt or change actuator.R, actuator.kt, actuator.armature or the load"
        # initial_position (read-only) against the limits at start-up only: a run-time narrowing past it is taken as
        # on the hardware node, and holds a reset's goal at the nearest limit (hold_start_pose); before: refused
        if getattr(self.node, "table", None) is None:
            lo = per_joint(values["position_min"], n, "position_min")
            hi = per_joint(values["position_max"], n, "position_max")
            if ((theta0 < lo) | (theta0 > hi)).any():
                return f"initial_position {theta0.tolist()} is outside the joint limits"
        return None

    def apply(self, changed: set[str]) -> None:
        v = self.node.table.values
        if any(k.startswith("actuator.") for k in changed):
            self.sim.set_params(sim_actuator(v))  # new rows: the commanded velocity / effort limits written again
            kept = self.node.reapply_command_limits()
            self.node.get_logger().info(
                f"actuator parameters updated: {sorted(changed)}" + (f"; commanded limits kept: {kept}" if kept else "")
            )
        if any(k.startswith("load.") for k in changed):
            self.sim.load = build_load(v, self.node.n)
        if "physics_dt" in changed:
            self.node.substeps = substeps(v)

    # ------------------------------------------------------------------ velocity / effort limits
    def limit_rows(self) -> tuple[np.ndarray | None, np.ndarray]:
        """The packed parameter rows the servos step with, and each node joint's row."""
        return self.sim.packed, np.arange(self.node.n)

    # ------------------------------------------------------------------ hooks
    def configure(self) -> tuple[bool, str]:
        return True, f"{self.node.n} simulated servo(s) {self.node.joints}, torque off"

    def cleanup(self) -> None:
        theta0 = per_joint(self.node.table["initial_position"], self.node.n, "initial_position")
        self.sim.reset(theta0)
        self.sim.enabled = False
        held = self.node.hold_start_pose(theta0)
        if held:
            self.node.get_logger().warning(f"cleanup: position = initial_position {theta0.tolist()} rad{held}")

    def reset(self, was: str) -> tuple[bool, str]:
        node = self.node
        theta0 = per_joint(node.table["initial_position"], node.n, "initial_position")
        self.sim.reset(theta0)
        self.sim.enabled = node.active  # torque only while active (lifecycle)
        held = node.hold_start_pose(theta0)
        return True, (
            f"simulation reset: position = initial_position {theta0.tolist()} rad, velocity 0, goal "
            "= initial_position, errors cleared, torque "
            + ("on" if node.active else "off (node not active)")
            + (f" (stepper had refused: {was})" if was else "")
            + held
        )

    def read(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.sim.theta, self.sim.dtheta, self.sim.effort

    def write_goal(self, goal: np.ndarray) -> None:
        self.sim.goal = goal

    def write_kp(self, kp: np.ndarray) -> None:
        self.sim.set_kp(kp)

    def torque(self, enable: bool) -> tuple[bool, str]:
        if enable and not self.sim.enabled:  # the firmware's profile starts from where the joint is, not from a
            self.sim.target = self.sim.theta.copy()  # target left behind (before: a swing back toward it)
        self.sim.enabled = bool(enable)
        return True, f"torque {'enabled' if enable else 'disabled'} on {len(self.node.joints)} simulated joint(s)"

    def torque_is_on(self) -> bool:
        return self.sim.enabled

    def reboot(self) -> tuple[bool, str]:
        self.sim.reboot()
        return True, "simulated servos rebooted: hardware errors cleared, torque off, goal = present position"

    def supply_voltage(self) -> float:
        return self.sim.supply_voltage

    def diagnostics(self) -> list[DiagnosticStatus]:
        node = self.node
        out = []
        level, state = sim_state(node, self.sim.enabled)  # as the hardware's
        if node.stepper_error:
            level = DiagnosticStatus.ERROR
            state = f"stepper refused the state ({node.stepper_error}); call {node.names['reset']}"
        clock = node.clock_values()  # once per diagnostics: the measured real-time factor is since the last
        th, limit = self.sim.thermal, node.table["temperature_limit"]
        t_lim = th.time_to(limit) if th is not None else np.full(len(node.joints), math.inf)
        for i, name in enumerate(node.joints):
            heat = thermal_warning(th.temp[i], t_lim[i], limit, node.table["temperature_warn_s"]) if th else (0, "")
            out.append(
                DiagnosticStatus(
                    level=max(level, [DiagnosticStatus.OK, DiagnosticStatus.WARN, DiagnosticStatus.ERROR][heat[0]]),
                    name=diag_name(node, name),
                    hardware_id=hardware_id(node, f"sim/{name}"),
                    message=state + (f"; {heat[1]}" if heat[1] else ""),
                    values=[
                        *thermal_values(th, i, t_lim[i]),
                        KeyValue(key="position_rad", value=f"{self.sim.theta[i]:.5f}"),
                        KeyValue(key="goal_rad", value=f"{self.sim.goal[i]:.5f}"),
                        KeyValue(key="velocity_rad_s", value=f"{self.sim.dtheta[i]:.5f}"),
                        KeyValue(key="effort_Nm", value=f"{self.sim.effort[i]:.5f}"),
                        KeyValue(key="kp", value=f"{self.sim.kp[i]:g}"),
                        KeyValue(key="hardware_error", value=str(self.sim.hardware_error)),
                        KeyValue(key="supply_V", value=f"{self.sim.supply_voltage:g}"),
                        *clock,
                    ],
                )
            )
        return out


__all__ = [
    "LOAD_TYPES",
    "StepperBackend",
    "actuator_source",
    "build_load",
    "parameter_specs",
    "sim_actuator",
    "sim_specs",
    "source_specs",
    "stepper_specs",
    "thermal_refusal",
]
