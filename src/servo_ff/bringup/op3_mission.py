"""Schwarz & Behnke's walking experiments on the ROBOTIS OP3 over DDS, under the placo walk (issue 21 item 5) or the
authors' CPG scaled to the OP3 (``robot_graph.op3_graph("cpg")``).

``servo_walk_node`` (placo, cmd_vel) → ``servo_feedforward_node`` (floating base, α̂ of the XM430 M1 preset under
its current-based law, ``config/alpha_op3.yaml``) → MuJoCo ``servo_sim_node`` (urdf/op3.urdf,
config/servos_op3.yaml: 20 × XM430-W350, quantisation 4096, one period of bus latency, 125 Hz, 1 ms physics,
lockstep on its ``/clock``) → ``/joint_states``, ``imu/data`` back. The
controllers: (a) high-gain P = the feed-forward node passing the desired positions (``enabled: false``) at the
XM430's factory Position P Gain 800, (b) the same at 0.35 of it (Schwarz & Behnke's ratio,
``mujoco_humanoid.GAIN_RATIO``), (c) (b) with feed-forward. The gait, cmd_vel and obstacle are the same for all.

Measured by a probe: the trunk x travel and sagittal pitch (the sim's ``imu/data`` bytes, read in-process after
each period: ``SimNode.period_taps``), falls (tilt > 0.6 rad), the
sim's per-joint energy meter E = ∫U·I dt over the ``n_steps`` steps after the walk starts. ``obstacle`` [m]: a box
that high under the right foot, placed at the middle of its ``obstacle_step``-th swing (the foot lands on it);
``obstacle_shape`` "board": a board that high across the path instead, placed at the walk start (the sim node's
``obstacle_shape``). ``firmware``: a firmware row for every servo instead of the servo file's (the sim node's servo
YAML with ``firmware:`` set, the feed-forward node's α̂ of that law: :mod:`.op3_firmware`). ``withdraw`` (a CPG
graph, ``gait`` nimbro_cpg or op3_cpg; refused on placo's before any node starts): the walk node's halt (cmd_vel
``angular.x = -1``) after the ``n_steps`` steps as the ROS-free plan withdraws the command, so that it halts as that
plan does, the run ending with that plan (:func:`.robot_graph.cpg_stop`); ``cmd``: the cmd_vel (linear.x, linear.y
[m/s], angular.z [rad/s]) published instead of (``vx``, 0, 0), its linear.x the run's ``vx``; ``halt``: (t_halt,
t_end) [s from the walk start]: the halt (``angular.x = -1``) published at t_halt, the run ended at t_end instead of
the ``n_steps`` steps' end (any gait; not with ``withdraw``); ``tap``:
called after each period with (s from the walk start, the trunk quaternion (x, y, z, w) of ``imu/data``, sim node,
walk node), for a bench's own measurements.
"""

from __future__ import annotations

import math
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from servo_ff.nodes.walk_params import CPG_GAITS
from servo_ff.ros.cdr_template import cdr_imu
from servo_ff.ros.harness import RosHarness, wait_for

from .mission import CONTROLLERS, FALL_TILT
from .op3_firmware import op3_firmware_params
from .robot_graph import RobotGraph, cpg_stop, op3_graph, step_times

KP_HIGH = 800.0  # XM430-W350 Position P Gain(84) factory default (ROBOTIS e-manual)
#: [s, wall] the sim steps without a goal after this: long, so that a loaded machine (a feed-forward tick late by
#: more than 50 ms happened ≈ 2 % of periods on 2 shared cores) does not hold stale goals and change the outcome.
LOCKSTEP_TIMEOUT = 1.0


@dataclass
class Op3Result:
    controller: str
    kp: float
    joints: list[str]
    energy: np.ndarray  # (J,) [J] over the n_steps steps (up to the fall)
    fell: bool
    fell_at: float  # [s from the walk start]
    travel: float  # [m] trunk x over the run
    step_period: float  # [s]
    sim_s: float
    wall_s: float
    obstacle: float = 0.0  # [m]
    t_obstacle: float = math.nan  # [s from the walk start] when the box was placed
    pitch: list[tuple[float, float]] = field(default_factory=list)  # (s from the walk start, trunk pitch [rad])
    t_obstacle_planned: float = math.nan  # [s from the walk start] mid-swing of the obstacle step
    tracked: tuple[str, ...] = ()  # joints recorded in ``tracking`` (run_op3's ``track``)
    tracking: list[tuple[float, np.ndarray, np.ndarray]] = field(default_factory=list)  # (s, desired, measured)
    #: (steps + 1, J) [J] energy from the walk start to the end of each step completed before a fall (``op3_energy``)
    step_energy: np.ndarray = field(default_factory=lambda: np.zeros((1, 0)))
    firmware: str | None = None  # the firmware row every servo ran (None: config/servos_op3.yaml's own)
    knees: tuple[str, str] = ("l_knee", "r_knee")  # the robot's (RobotGraph.knees)
    #: goals the feed-forward node clamped to the URDF limits, per joint (only those clamped; its clamp_report)
    clamps: dict[str, int] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return CONTROLLERS[self.controller]

    def knee_energy(self) -> float:
        return float(sum(self.energy[self.joints.index(j)] for j in self.knees))


