"""The README demo in simulation, through the real nodes over DDS (one process, one executor thread):

1. bring up the simulated servos (``servo_sim_node``: one mx64/M4 servo with a 0.5 kg pendulum at 0.15 m);
2. run ILC on that joint (``servo_ilc_node``, Schwarz & Behnke (Compliant Robot Behavior) §4.1) at the low P gain;
3. fit α (``servo_fit_node``, §4.2) from the ILC result; the fit sets α on the feed-forward node;
4. turn on feed-forward (``servo_feedforward_node``, Eq. 19, inverse dynamics of ``urdf/pendulums2.urdf``);
5. track the same reference with high-gain P, low-gain P and low-gain P + feed-forward; print the table and
   plot the three runs;
6. (:func:`run_humanoid_act`, the last act) the humanoid mission: walker → feed-forward → MuJoCo sim node.

``run_demo(out_dir)`` returns a :class:`DemoResult`; ``python -m servo_ff.bringup.demo_pipeline --out DIR`` runs
it from the command line.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from servo_ff import trajectories
from servo_ff.io.paths import share_file
from servo_ff.ros.harness import RosHarness, wait_for


@dataclass
class TrackingRun:
    label: str
    kp: float
    feedforward: bool
    t: np.ndarray  # [s]
    desired: np.ndarray  # [rad]
    measured: np.ndarray  # [rad]

    @property
    def error(self) -> np.ndarray:
        return self.measured - self.desired

    @property
    def rms(self) -> float:
        return float(np.sqrt(np.mean(self.error**2)))

    @property
    def max_abs(self) -> float:
        return float(np.max(np.abs(self.error)))


@dataclass
class DemoResult:
    ilc_errors: np.ndarray  # windowed error per ILC iteration [rad]
    alpha: list[float]
    fit: dict
    runs: list[TrackingRun] = field(default_factory=list)
    plot: Path | None = None

    def table(self) -> str:
        lines = ["| control | P gain | RMS error [rad] | max error [rad] |", "|---|---|---|---|"]
        lines += [f"| {r.label} | {r.kp:g} | {r.rms:.4f} | {r.max_abs:.4f} |" for r in self.runs]
        return "\n".join(lines)


def sim_parameters(joint: str, rate_hz: float, offset: float, kp: float) -> list:
    """The demo's ``servo_sim_node``: one mx64/M4 servo ``joint`` with a 0.5 kg pendulum at 0.15 m, at ``offset``
    [rad], P gain ``kp``, ticking at ``rate_hz`` [Hz] of wall time."""
    from rclpy.parameter import Parameter

    values = {
        "joints": [joint],
        "rate_hz": rate_hz,
        "servo": "mx64",
        "model": "m4",
        "load.mass": [0.5],
        "load.length": [0.15],
        "position_min": [-2.5],
        "position_max": [2.5],
        "initial_position": [offset],
        "kp": [kp],
        "max_catch_up": 0.5,  # a starved process keeps simulated time = wall time
    }
    return [Parameter(k, value=v) for k, v in values.items()]


def ilc_parameters(joint: str, rate_hz: float, offset: float, kp: float, iterations: int, output: Path) -> list:
    """The demo's ``servo_ilc_node`` on ``joint`` (Schwarz & Behnke reference around ``offset`` [rad], P gain
    ``kp``). Each trial is one JointTrajectory the sim follows at its own ticks (``execution: trajectory``):
    streamed goals on wall time (``stream``) reached the sim late, bunched and partly dropped when the process was
    starved (load 4–9 on 2 cores: goals up to 1 s late, 505 of 1000 taken), and the ILC learned from trials that
    were not the command (errors 0.33, 0.65, 0.42, 0.44 rad instead of falling)."""
    from rclpy.parameter import Parameter

    values = {
        "joints": [joint],
        "joint": joint,
        "reference": "schwarz_behnke_reference",
        "reference_offset": offset,
        "rate_hz": rate_hz,
        "kp": kp,
        "gain": 0.6,
        "delay": 0.04,
        "filter_hz": 4.0,
        "max_iterations": iterations,
        "threshold": 0.005,
        "settle_time": 1.0,
        "output": str(output),
        "execution": "trajectory",
    }
    return [Parameter(k, value=v) for k, v in values.items()]


def run_demo(
    out_dir: str | Path = "demo_out",
    kp_high: float = 32.0,
    kp_low: float = 8.0,
    iterations: int = 3,
    offset: float = 0.5,
    rate_hz: float = 100.0,
    domain: int | None = None,
    plot: bool = True,
    log=print,
) -> DemoResult:
    """Steps 1–5 above; files (ILC result, α YAML, plot) go to ``out_dir``."""
    from builtin_interfaces.msg import Duration, Time
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from servo_ff.io.ilc_record import load_ilc_record
    from servo_ff.nodes.feedforward_node import FeedForwardNode
    from servo_ff.nodes.fit_node import FitNode
    from servo_ff.nodes.ilc_node import ILCNode
    from servo_ff.nodes.sim_node import SimNode

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    joint = "pendulum_1"
    ros = RosHarness(salt=40, domain=domain, prefix="servo_ff_demo_")
    try:
        log(f"1. simulated servo: mx64/m4, pendulum 0.5 kg at 0.15 m, {rate_hz:g} Hz (servo_sim_node)")
        sim = ros.add(
            SimNode(
                "servo_sim",
                context=ros.context,
                namespace=ros.ns,
                parameter_overrides=sim_parameters(joint, rate_hz, offset, kp_low),
            )
        )
        ff = ros.add(
            FeedForwardNode(
                "servo_feedforward",
                context=ros.context,
                namespace=ros.ns,
                parameter_overrides=[
                    Parameter("urdf_path", value=str(share_file("urdf", "pendulums2.urdf"))),
                    Parameter("joints", value=[joint]),
                    Parameter("kp", value=[kp_low]),
                    Parameter("enabled", value=False),
                    Parameter("servo", value="mx64"),
                    Parameter("model", value="m4"),
                    Parameter("alpha.pendulum_1", value=[1.0, 0.0, 0.0, 0.0]),
                ],
            )
        )
        ilc_path = out / "ilc_result.npz"
        ilc = ros.add(
            ILCNode(
                "servo_ilc",
                context=ros.context,
                namespace=ros.ns,
                parameter_overrides=ilc_parameters(joint, rate_hz, offset, kp_low, iterations, ilc_path),
            )
        )
        wait_for(lambda: ilc.latest is not None, 20.0, "joint states at the ILC node")

        log(
            f"2. ILC on {joint}: Schwarz & Behnke reference around {offset:g} rad, P gain {kp_low:g}, "
            f"up to {iterations} iteration(s) (servo_ilc_node)"
        )
        ok, msg = ilc.start()
        if not ok:
            raise RuntimeError(msg)
        wait_for(lambda: ilc.state != "running", 60.0 * (iterations + 1), "the ILC run")
        if ilc.state != "done":
            raise RuntimeError(f"ILC failed: {ilc.error}")
        rec = load_ilc_record(ilc_path)
        ros.remove(ilc)  # fewer /joint_states callbacks in this process from here on
        log("   windowed error per iteration [rad]: " + ", ".join(f"{e:.4f}" for e in rec.errors))

        log("3. α fit from the ILC result (servo_fit_node → servo_feedforward alpha.pendulum_1)")
        fit = ros.add(
            FitNode(
                "servo_fit",
                context=ros.context,
                namespace=ros.ns,
                parameter_overrides=[
                    Parameter("source", value="ilc_file"),
                    Parameter("ilc_file", value=str(ilc_path)),
                    Parameter("joint", value=joint),
                    Parameter("urdf_path", value=str(share_file("urdf", "pendulums2.urdf"))),
                    Parameter("output", value=str(out / "alpha.yaml")),
                    Parameter("run_on_start", value=False),
                ],
            )
        )
        ok, msg = fit.run()
        if not ok:
            raise RuntimeError(msg)
        log("   " + msg)
        fit_result = dict(fit.result)
        ros.remove(fit)

        ref = trajectories.schwarz_behnke_reference(dt=1.0 / rate_hz, offset=offset)
        states: list[tuple[float, float]] = []
        recording = {"on": False}

        def on_js(m: JointState) -> None:
            if recording["on"] and joint in m.name:
                states.append(
                    (m.header.stamp.sec + m.header.stamp.nanosec * 1e-9, m.position[list(m.name).index(joint)])
                )

        probe = ros.add(__import__("rclpy").create_node("demo_probe", context=ros.context, namespace=ros.ns))
        probe.create_subscription(JointState, "joint_states", on_js, 100)
        pub = probe.create_publisher(JointTrajectory, "feedforward/trajectory", 10)
        wait_for(lambda: pub.get_subscription_count() > 0, 10.0, "the feed-forward node's trajectory subscription")

        def track(label: str, kp: float, feedforward: bool) -> TrackingRun:
            ff.set_parameters([Parameter("kp", value=[kp]), Parameter("enabled", value=feedforward)])
            wait_for(lambda: abs(sim.sim.kp[0] - kp) < 1e-9, 5.0, "the new P gain at the servo")
            start = ff.get_clock().now().nanoseconds * 1e-9 + 1.0  # hold the first point for 1 s
            msg = JointTrajectory(joint_names=[joint])
            msg.header.stamp = Time(sec=int(start), nanosec=int((start % 1) * 1e9))
            msg.points = [
                JointTrajectoryPoint(
                    positions=[float(q)],
                    velocities=[float(v)],
                    accelerations=[float(a)],
                    time_from_start=Duration(sec=int(t), nanosec=int(round((t % 1) * 1e9)) % 1_000_000_000),
                )
                for t, q, v, a in zip(ref.t, ref.q, ref.dq, ref.ddq)
            ]
            states.clear()
            recording["on"] = True
            pub.publish(msg)
            wait_for(lambda: states and states[-1][0] > start + ref.t[-1] + 0.2, ref.t[-1] + 30.0, f"the {label} run")
            recording["on"] = False
            s = np.array(states)
            ts = start + ref.t
            measured = np.interp(ts, s[:, 0], s[:, 1])
            run = TrackingRun(label, kp, feedforward, ref.t, ref.q, measured)
            log(f"   {label}: RMS {run.rms:.4f} rad, max {run.max_abs:.4f} rad")
            return run

        log("4–5. tracking the reference (servo_feedforward_node drives servo/commands)")
        runs = [
            track("high-gain P", kp_high, False),
            track("low-gain P", kp_low, False),
            track("low-gain P + feed-forward", kp_low, True),
        ]
        result = DemoResult(ilc_errors=rec.errors, alpha=list(fit_result["alpha"]), fit=fit_result, runs=runs)
        if plot:
            result.plot = plot_runs(runs, out / "demo_tracking.png")
        return result
    finally:
        ros.shutdown()


def run_humanoid_act(out_dir: str | Path = "demo_out", n_steps: int = 2, log=print):
    """The demo's last act: the humanoid mission over DDS (:mod:`.mission`), a short run of (a)/(b)/(c): walker →
    feed-forward → MuJoCo sim node. Returns (results, table, plot path)."""
    from .mission import CONTROLLERS, format_table, plot_mission, run_mission

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    res = [run_mission(c, n_steps, log=log, salt=41) for c in CONTROLLERS]
    return res, format_table(res), plot_mission(res, out / "humanoid_mission.png")


def plot_runs(runs: list[TrackingRun], path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(10, 6), sharex=True)
    ax1.plot(runs[0].t, runs[0].desired, "k--", lw=1.2, label="desired")
    for r in runs:
        ax1.plot(r.t, r.measured, lw=1.0, label=f"{r.label} (kP {r.kp:g})")
        ax2.plot(r.t, r.error, lw=1.0, label=f"{r.label}: RMS {r.rms:.4f} rad")
    ax1.set_ylabel("position [rad]")
    ax2.set_ylabel("error [rad]")
    ax2.set_xlabel("time [s]")
    ax1.legend(loc="upper right", fontsize=8)
    ax2.legend(loc="upper right", fontsize=8)
    ax1.set_title("Simulated MX-64 (M4) + 0.5 kg pendulum: Schwarz & Behnke reference through servo_ff's ROS nodes")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="demo_out", help="directory for the ILC result, α YAML and plot")
    ap.add_argument("--iterations", type=int, default=3, help="ILC iteration cap")
    ap.add_argument("--kp-high", type=float, default=32.0)
    ap.add_argument("--kp-low", type=float, default=8.0)
    ap.add_argument("--no-plot", action="store_true")
    a = ap.parse_args(argv)
    res = run_demo(a.out, kp_high=a.kp_high, kp_low=a.kp_low, iterations=a.iterations, plot=not a.no_plot)
    print()
    print(res.table())
    print(f"\nα̂ = {np.round(res.alpha, 4).tolist()}" + (f"; plot: {res.plot}" if res.plot else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
