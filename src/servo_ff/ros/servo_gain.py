"""The servo node owns ``kp``; a client node (the feed-forward node) sets the gains of ITS joints on it, by joint
name, through the servo node's parameter services: it reads the servo node's ``joints`` and ``kp``
(``<servo_node>/get_parameters``), replaces the gains of its own joints in that per-joint list (one client value
applies to the client's joints only) and sets the list (``<servo_node>/set_parameters``, rcl_interfaces
SetParameters). The servo node's other joints keep their gains, and the two nodes may list their joints in any
order; a client joint the servo node does not have is one warning naming it (the others are set). A servo ``kp``
that is one double (not an array) is one value for all its joints, and is set as one double.

Parameters have no compare-and-set: a write of the servo's ``kp`` lands between another client's read and write
(two clients of one servo node) and is undone by the other's write, which carries what it read. So after each
write the client reads the servo's ``kp`` again; a joint of ITS that is back at the gain it had before the write
was undone, and is merged and written again (at most :data:`MAX_WRITES` writes, then one warning naming the joints);
a joint at a third value was set anew after the write (someone's ``ros2 param set``): kept, said in one line
(before, a gain set just after the client's write, before its read-back, was written over). What it cannot see: a
gain of ANOTHER joint set between its read and its write (a ``<prefix>/p_gains`` message) is undone by its write; a
stale write landing after its read-back undoes its gain unseen (that writer's own read-back restores only its
joints); a gain set anew just after its write to the very value it had before is taken for an undo. A call to the
servo node that is not answered (the node died with it pending, or hangs) is dropped when its services are gone or
after ``call_timeout``, and the gain is sent again when they are there.

Once per gain: when it is asked to, and again whenever the servo node (re)appears. Nothing is re-published
periodically, so a gain set on the servo node afterwards stays until the client's own gain changes."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

from rcl_interfaces.msg import Parameter as ParameterMsg
from rcl_interfaces.msg import ParameterType, ParameterValue
from rcl_interfaces.srv import GetParameters, SetParameters
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.parameter import parameter_value_to_python

from servo_ff.ros.parameters import per_joint

MAX_WRITES = 3  # writes of one gain whose joints are overwritten again before the re-read: then one warning


def servo_joints_and_kp(values: Sequence[ParameterValue]) -> tuple[list[str], list[float], bool]:
    """The servo node's ``joints`` (empty names left out), ``kp`` (a list; one double gives one value) and whether
    ``kp`` is one double, from its GetParameters answer to ``["joints", "kp"]``; ValueError when it has no such
    parameters."""
    joints, kp = (parameter_value_to_python(v) for v in values) if len(values) == 2 else (None, None)
    if not isinstance(joints, list) or joints and not all(isinstance(j, str) for j in joints):
        raise ValueError("no joints parameter (string array)")
    scalar = isinstance(kp, float | int) and not isinstance(kp, bool)
    if not scalar and not isinstance(kp, list):
        raise ValueError("no kp parameter (double array, or one double)")
    return [j for j in joints if j], [float(k) for k in ([kp] if scalar else kp)], scalar


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


def held_gains(servo_joints: Sequence[str], servo_kp: Sequence[float], joints: Sequence[str]) -> dict[str, float]:
    """The gain the servo node holds for each of ``joints`` it has, from its ``joints`` and ``kp`` (a servo node
    naming no joints: its one value for all)."""
    if not servo_joints:
        return dict.fromkeys(joints, float(servo_kp[0]))
    full = per_joint(servo_kp, len(servo_joints), "the servo node's kp").tolist()
    where = {j: i for i, j in enumerate(servo_joints)}
    return {j: full[where[j]] for j in joints if j in where}


def not_holding(servo_joints: Sequence[str], servo_kp: Sequence[float], gains: dict[str, float]) -> list[str]:
    """The joints of ``gains`` (name → gain) the servo node has whose gain in its ``servo_kp`` is another (a servo
    node naming no joints: its one value for all)."""
    if not servo_joints and len(servo_kp) != 1:
        return list(gains)
    return [j for j, k in held_gains(servo_joints, servo_kp, list(gains)).items() if k != gains[j]]


class ServoGainSetter:
    """Sets the ``kp`` of ``joints`` (the client's joint names) on ``servo_node`` (a node name, relative to the
    client's namespace, or absolute).

    Polls the services every ``poll_period`` s of wall time: a gain not set yet goes out as soon as they are there;
    the servo node gone and back gets it again. A call not answered is dropped when the services are gone or after
    ``call_timeout`` s on ``clock`` (default max(2 s, 4 poll periods)), and sent again when they are there. A
    servo node still absent ``warn_after`` s after the gain was asked for (or after it went away with a call
    pending), a call not answered in time, a refusal, or joints overwritten by another writer :data:`MAX_WRITES`
    times are one warning line each (per gain, per disappearance); a joint the servo node does not have is one
    warning line (per list of such joints)."""

    def __init__(
        self,
        node: Node,
        servo_node: str,
        joints: Sequence[str],
        poll_period: float = 0.25,
        warn_after: float = 3.0,
        clock: Callable[[], float] = time.monotonic,
        call_timeout: float | None = None,
    ):
        self.node = node
        self.joints = list(joints)
        self.clock = clock  # [s] of warn_after and call_timeout (a test injects a fake clock)
        self.call_timeout = max(2.0, 4.0 * poll_period) if call_timeout is None else float(call_timeout)
        service = f"{servo_node.rstrip('/')}/set_parameters"
        self.client = node.create_client(SetParameters, service)
        self.reader = node.create_client(GetParameters, f"{servo_node.rstrip('/')}/get_parameters")
        self.service = node.resolve_service_name(service)  # fully qualified, for the log lines
        self.kp: list[float] | None = None  # the gains to set, one per joint (None: none asked for yet)
        self.pending = False  # asked for and not confirmed on the servo node yet
        self.state = "no gain asked for"  # for diagnostics
        self.sets = 0  # successful sets
        self._asked_at = 0.0
        self._warned = False  # the servo node's absence said (per gain, per disappearance)
        self._slow_said = False  # a call not answered in time said (per gain, until an answer)
        self._was_ready = False
        self._call: tuple[object, object, float] | None = None  # (client, future, sent at) of the call pending
        self._writes = 0  # writes of this gain (its joints read back after each)
        self._before: dict[str, float] = {}  # our joints' gains on the servo node in the read before the last write
        self._missing_said: tuple[str, ...] = ()  # the joints the servo node lacks, last said
        self._lock = threading.RLock()  # set() from any thread; poll and the answers on the executor's
        self.timer = node.create_timer(poll_period, self.poll, clock=Clock(clock_type=ClockType.STEADY_TIME))
        self.warn_after = warn_after

    @property
    def servo(self) -> str:
        """Fully-qualified name of the servo node."""
        return self.service.rsplit("/", 1)[0]

    @property
    def _in_flight(self) -> bool:
        """A call to the servo node is pending."""
        return self._call is not None

    def set(self, kp: Sequence[float]) -> None:
        """Ask for ``kp`` (one per joint, in ``joints`` order, or one for all of them) on the servo node (sent now
        if its services are there, else when they appear)."""
        with self._lock:
            new = per_joint(kp, len(self.joints), "kp").tolist()
            if new == self.kp and self._in_flight:
                return  # the same gain, being set: its call (a read-back too) goes on as it is
            self.kp = new
            self.state = f"waiting for {self.servo}"
            self.pending, self._warned, self._slow_said, self._asked_at = True, False, False, self.clock()
            self._writes = 0
            self.poll()

    def poll(self) -> None:
        with self._lock:
            ready = self.client.service_is_ready() and self.reader.service_is_ready()
            if self._call is not None:
                if ready and self.clock() - self._call[2] <= self.call_timeout:
                    return  # the servo node's disappearance and return meanwhile are seen after (_was_ready kept)
                self._drop()  # gone with the call pending (its future would never complete), or no answer in time
                if ready:
                    self._say_slow()
            appeared, gone = ready and not self._was_ready, self._was_ready and not ready
            self._was_ready = ready
            if self.kp is None:
                return
            if ready and (self.pending or appeared):
                if appeared:
                    self._writes = 0  # (maybe) a new servo node: set again, on its own kp
                self._read()
            elif gone:
                self._asked_at, self._warned = self.clock(), False  # one warning per disappearance
                self.state = f"{self.servo} gone: the kp {self.kp} of {self.joints} is set again when it is back"
            elif not ready and self.pending and not self._warned and self.clock() - self._asked_at > self.warn_after:
                self._warned = True
                self.state = f"{self.servo} not found"
                self.node.get_logger().warning(
                    f"servo node {self.servo} not found (no service {self.service}): the kp of {self.joints} is "
                    f"not set to {self.kp} yet; it is set when the node appears"
                )

    def _send(self, client, request, done: Callable) -> None:
        """Call ``client`` (the reader or the setter); ``done(future)`` runs with its answer unless the call was
        dropped meanwhile (:meth:`_drop`)."""
        future = client.call_async(request)
        self._call = (client, future, self.clock())
        future.add_done_callback(done)

    def _drop(self) -> None:
        """Forget the call pending (no answer will come, or too late): the gain is sent again, from a new read."""
        client, future, _ = self._call
        client.remove_pending_request(future)  # its answer, if one still comes, is ignored
        self._call = None
        self.pending, self._writes = True, 0

    def _answered(self, future, kp: list[float]) -> bool:
        """An answer came: True when it is the answer to the call pending and to the gain asked for now; a dropped
        call's answer is ignored, and one for a gain superseded meanwhile sends the new gain."""
        if self._call is None or self._call[1] is not future:
            return False
        self._call = None
        if kp != self.kp:
            self.poll()
            return False
        return True

    def _read(self) -> None:
        """Ask the servo node for its ``joints`` and ``kp``: the list set is built on them (:meth:`_merge`), and
        after a write they tell whether the client's joints hold their gain."""
        kp = list(self.kp)
        self._send(self.reader, GetParameters.Request(names=["joints", "kp"]), lambda f: self._merge(f, kp))

    def _merge(self, future, kp: list[float]) -> None:
        with self._lock:
            if not self._answered(future, kp):
                return
            try:
                values = future.result().values
            except Exception as e:  # noqa: BLE001 (the service went away mid-call: retried when it is back)
                return self._lost(e)
            self._slow_said = False
            gains = dict(zip(self.joints, kp))
            try:
                servo_joints, servo_kp, scalar = servo_joints_and_kp(values)
                full, missing = merged_kp(servo_joints, servo_kp, gains)
                if scalar and len(full) > 1:
                    raise ValueError("its kp is one double (one value for all its joints): per-joint gains")
                wrong = not_holding(servo_joints, servo_kp, gains)
            except ValueError as e:
                return self._refused(f"{self.servo}: {e}; kp {kp} of {self.joints} not set")
            self._say_missing(missing, servo_joints)
            held = servo_kp[0] if scalar else servo_kp
            now = held_gains(servo_joints, servo_kp, self.joints)
            anew = [j for j in wrong if self._writes and now[j] != self._before.get(j, now[j])]
            if anew:  # set after our write to a third value: someone's own setting, kept (not an undo of ours)
                self.node.get_logger().info(
                    f"servo node {self.servo}: the kp of {', '.join(anew)} was set to {[now[j] for j in anew]} after "
                    f"this node wrote {[gains[j] for j in anew]}: kept"
                )
                gains = {j: k for j, k in gains.items() if j not in anew}
                wrong = [j for j in wrong if j not in anew]
                full, _ = merged_kp(servo_joints, servo_kp, gains)
            lacking = f" (it has no {', '.join(missing)})" if missing else ""
            if len(missing) == len(self.joints):
                self.state = f"{self.servo} has none of the joints {self.joints}: no kp set"
                self.pending = False  # last (here and below): a reader that sees it done sees its state
            elif self._writes and not wrong:  # read back after a write: every joint of ours holds its gain
                which = f"{len(gains)} joints" if len(set(gains.values())) == 1 else str(gains)  # (20: one line)
                kept = f"{', '.join(anew)} set anew after this node's write: kept" if anew else ""
                self.state = f"kp {held} set on {self.servo} for {which}{lacking}" + (kept and f" ({kept})")
                if not gains:
                    self.state = f"kp {held} on {self.servo}: {kept}"
                self.node.get_logger().info(self.state)
                self.pending = False
            elif self._writes >= MAX_WRITES:
                ours = {j: k for j, k in gains.items() if j not in wrong and j not in missing}
                self.state = (
                    f"kp {held} on {self.servo}: {ours} set, {', '.join(wrong)} overwritten by another writer of "
                    f"its kp after each of {MAX_WRITES} writes (not set to {[gains[j] for j in wrong]})"
                )
                self.node.get_logger().warning(
                    f"servo node {self.servo}: the kp of {', '.join(wrong)} does not hold "
                    f"{ {j: gains[j] for j in wrong} }: overwritten after each of {MAX_WRITES} writes (another "
                    f"writer of its kp); its kp is {held}"
                )
                self.pending = False
            else:
                value = (
                    ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=full[0])
                    if scalar
                    else ParameterValue(type=ParameterType.PARAMETER_DOUBLE_ARRAY, double_array_value=full)
                )
                request = SetParameters.Request(parameters=[ParameterMsg(name="kp", value=value)])
                self._before = now  # a joint back at this value after the write was undone by a stale write
                self._send(self.client, request, lambda f: self._done(f, kp, full))

    def _done(self, future, kp: list[float], full: list[float]) -> None:
        with self._lock:
            if not self._answered(future, kp):
                return
            try:
                result = future.result().results[0]
            except Exception as e:  # noqa: BLE001 (the service went away mid-call: retried when it is back)
                return self._lost(e)
            if result.successful:
                self._writes += 1
                self.state = f"kp {full} written to {self.servo}; reading it back"
                self.sets += 1
                self._read()  # another writer between our read and our write overwrote it: written again
            else:
                self._refused(f"{self.servo} refused kp {full}: {result.reason}")

    def _lost(self, e: Exception) -> None:
        self.state = f"{self.servo}: no answer ({e})"
        self.pending, self._was_ready = True, False

    def _say_slow(self) -> None:
        """One warning per gain (until an answer comes) for a call the servo node did not answer in time."""
        self.state = f"{self.servo}: no answer in {self.call_timeout:g} s; the kp of {self.joints} is sent again"
        if not self._slow_said:
            self._slow_said = True
            self.node.get_logger().warning(
                f"servo node {self.servo} did not answer in {self.call_timeout:g} s: the kp {self.kp} of "
                f"{self.joints} is sent again"
            )

    def _refused(self, state: str) -> None:
        self.state = state
        self.node.get_logger().warning(f"{state} (the servo node keeps its own kp)")
        self.pending = False

    def _say_missing(self, missing: list[str], servo_joints: list[str]) -> None:
        """One warning per list of client joints the servo node does not have (their gain is not set)."""
        if missing and tuple(missing) != self._missing_said:
            self.node.get_logger().warning(
                f"servo node {self.servo} has no joint {', '.join(missing)} (its joints: {', '.join(servo_joints)}):"
                f" no kp set for {'it' if len(missing) == 1 else 'them'}"
            )
        self._missing_said = tuple(missing)
