"""``servo_ilc_node``: Iterative Learning Control of one joint's goal-position curve (Schwarz & Behnke (Compliant Robot
Behavior) §4.1, Eq. 20–21, 28) through the servo interface, a thin layer over
:func:`servo_ff.identification.ilc.run_ilc`.

On ``ilc/start`` (std_srvs/Trigger, or at launch with ``start_on_launch``) a worker thread runs ``run_ilc``;
each trial moves the joint to the curve's start, waits ``settle_time``, streams the command at ``rate_hz`` on
``servo/joint_command`` (JointState by name, so other joints keep their goals) and records the joint from
``/joint_states`` (resampled onto the command grid). After each trial it publishes ``ilc/progress``
(std_msgs/String, JSON: iteration, max_error_rad, state) and the learned curve ``ilc/curve``
(trajectory_msgs/JointTrajectory). At the end the curve and every measurement go to ``output``
(:mod:`servo_ff.io.ilc_record`, read by ``servo_fit_node``).

Before the first trial it reads the joint limits from the servo node taking its goals (its ``position_min`` /
``position_max``, :mod:`.ilc_servo`): a reference outside them is refused with one line; a learned command that
would leave them is never sent: the run stops (state ``stopped``, one ERROR line naming the joint, iteration and
limit) and the record holds the trials done until then, its ``stopped`` saying why. A windowed error growing
(``diverge_factor`` × the first, or ``diverge_growth`` iterations in a row) stops it the same way, state
``diverged``. A Ctrl-C during a run stops it as ``interrupted``: the completed trials are written, marked, and the
process ends with one line and exit 130 (nothing completed: nothing written, said).

``execution``: ``stream`` (default, hardware) publishes the samples one by one at ``rate_hz`` of wall time, as
above. ``trajectory`` sends the whole trial — to the curve's start, held ``settle_time``, then the command every
``1/rate_hz`` (positions only: linear between the samples, so a servo node ticking at ``rate_hz`` applies
exactly the command of each sample) — as one JointTrajectory on ``servo/joint_trajectory``, stamped a lead after
the newest ``/joint_states``, and records and waits on the servo node's stamps only: no per-sample round trip, so
a ``servo_sim_node`` that owns ``/clock`` (``publish_clock: true``, ``real_time_factor: 0``) runs each trial as
fast as it steps. The trajectory has to reach the servo node before its stamp: the servo node's
``servo/trajectory_status`` tells, and a late trial is sent again with a longer lead (:mod:`.ilc_trials`).
"""

from __future__ import annotations

import json
import math
import sys
import threading
from typing import Any

import numpy as np
from builtin_interfaces.msg import Duration
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from sensor_msgs.msg import BatteryState, JointState
from std_msgs.msg import Float64MultiArray, String
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from servo_ff.interrupt import EXIT_INTERRUPTED
from servo_ff.io.ilc_record import save_ilc_record
from servo_ff.ros.common import (
    TOPIC_JOINT_COMMAND,
    TOPIC_JOINT_STATES,
    TOPIC_P_GAINS,
    TOPIC_SUPPLY,
    TOPIC_TRAJECTORY,
    TOPIC_TRAJECTORY_STATUS,
    ParameterTable,
    preload_modules,
    spin_node,
)
from servo_ff.ros.servo_gain import held_gains
from servo_ff.ros.side_node import SideNode
from servo_ff.workflows.ilc import ilc_record, supply_per_trial

from .ilc_params import ilc_specs, reference_trajectory
from .ilc_servo import rival, servo_view
from .ilc_trials import NO_WAITER, SHUTDOWN, STALL_TIMEOUT, ILCTrials

TOPIC_PROGRESS = "ilc/progress"
TOPIC_CURVE = "ilc/curve"
SRV_START = "ilc/start"
STOPPED = {"limit": "stopped", "diverged": "diverged", "interrupted": "interrupted", "no_response": "aborted"}
RESPONSE_MIN = 0.2  # a trial whose motion spans less than this × the command's: the joint did not follow, aborted
JS_DEPTH = 2000  # /joint_states queue: a sim running as fast as possible sends bursts


def _ilc():
    try:
        from servo_ff.identification import ilc
    except ImportError as e:
        raise ValueError(f"servo_ilc_node needs servo_ff.identification.ilc, not importable: {e}") from None
    return ilc


