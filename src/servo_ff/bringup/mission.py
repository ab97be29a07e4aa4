"""The humanoid mission over DDS (issue 14): Schwarz & Behnke §5.2's three controllers closed over ROS 2.

walker (``servo_walker_node``: stepping gait → desired JointTrajectory + support coefficient) → feed-forward
(``servo_feedforward_node``, floating base) → MuJoCo sim (``servo_sim_node`` backend mujoco: 20 servos from
``config/servos_humanoid.yaml``, encoder quantisation 4096, one control period of bus latency, 125 Hz control,
1 ms physics, lockstep on its own ``/clock``) → ``/joint_states``, ``imu/data``, contacts back to the
feed-forward node. (a) high-gain P and (b) low-gain P are the feed-forward node with ``enabled: false`` (goal =
desired position) at k_P = 53.125 and 0.35 of it; (c) is (b) with feed-forward on.

Measured over DDS by a probe node: tracking error (``/joint_states`` against the walker's desired positions at
the same stamps, from the gait's start to its end), falls (IMU tilt > 0.6 rad, as the offline experiment),
energy (the sim's per-joint E = ∫U·I dt meter, read at the gait's start and end), the feed-forward node's tick
time (its controller's ``tick``, timed in the process). ``obstacle`` [m] puts a box that high under the right
foot (the first swing foot) at the top of its first lift, where it lands (Schwarz & Behnke Fig. 6); ``stride``
[m] > 0 walks forward (:func:`servo_ff.dynamics.gait.stepping_in_place`), as in their obstacle experiment.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from servo_ff.io.paths import share_file
from servo_ff.ros.harness import RosHarness, wait_for

CONTROLLERS = {"high": "(a) high-gain P", "low": "(b) low-gain P", "ff": "(c) low-gain P + FF"}
FALL_TILT = 0.6  # rad, as dynamics.mujoco_humanoid


@dataclass
class MissionResult:
    controller: str
    kp: float
    joints: list[str]
    t: np.ndarray  # (T,) [s from the gait start]
    q_des: np.ndarray  # (T, J)
    q: np.ndarray  # (T, J)
    energy: np.ndarray  # (J,) [J] over the gait
    fell: bool
    fell_at: float = math.nan
    tick_us: list[float] = field(default_factory=list)
    wall_s: float = 0.0
    sim_s: float = 0.0
    travel: float = 0.0  # [m] forward (x) displacement of the trunk over the run

    @property
    def label(self) -> str:
        return CONTROLLERS[self.controller]

    def rms(self, joints=None) -> float:
        e = self.q - self.q_des if joints is None else (self.q - self.q_des)[:, joints]
        return float(np.sqrt(np.mean(e**2))) if e.size else math.nan

    def knee(self) -> int:
        return self.joints.index("l_knee")

    def tick_median_us(self) -> float:
        return float(np.median(self.tick_us)) if self.tick_us else math.nan


def servo_alpha(urdf, servo_yaml, joints):
    """α̂ per joint from each joint's own servo in the servo YAML (MX-106 legs, MX-64 arms)."""
    from servo_ff.dynamics.alpha import alpha_table_from_actuator
    from servo_ff.dynamics.servo_map import load_servo_map

    smap = load_servo_map(servo_yaml, joints)
    return {j: alpha_table_from_actuator(smap.joints[j].params, [j]) for j in joints}


def run_mission(
    controller: str,
    n_steps: int = 40,
    obstacle: float = 0.0,
    stride: float = 0.0,
    kp_high: float | None = None,
    ratio: float | None = None,
    log=print,
    timeout: float = 1800.0,
    salt: int = 92,
) -> MissionResult:
    """One run of ``controller`` ("high", "low", "ff") with fresh nodes in a harness of its own (stopped, its
    executor thread first, before the nodes are destroyed)."""
    ros = RosHarness(salt=salt, prefix="mission_")
    try:
        return _run(ros, controller, n_steps, obstacle, stride, kp_high, ratio, log, timeout)
    finally:
        ros.shutdown()