def _pitch(x: float, y: float, z: float, w: float) -> float:
    """Sagittal trunk pitch [rad] of a quaternion (x, y, z, w), positive forward (REP-103: about +y)."""
    return math.asin(max(-1.0, min(1.0, 2.0 * (w * y - z * x))))


def run_op3(
    controller: str,
    n_steps: int = 40,
    vx: float = 0.1,
    obstacle: float = 0.0,
    obstacle_step: int = 5,
    kp_high: float = KP_HIGH,
    ratio: float | None = None,
    timeout: float = 1800.0,
    salt: int = 93,
    log=print,
    track: tuple[str, ...] = (),
    events: bool = True,
    obstacle_shape: str = "foot_box",
    firmware: str | None = None,
    robot: RobotGraph | None = None,
    withdraw: bool = False,
    tap: Callable[[float, tuple[float, float, float, float], Any, Any], None] | None = None,
    cmd: tuple[float, float, float] | None = None,
    halt: tuple[float, float] | None = None,
) -> Op3Result:
    """One run of ``controller`` ("high", "low", "ff") with fresh nodes in a harness of its own; ``track``: joints
    whose walk-node desired and ``/joint_states`` positions are recorded from the walk start (``tracking``);
    ``events``: rclpy's EventsExecutor (else the SingleThreadedExecutor); ``firmware``: a row of
    :data:`~servo_ff.models.firmware.FIRMWARE_TABLE` for every servo (an unknown one raises ParameterError naming
    the valid rows before any node starts; OP3 only); ``robot``: another robot's graph
    (:func:`.robot_graph.bringup_graph`; default the OP3's); ``withdraw``, ``tap``, ``cmd``, ``halt``: as the module
    says (a bad ``cmd`` or ``halt`` raises ValueError before any node starts)."""
    cmd = (float(vx), 0.0, 0.0) if cmd is None else tuple(float(v) for v in cmd)
    if len(cmd) != 3 or not all(map(math.isfinite, cmd)):
        raise ValueError(f"cmd must be 3 finite numbers (linear.x, linear.y, angular.z), got {cmd}")
    if halt is not None and (len(halt) != 2 or not 0.0 <= halt[0] <= halt[1] < math.inf):
        raise ValueError(f"halt must be (t_halt, t_end) [s from the walk start], 0 ≤ t_halt ≤ t_end finite, got {halt}")
    if halt is not None and withdraw:
        raise ValueError("halt and withdraw: each sets the halt time, give one")
    vx = cmd[0]
    if firmware is not None and robot is not None and robot.name != "op3":
        raise ValueError(f"firmware {firmware!r}: the OP3's servo file only, not {robot.name}'s")
    if n_steps < 1:  # before any node starts (the step windows need a step)
        raise ValueError(f"n_steps must be ≥ 1, got {n_steps}")
    robot = robot or op3_graph()
    if withdraw and robot.walk.get("gait", "placo") not in CPG_GAITS:  # before any node starts
        raise ValueError(f"withdraw: the walk node's CPG only (gait {' or '.join(CPG_GAITS)}), not {robot.name}'s "
                         f"gait {robot.walk.get('gait', 'placo')}")  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="op3_firmware_") as tmp:
        files = op3_firmware_params(firmware, Path(tmp))
        ros = RosHarness(salt=salt, prefix="op3_", events=events)
        try:
            res = _run(
                ros, controller, n_steps, vx, obstacle, obstacle_step, kp_high, ratio, timeout, log, track,
                obstacle_shape, files, robot, withdraw, tap, cmd, halt,
            )  # fmt: skip
        finally:
            ros.shutdown()
    res.firmware = firmware
    return res


