"""``servo_fit_node``: least-squares fit of α̂ (Schwarz & Behnke §4.2, Eq. 19, 22–27) for one joint, a thin layer
over :mod:`servo_ff.workflows.alpha` (the same workflow as ``servo-ff fit``); τ_o by inverse dynamics of the URDF.

Data (``source``):

* ``ilc_file`` — an ILC record (:mod:`servo_ff.io.ilc_record`, written by ``servo_ilc_node`` or ``servo-ff ilc``);
* ``bag`` — a rosbag2 recording (``bag_path``) as ``ros2 bag record`` writes it, read by
  :func:`servo_ff.io.rosbag.read_rosbag`: ``joint_states_topic``, the goal topic (``goal_topic``, or the one
  command-like topic of a goal type; a Float64MultiArray of several joints in ``joints`` order, which it then
  needs), the supply (``vin`` when given, else ``supply_topic``, the servo node's ``servo_supply`` or the one
  BatteryState, said: :mod:`servo_ff.io.rosbag_supply`), the recorded gains (``p_gains_topic``; ``kp`` overrides
  them), torque enable (``enable_topic``), relative names under ``namespace``
  (:data:`servo_ff.workflows.fit_options.TOPIC_OPTIONS`, the flags of ``servo-ff fit`` too);
* ``topics`` — live ``/joint_states`` + ``servo/commands`` + ``servo_supply`` of the last ``window`` seconds at the
  fit (a message without a finite reading, or stamped out of the window, refused in a throttled line; the supply by
  the bag's rule, :mod:`servo_ff.io.rosbag_supply`: ``vin`` when given, else the readings, a NaN one left out and
  counted, one implausible refusing; the last reading older than ``supply_timeout`` refuses the fit, naming its
  age; states of the joint from two publishers, told apart by the joints their messages name, refuse it as in a
  bag, :mod:`servo_ff.io.joint_publishers`; the gains sent on ``servo/p_gains``
  give kp when the parameter is 0, and one changing within the data refuses it); a jump back of the clock drops the
  samples of the old time (:mod:`servo_ff.ros.clock_jump`).

Every fit passes the quality gate (``min_range``, ``min_speed``, ``min_accel``, ``max_rms``, ``max_condition``,
α̂ admissible: :mod:`servo_ff.identification.alpha_gate`) or nothing is written or set. ``fit/run`` (Trigger)
fits; with ``run_on_start`` file and bag sources fit at start-up (``wait_for_file``: an ILC file written later).
With ``exit_after_fit`` (one-shot: the replay and identify bring-ups) the node ends after that fit: ``main``
returns 0 when α̂ was fitted (and set on ``feedforward_node`` if one is named), else 2 with the reason on stderr.
The result goes to ``fit/result`` (String, JSON), the feed-forward node's ``alpha.<joint>`` (its set_parameters
service) and, once that node took it (or none is named), ``output`` (YAML, :mod:`servo_ff.dynamics.alpha`).
"""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any

import numpy as np
from rcl_interfaces.msg import Parameter as ParameterMsg
from rcl_interfaces.msg import ParameterType, ParameterValue
from rcl_interfaces.srv import SetParameters
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from sensor_msgs.msg import BatteryState, JointState
from std_msgs.msg import Float64MultiArray, String
from std_srvs.srv import Trigger

from servo_ff.identification.alpha_data import data_from_streams
from servo_ff.identification.alpha_rls import LiveAlphaRefiner
from servo_ff.io.paths import resolve_path
from servo_ff.io.servo_log import DT_MAX, DT_MIN
from servo_ff.models.schema import SUPPLY_FIELD
from servo_ff.ros.clock_jump import on_clock_jump_back
from servo_ff.ros.common import (
    TOPIC_COMMANDS,
    TOPIC_JOINT_STATES,
    TOPIC_P_GAINS,
    TOPIC_SUPPLY,
    ParameterTable,
    ParamSpec,
    preload_modules,
    spin_node,
    with_message_info,
)
from servo_ff.workflows.alpha import AlphaResult, fit_alpha_source, gated_fit, save_alpha_result, urdf_joint_torque
from servo_ff.workflows.fit_options import GATE_OPTIONS, TOPIC_OPTIONS, Option, gate_from, topic_values

from .fit_live import FitLiveData
from .fit_rls import FitRLS
from .servo_base import KP_MAX, KP_UNIT

TOPIC_RESULT = "fit/result"
SRV_RUN = "fit/run"
SOURCES = ("ilc_file", "bag", "topics")


def _spec(o: Option, what: str) -> ParamSpec:
    """The parameter of one row of the table ``servo-ff fit`` takes its flags from."""
    return ParamSpec(o.name, o.default, f"{o.description} ({what})", o.unit, lo=o.lo, hi=o.hi)


