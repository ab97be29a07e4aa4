"""``servo_walk_node``'s parameters: their one description (node declarations, validation, docs/nodes.md); the
engine they describe (:func:`walk_engine`)."""

from __future__ import annotations

from typing import Any

from servo_ff.dynamics.walk_command import ON_CMD_TIMEOUT
from servo_ff.models.schema import FEEDFORWARD_FIELDS, MAX_ACCELERATION, MAX_VELOCITY
from servo_ff.ros.common import ParamSpec, field_param

#: the walk node's CPG gaits (:mod:`servo_ff.dynamics.nimbro_cpg_engine`): the NimbRo-OP's, and the OP3's scaled one
CPG_GAITS = ("nimbro_cpg", "op3_cpg")


#: [s] a message's points reach this far past the next message's time at least (a late timer)
HORIZON_MARGIN = 0.05


def check_walk(v: dict[str, Any]) -> str | None:
    """Why the parameter values ``v`` cannot be the walk node's together (None: they can): a ``horizon`` that ends
    before the next message (+ :data:`HORIZON_MARGIN`) leaves the feed-forward node on the last point, then a jump."""
    horizon, period = float(v["horizon"]), float(v["publish_period"])
    if horizon < period + HORIZON_MARGIN - 1e-12:
        return (
            f"horizon {horizon:g} s is shorter than publish_period {period:g} s + {HORIZON_MARGIN:g} s: each message "
            "must reach past the next one (the feed-forward node would hold its last point, then jump)"
        )
    return None