def op3_nodes(
    ros: RosHarness,
    controller: str,
    kp: float,
    sim_params: dict | None = None,
    ff_params: dict | None = None,
    walk_params: dict | None = None,
    robot: RobotGraph | None = None,
):
    """The mission's graph in ``ros``: MuJoCo sim node (lockstep), feed-forward node (on for "ff"), walk node, of
    ``robot`` (:mod:`.robot_graph`; default the OP3's) under the mission's settings (lockstep, ``kp``, stamped goals,
    sim time); ``*_params`` override or add to each node's parameters (tests use lighter ones)."""
    from rclpy.parameter import Parameter

    from servo_ff.nodes.feedforward_node import FeedForwardNode
    from servo_ff.nodes.sim_node import MujocoSimNode
    from servo_ff.nodes.walk_node import WalkNode

    robot = robot or op3_graph()

    def params(base: dict, extra: dict | None = None, **kv):
        return [Parameter(k, value=v) for k, v in {**base, **kv, **(extra or {})}.items()]

    kw = ros.node_kwargs()
    sim = ros.add(
        MujocoSimNode(
            "servo_sim",
            **kw,
            parameter_overrides=params(
                robot.sim,
                sim_params,
                publish_clock=True,
                real_time_factor=0.0,
                lockstep=True,
                lockstep_timeout=LOCKSTEP_TIMEOUT,
                kp=[kp],
            ),
        )
    )
    ff = ros.add(
        FeedForwardNode(
            "servo_feedforward",
            **kw,
            parameter_overrides=params(
                {"u_nominal": float(sim.hw_supply_voltage()), **robot.ff},
                ff_params,
                use_sim_time=True,
                joints=list(sim.joints),
                kp=[kp],
                enabled=controller == "ff",
                stamped_goals=True,  # each goal names its state: a late one does not shift the lockstep loop
            ),
        )
    )
    walk = ros.add(
        WalkNode(
            "servo_walk",
            **kw,
            parameter_overrides=params(robot.walk, walk_params, use_sim_time=True, cmd_timeout=3600.0),
        )
    )
    return sim, ff, walk


def start_lockstep(ros: RosHarness, client, sim, imu_readers: int = 2, timeout: float = 60.0) -> None:
    """Activate the lockstep ``sim`` (built with ``autostart: false``) once its ``/joint_states`` reach the
    feed-forward and walk nodes, its ``imu/data`` ``imu_readers`` nodes (the feed-forward node, the probe) and the
    feed-forward node's goals reach it, then send it the goal it holds
    from ``client``: its first period is stepped at once on that goal (as its ``lockstep_timeout`` would step it a
    second later, the held goal unchanged), and its first state reaches every node whatever the discovery's
    timing."""
    from lifecycle_msgs.msg import Transition
    from lifecycle_msgs.srv import ChangeState
    from std_msgs.msg import Float64MultiArray

    topic = sim.resolve_topic_name(sim.names["commands"])
    named = sim.resolve_topic_name(sim.names["joint_command"])
    goals = next(s for s in sim.subscriptions if s.topic_name == topic)
    stamped = next(s for s in sim.subscriptions if s.topic_name == named)  # the feed-forward node's goals
    kick = client.create_publisher(Float64MultiArray, topic, 10)
    wait_for(
        lambda: (
            sim.pub_js.get_subscription_count() >= 2
            and sim.backend.outputs.pub_imu.get_subscription_count() >= imu_readers
            and goals.get_publisher_count() >= 2
            and stamped.get_publisher_count() >= 1
        ),
        timeout,
        "the OP3 graph's topics to match",
    )
    change = client.create_client(ChangeState, f"{sim.get_name()}/change_state")
    for tid in (Transition.TRANSITION_CONFIGURE, Transition.TRANSITION_ACTIVATE):
        if not ros.call(change, ChangeState.Request(transition=Transition(id=tid)), timeout=timeout).success:
            raise RuntimeError(f"{sim.get_name()}: lifecycle transition {tid} failed")
    wait_for(lambda: sim.active, timeout, f"{sim.get_name()} active")
    kick.publish(Float64MultiArray(data=[float(g) for g in sim.gate.goal]))


