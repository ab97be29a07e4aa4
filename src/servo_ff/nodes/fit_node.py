"""``servo_fit_node``: least-squares fit of α̂ (seed 002 §4.2, Eq. 19, 22–27) for one joint, a thin layer over
:func:`servo_ff.identification.alpha_fit.fit_alpha`; τ_o by inverse dynamics of the URDF
(:mod:`servo_ff.dynamics`).

Data (``source``):

* ``ilc_file`` — the ILC result of ``servo_ilc_node`` (:mod:`.ilc_file`): final command vs its measurement;
* ``bag`` — a rosbag2 recording (``bag_path``) read by :func:`servo_ff.io.rosbag.read_rosbag`
  (``/joint_states``, the goal topic, ``/servo_supply``);
* ``topics`` — live ``/joint_states`` + ``servo/commands`` + ``servo_supply`` over the last ``window`` seconds.

``fit/run`` (std_srvs/Trigger) fits; with ``run_on_start`` file and bag sources fit at start-up (the ILC file is
waited for). The result goes to ``fit/result`` (std_msgs/String, JSON), to ``output`` (YAML in the
``servo_ff.dynamics.alpha`` format) and to the feed-forward node's ``alpha.<joint>`` parameter through its
``set_parameters`` service (rcl_interfaces/SetParameters).
"""
from __future__ import annotations

import json
import math
import threading
import time
from collections import deque
from pathlib import Path
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

from servo_ff.io.paths import resolve_path

from .common import TOPIC_COMMANDS, TOPIC_JOINT_STATES, TOPIC_SUPPLY, ParamSpec, ParameterTable, spin_node
from servo_ff.io.ilc_record import load_ilc_record
from .servo_base import KP_MAX

TOPIC_RESULT = "fit/result"
SRV_RUN = "fit/run"
SOURCES = ("ilc_file", "bag", "topics")


def _cores():
    try:
        from servo_ff.dynamics.inverse_dynamics import fixed_base_torques
        from servo_ff.dynamics.robot import load_robot
        from servo_ff.identification.alpha_fit import fit_alpha
    except ImportError as e:
        raise ValueError(f"servo_fit_node needs servo_ff.identification.alpha_fit and servo_ff.dynamics: {e}") from None
    return fit_alpha, load_robot, fixed_base_torques


def derivative(x: np.ndarray, dt: float) -> np.ndarray:
    return np.gradient(np.asarray(x, float), dt)


