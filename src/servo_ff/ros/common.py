"""Shared ROS 2 plumbing for the servo_ff nodes (rclpy is imported only in nodes/, ros/ and bringup/).

* topic and service names of the servo interface;
* parameters: :mod:`.parameters` (re-exported here);
* :class:`GoalGate`: turns goal messages (Float64MultiArray in ``joints`` order, JointTrajectory first point,
  JointState by name) into a validated position array; a bad message is refused with a throttled warning and
  the last valid goal is held. Goals outside the joint limits are refused, never clamped; when the limits
  change, a held goal outside the new ones moves to the nearest limit (:meth:`GoalGate.set_limits`), and each
  move is reported for the node to log.
"""

from __future__ import annotations

import array
import importlib
import math
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from rclpy.node import Node

from servo_ff.errors import ServoFFError
from servo_ff.interpolation import LIMIT_TOL
from servo_ff.interrupt import ignore_further_interrupts, interrupt_once, shutting_down
from servo_ff.io.rosbag_topics import SERVO_SUPPLY

from .parameters import (  # noqa: F401
    ParameterTable,
    ParamSpec,
    actuator_from_values,
    actuator_specs,
    field_param,
    per_joint,
    warn_undeclared_overrides,
)
from .throttle import Throttle, reason_kind, throttle_key  # noqa: F401

#: ROS topic / service names shared by the servo interface (sim and hardware) and its clients. Relative names:
#: they resolve under the node's namespace (``/servo/commands`` in the root namespace). The ``servo/`` ones are
#: those of the default ``prefix`` parameter of the servo nodes (:func:`servo_names` for another prefix).
TOPIC_JOINT_STATES = "joint_states"
TOPIC_SUPPLY = SERVO_SUPPLY  # "servo_supply": a bag's replay takes it first (io/rosbag_topics.py)
TOPIC_DIAGNOSTICS = "/diagnostics"
TOPIC_COMMANDS = "servo/commands"  # std_msgs/Float64MultiArray, `joints` order (forward_command_controller)
TOPIC_TRAJECTORY = "servo/joint_trajectory"  # trajectory_msgs/JointTrajectory, first point
TOPIC_JOINT_COMMAND = "servo/joint_command"  # sensor_msgs/JointState, matched by name
TOPIC_P_GAINS = "servo/p_gains"  # std_msgs/Float64MultiArray, `joints` order, FirmwareLaw.kp units
TOPIC_TRAJECTORY_STATUS = "servo/trajectory_status"  # std_msgs/String JSON, one per joint_trajectory message
SRV_TORQUE_ENABLE = "servo/torque_enable"  # std_srvs/SetBool
TOPIC_TORQUE_ENABLED = "servo/torque_enabled"  # std_msgs/Bool, latched: every read servo's torque on
SRV_REBOOT = "servo/reboot"  # std_srvs/Trigger
SRV_RESET = "servo/reset"  # std_srvs/Trigger (sim: back to the initial state)
TOPIC_CLOCK = "/clock"  # rosgraph_msgs/Clock, published by the sim node when it owns time (publish_clock)
SERVO_ENDPOINTS = (
    "commands",
    "joint_trajectory",
    "trajectory_status",
    "joint_command",
    "p_gains",
    "torque_enable",
    "torque_enabled",
    "reboot",
    "reset",
    "follow_joint_trajectory",
)


def float64_field(x) -> array.array:
    """Values for a float64[] message field as ``array.array('d')``: stored as given and copied to the wire in
    one block, where a list is type-checked and converted element by element (the publish path of every tick)."""
    return array.array("d", np.ascontiguousarray(x, dtype=np.float64).tobytes())


def diag_name(node: Node, what: str) -> str:
    """``DiagnosticStatus.name`` of ``what`` on ``node``: ``/<namespace>/<node>: <what>`` (namespaced copies of a
    node report apart)."""
    return f"{node.get_fully_qualified_name()}: {what}"


def hardware_id(node: Node, what: str) -> str:
    """``DiagnosticStatus.hardware_id`` of ``what`` on ``node``: ``/<namespace>/<node>/<what>``."""
    return f"{node.get_fully_qualified_name()}/{what}"