def _run(
    ros, controller, n_steps, vx, obstacle, obstacle_step, kp_high, ratio, timeout, log, track, shape, files, robot,
    withdraw, tap, cmd, halt,
) -> Op3Result:  # fmt: skip
    from geometry_msgs.msg import Twist
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import JointState

    from servo_ff.dynamics.mujoco_humanoid import GAIN_RATIO

    ratio = GAIN_RATIO if ratio is None else ratio
    kp = kp_high if controller == "high" else ratio * kp_high
    sim_files, ff_files = files
    sim_params = {"autostart": False, "obstacle_shape": shape, **sim_files}
    sim, ff, walk = op3_nodes(ros, controller, kp, sim_params=sim_params, ff_params=ff_files, robot=robot)
    p = walk.engine.params
    ends, t_obst = step_times(walk.engine, vx, n_steps, obstacle_step)  # [s from the walk start]
    t_end = float(ends[-1])  # t_obst: mid-swing of the obstacle step
    t_obst = 0.0 if shape == "board" else t_obst  # the board: at the walk start, both feet on the ground
    t_zero = math.inf  # [s from the walk start] the halt (withdraw)
    if withdraw:  # the engine ticks this far ahead of the sim's clock (walk node: horizon + 4 ticks, each message)
        lead = walk.table["horizon"] + 4 * p.dt + 0.5 * walk.table["publish_period"]
        t_zero, t_end = cpg_stop(walk.engine, vx, n_steps, lead)
    t_zero, t_end = (t_zero, t_end) if halt is None else halt
    probe = ros.make_node(f"op3_probe_{controller}")
    pub = probe.create_publisher(Twist, "cmd_vel", 10)
    st: dict = {"fell": math.nan, "e0": None, "e1": None, "x0": None, "x1": None, "placed": math.nan, "steps": []}
    st["zero"] = t_zero
    pitch: list[tuple[float, float]] = []

    def rel(stamp) -> float:
        return stamp.sec + stamp.nanosec * 1e-9 - walk.t_walk if walk.t_walk is not None else -math.inf

    outputs, sent = sim.backend.outputs, [0]

    def on_period() -> None:  # after each period of the sim, in-process: this period's imu/data, no DDS callback
        if outputs.imu_published == sent[0]:
            return  # no imu/data this period (a non-finite reading)
        sent[0] = outputs.imu_published
        stamp, (x, y, z, w), _ = cdr_imu(outputs.imu_bytes())
        t = stamp - walk.t_walk if walk.t_walk is not None else -math.inf
        if t < 0.0:
            return
        if st["e0"] is None:
            st["e0"], st["x0"] = sim.servos.energy[sim.perm].copy(), float(sim.servos.data.qpos[0])
        pitch.append((t, _pitch(x, y, z, w)))
        up = 1.0 - 2.0 * (x * x + y * y)
        if up < math.cos(FALL_TILT) and math.isnan(st["fell"]):
            st["fell"] = t
        n = len(st["steps"])  # step n + 1 ends at ends[n]; kept only if walked before a fall
        if math.isnan(st["fell"]) and n < n_steps and t >= ends[n]:
            st["steps"].append(sim.servos.energy[sim.perm] - st["e0"])
        if (t >= t_end or not math.isnan(st["fell"])) and st["e1"] is None:
            st["e1"], st["x1"] = sim.servos.energy[sim.perm].copy(), float(sim.servos.data.qpos[0])
        if obstacle > 0 and t >= t_obst and math.isnan(st["placed"]):
            sim.set_parameters([Parameter("obstacle_height", value=float(obstacle))])
            st["placed"] = t
        if t >= st["zero"]:
            stop = Twist()
            stop.angular.x = -1.0  # the command withdrawn: the walk node's halt (withdraw, halt)
            pub.publish(stop)
            st["zero"] = math.inf
        if tap is not None:
            tap(t, (x, y, z, w), sim, walk)

    sim.period_taps.append(on_period)  # the bytes the sim published, read as a DDS reader would, one callback less
    tracking: list[tuple[float, np.ndarray, np.ndarray]] = []
    cols = [walk.joints.index(j) for j in track]

    def on_js(m: JointState) -> None:
        t = rel(m.header.stamp)
        if t < 0.0 or st["e1"] is not None:
            return
        desired = walk.desired(m.header.stamp.sec + m.header.stamp.nanosec * 1e-9)
        names = list(m.name)
        measured = np.array([m.position[names.index(j)] for j in track])
        tracking.append((t, desired[cols], measured))

    if track:
        probe.create_subscription(JointState, "joint_states", on_js, 1000)
    forward = Twist()
    forward.linear.x, forward.linear.y, forward.angular.z = cmd
    wall = time.monotonic()
    try:
        wait_for(lambda: pub.publish(forward) or walk.engine.cmd == cmd, 120.0, "cmd_vel at the walk node")
        start_lockstep(ros, probe, sim, imu_readers=1)
        wait_for(lambda: st["e1"] is not None, timeout, f"the {CONTROLLERS[controller]} run")
    finally:
        wall = time.monotonic() - wall
    res = Op3Result(
        controller,
        kp,
        list(sim.joints),
        st["e1"] - st["e0"],
        not math.isnan(st["fell"]),
        st["fell"],
        st["x1"] - st["x0"],
        p.step_period,
        sim.sim_time_ns * 1e-9,
        wall,
        obstacle,
        st["placed"],
        pitch,
        t_obst if obstacle > 0 else math.nan,
        tuple(track),
        tracking,
        np.array([np.zeros_like(st["e0"]), *st["steps"]]),
        knees=robot.knees,
        clamps=ff.ctrl.clamp_report(),
    )
    log(
        f"   {res.label}: k_P {kp:.0f}, {'FELL at %.1f s' % res.fell_at if res.fell else 'stood'}, travel "
        f"{res.travel:.3f} m, E {res.energy.sum():.0f} J (knees {res.knee_energy():.0f} J), "
        f"{res.sim_s:.0f} s simulated in {wall:.0f} s"
    )
    return res


__all__ = ["KP_HIGH", "Op3Result", "run_op3", "start_lockstep"]