def fit_specs() -> list[ParamSpec]:
    """The parameters of ``servo_fit_node``: their one description (docs/nodes.md is generated from it)."""
    return [
        ParamSpec("source", "ilc_file", "data to fit", choices=SOURCES),
        ParamSpec("ilc_file", "ilc_result.npz", "ILC result file (source ilc_file)"),
        ParamSpec(
            "ilc_iteration", -1, "ILC trial to fit (-1: the one with the lowest windowed error)", lo=-1, hi=100000
        ),
        ParamSpec("bag_path", "", "rosbag2 directory or file (source bag)"),
        *(_spec(o, "source bag") for o in TOPIC_OPTIONS),
        ParamSpec(
            "joints",
            [""],
            "goal order of servo/commands (source topics), of a bag's Float64MultiArray goals and gains (needed when "
            "they carry several joints: they name none)",
        ),
        ParamSpec("joint", "joint_1", "joint to fit"),
        ParamSpec(
            "urdf_path",
            "",
            "URDF giving τ_o by inverse dynamics (fixed base); empty: the pendulum the ILC file or bag records "
            "(source topics needs it)",
            read_only=True,
        ),
        ParamSpec(
            "kp",
            0.0,
            "servo P gain during the data (0: the file's, the bag's recorded gains, the gain sent on servo/p_gains); "
            "given, it wins",
            KP_UNIT,
            lo=0.0,
            hi=KP_MAX,
        ),
        ParamSpec(
            "vin",
            0.0,
            "supply voltage during the data (0: from the bag, or servo_supply for source topics); given, it wins "
            f"over a recorded supply; a plausible servo supply, {SUPPLY_FIELD.lo:g}-{SUPPLY_FIELD.hi:g} V",
            SUPPLY_FIELD.unit,
            lo=0.0,
            hi=SUPPLY_FIELD.hi,
        ),
        ParamSpec("window", 10.0, "length of live data fitted (source topics)", "s", lo=0.5, hi=3600.0),
        ParamSpec(
            "supply_timeout",
            1.0,
            "source topics: a servo_supply reading older than this refuses the live fit and holds the RLS (the "
            "servo node publishes one every supply_period, 0.1 s)",
            "s",
            lo=1e-3,
            hi=3600.0,
        ),
        ParamSpec("dt", 0.005, "resampling step (bag, topics)", "s", lo=DT_MIN, hi=DT_MAX),
        ParamSpec("with_inertia", False, "also fit α̂4 (gear inertia, Eq. 14)"),
        *(_spec(o, "quality gate") for o in GATE_OPTIONS),
        ParamSpec("feedforward_node", "servo_feedforward", "node whose alpha.<joint> is set (empty: none)"),
        ParamSpec("service_timeout", 5.0, "wait for the feed-forward node's parameter service", "s", lo=0.0, hi=600.0),
        ParamSpec("output", "alpha.yaml", "YAML written with the fitted α (empty: none)"),
        ParamSpec("run_on_start", True, "fit at start-up (sources ilc_file and bag)"),
        ParamSpec(
            "wait_for_file",
            True,
            "wait for the ILC file to be written after start-up (run_on_start; "
            "a file left by an earlier run is not used)",
        ),
        ParamSpec(
            "exit_after_fit",
            False,
            "one-shot: end after the start-up fit (main returns 0 on success, 2 with the reason on failure)",
            read_only=True,
        ),
        ParamSpec("rls", False, "source topics: refine α̂ online by RLS after the first fit (alpha_rls.py)"),
        ParamSpec("rls_forgetting", 0.999, "RLS forgetting factor per sample", lo=0.9, hi=1.0),
        ParamSpec(  # read-only: its timer is made once (before: a change was accepted, never applied)
            "rls_period",
            1.0,
            "RLS update period (α̂ set on the feed-forward once trusted)",
            "s",
            lo=0.05,
            hi=60.0,
            read_only=True,
        ),  # fmt: skip
    ]


