"""The servo node owns ``kp``; a client node (the feed-forward node) sets the gains of ITS joints on it, by joint
name, through the servo node's parameter services: it reads the servo node's ``joints`` and ``kp``
(``<servo_node>/get_parameters``), replaces the gains of its own joints in that per-joint list (one client value
applies to the client's joints only) and sets the list (``<servo_node>/set_parameters``, rcl_interfaces
SetParameters). The servo node's other joints keep their gains, and the two nodes may list their joints in any
order; a client joint the servo node does not have is one warning naming it (the others are set). Once per gain:
when it is asked to, and again whenever the servo node (re)appears. Nothing is re-published periodically, so a gain
set on the servo node afterwards stays until the client's own gain changes."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from rcl_interfaces.msg import Parameter as ParameterMsg
from rcl_interfaces.msg import ParameterType, ParameterValue
from rcl_interfaces.srv import GetParameters, SetParameters
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.parameter import parameter_value_to_python

from servo_ff.ros.parameters import per_joint


def servo_joints_and_kp(values: Sequence[ParameterValue]) -> tuple[list[str], list[float]]:
    """The servo node's ``joints`` (empty names left out) and ``kp`` from its GetParameters answer to
    ``["joints", "kp"]``; ValueError when it has no such parameters."""
    joints, kp = (parameter_value_to_python(v) for v in values) if len(values) == 2 else (None, None)
    if not isinstance(joints, list) or not isinstance(kp, list):
        raise ValueError("no joints or kp parameter (string array, double array)")
    return [j for j in joints if j], [float(k) for k in kp]


def merged_kp(
    servo_joints: Sequence[str], servo_kp: Sequence[float], gains: dict[str, float]
) -> tuple[list[float], list[str]]:
    """The servo node's ``kp`` to set (``servo_joints`` order): its ``servo_kp`` (one per joint, or one for all)
    with the gains of the joints in ``gains`` (name → gain) replaced, and the joints of ``gains`` it does not have.
    A single servo value stays single while every joint has the same gain. A servo node that names no joints (a
    MuJoCo sim's ``joints: ['']``, every joint of its model) gets one client value for all its joints, and refuses
    per-joint values (ValueError), which cannot be matched; ValueError too: a ``servo_kp`` of another length."""
    if not servo_joints:
        if len(set(gains.values())) > 1:
            raise ValueError("it names no joints (joints: ['']): per-joint gains cannot be matched by name")
        return list(gains.values())[:1], []
    full = per_joint(servo_kp, len(servo_joints), "the servo node's kp").tolist()
    where = {j: i for i, j in enumerate(servo_joints)}
    for joint, k in gains.items():
        if joint in where:
            full[where[joint]] = k
    single = len(servo_kp) == 1 and len(set(full)) == 1
    return full[:1] if single else full, [j for j in gains if j not in where]


class ServoGainSetter:
    """Sets the ``kp`` of ``joints`` (the client's joint names) on ``servo_node`` (a node name, relative to the
    client's namespace, or absolute).

    Polls the services every ``poll_period`` s of wall time: a gain not set yet goes out as soon as they are there;
    the servo node gone and back gets it again. A servo node still absent ``warn_after`` s after the gain was asked
    for, or a refusal, is one warning line (per gain, per disappearance); a joint the servo node does not have is
    one warning line (per list of such joints)."""

    def __init__(
        self,
        node: Node,
        servo_node: str,
        joints: Sequence[str],
        poll_period: float = 0.25,
        warn_after: float = 3.0,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.node = node
        self.joints = list(joints)
        self.clock = clock  # [s] of warn_after (a test injects a fake clock)
        service = f"{servo_node.rstrip('/')}/set_parameters"
        self.client = node.create_client(SetParameters, service)
        self.reader = node.create_client(GetParameters, f"{servo_node.rstrip('/')}/get_parameters")
        self.service = node.resolve_service_name(service)  # fully qualified, for the log lines
        self.kp: list[float] | None = None  # the gains to set, one per joint (None: none asked for yet)
        self.pending = False  # asked for and not answered yet
        self.state = "no gain asked for"  # for diagnostics
        self.sets = 0  # successful sets
        self._asked_at = 0.0
        self._warned = False
        self._was_ready = False
        self._in_flight = False
        self._missing_said: tuple[str, ...] = ()  # the joints the servo node lacks, last said
        self.timer = node.create_timer(poll_period, self.poll, clock=Clock(clock_type=ClockType.STEADY_TIME))
        self.warn_after = warn_after

    @property
    def servo(self) -> str:
        """Fully-qualified name of the servo node."""
        return self.service.rsplit("/", 1)[0]

    def set(self, kp: Sequence[float]) -> None:
        """Ask for ``kp`` (one per joint, in ``joints`` order, or one for all of them) on the servo node (sent now
        if its services are there, else when they appear)."""
        self.kp = per_joint(kp, len(self.joints), "kp").tolist()
        self.pending, self._warned, self._asked_at = True, False, self.clock()
        self.state = f"waiting for {self.servo}"
        self.poll()

    def poll(self) -> None:
        ready = self.client.service_is_ready() and self.reader.service_is_ready()
        appeared, self._was_ready = ready and not self._was_ready, ready
        if self.kp is None or self._in_flight:
            return
        if ready and (self.pending or appeared):
            self._read()
        elif not ready and self.pending and not self._warned and self.clock() - self._asked_at > self.warn_after:
            self._warned = True
            self.state = f"{self.servo} not found"
            self.node.get_logger().warning(
                f"servo node {self.servo} not found (no service {self.service}): the kp of {self.joints} is not "
                f"set to {self.kp} yet; it is set when the node appears"
            )

    def _read(self) -> None:
        """Ask the servo node for its ``joints`` and ``kp``: the list set is built on them (:meth:`_merge`)."""
        kp = list(self.kp)
        self._in_flight = True
        future = self.reader.call_async(GetParameters.Request(names=["joints", "kp"]))
        future.add_done_callback(lambda f: self._merge(f, kp))

    def _merge(self, future, kp: list[float]) -> None:
        if self._superseded(kp):
            return
        try:
            values = future.result().values
        except Exception as e:  # noqa: BLE001 (the service went away mid-call: retried when it is back)
            return self._lost(e)
        try:
            servo_joints, servo_kp = servo_joints_and_kp(values)
            full, missing = merged_kp(servo_joints, servo_kp, dict(zip(self.joints, kp)))
        except ValueError as e:
            return self._refused(f"{self.servo}: {e}; kp {kp} of {self.joints} not set")
        self._say_missing(missing, servo_joints)
        if len(missing) == len(self.joints):
            self.pending = False
            self.state = f"{self.servo} has none of the joints {self.joints}: no kp set"
            return
        value = ParameterValue(type=ParameterType.PARAMETER_DOUBLE_ARRAY, double_array_value=full)
        self._in_flight = True
        future = self.client.call_async(SetParameters.Request(parameters=[ParameterMsg(name="kp", value=value)]))
        future.add_done_callback(lambda f: self._done(f, kp, full, missing))

    def _done(self, future, kp: list[float], full: list[float], missing: list[str]) -> None:
        if self._superseded(kp):
            return
        try:
            result = future.result().results[0]
        except Exception as e:  # noqa: BLE001 (the service went away mid-call: retried when it is back)
            return self._lost(e)
        self.pending = False
        if result.successful:
            self.sets += 1
            lacking = f" (it has no {', '.join(missing)})" if missing else ""
            self.state = f"kp {full} set on {self.servo} for {dict(zip(self.joints, kp))}{lacking}"
            self.node.get_logger().info(self.state)
        else:
            self._refused(f"{self.servo} refused kp {full}: {result.reason}")

    def _superseded(self, kp: list[float]) -> bool:
        """An answer to a call for ``kp`` came; True when a newer gain was asked for meanwhile (then sent)."""
        self._in_flight = False
        if kp == self.kp:
            return False
        self.poll()
        return True

    def _lost(self, e: Exception) -> None:
        self.pending, self._was_ready = True, False
        self.state = f"{self.servo}: no answer ({e})"

    def _refused(self, state: str) -> None:
        self.pending = False
        self.state = state
        self.node.get_logger().warning(f"{state} (the servo node keeps its own kp)")

    def _say_missing(self, missing: list[str], servo_joints: list[str]) -> None:
        """One warning per list of client joints the servo node does not have (their gain is not set)."""
        if missing and tuple(missing) != self._missing_said:
            self.node.get_logger().warning(
                f"servo node {self.servo} has no joint {', '.join(missing)} (its joints: {', '.join(servo_joints)}):"
                f" no kp set for {'it' if len(missing) == 1 else 'them'}"
            )
        self._missing_said = tuple(missing)