def _run(ros, controller, n_steps, obstacle, stride, kp_high, ratio, log, timeout) -> MissionResult:
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import Imu, JointState

    from servo_ff.dynamics.mujoco_humanoid import GAIN_RATIO, KP_HIGH
    from servo_ff.nodes.feedforward_node import FeedForwardNode
    from servo_ff.nodes.sim_node import MujocoSimNode
    from servo_ff.nodes.state_publisher_node import StatePublisherNode
    from servo_ff.nodes.walker_node import WalkerNode

    kp_high = KP_HIGH if kp_high is None else kp_high
    ratio = GAIN_RATIO if ratio is None else ratio
    kp = kp_high if controller == "high" else ratio * kp_high
    urdf = str(share_file("urdf", "humanoid20.urdf"))
    servo_yaml = str(share_file("config", "servos_humanoid.yaml"))
    kw = ros.node_kwargs()
    # the URDF goes to one node, published on robot_description (transient local): the sim and feed-forward
    # nodes read it there, as in the sim_humanoid bring-up (it also gives /tf and /tf_static)
    ros.add(StatePublisherNode("servo_state_publisher", **kw, parameter_overrides=[Parameter("urdf_path", value=urdf)]))
    sim = ros.add(
        MujocoSimNode(
            "servo_sim",
            **kw,
            parameter_overrides=[
                Parameter("servo_config", value=servo_yaml),
                Parameter("floating_base", value=True),
                Parameter("rate_hz", value=125.0),
                Parameter("physics_dt", value=0.001),
                Parameter("counts_per_rev", value=4096),
                Parameter("latency", value=1),
                Parameter("publish_clock", value=True),
                Parameter("real_time_factor", value=0.0),
                Parameter("lockstep", value=True),
                Parameter("lockstep_timeout", value=0.05),
                Parameter("kp", value=[kp]),
                Parameter("position_min", value=[-2.8]),
                Parameter("position_max", value=[2.8]),
                Parameter("support_topic", value="contact_support_coefficient"),
            ],
        )
    )
    joints = list(sim.joints)
    alpha = servo_alpha(urdf, servo_yaml, joints)
    ff = ros.add(
        FeedForwardNode(
            "servo_feedforward",
            **kw,
            parameter_overrides=[
                Parameter("use_sim_time", value=True),
                Parameter("mode", value="floating"),
                Parameter("joints", value=joints),
                Parameter("kp", value=[kp]),
                Parameter("enabled", value=controller == "ff"),
                Parameter("stamped_goals", value=True),  # a late goal does not shift the lockstep loop
                Parameter("servo", value="mx106"),
                Parameter("u_nominal", value=float(sim.hw_supply_voltage())),
            ]
            + [Parameter(f"alpha.{j}", value=alpha[j].alpha[0].tolist()) for j in joints],
        )
    )
    ticks: list[float] = []
    tick = ff.ctrl.tick

    def timed_tick(*a, **k):
        t0 = time.perf_counter()
        try:
            return tick(*a, **k)
        finally:
            ticks.append((time.perf_counter() - t0) * 1e6)

    ff.ctrl.tick = timed_tick
    walker = ros.add(
        WalkerNode(
            "servo_walker",
            **kw,
            parameter_overrides=[
                Parameter("use_sim_time", value=True),
                Parameter("n_steps", value=n_steps),
                Parameter("stride", value=float(stride)),
                Parameter("start_delay", value=0.5),
                Parameter("approach_time", value=2.0),
            ],
        )
    )
    probe = ros.make_node(f"mission_probe_{controller}")
    rows: list[tuple[float, np.ndarray]] = []
    state = {"fell": math.nan, "e0": None, "e1": None}

    def on_js(m: JointState) -> None:
        p = walker.pattern
        if p is None:
            return
        t = m.header.stamp.sec + m.header.stamp.nanosec * 1e-9 - walker.t_start
        t_gait = float(walker.table["approach_time"])
        if t >= t_gait and state["e0"] is None:
            state["e0"] = sim.servos.energy[sim.perm]
            state["x0"] = float(sim.servos.data.qpos[0])  # floating base: trunk x first
        if t_gait <= t <= p.end:
            rows.append((t, np.array(m.position), p.sample(t)))
        if t > p.end and state["e1"] is None:
            state["e1"] = sim.servos.energy[sim.perm]
            state["x1"] = float(sim.servos.data.qpos[0])

    def on_imu(m: Imu) -> None:
        o = m.orientation
        up = 1.0 - 2.0 * (o.x * o.x + o.y * o.y)  # z-z entry of the rotation matrix
        if up < math.cos(FALL_TILT) and math.isnan(state["fell"]) and walker.t_start is not None:
            state["fell"] = m.header.stamp.sec + m.header.stamp.nanosec * 1e-9 - walker.t_start

    probe.create_subscription(JointState, "joint_states", on_js, 1000)
    probe.create_subscription(Imu, "imu/data", on_imu, 1000)
    if obstacle > 0:
        obstacle_timer(ros, sim, walker, obstacle)
    wall = time.monotonic()
    label = CONTROLLERS[controller]
    try:
        wait_for(lambda: state["e1"] is not None or not math.isnan(state["fell"]), timeout, f"the {label} run")
    finally:
        wall = time.monotonic() - wall
        sim_s = sim.sim_time_ns * 1e-9
        e1 = state["e1"] if state["e1"] is not None else sim.servos.energy[sim.perm]
        e0 = state["e0"] if state["e0"] is not None else np.zeros_like(e1)
    t = np.array([r[0] for r in rows])
    res = MissionResult(
        controller,
        kp,
        joints,
        t,
        np.array([r[2] for r in rows]).reshape(len(rows), -1),
        np.array([r[1] for r in rows]).reshape(len(rows), -1),
        e1 - e0,
        not math.isnan(state["fell"]),
        state["fell"],
        ticks,
        wall,
        sim_s,
        state.get("x1", float(sim.servos.data.qpos[0])) - state.get("x0", float(sim.servos.data.qpos[0])),
    )
    log(
        f"   {label}: k_P {kp:.2f}, {'FELL at %.1f s' % res.fell_at if res.fell else 'stood'}, RMS "
        f"{res.rms():.4f} rad, E {res.energy.sum():.0f} J, {sim_s:.0f} s simulated in {wall:.0f} s"
    )
    return res