class FitNode(Node):
    def __init__(self, name: str = "servo_fit", **kwargs: Any):
        super().__init__(name, **kwargs)
        self._fit_alpha, load_robot, self._id = _cores()
        self.table = ParameterTable(self, [
            ParamSpec("source", "ilc_file", "data to fit", choices=SOURCES),
            ParamSpec("ilc_file", "ilc_result.npz", "ILC result file (source ilc_file)"),
            ParamSpec("ilc_iteration", -1, "ILC trial to fit (-1: the one with the lowest windowed error)", lo=-1,
                      hi=100000),
            ParamSpec("bag_path", "", "rosbag2 directory or file (source bag)"),
            ParamSpec("goal_topic", "", "goal topic in the bag (empty: found by type)"),
            ParamSpec("joints", [""], "goal order of servo/commands (source topics)"),
            ParamSpec("joint", "joint_1", "joint to fit"),
            ParamSpec("urdf_path", "", "URDF giving τ_o by inverse dynamics (fixed base)", read_only=True),
            ParamSpec("kp", 0.0, "servo P gain during the data (0: from the file/bag)", "register units", lo=0.0,
                      hi=KP_MAX),
            ParamSpec("window", 10.0, "length of live data fitted (source topics)", "s", lo=0.5, hi=3600.0),
            ParamSpec("dt", 0.005, "resampling step (bag, topics)", "s", lo=1e-4, hi=1.0),
            ParamSpec("with_inertia", False, "also fit α̂4 (gear inertia, Eq. 14)"),
            ParamSpec("feedforward_node", "servo_feedforward", "node whose alpha.<joint> is set (empty: none)"),
            ParamSpec("service_timeout", 5.0, "wait for the feed-forward node's parameter service", "s", lo=0.0,
                      hi=600.0),
            ParamSpec("output", "alpha.yaml", "YAML written with the fitted α (empty: none)"),
            ParamSpec("run_on_start", True, "fit at start-up (sources ilc_file and bag)"),
            ParamSpec("wait_for_file", True, "wait for the ILC file to appear (run_on_start)"),
        ], validate=self._validate, n_joints=lambda v: None)
        self.robot = load_robot(resolve_path(self.table["urdf_path"])) if self.table["urdf_path"] else None
        if self.robot is None:
            raise ValueError("urdf_path is required (τ_o comes from inverse dynamics)")
        if self.table["joint"] not in self.robot.joint_names:
            raise ValueError(f"joint {self.table['joint']!r} is not in {self.robot.path.name} "
                             f"({', '.join(self.robot.joint_names)})")
        self.model = self.robot.fixed.copy()
        self.data = self.model.createData()
        group = ReentrantCallbackGroup()
        self.buffer: deque = deque()
        self.goals: deque = deque()
        self.volts: deque = deque()
        self.pub_result = self.create_publisher(String, TOPIC_RESULT, 10)
        self.create_subscription(JointState, TOPIC_JOINT_STATES, self._on_js, 50, callback_group=group)
        self.create_subscription(Float64MultiArray, TOPIC_COMMANDS, self._on_goal, 50, callback_group=group)
        self.create_subscription(BatteryState, TOPIC_SUPPLY, self._on_supply, 10, callback_group=group)
        self.create_service(Trigger, SRV_RUN, self._on_run, callback_group=group)
        self.param_client = None
        if self.table["feedforward_node"]:
            # relative name: the feed-forward node in this node's namespace (absolute if it starts with /)
            self.param_client = self.create_client(SetParameters, f"{self.table['feedforward_node'].rstrip('/')}"
                                                   "/set_parameters", callback_group=group)
        self.result: dict[str, Any] | None = None
        self.last_error = ""
        self.worker: threading.Thread | None = None
        self.lock = threading.Lock()
        if self.table["run_on_start"] and self.table["source"] != "topics":
            threading.Thread(target=self._run_at_start, daemon=True).start()

    def _validate(self, v: dict[str, Any]) -> str | None:
        if v["source"] == "bag" and not v["bag_path"]:
            return "source bag needs bag_path"
        return None

    # ------------------------------------------------------------------ live data
    def _on_js(self, msg: JointState) -> None:
        if self.table["source"] != "topics":
            return
        try:
            k = list(msg.name).index(self.table["joint"])  # time base: the servo node's stamp (ROS time)
            self.buffer.append((msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9, float(msg.position[k])))
        except (ValueError, IndexError):
            return
        self._trim(self.buffer)

    def _on_goal(self, msg: Float64MultiArray) -> None:
        if self.table["source"] != "topics":
            return
        joints = [j for j in self.table["joints"] if j]
        if self.table["joint"] in joints and len(msg.data) == len(joints):
            self.goals.append((self._now(), float(msg.data[joints.index(self.table["joint"])])))
            self._trim(self.goals)

    def _on_supply(self, msg: BatteryState) -> None:
        if math.isfinite(msg.voltage) and msg.voltage > 0:
            self.volts.append((self._now(), float(msg.voltage)))
            self._trim(self.volts)

    def _now(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def _trim(self, buf: deque) -> None:
        horizon = self._now() - self.table["window"]
        while buf and buf[0][0] < horizon:
            buf.popleft()

    # ------------------------------------------------------------------ data sources → arrays
    def _data(self) -> tuple[np.ndarray, np.ndarray, float, float | np.ndarray, float, str]:
        """command, measured q, dt, supply [V], kp, description."""
        v = self.table.values
        if v["source"] == "ilc_file":
            rec = load_ilc_record(resolve_path(v["ilc_file"]))
            if rec.joint != v["joint"]:
                raise ValueError(f"{v['ilc_file']}: ILC result is for joint {rec.joint!r}, not {v['joint']!r}")
            k = int(np.argmin(rec.errors)) if v["ilc_iteration"] < 0 else v["ilc_iteration"]
            if k >= len(rec.commands):
                raise ValueError(f"ilc_iteration {k}: {v['ilc_file']} has {len(rec.commands)} trial(s)")
            u_bat = float(rec.supply[k]) if rec.supply.size > k and rec.supply[k] > 0 else math.nan
            return (rec.commands[k], rec.measured[k], rec.dt, u_bat, v["kp"] or rec.kp,
                    f"ILC file {v['ilc_file']} trial {k}")
        if v["source"] == "bag":
            from servo_ff.io.rosbag import read_rosbag

            log = read_rosbag(resolve_path(v["bag_path"]), dt=v["dt"], joint=v["joint"],
                              goal_topic=v["goal_topic"] or None)
            return log.goal_position, log.position, log.dt, log.input_volts, v["kp"] or log.kp, f"bag {v['bag_path']}"
        # topics
        if len(self.buffer) < 10 or len(self.goals) < 10:
            raise ValueError(f"not enough live data for {v['joint']} (joint_states {len(self.buffer)}, goals "
                             f"{len(self.goals)} messages in the last {v['window']:g} s)")
        js, gl = np.array(self.buffer), np.array(self.goals)
        t0, t1 = max(js[0, 0], gl[0, 0]), min(js[-1, 0], gl[-1, 0])
        grid = np.arange(t0, t1, v["dt"])
        if grid.size < 10:
            raise ValueError("live data window too short")
        cmd = np.interp(grid, gl[:, 0], gl[:, 1])
        q = np.interp(grid, js[:, 0], js[:, 1])
        volts = np.array(self.volts)
        u_bat = float(volts[:, 1].mean()) if volts.size else math.nan
        if v["kp"] <= 0:
            raise ValueError("source topics needs the kp parameter (the servo gain during the data)")
        return cmd, q, v["dt"], u_bat, v["kp"], f"live topics ({grid.size} samples)"

    def torque(self, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray) -> np.ndarray:
        """τ_o of the fitted joint along its trajectory, other joints at 0 (fixed-base RNEA per sample)."""
        j = self.robot.joint_names.index(self.table["joint"])
        n = self.robot.n_joints
        Q = np.zeros((len(q), n))
        V, A = np.zeros_like(Q), np.zeros_like(Q)
        Q[:, j], V[:, j], A[:, j] = q, dq, ddq
        return np.array([self._id(self.model, self.data, self.robot.configuration(Q[k]), V[k], A[k])[j]
                         for k in range(len(q))])

    def fit(self) -> dict[str, Any]:
        cmd, q, dt, u_bat, kp, what = self._data()
        ub = np.asarray(u_bat, float)
        if not (np.isfinite(ub).all() and (ub > 0).all()):
            raise ValueError(f"{what}: no valid supply voltage recorded")
        dq = derivative(q, dt)
        ddq = derivative(dq, dt)
        tau = self.torque(q, dq, ddq)
        res = self._fit_alpha(cmd, q, dq, ddq, tau, float(kp), ub, dt, with_inertia=self.table["with_inertia"])
        out = {"joint": self.table["joint"], "source": what, **res.as_dict(), "kp": float(kp),
               "u_bat": float(np.mean(ub))}
        return out

    # ------------------------------------------------------------------ outputs
    def _write_yaml(self, result: dict[str, Any]) -> str | None:
        if not self.table["output"]:
            return None
        import yaml

        path = Path(self.table["output"])
        path.parent.mkdir(parents=True, exist_ok=True)
        doc = {"joints": {result["joint"]: {"alpha": result["alpha"], "dq_s": result["dq_s"],
                                            "delta": result["delta"]}},
               "fit": {k: result[k] for k in ("source", "delay", "rms_rad", "condition_number", "n_samples", "kp",
                                              "u_bat")}}
        path.write_text(yaml.safe_dump(doc, sort_keys=False))
        return str(path)

    def _set_feedforward(self, result: dict[str, Any]) -> str:
        if self.param_client is None:
            return "no feed-forward node configured"
        node = self.table["feedforward_node"]
        if not self.param_client.wait_for_service(timeout_sec=self.table["service_timeout"]):
            return f"feed-forward node {node!r} not reachable: α not set"
        req = SetParameters.Request(parameters=[ParameterMsg(
            name=f"alpha.{result['joint']}", value=ParameterValue(type=ParameterType.PARAMETER_DOUBLE_ARRAY,
                                                                  double_array_value=list(result["alpha"])))])
        future = self.param_client.call_async(req)
        t0 = time.monotonic()
        while not future.done():
            if time.monotonic() - t0 > self.table["service_timeout"]:
                return f"feed-forward node {node!r} did not answer set_parameters"
            time.sleep(0.01)
        r = future.result().results[0]
        return f"alpha.{result['joint']} set on {node}" if r.successful else f"{node} refused α: {r.reason}"

    def run(self) -> tuple[bool, str]:
        with self.lock:
            try:
                result = self.fit()
            except (ValueError, FileNotFoundError, KeyError) as e:
                msg = f"fit failed: {e}"
                self.last_error = msg
                self.get_logger().error(msg)
                self.pub_result.publish(String(data=json.dumps({"error": str(e)})))
                return False, msg
            result["output"] = self._write_yaml(result)
            result["feedforward"] = self._set_feedforward(result)
            self.result = result
            self.pub_result.publish(String(data=json.dumps(result)))
            text = (f"α̂({result['joint']}) = {np.round(result['alpha'], 4).tolist()}, q̇_s {result['dq_s']:.3g} rad/s, "
                    f"δ {result['delta']:.3g}, t_d {result['delay'] * 1e3:.0f} ms, rms {result['rms_rad']:.4f} rad; "
                    f"{result['feedforward']}; wrote {result['output']}")
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
            self.get_logger().info(f"waiting for the ILC result {path}")
            while not path.is_file():
                time.sleep(0.5)
        self.run()


def main(args: list[str] | None = None) -> int:
    return spin_node(FitNode, args)


if __name__ == "__main__":
    import sys

    sys.exit(main())