def walk_specs() -> list[ParamSpec]:
    from servo_ff.dynamics.walk_pattern import WalkParams

    w = WalkParams()
    ro = dict(read_only=True)
    return [
        ParamSpec(
            "gait",
            "placo",
            "the walking engine: placo (Rhoban's LIPM walk, the parameters below) or nimbro_cpg (the NimbRo-OP's "
            "own open-loop CPG, its authors' values and 8 ms tick: dt and the placo rows unused, engine_process and "
            "balance_* refused; cmd_vel's linear.x (forward to 0.080, backward to 0.234 m/s), linear.y (to 0.116 "
            "m/s) and angular.z (to 0.386 rad/s), together within the gait's norm limit) or op3_cpg (that CPG carried "
            "to the OP3 by dynamic similarity, dynamics/op3_cpg.py: tops 0.0567, 0.165, 0.082 m/s and 0.546 rad/s on "
            "urdf/op3.urdf; as nimbro_cpg otherwise)",
            choices=("placo", *CPG_GAITS),
            **ro,
        ),
        ParamSpec("urdf_path", "urdf/op3.urdf", "the robot (placo needs its feet and trunk links below)", **ro),
        ParamSpec("joints", [""], "order of the trajectory's joints (empty: the URDF's); the robot's joints", **ro),
        ParamSpec("trunk_link", "body_link", "link playing placo's trunk", **ro),
        ParamSpec("left_foot_link", "l_sole", "link at the left sole", **ro),
        ParamSpec("right_foot_link", "r_sole", "link at the right sole", **ro),
        ParamSpec("dt", w.dt, "grid of the planned joint trajectory", "s", lo=0.002, hi=0.05, **ro),
        ParamSpec("single_support", w.single_support, "one foot in the air", "s", lo=0.1, hi=2.0, **ro),
        ParamSpec(
            "double_support_ratio", w.double_support_ratio, "double support / single support", lo=0.0, hi=2.0, **ro
        ),
        ParamSpec("com_height", w.com_height, "CoM height above the soles (LIPM)", "m", lo=0.05, hi=2.0, **ro),
        ParamSpec("foot_height", w.foot_height, "swing-foot clearance", "m", lo=0.0, hi=0.3, **ro),
        ParamSpec("trunk_pitch", w.trunk_pitch, "forward lean of the trunk", "rad", lo=-0.5, hi=0.8, **ro),
        ParamSpec("feet_spacing", w.feet_spacing, "lateral distance of the soles", "m", lo=0.02, hi=1.0, **ro),
        ParamSpec("foot_length", w.foot_length, "support polygon length", "m", lo=0.02, hi=1.0, **ro),
        ParamSpec("foot_width", w.foot_width, "support polygon width", "m", lo=0.01, hi=1.0, **ro),
        ParamSpec("max_dx_forward", w.max_dx_forward, "largest forward step", "m", lo=0.0, hi=0.5, **ro),
        ParamSpec(
            "posture_joints", [""], "joints outside the legs held at posture_positions (empty: the OP3's arms)", **ro
        ),
        ParamSpec("posture_positions", [0.0], "one per posture_joints entry", "rad", lo=-3.2, hi=3.2, **ro),
        field_param(
            "max_velocity",
            FEEDFORWARD_FIELDS["max_velocity"],
            MAX_VELOCITY,
            description="published |q̇| held here where the URDF has no velocity limit (else at it): the feed-forward "
            "node's max_velocity",
            read_only=True,
        ),
        field_param(
            "max_acceleration",
            FEEDFORWARD_FIELDS["max_acceleration"],
            MAX_ACCELERATION,
            description="published |q̈| held here: the feed-forward node's max_acceleration",
            read_only=True,
        ),
        ParamSpec(
            "ik_range_joints",
            [""],
            "joints whose IK range is narrowed to ik_range_lower…ik_range_upper within the URDF's (a knee's "
            "bent-forward side; empty: the URDF's ranges)",
            **ro,
        ),
        ParamSpec("ik_range_lower", [0.0], "one per ik_range_joints entry", "rad", lo=-6.3, hi=6.3, **ro),
        ParamSpec("ik_range_upper", [0.0], "one per ik_range_joints entry", "rad", lo=-6.3, hi=6.3, **ro),
        ParamSpec(
            "cmd_timeout",
            1.0,
            "a cmd_vel older than this counts as zero (or halts: on_cmd_timeout)",
            "s",
            lo=0.01,
            hi=3600.0,
        ),
        ParamSpec(
            "on_cmd_timeout",
            "step_in_place",
            "a stale cmd_vel (older than cmd_timeout; none yet: from the approach): step_in_place (a zero command) "
            "or halt (as a cmd_vel with angular.x = -1: the walk stops after the step in progress)",
            choices=ON_CMD_TIMEOUT,
        ),
        ParamSpec(
            "engine_process",
            False,
            "placo in a child process, engine_lead ahead of the trajectory messages (off this node's executor: "
            "placo holds the GIL); a cmd_vel (and its cmd_timeout) then takes effect up to publish_period + "
            "engine_lead later",
            **ro,
        ),
        ParamSpec("engine_lead", 0.5, "engine_process: samples computed this far ahead", "s", lo=0.0, hi=5.0, **ro),
        ParamSpec("start_delay", 1.0, "wait after the first joint_states", "s", lo=0.0, hi=3600.0, **ro),
        ParamSpec("approach_time", 2.0, "measured pose → walking stance", "s", lo=0.05, hi=60.0, **ro),
        ParamSpec(
            "horizon",
            0.5,
            f"seconds of trajectory in each message: at least publish_period + {HORIZON_MARGIN:g} s (it must reach "
            "past the next message)",
            "s",
            lo=0.05,
            hi=10.0,
        ),
        ParamSpec("publish_period", 0.1, "period of the trajectory messages", "s", lo=0.005, hi=10.0, **ro),
        ParamSpec(
            "rate_hz", 125.0, "rate of the support coefficient (support_clock timer)", "Hz", lo=1.0, hi=2000.0, **ro
        ),
        ParamSpec(
            "support_clock",
            "joint_states",
            "when the support coefficient is published: on each /joint_states (for its stamp + support_lead; "
            "sent when it changes, and every publish_period), or on a timer at rate_hz",
            choices=("joint_states", "timer"),
            **ro,
        ),
        ParamSpec(
            "support_lead", 0.008, "joint_states clock: published for this long after the stamp", "s", lo=0.0, hi=1.0
        ),
        ParamSpec("cmd_vel_topic", "cmd_vel", "velocity command (geometry_msgs/Twist)", **ro),
        ParamSpec("trajectory_topic", "feedforward/trajectory", "where the desired trajectory goes", **ro),
        ParamSpec("support_topic", "support_coefficient", "where the support coefficient goes", **ro),
        *balance_specs(),
    ]


#: The parameters only placo's engine reads (:func:`walk_engine`): with another gait they are declared but do not act.
PLACO_ONLY = (
    "dt", "single_support", "double_support_ratio", "com_height", "foot_height", "trunk_pitch", "feet_spacing",
    "foot_length", "foot_width", "max_dx_forward", "trunk_link", "left_foot_link", "right_foot_link", "posture_joints",
    "posture_positions", "ik_range_joints", "ik_range_lower", "ik_range_upper",
)  # fmt: skip