def servo_names(prefix: str = "servo") -> dict[str, str]:
    """Relative topic and service names of one servo interface: ``<prefix>/commands``, ``<prefix>/reboot``, …"""
    return {k: f"{prefix}/{k}" for k in SERVO_ENDPOINTS}


@dataclass
class GoalGate:
    """Validates goal positions for ``joints`` against ``[lower, upper]`` and holds the last valid goal."""

    joints: list[str]
    lower: np.ndarray
    upper: np.ndarray
    goal: np.ndarray
    warn: Callable[[str], Any] = print
    throttle: Throttle = field(default_factory=Throttle)
    rejected: int = 0
    accepted: int = 0
    last_reason: str = ""
    last_accept_time: float = -math.inf
    last_reject_time: float = -math.inf
    recent: deque = field(default_factory=lambda: deque(maxlen=32))  # latest rejection reasons
    limit_moves: int = 0  # held goals moved by a change of the joint limits
    held_samples: int = 0  # trajectory samples held at a joint limit (the spline overshoots between its points)
    clock: Callable[[], float] = time.monotonic  # [s] of the accept/reject times (a test injects a fake clock)

    def __post_init__(self) -> None:
        self.index = {name: i for i, name in enumerate(self.joints)}
        self.goal = np.array(self.goal, dtype=np.float64)

    def record(self, source: str, reason: str) -> None:
        """Count a refusal of a message on ``source`` as the latest (the diagnostics' count, last reason and WARN
        window); the caller says it (:meth:`_reject` for goals)."""
        self.last_reject_time = self.clock()
        self.last_reason = f"{source}: {reason}"
        self.recent.append(self.last_reason)
        self.rejected += 1  # last: a reader that sees the count sees its reason (other threads read them)

    def _reject(self, source: str, kind: str, reason: str) -> None:
        self.record(source, reason)
        self.throttle(
            throttle_key(f"{source}:{kind}", reason),
            self.warn,
            f"goal on {source} rejected: {reason}; holding the last valid goal",
        )

    def _commit(self, source: str, goal: np.ndarray) -> np.ndarray | None:
        bad = ~np.isfinite(goal)
        if bad.any():
            i = int(np.argmax(bad))
            self._reject(source, "nonfinite", f"{self.joints[i]}={goal[i]} is not finite")
            return None
        out = (goal < self.lower) | (goal > self.upper)
        if out.any():
            i = int(np.argmax(out))
            self._reject(
                source,
                "limits",
                f"{self.joints[i]}={goal[i]:.4f} rad is outside its joint limits "
                f"[{self.lower[i]:.4f}, {self.upper[i]:.4f}] rad",
            )
            return None
        self.goal = goal
        self.count_accept()
        return goal

    def count_accept(self) -> None:
        """Count an accepted goal or trajectory: its time first, then the count (a reader that sees the count sees
        the time)."""
        self.last_accept_time = self.clock()
        self.accepted += 1

    def hold_sample(self, goal: np.ndarray, source: str) -> np.ndarray:
        """A followed trajectory's sample ``goal`` [rad] (from ``source``), held within the limits in place. Its path
        was checked whole on arrival (:meth:`JointSpline.outside`, exact to ``LIMIT_TOL``), but the limits can
        narrow under it (:meth:`set_limits`); each such sample is counted (:attr:`held_samples`) and said
        (throttled), never written beyond the limit. A sample that is not finite (a path the planner refuses) keeps
        the last goal of that joint, counted and said the same way."""
        if ((goal >= self.lower) & (goal <= self.upper)).all():  # False for NaN: a sample that is not finite
            return goal
        bad = ~np.isfinite(goal)  # the planner refuses a path that is not finite: never written, said if it comes
        if bad.any():
            i = int(np.argmax(bad))
            self.held_samples += 1
            self.throttle(
                f"{source}:nonfinite:{self.joints[i]}",
                self.warn,
                f"{source}: the followed trajectory's sample of {self.joints[i]} is {goal[i]}; holding the last goal "
                f"{self.goal[i]:.4f} rad ({self.held_samples} samples so far)",
            )
            goal[bad] = self.goal[bad]
        out = (goal < self.lower - LIMIT_TOL) | (goal > self.upper + LIMIT_TOL)  # within the planner's tolerance:
        if out.any():  # the path's rounding at a limit it touches, clipped unsaid
            i = int(np.argmax(out))
            self.held_samples += 0 if bad.any() else 1  # one sample, counted once
            self.throttle(
                f"{source}:held:{self.joints[i]}",
                self.warn,
                f"{source}: the followed trajectory reaches {self.joints[i]}={goal[i]:.4f} rad, beyond its joint "
                f"limits [{self.lower[i]:.4f}, {self.upper[i]:.4f}] rad; held at the limit "
                f"({self.held_samples} samples so far)",
            )
        np.minimum(np.maximum(goal, self.lower, out=goal), self.upper, out=goal)
        return goal

    def hold_readings(self, rows: np.ndarray, pos: np.ndarray) -> list[str]:
        """The held goal of joints ``rows`` := their reading ``pos[rows]`` [rad], within the limits. A joint read
        beyond them is held at the nearest limit, which moves it there once torque is on: one line per such joint
        (the caller logs them), never silent."""
        rows = np.asarray(rows, dtype=np.int64)
        want = np.asarray(pos, dtype=np.float64)[rows]
        held = np.minimum(np.maximum(want, self.lower[rows]), self.upper[rows])
        self.goal[rows] = held
        return [
            f"{self.joints[r]}: read at {w:.4f} rad, outside its joint limits [{self.lower[r]:.4f}, "
            f"{self.upper[r]:.4f}] rad; its goal is held at {h:.4f} rad (the nearest limit: torque on moves it there)"
            for r, w, h in zip(rows.tolist(), want.tolist(), held.tolist())
            if w != h
        ]

    def set_limits(self, lower: np.ndarray, upper: np.ndarray) -> list[str]:
        """New joint limits, and the held goal re-checked against them. A held goal outside the new limits is
        replaced by the nearest admissible goal — the limit it crossed: the closest to what was asked for, and
        inside the limits, so a joint standing beyond them is brought back in. Returns one line per joint moved
        (the caller logs them; :attr:`limit_moves` counts them); never silent."""
        lower = np.asarray(lower, dtype=np.float64).copy()
        upper = np.asarray(upper, dtype=np.float64).copy()
        new = np.minimum(np.maximum(self.goal, lower), upper)
        moved = [
            f"{self.joints[i]}: held goal {self.goal[i]:.4f} rad is outside the new limits [{lower[i]:.4f}, "
            f"{upper[i]:.4f}] rad; holding {new[i]:.4f} rad (the nearest limit) instead"
            for i in np.flatnonzero(new != self.goal)
        ]
        self.lower, self.upper = lower, upper
        if moved:
            self.goal = new
            self.limit_moves += len(moved)
        return moved

    def from_array(self, data: Sequence[float], source: str) -> np.ndarray | None:
        """Float64MultiArray data in ``joints`` order."""
        if len(data) != len(self.joints):
            self._reject(
                source, "length", f"{len(data)} values for {len(self.joints)} joints ({', '.join(self.joints)})"
            )
            return None
        return self._commit(source, np.array(data, dtype=np.float64))

    def from_names(self, names: Sequence[str], positions: Sequence[float], source: str) -> np.ndarray | None:
        """Positions matched by joint name; joints not named keep their last goal."""
        if len(names) != len(positions):
            self._reject(source, "length", f"{len(names)} names but {len(positions)} positions")
            return None
        unknown = [n for n in names if n not in self.index]
        if unknown:
            self._reject(
                source,
                "names",
                f"unknown joint name(s) {', '.join(map(repr, unknown))}; known: {', '.join(self.joints)}",
            )
            return None
        if len(set(names)) != len(names):
            self._reject(source, "names", "duplicate joint names")
            return None
        goal = self.goal.copy()
        goal[[self.index[n] for n in names]] = np.asarray(positions, dtype=np.float64)
        return self._commit(source, goal)


