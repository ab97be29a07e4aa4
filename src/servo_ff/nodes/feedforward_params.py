"""The parameters of ``servo_feedforward_node``: their one description. The boot table (robot, joints, α source)
is read first; the main table's Stribeck and ``alpha.<joint>`` defaults come from the α̂ table of the robot's
joints (:func:`feedforward_specs`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from servo_ff.models.schema import ALPHA_FIELDS, FEEDFORWARD_FIELDS, MAX_ACCELERATION, MAX_VELOCITY, range_text
from servo_ff.ros.common import ParamSpec, field_param, per_joint
from servo_ff.ros.parameters import servo_preset_specs
from servo_ff.ros.robot_description import timeout_spec

from .servo_interface_params import KP_MAX, KP_UNIT


def boot_specs() -> list[ParamSpec]:
    """Read before the robot is loaded: where the robot and the α̂ defaults come from."""
    return [
        ParamSpec("urdf_path", "", "URDF of the robot (used when robot_description is empty)", read_only=True),
        ParamSpec("robot_description", "", "URDF XML (takes precedence over urdf_path)", read_only=True),
        timeout_spec(),
        ParamSpec("mode", "fixed", "inverse dynamics root", read_only=True, choices=("fixed", "floating")),
        ParamSpec("left_foot", "l_sole", "left support frame (floating mode)", read_only=True),
        ParamSpec("right_foot", "r_sole", "right support frame (floating mode)", read_only=True),
        ParamSpec("joints", [""], "goal order of servo/commands (empty: every URDF joint)", read_only=True),
        ParamSpec("servo_node", "servo_sim", "servo node whose kp this node sets", read_only=True),
        ParamSpec(
            "stamped_goals",
            False,
            "goals as sensor_msgs/JointState on servo/joint_command stamped with the /joint_states they answer "
            "(a lockstep sim then matches each goal to its state); false: Float64MultiArray on servo/commands",
            read_only=True,
        ),
        *servo_preset_specs("the default α"),
        ParamSpec(
            "alpha_file",
            "",
            "α table (YAML/JSON, servo_ff.dynamics.alpha format); empty: from actuator_file, else the preset",
            read_only=True,
        ),
        ParamSpec(
            "actuator_file",
            "",
            "identified actuator file (as servo_sim's actuator_file, e.g. <out>/m1.yaml of servo-ff identify): α̂ "
            "and Stribeck shape of its actuator, model and coefficients (servo_ff.dynamics.alpha."
            "alpha_table_from_actuator); with alpha_file, or a servo / model given against it: refused; empty: servo + "
            "model. servo-ff up gives it the sim's when a --params-file gives the sim one and this node no α̂ source",
            read_only=True,
        ),
    ]


def alpha_base(node: Any, values: dict[str, Any], joints: list[str]) -> Any:
    """The α̂ table (an :class:`servo_ff.dynamics.alpha.AlphaTable` over ``joints``) the ``alpha.<joint>`` defaults
    come from: ``alpha_file``, else ``actuator_file`` (``servo``/``model`` given against it refused, as the sim
    refuses them: :func:`.sim_stepper.actuator_source`), else the ``servo``/``model`` preset. ValueError naming
    both when ``alpha_file`` and ``actuator_file`` are set."""
    from servo_ff.dynamics import alpha as alpha_mod
    from servo_ff.io.paths import resolve_path
    from servo_ff.models.presets import preset

    if values["alpha_file"] and values["actuator_file"]:
        raise ValueError(
            f"alpha_file {values['alpha_file']!r} and actuator_file {values['actuator_file']!r} are both set: "
            "give one (a fitted α̂, or the α̂ of an identified actuator)"
        )
    if values["alpha_file"]:
        return alpha_mod.load_alpha(resolve_path(values["alpha_file"]), joints)
    if values["actuator_file"]:
        from .sim_stepper import actuator_source

        return alpha_mod.alpha_table_from_actuator(actuator_source(node, values)[0], joints)
    return alpha_mod.alpha_table_from_actuator(preset(values["servo"], values["model"]), joints)


def feedforward_specs(base: Any, urdf_joints: list[str]) -> list[ParamSpec]:
    """The main table: gains, bounds, and the Stribeck and α̂ rows of every URDF joint with ``base``'s values
    (an :class:`servo_ff.dynamics.alpha.AlphaTable` over ``urdf_joints``) as defaults."""
    alpha_fields = [f for k, f in ALPHA_FIELDS.items() if k.startswith("alpha")]
    return [
        ParamSpec(  # per goal joint, not per URDF joint (the node checks the count: before, both were refused)
            "kp",
            [8.0],
            "P gain of the goal joints, set by joint name on servo_node's kp (one per goal joint, in `joints` "
            "order, or one for all of them; the servo node's other joints keep theirs)",
            KP_UNIT,
            lo=1e-6,
            hi=KP_MAX,
        ),  # fmt: skip
        ParamSpec("enabled", True, "feed-forward on (false: goal = desired position, plain P control)"),
        field_param("u_nominal", FEEDFORWARD_FIELDS["u_nominal"], 15.0),
        field_param("min_supply_fraction", FEEDFORWARD_FIELDS["min_supply_fraction"], 0.5),
        field_param("max_velocity", FEEDFORWARD_FIELDS["max_velocity"], [MAX_VELOCITY], per_joint=True),
        field_param("max_acceleration", FEEDFORWARD_FIELDS["max_acceleration"], [MAX_ACCELERATION], per_joint=True),
        ParamSpec("warn_throttle", 1.0, "minimum time between two warnings of one kind", "s", lo=0.0, hi=3600.0),
        ParamSpec(
            "imu_timeout",
            0.2,
            "an imu/data orientation older than this is reported stale (log, diagnostics WARN); it stays in use",
            "s",
            lo=1e-3,
            hi=10.0,  # the walk node's imu_timeout range
        ),
        ParamSpec(
            "pose_max_age",
            0.1,
            "before the first goal: a pose of the goal joints read longer ago than this when a trajectory arrives is "
            "read again (every goal joint, at or after its arrival) and the trajectory followed from there (the "
            "joints may have moved: torque off, pushed); younger (a lockstep sim waiting for that goal), at once",
            "s",
            lo=0.0,
            hi=3600.0,
        ),
        ParamSpec(
            "resume_speed",
            1.0,
            "when servo/torque_enabled comes on again, the goals go from where the joints stand (at rest) into the "
            "desired trajectory by a quintic blend over max(0.1 s, 15/8·largest gap/resume_speed): its own part "
            "peaks at this speed (the trajectory's velocity adds to it)",
            "rad/s",
            lo=1e-3,
            hi=100.0,
        ),
        ParamSpec(
            "end_fade",
            0.2,
            "a desired trajectory that ends while still moving (its last point's velocity or acceleration not 0: its "
            "stream stopped?) holds its last position with that velocity and acceleration's feed-forward faded out "
            "over this time (said in a warning, diagnostics WARN until the next trajectory), not dropped at once",
            "s",
            lo=1e-3,
            hi=10.0,
        ),
        ParamSpec(
            "supply_timeout",
            1.0,
            "a servo_supply voltage older than this (by its stamp: the servo node's reading, every health_period) is "
            "reported stale (log, diagnostics WARN); it stays in use. Above the servo node's health_period",
            "s",
            lo=1e-3,
            hi=3600.0,
        ),
        ParamSpec(
            "support_timeout",
            0.5,
            "a support_coefficient older than this is reported stale (log, diagnostics WARN); it stays in use. Above "
            "the walk node's publish_period (it sends the coefficient when it changes and at least that often)",
            "s",
            lo=1e-3,
            hi=3600.0,
        ),
        field_param(
            "stribeck_dq_s",
            ALPHA_FIELDS["dq_s"],
            base.dq_s.tolist(),
            per_joint=True,
            description="Stribeck velocity q̇_s per URDF joint (Eq. 9)",
        ),
        field_param(
            "stribeck_delta",
            ALPHA_FIELDS["delta"],
            base.delta.tolist(),
            per_joint=True,
            description="Stribeck exponent δ per URDF joint (Eq. 9)",
        ),
    ] + [
        ParamSpec(
            f"alpha.{j}",
            base.alpha[i, :].tolist(),
            f"α̂0..α̂4 of joint {j} (Schwarz & Behnke Eq. 19; "
            + "; ".join(f"α̂{k} in {range_text(ALPHA_FIELDS[f'alpha{k}'])}" for k in range(5))
            + ")",
            lo=min(f.lo for f in alpha_fields),
            hi=max(f.hi for f in alpha_fields),
        )
        for i, j in enumerate(urdf_joints)
    ]


def motion_bounds(robot: Any, v: dict[str, Any]):
    """The desired trajectory's |q̇|, |q̈| bounds per URDF joint of ``robot`` from ``max_velocity`` (the URDF velocity
    limit first) and ``max_acceleration`` in ``v`` (:func:`servo_ff.dynamics.feedforward.desired_motion_bounds`)."""
    from servo_ff.dynamics.feedforward import desired_motion_bounds

    n = len(robot.joint_names)
    vmax, amax = (per_joint(v[k], n, k) for k in ("max_velocity", "max_acceleration"))
    return desired_motion_bounds(robot, vmax, amax)


def parameter_specs(urdf_path: str | Path) -> list[ParamSpec]:
    """Every parameter the node declares for the robot of ``urdf_path`` with the default preset's α̂ (no node
    started; needs servo_ff.dynamics)."""
    from servo_ff.dynamics.alpha import alpha_table_from_actuator
    from servo_ff.dynamics.robot import load_robot
    from servo_ff.models.presets import preset

    boot = boot_specs()
    d = {s.name: s.default for s in boot}
    joints = list(load_robot(Path(urdf_path)).joint_names)
    return boot + feedforward_specs(alpha_table_from_actuator(preset(d["servo"], d["model"]), joints), joints)