class ILCNode(ILCTrials, Node):
    def __init__(self, name: str = "servo_ilc", **kwargs: Any):
        super().__init__(name, **kwargs)
        self._ilc = _ilc()
        preload_modules("scipy.signal")  # the update's zero-phase filter (filter_hz)
        self.table = ParameterTable(
            self,
            ilc_specs(),
            validate=self._validate,
            n_joints=lambda v: None,
        )
        self.lock = threading.Lock()
        self._closing = False  # destroy_node began
        self.recording: list[tuple[float, float]] | None = None
        self.supply: list[float] = []
        self.latest: float | None = None
        self.worker: threading.Thread | None = None
        self.state = "idle"
        self.result_path: str | None = None
        self.error = ""
        group = ReentrantCallbackGroup()
        self.pub_goal = self.create_publisher(JointState, TOPIC_JOINT_COMMAND, 10)
        self.pub_gains = self.create_publisher(Float64MultiArray, TOPIC_P_GAINS, 10)
        self.pub_progress = self.create_publisher(String, TOPIC_PROGRESS, 10)
        self.pub_curve = self.create_publisher(JointTrajectory, TOPIC_CURVE, 10)
        self.pub_traj = self.create_publisher(JointTrajectory, TOPIC_TRAJECTORY, 10)
        # what the callbacks use, before the first subscription (the side node's thread runs them at once)
        self.js_ns = -1  # stamp of the last /joint_states with the joint
        self._js_seen = threading.Condition()  # also guards _traj_status
        self._wake_ns = NO_WAITER  # a /joint_states stamped at or after this wakes _wait_stamp
        self._traj_status: dict[int, dict] = {}  # servo/trajectory_status by the trajectory's stamp [ns]
        self._lead_ns: int | None = None  # how far ahead of the newest /joint_states a trajectory trial starts
        self._unverified = False  # warned that no servo node reports on trajectory_status
        # every sample of a trial at whatever rate the servo node sends them, and /clock: off this node's executor
        self._side = SideNode(self, "states")
        self._side.subscribe(JointState, TOPIC_JOINT_STATES, self._on_joint_states, JS_DEPTH)
        self.create_subscription(BatteryState, TOPIC_SUPPLY, self._on_supply, 10, callback_group=group)
        self.create_service(Trigger, SRV_START, self._on_start, callback_group=group)
        self.create_subscription(String, TOPIC_TRAJECTORY_STATUS, self._on_trajectory_status, 10, callback_group=group)
        self.status_topic = self.resolve_topic_name(TOPIC_TRAJECTORY_STATUS)
        self._sim_time = bool(self.get_parameter("use_sim_time").value)  # /clock: the servo node's time
        self._side.take_clock()
        wall = Clock(clock_type=ClockType.STEADY_TIME)  # start-up polling runs before any sim time
        if self.table["start_on_launch"]:
            self._auto = self.create_timer(0.2, self._auto_start, callback_group=group, clock=wall)

    def destroy_node(self) -> None:
        self._closing = True  # first: a worker still running stops as interrupted, not failed on a gone publisher
        self._side.destroy()
        super().destroy_node()

    def _validate(self, v: dict[str, Any]) -> str | None:
        reference_trajectory(
            v["reference"], 1.0 / v["rate_hz"], v["reference_duration"], v["reference_amplitude"], v["reference_offset"]
        )
        if not v["joint"]:
            return "joint must name the joint to learn"
        return None

    # ------------------------------------------------------------------ inputs
    def _on_joint_states(self, msg: JointState) -> None:
        joint = self.table["joint"]
        try:
            k = list(msg.name).index(joint)
            pos = float(msg.position[k])
        except (ValueError, IndexError):
            return
        if not math.isfinite(pos):
            return
        self.latest = pos
        rec = self.recording
        if rec is not None:  # the servo node's stamp: no callback latency in the time base; recorded before the
            rec.append((msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9, pos))  # trial waiting is woken
        with self._js_seen:
            self.js_ns = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
            if self.js_ns >= self._wake_ns:  # the stamp a trial waits for (not every sample: no GIL ping-pong)
                self._js_seen.notify_all()

    def _on_supply(self, msg: BatteryState) -> None:
        if math.isfinite(msg.voltage) and msg.voltage > 0 and self.recording is not None:
            self.supply.append(float(msg.voltage))

    def _auto_start(self) -> None:
        if self.latest is not None and self.worker is None:
            self._auto.cancel()
            self.start()

    def _on_start(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        response.success, response.message = self.start()
        return response

    def start(self) -> tuple[bool, str]:
        with self.lock:
            if self.worker is not None and self.worker.is_alive():
                return False, f"ILC already {self.state}"
            if self.latest is None:
                return False, f"no /joint_states for joint {self.table['joint']!r} yet"
            self.state = "running"
            self.error = ""
            self.worker = threading.Thread(target=self._run, name="ilc", daemon=True)
            self.worker.start()
        return True, f"ILC started on {self.table['joint']} ({self.table['reference']})"

    # ------------------------------------------------------------------ the learning run
    def _progress(self, **fields: Any) -> None:
        if self._live():  # the worker may outlive a shutdown
            self.pub_progress.publish(
                String(data=json.dumps({"joint": self.table["joint"], "state": self.state, **fields}))
            )  # fields may override the state

    def _ros_now(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def _command(self, q: float) -> None:
        msg = JointState(name=[self.table["joint"]], position=[float(q)])
        msg.header.stamp = self.get_clock().now().to_msg()
        self.pub_goal.publish(msg)

    def _set_gains(self) -> None:
        """``kp`` on every joint of ``joints`` (servo/p_gains) for a trial; the first time, the gains the servo node
        held are kept to be put back by :meth:`_finish` (before: they stayed at ``kp``, also after a failure)."""
        kp, joints = self.table["kp"], [j for j in self.table["joints"] if j]
        if kp > 0 and joints:
            if self._gains_before is None and self._servo is not None:
                held = held_gains(self._servo.joints, self._servo.kp, joints) if self._servo.kp else {}
                self._gains_before = [held.get(j, float(kp)) for j in joints]
                unknown = [j for j in joints if j not in held]
                if unknown:
                    self.get_logger().warning(
                        f"the P gain of {', '.join(unknown)} on {self._servo.name} is not known: it stays at {kp:g} "
                        "after the run"
                    )
            self.pub_gains.publish(Float64MultiArray(data=[float(kp)] * len(joints)))

    def _finish(self, state: str) -> None:
        """Put back the P gains the trials replaced (ROS shut down: said in ``error``), then the state (last: a
        caller waiting on it may destroy the node right after)."""
        before, self._gains_before = self._gains_before, None
        joints = ", ".join(j for j in self.table["joints"] if j)
        if before is not None and self._live():
            self.pub_gains.publish(Float64MultiArray(data=before))
            self.get_logger().info(f"ILC: P gains of {joints} put back to {before}")
        elif before is not None:
            self.error += f"; the P gains of {joints} stay at {self.table['kp']:g} (ROS shut down: not put back)"
        self.state = state

    def _run(self) -> None:
        v = dict(self.table.values)
        self._servo, self._gains_before = None, None  # (_set_gains, _finish)
        dt = 1.0 / v["rate_hz"]
        try:
            ref = reference_trajectory(
                v["reference"], dt, v["reference_duration"], v["reference_amplitude"], v["reference_offset"]
            )
            topics = [self.pub_goal.topic_name, self.pub_traj.topic_name]
            other = rival(self, topics, v["joint"])
            if other:  # before: both ran their trials over each other (one ilc/start started both)
                raise RuntimeError(f"{other} also learns {v['joint']} on {' and '.join(topics)}: not started")
            servo = self._servo = servo_view(self, topics, v["joint"], STALL_TIMEOUT)
            where = self._ilc.outside_limits(ref.q, servo.lower, servo.upper, dt)
            if where:  # before: sent, refused goal by goal by the servo node, and learned from as if applied
                raise ValueError(f"the reference of {v['joint']} leaves its joint limits on {servo.name}: {where}")
            self._trial_supply: list[float] = []
            iteration = {"k": 0}
            steps = self._ilc.window_steps(v["window"], dt)

            def execute(u: np.ndarray) -> np.ndarray:
                try:
                    q = self.execute(u, dt)
                except Exception as e:  # a publisher or wait on a context shut down by Ctrl-C: an interrupt
                    if isinstance(e, self._ilc.ILCStop) or self._live():
                        raise
                    raise self._ilc.ILCStop(SHUTDOWN) from e
                why = self._ilc.unresponsive(u, q, RESPONSE_MIN)
                if why:  # before: learned from (torque off: the pendulum hanging at 0.041 rad), ended "done"
                    raise self._ilc.ILCStop(f"{v['joint']} did not follow: {why}; torque off?", "no_response")
                err = float(self._ilc.windowed_deviation(ref.q, q, steps).max())
                self._progress(iteration=iteration["k"], max_error_rad=err)
                self._publish_curve(ref.t, u)
                self.get_logger().info(f"ILC iteration {iteration['k']}: q_max = {err:.4f} rad")
                iteration["k"] += 1
                return q

            res = self._ilc.run_ilc(
                execute,
                ref.q,
                dt,
                gain=v["gain"],
                delay=v["delay"],
                initial=v["initial"],
                threshold=v["threshold"],
                window=v["window"],
                max_iterations=v["max_iterations"],
                filter_hz=v["filter_hz"] or None,
                limits=(servo.lower, servo.upper),
                diverge_factor=v["diverge_factor"],
                diverge_growth=v["diverge_growth"],
            )
            # a trial aborted after its reading is not one of them; before: a trial without one got the mean, unsaid
            supply, filled = supply_per_trial(self._trial_supply[: len(res.commands)], TOPIC_SUPPLY)
            if filled:
                self.get_logger().warning(filled)
            rec = ilc_record(res, ref, v["joint"], v["kp"], dt, v["delay"], supply)
            path = save_ilc_record(rec, v["output"])
            self.result_path = str(path)
            state = STOPPED.get(res.stop_kind, "done")
            self._publish_curve(ref.t, res.final_command)
            self._progress(
                iteration=len(res.errors) - 1,
                max_error_rad=float(res.errors[-1]),
                converged=bool(res.iterations >= 0),
                output=str(path),
                state=state,
                **({"stopped": res.stopped} if res.stopped else {}),
            )
            said = (
                f"q_max {float(res.errors[0]):.4f} → {float(res.errors[-1]):.4f} rad in "
                f"{len(res.errors) - 1} iteration(s); wrote {path}"
            )
            if res.stopped:
                self.error = f"ILC {state} on {v['joint']}: {res.stopped} ({servo.name}); {said}"
                if self._live():  # else main() says it (the logger may be gone with the context)
                    self.get_logger().error(self.error)
            else:
                self.get_logger().info(f"ILC done: {said}")
            self._finish(state)
        except self._ilc.ILCStop as e:  # before the first trial completed
            state = STOPPED[e.kind]
            self.error = f"ILC {state} on {v['joint']} before a trial completed ({e}): nothing written"
            if self._live():
                self._progress(error=self.error, state=state)
                self.get_logger().error(self.error)
            self._finish(state)
        except Exception as e:  # report, never die silently in the worker
            self.error = str(e)
            if self._live():
                self._progress(error=str(e), state="failed")
                self.get_logger().error(f"ILC failed: {e}")
            self._finish("failed")
        finally:
            self.recording = None

    def _publish_curve(self, t: np.ndarray, u: np.ndarray) -> None:
        if not self._live():
            return
        msg = JointTrajectory(joint_names=[self.table["joint"]])
        msg.header.stamp = self.get_clock().now().to_msg()  # when it was learned (times are from its start)
        msg.points = [
            JointTrajectoryPoint(
                positions=[float(q)],
                time_from_start=Duration(sec=int(ti), nanosec=int(round((ti - int(ti)) * 1e9)) % 1_000_000_000),
            )
            for ti, q in zip(t, u)
        ]
        self.pub_curve.publish(msg)


def main(args: list[str] | None = None) -> int:
    """Spin the node; a run interrupted by Ctrl-C is waited for (its record written) and said in one line, exit
    130 (before: exit 0, nothing said, the completed trials lost)."""
    made: list[ILCNode] = []
    rc = spin_node(lambda: made.append(ILCNode()) or made[-1], args)
    node = made[-1] if made else None
    if node is None or node.worker is None:
        return rc
    node.worker.join(timeout=60.0)  # the record of the completed trials is being written
    if node.state in ("interrupted", "running"):
        said = node.error or "ILC interrupted: its worker did not end within 60 s, nothing written"
        print(f"servo_ilc_node: {said}", file=sys.stderr)
        return EXIT_INTERRUPTED
    return rc


if __name__ == "__main__":
    sys.exit(main())
