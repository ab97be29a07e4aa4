"""The servo node owns ``kp``; a client node (the feed-forward node) sets it through the servo node's parameter
service (``<servo_node>/set_parameters``, rcl_interfaces/SetParameters), once per gain: when it is asked to,
and again whenever the servo node (re)appears. Nothing is re-published periodically, so a gain set on the servo
node afterwards stays until the client's own gain changes."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from rcl_interfaces.msg import Parameter as ParameterMsg
from rcl_interfaces.msg import ParameterType, ParameterValue
from rcl_interfaces.srv import SetParameters
from rclpy.clock import Clock, ClockType
from rclpy.node import Node


class ServoGainSetter:
    """Sets ``kp`` on ``servo_node`` (a node name, relative to the client's namespace, or absolute).

    Polls the service every ``poll_period`` s of wall time: a gain not set yet goes out as soon as the service
    is there; the servo node gone and back gets it again. A servo node still absent ``warn_after`` s after the
    gain was asked for, or a refusal, is one warning line (per gain, per disappearance)."""

    def __init__(
        self,
        node: Node,
        servo_node: str,
        poll_period: float = 0.25,
        warn_after: float = 3.0,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.node = node
        self.clock = clock  # [s] of warn_after (a test injects a fake clock)
        service = f"{servo_node.rstrip('/')}/set_parameters"
        self.client = node.create_client(SetParameters, service)
        self.service = node.resolve_service_name(service)  # fully qualified, for the log lines
        self.kp: list[float] | None = None  # the gain to set (None: none asked for yet)
        self.pending = False  # asked for and not answered yet
        self.state = "no gain asked for"  # for diagnostics
        self.sets = 0  # successful sets
        self._asked_at = 0.0
        self._warned = False
        self._was_ready = False
        self._in_flight = False
        self.timer = node.create_timer(poll_period, self.poll, clock=Clock(clock_type=ClockType.STEADY_TIME))
        self.warn_after = warn_after

    @property
    def servo(self) -> str:
        """Fully-qualified name of the servo node."""
        return self.service.rsplit("/", 1)[0]

    def set(self, kp: Sequence[float]) -> None:
        """Ask for ``kp`` on the servo node (sent now if its service is there, else when it appears)."""
        self.kp = [float(k) for k in kp]
        self.pending, self._warned, self._asked_at = True, False, self.clock()
        self.state = f"waiting for {self.servo}"
        self.poll()

    def poll(self) -> None:
        ready = self.client.service_is_ready()
        appeared, self._was_ready = ready and not self._was_ready, ready
        if self.kp is None or self._in_flight:
            return
        if ready and (self.pending or appeared):
            self._send()
        elif not ready and self.pending and not self._warned and self.clock() - self._asked_at > self.warn_after:
            self._warned = True
            self.state = f"{self.servo} not found"
            self.node.get_logger().warning(
                f"servo node {self.servo} not found (no service {self.service}): its kp is not set to "
                f"{self.kp} yet; it is set when the node appears"
            )

    def _send(self) -> None:
        kp = list(self.kp)
        value = ParameterValue(type=ParameterType.PARAMETER_DOUBLE_ARRAY, double_array_value=kp)
        self._in_flight = True
        future = self.client.call_async(SetParameters.Request(parameters=[ParameterMsg(name="kp", value=value)]))
        future.add_done_callback(lambda f: self._done(f, kp))

    def _done(self, future, kp: list[float]) -> None:
        self._in_flight = False
        if kp != self.kp:  # a newer gain was asked for meanwhile: send it
            self.poll()
            return
        self.pending = False
        try:
            result = future.result().results[0]
        except Exception as e:  # noqa: BLE001 (the service went away mid-call: retried when it is back)
            self.pending, self._was_ready = True, False
            self.state = f"{self.servo}: no answer ({e})"
            return
        if result.successful:
            self.sets += 1
            self.state = f"kp {kp} set on {self.servo}"
            self.node.get_logger().info(self.state)
        else:
            self.state = f"{self.servo} refused kp {kp}: {result.reason}"
            self.node.get_logger().warning(f"{self.state} (the servo node keeps its own kp)")