def with_message_info(callback: Callable[[Any, dict | None], None]) -> Callable:
    """A subscription callback giving ``callback(msg, info)`` rclpy's message info (a dict with
    ``publication_sequence_number``: rclpy of Iron on), or ``callback(msg, None)`` on Humble's rclpy."""
    from rclpy.subscription import Subscription

    if hasattr(Subscription, "CallbackType"):
        return lambda msg, info: callback(msg, info)
    return lambda msg: callback(msg, None)


def joint_names_param(values: Mapping[str, Any]) -> list[str]:
    joints = list(values["joints"])
    if not joints or any(not j for j in joints):
        raise ValueError("joints must be a non-empty list of non-empty names")
    if len(set(joints)) != len(joints):
        raise ValueError(f"joints contains duplicate names: {joints}")
    return joints


def spin_node(node_factory: Callable[..., Node], args: Iterable[str] | None = None, threads: int = 1) -> int:
    """``main()`` body shared by every node: init, spin until Ctrl-C, clean shutdown; a parameter error at
    start-up prints one line and returns 2. ``threads`` > 1: a multi-threaded executor (nodes whose service
    callbacks wait on other services)."""
    import sys

    import rclpy
    from rclpy.exceptions import ParameterException
    from rclpy.executors import ExternalShutdownException
    from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy

    interrupt_once()
    try:  # a remap rcl cannot parse (a namespace with a space), a parameter file it cannot read: one line
        rclpy.init(args=list(args) if args is not None else None)
    except _rclpy.RCLError as e:
        print(f"error: the ROS arguments were refused: {' '.join(str(e).split())}", file=sys.stderr)
        return 2
    node = None
    try:
        node = node_factory()
        warn_undeclared_overrides(node)
        _spin_until_shutdown(node, threads)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except _rclpy.RCLError:
        if rclpy.ok():
            raise
        # rclpy's SIGINT handler shut the context down (from its own thread) while a callback published or took:
        # the Ctrl-C's shutdown, not an error (the first SIGINT's KeyboardInterrupt may not have been raised yet)
    except (ServoFFError, ValueError, ParameterException, FileNotFoundError) as e:  # a wrong parameter type too
        print(f"error: {e}", file=sys.stderr)
        return 2
    except RuntimeError as e:  # the Ctrl-C's KeyboardInterrupt raised inside rclpy's C++ take of a message (the
        if not (shutting_down() and _TAKE_INTERRUPTED in str(e)):  # class's __init__ runs Python): pybind11
            raise  # made it this RuntimeError (before: a traceback and exit 1 at a Ctrl-C, or up --duration's stop)
    finally:
        ignore_further_interrupts()
        if node is not None:
            node.destroy_node()
        if rclpy.ok():
            rclpy.try_shutdown()
        ignore_further_interrupts()  # rclpy's shutdown puts back the handler it found at init
    return 0