def obstacle_timer(ros: RosHarness, sim, walker, height: float) -> None:
    """Sets the sim's ``obstacle_height`` at the top of the first swing (right foot), under where it lands."""
    from rclpy.parameter import Parameter

    from servo_ff.dynamics.gait import SteppingParams

    g = SteppingParams()
    node = ros.make_node("mission_obstacle")
    done = {"v": False}

    def check() -> None:
        if done["v"] or walker.t_start is None:
            return
        t = sim.sim_time_ns * 1e-9 - walker.t_start - float(walker.table["approach_time"])
        if t >= g.t_stand + g.t_first_shift + g.t_lift:  # highest, and (walking) over its landing spot
            sim.set_parameters([Parameter("obstacle_height", value=float(height))])
            done["v"] = True

    node.create_timer(0.002, check)


def format_table(results: list[MissionResult]) -> str:
    lines = [
        "| controller | k_P | stood | RMS [rad] | knee RMS [rad] | E all [J] | E knee [J] | E vs (a) | "
        "FF tick median [µs] | sim s / wall s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    a = next((r for r in results if r.controller == "high"), None)
    for r in results:
        k = r.knee()
        vs = f"{100 * (r.energy.sum() / a.energy.sum() - 1):+.1f}%" if a is not None and not a.fell else "–"
        tick = f"{r.tick_median_us():.0f}" if r.controller == "ff" else "–"
        lines.append(
            f"| {r.label} | {r.kp:.2f} | {'no, fell at %.1f s' % r.fell_at if r.fell else 'yes'} | "
            f"{r.rms():.4f} | {r.rms([k]):.4f} | {r.energy.sum():.0f} | {r.energy[k]:.0f} | {vs} | {tick} | "
            f"{r.sim_s:.0f} / {r.wall_s:.0f} |"
        )
    return "\n".join(lines)


def plot_mission(results: list[MissionResult], path, seconds: float = 20.0):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(10, 6), sharex=True)
    r0 = results[0]
    k = r0.knee()
    sel = r0.t <= seconds
    ax1.plot(r0.t[sel], r0.q_des[sel, k], "k--", lw=1.2, label="desired (walker)")
    for r in results:
        s = r.t <= seconds
        ax1.plot(r.t[s], r.q[s, k], lw=1.0, label=f"{r.label} (k_P {r.kp:.1f})")
        ax2.plot(r.t[s], (r.q - r.q_des)[s, k], lw=1.0, label=f"{r.label}: knee RMS {r.rms([k]):.4f} rad")
    ax1.set_ylabel("left knee [rad]")
    ax2.set_ylabel("error [rad]")
    ax2.set_xlabel("time from the gait start [s]")
    ax1.legend(loc="upper right", fontsize=8)
    ax2.legend(loc="upper right", fontsize=8)
    ax1.set_title("Humanoid mission over DDS: walker → feed-forward → MuJoCo sim node (quantisation, latency 1)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


__all__ = ["CONTROLLERS", "MissionResult", "format_table", "plot_mission", "run_mission"]