def walk_engine(v: dict[str, Any], urdf: str) -> tuple[Any, Any, Any]:
    """(engine, WalkParams, WalkFrames) of the parameter values ``v`` on ``urdf`` (resolved): placo's
    :class:`.WalkEngine`, or the CPG's :class:`.CpgEngine` (params, frames None: no engine process, no balance)."""
    gait = v["gait"]
    if gait in CPG_GAITS:
        from servo_ff.dynamics.nimbro_cpg_engine import CpgEngine, op3_cpg_engine

        if v["engine_process"]:
            raise ValueError(f"engine_process: true with gait {gait}: the CPG runs in the node (set it false)")
        if any(float(v[f"balance_{k}"]) for k in BALANCE_KEYS[:-1]):
            raise ValueError(f"balance_* gains with gait {gait}: no balance feedback on the CPG (set them 0)")
        return (CpgEngine(urdf) if gait == "nimbro_cpg" else op3_cpg_engine(urdf)), None, None
    from servo_ff.dynamics.walk_pattern import WalkEngine, WalkFrames, WalkParams

    params = WalkParams(
        dt=v["dt"],
        single_support=v["single_support"],
        double_support_ratio=v["double_support_ratio"],
        com_height=v["com_height"],
        foot_height=v["foot_height"],
        trunk_pitch=v["trunk_pitch"],
        feet_spacing=v["feet_spacing"],
        foot_length=v["foot_length"],
        foot_width=v["foot_width"],
        max_dx_forward=v["max_dx_forward"],
        **_posture(v["posture_joints"], v["posture_positions"]),
        **ik_ranges(v["ik_range_joints"], v["ik_range_lower"], v["ik_range_upper"]),
    )
    frames = WalkFrames(v["trunk_link"], v["left_foot_link"], v["right_foot_link"])
    return WalkEngine(urdf, params, frames), params, frames


def _posture(joints: list[str], positions: list[float]) -> dict[str, dict[str, float]]:
    """WalkParams' ``posture`` from the two parameters (no joint named: WalkParams' own); [rad]."""
    names = [j for j in joints if j]
    if not names:
        return {}
    if len(names) != len(positions):
        raise ValueError(
            f"posture_positions has {len(positions)} value(s) for {len(names)} posture_joints: give one per joint"
        )
    return {"posture": dict(zip(names, map(float, positions), strict=True))}


def ik_ranges(joints: list[str], lower: list[float], upper: list[float]) -> dict[str, dict[str, tuple[float, float]]]:
    """WalkParams' ``ik_ranges`` from the three parameters (no joint named: WalkParams' own); [rad]."""
    names = [j for j in joints if j]
    if not names:
        return {}
    if not len(names) == len(lower) == len(upper):
        raise ValueError(
            f"ik_range_lower/ik_range_upper have {len(lower)}/{len(upper)} value(s) for {len(names)} ik_range_joints: "
            "give one per joint"
        )
    twice = sorted({j for j in names if names.count(j) > 1})
    if twice:
        raise ValueError(f"ik_range_joints names {', '.join(twice)} more than once: give each joint one range")
    return {"ik_ranges": {j: (float(lo), float(hi)) for j, lo, hi in zip(names, lower, upper, strict=True)}}


def balance_specs() -> list[ParamSpec]:
    from servo_ff.dynamics.walk_balance import BalanceGains

    b = BalanceGains()
    ro = dict(read_only=True)
    return [
        ParamSpec("balance_ankle_pitch", b.ankle_pitch, "trunk pitch error → feet pitch", "rad/rad", lo=-5, hi=5, **ro),
        ParamSpec(
            "balance_ankle_pitch_rate", b.ankle_pitch_rate, "trunk pitch rate → feet pitch", "s", lo=-1, hi=1, **ro
        ),
        ParamSpec("balance_ankle_roll", b.ankle_roll, "trunk roll → feet roll", "rad/rad", lo=-5, hi=5, **ro),
        ParamSpec("balance_ankle_roll_rate", b.ankle_roll_rate, "trunk roll rate → feet roll", "s", lo=-1, hi=1, **ro),
        ParamSpec("balance_hip_pitch", b.hip_pitch, "hips' share of the pitch correction", lo=-2, hi=2, **ro),
        ParamSpec("balance_hip_roll", b.hip_roll, "hips' share of the roll correction", lo=-2, hi=2, **ro),
        ParamSpec("balance_limit", b.limit, "largest balance offset on one joint", "rad", lo=0.0, hi=1.0, **ro),
        ParamSpec("imu_topic", "imu/data", "trunk IMU (sensor_msgs/Imu) for the balance feedback", **ro),
        ParamSpec("imu_timeout", 0.1, "an IMU reading older than this gives no balance offset", "s", lo=0.001, hi=10.0),
    ]


BALANCE_KEYS = ("ankle_pitch", "ankle_pitch_rate", "ankle_roll", "ankle_roll_rate", "hip_pitch", "hip_roll", "limit")