class FitNode(FitLiveData, FitRLS, Node):
    def __init__(self, name: str = "servo_fit", **kwargs: Any):
        super().__init__(name, **kwargs)
        preload_modules("scipy.signal")  # the fit's Savitzky–Golay derivatives
        self.table = ParameterTable(
            self, fit_specs(), validate=self._validate, apply=self._apply, n_joints=lambda v: None
        )
        if not self.table["urdf_path"] and self.table["source"] == "topics":
            raise ValueError("urdf_path is required for source topics (τ_o comes from inverse dynamics)")
        # empty: τ_o of the pendulum the ILC file or bag records (a record-sim bag's joint is in no URDF)
        self.urdf = resolve_path(self.table["urdf_path"]) if self.table["urdf_path"] else None
        self.torque = self._urdf_torque(self.table["joint"])  # names the joint if the URDF lacks it
        group = ReentrantCallbackGroup()
        self._init_live()
        self.pub_result = self.create_publisher(String, TOPIC_RESULT, 10)
        self._jump = on_clock_jump_back(self, self._drop_old_time)
        if self.table["source"] == "topics" or not self.table["exit_after_fit"]:  # a one-shot file fit needs none
            js = with_message_info(self._on_js)  # the publication sequence numbers tell publishers apart
            self.create_subscription(JointState, TOPIC_JOINT_STATES, js, 50, callback_group=group)
            self.create_subscription(Float64MultiArray, TOPIC_COMMANDS, self._on_goal, 50, callback_group=group)
            self.create_subscription(BatteryState, TOPIC_SUPPLY, self._on_supply, 10, callback_group=group)
            self.create_subscription(Float64MultiArray, TOPIC_P_GAINS, self._on_p_gains, 10, callback_group=group)
        self.create_service(Trigger, SRV_RUN, self._on_run, callback_group=group)
        self.param_client = None
        if self.table["feedforward_node"]:
            # relative name: the feed-forward node in this node's namespace (absolute if it starts with /)
            self.param_client = self.create_client(
                SetParameters, f"{self.table['feedforward_node'].rstrip('/')}/set_parameters", callback_group=group
            )
        self.result: dict[str, Any] | None = None
        self.refiner: LiveAlphaRefiner | None = None  # online RLS on α̂ (parameter rls), from the last live fit
        self._rls_timer = None
        self.last_error = ""
        self.exit_code: int | None = None  # one-shot: set when the start-up fit has ended
        self._started = time.time()
        self.worker: threading.Thread | None = None
        self.lock = threading.Lock()
        if self.table["exit_after_fit"] and (self.table["source"] == "topics" or not self.table["run_on_start"]):
            raise ValueError("exit_after_fit needs run_on_start and source ilc_file or bag")
        if self.table["run_on_start"] and self.table["source"] != "topics":
            threading.Thread(target=self._run_at_start, daemon=True).start()

    def _validate(self, v: dict[str, Any]) -> str | None:
        if v["source"] == "bag" and not v["bag_path"]:
            return "source bag needs bag_path"
        if getattr(self, "urdf", None) and v["joint"] != self.table["joint"]:
            urdf_joint_torque(self.urdf, v["joint"])  # a joint the URDF lacks: refused, named
        if v["source"] == "topics" and not v["urdf_path"]:
            return "source topics needs urdf_path (τ_o by inverse dynamics); it is empty"
        return None

    def _urdf_torque(self, joint: str):
        """τ_o of ``joint`` from the URDF (None without one: the source's pendulum)."""
        return urdf_joint_torque(self.urdf, joint) if self.urdf else None

    def _apply(self, changed: set[str]) -> None:
        """Another joint (or goal order): τ_o is the new joint's, and the live samples and the RLS of the old one go
        (before: they stayed, fitted and labelled as the new joint's)."""
        if changed & {"joint", "joints"}:
            self.torque = self._urdf_torque(self.table["joint"])
            said = self._drop_live("the old joint") or "no live samples held"
            self.refiner = None
            self.get_logger().info(f"fitting {self.table['joint']} now: {said}")

    # ------------------------------------------------------------------ data sources → α̂ (servo_ff.workflows)
    def fit(self) -> AlphaResult:
        v = self.table.values
        options = {"with_inertia": v["with_inertia"]}
        gate = gate_from(v)
        if v["source"] in ("ilc_file", "bag"):
            path = resolve_path(v["ilc_file"] if v["source"] == "ilc_file" else v["bag_path"])
            return fit_alpha_source(
                path,
                joint=v["joint"],
                urdf=self.urdf,
                iteration=v["ilc_iteration"],
                kp=v["kp"] or None,
                dt=v["dt"],
                joints=[j for j in v["joints"] if j] or None,
                vin=v["vin"] or None,
                topics=topic_values(v),
                gate=gate,
                **options,
            )
        js, gl, volts = self._samples()
        if mixed := self._mixed_publishers():  # the replay's rule: two publishers of the joint are not fitted
            raise ValueError(mixed)
        if len(js) < 10 or len(gl) < 10:
            raise ValueError(
                f"not enough live data for {v['joint']} (joint_states {len(js)}, goals "
                f"{len(gl)} messages in the last {v['window']:g} s)"
            )
        kp, kp_source = self._live_kp(max(gl[0, 0], js[0, 0]), js[-1, 0])
        u_bat, u_source = self._live_supply(volts, self.get_logger().warning)
        data = data_from_streams(gl[:, 0], gl[:, 1], js[:, 0], js[:, 1], u_bat, kp, v["dt"], "live topics")
        return gated_fit(v["joint"], data, self.torque, gate, kp_source, u_source, **options)

    # ------------------------------------------------------------------ outputs
    def _write_yaml(self, result: AlphaResult, info: dict[str, Any] | None = None) -> str | None:
        if not self.table["output"]:
            return None
        return str(save_alpha_result(result, self.table["output"], info=info))

    def _set_feedforward(self, result: dict[str, Any]) -> tuple[bool, str]:
        """(α set or no node to set it on, what happened)."""
        if self.param_client is None:
            return True, "no feed-forward node configured"
        node = self.table["feedforward_node"]
        if not self.param_client.wait_for_service(timeout_sec=self.table["service_timeout"]):
            return False, f"feed-forward node {node!r} not reachable: α not set"
        req = SetParameters.Request(
            parameters=[
                ParameterMsg(
                    name=f"alpha.{result['joint']}",
                    value=ParameterValue(
                        type=ParameterType.PARAMETER_DOUBLE_ARRAY, double_array_value=list(result["alpha"])
                    ),
                )
            ]
        )
        future = self.param_client.call_async(req)
        t0 = time.monotonic()
        while not future.done():
            if time.monotonic() - t0 > self.table["service_timeout"]:
                return False, f"feed-forward node {node!r} did not answer set_parameters"
            time.sleep(0.01)
        r = future.result().results[0]
        return bool(r.successful), (
            f"alpha.{result['joint']} set on {node}" if r.successful else f"{node} refused α: {r.reason}"
        )

    def run(self) -> tuple[bool, str]:
        with self.lock:
            try:
                fitted = self.fit()
            except (ValueError, OSError, KeyError) as e:
                msg = f"fit failed: {e}"
                self.last_error = msg
                if not self.table["exit_after_fit"]:  # one-shot: main's error line says it once
                    self.get_logger().error(msg)
                self.pub_result.publish(String(data=json.dumps({"error": str(e)})))
                return False, msg
            result = fitted.as_dict()
            if fitted.stopped_line():
                self.get_logger().warning(fitted.stopped_line())
            if self.table["source"] == "topics" and self.table["rls"]:
                self._start_rls(fitted)  # from this fit (before: a later fit left the RLS on the first one's)
            ff_ok, result["feedforward"] = self._set_feedforward(result)
            result["output"] = self._write_yaml(fitted) if ff_ok else None  # not a file the feed-forward refused
            self.result = result
            self.pub_result.publish(String(data=json.dumps(result)))
            text = (
                f"α̂({result['joint']}) = {np.round(result['alpha'], 4).tolist()}, q̇_s {result['dq_s']:.3g} rad/s, "
                f"δ {result['delta']:.3g}, t_d {result['delay'] * 1e3:.0f} ms, rms {result['rms_rad']:.4f} rad, "
                f"kp {result['kp']:g} ({result['kp_source']}); "
                f"{result['feedforward']}; wrote {result['output']}"
            )
            if not ff_ok:
                self.last_error = f"fit done but {result['feedforward']}; nothing written"
                self.get_logger().error(self.last_error)
                return False, self.last_error
            self.get_logger().info(text)
            return True, text

    def _on_run(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        """Starts the fit in a worker thread (it calls the feed-forward node's service, which needs the
        executor): the answer says it started; the result comes on fit/result and in the log."""
        if self.worker is not None and self.worker.is_alive():
            response.success, response.message = False, "a fit is already running"
            return response
        self.worker = threading.Thread(target=self.run, name="fit", daemon=True)
        self.worker.start()
        response.success, response.message = True, f"fit started ({self.table['source']}); result on {TOPIC_RESULT}"
        return response

    def _run_at_start(self) -> None:
        if self.table["source"] == "ilc_file" and self.table["wait_for_file"]:
            path = resolve_path(self.table["ilc_file"])
            self.get_logger().info(f"waiting for the ILC result {path} (written after start-up)")
            while not (path.is_file() and path.stat().st_mtime >= self._started - 1.0):
                if not self.context.ok():
                    return
                time.sleep(0.2)
        ok, text = self.run()
        if self.table["exit_after_fit"]:
            self.exit_code = 0 if ok else 2
            if not ok:
                print(f"error: {text}", file=sys.stderr, flush=True)
            self.context.try_shutdown()  # ends rclpy.spin in main (one-shot)


def main(args: list[str] | None = None) -> int:
    """Spin the fit node; in one-shot use (``exit_after_fit``) the code of its fit: 0 done, 2 failed."""
    made: list[FitNode] = []

    def factory() -> FitNode:
        made.append(FitNode())
        return made[-1]

    code = spin_node(factory, args)
    if code == 0 and made and made[0].exit_code is not None:
        return made[0].exit_code
    return code


if __name__ == "__main__":
    sys.exit(main())