#: [s] the spin's longest wait: a Ctrl-C taken inside rclpy raises nothing (interrupt.inside_ros_machinery) and
#: rclpy's handler wakes the wait before it shuts the context down, so the spin may wait again, with no more wake-up
#: coming to a node with no timer and no traffic (review of r3s24): it sees the shutdown within this period
SHUTDOWN_POLL = 0.25


def _spin_until_shutdown(node: Node, threads: int) -> None:
    """``rclpy.spin`` until the context is shut down, woken at least every :data:`SHUTDOWN_POLL` by a steady timer
    that does nothing (one timer for the node's life: ``spin_once(timeout_sec=…)`` builds a timeout timer at each
    wake that finds work, +3 % of CPU per callback at 1 kHz)."""
    import rclpy
    from rclpy.clock import Clock, ClockType
    from rclpy.executors import MultiThreadedExecutor

    node.create_timer(SHUTDOWN_POLL, lambda: None, clock=Clock(clock_type=ClockType.STEADY_TIME))
    if threads <= 1:
        rclpy.spin(node)
        return
    executor = MultiThreadedExecutor(num_threads=threads)
    try:
        rclpy.spin(node, executor=executor)
    finally:
        executor.shutdown(timeout_sec=1.0)


#: what pybind11 makes of a KeyboardInterrupt raised while rclpy's C++ code calls into Python (a message's take)
_TAKE_INTERRUPTED = "Unable to convert call argument"


def preload_modules(*names: str) -> threading.Thread:
    """Import ``names`` in a background thread at start-up, so that a node's first use of them (scipy.signal
    takes ≈ 1 s to import: the ILC's zero-phase filter, the fit's Savitzky–Golay derivatives) finds them loaded
    instead of stalling an ILC update or a fit; a failed import is raised again, with its reason, at that use."""

    def load() -> None:
        for name in names:
            try:
                importlib.import_module(name)
            except ImportError:
                pass

    thread = threading.Thread(target=load, name="preload", daemon=True)
    thread.start()
    return thread
